package restd

import (
	"context"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestRESTSlurmdbWrites: slurmdbd's additions and removals go through
// sacctmgr as the caller, with slurmdbd's answers (oracle, 24.11): a
// non-administrator gets 2002 and HTTP 500, a removal matching nothing
// HTTP 304 (a QOS: a warning), a user's default account cannot go (7009).
func TestRESTSlurmdbWrites(t *testing.T) {
	rc := newRestCluster(t)
	rc.sacctmgrSetup("add account research", "add user alice account=research")
	alice, root := rc.as("alice"), rc.as("root")
	V := "/slurmdb/v0.0.42"
	type obj = map[string]any
	cases := []struct {
		who          creds
		method, path string
		body         any
		code         int
		key          string // a member the reply carries
		errno        int
	}{
		{alice, "POST", V + "/accounts/", obj{"accounts": []obj{{"name": "a1"}}}, 500, "", 2002},
		{root, "POST", V + "/accounts/", obj{"accounts": []obj{{"name": "a1", "description": "d1", "organization": "o1"}}}, 200, "", 0},
		{root, "POST", V + "/accounts/", obj{"accounts": []obj{{"name": "a1"}}}, 200, "", 0}, // known: left as is
		{alice, "POST", V + "/accounts_association/", obj{"association_condition": obj{"accounts": []string{"a2"}}}, 500, "added_accounts", 2002},
		{root, "POST", V + "/accounts_association/", obj{"association_condition": obj{"accounts": []string{"a2"}}, "account": obj{"description": "d2"}}, 200, "added_accounts", 0},
		{alice, "POST", V + "/users/", obj{"users": []obj{{"name": "bob"}}}, 500, "", 2002},
		{root, "POST", V + "/users/", obj{"users": []obj{{"name": "bob", "default": obj{"account": "a1"}}}}, 200, "", 0},
		{alice, "POST", V + "/users_association/", obj{"association_condition": obj{"accounts": []string{"a2"}, "users": []string{"bob"}}, "user": obj{}}, 500, "added_users", 2002},
		{root, "POST", V + "/users_association/", obj{"association_condition": obj{"accounts": []string{"a2"}, "users": []string{"bob"}}}, 500, "", 9200},
		{root, "POST", V + "/users_association/", obj{"association_condition": obj{"accounts": []string{"a2"}, "users": []string{"bob"}}, "user": obj{}}, 200, "added_users", 0},
		{alice, "POST", V + "/associations/", obj{"associations": []obj{{"account": "a2", "user": "charlie"}}}, 500, "", 2002},
		{root, "POST", V + "/associations/", obj{"associations": []obj{{"account": "a2", "user": "charlie"}}}, 200, "", 0},
		{alice, "POST", V + "/qos/", obj{"qos": []obj{{"name": "q1"}}}, 500, "", 2002},
		{root, "POST", V + "/qos/", obj{"qos": []obj{{"name": "q1", "description": "qd", "priority": obj{"set": true, "number": 5}}}}, 200, "", 0},
		{alice, "DELETE", V + "/qos/q1", nil, 500, "removed_qos", 2002},
		{root, "DELETE", V + "/qos/q1", nil, 200, "removed_qos", 0},
		{root, "DELETE", V + "/qos/q1", nil, 200, "removed_qos", 0}, // gone: a warning
		{alice, "DELETE", V + "/association/?account=a2&user=charlie", nil, 500, "", 2002},
		{root, "DELETE", V + "/association/?account=a2&user=charlie", nil, 200, "removed_associations", 0},
		{root, "DELETE", V + "/associations/?account=zz", nil, 304, "", 0},
		{root, "DELETE", V + "/associations/?account=a1&user=bob", nil, 500, "", 7009}, // bob's default, and bob has a2
		{alice, "DELETE", V + "/user/bob", nil, 500, "", 2002},
		{root, "DELETE", V + "/user/bob", nil, 200, "removed_users", 0},
		{root, "DELETE", V + "/user/bob", nil, 304, "", 0},
		{alice, "DELETE", V + "/account/a1", nil, 500, "", 2002},
		{root, "DELETE", V + "/account/a1", nil, 200, "removed_accounts", 0},
		{root, "DELETE", V + "/account/zz", nil, 304, "", 0},
		{alice, "POST", V + "/clusters/", obj{"clusters": []obj{{"name": "c2"}}}, 500, "", 2002},
		{alice, "DELETE", V + "/cluster/c2", nil, 500, "", 2002},
		{alice, "DELETE", V + "/wckey/1", nil, 500, "deleted_wckeys", 2002},
		{root, "DELETE", V + "/wckey/1", nil, 200, "deleted_wckeys", 0},
		{root, "POST", V + "/tres/", obj{"TRES": []obj{{"type": "gres", "name": "x"}}}, 500, "", 2036},
	}
	for i, tc := range cases {
		code, m, raw := rc.do(tc.who, tc.method, tc.path, tc.body)
		var errno float64
		if e := firstError(m); e != nil {
			errno, _ = e["error_number"].(float64)
		}
		_, has := m[tc.key]
		if code != tc.code || int(errno) != tc.errno || (tc.key != "" && !has) {
			t.Errorf("#%d %s %s as %s: HTTP %d, error %v; want %d, error %d, member %q\n%s", i, tc.method, tc.path, tc.who.name, code, errno, tc.code, tc.errno, tc.key, raw)
		}
	}
	_, m, _ := rc.do(root, "POST", V+"/accounts_association/", obj{"association_condition": obj{"accounts": []string{"a3"}},
		"account": obj{"description": "d3", "organization": "o3"}})
	if got, want := m["added_accounts"], " Adding Account(s)\n  a3\n Settings\n  Description     = d3\n  Organization    = o3\n"+
		" Associations =\n  C = resttest   A = a3                  \n"; got != want {
		t.Errorf("added_accounts %q, want %q (slurmdbd's report)", got, want)
	}
	rc.sacctmgrSetup("delete account a3")
	res, err := rc.root.Sacctmgr(context.Background(), api.SacctmgrRequest{Args: []string{"-n", "-P", "show", "assoc", "format=Account,User"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "root|\nroot|root\na2|\nresearch|\nresearch|alice\n"; res.Out != want {
		t.Errorf("associations left:\n%s\nwant\n%s", res.Out, want)
	}
}
