package restd

import (
	"fmt"
	"net/http"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/dataparser"
)

// slurmOps are the /slurm/VERSION operations (slurmctld's).
func slurmOps() []op {
	jobID := param{"job_id", "path", "job id"}
	node := param{"node_name", "path", "node name"}
	part := param{"partition_name", "path", "partition name"}
	resv := param{"reservation_name", "path", "reservation name"}
	updateTime := param{"update_time", "query", "only answer if something changed since this UNIX time"}
	return []op{
		{method: "GET", path: "/slurm/VERSION/ping/", summary: "ping the controller", resp: "v0.0.42_openapi_ping_array_resp", h: getPing},
		{method: "GET", path: "/slurm/VERSION/diag/", summary: "get the controller's statistics", resp: "v0.0.42_openapi_diag_resp", h: getDiag},
		{method: "GET", path: "/slurm/VERSION/jobs/", summary: "get all jobs", resp: "v0.0.42_openapi_job_info_resp",
			params: []param{updateTime, {"flags", "query", "show flags (accepted, not used)"}}, h: getJobs},
		{method: "GET", path: "/slurm/VERSION/job/{job_id}", summary: "get a job", resp: "v0.0.42_openapi_job_info_resp",
			params: []param{jobID, updateTime, {"flags", "query", "show flags (accepted, not used)"}}, h: getJob},
		{method: "POST", path: "/slurm/VERSION/job/{job_id}", summary: "update a job", body: "v0.0.42_job_desc_msg",
			resp: "v0.0.42_openapi_job_post_response", params: []param{jobID}, h: postJob},
		{method: "DELETE", path: "/slurm/VERSION/job/{job_id}", summary: "cancel or signal a job", resp: "v0.0.42_openapi_kill_job_resp",
			params: []param{jobID, {"signal", "query", "signal name or number (default SIGKILL)"}, {"flags", "query", "KILL_JOB_BATCH, KILL_JOB_FULL"}},
			h:      deleteJob},
		{method: "DELETE", path: "/slurm/VERSION/jobs/", summary: "cancel or signal jobs", body: "v0.0.42_kill_jobs_msg",
			resp: "v0.0.42_openapi_kill_jobs_resp", h: deleteJobs},
		{method: "GET", path: "/slurm/VERSION/jobs/state/", summary: "get jobs' states", resp: "v0.0.42_openapi_job_info_resp",
			params: []param{{"job_id", "query", "comma-separated job ids"}}, h: getJobsState},
		{method: "POST", path: "/slurm/VERSION/job/submit", summary: "submit a batch job", body: "v0.0.42_job_submit_req",
			resp: "v0.0.42_openapi_job_submit_response", h: postSubmit},
		{method: "GET", path: "/slurm/VERSION/nodes/", summary: "get all nodes", resp: "v0.0.42_openapi_nodes_resp",
			params: []param{updateTime, {"flags", "query", "show flags (accepted, not used)"}}, h: getNodes},
		{method: "POST", path: "/slurm/VERSION/nodes/", summary: "update nodes (state, reason)", body: "v0.0.42_update_node_msg",
			resp: "v0.0.42_openapi_resp", h: postNodes},
		{method: "GET", path: "/slurm/VERSION/node/{node_name}", summary: "get a node", resp: "v0.0.42_openapi_nodes_resp",
			params: []param{node, updateTime}, h: getNode},
		{method: "POST", path: "/slurm/VERSION/node/{node_name}", summary: "update a node (state, reason)", body: "v0.0.42_update_node_msg",
			resp: "v0.0.42_openapi_resp", params: []param{node}, h: postNode},
		{method: "DELETE", path: "/slurm/VERSION/node/{node_name}", summary: "delete a dynamic node (refused: Sluice has none)",
			resp: "v0.0.42_openapi_resp", params: []param{node}, h: deleteNode},
		{method: "GET", path: "/slurm/VERSION/partitions/", summary: "get all partitions", resp: "v0.0.42_openapi_partition_resp",
			params: []param{updateTime}, h: getPartitions},
		{method: "GET", path: "/slurm/VERSION/partition/{partition_name}", summary: "get a partition", resp: "v0.0.42_openapi_partition_resp",
			params: []param{part, updateTime}, h: getPartition},
		{method: "GET", path: "/slurm/VERSION/reservations/", summary: "get all reservations", resp: "v0.0.42_openapi_reservation_resp",
			params: []param{updateTime}, h: getReservations},
		{method: "GET", path: "/slurm/VERSION/reservation/{reservation_name}", summary: "get a reservation",
			resp: "v0.0.42_openapi_reservation_resp", params: []param{resv, updateTime}, h: getReservation},
		{method: "GET", path: "/slurm/VERSION/licenses/", summary: "get all licenses", resp: "v0.0.42_openapi_licenses_resp", h: getLicenses},
		{method: "GET", path: "/slurm/VERSION/shares", summary: "get fair-share information", resp: "v0.0.42_openapi_shares_resp",
			params: []param{{"accounts", "query", "comma-separated accounts"}, {"users", "query", "comma-separated users"}}, h: getShares},
		{method: "GET", path: "/slurm/VERSION/reconfigure/", summary: "reread slurm.conf", resp: "v0.0.42_openapi_resp", h: getReconfigure},
	}
}

func emptyJobs() dataparser.Obj {
	return dataparser.Obj{{Key: "jobs", Val: []any{}}, {Key: "last_backfill", Val: dataparser.N(0)}, {Key: "last_update", Val: dataparser.N(0)}}
}

func emptyResults() dataparser.Obj { return dataparser.Obj{{Key: "results", Val: nil}} }

func emptyStatus() dataparser.Obj { return dataparser.Obj{{Key: "status", Val: []any{}}} }

// getPing answers whether the controller responds, and how fast.
func getPing(c *call) reply {
	start := time.Now()
	_, err := c.cl.Ping(c.ctx)
	if c.refused {
		err = nil // slurmctld answers a ping whoever asks
	}
	lat := time.Since(start).Microseconds()
	host := c.cfg.Controller
	pinged := "UP"
	if err != nil {
		pinged = "DOWN"
	}
	p := dataparser.Obj{{Key: "hostname", Val: host}, {Key: "pinged", Val: pinged}, {Key: "responding", Val: err == nil}, {Key: "latency", Val: lat},
		{Key: "mode", Val: "primary"}, {Key: "primary", Val: true}}
	if c.version != "v0.0.42" {
		// v0.0.40 and v0.0.41 pings have no responding and primary
		// members (oracle).
		p = dataparser.Obj{p[0], p[1], p[3], p[4]}
	}
	return reply{data: dataparser.Obj{{Key: "pings", Val: []any{p}}}}
}

// getDiag is sdiag --json.
func getDiag(c *call) reply {
	st, err := c.cl.Sdiag(c.ctx)
	if err != nil {
		return failed(nil, callError(err, "slurm_get_statistics() failed to get slurmctld statistics", "op_handler_diag"))
	}
	return reply{data: dataparser.Diag(&st, gettimeofdayLatency())}
}

// gettimeofdayLatency times 1000 clock reads, as sdiag reports.
func gettimeofdayLatency() int64 {
	t0 := time.Now()
	for i := 0; i < 1000; i++ {
		_ = time.Now()
	}
	return time.Since(t0).Microseconds()
}

// cluster is the configuration's ClusterName.
func (c *call) cluster() dataparser.Cluster {
	for _, e := range c.cfg.Entries {
		if e.Key == "ClusterName" {
			return dataparser.Cluster{Name: e.Value}
		}
	}
	return dataparser.Cluster{}
}

// lastBackfill is when backfill last ran (zero before it has).
func (c *call) lastBackfill() time.Time {
	st, err := c.cl.Sdiag(c.ctx)
	if err != nil {
		return time.Time{}
	}
	return st.BfLastCycleWhen
}

// updateTime reads update_time (0 when absent or not a number).
func (c *call) updateTime() int64 {
	n, _ := strconv.ParseInt(c.r.URL.Query().Get("update_time"), 10, 64)
	return n
}

// jobsChanged reports whether any job changed since t (UNIX seconds):
// Sluice keeps no per-job change time, so the newest of its submit,
// start, end and suspend times stands for it.
func jobsChanged(jobs []api.JobInfo, t int64) bool {
	for i := range jobs {
		j := &jobs[i]
		for _, x := range []time.Time{j.SubmitTime, j.StartTime, j.EndTime, j.SuspendTime, j.EligibleTime} {
			if !x.IsZero() && x.Unix() >= t {
				return true
			}
		}
	}
	return false
}

// getJobs lists every job the controller holds (finished ones too, as
// slurmrestd's /jobs), in job id order.
func getJobs(c *call) reply {
	res, err := c.cl.Jobs(c.ctx, api.JobQuery{})
	if err != nil {
		return failed(emptyJobs(), callError(err, "Unable to query jobs", "slurm_load_jobs()"))
	}
	if t := c.updateTime(); t > 0 && !jobsChanged(res.Jobs, t) {
		data := emptyJobs()
		data[2].Val = dataparser.Time(res.Now)
		return reply{data: data, warns: []dataparser.Warning{{Description: fmt.Sprintf("No job changes since update_time[%d]=%s",
			t, time.Unix(t, 0).Format("2006-01-02T15:04:05")), Source: "op_handler_jobs"}}}
	}
	sortByID(res.Jobs)
	rep := reply{data: dataparser.Jobs(res.Jobs, res.Now, c.lastBackfill(), c.cluster())}
	if len(res.Jobs) == 0 {
		rep.warns = []dataparser.Warning{{Description: "Zero jobs to dump"}}
	}
	return rep
}

// validJobID accepts what slurmrestd parses as a job id: 12, 12_3, 12+1.
func validJobID(s string) bool {
	head, _, _ := strings.Cut(s, "_")
	head, _, _ = strings.Cut(head, "+")
	_, err := strconv.ParseUint(head, 10, 32)
	return err == nil
}

// getJob is one job (an array's every task when named by its id).
func getJob(c *call) reply {
	id := c.r.PathValue("job_id")
	if !validJobID(id) {
		return parseFailure(nil, "Rejecting request. Failure parsing parameters", "op_handler_job")
	}
	res, err := c.cl.Jobs(c.ctx, api.JobQuery{IDs: []string{id}})
	if err != nil {
		e := callError(err, "Unable to query JobId="+id, "_handle_job_get")
		return failed(emptyJobs(), e)
	}
	sortByID(res.Jobs)
	return reply{data: dataparser.Jobs(res.Jobs, res.Now, c.lastBackfill(), c.cluster())}
}

// getNodes lists the nodes.
func getNodes(c *call) reply {
	res, err := c.cl.Nodes(c.ctx)
	if err != nil {
		return failed(nil, callError(err, "Failure to query nodes", "_dump_nodes"))
	}
	return reply{data: c.nodes(res.Nodes, res.Now)}
}

// getNode is one node; an unknown name is an error with status 200 and
// no data, as slurmrestd answers.
func getNode(c *call) reply {
	name := c.r.PathValue("node_name")
	res, err := c.cl.Nodes(c.ctx)
	if err != nil {
		return failed(nil, callError(err, "Failure to query node "+name, "_dump_nodes"))
	}
	for _, n := range res.Nodes {
		if n.Name == name {
			return reply{data: c.nodes([]api.NodeRecord{n}, res.Now)}
		}
	}
	return reply{errs: []dataparser.Error{{Description: "Failure to query node " + name, Error: "No error", Source: "_dump_nodes"}}}
}

// getPartitions lists the partitions.
func getPartitions(c *call) reply {
	res, err := c.cl.Partitions(c.ctx)
	if err != nil {
		return failed(nil, callError(err, "Unable to query partitions", "slurm_load_partitions()"))
	}
	return reply{data: dataparser.Partitions(res.Partitions, res.Now)}
}

// getPartition is one partition; an unknown one is slurmrestd's 422.
func getPartition(c *call) reply {
	name := c.r.PathValue("partition_name")
	res, err := c.cl.Partitions(c.ctx)
	if err != nil {
		return failed(nil, callError(err, "Unable to query partitions", "slurm_load_partitions()"))
	}
	for _, p := range res.Partitions {
		if p.Name == name {
			return reply{data: dataparser.Partitions([]api.PartitionRecord{p}, res.Now)}
		}
	}
	return parseFailure(nil, "Unable to find partition "+name, "op_handler_partition")
}

// reservations reads the reservations as scontrol -o show res prints them.
func (c *call) reservations(name string) ([]map[string]string, error) {
	words := []string{"show", "reservation"}
	if name != "" {
		words = append(words, name)
	}
	res, err := c.cl.ReservationCommand(c.ctx, api.ResvCommandRequest{Words: words, OneLiner: true})
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(res.Text, "No reservations") {
		return nil, nil
	}
	return dataparser.Records(res.Text), nil
}

func getReservations(c *call) reply {
	recs, err := c.reservations("")
	if err != nil {
		return failed(nil, callError(err, "Unable to query reservations", "slurm_load_reservations()"))
	}
	return reply{data: dataparser.Reservations(recs, time.Now())}
}

// getReservation is one reservation. An unknown name is slurmrestd's
// 422 "Unable to find reservation NAME" while reservations exist, and an
// error with status 200 and no data when there are none (oracle).
func getReservation(c *call) reply {
	name := c.r.PathValue("reservation_name")
	all, err := c.reservations("")
	if err != nil || len(all) == 0 {
		return reply{errs: []dataparser.Error{{Description: "Unable to query reservations", Error: "No error", Source: "slurm_load_reservations()"}}}
	}
	for _, r := range all {
		if r["ReservationName"] == name {
			return reply{data: dataparser.Reservations([]map[string]string{r}, time.Now())}
		}
	}
	return parseFailure(nil, "Unable to find reservation "+name, "op_handler_reservation")
}

// getLicenses lists the licenses; none is a warning, as slurmrestd's.
func getLicenses(c *call) reply {
	res, err := c.cl.Licenses(c.ctx, "", true)
	if err != nil {
		return failed(nil, callError(err, "Unable to query licenses", "slurm_load_licenses()"))
	}
	recs := dataparser.Records(res.Text)
	var warns []dataparser.Warning
	if len(recs) == 0 || recs[0]["LicenseName"] == "" {
		recs = nil
		warns = append(warns, dataparser.Warning{Description: "Zero licenses to dump"})
	}
	return reply{data: dataparser.Licenses(recs, time.Now()), warns: warns}
}

// getShares is sshare --json (-a: every user), narrowed by accounts
// and users.
func getShares(c *call) reply {
	q := c.r.URL.Query()
	req := api.SshareRequest{All: true, Parsable2: true, NoHeader: true, Format: dataparser.ShareFields}
	if a := q.Get("accounts"); a != "" {
		req.Accounts = strings.Split(a, ",")
	}
	if u := q.Get("users"); u != "" {
		req.Users = strings.Split(u, ",")
	}
	text, err := c.cl.Sshare(c.ctx, req)
	if err != nil {
		return failed(nil, callError(err, "Unable to query shares", "slurm_associations_get_shares()"))
	}
	return reply{data: dataparser.Shares(text)}
}

// getReconfigure is scontrol reconfigure.
func getReconfigure(c *call) reply {
	if _, err := c.cl.Reconfigure(c.ctx); err != nil {
		return failed(nil, callError(err, "slurm_reconfigure() failed", "op_handler_reconfigure"))
	}
	return reply{}
}

// processIdentity is the user and group the REST server runs as:
// slurmrestd's meta.client names its own process identity, whoever
// called (oracle: "root" in every reply of a root slurmrestd).
var processIdentity = sync.OnceValues(func() (string, string) {
	uid, gid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
	name, group := uid, gid
	if u, err := user.LookupId(uid); err == nil {
		name = u.Username
	}
	if g, err := user.LookupGroupId(gid); err == nil {
		group = g.Name
	}
	return name, group
})

var _ = http.StatusOK

// nodes renders node records for the path's version: v0.0.40's lack
// gpu_spec and res_cores_per_gpu (oracle, 24.11).
func (c *call) nodes(nodes []api.NodeRecord, now time.Time) dataparser.Obj {
	data := dataparser.Nodes(nodes, now)
	if c.version != "v0.0.40" {
		return data
	}
	list, _ := data.Get("nodes").([]any)
	for i, n := range list {
		o, ok := n.(dataparser.Obj)
		if !ok {
			continue
		}
		kept := o[:0:0]
		for _, f := range o {
			if f.Key != "gpu_spec" && f.Key != "res_cores_per_gpu" {
				kept = append(kept, f)
			}
		}
		list[i] = kept
	}
	return data
}
