package dataparser

import (
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// Cluster is what the records need from the cluster's configuration.
type Cluster struct {
	Name string
}

// Jobs is the data of `squeue --json` and `scontrol show job --json`:
// jobs, last_backfill and last_update.
func Jobs(jobs []api.JobInfo, now, lastBackfill time.Time, c Cluster) Obj {
	list := make([]any, 0, len(jobs))
	for i := range jobs {
		list = append(list, Job(&jobs[i], c))
	}
	return Obj{{"jobs", list}, {"last_backfill", Time(lastBackfill)}, {"last_update", Time(now)}}
}

// Job is one job_info record (v0.0.42's JOB_INFO), fields in Slurm's order.
// What Sluice does not model prints Slurm's value for a job that did not
// ask for it (no burst buffer, no federation, no power management...).
func Job(j *api.JobInfo, c Cluster) Obj {
	o := Obj{
		{"account", j.Account},
		{"accrue_time", Time(j.AccrueTime)},
		{"admin_comment", ""},
		{"allocating_node", j.AllocNode},
	}
	o = append(o, jobArray(j)...)
	o = append(o, Obj{
		{"association_id", 0},
		{"batch_features", ""},
		{"batch_flag", j.Command != "" || j.StdOut != ""},
		{"batch_host", j.BatchHost},
		{"flags", jobFlags(j)},
		{"burst_buffer", ""},
		{"burst_buffer_state", ""},
		{"cluster", c.Name},
		{"cluster_features", ""},
		{"command", j.Command},
		{"comment", j.Comment},
		{"container", ""},
		{"container_id", ""},
		{"contiguous", false},
		{"core_spec", 0},
		{"thread_spec", 32766},
		{"cores_per_socket", Unset()},
		{"billable_tres", billable(j)},
		{"cpus_per_task", N(max(j.CPUsPerTask, 1))},
		{"cpu_frequency_minimum", Unset()},
		{"cpu_frequency_maximum", Unset()},
		{"cpu_frequency_governor", Unset()},
		{"cpus_per_tres", ""},
		{"cron", ""},
		{"deadline", N(0)},
		{"delay_boot", N(0)},
		{"dependency", j.Dependency},
		{"derived_exit_code", ExitCode("0:0")},
		{"eligible_time", Time(j.EligibleTime)},
		{"end_time", Time(endTime(j))},
		{"excluded_nodes", j.ExcNodes},
		{"exit_code", ExitCode(j.ExitCode)},
		{"extra", ""},
		{"failed_node", ""},
		{"features", j.Features},
		{"federation_origin", ""},
		{"federation_siblings_active", ""},
		{"federation_siblings_viable", ""},
		{"gres_detail", []any{}},
		{"group_id", j.GID},
		{"group_name", j.Group},
		{"het_job_id", N(0)},
		{"het_job_id_set", ""},
		{"het_job_offset", N(0)},
		{"job_id", j.JobID},
		{"job_resources", jobResources(j)},
		{"job_size_str", []any{}},
		{"job_state", JobState(j.State)},
		{"last_sched_evaluation", Time(j.LastSchedEval)},
		{"licenses", j.Licenses},
		{"mail_type", []any{}},
		{"mail_user", j.User},
		{"max_cpus", N(0)},
		{"max_nodes", N(pendingOnly(j, j.MaxNodes))},
		{"mcs_label", ""},
		{"memory_per_tres", ""},
		{"name", j.Name},
		{"network", ""},
		{"nodes", j.NodeList},
		{"nice", j.Nice},
		{"tasks_per_core", Infinite()},
		{"tasks_per_tres", N(0)},
		{"tasks_per_node", N(j.NTasksPerNode)},
		{"tasks_per_socket", Infinite()},
		{"tasks_per_board", N(0)},
		{"cpus", N(j.NumCPUs)},
		{"node_count", N(j.NumNodes)},
		{"tasks", tasksNum(j.NumTasks)},
		{"partition", j.Partition},
		{"prefer", ""},
	}...)
	o = append(o, jobMemory(j)...)
	return append(o, jobTail(j)...)
}

func jobTail(j *api.JobInfo) Obj {
	reason, desc := jobReason(j)
	return Obj{
		{"minimum_cpus_per_node", N(max(j.MinCPUsNode, 1))},
		{"minimum_tmp_disk_per_node", N(0)},
		{"power", Obj{{"flags", []any{}}}},
		{"preempt_time", Time(j.PreemptTime)},
		{"preemptable_time", Time(preemptable(j))},
		{"pre_sus_time", N(0)},
		{"hold", j.Hold != ""},
		{"priority", N(j.Priority)},
		{"priority_by_partition", []any{}},
		{"profile", Strings("NOT_SET")},
		{"qos", j.QOS},
		{"reboot", false},
		{"required_nodes", j.ReqNodes},
		{"required_switches", 0},
		{"requeue", j.Requeue},
		{"resize_time", N(0)},
		{"restart_cnt", j.RestartCount},
		{"resv_name", j.Reservation},
		{"scheduled_nodes", j.SchedNodes},
		{"selinux_context", ""},
		{"shared", shared(j)},
		{"sockets_per_board", 0},
		{"sockets_per_node", Unset()},
		{"start_time", Time(j.StartTime)},
		{"state_description", desc},
		{"state_reason", reason},
		{"standard_error", j.StdErr},
		{"standard_input", j.StdIn},
		{"standard_output", j.StdOut},
		{"submit_time", Time(j.SubmitTime)},
		{"suspend_time", Time(j.SuspendTime)},
		{"system_comment", ""},
		{"time_limit", Minutes(j.TimeLimitSec)},
		{"time_minimum", N(0)},
		{"threads_per_core", Unset()},
		{"tres_bind", ""},
		{"tres_freq", ""},
		{"tres_per_job", j.TresPerJob},
		{"tres_per_node", j.TresPerNode},
		{"tres_per_socket", ""},
		{"tres_per_task", j.TresPerTask},
		{"tres_req_str", j.ReqTRES},
		{"tres_alloc_str", j.AllocTRES},
		{"user_id", j.UID},
		{"user_name", j.User},
		{"maximum_switch_wait_time", 0},
		{"wckey", ""},
		{"current_working_directory", j.WorkDir},
	}
}

// jobArray is array_job_id .. array_task_string: a job outside an array
// has array_job_id 0 and an unset task id.
func jobArray(j *api.JobInfo) Obj {
	task := Unset()
	if j.ArrayJobID != 0 && j.ArrayTaskID >= 0 {
		task = N(j.ArrayTaskID)
	}
	tasks := ""
	if j.ArrayJobID != 0 && j.ArrayTaskID < 0 {
		tasks = strings.TrimSuffix(strings.TrimPrefix(j.ArrayTasks, "["), "]")
	}
	return Obj{
		{"array_job_id", N(j.ArrayJobID)},
		{"array_task_id", task},
		{"array_max_tasks", N(j.ArrayThrottle)},
		{"array_task_string", tasks},
	}
}

// jobMemory is memory_per_cpu and memory_per_node: the one the job's
// memory request is expressed in is set, the other unset.
func jobMemory(j *api.JobInfo) Obj {
	if j.MemPerCPU {
		return Obj{{"memory_per_cpu", N(j.MinMemoryMB)}, {"memory_per_node", Unset()}}
	}
	return Obj{{"memory_per_cpu", Unset()}, {"memory_per_node", N(j.MinMemoryMB)}}
}

// JobState is job_state: the base state, then its flags ("RUNNING",
// "COMPLETING"), from Sluice's state string ("CANCELLED by 0" keeps its
// first word).
func JobState(s string) []any {
	s, _, _ = strings.Cut(s, " ")
	if s == "" {
		return []any{}
	}
	return Strings(strings.Split(s, "+")...)
}

// jobReason splits squeue's reason text into state_reason and
// state_description: "ReqNodeNotAvail, May be reserved for other job" has
// reason ReqNodeNotAvail and the whole sentence as description.
func jobReason(j *api.JobInfo) (reason, desc string) {
	reason, desc = j.Reason, j.StateDesc
	if head, _, ok := strings.Cut(reason, ", "); ok {
		if desc == "" {
			desc = reason
		}
		reason = head
	}
	if reason == "" {
		reason = "None"
	}
	return reason, desc
}

func pendingOnly(j *api.JobInfo, v int) int {
	if strings.HasPrefix(j.State, "PENDING") {
		return v
	}
	return 0
}

// endTime is when the job ended or is expected to: a started job's
// start plus its limit, or plus 365 days without one, as slurmctld does.
func endTime(j *api.JobInfo) time.Time {
	if !j.EndTime.IsZero() || j.StartTime.IsZero() {
		return j.EndTime
	}
	if j.TimeLimitSec < 0 {
		return j.StartTime.Add(365 * 24 * time.Hour)
	}
	return j.StartTime.Add(time.Duration(j.TimeLimitSec) * time.Second)
}

// preemptable is when the job may be preempted: PreemptExemptTime after
// its start (the start itself without preemption configured).
func preemptable(j *api.JobInfo) time.Time {
	if !j.PreemptEligibleTime.IsZero() {
		return j.PreemptEligibleTime
	}
	return j.StartTime
}

// shared is the job's --exclusive/--oversubscribe as Slurm lists it: an
// exclusive job shares with "none".
func shared(j *api.JobInfo) []any {
	if j.Exclusive {
		return Strings("none")
	}
	return []any{}
}

// billable is billable_tres: the billing TRES of the allocation, unset
// before the job has one.
func billable(j *api.JobInfo) NumF {
	if j.AllocTRES == "" {
		return NumF{}
	}
	v, _ := strconv.ParseFloat(tresValue(j.AllocTRES, "billing"), 64)
	return NF(v)
}

// tresValue returns name's value in a TRES string ("cpu=4,mem=4000M").
func tresValue(tres, name string) string {
	for _, kv := range strings.Split(tres, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// jobFlags lists the job flags Sluice knows: JOB_WAS_RUNNING once started.
func jobFlags(j *api.JobInfo) []any {
	if !j.StartTime.IsZero() && !strings.HasPrefix(j.State, "PENDING") {
		return Strings("JOB_WAS_RUNNING")
	}
	return []any{}
}

// ExitCode is a process exit record from "code:signal": status SUCCESS,
// ERROR (non-zero code) or SIGNALED, the return code, and the signal.
func ExitCode(s string) Obj {
	code, sig := 0, 0
	if a, b, ok := strings.Cut(s, ":"); ok {
		code, _ = strconv.Atoi(a)
		sig, _ = strconv.Atoi(b)
	}
	status, rc, signal := "SUCCESS", N(code), Obj{{"id", Unset()}, {"name", ""}}
	switch {
	case sig != 0:
		// A signalled process has no return code: unset (oracle, sacct
		// --json of a job killed by SIGKILL and of cancelled batch steps).
		status, rc = "SIGNALED", Unset()
		signal = Obj{{"id", N(sig)}, {"name", signalName(sig)}}
	case code != 0:
		status = "ERROR"
	}
	return Obj{{"status", Strings(status)}, {"return_code", rc}, {"signal", signal}}
}

var signalNames = map[int]string{1: "HUP", 2: "INT", 3: "QUIT", 6: "ABRT", 9: "KILL", 10: "USR1", 12: "USR2", 15: "TERM", 18: "CONT", 19: "STOP"}

func signalName(n int) string { return signalNames[n] }

// jobResources is job_resources: null before an allocation; Sluice does
// not track which cores of a node a job holds, so each node's entry has
// its CPU count and memory without the per-core map (sockets is empty).
func jobResources(j *api.JobInfo) any {
	if j.NodeList == "" || j.NumNodes == 0 {
		return nil
	}
	return Obj{
		{"select_type", Strings("CORE")},
		{"nodes", Obj{
			{"count", j.NumNodes},
			{"select_type", Strings("ONE_ROW")},
			{"list", j.NodeList},
			{"whole", j.Exclusive},
			{"allocation", allocation(j)},
		}},
		{"cpus", j.NumCPUs},
		{"threads_per_core", Unset()},
	}
}

// allocation is job_resources.nodes.allocation: per node of the job, its
// index, name, CPUs and memory as slurmctld lists them ("used" is 0 there
// too).
func allocation(j *api.JobInfo) []any {
	names, err := hostlist.Expand(j.NodeList)
	if err != nil || len(names) == 0 {
		return []any{}
	}
	cpus := perNodeCPUs(j.CPUsPerNode, len(names), j.NumCPUs)
	out := make([]any, 0, len(names))
	for i, n := range names {
		out = append(out, Obj{{"index", i}, {"name", n}, {"cpus", Obj{{"count", cpus[i]}, {"used", 0}}},
			{"memory", Obj{{"used", 0}, {"allocated", nodeMemory(j, cpus[i], len(names))}}}, {"sockets", []any{}}})
	}
	return out
}

// perNodeCPUs expands SLURM_JOB_CPUS_PER_NODE's form ("2(x3),1") to n
// counts; without it the CPUs are spread evenly.
func perNodeCPUs(s string, n, total int) []int {
	var out []int
	for _, part := range strings.Split(s, ",") {
		c, rep, _ := strings.Cut(strings.TrimSuffix(part, ")"), "(x")
		v, err := strconv.Atoi(c)
		if err != nil {
			break
		}
		r := 1
		if rep != "" {
			if r, err = strconv.Atoi(rep); err != nil {
				break
			}
		}
		for ; r > 0; r-- {
			out = append(out, v)
		}
	}
	if len(out) != n {
		out = make([]int, n)
		for i := range out {
			out[i] = total / n
		}
	}
	return out
}

// nodeMemory is the memory (MB) the job holds on a node of cpus CPUs:
// --mem-per-cpu times the CPUs, --mem, else the allocation's share.
func nodeMemory(j *api.JobInfo, cpus, nodes int) int64 {
	switch {
	case j.MinMemoryMB > 0 && j.MemPerCPU:
		return j.MinMemoryMB * int64(cpus)
	case j.MinMemoryMB > 0:
		return j.MinMemoryMB
	}
	return tresCount(j.AllocTRES, "mem") / int64(nodes)
}

// tasksNum is "tasks": unset for a job that ended pending without -n,
// whose NumTasks scontrol shows as N/A (the controller sends 0).
func tasksNum(n int) Num {
	if n <= 0 {
		return Unset()
	}
	return N(n)
}
