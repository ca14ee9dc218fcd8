// Package metrics renders the controller's Prometheus metrics: Slurm
// 25.11's OpenMetrics endpoints (/metrics/jobs, /metrics/nodes,
// /metrics/partitions, /metrics/scheduler, /metrics/jobs-users-accts)
// with Slurm's metric names where Slurm defines them, and Sluice's own
// (prefixed sluice_) for what Slurm's lack: jobs by pending reason, GPUs,
// RPC counts by message type, submission latency.
//
// Each endpoint is built from the records the commands see (squeue's
// jobs, sinfo's nodes and partitions, sdiag's statistics), so a metric
// and a command never disagree. The package does no I/O of its own: the
// controller hands it a Source.
package metrics

import (
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/tres"
)

// Snapshot is what one scrape reads.
type Snapshot struct {
	Jobs       []api.JobInfo
	Nodes      []api.NodeRecord
	Partitions []api.PartitionRecord
	Sdiag      api.SdiagResponse
}

// Source takes a snapshot; parts is the set of parts the endpoint needs
// ("jobs", "nodes", "partitions", "sdiag") so that a scrape reads no more
// than it prints.
type Source func(r *http.Request, parts map[string]bool) (Snapshot, error)

// Endpoints are the paths Slurm 25.11 serves, each with what it reads.
var Endpoints = []struct {
	Path  string
	Parts []string
	build func(*builder, *Snapshot)
}{
	{"/metrics/jobs", []string{"jobs"}, (*builder).jobs},
	{"/metrics/nodes", []string{"nodes"}, (*builder).nodes},
	{"/metrics/partitions", []string{"jobs", "partitions", "nodes"}, (*builder).partitions},
	{"/metrics/scheduler", []string{"sdiag"}, (*builder).scheduler},
	{"/metrics/jobs-users-accts", []string{"jobs"}, (*builder).usersAccounts},
}

// Register adds the endpoints and the /metrics index to mux; extra
// collectors (the controller's submission latency histogram) are served
// with /metrics/scheduler.
func Register(mux *http.ServeMux, src Source, extra ...prometheus.Collector) {
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		// Slurm's /metrics lists the endpoints.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, e := range Endpoints {
			w.Write([]byte(e.Path + "\n"))
		}
	})
	for _, e := range Endpoints {
		parts := map[string]bool{}
		for _, p := range e.Parts {
			parts[p] = true
		}
		build := e.build
		withExtra := e.Path == "/metrics/scheduler"
		mux.HandleFunc("GET "+e.Path, func(w http.ResponseWriter, r *http.Request) {
			snap, err := src(r, parts)
			if err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			b := &builder{}
			build(b, &snap)
			reg := prometheus.NewRegistry()
			reg.MustRegister(b)
			if withExtra {
				for _, c := range extra {
					reg.MustRegister(c)
				}
			}
			promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
		})
	}
}

// builder collects one scrape's samples; as a prometheus.Collector it
// hands them over.
type builder struct {
	samples []prometheus.Metric
	seen    map[string]*prometheus.Desc
}

func (b *builder) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(b, ch) }

func (b *builder) Collect(ch chan<- prometheus.Metric) {
	for _, m := range b.samples {
		ch <- m
	}
}

// gauge adds one sample; labels alternate name and value.
func (b *builder) gauge(name, help string, v float64, labels ...string) {
	b.add(name, help, prometheus.GaugeValue, v, labels...)
}

func (b *builder) counter(name, help string, v float64, labels ...string) {
	b.add(name, help, prometheus.CounterValue, v, labels...)
}

func (b *builder) add(name, help string, t prometheus.ValueType, v float64, labels ...string) {
	var names, values []string
	for i := 0; i+1 < len(labels); i += 2 {
		names, values = append(names, labels[i]), append(values, labels[i+1])
	}
	if b.seen == nil {
		b.seen = map[string]*prometheus.Desc{}
	}
	d, ok := b.seen[name]
	if !ok {
		d = prometheus.NewDesc(name, help, names, nil)
		b.seen[name] = d
	}
	b.samples = append(b.samples, prometheus.MustNewConstMetric(d, t, v, values...))
}

// jobStates are the states counted for each job metric family, with
// Slurm's metric suffix.
var jobStates = []struct{ state, suffix string }{
	{"PENDING", "pending"}, {"RUNNING", "running"}, {"SUSPENDED", "suspended"}, {"COMPLETING", "completing"},
	{"CONFIGURING", "configuring"}, {"COMPLETED", "completed"}, {"CANCELLED", "cancelled"}, {"FAILED", "failed"},
	{"TIMEOUT", "timeout"}, {"NODE_FAIL", "node_failed"}, {"PREEMPTED", "preempted"}, {"BOOT_FAIL", "bootfail"},
	{"DEADLINE", "deadline"}, {"OUT_OF_MEMORY", "outofmemory"}, {"REQUEUED", "requeued"},
}

// jobCounts are one group's job counts and allocations.
type jobCounts struct {
	total, hold              int
	byState                  map[string]int
	cpus, memBytes, nodes    int64
	gpus                     int64
	maxNodes, maxNodesNoHold int
	minNodes, minNodesNoHold int
	pendingByReason          map[string]int
}

func (c *jobCounts) add(j *api.JobInfo) {
	if c.byState == nil {
		c.byState, c.pendingByReason = map[string]int{}, map[string]int{}
	}
	c.total++
	state := strings.Fields(j.State + " ")[0]
	c.byState[state]++
	held := j.Hold != ""
	if held {
		c.hold++
	}
	if state == "PENDING" {
		c.pendingByReason[j.Reason]++
		c.maxNodes, c.minNodes = max(c.maxNodes, j.MaxNodes), max(c.minNodes, j.NumNodes)
		if !held {
			c.maxNodesNoHold, c.minNodesNoHold = max(c.maxNodesNoHold, j.MaxNodes), max(c.minNodesNoHold, j.NumNodes)
		}
	}
	if state == "RUNNING" || state == "COMPLETING" || state == "SUSPENDED" {
		v, _ := tres.Parse(j.AllocTRES)
		c.cpus += v.Count("cpu")
		c.memBytes += v.Count("mem") << 20
		c.nodes += v.Count("node")
		c.gpus += v.Count("gres/gpu")
	}
}

// emit writes a group's metrics as prefix_jobs, prefix_jobs_STATE, ...
func (c *jobCounts) emit(b *builder, prefix, what string, labels ...string) {
	b.gauge(prefix+"jobs", "Total number of jobs"+what, float64(c.total), labels...)
	for _, s := range jobStates {
		b.gauge(prefix+"jobs_"+s.suffix, "Number of jobs in "+s.state+" state"+what, float64(c.byState[s.state]), labels...)
	}
	b.gauge(prefix+"jobs_hold", "Number of held jobs"+what, float64(c.hold), labels...)
	b.gauge(prefix+"jobs_cpus_alloc", "CPUs allocated to running jobs"+what, float64(c.cpus), labels...)
	b.gauge(prefix+"jobs_memory_alloc", "Memory (bytes) allocated to running jobs"+what, float64(c.memBytes), labels...)
	b.gauge(prefix+"jobs_nodes_alloc", "Nodes allocated to running jobs"+what, float64(c.nodes), labels...)
}

func (b *builder) jobs(s *Snapshot) {
	var all jobCounts
	for i := range s.Jobs {
		all.add(&s.Jobs[i])
	}
	all.emit(b, "slurm_", "")
	b.gauge("sluice_jobs_gpus_alloc", "GPUs allocated to running jobs", float64(all.gpus))
	for _, r := range sortedKeys(all.pendingByReason) {
		b.gauge("sluice_jobs_pending_reason", "Pending jobs by the reason squeue shows", float64(all.pendingByReason[r]), "reason", r)
	}
}

func (b *builder) usersAccounts(s *Snapshot) {
	users, accounts := map[string]*jobCounts{}, map[string]*jobCounts{}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		group(users, j.User).add(j)
		group(accounts, j.Account).add(j)
	}
	for _, u := range sortedKeys(users) {
		users[u].emit(b, "slurm_user_", " of the user", "username", u)
	}
	for _, a := range sortedKeys(accounts) {
		accounts[a].emit(b, "slurm_account_", " of the account", "account", a)
	}
}

func group(m map[string]*jobCounts, k string) *jobCounts {
	if m[k] == nil {
		m[k] = &jobCounts{}
	}
	return m[k]
}

// nodeStates are the node metric suffixes and the base states (or flag)
// they count.
var nodeStates = []struct{ suffix, help string }{
	{"idle", "Idle"}, {"alloc", "Allocated"}, {"mixed", "Mixed"}, {"down", "Down"}, {"future", "Future"},
	{"unknown", "Unknown"}, {"drain", "Drain"}, {"completing", "Completing"}, {"maint", "Maintenance"},
	{"resv", "Reserved"}, {"noresp", "Not responding"}, {"fail", "Fail"},
}

// nodeStateSet is the set of suffixes a node's state counts under.
func nodeStateSet(n *api.NodeRecord) map[string]bool {
	set := map[string]bool{}
	parts := strings.Split(n.State, "+")
	switch parts[0] {
	case "IDLE":
		set["idle"] = true
	case "ALLOCATED":
		set["alloc"] = true
	case "MIXED":
		set["mixed"] = true
	case "DOWN":
		set["down"] = true
	case "FUTURE":
		set["future"] = true
	default:
		set["unknown"] = true
	}
	for _, f := range parts[1:] {
		switch f {
		case "DRAIN", "DRAINING", "DRAINED":
			set["drain"] = true
		case "COMPLETING":
			set["completing"] = true
		case "MAINTENANCE":
			set["maint"] = true
		case "RESERVED":
			set["resv"] = true
		case "NOT_RESPONDING":
			set["noresp"] = true
		case "FAIL":
			set["fail"] = true
		}
	}
	return set
}

func (b *builder) nodes(s *Snapshot) {
	counts := map[string]int{}
	for i := range s.Nodes {
		for st := range nodeStateSet(&s.Nodes[i]) {
			counts[st]++
		}
	}
	b.gauge("slurm_nodes", "Total number of nodes", float64(len(s.Nodes)))
	for _, st := range nodeStates {
		b.gauge("slurm_nodes_"+st.suffix, "Number of nodes in "+st.help+" state", float64(counts[st.suffix]))
	}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		b.gauge("slurm_node_cpus", "CPUs on the node", float64(n.CPUs), "node", n.Name)
		b.gauge("slurm_node_cpus_alloc", "CPUs allocated on the node", float64(n.AllocCPUs), "node", n.Name)
		b.gauge("slurm_node_cpus_idle", "CPUs idle on the node", float64(max(n.CPUs-n.AllocCPUs, 0)), "node", n.Name)
		b.gauge("slurm_node_memory_bytes", "Memory on the node (bytes)", float64(n.RealMemory<<20), "node", n.Name)
		b.gauge("slurm_node_memory_alloc_bytes", "Memory allocated on the node (bytes)", float64(n.AllocMem<<20), "node", n.Name)
		if n.LoadKnown {
			b.gauge("slurm_node_memory_free_bytes", "Free memory the node reports (bytes)", float64(n.FreeMem<<20), "node", n.Name)
		}
		gpus, used := gresCount(n.Gres), gresCount(n.GresUsed)
		b.gauge("sluice_node_gpus", "GPUs on the node", float64(gpus), "node", n.Name)
		b.gauge("sluice_node_gpus_alloc", "GPUs allocated on the node", float64(used), "node", n.Name)
	}
}

// gresCount sums the gpu counts of a Gres string ("gpu:4", "gpu:a100:2(IDX:0-1),gpu:l4:1").
func gresCount(s string) int64 {
	var n int64
	for _, item := range strings.Split(s, ",") {
		item, _, _ = strings.Cut(item, "(")
		f := strings.Split(item, ":")
		if f[0] != "gpu" || len(f) < 2 {
			continue
		}
		var c int64
		for _, ch := range f[len(f)-1] {
			if ch < '0' || ch > '9' {
				c = 0
				break
			}
			c = c*10 + int64(ch-'0')
		}
		n += c
	}
	return n
}

func (b *builder) partitions(s *Snapshot) {
	b.gauge("slurm_partitions", "Total number of partitions", float64(len(s.Partitions)))
	byPart := map[string]*jobCounts{}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		for _, p := range strings.Split(j.Partition, ",") {
			group(byPart, p).add(j)
		}
	}
	nodes := map[string]*api.NodeRecord{}
	for i := range s.Nodes {
		nodes[s.Nodes[i].Name] = &s.Nodes[i]
	}
	for i := range s.Partitions {
		p := &s.Partitions[i]
		c := group(byPart, p.Name)
		c.emit(b, "slurm_partition_", " in the partition", "partition", p.Name)
		b.gauge("slurm_partition_jobs_max_job_nodes", "Most nodes asked by a pending job of the partition", float64(c.maxNodes), "partition", p.Name)
		b.gauge("slurm_partition_jobs_max_job_nodes_nohold", "Most nodes asked by a pending job of the partition, held jobs left out", float64(c.maxNodesNoHold), "partition", p.Name)
		b.gauge("slurm_partition_jobs_min_job_nodes", "Largest minimum node count of a pending job of the partition", float64(c.minNodes), "partition", p.Name)
		b.gauge("slurm_partition_jobs_min_job_nodes_nohold", "Largest minimum node count of a pending job of the partition, held jobs left out", float64(c.minNodesNoHold), "partition", p.Name)
		var cpus, alloc, mem, memAlloc int64
		for _, name := range p.NodeNames {
			if n := nodes[name]; n != nil {
				cpus, alloc = cpus+int64(n.CPUs), alloc+int64(n.AllocCPUs)
				mem, memAlloc = mem+n.RealMemory<<20, memAlloc+n.AllocMem<<20
			}
		}
		b.gauge("slurm_partition_nodes", "Nodes of the partition", float64(len(p.NodeNames)), "partition", p.Name)
		b.gauge("slurm_partition_nodes_cpus", "CPUs of the partition's nodes", float64(cpus), "partition", p.Name)
		b.gauge("slurm_partition_nodes_cpus_alloc", "CPUs allocated on the partition's nodes", float64(alloc), "partition", p.Name)
		b.gauge("slurm_partition_nodes_mem", "Memory of the partition's nodes (bytes)", float64(mem), "partition", p.Name)
		b.gauge("slurm_partition_nodes_mem_alloc", "Memory allocated on the partition's nodes (bytes)", float64(memAlloc), "partition", p.Name)
	}
}

func (b *builder) scheduler(s *Snapshot) {
	d := &s.Sdiag
	mean := func(total int64, n int) float64 {
		if n == 0 {
			return 0
		}
		return float64(total) / float64(n)
	}
	b.counter("slurm_sched_cycle_cnt", "Main scheduler cycles", float64(d.Cycles))
	b.gauge("slurm_sched_cycle_last", "Last main scheduler cycle (microseconds)", float64(d.LastCycleUS))
	b.gauge("slurm_sched_cycle_max", "Longest main scheduler cycle (microseconds)", float64(d.MaxCycleUS))
	b.gauge("slurm_sched_mean_cycle", "Mean main scheduler cycle (microseconds)", mean(d.TotalCycleUS, d.Cycles))
	b.gauge("slurm_sched_mean_depth_cycle", "Mean jobs examined per main scheduler cycle", mean(d.TotalDepth, d.Cycles))
	b.gauge("slurm_schedule_queue_len", "Jobs in the last main scheduler cycle's queue", float64(d.LastQueueLen))
	b.counter("slurm_bf_cycle_cnt", "Backfill cycles", float64(d.BfCycles))
	b.gauge("slurm_bf_cycle_last", "Last backfill cycle (microseconds)", float64(d.BfLastCycleUS))
	b.gauge("slurm_bf_cycle_max", "Longest backfill cycle (microseconds)", float64(d.BfMaxCycleUS))
	b.gauge("slurm_bf_mean_cycle", "Mean backfill cycle (microseconds)", mean(d.BfTotalCycleUS, d.BfCycles))
	b.gauge("slurm_bf_depth_mean", "Mean jobs examined per backfill cycle", mean(d.BfTotalDepth, d.BfCycles))
	b.gauge("slurm_bf_queue_len", "Jobs in the last backfill cycle's queue", float64(d.BfLastQueueLen))
	// Sluice's backfill plan is computed within the controller's loop:
	// it is never running while a scrape is answered.
	b.gauge("slurm_bf_active", "Whether the backfill scheduler is running", 0)
	b.counter("slurm_backfilled_jobs", "Jobs started by backfill since the controller started", float64(d.BfTotalJobs))
	b.gauge("slurm_server_thread_cnt", "Requests being served", float64(d.ServerThreads))
	b.gauge("slurm_agent_queue_size", "Calls to node agents waiting", float64(d.AgentQueue))
	for _, c := range []struct {
		name string
		v    int
	}{{"submitted", d.JobsSubmitted}, {"started", d.JobsStarted}, {"completed", d.JobsCompleted},
		{"canceled", d.JobsCanceled}, {"failed", d.JobsFailed}} {
		b.counter("slurm_sdiag_jobs_"+c.name, "Jobs "+c.name+" since the statistics were reset", float64(c.v))
	}
	for _, r := range d.RPCTypes {
		b.counter("sluice_rpc_count", "Requests served by message type (sdiag)", float64(r.Count), "type", r.Name)
		b.counter("sluice_rpc_time_seconds", "Time spent serving requests by message type (sdiag)", float64(r.TotalUS)/1e6, "type", r.Name)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
