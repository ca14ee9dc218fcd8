package metrics

import (
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-hpc/sluice/internal/api"
)

// jobStates are the states every scrape reports (0 included), so that a
// state's series does not vanish when no job is in it.
var jobStates = []string{"pending", "running", "suspended", "completing", "completed", "cancelled",
	"failed", "timeout", "node_fail", "preempted", "out_of_memory", "boot_fail", "deadline"}

// countBy counts jobs by key, starting from zero for every key of base.
func countBy(jobs []api.JobInfo, base []string, key func(*api.JobInfo) string) map[string]float64 {
	m := map[string]float64{}
	for _, k := range base {
		m[k] = 0
	}
	for i := range jobs {
		m[key(&jobs[i])]++
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func jobState(j *api.JobInfo) string { return baseState(j.State) }

func running(j *api.JobInfo) bool {
	s := jobState(j)
	return s == "running" || s == "suspended" || s == "completing"
}

// jobMetrics is /metrics/jobs: jobs by state, pending jobs by reason, and
// what running jobs hold.
func jobMetrics(s *Snapshot) []prometheus.Metric {
	var out []prometheus.Metric
	out = append(out, gauge("slurm_jobs", "Jobs the controller holds.", float64(len(s.Jobs))))
	byState := countBy(s.Jobs, jobStates, jobState)
	for _, st := range sortedKeys(byState) {
		out = append(out, gauge("slurm_jobs_state", "Jobs by state.", byState[st], "state", st))
	}
	reasons := map[string]float64{}
	var cpus, mem, nodes, gpus float64
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if jobState(j) == "pending" {
			r, _, _ := strings.Cut(j.Reason, ",")
			reasons[r]++
		}
		if running(j) {
			cpus += float64(j.NumCPUs)
			nodes += float64(j.NumNodes)
			mem += tres(j.AllocTRES, "mem")
			gpus += tres(j.AllocTRES, "gres/gpu")
		}
	}
	for _, r := range sortedKeys(reasons) {
		out = append(out, gauge("slurm_jobs_pending_reason", "Pending jobs by reason.", reasons[r], "reason", r))
	}
	return append(out,
		gauge("slurm_jobs_cpus_alloc", "CPUs held by running jobs.", cpus),
		gauge("slurm_jobs_memory_alloc_bytes", "Memory held by running jobs.", mem*1024*1024),
		gauge("slurm_jobs_nodes_alloc", "Nodes held by running jobs (a shared node counts once per job).", nodes),
		gauge("slurm_jobs_gpus_alloc", "GPUs held by running jobs.", gpus),
	)
}

// userAccountMetrics is /metrics/jobs-users-accts: jobs and CPUs by user
// and by account.
func userAccountMetrics(s *Snapshot) []prometheus.Metric {
	type key struct{ who, state string }
	users, accts := map[key]float64{}, map[key]float64{}
	ucpu, acpu := map[string]float64{}, map[string]float64{}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		users[key{j.User, jobState(j)}]++
		accts[key{j.Account, jobState(j)}]++
		if running(j) {
			ucpu[j.User] += float64(j.NumCPUs)
			acpu[j.Account] += float64(j.NumCPUs)
		}
	}
	var out []prometheus.Metric
	for _, k := range sortedPairs(users) {
		out = append(out, gauge("slurm_user_jobs", "Jobs by user and state.", users[k], "username", k.who, "state", k.state))
	}
	for _, u := range sortedKeys(ucpu) {
		out = append(out, gauge("slurm_user_cpus_alloc", "CPUs held by a user's running jobs.", ucpu[u], "username", u))
	}
	for _, k := range sortedPairs(accts) {
		out = append(out, gauge("slurm_account_jobs", "Jobs by account and state.", accts[k], "account", k.who, "state", k.state))
	}
	for _, a := range sortedKeys(acpu) {
		out = append(out, gauge("slurm_account_cpus_alloc", "CPUs held by an account's running jobs.", acpu[a], "account", a))
	}
	return out
}

func sortedPairs[K interface{ ~struct{ who, state string } }](m map[K]float64) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := struct{ who, state string }(keys[i]), struct{ who, state string }(keys[j])
		return a.who < b.who || a.who == b.who && a.state < b.state
	})
	return keys
}

// nodeMetrics is /metrics/nodes: nodes by state, and each node's CPUs,
// memory and GPUs, total and allocated.
func nodeMetrics(s *Snapshot) []prometheus.Metric {
	states := map[string]float64{"idle": 0, "mixed": 0, "allocated": 0, "down": 0, "drain": 0}
	var out []prometheus.Metric
	for i := range s.Nodes {
		n := &s.Nodes[i]
		states[baseState(n.State)]++
		if strings.Contains(n.State, "DRAIN") {
			states["drain"]++
		}
		gt, gu := gresCount(n.Gres), gresCount(n.GresUsed)
		out = append(out,
			gauge("slurm_node_cpus", "A node's CPUs.", float64(n.CPUs), "node", n.Name),
			gauge("slurm_node_cpus_alloc", "A node's allocated CPUs.", float64(n.AllocCPUs), "node", n.Name),
			gauge("slurm_node_memory_bytes", "A node's memory (RealMemory).", float64(n.RealMemory)*1024*1024, "node", n.Name),
			gauge("slurm_node_memory_alloc_bytes", "A node's allocated memory.", float64(n.AllocMem)*1024*1024, "node", n.Name),
			gauge("slurm_node_gpus", "A node's GPUs.", gt, "node", n.Name),
			gauge("slurm_node_gpus_alloc", "A node's allocated GPUs.", gu, "node", n.Name),
		)
	}
	for _, st := range sortedKeys(states) {
		out = append(out, gauge("slurm_nodes_state", "Nodes by base state (drain: nodes draining or drained).", states[st], "state", st))
	}
	return append(out, gauge("slurm_nodes", "Nodes in the cluster.", float64(len(s.Nodes))))
}

// partitionMetrics is /metrics/partitions: jobs by partition and state,
// and each partition's nodes and CPUs, total and allocated.
func partitionMetrics(s *Snapshot) []prometheus.Metric {
	type key struct{ who, state string }
	jobs := map[key]float64{}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		for _, p := range strings.Split(j.Partition, ",") {
			jobs[key{p, jobState(j)}]++
		}
	}
	alloc := map[string]float64{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		for _, p := range n.Partitions {
			alloc[p] += float64(n.AllocCPUs)
		}
	}
	var out []prometheus.Metric
	for _, k := range sortedPairs(jobs) {
		out = append(out, gauge("slurm_partition_jobs", "Jobs by partition and state.", jobs[k], "partition", k.who, "state", k.state))
	}
	for i := range s.Partitions {
		p := &s.Partitions[i]
		out = append(out,
			gauge("slurm_partition_nodes", "A partition's nodes.", float64(p.TotalNodes), "partition", p.Name),
			gauge("slurm_partition_cpus", "A partition's CPUs.", float64(p.TotalCPUs), "partition", p.Name),
			gauge("slurm_partition_cpus_alloc", "CPUs allocated on a partition's nodes.", alloc[p.Name], "partition", p.Name),
		)
	}
	return out
}

// schedulerMetrics is /metrics/scheduler: sdiag's main and backfill
// scheduler statistics and job counters.
func schedulerMetrics(s *Snapshot) []prometheus.Metric {
	d := &s.Diag
	mean := func(total int64, n int) float64 {
		if n == 0 {
			return 0
		}
		return float64(total) / float64(n)
	}
	return []prometheus.Metric{
		counter("slurm_sched_cycles_total", "Main scheduler cycles since the statistics were reset.", float64(d.Cycles)),
		gauge("slurm_sched_cycle_last_microseconds", "The last main scheduler cycle's duration.", float64(d.LastCycleUS)),
		gauge("slurm_sched_cycle_max_microseconds", "The longest main scheduler cycle.", float64(d.MaxCycleUS)),
		gauge("slurm_sched_cycle_mean_microseconds", "The mean main scheduler cycle.", mean(d.TotalCycleUS, d.Cycles)),
		gauge("slurm_sched_cycle_mean_depth", "Jobs looked at per main scheduler cycle.", mean(d.TotalDepth, d.Cycles)),
		gauge("slurm_sched_cycles_per_minute", "Main scheduler cycles per minute.", float64(d.CyclesPerMin)),
		gauge("slurm_sched_queue_length", "Jobs in the last main scheduler cycle's queue.", float64(d.LastQueueLen)),
		counter("slurm_backfill_cycles_total", "Backfill cycles since the statistics were reset.", float64(d.BfCycles)),
		gauge("slurm_backfill_cycle_last_microseconds", "The last backfill cycle's duration.", float64(d.BfLastCycleUS)),
		gauge("slurm_backfill_cycle_max_microseconds", "The longest backfill cycle.", float64(d.BfMaxCycleUS)),
		gauge("slurm_backfill_cycle_mean_microseconds", "The mean backfill cycle.", mean(d.BfTotalCycleUS, d.BfCycles)),
		gauge("slurm_backfill_last_depth", "Jobs looked at in the last backfill cycle.", float64(d.BfLastDepth)),
		gauge("slurm_backfill_queue_length", "Jobs in the last backfill cycle's queue.", float64(d.BfLastQueueLen)),
		counter("slurm_backfilled_jobs_total", "Jobs started by backfill since the controller started.", float64(d.BfTotalJobs)),
		counter("slurm_jobs_submitted_total", "Jobs submitted since the statistics were reset.", float64(d.JobsSubmitted)),
		counter("slurm_jobs_started_total", "Jobs started since the statistics were reset.", float64(d.JobsStarted)),
		counter("slurm_jobs_completed_total", "Jobs completed since the statistics were reset.", float64(d.JobsCompleted)),
		counter("slurm_jobs_canceled_total", "Jobs cancelled since the statistics were reset.", float64(d.JobsCanceled)),
		counter("slurm_jobs_failed_total", "Jobs failed since the statistics were reset.", float64(d.JobsFailed)),
		gauge("slurm_server_threads", "Requests the controller is serving.", float64(d.ServerThreads)),
		gauge("slurm_agent_queue_size", "Calls to node agents waiting.", float64(d.AgentQueue)),
	}
}

// tres reads a TRES count from "cpu=4,mem=4000M,gres/gpu=2" (memory in MB).
func tres(s, name string) float64 {
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k != name {
			continue
		}
		mult := 1.0
		switch {
		case strings.HasSuffix(v, "G"):
			mult = 1024
		case strings.HasSuffix(v, "T"):
			mult = 1024 * 1024
		}
		f, _ := strconv.ParseFloat(strings.TrimRight(v, "MGT"), 64)
		return f * mult
	}
	return 0
}

// gresCount is the GPU count of a GRES string ("gpu:4", "gpu:a100:2(IDX:0-1)").
func gresCount(s string) float64 {
	var n float64
	for _, g := range strings.Split(s, ",") {
		g, _, _ = strings.Cut(g, "(")
		f := strings.Split(g, ":")
		if f[0] != "gpu" || len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[len(f)-1], 64)
		n += v
	}
	return n
}
