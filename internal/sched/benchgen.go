package sched

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sluice-hpc/sluice/internal/priority"
)

// BenchSpec describes a generated scheduling workload: a mixed CPU/GPU
// cluster of Nodes nodes, busy with running jobs, and a queue of Jobs
// pending jobs of mixed sizes, all drawn from a fixed Seed. It is what
// BenchmarkCycle and `sluice bench sched` measure.
type BenchSpec struct {
	Nodes int
	Jobs  int
	Seed  uint64
}

// BenchWorkload is a generated workload ready to run full cycles on: the
// state, the configuration, the multifactor priority inputs of every
// pending job and the cycle's time.
type BenchWorkload struct {
	State  *State
	Config Config
	Now    time.Time
	// Running is the number of jobs running when the queue was generated.
	Running int

	pcfg    priority.Config
	pcl     priority.Cluster
	tree    *priority.Tree
	calc    priority.Calculator
	pjobs   []*priority.Job
	pending []*Job
}

// benchEpoch is the workload's fixed "now".
var benchEpoch = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// Node types of the generated cluster: 80% CPU nodes (2x32 cores, 256 GB)
// and 20% GPU nodes (2x32 cores, 512 GB, 8 A100). Partition cpu holds the
// CPU nodes, gpu the GPU nodes, and debug (PriorityTier 2, MaxTime 30
// minutes) overlaps the first 2% of the CPU nodes.
func benchCluster(n int) (*Cluster, error) {
	kinds := []GresKind{{Name: "gpu", Type: "a100"}}
	nodes := make([]Node, n)
	nGPU := n / 5
	nCPU := n - nGPU
	var cpuList, gpuList, dbgList []int32
	for i := range nodes {
		nd := Node{CPUs: 64, Sockets: 2, CoresPerSocket: 32, ThreadsPerCore: 1, RealMemory: 256000,
			Weight: 1, State: NodeIdle, Gres: []int64{0}}
		if i < nCPU {
			nd.Name = fmt.Sprintf("cpu%05d", i+1)
			cpuList = append(cpuList, int32(i))
			if i < max(nCPU/50, 1) {
				dbgList = append(dbgList, int32(i))
			}
		} else {
			nd.Name = fmt.Sprintf("gpu%05d", i-nCPU+1)
			nd.RealMemory, nd.Gres, nd.Weight = 512000, []int64{8}, 10
			gpuList = append(gpuList, int32(i))
		}
		nodes[i] = nd
	}
	parts := []Partition{
		{Name: "cpu", NodeList: cpuList, Default: true, MaxTime: 48 * time.Hour, DefaultTime: time.Hour,
			MaxNodes: -1, MaxCPUsPerNode: -1, PriorityJobFactor: 1, PriorityTier: 1},
		{Name: "gpu", NodeList: gpuList, MaxTime: 48 * time.Hour, MaxNodes: -1, MaxCPUsPerNode: -1,
			PriorityJobFactor: 2, PriorityTier: 1},
		{Name: "debug", NodeList: dbgList, MaxTime: 30 * time.Minute, MaxNodes: -1, MaxCPUsPerNode: -1,
			PriorityJobFactor: 4, PriorityTier: 2},
	}
	return NewCluster("bench", nodes, parts, kinds)
}

// benchJob draws one job request: mostly small CPU jobs, whole-node and
// multi-node CPU jobs, single-node GPU jobs and a few large ones. Time
// limits are round numbers of minutes, as users write them.
func benchJob(r *rand.Rand) (Request, string) {
	mins := func(choices ...int) time.Duration {
		return time.Duration(choices[r.IntN(len(choices))]) * time.Minute
	}
	x := r.IntN(100)
	switch {
	case x < 35:
		return Request{NTasks: 1, CPUsPerTask: int32(1 + r.IntN(4)), MemPerCPU: 2000,
			TimeLimit: mins(10, 15, 30, 60, 120, 240)}, "cpu"
	case x < 58:
		return Request{NTasks: int32(8 << r.IntN(4)), MinNodes: 1, MaxNodes: 1, MemPerCPU: 2000,
			TimeLimit: mins(30, 60, 120, 240, 480)}, "cpu"
	case x < 73:
		return Request{MinNodes: int32(1 + r.IntN(8)), Exclusive: true,
			TimeLimit: mins(60, 120, 240, 480, 720)}, "cpu"
	case x < 76:
		return Request{MinNodes: int32(16 << r.IntN(3)), Exclusive: true,
			TimeLimit: mins(60, 240, 720, 1440)}, "cpu"
	case x < 93:
		g := int64(1 << r.IntN(4))
		return Request{NTasks: 1, CPUsPerTask: int32(8 * g), MemPerCPU: 4000,
			Gres: []GresReq{{Name: "gpu", Count: g}}, TimeLimit: mins(30, 60, 120, 240, 480)}, "gpu"
	case x < 96:
		return Request{MinNodes: int32(2 << r.IntN(3)), Exclusive: true, Gres: []GresReq{{Name: "gpu", Count: 8}},
			TimeLimit: mins(120, 480, 1440)}, "gpu"
	}
	return Request{NTasks: 1, CPUsPerTask: int32(1 + r.IntN(4)), MemPerCPU: 2000, TimeLimit: mins(10, 20, 30)}, "debug"
}

// NewBenchWorkload generates the workload: the cluster, about four running
// jobs per node started by the scheduler itself (with start times spread
// over their limits so that they end at different times), then the queue
// of pending jobs with multifactor priorities (age, fair-share over 50
// users in 5 accounts, job size, partition).
func NewBenchWorkload(spec BenchSpec) (*BenchWorkload, error) {
	if spec.Nodes < 10 || spec.Jobs < 1 {
		return nil, fmt.Errorf("bench workload: need at least 10 nodes and 1 job, got %d and %d", spec.Nodes, spec.Jobs)
	}
	cl, err := benchCluster(spec.Nodes)
	if err != nil {
		return nil, err
	}
	cfg := DefaultConfig()
	cfg.ConsumeMemory = true
	cfg.MaxJobCount = 0
	cfg.Backfill.Window = 43200 * time.Minute // bf_window maximum: the queue spans days
	w := &BenchWorkload{State: NewState(cl, cfg), Config: cfg, Now: benchEpoch}
	r := rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x5eed))
	w.fill(r)
	w.setupPriority()
	for i := 0; i < spec.Jobs; i++ {
		req, part := benchJob(r)
		j := w.addJob(r, req, part, benchEpoch.Add(-time.Duration(r.IntN(48*3600))*time.Second))
		w.pending = append(w.pending, j)
		w.pjobs = append(w.pjobs, w.priorityJob(j))
	}
	return w, nil
}

var benchUsers = func() []string {
	u := make([]string, 50)
	for i := range u {
		u[i] = fmt.Sprintf("user%02d", i)
	}
	return u
}()

func (w *BenchWorkload) addJob(r *rand.Rand, req Request, part string, submit time.Time) *Job {
	st := w.State
	pi := st.Cluster.PartitionIndex(part)
	ui := r.IntN(len(benchUsers))
	req.Partitions = []string{part}
	j := &Job{ID: st.NextJobID, User: benchUsers[ui], Account: fmt.Sprintf("acct%d", ui%5), Req: req,
		Partitions: []int32{pi}, Partition: -1, State: JobPending, Reason: ReasonNone, SubmitTime: submit,
		EligibleTime: submit, AccrueTime: submit, assoc: -1, qos: -1, QOS: "normal"}
	j.TimeLimit = effectiveTimeLimit(nil, st.Cluster, j, pi)
	st.NextJobID++
	st.addJob(j)
	return j
}

// fill starts jobs until the cluster is busy (the scheduler places them),
// then spreads their start times so that they end over the next hours.
func (w *BenchWorkload) fill(r *rand.Rand) {
	st := w.State
	fillJobs := len(st.Cluster.Nodes) * 4
	for i := 0; i < fillJobs; i++ {
		req, part := benchJob(r)
		w.addJob(r, req, part, benchEpoch.Add(-72*time.Hour))
	}
	cfg := w.Config
	for round := 0; round < 2; round++ {
		plan := Schedule(st, benchEpoch, cfg)
		plan.Pending = nil
		st.Apply(&plan)
	}
	for _, j := range st.jobList {
		switch j.State.Base() {
		case JobRunning:
			if r.IntN(100) < 3 {
				_ = st.End(j.ID, JobCompleted, 0, benchEpoch) // a few holes for backfill
				continue
			}
			w.Running++
			limit := j.TimeLimit
			j.StartTime = benchEpoch.Add(-time.Duration(r.Int64N(int64(limit))))
			j.EndTime = j.StartTime.Add(limit)
		case JobPending:
			// the fill jobs that did not start leave the queue
			_ = st.End(j.ID, JobCancelled, 0, benchEpoch)
		}
	}
	st.Purge(func(j *Job) bool { return j.State.Finished() })
}

func (w *BenchWorkload) setupPriority() {
	w.pcfg = priority.DefaultConfig()
	w.pcfg.WeightAge, w.pcfg.WeightFairshare, w.pcfg.WeightJobSize, w.pcfg.WeightPartition = 1000, 10000, 1000, 1000
	w.pcl = priority.Cluster{Nodes: uint32(len(w.State.Cluster.Nodes)), Partitions: map[string]*priority.Partition{}}
	for i := range w.State.Cluster.Partitions {
		p := &w.State.Cluster.Partitions[i]
		w.pcl.CPUs += uint32(p.TotalCPUs)
		w.pcl.Partitions[p.Name] = &priority.Partition{JobFactor: uint32(p.PriorityJobFactor), MaxTime: p.MaxTime, TRES: p.TRES}
	}
	w.tree = priority.NewTree()
	for a := 0; a < 5; a++ {
		_, _ = w.tree.AddAccount(fmt.Sprintf("acct%d", a), "root", uint32(10*(a+1)))
	}
	for i, u := range benchUsers {
		k, err := w.tree.AddUser(u, fmt.Sprintf("acct%d", i%5), 1)
		if err != nil {
			continue
		}
		use := float64((i * 7919) % 1000)
		for a := k; a >= 0; a = w.tree.Assocs[a].Parent {
			w.tree.Assocs[a].UsageRaw += use // usage counts in every ancestor, as Slurm adds it
		}
	}
	w.tree.Recompute(&w.pcfg)
}

func (w *BenchWorkload) priorityJob(j *Job) *priority.Job {
	s := jobShape(&w.Config, j, &w.State.Cluster.Partitions[j.Partitions[0]])
	assoc, _ := w.tree.LookupJob(j.Account, j.User, "")
	return &priority.Job{ID: uint32(j.ID), User: j.User, Account: j.Account, QOS: j.QOS,
		Partition: w.State.Cluster.Partitions[j.Partitions[0]].Name, Assoc: assoc,
		Nodes: uint32(s.minNodes), CPUs: uint32(s.tasks * s.cpusPerTask), TimeLimit: j.TimeLimit,
		AccrueTime: j.AccrueTime, EligibleTime: j.EligibleTime}
}

// Cycle runs one full scheduling cycle at w.Now: the multifactor priority
// of every pending job, then Schedule (main scheduler and backfill
// planning over the whole queue). The state is not changed, so every
// cycle does the same work.
func (w *BenchWorkload) Cycle() Plan {
	w.calc.Reset(&w.pcfg, &w.pcl, w.tree)
	w.calc.UpdateAll(w.pjobs, w.Now)
	for i, j := range w.pending {
		j.Priority = w.pjobs[i].Priority
	}
	return Schedule(w.State, w.Now, w.Config)
}

// Planned counts the pending jobs a plan starts or gives an expected
// start time.
func (w *BenchWorkload) Planned(p *Plan) int {
	n := len(p.Starts)
	for i := range p.Pending {
		if !p.Pending[i].ExpectedStart.IsZero() {
			n++
		}
	}
	return n
}
