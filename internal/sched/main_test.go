package sched

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// cpuConf returns a slurm.conf with nodes node[1-n] of cpus CPUs each in
// one default partition "batch", plus extra lines.
func cpuConf(n, cpus int, extra string) string {
	return fmt.Sprintf(`ClusterName=test
SlurmctldHost=head
SelectTypeParameters=CR_CPU
NodeName=node[1-%d] CPUs=%d RealMemory=16000
PartitionName=batch Nodes=node[1-%d] Default=YES MaxTime=INFINITE State=UP
%s`, n, cpus, n, extra)
}

// noBackfill turns backfill off so a test sees the main scheduler alone.
func noBackfill(h *harness) *harness {
	h.st.Config.Backfill.Enabled = false
	return h
}

// held submits a job held, so a test can set its priority before release.
func (h *harness) submitWithPriority(user, opts string, prio uint32) *Job {
	h.t.Helper()
	j := h.mustSubmit(user, opts+" --hold")
	j.Priority = prio
	if err := h.st.Release(j.ID, true); err != nil {
		h.t.Fatal(err)
	}
	return j
}

func TestQueueOrder(t *testing.T) {
	base := t0
	mk := func(id JobID, tier uint16, prio uint32, submit time.Duration) QueueRec {
		return QueueRec{Job: &Job{ID: id, SubmitTime: base.Add(submit)}, Tier: tier, Priority: prio}
	}
	recs := []QueueRec{
		mk(6, 1, 100, 0), mk(5, 1, 100, 0), mk(4, 1, 100, -time.Minute), mk(3, 1, 200, time.Hour),
		mk(2, 2, 1, time.Hour), {Job: &Job{ID: 1}, Rank: 1},
	}
	slices.SortStableFunc(recs, compareRecs)
	var got []JobID
	for _, r := range recs {
		got = append(got, r.Job.ID)
	}
	// preemptor first, then tier, priority, submit time, id.
	want := []JobID{1, 2, 3, 4, 5, 6}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// TestResourcesBlocksPartition: the main scheduler takes a partition's
// nodes out of the pass after its first Resources failure, so a smaller
// lower-priority job there (and in an overlapping partition) waits with
// reason Priority, while a disjoint partition still schedules.
func TestResourcesBlocksPartition(t *testing.T) {
	h := noBackfill(newHarness(t, cpuConf(4, 4, `PartitionName=over Nodes=node[3-4] State=UP
NodeName=solo1 CPUs=4 RealMemory=16000
PartitionName=solo Nodes=solo1 State=UP`)))
	running := h.submitWithPriority("u1", "-n 4 --nodes=1 --time=1:00:00", 1000)
	h.schedule()
	h.expectState(running.ID, JobRunning, "")
	big := h.submitWithPriority("u1", "--nodes=4 --exclusive --time=1:00:00", 900)
	small := h.submitWithPriority("u1", "-n 1 --time=1:00:00", 800)
	overlap := h.submitWithPriority("u1", "-p over -n 1 --time=1:00:00", 700)
	disjoint := h.submitWithPriority("u1", "-p solo -n 1 --time=1:00:00", 600)
	h.schedule()
	h.expectState(big.ID, JobPending, ReasonResources)
	h.expectState(small.ID, JobPending, ReasonPriority)
	h.expectState(overlap.ID, JobPending, ReasonPriority)
	h.expectState(disjoint.ID, JobRunning, "")
	// When the running job ends, the big job starts first.
	h.advance(time.Hour)
	h.expectState(big.ID, JobRunning, "")
	h.expectState(small.ID, JobPending, ReasonResources)
}

// TestAccountingLimitDoesNotBlock: a job held back by an accounting limit
// does not take its partition's nodes from lower-priority jobs.
func TestAccountingLimitDoesNotBlock(t *testing.T) {
	h := noBackfill(newHarness(t, cpuConf(2, 4, "AccountingStorageEnforce=limits")))
	h.sacctmgr(`sacctmgr -i add account acme
sacctmgr -i add user u1 DefaultAccount=acme
sacctmgr -i add user u2 DefaultAccount=acme
sacctmgr -i modify user u1 set MaxJobs=1`)
	first := h.submitWithPriority("u1", "-n 1 --time=1:00:00", 1000)
	second := h.submitWithPriority("u1", "-n 1 --time=1:00:00", 900)
	other := h.submitWithPriority("u2", "-n 1 --time=1:00:00", 800)
	h.schedule()
	h.expectState(first.ID, JobRunning, "")
	h.expectState(second.ID, JobPending, ReasonAssocMaxJobsLimit)
	h.expectState(other.ID, JobRunning, "")
}

// TestPriorityOrderStarts: with room for one job, the higher priority
// starts, whatever the submission order; equal priorities go by submit
// time, then id.
func TestPriorityOrderStarts(t *testing.T) {
	h := noBackfill(newHarness(t, cpuConf(1, 4, "")))
	h.mustSubmit("u", "-n 4 --time=10 --run=10")
	low := h.submitWithPriority("u", "-n 4 --time=10", 10)
	high := h.submitWithPriority("u", "-n 4 --time=10", 20)
	h.schedule()
	h.expectState(high.ID, JobPending, ReasonResources)
	h.expectState(low.ID, JobPending, ReasonPriority)
	h.advance(10 * time.Minute)
	h.expectState(high.ID, JobRunning, "")
	h.expectState(low.ID, JobPending, ReasonResources)
}

func TestPartitionTierFirst(t *testing.T) {
	h := noBackfill(newHarness(t, `ClusterName=t
SlurmctldHost=h
SelectTypeParameters=CR_CPU
NodeName=n1 CPUs=4 RealMemory=1000
PartitionName=low Nodes=n1 Default=YES PriorityTier=1
PartitionName=high Nodes=n1 PriorityTier=5
`))
	h.mustSubmit("u", "-n 4 --time=10 --run=10")
	lowJob := h.submitWithPriority("u", "-p low -n 4 --time=10", 5000)
	highJob := h.submitWithPriority("u", "-p high -n 4 --time=10", 1)
	h.advance(10 * time.Minute)
	h.expectState(highJob.ID, JobRunning, "")
	h.expectState(lowJob.ID, JobPending, ReasonResources)
	// A multi-partition job is listed with the higher tier first.
	multi := h.mustSubmit("u", "-p low,high -n 1 --time=10")
	if got := h.st.Cluster.Partitions[multi.Partitions[0]].Name; got != "high" {
		t.Fatalf("multi-partition job lists %q first, want high", got)
	}
}

func TestPartitionReasons(t *testing.T) {
	h := noBackfill(newHarness(t, cpuConf(2, 4, `PartitionName=short Nodes=node[1-2] MaxTime=30 MaxNodes=1
PartitionName=off Nodes=node[1-2] State=DOWN`)))
	cases := []struct {
		opts string
		want Reason
	}{
		{"-p short --time=1:00:00", ReasonPartitionTimeLimit},
		{"-p short --nodes=2 --time=10", ReasonPartitionNodeLimit},
		{"-p off --time=10", ReasonPartitionDown},
		{"--begin=now+1hour --time=10", ReasonBeginTime},
		{"--hold --time=10", ReasonJobHeldUser},
		{"--nodelist=node2 --exclude=node2 --time=10", ReasonReqNodeNotAvail},
	}
	for _, c := range cases {
		j, err := h.submit("u", c.opts)
		if err != nil {
			if c.want == ReasonReqNodeNotAvail {
				continue // rejected at submission is also Slurm's answer
			}
			t.Fatalf("%s: %v", c.opts, err)
		}
		h.expectState(j.ID, JobPending, c.want)
	}
}

func TestHoldReleaseAndBeginTime(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, ""))
	j := h.mustSubmit("u", "--hold --time=10")
	h.expectState(j.ID, JobPending, ReasonJobHeldUser)
	if err := h.st.Hold(j.ID, true); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	h.expectState(j.ID, JobPending, ReasonJobHeldAdmin)
	if err := h.st.Release(j.ID, false); err == nil {
		t.Fatal("a user released an admin hold")
	}
	if err := h.st.Release(j.ID, true); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	h.expectState(j.ID, JobRunning, "")

	b := h.mustSubmit("u", "--begin=now+30minutes --time=10")
	h.expectState(b.ID, JobPending, ReasonBeginTime)
	if !b.EligibleTime.IsZero() {
		t.Fatal("a job waiting for its begin time must not be eligible")
	}
	h.advance(31 * time.Minute)
	h.expectState(b.ID, JobRunning, "")
}

// TestHoldRunningJob: Slurm's hold and release apply to a running job
// (it keeps running with reason JobHeldUser until released) and refuse a
// finished one with "Job has already finished".
func TestHoldRunningJob(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, ""))
	j := h.mustSubmit("u", "--time=10")
	h.expectState(j.ID, JobRunning, "")
	if err := h.st.Hold(j.ID, false); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	if j.State.Base() != JobRunning || j.Reason != ReasonJobHeldUser {
		t.Fatalf("held running job: %s (%s)", j.State, j.Reason)
	}
	if err := h.st.Release(j.ID, false); err != nil {
		t.Fatal(err)
	}
	if j.State.Base() != JobRunning || j.Reason != ReasonNone || j.Hold != HoldNone {
		t.Fatalf("released running job: %s (%s)", j.State, j.Reason)
	}
	h.advance(11 * time.Minute)
	if err := h.st.Hold(j.ID, true); !errors.Is(err, ErrJobFinished) {
		t.Fatalf("hold of a finished job: %v", err)
	}
}

// TestRequeueKeepsIDAndWaits: Slurm's requeue: PENDING with reason
// BeginTime for requeue_delay+1 s, same id, age reset, the run recorded.
func TestRequeueKeepsIDAndWaits(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, ""))
	j := h.mustSubmit("u", "--time=1:00:00")
	h.expectState(j.ID, JobRunning, "")
	h.advance(5 * time.Minute)
	if err := h.st.Requeue(j.ID, false, h.now); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	h.expectState(j.ID, JobPending, ReasonBeginTime)
	if j.RestartCount != 1 || len(j.Runs) != 1 || j.Runs[0].State != JobRequeued || !j.AccrueTime.IsZero() {
		t.Fatalf("requeue: restarts %d runs %+v accrue %v", j.RestartCount, j.Runs, j.AccrueTime)
	}
	if !j.SubmitTime.Equal(h.now) {
		t.Fatalf("requeue must reset the submit time")
	}
	h.advance(120 * time.Second)
	h.expectState(j.ID, JobPending, ReasonBeginTime)
	h.advance(time.Second)
	h.expectState(j.ID, JobRunning, "")
	if h.st.Job(j.ID) != j {
		t.Fatal("requeued job changed id")
	}
}

// TestRequiredNodesBlockOnlyThoseNodes: a job waiting for specific busy
// nodes does not take the rest of its partition from lower-priority jobs.
func TestRequiredNodesBlockOnlyThoseNodes(t *testing.T) {
	h := noBackfill(newHarness(t, cpuConf(2, 4, "")))
	h.mustSubmit("u", "-n 4 -w node1 --time=10")
	pinned := h.submitWithPriority("u", "-n 4 -w node1 --time=10", 1000)
	other := h.submitWithPriority("u", "-n 4 --time=10", 10)
	h.schedule()
	h.expectState(pinned.ID, JobPending, ReasonResources)
	h.expectState(other.ID, JobRunning, "")
}

// TestSubmitReason: the reason slurmctld gives a job at submission, shown
// until the first scheduling pass (oracle, squeue right after four
// sbatch: "1 PD JobHeldUser", "2 PD BeginTime", "3 PD None" for the
// highest priority, "4 PD Priority"; of two jobs of equal priority the
// second shows "PD Priority"; a dependent job "PD Dependency").
func TestSubmitReason(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, ""))
	done := h.mustSubmit("u", "--time=10 --run=1").ID
	h.advance(11 * time.Minute) // completed
	var top JobID
	cases := []struct {
		opts func() string
		prio uint32
		want Reason
	}{
		{func() string { return "--hold --time=10" }, 0, ReasonJobHeldUser},
		{func() string { return "--begin=now+10minutes --time=10" }, 100, ReasonBeginTime},
		{func() string { return "--time=10" }, 3000, ReasonNone},
		{func() string { return "--time=10" }, 100, ReasonPriority},
		{func() string { return fmt.Sprintf("--dependency=afterok:%d --time=10", top) }, 5000, ReasonDependency},
		{func() string { return "--time=10" }, 3000, ReasonPriority},
		{func() string { return fmt.Sprintf("--dependency=afternotok:%d --time=10", done) }, 100, ReasonDependencyNeverSatisfied},
	}
	for i, c := range cases {
		j := h.queue("u", c.opts())
		j.Priority = c.prio
		h.st.SetSubmitReason(j, h.now)
		if j.Reason != c.want {
			t.Errorf("job %d (%s, priority %d): reason %s, want %s", i+1, c.opts(), c.prio, j.Reason, c.want)
		}
		if c.want == ReasonNone {
			top = j.ID
		}
	}
}
