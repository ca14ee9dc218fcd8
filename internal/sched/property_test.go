package sched

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestPropertyNoOversubscriptionNoLimitExceeded: over random clusters,
// random jobs and random run times, after every scheduling cycle no node
// holds more than it has (CPUs times the OverSubscribe factor, memory,
// GRES) and no running set of jobs exceeds a QOS MaxJobsPerUser or
// GrpTRES cpu limit.
func TestPropertyNoOversubscriptionNoLimitExceeded(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nodes := rapid.IntRange(1, 6).Draw(rt, "nodes")
		cpus := rapid.SampledFrom([]int{2, 4, 8}).Draw(rt, "cpus")
		gpus := rapid.IntRange(0, 4).Draw(rt, "gpus")
		share := rapid.SampledFrom([]string{"NO", "FORCE:2"}).Draw(rt, "oversubscribe")
		unit := rapid.SampledFrom([]string{"CR_CPU", "CR_Core_Memory", "CR_CPU_Memory"}).Draw(rt, "select")
		gres := ""
		if gpus > 0 {
			gres = fmt.Sprintf(" Gres=gpu:%d", gpus)
		}
		conf := fmt.Sprintf(`ClusterName=p
SlurmctldHost=h
SelectTypeParameters=%s
GresTypes=gpu
AccountingStorageEnforce=limits,qos
NodeName=n[1-%d] CPUs=%d RealMemory=%d%s
PartitionName=p Nodes=ALL Default=YES OverSubscribe=%s
`, unit, nodes, cpus, 1000*cpus, gres, share)
		h := newHarness(rt, conf)
		maxJobs := rapid.IntRange(1, 5).Draw(rt, "maxjobs")
		grpCPU := rapid.IntRange(1, nodes*cpus).Draw(rt, "grpcpu")
		h.sacctmgr(fmt.Sprintf(`sacctmgr -i add account a
sacctmgr -i add user u1 DefaultAccount=a
sacctmgr -i add user u2 DefaultAccount=a
sacctmgr -i modify qos normal set MaxJobsPerUser=%d GrpTRES=cpu=%d`, maxJobs, grpCPU))
		njobs := rapid.IntRange(1, 25).Draw(rt, "jobs")
		for i := 0; i < njobs; i++ {
			user := rapid.SampledFrom([]string{"u1", "u2"}).Draw(rt, "user")
			opts := []string{fmt.Sprintf("-n %d", rapid.IntRange(1, cpus).Draw(rt, "n")),
				fmt.Sprintf("--time=%d", rapid.IntRange(1, 60).Draw(rt, "time")),
				fmt.Sprintf("--run=%d", rapid.IntRange(1, 60).Draw(rt, "run"))}
			if n := rapid.IntRange(0, 2).Draw(rt, "N"); n > 0 {
				opts = append(opts, fmt.Sprintf("--nodes=%d", n))
			}
			if gpus > 0 && rapid.Bool().Draw(rt, "gpu") {
				opts = append(opts, fmt.Sprintf("--gres=gpu:%d", rapid.IntRange(1, gpus).Draw(rt, "g")))
			}
			if rapid.Bool().Draw(rt, "mem") {
				opts = append(opts, fmt.Sprintf("--mem=%d", rapid.IntRange(1, 1000*cpus).Draw(rt, "memv")))
			}
			if rapid.IntRange(0, 9).Draw(rt, "excl") == 0 {
				opts = append(opts, "--exclusive")
			}
			if _, err := h.submit(user, strings.Join(opts, " ")); err != nil {
				continue // rejected requests are fine; accepted ones must run safely
			}
			checkInvariants(rt, h, maxJobs, grpCPU)
			h.advance(time.Duration(rapid.IntRange(0, 20).Draw(rt, "wait")) * time.Minute)
			checkInvariants(rt, h, maxJobs, grpCPU)
		}
		h.advance(48 * time.Hour)
		checkInvariants(rt, h, maxJobs, grpCPU)
	})
}

func checkInvariants(t *rapid.T, h *harness, maxJobs, grpCPU int) {
	cl := h.st.Cluster
	n := len(cl.Nodes)
	cpu := make([]int32, n)
	mem := make([]int64, n)
	gres := make([]int64, n*len(cl.GresKinds))
	perUser := map[string]int{}
	totalCPU := 0
	for _, j := range h.st.Jobs() {
		if !isActive(j) {
			continue
		}
		if j.State.Base() == JobRunning {
			perUser[j.User]++
		}
		for s, ni := range j.Alloc.Nodes {
			if j.State.Base() == JobRunning {
				cpu[ni] += j.Alloc.CPUs[s]
				totalCPU += int(j.Alloc.CPUs[s])
			}
			mem[ni] += j.Alloc.Mem[s]
		}
		for _, g := range j.Alloc.Gres {
			gres[int(j.Alloc.Nodes[g.Slot])*len(cl.GresKinds)+int(g.Kind)] += g.Count
		}
	}
	for i := range cl.Nodes {
		nd := &cl.Nodes[i]
		factor := int32(1)
		if p := &cl.Partitions[0]; p.OverSubscribe.Mode == OverSubscribeForce {
			factor = p.OverSubscribe.Count
		}
		if cpu[i] > nd.CPUs*factor || cpu[i] != nd.AllocCPUs {
			t.Fatalf("node %s: %d CPUs held (node says %d) of %d x%d", nd.Name, cpu[i], nd.AllocCPUs, nd.CPUs, factor)
		}
		if h.st.Config.ConsumeMemory && mem[i] > nd.RealMemory {
			t.Fatalf("node %s: %d MB held of %d", nd.Name, mem[i], nd.RealMemory)
		}
		for k := range cl.GresKinds {
			if g := gres[i*len(cl.GresKinds)+k]; g > nd.Gres[k] || g != nd.AllocGres[k] {
				t.Fatalf("node %s: %d GRES held of %d", nd.Name, g, nd.Gres[k])
			}
		}
	}
	for u, c := range perUser {
		if c > maxJobs {
			t.Fatalf("user %s runs %d jobs, MaxJobsPerUser=%d", u, c, maxJobs)
		}
	}
	if totalCPU > grpCPU {
		t.Fatalf("%d CPUs running, GrpTRES cpu=%d", totalCPU, grpCPU)
	}
}

// Property tests over random clusters, random jobs and random end times,
// stepping the harness's fake clock through Schedule + Apply:
//
//   - no node is ever oversubscribed beyond its OverSubscribe (CPUs,
//     memory, GRES, recomputed from the running jobs, not from the node
//     counters);
//   - no accounting limit is exceeded by the running jobs
//     (MaxJobsPerUser, GrpTRES cpu);
//   - backfill never delays the planned start of a higher-priority job:
//     within a cycle a backfilled job ends before any reservation of a
//     higher-priority job on its nodes begins, and re-planning at the same
//     instant after the starts were applied moves no planned start later.
//
// The seed is fixed (override with -rapid.seed) and the sizes are bounded
// so that the test runs in a few seconds.

// init fixes rapid's seed for every property of the package (unless
// -rapid.seed or RAPID_SEED gives one), so that runs are reproducible.
func init() { fixRapidDefaults() }

func fixRapidDefaults() {
	if f := flag.Lookup("rapid.seed"); f != nil && f.Value.String() == "0" {
		_ = f.Value.Set("20261122")
	}
}

// propCluster draws a slurm.conf: 2-6 nodes of 2-8 CPUs, some with GPUs;
// partition batch over all nodes and partition shared (OverSubscribe
// FORCE:2) over some of them; limits enforced.
func propCluster(rt *rapid.T) (string, map[string]int32) {
	n := rapid.IntRange(2, 6).Draw(rt, "nodes")
	var b strings.Builder
	b.WriteString("ClusterName=prop\nSlurmctldHost=ctl\nSelectTypeParameters=CR_CPU_Memory\nGresTypes=gpu\n")
	b.WriteString("AccountingStorageEnforce=associations,limits\n")
	share := map[string]int32{}
	for i := 1; i <= n; i++ {
		cpus := []int{2, 4, 8}[rapid.IntRange(0, 2).Draw(rt, "cpus")]
		gpus := []int{0, 0, 2, 4}[rapid.IntRange(0, 3).Draw(rt, "gpus")]
		g := ""
		if gpus > 0 {
			g = fmt.Sprintf(" Gres=gpu:%d", gpus)
		}
		fmt.Fprintf(&b, "NodeName=n%d CPUs=%d RealMemory=%d%s\n", i, cpus, 1000*cpus, g)
		share[fmt.Sprintf("n%d", i)] = 1
	}
	shared := rapid.IntRange(1, n).Draw(rt, "shared")
	b.WriteString("PartitionName=batch Nodes=ALL Default=YES MaxTime=04:00:00 DefaultTime=00:30:00 State=UP\n")
	fmt.Fprintf(&b, "PartitionName=shared Nodes=n[1-%d] OverSubscribe=FORCE:2 MaxTime=04:00:00 State=UP\n", shared)
	for i := 1; i <= shared; i++ {
		share[fmt.Sprintf("n%d", i)] = 2
	}
	return b.String(), share
}

const propAcct = `sacctmgr -i add account a
sacctmgr -i add user u1 DefaultAccount=a
sacctmgr -i add user u2 DefaultAccount=a
sacctmgr -i add user u3 DefaultAccount=a
sacctmgr -i modify qos normal set MaxJobsPerUser=3 GrpTRES=cpu=12
`

// propJob draws sbatch options with a run time shorter than the limit
// (a random end time) or none (the job runs to its limit).
func propJob(rt *rapid.T, i int) string {
	var o []string
	if rapid.IntRange(0, 3).Draw(rt, fmt.Sprintf("part%d", i)) == 0 {
		o = append(o, "-p shared")
	}
	switch rapid.IntRange(0, 3).Draw(rt, fmt.Sprintf("kind%d", i)) {
	case 0:
		o = append(o, fmt.Sprintf("-N %d --exclusive", rapid.IntRange(1, 3).Draw(rt, fmt.Sprintf("nn%d", i))))
	case 1:
		o = append(o, fmt.Sprintf("-n 1 --gres=gpu:%d --mem=500", rapid.IntRange(1, 2).Draw(rt, fmt.Sprintf("g%d", i))))
	default:
		o = append(o, fmt.Sprintf("-n %d --mem-per-cpu=400", rapid.IntRange(1, 6).Draw(rt, fmt.Sprintf("n%d", i))))
	}
	limit := rapid.IntRange(0, 12).Draw(rt, fmt.Sprintf("t%d", i)) * 10
	if limit > 0 {
		o = append(o, fmt.Sprintf("--time=%d", limit))
		if run := rapid.IntRange(0, limit).Draw(rt, fmt.Sprintf("run%d", i)); run > 0 {
			o = append(o, fmt.Sprintf("--run=%d", run))
		}
	}
	return strings.Join(o, " ")
}

func TestPropertyBackfillNeverDelays(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		conf, share := propCluster(rt)
		h := newHarness(rt, conf)
		h.sacctmgr(propAcct)
		jobs := rapid.IntRange(3, 18).Draw(rt, "jobs")
		for i := 0; i < jobs; i++ {
			user := fmt.Sprintf("u%d", rapid.IntRange(1, 3).Draw(rt, fmt.Sprintf("user%d", i)))
			opts := propJob(rt, i)
			prio := uint32(rapid.IntRange(1, 1000).Draw(rt, fmt.Sprintf("prio%d", i)))
			if j, err := h.submit(user, opts+" --hold"); err == nil {
				j.Priority = prio
				_ = h.st.Release(j.ID, true)
			}
			checkCycle(rt, h, share)
			for k := rapid.IntRange(0, 3).Draw(rt, fmt.Sprintf("gap%d", i)); k > 0; k-- {
				h.advance(10 * time.Minute)
				checkCycle(rt, h, share)
			}
		}
		for k := 0; k < 30; k++ {
			h.advance(10 * time.Minute)
			checkCycle(rt, h, share)
		}
	})
}

// checkCycle runs a cycle at the current time, checks the invariants on
// its plan and on the state after applying it, then re-plans at the same
// instant and checks that no planned start moved later.
func checkCycle(rt *rapid.T, h *harness, share map[string]int32) {
	plan := h.schedule()
	checkNoDelay(rt, h, &plan)
	checkNodes(rt, h, share)
	checkLimits(rt, h, 3, 12)
	before := map[JobID]time.Time{}
	for _, p := range plan.Pending {
		if !p.ExpectedStart.IsZero() {
			before[p.Job] = p.ExpectedStart
		}
	}
	again := h.schedule()
	for _, p := range again.Pending {
		if b, ok := before[p.Job]; ok && p.ExpectedStart.After(b) {
			rt.Fatalf("job %d: planned start moved from %v to %v after the cycle's starts were applied",
				p.Job, b, p.ExpectedStart)
		}
	}
}

// checkNoDelay: a job backfilled now on a node reserved for a job ahead
// of it in the queue must end (by its planned time) before that
// reservation begins.
func checkNoDelay(rt *rapid.T, h *harness, plan *Plan) {
	cl := h.st.Cluster
	for _, s := range plan.Starts {
		if !s.Backfill {
			continue
		}
		b := h.job(s.Job)
		end := plan.Now.Add(PlanDuration(s.TimeLimit, &cl.Partitions[s.Partition]))
		for _, p := range plan.Pending {
			a := h.job(p.Job)
			if p.ExpectedStart.IsZero() || !ahead(a, b) || !end.After(p.ExpectedStart) {
				continue
			}
			for _, n := range p.PlannedNodes {
				for _, m := range s.Alloc.Nodes {
					if n == m {
						rt.Fatalf("backfilled job %d (prio %d, ends %v) on node %s delays job %d (prio %d) planned at %v",
							b.ID, b.Priority, end, cl.Nodes[n].Name, a.ID, a.Priority, p.ExpectedStart)
					}
				}
			}
		}
	}
}

// ahead reports whether a sorts before b in the queue (same tier here).
func ahead(a, b *Job) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if !a.SubmitTime.Equal(b.SubmitTime) {
		return a.SubmitTime.Before(b.SubmitTime)
	}
	return a.ID < b.ID
}

// checkNodes recomputes every node's load from the active jobs.
func checkNodes(rt *rapid.T, h *harness, share map[string]int32) {
	cl := h.st.Cluster
	cpus := make([]int32, len(cl.Nodes))
	mem := make([]int64, len(cl.Nodes))
	gres := make([]int64, len(cl.Nodes)*max(len(cl.GresKinds), 1))
	for _, j := range h.st.Jobs() {
		if !isActive(j) {
			continue
		}
		for s, n := range j.Alloc.Nodes {
			if j.State.Base() == JobRunning {
				cpus[n] += j.Alloc.CPUs[s]
			}
			mem[n] += j.Alloc.Mem[s]
		}
		for _, g := range j.Alloc.Gres {
			gres[int(j.Alloc.Nodes[g.Slot])*len(cl.GresKinds)+int(g.Kind)] += g.Count
		}
	}
	for i := range cl.Nodes {
		n := &cl.Nodes[i]
		if cpus[i] > n.CPUs*share[n.Name] || mem[i] > n.RealMemory {
			rt.Fatalf("node %s oversubscribed: %d CPUs of %d (x%d), %d MB of %d", n.Name, cpus[i], n.CPUs, share[n.Name], mem[i], n.RealMemory)
		}
		for k := range cl.GresKinds {
			if gres[i*len(cl.GresKinds)+k] > n.Gres[k] {
				rt.Fatalf("node %s: %d GRES of %d", n.Name, gres[i*len(cl.GresKinds)+k], n.Gres[k])
			}
		}
	}
}

// checkLimits checks the QOS MaxJobsPerUser and GrpTRES cpu limits.
func checkLimits(rt *rapid.T, h *harness, maxJobs int, grpCPU int64) {
	perUser := map[string]int{}
	var cpus int64
	for _, j := range h.st.Jobs() {
		if !isActive(j) {
			continue
		}
		perUser[j.User]++
		for _, c := range j.Alloc.CPUs {
			cpus += int64(c)
		}
	}
	for u, n := range perUser {
		if n > maxJobs {
			rt.Fatalf("user %s runs %d jobs, MaxJobsPerUser=%d", u, n, maxJobs)
		}
	}
	if cpus > grpCPU {
		rt.Fatalf("running jobs hold %d CPUs, GrpTRES=cpu=%d", cpus, grpCPU)
	}
}

// propPreemptions counts the preemptions the property saw (logged, so a
// run shows the property is not vacuous).
var propPreemptions int

// TestPropertyPreemptionKeepsNodesWithinLimits: the same invariants
// (no oversubscription, limits hold) with preempt/partition_prio in
// every mode: a tier-2 partition over some of the nodes preempts jobs of
// the tier-1 partition with CANCEL, REQUEUE or SUSPEND (gang), and
// suspended jobs keep their memory and GRES.
func TestPropertyPreemptionKeepsNodesWithinLimits(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		conf, share := propCluster(rt)
		mode := rapid.SampledFrom([]string{"CANCEL", "REQUEUE", "SUSPEND,GANG"}).Draw(rt, "mode")
		conf = strings.Replace(conf, "AccountingStorageEnforce=associations,limits\n",
			"AccountingStorageEnforce=associations,limits\nPreemptType=preempt/partition_prio\nPreemptMode="+mode+"\n", 1)
		conf = strings.Replace(conf, "OverSubscribe=FORCE:2 MaxTime=04:00:00", "PriorityTier=2 MaxTime=04:00:00", 1)
		for n := range share {
			share[n] = 1 // no oversubscription: the high partition preempts instead
		}
		h := newHarness(rt, conf)
		h.sacctmgr(strings.Replace(propAcct, "MaxJobsPerUser=3 GrpTRES=cpu=12", "MaxJobsPerUser=6 GrpTRES=cpu=40", 1))
		jobs := rapid.IntRange(3, 12).Draw(rt, "jobs")
		for i := 0; i < jobs; i++ {
			user := fmt.Sprintf("u%d", rapid.IntRange(1, 3).Draw(rt, fmt.Sprintf("user%d", i)))
			_, _ = h.submit(user, propJob(rt, i))
			propPreemptions += len(h.lastPlan.Preemptions)
			checkNodes(rt, h, share)
			checkLimits(rt, h, 6, 40)
			for k := rapid.IntRange(0, 3).Draw(rt, fmt.Sprintf("gap%d", i)); k > 0; k-- {
				h.advance(10 * time.Minute)
				checkNodes(rt, h, share)
				checkLimits(rt, h, 6, 40)
			}
		}
		for k := 0; k < 20; k++ {
			h.advance(10 * time.Minute)
			checkNodes(rt, h, share)
			checkLimits(rt, h, 6, 40)
		}
	})
	t.Logf("%d preemptions decided on submission over all runs", propPreemptions)
}
