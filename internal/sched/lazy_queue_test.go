package sched

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// lazyConf has two partitions of different PriorityTier over overlapping
// nodes, and a third with a short MaxTime, so that records of several
// partitions, failed partitions and partition gates meet in one queue.
const lazyConf = `ClusterName=test
SlurmctldHost=head
SchedulerType=sched/builtin
SelectTypeParameters=CR_CPU
NodeName=node[1-6] CPUs=4 RealMemory=16000
PartitionName=batch Nodes=node[1-6] Default=YES MaxTime=INFINITE State=UP
PartitionName=fast Nodes=node[1-3] PriorityTier=2 MaxTime=INFINITE State=UP
PartitionName=short Nodes=node[4-6] MaxTime=30 State=UP
`

// TestIncrementalQueueSameAsFull: a State with Config.IncrementalQueue
// and one without, driven by the same random submissions (some held,
// with a begin time, a dependency, a nice value, an array, in one
// partition or two), ends, cancellations, holds and releases, node
// failures, suspensions, priority writes (OrderChanged) and depth limits
// (the free view refilled from the changed nodes only), with or without
// backfill cycles among the main-only ones, start the same jobs on the
// same nodes at the same times and leave every pending job with the same
// reason, description and eligible time, after every cycle.
func TestIncrementalQueueSameAsFull(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		conf := lazyConf
		if rapid.Bool().Draw(rt, "depth") {
			conf += "SchedulerParameters=default_queue_depth=" + fmt.Sprint(rapid.IntRange(1, 4).Draw(rt, "queueDepth")) + "\n"
		}
		full, lazy := newHarness(t, conf), newHarness(t, conf)
		lazy.st.Config.IncrementalQueue = true
		both := func(f func(h *harness)) {
			f(full)
			f(lazy)
			sameJobs(rt, full, lazy)
		}
		// backfill: some cycles run backfill, as the simulator's
		// backfill ticks do; their queue is kept for the main-only
		// cycles after them
		backfill := rapid.Bool().Draw(rt, "backfill")
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for s := 0; s < steps; s++ {
			bf := backfill && rapid.Bool().Draw(rt, "bfCycle")
			full.st.Config.Backfill.Enabled, lazy.st.Config.Backfill.Enabled = bf, bf
			switch rapid.IntRange(0, 10).Draw(rt, "action") {
			case 0, 1, 2, 3:
				opts := randomJobOpts(rt, len(full.st.Jobs()))
				both(func(h *harness) {
					if _, err := h.submit("u", opts); err != nil {
						rt.Logf("%s: %v", opts, err)
					}
				})
			case 4, 5:
				d := time.Duration(rapid.IntRange(1, 120).Draw(rt, "minutes")) * time.Minute
				both(func(h *harness) { h.advance(d) })
			case 6:
				id := JobID(rapid.IntRange(1, len(full.st.Jobs())+1).Draw(rt, "cancel"))
				both(func(h *harness) { _ = h.st.Cancel(id, h.now); h.schedule() })
			case 7:
				id := JobID(rapid.IntRange(1, len(full.st.Jobs())+1).Draw(rt, "hold"))
				hold := rapid.Bool().Draw(rt, "holdOrRelease")
				both(func(h *harness) {
					if hold {
						_ = h.st.Hold(id, false)
					} else {
						_ = h.st.Release(id, false)
					}
					h.schedule()
				})
			case 8:
				node := fmt.Sprintf("node%d", rapid.IntRange(1, 6).Draw(rt, "node"))
				state := rapid.SampledFrom([]NodeState{NodeDown, NodeIdle, NodeIdle | NodeFlagDrain}).Draw(rt, "nodeState")
				both(func(h *harness) {
					if n := h.st.Cluster.NodeIndex(node); h.st.Cluster.Nodes[n].Jobs == 0 {
						_ = h.st.SetNodeState(node, state, "test", h.now)
					}
					h.schedule()
				})
			case 10:
				id := JobID(rapid.IntRange(1, len(full.st.Jobs())+1).Draw(rt, "suspend"))
				both(func(h *harness) {
					if j := h.st.Job(id); j != nil && j.State.Base() == JobSuspended {
						_ = h.st.Resume(id, h.now)
					} else {
						_ = h.st.Suspend(id, h.now)
					}
					h.schedule()
				})
			case 9:
				id := JobID(rapid.IntRange(1, len(full.st.Jobs())+1).Draw(rt, "prioJob"))
				prio := uint32(rapid.IntRange(1, 1000).Draw(rt, "prio"))
				both(func(h *harness) {
					if j := h.st.Job(id); j != nil && j.State.Base() == JobPending {
						j.Priority = prio
						j.PartPriority = nil
						h.st.OrderChanged()
					}
					h.schedule()
				})
			}
		}
	})
}

// randomJobOpts draws sbatch options for TestIncrementalQueueSameAsFull.
func randomJobOpts(rt *rapid.T, njobs int) string {
	opts := fmt.Sprintf("-N %d -n %d --time=%d --run=%d:00", rapid.IntRange(1, 3).Draw(rt, "N"),
		rapid.IntRange(3, 12).Draw(rt, "n"), rapid.IntRange(10, 90).Draw(rt, "limit"), rapid.IntRange(1, 90).Draw(rt, "run"))
	switch rapid.IntRange(0, 24).Draw(rt, "extra") {
	case 0:
		opts += " -p fast"
	case 1:
		opts += " -p batch,fast"
	case 2:
		opts += " -p short"
	case 3:
		opts += " --hold"
	case 4:
		opts += " --begin=now+30minutes"
	case 5:
		if njobs > 0 {
			opts += fmt.Sprintf(" --dependency=afterok:%d", rapid.IntRange(1, njobs).Draw(rt, "dep"))
		}
	case 6:
		opts += fmt.Sprintf(" --nice=%d", rapid.IntRange(1, 100).Draw(rt, "nice"))
	case 7:
		opts += " --array=0-2"
	case 8:
		opts += " -w node2"
	}
	return opts
}

// sameJobs fails when the two harnesses' jobs differ in what a cycle
// decides: state, start, nodes, reason, description, eligible time.
func sameJobs(rt tb, a, b *harness) {
	ja, jb := a.st.Jobs(), b.st.Jobs()
	if len(ja) != len(jb) {
		rt.Fatalf("%d jobs, incremental %d", len(ja), len(jb))
	}
	for i := range ja {
		x, y := ja[i], jb[i]
		if x.ID != y.ID || x.State != y.State || !x.StartTime.Equal(y.StartTime) || !slices.Equal(x.Alloc.Nodes, y.Alloc.Nodes) ||
			x.Reason != y.Reason || x.StateDesc != y.StateDesc || !x.EligibleTime.Equal(y.EligibleTime) {
			rt.Fatalf("job %d: full %v %q %q start %v nodes %v eligible %v; incremental %v %q %q start %v nodes %v eligible %v",
				x.ID, x.State, x.Reason, x.StateDesc, x.StartTime, x.Alloc.Nodes, x.EligibleTime,
				y.State, y.Reason, y.StateDesc, y.StartTime, y.Alloc.Nodes, y.EligibleTime)
		}
	}
}

// TestIncrementalQueueResortsOnOrderChanged: priorities written by the
// driver (OrderChanged) reorder the kept queue without rebuilding it (a
// main-only cycle after a backfill cycle included): when the running job
// ends, the job first under the new priorities starts, as with a full
// cycle.
func TestIncrementalQueueResortsOnOrderChanged(t *testing.T) {
	conf := lazyConf + "SchedulerType=sched/backfill\n"
	full, lazy := newHarness(t, conf), newHarness(t, conf)
	lazy.st.Config.IncrementalQueue = true
	var ids []JobID
	for _, h := range []*harness{full, lazy} {
		h.mustSubmit("u", "-N 6 -n 24 --time=60 --run=30:00")
		ids = ids[:0]
		for i := 0; i < 3; i++ {
			ids = append(ids, h.mustSubmit("u", "-N 6 -n 24 --time=10 --run=10:00").ID)
		}
		h.st.Config.Backfill.Enabled = false
		h.schedule()                          // the kept queue is built (lazy)
		for i, p := range []uint32{1, 2, 3} { // reversed: the last submitted first
			h.job(ids[i]).Priority = p
		}
		h.st.OrderChanged()
		h.schedule()
		h.st.Config.Backfill.Enabled = true
		h.schedule() // a backfill cycle keeps its queue
		h.st.Config.Backfill.Enabled = false
		for i, p := range []uint32{3, 1, 2} { // the first submitted first
			h.job(ids[i]).Priority = p
		}
		h.st.OrderChanged()
		h.schedule()
		h.advance(30 * time.Minute) // the running job ends: one of the three starts
	}
	sameJobs(t, full, lazy)
	if s := lazy.job(ids[0]).State.Base(); s != JobRunning {
		t.Errorf("job %d (highest priority) is %v, want RUNNING", ids[0], s)
	}
}
