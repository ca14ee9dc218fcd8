package restd

import (
	"fmt"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/dataparser"
)

// slurmdbOps are the /slurmdb/VERSION operations (slurmdbd's): the
// accounting records and the accounting policy, read-only.
func slurmdbOps() []op {
	return []op{
		{method: "GET", path: "/slurmdb/VERSION/jobs/", summary: "get job accounting records", resp: "v0.0.42_openapi_slurmdbd_jobs_resp",
			params: []param{{"users", "query", "comma-separated users"}, {"account", "query", "comma-separated accounts"}}, h: getDBJobs},
		{method: "GET", path: "/slurmdb/VERSION/job/{job_id}", summary: "get a job's accounting record", resp: "v0.0.42_openapi_slurmdbd_jobs_resp",
			params: []param{{"job_id", "path", "job id"}}, h: getDBJob},
		{method: "GET", path: "/slurmdb/VERSION/accounts/", summary: "get accounts", resp: "v0.0.42_openapi_accounts_resp", h: getAccounts},
		{method: "GET", path: "/slurmdb/VERSION/account/{account_name}", summary: "get an account", resp: "v0.0.42_openapi_accounts_resp",
			params: []param{{"account_name", "path", "account name"}}, h: getAccount},
		{method: "GET", path: "/slurmdb/VERSION/users/", summary: "get users", resp: "v0.0.42_openapi_users_resp", h: getUsers},
		{method: "GET", path: "/slurmdb/VERSION/user/{name}", summary: "get a user", resp: "v0.0.42_openapi_users_resp",
			params: []param{{"name", "path", "user name"}}, h: getUser},
		{method: "GET", path: "/slurmdb/VERSION/qos/", summary: "get QOS", resp: "v0.0.42_openapi_slurmdbd_qos_resp", h: getQOSList},
		{method: "GET", path: "/slurmdb/VERSION/qos/{qos}", summary: "get a QOS", resp: "v0.0.42_openapi_slurmdbd_qos_resp",
			params: []param{{"qos", "path", "QOS name"}}, h: getQOS},
		{method: "GET", path: "/slurmdb/VERSION/associations/", summary: "get associations", resp: "v0.0.42_openapi_assocs_resp",
			params: []param{{"account", "query", "account"}, {"user", "query", "user"}, {"partition", "query", "partition"}}, h: getAssocs},
		{method: "GET", path: "/slurmdb/VERSION/ping/", summary: "ping the accounting (the controller)", resp: "v0.0.42_openapi_slurmdbd_ping_resp", h: getDBPing},
		{method: "GET", path: "/slurmdb/VERSION/tres/", summary: "get the trackable resources", resp: "v0.0.42_openapi_tres_resp", h: getTRES},
	}
}

// acctJobs groups accounting records into runs with their steps, in
// job id order.
func acctJobs(recs []api.AcctRecord, keep func(*api.AcctRecord) bool) []dataparser.AcctJob {
	var jobs []dataparser.AcctJob
	for _, r := range recs {
		if r.Step == "" {
			if keep(&r) {
				jobs = append(jobs, dataparser.AcctJob{Job: r, Group: groupName(r.GID)})
			}
			continue
		}
		for i := len(jobs) - 1; i >= 0; i-- {
			if jobs[i].Job.JobID == r.JobID && jobs[i].Job.Restart == r.Restart {
				jobs[i].Steps = append(jobs[i].Steps, r)
				break
			}
		}
	}
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].Job.JobID < jobs[b].Job.JobID })
	return jobs
}

// groupName is a gid's name (its number without a group entry).
func groupName(gid uint32) string {
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	return id
}

// inList reports whether v is in the comma-separated list (an empty
// list holds everything).
func inList(list, v string) bool {
	if list == "" {
		return true
	}
	for _, x := range strings.Split(list, ",") {
		if x == v {
			return true
		}
	}
	return false
}

// getDBJobs is sacct --json -a: every job the accounting holds, as
// slurmdbd's /jobs lists them, narrowed by users and account.
func getDBJobs(c *call) reply {
	res, err := c.cl.Accounting(c.ctx)
	if err != nil {
		return failed(dataparser.Obj{{Key: "jobs", Val: []any{}}}, callError(err, "slurmdb_jobs_get() failed", "_dump_jobs"))
	}
	q := c.r.URL.Query()
	users, accounts := q.Get("users"), q.Get("account")
	// Like sacct without -j, a run never eligible (held, waiting on a
	// dependency) is in no time window, so slurmdbd does not list it
	// (oracle: bob's held job is missing from alice's /slurmdb/jobs).
	jobs := acctJobs(res.Records, func(r *api.AcctRecord) bool {
		return !r.Eligible.IsZero() && inList(users, r.User) && inList(accounts, r.Account)
	})
	return dbJobsReply(jobs, res)
}

// getDBJob is one job's runs; none is a warning, as slurmdbd's.
func getDBJob(c *call) reply {
	id, err := strconv.ParseUint(c.r.PathValue("job_id"), 10, 32)
	if err != nil {
		return parseFailure(nil, "Rejecting request. Failure parsing parameters", "op_handler_job")
	}
	res, err := c.cl.Accounting(c.ctx)
	if err != nil {
		return failed(dataparser.Obj{{Key: "jobs", Val: []any{}}}, callError(err, "slurmdb_jobs_get() failed", "_dump_jobs"))
	}
	return dbJobsReply(acctJobs(res.Records, func(r *api.AcctRecord) bool { return uint64(r.JobID) == id }), res)
}

func dbJobsReply(jobs []dataparser.AcctJob, res api.AcctResponse) reply {
	rep := reply{data: dataparser.Accounting(jobs, res.Cluster, res.Now)}
	if len(jobs) == 0 {
		rep.warns = []dataparser.Warning{{Description: "slurmdb_jobs_get() found nothing", Source: "_dump_jobs"}}
	}
	return rep
}

// sacctmgrRows runs sacctmgr -n -P show WHAT format=FIELDS on the
// controller and returns its rows, split.
func (c *call) sacctmgrRows(what string, fields []string, where ...string) ([][]string, error) {
	args := append([]string{"-n", "-P", "show", what}, where...)
	args = append(args, "format="+strings.Join(fields, ","))
	res, err := c.cl.Sacctmgr(c.ctx, api.SacctmgrRequest{Args: args})
	if err != nil {
		return nil, err
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(res.Out, "\n"), "\n") {
		if line == "" {
			continue
		}
		row := strings.Split(line, "|")
		for len(row) < len(fields) {
			row = append(row, "")
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// getAccounts lists the accounts.
func getAccounts(c *call) reply { return accounts(c, "") }

// getAccount is one account; an unknown one is a warning.
func getAccount(c *call) reply { return accounts(c, c.r.PathValue("account_name")) }

func accounts(c *call, name string) reply {
	var where []string
	if name != "" {
		where = []string{"where", "name=" + name}
	}
	rows, err := c.sacctmgrRows("account", dataparser.AccountFields, where...)
	if err != nil {
		return failed(dataparser.Obj{{Key: "accounts", Val: []any{}}}, callError(err, "slurmdb_accounts_get() failed", "_dump_accounts"))
	}
	rep := reply{data: dataparser.Accounts(rows)}
	if len(rows) == 0 {
		rep.warns = []dataparser.Warning{{Description: "slurmdb_accounts_get() found nothing", Source: "_dump_accounts"}}
	}
	return rep
}

// getUsers lists the users.
func getUsers(c *call) reply { return users(c, "") }

// getUser is one user; an unknown one is a warning.
func getUser(c *call) reply { return users(c, c.r.PathValue("name")) }

func users(c *call, name string) reply {
	var where []string
	if name != "" {
		where = []string{"where", "name=" + name}
	}
	rows, err := c.sacctmgrRows("user", dataparser.UserFields, where...)
	if err != nil {
		return failed(dataparser.Obj{{Key: "users", Val: []any{}}}, callError(err, "slurmdb_users_get() failed", "_dump_users"))
	}
	rep := reply{data: dataparser.Users(rows)}
	if len(rows) == 0 {
		rep.warns = []dataparser.Warning{{Description: fmt.Sprintf("slurmdb_users_get() found nothing"), Source: "_dump_users"}}
	}
	return rep
}

// getDBPing is slurmdbd's ping: the accounting is the controller's, so
// it answers whether the controller does.
func getDBPing(c *call) reply {
	start := time.Now()
	_, err := c.cl.Ping(c.ctx)
	lat := time.Since(start).Microseconds()
	p := dataparser.Obj{{Key: "hostname", Val: c.cfg.Controller}, {Key: "responding", Val: err == nil},
		{Key: "latency", Val: lat}, {Key: "primary", Val: true}}
	return reply{data: dataparser.Obj{{Key: "pings", Val: []any{p}}}}
}

// getTRES lists the trackable resources with their ids (sacctmgr show
// tres); counts are 0, as slurmdbd's /tres prints them.
func getTRES(c *call) reply {
	rows, err := c.sacctmgrRows("tres", []string{"Type", "Name", "ID"})
	if err != nil {
		return failed(dataparser.Obj{{Key: "TRES", Val: []any{}}}, callError(err, "slurmdb_tres_get() failed", "_dump_tres"))
	}
	list := []any{}
	tresObj := func(typ, name string, id int64) dataparser.Obj {
		return dataparser.Obj{{Key: "type", Val: typ}, {Key: "name", Val: name}, {Key: "id", Val: id}, {Key: "count", Val: int64(0)}}
	}
	offset := false
	for _, r := range rows {
		id, _ := strconv.ParseInt(r[2], 10, 64)
		if id > 1000 && !offset {
			// slurmdbd's /tres shows the marker of its dynamic ids
			// (id 1000), which sacctmgr show tres hides (oracle).
			list, offset = append(list, tresObj("dynamic_offset", "", 1000)), true
		}
		list = append(list, tresObj(r[0], r[1], id))
	}
	return reply{data: dataparser.Obj{{Key: "TRES", Val: list}}}
}

// getQOSList lists the QOS.
func getQOSList(c *call) reply { return qosReply(c, "") }

// getQOS is one QOS; an unknown one is a warning.
func getQOS(c *call) reply { return qosReply(c, c.r.PathValue("qos")) }

func qosReply(c *call, name string) reply {
	var where []string
	if name != "" {
		where = []string{"where", "name=" + name}
	}
	rows, err := c.sacctmgrRows("qos", dataparser.QOSFields, where...)
	if err != nil {
		return failed(dataparser.Obj{{Key: "qos", Val: []any{}}}, callError(err, "slurmdb_qos_get() failed", "_dump_qos"))
	}
	rep := reply{data: dataparser.QOS(rows)}
	if len(rows) == 0 {
		rep.warns = []dataparser.Warning{{Description: "slurmdb_qos_get() found nothing", Source: "_dump_qos"}}
	}
	return rep
}

// getAssocs lists the associations (sacctmgr show assoc), narrowed by
// account, user and partition.
func getAssocs(c *call) reply {
	q := c.r.URL.Query()
	var where []string
	for _, k := range []string{"account", "user", "partition"} {
		if v := q.Get(k); v != "" {
			where = append(where, k+"="+v)
		}
	}
	if len(where) > 0 {
		where = append([]string{"where"}, where...)
	}
	fail := func(err error) reply {
		return failed(dataparser.Obj{{Key: "associations", Val: []any{}}}, callError(err, "slurmdb_associations_get() failed", "_dump_assoc"))
	}
	rows, err := c.sacctmgrRows("assoc", dataparser.AssocFields, where...)
	if err != nil {
		return fail(err)
	}
	users, err := c.sacctmgrRows("user", []string{"User", "DefaultAccount"})
	if err != nil {
		return fail(err)
	}
	defaults := map[string]string{}
	for _, u := range users {
		defaults[u[0]] = u[1]
	}
	rep := reply{data: dataparser.Associations(rows, defaults)}
	if len(rows) == 0 {
		rep.warns = []dataparser.Warning{{Description: "slurmdb_associations_get() found nothing", Source: "_dump_assoc"}}
	}
	return rep
}
