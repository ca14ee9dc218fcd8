package restd

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/dataparser"
)

// sortByID orders jobs by id, then array task, as slurmrestd lists them.
func sortByID(jobs []api.JobInfo) {
	sort.SliceStable(jobs, func(a, b int) bool {
		if jobs[a].JobID != jobs[b].JobID {
			return jobs[a].JobID < jobs[b].JobID
		}
		return jobs[a].ArrayTaskID < jobs[b].ArrayTaskID
	})
}

// errNoWorkDir is slurmctld's refusal of a job without a working
// directory (oracle, 24.11: error 2063).
const errNoWorkDir = "Job cannot be submitted without the current working directory specified."

// errNoEnvironment is slurmctld's refusal of a batch job without an
// environment (oracle, 24.11: error 2019).
const errNoEnvironment = "I/O error writing script/environment to file"

// badQuery is slurmrestd's answer to a body it cannot read.
var badQuery = reply{status: http.StatusBadRequest, noEnvelope: true}

// jobDesc turns data_parser's job_desc_msg into a submission. Members
// Sluice does not read come back as slurmrestd's warnings.
func jobDesc(f fields, path string) (api.JobSpec, []dataparser.Warning) {
	var s api.JobSpec
	var warns []dataparser.Warning
	for k, raw := range f {
		if !setSpec(&s, f, k) {
			warns = append(warns, dataparser.Warning{Description: unknownField(path, k, raw, "DATA_PARSER_JOB_DESC_MSG"),
				Source: path + k + "/"})
		}
	}
	sort.Slice(warns, func(a, b int) bool { return warns[a].Source < warns[b].Source })
	return s, warns
}

// setSpec sets the member k of a job_desc_msg; false when Sluice does
// not read it.
func setSpec(s *api.JobSpec, f fields, k string) bool {
	if p := specString(s, k); p != nil {
		*p = f.str(k)
		return true
	}
	n, set, inf := f.num(k)
	switch k {
	case "partition":
		s.Partitions = strings.Split(f.str(k), ",")
	case "constraints":
		s.Constraint = f.str(k)
	case "required_nodes":
		s.NodeList = f.list(k)
	case "excluded_nodes":
		s.Exclude = f.list(k)
	case "mail_type":
		s.MailType = f.list(k)
	case "environment":
		s.Environment = f.strs(k)
	case "argv":
		if a := f.strs(k); len(a) > 1 {
			s.ScriptArgs = a[1:]
		}
	case "time_limit", "time_minimum":
		sec := n * 60
		if inf {
			sec = api.TimeInfinite
		}
		if !set {
			sec = 0
		}
		if k == "time_limit" {
			s.TimeLimitSec = sec
		} else {
			s.TimeMinSec = sec
		}
	case "nodes":
		lo, hi, _ := strings.Cut(f.str(k), "-")
		s.MinNodes, _ = strconv.Atoi(lo)
		s.MaxNodes, _ = strconv.Atoi(hi)
	case "minimum_nodes":
		s.MinNodes = int(n)
	case "maximum_nodes":
		s.MaxNodes = int(n)
	case "tasks":
		s.NTasks = int(n)
	case "cpus_per_task":
		s.CPUsPerTask = int(n)
	case "tasks_per_node":
		s.NTasksPerNode = int(n)
	case "minimum_cpus_per_node":
		s.MinCPUsPerNode = int(n)
	case "memory_per_node":
		s.MemPerNodeMB, s.MemPerNodeSet = n, set
	case "memory_per_cpu":
		s.MemPerCPUMB = n
	case "tres_per_node":
		s.Gres = stripGres(f.str(k))
	case "begin_time", "deadline":
		if set && n > 0 {
			t := time.Unix(n, 0).Format("2006-01-02T15:04:05")
			if k == "begin_time" {
				s.Begin = t
			} else {
				s.Deadline = t
			}
		}
	case "nice":
		v := int(n)
		s.Nice = &v
	case "priority":
		if set {
			v := uint32(n)
			s.Priority = &v
		}
	case "hold":
		s.Hold, _ = f.boolean(k)
	case "requeue":
		if b, ok := f.boolean(k); ok {
			s.Requeue = &b
		}
	case "contiguous":
		s.Contiguous, _ = f.boolean(k)
	case "kill_on_invalid_dependency":
		if b, ok := f.boolean(k); ok {
			s.KillOnInvalidDep = map[bool]string{true: "yes", false: "no"}[b]
		}
	case "script":
		s.Script = f.str(k)
	default:
		return false
	}
	return true
}

// specString is the JobSpec string a job_desc_msg string member sets.
func specString(s *api.JobSpec, k string) *string {
	return map[string]*string{
		"name": &s.Name, "account": &s.Account, "qos": &s.QOS, "reservation": &s.Reservation,
		"wckey": &s.WCKey, "comment": &s.Comment, "dependency": &s.Dependency, "licenses": &s.Licenses,
		"array": &s.Array, "prefer": &s.Prefer, "mail_user": &s.MailUser,
		"standard_output": &s.Output, "standard_error": &s.Error, "standard_input": &s.Input,
		"current_working_directory": &s.WorkDir,
	}[k]
}

// stripGres turns tres_per_node's "gres/gpu:2" into --gres's "gpu:2".
func stripGres(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimPrefix(p, "gres/")
	}
	return strings.Join(parts, ",")
}

// postSubmit is sbatch: {"script": ..., "job": {job_desc_msg}}.
func postSubmit(c *call) reply {
	f, ok := readBody(c.r)
	if !ok {
		return badQuery
	}
	job := fields{}
	if raw, ok := f["job"]; ok {
		if err := jsonObject(raw, &job); err != nil {
			return badQuery
		}
	}
	spec, warns := jobDesc(job, "#/job/")
	if s := f.str("script"); s != "" {
		spec.Script = s
	}
	if spec.Script == "" {
		return parseFailure(nil, `Populated "script" field is required for job submission`, "_job_post")
	}
	if _, het := f["jobs"]; het {
		return parseFailure(nil, "Sluice has no heterogeneous jobs: submit one \"job\"", "_job_post")
	}
	if spec.WorkDir == "" {
		// slurmctld refuses a batch job without a working directory
		// (ESLURM_MISSING_WORK_DIR); sbatch always sends its own.
		return failed(nil, dataparser.Error{Description: "Batch job submission failed", Number: 2063,
			Error: errNoWorkDir, Source: "slurm_submit_batch_job()"})
	}
	if len(spec.Environment) == 0 {
		// slurmctld cannot write a batch job without an environment
		// (oracle: "batch job cannot run without an environment", 2019).
		return failed(nil, dataparser.Error{Description: "Batch job submission failed", Number: 2019,
			Error: errNoEnvironment, Source: "slurm_submit_batch_job()"})
	}
	res, err := c.cl.Submit(c.ctx, api.SubmitRequest{Spec: spec})
	if err != nil {
		return failed(nil, callError(err, "Batch job submission failed", "slurm_submit_batch_job()"))
	}
	if spec.Hold {
		// slurmctld answers a held submission with ESLURM_JOB_HELD,
		// which slurmrestd reports twice (oracle).
		held := "Job is in held state, pending scheduler release"
		warns = append(warns,
			dataparser.Warning{Description: "Job submission resulted in non-zero return code: " + held, Source: "slurm_submit_batch_job()"},
			dataparser.Warning{Description: held, Source: "slurm_submit_batch_job()"})
	}
	return reply{data: dataparser.Obj{{Key: "job_id", Val: int64(res.JobID)}, {Key: "step_id", Val: "batch"}, {Key: "job_submit_user_msg", Val: ""}}, warns: warns}
}

// updateKeys are the scontrol update keys of job_desc_msg members.
var updateKeys = map[string]string{
	"partition": "Partition", "qos": "QOS", "account": "Account", "name": "JobName", "nice": "Nice",
	"priority": "Priority", "dependency": "Dependency", "constraints": "Features", "minimum_nodes": "MinNodes",
	"comment": "Comment", "time_limit": "TimeLimit", "requeue": "Requeue",
}

// postJob is scontrol update job: the members given, as scontrol's keys;
// "hold" holds or releases.
func postJob(c *call) reply {
	id := c.r.PathValue("job_id")
	if !validJobID(id) {
		return parseFailure(emptyResults(), "Rejecting request. Failure parsing parameters", "op_handler_job")
	}
	f, ok := readBody(c.r)
	if !ok {
		return badQuery
	}
	set := map[string]string{}
	var warns []dataparser.Warning
	for k, raw := range f {
		key, known := updateKeys[k]
		switch {
		case k == "hold":
			continue
		case !known:
			warns = append(warns, dataparser.Warning{Description: unknownField("#/", k, raw, "DATA_PARSER_JOB_DESC_MSG"), Source: "#/" + k + "/"})
		case k == "requeue":
			b, _ := f.boolean(k)
			set[key] = map[bool]string{true: "1", false: "0"}[b]
		case typeName(raw) == "string":
			set[key] = f.str(k)
		default:
			set[key] = f.numStr(k)
		}
	}
	fail := func(err error) reply {
		return failed(emptyResults(), callError(err, "Job update requested failed", "slurm_update_job2()"))
	}
	if len(set) > 0 {
		if err := c.cl.UpdateJob(c.ctx, api.JobUpdateRequest{Job: id, Set: set}); err != nil {
			return fail(err)
		}
	}
	if hold, ok := f.boolean("hold"); ok {
		op := map[bool]string{true: api.OpHold, false: api.OpRelease}[hold]
		res, err := c.cl.Control(c.ctx, api.JobControlRequest{Op: op, Jobs: []string{id}})
		if err == nil {
			err = firstJobError(res)
		}
		if err != nil {
			return fail(err)
		}
	}
	return reply{data: emptyResults(), warns: warns}
}

// firstJobError is the first refusal of a control request.
func firstJobError(res api.JobControlResponse) error {
	for _, r := range res.Results {
		if r.Error != "" {
			return &api.Error{Message: r.Error}
		}
	}
	return nil
}

// deleteJob is scancel: SIGKILL (a cancel) unless ?signal= names another
// signal; per-job refusals are listed in "status" with HTTP 200, as
// slurmrestd answers.
func deleteJob(c *call) reply {
	id := c.r.PathValue("job_id")
	if !validJobID(id) {
		return parseFailure(emptyStatus(), "Rejecting request. Failure parsing parameters", "op_handler_job")
	}
	q := c.r.URL.Query()
	req := api.JobControlRequest{Op: api.OpCancel, Jobs: []string{id}}
	if s := q.Get("signal"); s != "" {
		n, ok := signalNumber(s)
		if !ok {
			return reply{data: emptyStatus(), errs: []dataparser.Error{{Description: "Unknown signal " + s, Error: "No error", Source: "#/signal/"}}}
		}
		setSignal(&req, n)
	}
	setKillFlags(&req, strings.Split(q.Get("flags"), ","))
	return c.kill(req, false)
}

// setSignal makes a cancel request send signal n (SIGKILL cancels).
func setSignal(req *api.JobControlRequest, n int) {
	if n != 9 {
		req.Op, req.Signal = api.OpSignal, n
	}
}

// setKillFlags reads slurmrestd's kill flags.
func setKillFlags(req *api.JobControlRequest, flags []string) {
	for _, fl := range flags {
		switch fl {
		case "BATCH_JOB", "KILL_JOB_BATCH":
			req.BatchOnly = true
		case "FULL_JOB", "KILL_JOB_FULL":
			req.Full = true
		}
	}
}

// kill sends a control request and lists its per-job refusals in
// "status". A refusal of the whole request is an error when whole is
// set (the bulk DELETE /jobs), else the named job's status.
func (c *call) kill(req api.JobControlRequest, whole bool) reply {
	res, err := c.cl.Control(c.ctx, req)
	if err != nil && whole {
		return failed(emptyStatus(), callError(err, "Signal request failed", "slurm_kill_jobs()"))
	}
	if err != nil {
		var ae *api.Error
		msg := err.Error()
		if asAPIError(err, &ae) {
			msg = ae.Message
		}
		res = api.JobControlResponse{Results: []api.JobResult{{Job: req.Jobs[0], Error: msg}}}
	}
	status := []any{}
	for _, r := range res.Results {
		if r.Error == "" {
			continue
		}
		jobID := dataparser.Unset()
		if n, err := strconv.ParseUint(strings.SplitN(r.Job, "_", 2)[0], 10, 32); err == nil && r.Error != "Invalid job id specified" {
			jobID = dataparser.N(n)
		}
		status = append(status, dataparser.Obj{
			{Key: "error", Val: dataparser.Obj{{Key: "string", Val: r.Error}, {Key: "code", Val: errnoOf(r.Error)}, {Key: "message", Val: r.Error}}},
			{Key: "step_id", Val: r.Job}, {Key: "job_id", Val: jobID}, {Key: "federation", Val: dataparser.Obj{{Key: "sibling", Val: ""}}},
		})
	}
	return reply{data: dataparser.Obj{{Key: "status", Val: status}}}
}

// deleteJobs is scancel of several jobs (kill_jobs_msg): the jobs named
// and the filters given, with signal and flags.
func deleteJobs(c *call) reply {
	f, ok := readBody(c.r)
	if !ok {
		return badQuery
	}
	req := api.JobControlRequest{Op: api.OpCancel, Jobs: f.strs("jobs")}
	req.Filter = api.JobFilter{User: f.str("user_name"), Partition: f.str("partition"), Name: f.str("job_name"),
		Account: f.str("account"), QOS: f.str("qos"), NodeList: f.list("nodes"), States: f.strs("job_state")}
	if len(req.Jobs) == 0 && req.Filter.User == "" && req.Filter.Partition == "" && req.Filter.Name == "" &&
		req.Filter.Account == "" && req.Filter.QOS == "" && req.Filter.NodeList == "" && len(req.Filter.States) == 0 {
		// slurmctld refuses a request that names nothing (oracle, 2173).
		return failed(emptyStatus(), dataparser.Error{Description: "Signal request failed", Number: 2173,
			Error: "Invalid signal jobs request, at least one job id or filter is required.", Source: "slurm_kill_jobs()"})
	}
	if s := f.str("signal"); s != "" {
		n, ok := signalNumber(s)
		if !ok {
			return reply{data: emptyStatus(), errs: []dataparser.Error{{Description: "Unknown signal " + s, Error: "No error", Source: "#/signal/"}}}
		}
		setSignal(&req, n)
	}
	setKillFlags(&req, strings.Split(f.list("flags"), ","))
	return c.kill(req, true)
}

// getJobsState is the jobs' states only (GET /jobs/state), of the
// job_id query's jobs or every job.
func getJobsState(c *call) reply {
	q := api.JobQuery{}
	if ids := c.r.URL.Query().Get("job_id"); ids != "" {
		q.IDs = strings.Split(ids, ",")
	}
	res, err := c.cl.Jobs(c.ctx, q)
	if err != nil {
		return failed(dataparser.Obj{{Key: "jobs", Val: []any{}}}, callError(err, "Unable to query jobs", "slurm_load_jobs()"))
	}
	sortByID(res.Jobs)
	list := []any{}
	for i := range res.Jobs {
		j := &res.Jobs[i]
		list = append(list, dataparser.Obj{{Key: "job_id", Val: j.JobIDStr}, {Key: "state", Val: dataparser.JobState(j.State)}})
	}
	return reply{data: dataparser.Obj{{Key: "jobs", Val: list}}}
}

// signalNumber reads a signal name (SIGUSR1, USR1) or number.
func signalNumber(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil && n > 0 && n < 65 {
		return n, true
	}
	name := strings.TrimPrefix(strings.ToUpper(s), "SIG")
	n, ok := signals[name]
	return n, ok
}

var signals = map[string]int{"HUP": 1, "INT": 2, "QUIT": 3, "ABRT": 6, "KILL": 9, "USR1": 10, "SEGV": 11,
	"USR2": 12, "PIPE": 13, "ALRM": 14, "TERM": 15, "CONT": 18, "STOP": 19, "TSTP": 20, "TTIN": 21, "TTOU": 22,
	"URG": 23, "XCPU": 24, "XFSZ": 25, "VTALRM": 26, "PROF": 27, "WINCH": 28}

// postNode is scontrol update node: state (DRAIN, RESUME, DOWN, ...)
// and reason.
func postNode(c *call) reply {
	name := c.r.PathValue("node_name")
	f, ok := readBody(c.r)
	if !ok {
		return badQuery
	}
	return c.updateNodes(name, f, "_update_node")
}

// postNodes is scontrol update of the nodes listed in "name".
func postNodes(c *call) reply {
	f, ok := readBody(c.r)
	if !ok {
		return badQuery
	}
	name := f.list("name")
	if name == "" {
		return failed(nil, dataparser.Error{Description: "Failure to update node (null)", Number: 2018,
			Error: "Invalid node name specified", Source: "_update_nodes"})
	}
	return c.updateNodes(name, f, "_update_nodes")
}

// updateNodes applies state and reason to nodes (a hostlist); the other
// members of update_node_msg are not Sluice's to change and come back as
// warnings.
func (c *call) updateNodes(nodes string, f fields, source string) reply {
	var warns []dataparser.Warning
	for k, raw := range f {
		if k != "name" && k != "state" && k != "reason" {
			warns = append(warns, dataparser.Warning{Description: unknownField("#/", k, raw, "DATA_PARSER_UPDATE_NODE_MSG"), Source: "#/" + k + "/"})
		}
	}
	sort.Slice(warns, func(a, b int) bool { return warns[a].Source < warns[b].Source })
	req := api.NodeUpdateRequest{Nodes: nodes, State: f.list("state"), Reason: f.str("reason")}
	if err := c.cl.UpdateNode(c.ctx, req); err != nil {
		rep := failed(nil, callError(err, "Failure to update node "+nodes, source))
		rep.warns = warns
		return rep
	}
	return reply{warns: warns}
}

// deleteNode refuses: Sluice has no dynamic nodes to delete (a
// non-administrator is refused first, as slurmctld does).
func deleteNode(c *call) reply {
	name := c.r.PathValue("node_name")
	who, err := c.cl.Ping(c.ctx)
	if err == nil && !who.Admin {
		err = &api.Error{Message: "Invalid user id"}
	}
	if err == nil {
		err = &api.Error{Message: "Requested operation not supported on this system"}
	}
	return failed(nil, callError(err, "Failure to update node "+name, "op_handler_node"))
}
