package restd

import (
	"net/http"
	"strconv"
	"time"

	"github.com/sluice-hpc/sluice/internal/dataparser"
	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// slurmdbConfigOps are slurmdbd's cluster, diagnostics and configuration
// dump operations and the single association query.
func slurmdbConfigOps() []op {
	return []op{
		{method: "GET", path: "/slurmdb/VERSION/clusters/", summary: "get clusters", resp: "v0.0.42_openapi_clusters_resp", h: getClusters},
		{method: "GET", path: "/slurmdb/VERSION/cluster/{cluster_name}", summary: "get a cluster", resp: "v0.0.42_openapi_clusters_resp",
			params: []param{{"cluster_name", "path", "cluster name"}}, h: getCluster},
		{method: "GET", path: "/slurmdb/VERSION/diag/", summary: "get the accounting's statistics (administrators)", resp: "v0.0.42_openapi_slurmdbd_stats_resp", h: getDBDiag},
		{method: "GET", path: "/slurmdb/VERSION/config", summary: "dump the accounting's clusters, TRES, accounts, users, QOS, wckeys and associations (administrators)",
			resp: "v0.0.42_openapi_slurmdbd_config_resp", h: getDBConfig},
		{method: "GET", path: "/slurmdb/VERSION/association/", summary: "get one association", resp: "v0.0.42_openapi_assocs_resp",
			params: []param{{"account", "query", "account"}, {"user", "query", "user"}, {"partition", "query", "partition"}}, h: getAssoc},
	}
}

// assocRefs is every association with its id (sacctmgr show assoc).
func (c *call) assocRefs() ([]dataparser.AssocRef, error) {
	rows, err := c.sacctmgrRows("assoc", []string{"Cluster", "Account", "User", "Partition", "ID"})
	if err != nil {
		return nil, err
	}
	var refs []dataparser.AssocRef
	for _, r := range rows {
		id, _ := strconv.ParseInt(r[4], 10, 64)
		refs = append(refs, dataparser.AssocRef{Cluster: r[0], Account: r[1], User: r[2], Partition: r[3], ID: id})
	}
	return refs, nil
}

// tresDefs is sacctmgr show tres.
func (c *call) tresDefs() ([]dataparser.TRESDef, error) {
	rows, err := c.sacctmgrRows("tres", []string{"Type", "Name", "ID"})
	if err != nil {
		return nil, err
	}
	var defs []dataparser.TRESDef
	for _, r := range rows {
		id, _ := strconv.ParseInt(r[2], 10, 64)
		defs = append(defs, dataparser.TRESDef{Type: r[0], Name: r[1], ID: id})
	}
	return defs, nil
}

// clusterRecords are the cluster records of sacctmgr show cluster (name
// "" for all), with the controller's nodes and TRES totals.
func (c *call) clusterRecords(name string) ([]any, error) {
	var where []string
	if name != "" {
		where = []string{"where", "cluster=" + name}
	}
	rows, err := c.sacctmgrRows("cluster", []string{"Cluster", "ControlHost", "ControlPort", "RPC"}, where...)
	if err != nil {
		return nil, err
	}
	list := []any{}
	if len(rows) == 0 {
		return list, nil
	}
	defs, err := c.tresDefs()
	if err != nil {
		return nil, err
	}
	refs, err := c.assocRefs()
	if err != nil {
		return nil, err
	}
	nodes, err := c.cl.Nodes(c.ctx)
	if err != nil {
		return nil, err
	}
	var names, tres []string
	for _, n := range nodes.Nodes {
		names, tres = append(names, n.Name), append(tres, n.CfgTRES)
	}
	for _, r := range rows {
		port, _ := strconv.Atoi(r[2])
		rpc, _ := strconv.Atoi(r[3])
		ci := dataparser.ClusterInfo{Name: r[0], ControlHost: r[1], ControlPort: port, RPC: rpc, TRES: defs,
			// Sluice runs any number of node agents on one host, as a
			// Slurm built with multiple-slurmd support (the oracle's).
			MultipleSlurmd: true}
		if r[0] == c.cluster().Name {
			ci.Nodes, ci.NodeTRES = hostlist.Compress(names), tres
		}
		for _, a := range refs {
			if a.Cluster == r[0] && a.Account == "root" && a.User == "" && a.Partition == "" {
				ci.Root = a
			}
		}
		list = append(list, dataparser.ClusterRecord(ci))
	}
	return list, nil
}

// getClusters lists the clusters the accounting knows (slurmdbd's
// /clusters: every user may read them).
func getClusters(c *call) reply { return clustersReply(c, "") }

// getCluster is one cluster; an unknown one is a warning.
func getCluster(c *call) reply { return clustersReply(c, c.r.PathValue("cluster_name")) }

func clustersReply(c *call, name string) reply {
	list, err := c.clusterRecords(name)
	if err != nil {
		return failed(dataparser.Obj{{Key: "clusters", Val: []any{}}}, callError(err, "slurmdb_clusters_get() failed", "_dump_clusters"))
	}
	rep := reply{data: dataparser.Obj{{Key: "clusters", Val: list}}}
	if len(list) == 0 {
		rep.warns = []dataparser.Warning{{Description: "slurmdb_clusters_get() found nothing", Source: "_dump_clusters"}}
	}
	return rep
}

// isAdmin reports whether the caller is an accounting administrator:
// root, or a user with AdminLevel Operator or Administrator.
func (c *call) isAdmin() bool {
	if c.refused {
		return false
	}
	if c.caller.User == "root" {
		return true
	}
	rows, err := c.sacctmgrRows("user", []string{"AdminLevel"}, "where", "name="+c.caller.User)
	return err == nil && len(rows) == 1 && rows[0][0] != "" && rows[0][0] != "None"
}

// errDenied is slurmdbd's refusal of a non-administrator.
func errDenied(description, source string) dataparser.Error {
	return dataparser.Error{Description: description, Number: 2002, Error: "Access/permission denied", Source: source}
}

// getDBDiag is slurmdbd's statistics, for administrators only (others:
// 2002, HTTP 500, as slurmdbd's). Sluice's accounting is the
// controller's: no RPCs to slurmdbd and no rollups, so the counters are
// zero and the start time is the controller's.
func getDBDiag(c *call) reply {
	if !c.isAdmin() {
		return failed(dataparser.Obj{{Key: "statistics", Val: dataparser.Obj{}}}, errDenied("stats query failed", "slurmdb_get_stats"))
	}
	res, err := c.cl.Sdiag(c.ctx)
	if err != nil {
		return failed(dataparser.Obj{{Key: "statistics", Val: dataparser.Obj{}}}, callError(err, "stats query failed", "slurmdb_get_stats"))
	}
	rollup := func() dataparser.Obj {
		return dataparser.Obj{{Key: "count", Val: 0}, {Key: "last_run", Val: 0},
			{Key: "duration", Val: dataparser.Obj{{Key: "last", Val: 0}, {Key: "max", Val: 0}, {Key: "time", Val: 0}}}}
	}
	st := dataparser.Obj{
		{Key: "time_start", Val: unixOr0(res.StartTime)},
		{Key: "rollups", Val: dataparser.Obj{{Key: "hourly", Val: rollup()}, {Key: "daily", Val: rollup()}, {Key: "monthly", Val: rollup()}}},
		{Key: "RPCs", Val: []any{}},
		{Key: "users", Val: []any{}},
	}
	return reply{data: dataparser.Obj{{Key: "statistics", Val: st}}}
}

func unixOr0(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// getDBConfig is slurmdbd's configuration dump (sacctmgr dump's
// contents as records): clusters, TRES, accounts and users with their
// associations, QOS, wckeys (none in Sluice), associations. slurmdbd
// refuses it to non-administrators at the wckeys, which only they may
// read (oracle: 2002, HTTP 500, no data).
func getDBConfig(c *call) reply {
	if !c.isAdmin() {
		return failed(dataparser.Obj{}, errDenied("slurmdb_wckeys_get() failed", "_dump"))
	}
	fail := func(err error) reply {
		return failed(dataparser.Obj{}, callError(err, "slurmdb_config_get() failed", "_dump"))
	}
	clusters, err := c.clusterRecords("")
	if err != nil {
		return fail(err)
	}
	parts := map[string]reply{}
	for k, f := range map[string]handler{"tres": getTRES, "accounts": getAccounts, "users": getUsers, "qos": getQOSList, "associations": getAssocs} {
		if parts[k] = f(c); len(parts[k].errs) > 0 {
			return reply{data: dataparser.Obj{}, status: parts[k].status, errs: parts[k].errs}
		}
	}
	refs, err := c.assocRefs()
	if err != nil {
		return fail(err)
	}
	defaults, err := c.userDefaults()
	if err != nil {
		return fail(err)
	}
	list := func(k, key string) []any { l, _ := parts[k].data.Get(key).([]any); return l }
	accounts, users := list("accounts", "accounts"), list("users", "users")
	// An account lists its associations but the root account none: its
	// association is the cluster's (oracle, 24.11).
	dataparser.WithAssocs(accounts, func(name string) []dataparser.AssocRef {
		return filterRefs(refs, func(a dataparser.AssocRef) bool { return a.Account == name && name != "root" })
	}, nil)
	dataparser.WithAssocs(users, func(name string) []dataparser.AssocRef {
		return filterRefs(refs, func(a dataparser.AssocRef) bool { return a.User == name })
	}, defaults)
	return reply{data: dataparser.Obj{
		{Key: "clusters", Val: clusters},
		{Key: "tres", Val: list("tres", "TRES")},
		{Key: "accounts", Val: accounts},
		{Key: "users", Val: users},
		{Key: "qos", Val: list("qos", "qos")},
		{Key: "wckeys", Val: []any{}},
		{Key: "associations", Val: list("associations", "associations")},
		{Key: "instances", Val: []any{}},
	}}
}

func filterRefs(refs []dataparser.AssocRef, keep func(dataparser.AssocRef) bool) []dataparser.AssocRef {
	var out []dataparser.AssocRef
	for _, a := range refs {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out
}

// userDefaults maps each user to its default account.
func (c *call) userDefaults() (map[string]string, error) {
	users, err := c.sacctmgrRows("user", []string{"User", "DefaultAccount"})
	if err != nil {
		return nil, err
	}
	defaults := map[string]string{}
	for _, u := range users {
		defaults[u[0]] = u[1]
	}
	return defaults, nil
}

// getAssoc is one association chosen by the query's account, user,
// partition and cluster: none is a warning, more than one slurmdbd's
// error 9211 with HTTP 500 (oracle, 24.11).
func getAssoc(c *call) reply {
	rep := getAssocs(c)
	if len(rep.errs) > 0 {
		return rep
	}
	list, _ := rep.data.Get("associations").([]any)
	switch {
	case len(list) == 0:
		rep.warns = []dataparser.Warning{{Description: "slurmdb_associations_get() found nothing", Source: "_dump_assoc_cond"}}
	case len(list) > 1:
		return reply{data: dataparser.Obj{{Key: "associations", Val: []any{}}}, status: http.StatusInternalServerError,
			errs: []dataparser.Error{{Description: "Ambiguous request: More than 1 association would have been dumped.", Number: 9211,
				Error:  "Request matched more than one object to query. Request is limited to query of a single matching object.",
				Source: "_dump_assoc_cond"}}}
	}
	return rep
}
