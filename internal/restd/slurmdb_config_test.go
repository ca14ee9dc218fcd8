package restd

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// sacctmgrSetup runs sacctmgr -i commands as root.
func (rc *restCluster) sacctmgrSetup(cmds ...string) {
	rc.t.Helper()
	for _, cmd := range cmds {
		args := append([]string{"-i"}, strings.Fields(cmd)...)
		if _, err := rc.root.Sacctmgr(context.Background(), api.SacctmgrRequest{Args: args}); err != nil {
			rc.t.Fatalf("sacctmgr %s: %v", cmd, err)
		}
	}
}

// TestRESTSlurmdbConfig: clusters, diag, config, wckeys and the single
// association answer as slurmdbd's (oracle, 24.11): every user reads the
// clusters, only administrators the statistics and the dump (2002, HTTP
// 500), and association/ wants exactly one match (9211, HTTP 500).
func TestRESTSlurmdbConfig(t *testing.T) {
	rc := newRestCluster(t)
	rc.sacctmgrSetup("add account research", "add user alice account=research")
	alice, root := rc.as("alice"), rc.as("root")
	cases := []struct {
		who        creds
		path, key  string
		code, want int // HTTP status, records under key (-1: no list there)
		warn       bool
		errno      int
	}{
		{alice, "/slurmdb/v0.0.42/clusters", "clusters", 200, 1, false, 0},
		{alice, "/slurmdb/v0.0.42/cluster/resttest", "clusters", 200, 1, false, 0},
		{alice, "/slurmdb/v0.0.42/cluster/zz", "clusters", 200, 0, true, 0},
		{alice, "/slurmdb/v0.0.42/diag", "RPCs", 500, -1, false, 2002},
		{root, "/slurmdb/v0.0.42/diag", "statistics", 200, -1, false, 0},
		{alice, "/slurmdb/v0.0.42/config", "accounts", 500, -1, false, 2002},
		{root, "/slurmdb/v0.0.42/config", "accounts", 200, 2, false, 0},
		{root, "/slurmdb/v0.0.42/config", "wckeys", 200, 0, false, 0},
		{alice, "/slurmdb/v0.0.42/association?account=research", "associations", 500, 0, false, 9211},
		{alice, "/slurmdb/v0.0.42/association?account=research&user=alice", "associations", 200, 1, false, 0},
		{alice, "/slurmdb/v0.0.42/association?account=zz", "associations", 200, 0, true, 0},
		{alice, "/slurmdb/v0.0.42/wckeys", "wckeys", 500, -1, false, 2002},
		{root, "/slurmdb/v0.0.42/wckeys", "wckeys", 200, 0, true, 0},
		{root, "/slurmdb/v0.0.42/wckey/1", "wckeys", 200, 0, true, 0},
		{alice, "/slurmdb/v0.0.42/instances", "instances", 200, -1, true, 0},
		{alice, "/slurmdb/v0.0.42/instance", "instances", 200, -1, true, 0},
	}
	for _, tc := range cases {
		code, m, raw := rc.do(tc.who, "GET", tc.path, nil)
		list, isList := m[tc.key].([]any)
		n := len(list)
		if !isList {
			n = -1
		}
		warns, _ := m["warnings"].([]any)
		var errno float64
		if e := firstError(m); e != nil {
			errno, _ = e["error_number"].(float64)
		}
		if code != tc.code || n != tc.want || (len(warns) > 0) != tc.warn || int(errno) != tc.errno {
			t.Errorf("%s as %s: HTTP %d, %d %s, warnings %v, error %v; want %d, %d, warning %v, error %d\n%s",
				tc.path, tc.who.name, code, n, tc.key, warns, errno, tc.code, tc.want, tc.warn, tc.errno, raw)
		}
	}
}

// TestRESTClusterRecord: a cluster record carries the controller, the
// node list, the root association and the TRES totals of the nodes.
func TestRESTClusterRecord(t *testing.T) {
	rc := newRestCluster(t)
	_, m, raw := rc.do(rc.as("alice"), "GET", "/slurmdb/v0.0.42/cluster/resttest", nil)
	list, _ := m["clusters"].([]any)
	if len(list) != 1 {
		t.Fatalf("cluster/resttest: %s", raw)
	}
	cl := list[0].(map[string]any)
	tres := map[string]any{}
	for _, x := range cl["tres"].([]any) {
		e := x.(map[string]any)
		tres[e["type"].(string)] = e["count"]
	}
	root := cl["associations"].(map[string]any)["root"].(map[string]any)
	cases := []struct {
		what      string
		got, want any
	}{
		{"name", cl["name"], "resttest"},
		{"nodes", cl["nodes"], "n[1-2]"},
		{"cpu", tres["cpu"], float64(4)},
		{"mem", tres["mem"], float64(2000)},
		{"node", tres["node"], float64(2)},
		{"root account", root["account"], "root"},
		{"rpc_version", cl["rpc_version"], float64(10752)},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.what, tc.got, tc.want)
		}
	}
}
