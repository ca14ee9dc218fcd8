package restd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/dataparser"
)

// slurmdbWriteOps are slurmdbd's changes to the accounting policy, made
// through the controller's sacctmgr as the caller: administrators and
// operators only, as slurmdbd's (others: 2002, HTTP 500).
func slurmdbWriteOps() []op {
	return []op{
		{method: "POST", path: "/slurmdb/VERSION/accounts/", summary: "add accounts", body: "v0.0.42_openapi_accounts_resp", resp: "v0.0.42_openapi_resp", h: postAccounts},
		{method: "POST", path: "/slurmdb/VERSION/accounts_association/", summary: "add accounts with their associations",
			body: "v0.0.42_openapi_accounts_add_cond_resp", resp: "v0.0.42_openapi_accounts_add_cond_resp_str", h: postAccountsAssoc},
		{method: "POST", path: "/slurmdb/VERSION/users/", summary: "add users (with their default account)", body: "v0.0.42_openapi_users_resp", resp: "v0.0.42_openapi_resp", h: postUsers},
		{method: "POST", path: "/slurmdb/VERSION/users_association/", summary: "add users with their associations",
			body: "v0.0.42_openapi_users_add_cond_resp", resp: "v0.0.42_openapi_users_add_cond_resp_str", h: postUsersAssoc},
		{method: "POST", path: "/slurmdb/VERSION/associations/", summary: "add associations", body: "v0.0.42_openapi_assocs_resp", resp: "v0.0.42_openapi_resp", h: postAssocs},
		{method: "POST", path: "/slurmdb/VERSION/qos/", summary: "add QOS (name, description, priority)", body: "v0.0.42_openapi_slurmdbd_qos_resp", resp: "v0.0.42_openapi_resp", h: postQOS},
		{method: "POST", path: "/slurmdb/VERSION/clusters/", summary: "add clusters", body: "v0.0.42_openapi_clusters_resp", resp: "v0.0.42_openapi_resp", h: postClusters},
		{method: "DELETE", path: "/slurmdb/VERSION/account/{account_name}", summary: "delete an account", resp: "v0.0.42_openapi_accounts_removed_resp",
			params: []param{{"account_name", "path", "account name"}}, h: deleteAccount},
		{method: "DELETE", path: "/slurmdb/VERSION/user/{name}", summary: "delete a user", resp: "v0.0.42_openapi_users_removed_resp",
			params: []param{{"name", "path", "user name"}}, h: deleteUser},
		{method: "DELETE", path: "/slurmdb/VERSION/qos/{qos}", summary: "delete a QOS", resp: "v0.0.42_openapi_slurmdbd_qos_removed_resp",
			params: []param{{"qos", "path", "QOS name"}}, h: deleteQOS},
		{method: "DELETE", path: "/slurmdb/VERSION/cluster/{cluster_name}", summary: "delete a cluster", resp: "v0.0.42_openapi_clusters_removed_resp",
			params: []param{{"cluster_name", "path", "cluster name"}}, h: deleteCluster},
		{method: "DELETE", path: "/slurmdb/VERSION/association/", summary: "delete one association", resp: "v0.0.42_openapi_assocs_removed_resp",
			params: assocParams, h: deleteAssoc},
		{method: "DELETE", path: "/slurmdb/VERSION/associations/", summary: "delete associations", resp: "v0.0.42_openapi_assocs_removed_resp",
			params: assocParams, h: deleteAssocs},
	}
}

var assocParams = []param{{"account", "query", "account"}, {"user", "query", "user"}, {"partition", "query", "partition"}, {"cluster", "query", "cluster"}}

// sacctmgr runs sacctmgr -i ARGS as the caller.
func (c *call) sacctmgr(args ...string) (string, error) {
	res, err := c.cl.Sacctmgr(c.ctx, api.SacctmgrRequest{Args: append([]string{"-i"}, args...)})
	return res.Out, err
}

// denied is slurmdbd's refusal of a change by a non-administrator:
// "FUNCTION() failed", 2002, HTTP 500, with data (nil: none).
func denied(data dataparser.Obj, fn, source string) reply {
	return reply{data: data, status: http.StatusInternalServerError, errs: []dataparser.Error{errDenied(fn+"() failed", source)}}
}

// notModified is slurmdbd's answer to a delete that matched nothing:
// HTTP 304, no body.
var notModified = reply{status: http.StatusNotModified}

// badBody is a body slurmrestd cannot read.
var badBody = reply{status: http.StatusBadRequest, noEnvelope: true}

// decodeMember decodes body member k into v.
func decodeMember(f fields, k string, v any) error {
	raw, ok := f[k]
	if !ok {
		return fmt.Errorf("missing %s", k)
	}
	return json.Unmarshal(raw, v)
}

// adminList reads the body's list member k of an administrator's write;
// the reply refuses a bad body, a caller who is not an administrator
// (slurmdbd's refusal names fn and source) and a missing member.
func adminList(c *call, k, fn, source string, v any) (reply, bool) {
	f, ok := readBody(c.r)
	if !ok {
		return badBody, false
	}
	if !c.isAdmin() {
		return denied(dataparser.Obj{}, fn, source), false
	}
	if err := decodeMember(f, k, v); err != nil {
		return missing(k), false
	}
	return reply{}, true
}

// missing is data_parser's error for a required member the body lacks.
func missing(k string) reply {
	return reply{data: dataparser.Obj{}, status: http.StatusInternalServerError, errs: []dataparser.Error{{
		Description: "Missing required field '" + k + "' in dictionary", Number: 9200, Error: "Unable to resolve path", Source: "#/" + k + "/"}}}
}

// sacctmgrFailed is an error of sacctmgr as slurmdbd's for the call.
func sacctmgrFailed(data dataparser.Obj, err error, fn, source string) reply {
	return failed(data, callError(err, fn+"() failed", source))
}

// exists reports whether sacctmgr show WHAT where name=NAME lists it.
func (c *call) exists(what, field, name string) bool {
	rows, err := c.sacctmgrRows(what, []string{field}, "where", "name="+name)
	return err == nil && len(rows) > 0
}

type acctBody struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	Organization string `json:"organization"`
}

func (a acctBody) specs() []string {
	var s []string
	if a.Description != "" {
		s = append(s, "description="+a.Description)
	}
	if a.Organization != "" {
		s = append(s, "organization="+a.Organization)
	}
	return s
}

// postAccounts adds each account not yet known (a known one is left as
// is, without a word, as slurmdbd does). Sluice's accounts always have
// an association: a new one is placed under root.
func postAccounts(c *call) reply {
	var list []acctBody
	if rep, ok := adminList(c, "accounts", "slurmdb_accounts_add", "_foreach_update_acct", &list); !ok {
		return rep
	}
	for _, a := range list {
		if a.Name == "" || c.exists("account", "Account", a.Name) {
			continue
		}
		if _, err := c.sacctmgr(append([]string{"add", "account", a.Name}, a.specs()...)...); err != nil {
			return sacctmgrFailed(dataparser.Obj{}, err, "slurmdb_accounts_add", "_foreach_update_acct")
		}
	}
	return reply{data: dataparser.Obj{}}
}

type assocCond struct {
	Accounts   []string `json:"accounts"`
	Users      []string `json:"users"`
	Partitions []string `json:"partitions"`
	Clusters   []string `json:"clusters"`
}

func (a assocCond) specs() []string {
	var s []string
	if len(a.Partitions) > 0 {
		s = append(s, "partition="+strings.Join(a.Partitions, ","))
	}
	if len(a.Clusters) > 0 {
		s = append(s, "cluster="+strings.Join(a.Clusters, ","))
	}
	return s
}

// postAccountsAssoc is sacctmgr add account NAMES with the account's
// description and organization: added_accounts is sacctmgr's report.
func postAccountsAssoc(c *call) reply {
	f, ok := readBody(c.r)
	if !ok {
		return badBody
	}
	var cond assocCond
	if err := decodeMember(f, "association_condition", &cond); err != nil {
		return missing("association_condition")
	}
	var a acctBody
	decodeMember(f, "account", &a)
	if !c.isAdmin() {
		return denied(dataparser.Obj{{Key: "added_accounts", Val: "Only admins/operators/coordinators can add accounts"}},
			"slurmdb_accounts_add_cond", "_add_accounts_association")
	}
	args := append([]string{"add", "account", strings.Join(cond.Accounts, ",")}, append(cond.specs(), a.specs()...)...)
	out, err := c.sacctmgr(args...)
	if err != nil {
		return sacctmgrFailed(dataparser.Obj{{Key: "added_accounts", Val: ""}}, err, "slurmdb_accounts_add_cond", "_add_accounts_association")
	}
	// slurmdbd's report ends with the associations, without sacctmgr's
	// trailing settings (oracle).
	if i := strings.Index(out, " Associations ="); i >= 0 {
		if j := strings.Index(out[i:], "\n Settings\n"); j >= 0 {
			out = out[:i+j+1]
		}
	}
	return reply{data: dataparser.Obj{{Key: "added_accounts", Val: out}}}
}

type userBody struct {
	Name    string `json:"name"`
	Default struct {
		Account string `json:"account"`
	} `json:"default"`
	AdminLevel []string `json:"administrator_level"`
}

// postUsers adds each user not yet known. A Sluice user lives in its
// associations: one without a default account cannot be added
// (slurmdbd adds a bare user record).
func postUsers(c *call) reply {
	var list []userBody
	if rep, ok := adminList(c, "users", "slurmdb_users_add", "_foreach_update_user", &list); !ok {
		return rep
	}
	for _, u := range list {
		if u.Name == "" || c.exists("user", "User", u.Name) {
			continue
		}
		if u.Default.Account == "" {
			return failed(dataparser.Obj{}, dataparser.Error{Description: "slurmdb_users_add() failed",
				Error: "user " + u.Name + " needs a default account", Source: "_foreach_update_user"})
		}
		args := []string{"add", "user", u.Name, "account=" + u.Default.Account}
		if len(u.AdminLevel) == 1 && u.AdminLevel[0] != "None" {
			args = append(args, "adminlevel="+u.AdminLevel[0])
		}
		if _, err := c.sacctmgr(args...); err != nil {
			return sacctmgrFailed(dataparser.Obj{}, err, "slurmdb_users_add", "_foreach_update_user")
		}
	}
	return reply{data: dataparser.Obj{}}
}

// postUsersAssoc is sacctmgr add user NAMES account=ACCOUNTS:
// added_users is sacctmgr's list of the associations added.
func postUsersAssoc(c *call) reply {
	f, ok := readBody(c.r)
	if !ok {
		return badBody
	}
	var cond assocCond
	if err := decodeMember(f, "association_condition", &cond); err != nil {
		return missing("association_condition")
	}
	if _, ok := f["user"]; !ok {
		return missing("user")
	}
	if !c.isAdmin() {
		// slurmdbd words this refusal as the accounts' (oracle).
		const msg = "Only admins/operators/coordinators can add accounts"
		return reply{data: dataparser.Obj{{Key: "added_users", Val: msg}}, status: http.StatusInternalServerError,
			errs: []dataparser.Error{errDenied(msg, "slurmdb_users_add_cond")}}
	}
	args := append([]string{"add", "user", strings.Join(cond.Users, ","), "account=" + strings.Join(cond.Accounts, ",")}, cond.specs()...)
	out, err := c.sacctmgr(args...)
	if err != nil {
		return sacctmgrFailed(dataparser.Obj{{Key: "added_users", Val: ""}}, err, "slurmdb_users_add_cond", "_add_users_association")
	}
	// slurmdbd reports the associations only.
	if i := strings.Index(out, " Associations"); i >= 0 {
		out = out[i:]
	}
	return reply{data: dataparser.Obj{{Key: "added_users", Val: out}}}
}

type assocBody struct {
	Account, User, Partition, Cluster string
	Parent                            string `json:"parent_account"`
}

// postAssocs adds each association: a user's with sacctmgr add user, an
// account's with sacctmgr add account under its parent.
func postAssocs(c *call) reply {
	var list []assocBody
	if rep, ok := adminList(c, "associations", "slurmdb_associations_add", "_foreach_update_assoc", &list); !ok {
		return rep
	}
	for _, a := range list {
		args := []string{"add", "account", a.Account}
		if a.User != "" {
			args = []string{"add", "user", a.User, "account=" + a.Account}
		} else if a.Parent != "" {
			args = append(args, "parent="+a.Parent)
		}
		if a.Partition != "" {
			args = append(args, "partition="+a.Partition)
		}
		if a.Cluster != "" {
			args = append(args, "cluster="+a.Cluster)
		}
		if _, err := c.sacctmgr(args...); err != nil && !nothingNew(err) {
			return sacctmgrFailed(dataparser.Obj{}, err, "slurmdb_associations_add", "_foreach_update_assoc")
		}
	}
	return reply{data: dataparser.Obj{}}
}

// nothingNew is sacctmgr's word for an add whose records all exist.
func nothingNew(err error) bool {
	return strings.Contains(err.Error(), "Nothing new added") || strings.Contains(err.Error(), "already exist")
}

// postQOS adds each QOS not yet known and sets its description and
// priority.
func postQOS(c *call) reply {
	var list []fields
	if rep, ok := adminList(c, "qos", "slurmdb_qos_add", "_foreach_update_qos", &list); !ok {
		return rep
	}
	for _, q := range list {
		name := q.str("name")
		if name == "" {
			continue
		}
		var specs []string
		if d := q.str("description"); d != "" {
			specs = append(specs, "description="+d)
		}
		if p := q.numStr("priority"); p != "" {
			specs = append(specs, "priority="+p)
		}
		args := append([]string{"add", "qos", name}, specs...)
		if c.exists("qos", "Name", name) {
			if len(specs) == 0 {
				continue
			}
			args = append([]string{"modify", "qos", "where", "name=" + name, "set"}, specs...)
		}
		if _, err := c.sacctmgr(args...); err != nil {
			return sacctmgrFailed(dataparser.Obj{}, err, "slurmdb_qos_add", "_foreach_update_qos")
		}
	}
	return reply{data: dataparser.Obj{}}
}

// postClusters is sacctmgr add cluster for each cluster not yet known.
func postClusters(c *call) reply {
	var list []struct{ Name string }
	if rep, ok := adminList(c, "clusters", "slurmdb_clusters_add", "update_clusters", &list); !ok {
		return rep
	}
	for _, cl := range list {
		if cl.Name == "" {
			continue
		}
		if _, err := c.sacctmgr("add", "cluster", cl.Name); err != nil && !nothingNew(err) {
			return sacctmgrFailed(dataparser.Obj{}, err, "slurmdb_clusters_add", "update_clusters")
		}
	}
	return reply{data: dataparser.Obj{}}
}

// isNothing is sacctmgr's delete that matched nothing.
func isNothing(err error) bool { return strings.Contains(err.Error(), "Nothing deleted") }

// deleteNamed is sacctmgr delete WHAT NAME: key lists the name removed,
// a name matching nothing is HTTP 304 with no body (oracle).
func deleteNamed(c *call, what, name, key, fn, source string) reply {
	if !c.isAdmin() {
		return denied(nil, fn, source)
	}
	if _, err := c.sacctmgr("delete", what, name); err != nil {
		if isNothing(err) {
			return notModified
		}
		return sacctmgrFailed(nil, err, fn, source)
	}
	return reply{data: dataparser.Obj{{Key: key, Val: dataparser.Strings(name)}}}
}

func deleteAccount(c *call) reply {
	return deleteNamed(c, "account", c.r.PathValue("account_name"), "removed_accounts", "slurmdb_accounts_remove", "_delete_account")
}

func deleteUser(c *call) reply {
	return deleteNamed(c, "user", c.r.PathValue("name"), "removed_users", "slurmdb_users_remove", "_delete_user")
}

func deleteCluster(c *call) reply {
	return deleteNamed(c, "cluster", c.r.PathValue("cluster_name"), "deleted_clusters", "slurmdb_clusters_remove", "_delete_cluster")
}

// deleteQOS lists removed_qos even when refused, and a QOS matching
// nothing is a warning with HTTP 200 (oracle).
func deleteQOS(c *call) reply {
	name := c.r.PathValue("qos")
	empty := dataparser.Obj{{Key: "removed_qos", Val: []any{}}}
	if !c.isAdmin() {
		return denied(empty, "slurmdb_qos_remove", "_op_handler_qos")
	}
	if _, err := c.sacctmgr("delete", "qos", name); err != nil {
		if isNothing(err) {
			return reply{data: empty, warns: []dataparser.Warning{{Description: "slurmdb_qos_remove() found nothing", Source: "_op_handler_qos"}}}
		}
		return sacctmgrFailed(empty, err, "slurmdb_qos_remove", "_op_handler_qos")
	}
	return reply{data: dataparser.Obj{{Key: "removed_qos", Val: dataparser.Strings(name)}}}
}

// deleteAssoc removes what the query matches, like deleteAssocs:
// slurmdbd does not hold it to one association (oracle: account=research
// alone goes on to the removal).
func deleteAssoc(c *call) reply  { return removeAssocs(c) }
func deleteAssocs(c *call) reply { return removeAssocs(c) }

// removeAssocs is sacctmgr delete association where the query's
// account, user, partition and cluster. slurmdbd reports each failure
// twice (the call's and the operation's), removed_associations names
// what went, a query matching nothing is HTTP 304.
func removeAssocs(c *call) reply {
	fail := func(e dataparser.Error) reply {
		e2 := e
		e.Description, e2.Description = "slurmdb_associations_remove() failed", "remove associations failed"
		e.Source, e2.Source = "_delete_assoc", "_delete_assoc"
		return reply{status: statusOf(e.Number), errs: []dataparser.Error{e, e2}}
	}
	if !c.isAdmin() {
		return fail(errDenied("", ""))
	}
	q := c.r.URL.Query()
	where := []string{"where"}
	for _, k := range []string{"account", "user", "partition", "cluster"} {
		if v := q.Get(k); v != "" {
			where = append(where, k+"="+v)
		}
	}
	if len(where) == 1 {
		where = nil
	}
	rows, err := c.sacctmgrRows("assoc", []string{"Cluster", "Account", "User", "Partition", "ParentName"}, where...)
	if err != nil {
		return fail(callError(err, "", ""))
	}
	if len(rows) == 0 {
		return notModified
	}
	if _, err := c.sacctmgr(append([]string{"delete", "association"}, where...)...); err != nil {
		if isNothing(err) {
			return notModified
		}
		e := callError(err, "", "")
		if strings.Contains(e.Error, "default account of a user") {
			e.Number, e.Error = 7009, "You can not remove the default account of a user"
		}
		return fail(e)
	}
	removed := []any{}
	for _, r := range rows {
		removed = append(removed, assocLabel(r))
	}
	return reply{data: dataparser.Obj{{Key: "removed_associations", Val: removed}}}
}

// assocLabel names an association as slurmdbd's removal report does:
// "C = oracle     A = research   U = alice    ", an account's with
// "of PARENT".
func assocLabel(r []string) string {
	if r[2] == "" {
		s := fmt.Sprintf("C = %-10s A = %s", r[0], r[1])
		if r[4] != "" {
			s += " of " + r[4]
		}
		return s
	}
	s := fmt.Sprintf("C = %-10s A = %-10s U = %-9s", r[0], r[1], r[2])
	if r[3] != "" {
		s += fmt.Sprintf("P = %s", r[3])
	}
	return s
}
