package dataparser

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// AcctJob is one run of a job as sacct lists it: its own record and its
// steps' (batch, 0, 1, ...).
type AcctJob struct {
	Job   api.AcctRecord
	Steps []api.AcctRecord
	// Group is the name of the job's group.
	Group string
}

// Accounting is the data of `sacct --json`: v0.0.42's JOB records, as
// slurmdbd stores them. What Sluice's accounting does not keep (the
// submit line, output paths, priority, CPU times of the processes) prints
// empty or 0.
func Accounting(jobs []AcctJob, cluster string, now time.Time) Obj {
	list := make([]any, 0, len(jobs))
	for i := range jobs {
		list = append(list, acctJob(&jobs[i], cluster, now))
	}
	return Obj{{"jobs", list}}
}

func acctJob(a *AcctJob, cluster string, now time.Time) Obj {
	r := &a.Job
	steps := []any{}
	for i := range a.Steps {
		steps = append(steps, acctStep(r, &a.Steps[i], now))
	}
	return Obj{
		{"account", r.Account},
		{"comment", Obj{{"administrator", ""}, {"job", ""}, {"system", ""}}},
		{"allocation_nodes", tresCount(r.AllocTRES, "node")},
		{"array", acctArray(r)},
		{"association", Obj{{"account", r.Account}, {"cluster", cluster}, {"partition", ""}, {"user", r.User}, {"id", 0}}},
		{"block", ""},
		{"cluster", cluster},
		{"constraints", ""},
		{"container", ""},
		{"derived_exit_code", ExitCode("0:0")},
		{"time", acctTime(r, now)},
		{"exit_code", ExitCode(r.ExitCode)},
		{"extra", ""},
		{"failed_node", ""},
		{"flags", acctFlags(r)},
		{"group", a.Group},
		{"het", Obj{{"job_id", 0}, {"job_offset", Unset()}}},
		{"job_id", r.JobID},
		{"name", r.Name},
		{"licenses", ""},
		{"mcs", Obj{{"label", ""}}},
		{"nodes", nodesOrNone(r.NodeList)},
		{"partition", r.Partition},
		{"hold", false},
		{"priority", N(0)},
		{"qos", r.QOS},
		{"qosreq", ""},
		{"required", acctRequired(r)},
		{"kill_request_user", ""},
		{"restart_cnt", r.Restart},
		{"reservation", Obj{{"id", 0}, {"name", r.Reservation}}},
		{"script", ""},
		{"stdin_expanded", ""},
		{"stdout_expanded", ""},
		{"stderr_expanded", ""},
		{"stdout", ""},
		{"stderr", ""},
		{"stdin", ""},
		{"state", Obj{{"current", JobState(r.State)}, {"reason", "None"}}},
		{"steps", steps},
		{"submit_line", ""},
		{"tres", Obj{{"allocated", TRESList(r.AllocTRES, true)}, {"requested", TRESList(r.ReqTRES, false)}}},
		{"used_gres", ""},
		{"user", r.User},
		{"wckey", Obj{{"wckey", ""}, {"flags", []any{}}}},
		{"working_directory", r.WorkDir},
	}
}

func acctArray(r *api.AcctRecord) Obj {
	task := Unset()
	if r.ArrayJobID != 0 && r.ArrayTaskID >= 0 {
		task = N(r.ArrayTaskID)
	}
	return Obj{
		{"job_id", r.ArrayJobID},
		{"limits", Obj{{"max", Obj{{"running", Obj{{"tasks", 0}}}}}}},
		{"task_id", task},
		{"task", ""},
	}
}

// acctTime is the job's time record: stamps as plain numbers, elapsed
// without suspended time, planned the wait between eligibility and start.
func acctTime(r *api.AcctRecord, now time.Time) Obj {
	zero := Obj{{"seconds", 0}, {"microseconds", 0}}
	limit := Minutes(r.TimeLimitSec)
	if r.TimeLimitSec == api.TimePartitionLimit {
		limit = Unset()
	}
	return Obj{
		{"elapsed", elapsed(r, now)},
		{"eligible", unix(r.Eligible)},
		{"end", unix(r.End)},
		{"planned", N(planned(r, now))},
		{"start", unix(r.Start)},
		{"submission", unix(r.Submit)},
		{"suspended", r.SuspendedSec},
		{"system", zero},
		{"limit", limit},
		{"total", zero},
		{"user", zero},
	}
}

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func elapsed(r *api.AcctRecord, now time.Time) int64 {
	if r.Start.IsZero() {
		return 0
	}
	end := r.End
	if end.IsZero() {
		end = now
	}
	return max(0, int64(end.Sub(r.Start)/time.Second)-r.SuspendedSec)
}

func planned(r *api.AcctRecord, now time.Time) int64 {
	if r.Eligible.IsZero() {
		return 0
	}
	start := r.Start
	if start.IsZero() {
		start = now
	}
	return max(0, int64(start.Sub(r.Eligible)/time.Second))
}

func acctFlags(r *api.AcctRecord) []any {
	if r.Start.IsZero() {
		return []any{}
	}
	return Strings("STARTED_ON_SCHEDULE", "START_RECEIVED")
}

func nodesOrNone(s string) string {
	if s == "" {
		return "None assigned"
	}
	return s
}

// acctRequired is the request: CPUs and memory per CPU (Sluice's records
// keep the request's total memory).
func acctRequired(r *api.AcctRecord) Obj {
	cpus := tresCount(r.ReqTRES, "cpu")
	perCPU := Unset()
	if mem := tresCount(r.ReqTRES, "mem"); cpus > 0 && mem > 0 {
		perCPU = N(mem / cpus)
	}
	return Obj{{"CPUs", cpus}, {"memory_per_cpu", perCPU}, {"memory_per_node", Unset()}}
}

// stepName is the step's name: srun's command ("true") or --job-name,
// "batch" and "extern" for those steps (sacct's JobName column).
func stepName(s *api.AcctRecord) string {
	if s.Name != "" {
		return s.Name
	}
	return s.Step
}

func acctStep(job, s *api.AcctRecord, now time.Time) Obj {
	zero := Obj{{"seconds", 0}, {"microseconds", 0}}
	energy := []any{tresEntry("energy", "", 0)}
	usage := Obj{{"max", []any{}}, {"min", []any{}}, {"average", energy}, {"total", energy}}
	names, _ := hostlist.Expand(s.NodeList)
	return Obj{
		{"time", Obj{{"elapsed", elapsed(s, now)}, {"end", N(unix(s.End))}, {"start", N(unix(s.Start))},
			{"suspended", s.SuspendedSec}, {"system", zero}, {"total", zero}, {"user", zero}}},
		{"exit_code", ExitCode(s.ExitCode)},
		{"nodes", Obj{{"count", len(names)}, {"range", s.NodeList}, {"list", Strings(names...)}}},
		{"tasks", Obj{{"count", max(s.NTasks, 1)}}},
		{"pid", ""},
		{"CPU", Obj{{"requested_frequency", Obj{{"min", N(0)}, {"max", N(0)}}}, {"governor", "0"}}},
		{"kill_request_user", ""},
		{"state", JobState(s.State)},
		{"statistics", Obj{{"CPU", Obj{{"actual_frequency", 0}}}, {"energy", Obj{{"consumed", N(0)}}}}},
		{"step", Obj{{"id", strconv.FormatUint(uint64(job.JobID), 10) + "." + s.Step}, {"name", stepName(s)}}},
		{"task", Obj{{"distribution", "Unknown"}}},
		{"tres", Obj{{"requested", usage}, {"consumed", usage}, {"allocated", stepTRES(s.AllocTRES)}}},
	}
}

// stepTRES is a step's allocation: CPUs, memory, nodes and GRES (no
// billing).
func stepTRES(s string) []any {
	out := []any{}
	for _, e := range TRESList(s, false) {
		if e.(Obj).Get("type") != "billing" {
			out = append(out, e)
		}
	}
	return out
}

// tresIDs are slurmdbd's TRES ids for the TRES Sluice counts (GRES from
// 1001 on, as slurmdbd numbers the first one a cluster registers).
var tresIDs = map[string]int{"cpu": 1, "mem": 2, "energy": 3, "node": 4, "billing": 5, "fs/disk": 6, "vmem": 7, "pages": 8}

// TRESList is a TRES string as {type, name, id, count} entries in id
// order; memory in megabytes. An allocation also lists energy (-2: not
// gathered), as slurmdbd records it.
func TRESList(s string, withEnergy bool) []any {
	type entry struct {
		id        int
		typ, name string
		count     int64
	}
	var es []entry
	gres := 1001
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		typ, name, _ := strings.Cut(k, "/")
		id, known := tresIDs[k]
		if !known {
			id, gres = gres, gres+1
		}
		if typ == "fs" || typ == "vmem" || typ == "pages" {
			typ, name = k, ""
		}
		es = append(es, entry{id, typ, name, tresNumber(k, v)})
	}
	if withEnergy && len(es) > 0 {
		es = append(es, entry{3, "energy", "", -2})
	}
	sort.SliceStable(es, func(i, j int) bool { return es[i].id < es[j].id })
	out := []any{}
	for _, e := range es {
		out = append(out, Obj{{"type", e.typ}, {"name", e.name}, {"id", e.id}, {"count", e.count}})
	}
	return out
}

func tresEntry(typ, name string, count int64) Obj {
	return Obj{{"type", typ}, {"name", name}, {"id", tresIDs[typ]}, {"count", count}}
}

// tresNumber reads a TRES count; memory may carry a unit (M, G, T).
func tresNumber(k, v string) int64 {
	mult := int64(1)
	if k == "mem" {
		switch {
		case strings.HasSuffix(v, "G"):
			mult = 1024
		case strings.HasSuffix(v, "T"):
			mult = 1024 * 1024
		}
		v = strings.TrimRight(v, "MGT")
	}
	f, _ := strconv.ParseFloat(v, 64)
	return int64(f * float64(mult))
}

func tresCount(s, name string) int64 { return tresNumber(name, tresValue(s, name)) }
