package sched

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Preemption scenarios of SCENARIOS.md: S3 steps 1, 2 and 4 (preempt/qos
// with REQUEUE), S5 (preempt/partition_prio with SUSPEND,GANG) and S6
// (preempt/qos with SUSPEND,GANG).

// TestS3Steps1And2RequeueByQOS: charlie's batch-lowprio job runs on both
// nodes; alice's research job preempts it with REQUEUE: charlie's job is
// PENDING (BeginTime) with the same id, its run record ends PREEMPTED.
func TestS3Steps1And2RequeueByQOS(t *testing.T) {
	h := qosDemo(t)
	c := h.mustSubmit("charlie", "--qos=batch-lowprio --gres=gpu:8 --nodes=2 --time=04:00:00")
	h.expectState(c.ID, JobRunning, "")
	if got := h.nodes(c.ID); len(got) != 2 {
		t.Fatalf("step 1: charlie's job on %v, want both nodes", got)
	}
	h.advance(10 * time.Minute)
	a := h.mustSubmit("alice", "--qos=research --gres=gpu:8 --nodes=2 --time=02:00:00")
	plan := h.lastPlan
	if len(plan.Preemptions) != 1 || plan.Preemptions[0].Job != c.ID || plan.Preemptions[0].Mode != PreemptRequeue ||
		plan.Preemptions[0].By != a.ID {
		t.Fatalf("step 2: preemptions %+v, want charlie's job %d requeued by %d", plan.Preemptions, c.ID, a.ID)
	}
	h.expectState(a.ID, JobRunning, "")
	h.expectState(c.ID, JobPending, ReasonBeginTime)
	if h.st.Job(c.ID) != c || len(c.Runs) != 1 || c.Runs[0].State != JobPreempted || c.RestartCount != 1 {
		t.Fatalf("step 2: charlie's job runs %+v restarts %d, want one run ending PREEMPTED", c.Runs, c.RestartCount)
	}
	t.Logf("job %d requeued: run record %s..%s state PREEMPTED, begin %s", c.ID,
		c.Runs[0].Start.Format(time.TimeOnly), c.Runs[0].End.Format(time.TimeOnly), c.Req.BeginTime.Format(time.TimeOnly))
	if want := h.now.Add(121 * time.Second); !c.Req.BeginTime.Equal(want) {
		t.Fatalf("requeued begin time %v, want now+121s %v", c.Req.BeginTime, want)
	}
}

// TestS3Step4CharlieGivesWay: bob's interactive gpu:4 job may preempt
// batch-lowprio but not research: while alice's job holds the GPUs it
// waits (alice's job is not touched); charlie's requeued job gives way:
// bob's job starts first when alice's ends, and when charlie's job runs
// again, a new bob job requeues it.
func TestS3Step4CharlieGivesWay(t *testing.T) {
	h := qosDemo(t)
	c := h.mustSubmit("charlie", "--qos=batch-lowprio --gres=gpu:8 --nodes=2 --time=04:00:00")
	a := h.mustSubmit("alice", "--qos=research --gres=gpu:8 --nodes=2 --time=02:00:00 --run=30")
	h.expectState(c.ID, JobPending, ReasonBeginTime)
	b := h.mustSubmit("bob", "--qos=interactive --gres=gpu:4 --nodes=1 --time=00:10:00 --run=10")
	h.expectState(a.ID, JobRunning, "")
	h.expectState(b.ID, JobPending, ReasonResources)
	if len(h.lastPlan.Preemptions) != 0 {
		t.Fatalf("interactive must not preempt research: %+v", h.lastPlan.Preemptions)
	}
	h.advance(30 * time.Minute) // alice's job ends
	h.expectState(a.ID, JobCompleted, "")
	h.expectState(b.ID, JobRunning, "")
	h.expectState(c.ID, JobPending, ReasonResources)
	h.advance(10 * time.Minute) // bob's job ends, charlie's runs again
	h.expectState(c.ID, JobRunning, "")
	b2 := h.mustSubmit("bob", "--qos=interactive --gres=gpu:4 --nodes=1 --time=00:10:00")
	h.expectState(b2.ID, JobRunning, "")
	h.expectState(c.ID, JobPending, ReasonBeginTime)
	if len(c.Runs) != 2 || c.Runs[1].State != JobPreempted {
		t.Fatalf("charlie's second run: %+v", c.Runs)
	}
}

// TestS5PartitionPrioritySuspendGang: four 1-CPU jobs fill the node in
// debug; a hipri job (PriorityTier 2) starts at once and one debug job is
// SUSPENDED; when the hipri job ends the suspended job resumes and its
// time limit is extended by the time it spent suspended. Moving a pending
// debug job to hipri (scontrol update partition=hipri) escalates it the
// same way.
func TestS5PartitionPrioritySuspendGang(t *testing.T) {
	h := newHarness(t, partitionPrioConf)
	var debug []*Job
	for i := 0; i < 4; i++ {
		debug = append(debug, h.mustSubmit("u", "-p debug -n 1 --time=01:00:00"))
	}
	for _, j := range debug {
		h.expectState(j.ID, JobRunning, "")
	}
	h.advance(5 * time.Minute)
	hi := h.mustSubmit("u", "-p hipri -n 1 --time=00:30:00 --run=10")
	h.expectState(hi.ID, JobRunning, "")
	var susp *Job
	for _, j := range debug {
		if j.State.Base() == JobSuspended {
			if susp != nil {
				t.Fatalf("more than one debug job suspended")
			}
			susp = j
		}
	}
	if susp == nil {
		t.Fatalf("no debug job suspended; preemptions %+v", h.lastPlan.Preemptions)
	}
	t.Logf("job %d suspended by hipri job %d", susp.ID, hi.ID)
	endBefore := susp.EndTime
	h.advance(10 * time.Minute) // the hipri job ends: its shadow is gone
	h.expectState(hi.ID, JobCompleted, "")
	h.expectState(susp.ID, JobRunning, "")
	if susp.Suspended != 10*time.Minute || !susp.EndTime.Equal(endBefore.Add(10*time.Minute)) {
		t.Fatalf("resumed job: suspended %v end %v, want 10m and %v", susp.Suspended, susp.EndTime, endBefore.Add(10*time.Minute))
	}
	t.Logf("job %d resumed; time limit extended by %v to end %s", susp.ID, susp.Suspended, susp.EndTime.Format(time.TimeOnly))

	// Escalation: a fifth debug job waits; moved to hipri it preempts.
	p := h.mustSubmit("u", "-p debug -n 1 --time=00:20:00")
	h.expectState(p.ID, JobPending, ReasonResources)
	if err := h.st.UpdatePartition(p.ID, []string{"hipri"}); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	h.expectState(p.ID, JobRunning, "")
	if n := h.countState(JobSuspended, nil); n != 1 {
		t.Fatalf("escalated job: %d suspended jobs, want 1", n)
	}
	if got := h.st.Cluster.Partitions[p.Partition].Name; got != "hipri" {
		t.Fatalf("escalated job runs in %s", got)
	}
}

const s6Conf = `ClusterName=s6
SlurmctldHost=ctl
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageEnforce=associations,limits,qos
PreemptType=preempt/qos
PreemptMode=SUSPEND,GANG
NodeName=n1 CPUs=4 RealMemory=8000
PartitionName=debug Nodes=ALL Default=YES OverSubscribe=FORCE:1 MaxTime=INFINITE State=UP
`

const s6Acct = `sacctmgr -i add account physics
sacctmgr -i add qos high Priority=10 Preempt=normal PreemptMode=gang,suspend
sacctmgr -i add user u DefaultAccount=physics
sacctmgr -i modify account physics set qos+=normal,high
`

// TestS6QOSSuspendGang: five normal jobs on the 4-CPU node (4 run, one
// pends with Resources); a --qos=high job suspends one normal job and
// runs; when it ends the suspended job resumes.
func TestS6QOSSuspendGang(t *testing.T) {
	h := newHarness(t, s6Conf)
	h.sacctmgr(s6Acct)
	var normal []*Job
	for i := 0; i < 5; i++ {
		normal = append(normal, h.mustSubmit("u", "-n 1 --time=01:00:00"))
	}
	for _, j := range normal[:4] {
		h.expectState(j.ID, JobRunning, "")
	}
	h.expectState(normal[4].ID, JobPending, ReasonResources)
	hi := h.mustSubmit("u", "--qos=high -n 1 --time=00:10:00")
	h.expectState(hi.ID, JobRunning, "")
	if n := h.countState(JobSuspended, nil); n != 1 {
		t.Fatalf("%d jobs suspended, want 1 (preemptions %+v)", n, h.lastPlan.Preemptions)
	}
	h.expectState(normal[4].ID, JobPending, ReasonResources)
	h.advance(10 * time.Minute)
	h.expectState(hi.ID, JobTimeout, "")
	if n := h.countState(JobSuspended, nil); n != 0 {
		t.Fatalf("after the high job: %d jobs still suspended", n)
	}
	h.expectState(normal[4].ID, JobPending, ReasonResources)
}

// TestPreemptVictimOrder: victims are taken lowest QOS priority first,
// then fewest nodes, and only as many as needed.
func TestPreemptVictimOrder(t *testing.T) {
	h := newHarness(t, `ClusterName=v
SlurmctldHost=ctl
SelectTypeParameters=CR_CPU
AccountingStorageEnforce=associations,limits,qos
PreemptType=preempt/qos
PreemptMode=CANCEL
NodeName=n[1-4] CPUs=4 RealMemory=8000
PartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`)
	h.sacctmgr(`sacctmgr -i add account a
sacctmgr -i add qos low Priority=10
sacctmgr -i add qos mid Priority=20
sacctmgr -i add qos top Priority=100 Preempt=low,mid
sacctmgr -i add user u DefaultAccount=a
sacctmgr -i modify account a set qos+=low,mid,top
`)
	mid := h.mustSubmit("u", "--qos=mid -N 1 --exclusive --time=1:00:00")
	lowBig := h.mustSubmit("u", "--qos=low -N 2 --exclusive --time=1:00:00")
	lowSmall := h.mustSubmit("u", "--qos=low -N 1 --exclusive --time=1:00:00")
	top := h.mustSubmit("u", "--qos=top -N 1 --exclusive --time=1:00:00")
	h.expectState(top.ID, JobRunning, "")
	h.expectState(lowSmall.ID, JobPreempted, "")
	h.expectState(lowBig.ID, JobRunning, "")
	h.expectState(mid.ID, JobRunning, "")
	top2 := h.mustSubmit("u", "--qos=top -N 2 --exclusive --time=1:00:00")
	h.expectState(top2.ID, JobRunning, "")
	h.expectState(lowBig.ID, JobPreempted, "")
	h.expectState(mid.ID, JobRunning, "")
}

// TestPreemptExemptAndGrace: a job younger than PreemptExemptTime is not
// a candidate; with GraceTime the victim is signalled now and the
// preemptor waits until the victim ends.
func TestPreemptExemptAndGrace(t *testing.T) {
	conf := `ClusterName=g
SlurmctldHost=ctl
SelectTypeParameters=CR_CPU
PreemptType=preempt/partition_prio
PreemptMode=CANCEL
PreemptExemptTime=00:05:00
NodeName=n1 CPUs=4 RealMemory=8000
PartitionName=low Nodes=ALL Default=YES PriorityTier=1 GraceTime=60 MaxTime=INFINITE State=UP
PartitionName=high Nodes=ALL PriorityTier=2 MaxTime=INFINITE State=UP
`
	h := newHarness(t, conf)
	lo := h.mustSubmit("u", "-p low -n 4 --time=1:00:00")
	hi := h.mustSubmit("u", "-p high -n 4 --time=1:00:00")
	h.expectState(hi.ID, JobPending, ReasonResources)
	if len(h.lastPlan.Preemptions) != 0 {
		t.Fatalf("a job within PreemptExemptTime was preempted")
	}
	h.advance(5 * time.Minute)
	if len(h.lastPlan.Preemptions) != 1 || !h.lastPlan.Preemptions[0].GraceEnd.Equal(h.now.Add(time.Minute)) {
		t.Fatalf("after the exempt time: preemptions %+v, want one with a 60 s grace", h.lastPlan.Preemptions)
	}
	h.expectState(hi.ID, JobPending, ReasonResources)
	h.expectState(lo.ID, JobRunning, "")
	if lo.PreemptTime.IsZero() || !lo.EndTime.Equal(h.now.Add(time.Minute)) {
		t.Fatalf("victim: preempt time %v end %v, want signalled now and killed at now+60s", lo.PreemptTime, lo.EndTime)
	}
	h.schedule()
	if len(h.lastPlan.Preemptions) != 0 {
		t.Fatalf("a job in its grace time must not be preempted again, nor others chosen: %+v", h.lastPlan.Preemptions)
	}
	// The driver's side at the end of the grace time: the victim ends
	// PREEMPTED (CANCEL mode), and the preemptor starts.
	if got := h.st.GraceExpired(h.now.Add(59 * time.Second)); len(got) != 0 {
		t.Fatalf("grace not over yet: %+v", got)
	}
	h.now = h.now.Add(time.Minute)
	exp := h.st.GraceExpired(h.now)
	if len(exp) != 1 || exp[0].Job != lo.ID || exp[0].Mode != PreemptCancel {
		t.Fatalf("grace expired: %+v", exp)
	}
	if err := h.st.Preempted(exp[0].Job, exp[0].Mode, h.now); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	h.expectState(lo.ID, JobPreempted, "")
	h.expectState(hi.ID, JobRunning, "")
}

// TestTimesliceForceGang: in a partition with OverSubscribe=FORCE:2 and
// PreemptMode=GANG two jobs that each want the whole node both start
// (sharing the CPUs); every SchedulerTimeSlice the driver calls Timeslice,
// which keeps one active and suspends the other, in turns, the
// longest-suspended job first. Each job's end moves by the time it spent
// suspended.
func TestTimesliceForceGang(t *testing.T) {
	h := newHarness(t, `ClusterName=g
SlurmctldHost=ctl
SelectTypeParameters=CR_CPU
PreemptMode=GANG
NodeName=n1 CPUs=4 RealMemory=8000
PartitionName=p Nodes=ALL Default=YES OverSubscribe=FORCE:2 MaxTime=INFINITE State=UP
`)
	a := h.mustSubmit("u", "-n 4 --mem=1000 --time=1:00:00")
	b := h.mustSubmit("u", "-n 4 --mem=1000 --time=1:00:00")
	h.expectState(a.ID, JobRunning, "")
	h.expectState(b.ID, JobRunning, "")
	slice := h.st.Config.SchedulerTimeSlice
	states := func() string { return a.State.Base().String() + "/" + b.State.Base().String() }
	want := []string{"RUNNING/SUSPENDED", "SUSPENDED/RUNNING", "RUNNING/SUSPENDED"}
	for i, w := range want {
		h.now = h.now.Add(slice)
		plan := Timeslice(h.st, h.now, h.st.Config)
		h.st.Apply(&plan)
		if got := states(); got != w {
			t.Fatalf("slice %d: %s, want %s (plan %+v)", i+1, got, w, plan)
		}
		t.Logf("slice %d at %s: %s", i+1, h.now.Format(time.TimeOnly), states())
	}
	// b was suspended in slice 1 and resumed in slice 2: one slice.
	if b.Suspended != slice || !b.EndTime.Equal(b.StartTime.Add(time.Hour+slice)) {
		t.Fatalf("b suspended %v end %v", b.Suspended, b.EndTime)
	}
}

// TestGrpLimitBlocksPreemption: a job over its QOS Grp limit does not
// preempt to make room (SEMANTICS §6.1).
func TestGrpLimitBlocksPreemption(t *testing.T) {
	h := newHarness(t, `ClusterName=v
SlurmctldHost=ctl
SelectTypeParameters=CR_CPU
AccountingStorageEnforce=associations,limits,qos
PreemptType=preempt/qos
PreemptMode=CANCEL
NodeName=n1 CPUs=4 RealMemory=8000
PartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`)
	h.sacctmgr(`sacctmgr -i add account a
sacctmgr -i add qos low
sacctmgr -i add qos top Priority=100 Preempt=low GrpTRES=cpu=2
sacctmgr -i add user u DefaultAccount=a
sacctmgr -i modify account a set qos+=low,top
`)
	low := h.mustSubmit("u", "--qos=low -n 2 --time=1:00:00")
	top1 := h.mustSubmit("u", "--qos=top -n 2 --time=1:00:00")
	h.expectState(low.ID, JobRunning, "")
	h.expectState(top1.ID, JobRunning, "")
	top2 := h.mustSubmit("u", "--qos=top -n 2 --time=1:00:00")
	h.expectState(top2.ID, JobPending, "QOSGrpCpuLimit")
	h.expectState(low.ID, JobRunning, "")
	if len(h.lastPlan.Preemptions) != 0 {
		t.Fatalf("a job over its Grp limit preempted: %+v", h.lastPlan.Preemptions)
	}
}

// TestOperatorSuspendIsNotResumedByGang: a job suspended with `scontrol
// suspend` stays suspended although its CPUs are free; a preempted one
// resumes.
func TestOperatorSuspendIsNotResumedByGang(t *testing.T) {
	h := newHarness(t, partitionPrioConf)
	j := h.mustSubmit("u", "-p debug -n 1 --time=01:00:00")
	if err := h.st.Suspend(j.ID, h.now); err != nil {
		t.Fatal(err)
	}
	h.advance(10 * time.Minute)
	h.expectState(j.ID, JobSuspended, "")
	if err := h.st.Resume(j.ID, h.now); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	h.expectState(j.ID, JobRunning, "")
}

// TestPreemptRequeueFallsBackToCancelAndWithin: under REQUEUE a job that
// may not be requeued (--no-requeue) is cancelled instead (final state
// PREEMPTED); with WITHIN a job may preempt a lower-priority job of its
// own QOS, never an equal-priority one.
func TestPreemptRequeueFallsBackToCancelAndWithin(t *testing.T) {
	h := newHarness(t, `ClusterName=w
SlurmctldHost=ctl
SelectTypeParameters=CR_CPU
AccountingStorageEnforce=associations,limits,qos
PreemptType=preempt/qos
PreemptMode=REQUEUE,WITHIN
NodeName=n1 CPUs=4 RealMemory=8000
PartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`)
	h.sacctmgr(`sacctmgr -i add account a
sacctmgr -i add user u DefaultAccount=a
`)
	low := h.submitWithPriority("u", "-n 4 --time=1:00:00 --no-requeue", 10)
	h.schedule()
	h.expectState(low.ID, JobRunning, "")
	same := h.submitWithPriority("u", "-n 4 --time=1:00:00", 10)
	h.schedule()
	h.expectState(same.ID, JobPending, ReasonResources)
	h.expectState(low.ID, JobRunning, "")
	high := h.submitWithPriority("u", "-n 4 --time=1:00:00", 20)
	h.schedule()
	h.expectState(high.ID, JobRunning, "")
	h.expectState(low.ID, JobPreempted, "")
	if len(low.Runs) != 0 {
		t.Fatalf("a job that may not be requeued must end, not requeue: runs %+v", low.Runs)
	}
}

// TestPreemptModeResolution: the mode comes from the victim's QOS
// (preempt/qos) or the victim's partition (preempt/partition_prio), else
// the cluster's PreemptMode; OFF protects the job.
func TestPreemptModeResolution(t *testing.T) {
	for _, tc := range []struct {
		name, typ, global, qosMode, partMode string
		want                                 PreemptMode // 0: not preempted
	}{
		{"qos: cluster REQUEUE", "preempt/qos", "REQUEUE", "", "", PreemptRequeue},
		{"qos: victim QOS CANCEL overrides", "preempt/qos", "REQUEUE", "PreemptMode=cancel", "", PreemptCancel},
		{"qos: victim QOS OFF", "preempt/qos", "REQUEUE", "PreemptMode=off", "", 0},
		{"partition: cluster CANCEL", "preempt/partition_prio", "CANCEL", "", "", PreemptCancel},
		{"partition: victim partition REQUEUE", "preempt/partition_prio", "CANCEL", "", "PreemptMode=REQUEUE", PreemptRequeue},
		{"partition: victim partition OFF", "preempt/partition_prio", "CANCEL", "", "PreemptMode=OFF", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, `ClusterName=m
SlurmctldHost=ctl
SelectTypeParameters=CR_CPU
AccountingStorageEnforce=associations,limits,qos
PreemptType=`+tc.typ+`
PreemptMode=`+tc.global+`
NodeName=n1 CPUs=4 RealMemory=8000
PartitionName=low Nodes=ALL Default=YES PriorityTier=1 MaxTime=INFINITE State=UP `+tc.partMode+`
PartitionName=high Nodes=ALL PriorityTier=2 MaxTime=INFINITE State=UP
`)
			h.sacctmgr(`sacctmgr -i add account a
sacctmgr -i add qos lowq ` + tc.qosMode + `
sacctmgr -i add qos highq Priority=10 Preempt=lowq
sacctmgr -i add user u DefaultAccount=a
sacctmgr -i modify account a set qos+=lowq,highq
`)
			v := h.mustSubmit("u", "-p low --qos=lowq -n 4 --time=1:00:00")
			p := h.mustSubmit("u", "-p high --qos=highq -n 4 --time=1:00:00")
			var got PreemptMode
			for _, pr := range h.lastPlan.Preemptions {
				if pr.Job == v.ID {
					got = pr.Mode
				}
			}
			if got != tc.want {
				t.Fatalf("victim preempted with mode %v, want %v (preemptor %s)", got, tc.want, p.State)
			}
		})
	}
}

// TestPreemptVictimOrderByJobID: among candidates of equal preempt
// priority (same QOS, one node each), the lowest job id goes first, not
// the youngest. Oracle (preempt/qos, REQUEUE, 4 nodes of 8 CPUs): eight
// low jobs of 4 CPUs (1-8, two per node in order); a high job of 4 CPUs
// requeued job 1; a high job of 8 CPUs requeued jobs 2 and 3 (and ran on
// n[1-2]); job 1, started again on n4 (now the youngest job, on the last
// node), was the one a third high job of 4 CPUs requeued.
func TestPreemptVictimOrderByJobID(t *testing.T) {
	h := newHarness(t, `ClusterName=v
SlurmctldHost=ctl
SelectTypeParameters=CR_CPU
AccountingStorageEnforce=associations,limits,qos
PreemptType=preempt/qos
PreemptMode=REQUEUE
NodeName=n[1-4] CPUs=8 RealMemory=64000
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`)
	h.sacctmgr(`sacctmgr -i add account a
sacctmgr -i add qos low
sacctmgr -i add qos high Priority=100 Preempt=low
sacctmgr -i add user u DefaultAccount=a
sacctmgr -i modify account a set qos+=low,high
`)
	var low []*Job
	for i := 0; i < 8; i++ {
		low = append(low, h.mustSubmit("u", "--qos=low -n 4"))
		h.advance(time.Second)
	}
	preempted := func(step string, want ...*Job) {
		t.Helper()
		var got, exp []JobID
		for _, p := range h.lastPlan.Preemptions {
			got = append(got, p.Job)
		}
		for _, j := range want {
			exp = append(exp, j.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(exp) {
			t.Fatalf("%s: preempted %v, want %v", step, got, exp)
		}
	}
	h.mustSubmit("u", "--qos=high -n 4")
	preempted("high -n4", low[0])
	h.advance(10 * time.Second)
	h2 := h.mustSubmit("u", "--qos=high -n 8")
	preempted("high -n8", low[1], low[2])
	if got := h.nodes(h2.ID); fmt.Sprint(got) != "[n1 n2]" {
		t.Fatalf("high -n8 on %v, want n1 n2", got)
	}
	h.now = low[0].Req.BeginTime // job 1 eligible again, 2 and 3 not yet
	if err := h.st.Cancel(low[6].ID, h.now); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	h.expectState(low[0].ID, JobRunning, "")
	if got := h.nodes(low[0].ID); fmt.Sprint(got) != "[n4]" {
		t.Fatalf("job 1 restarted on %v, want n4", got)
	}
	h.advance(time.Second)
	h.mustSubmit("u", "--qos=high -n 4")
	preempted("high -n4 after job 1 restarted", low[0])
}

// TestGangResumesTheVictimOfTheEndedPreemptor: a suspended job resumes
// when its own preemptor ends, not the longest-suspended one. Oracle
// (partition_prio, SUSPEND,GANG, debug FORCE:1 tier 1, hipri tier 2):
// j1 and j2 (4 CPUs each) fill n1; h1 (hipri, 4 CPUs, 100 s) suspended
// j1, then h2 (40 s) suspended j2; when h2 ended j2 resumed (end time
// +40 s) while j1 stayed suspended until h1 ended.
func TestGangResumesTheVictimOfTheEndedPreemptor(t *testing.T) {
	h := newHarness(t, strings.Replace(partitionPrioConf, "CPUs=4", "CPUs=8", 1))
	j1 := h.mustSubmit("u", "-p debug -n 4 --time=10:00")
	j2 := h.mustSubmit("u", "-p debug -n 4 --time=10:00")
	h.advance(6 * time.Second)
	h1 := h.mustSubmit("u", "-p hipri -n 4 --run=00:01:40")
	h.expectState(j1.ID, JobSuspended, "")
	h.advance(5 * time.Second)
	h2 := h.mustSubmit("u", "-p hipri -n 4 --run=00:00:40")
	h.expectState(j2.ID, JobSuspended, "")
	end2 := j2.EndTime
	h.advance(41 * time.Second)
	h.expectState(h2.ID, JobCompleted, "")
	h.expectState(j2.ID, JobRunning, "")
	h.expectState(j1.ID, JobSuspended, "")
	if want := end2.Add(40 * time.Second); !j2.EndTime.Equal(want) {
		t.Errorf("j2 resumed with end %v, want %v (extended by the 40 s suspended)", j2.EndTime, want)
	}
	h.advance(60 * time.Second)
	h.expectState(h1.ID, JobCompleted, "")
	h.expectState(j1.ID, JobRunning, "")
}

// TestPreemptTimes: scontrol's PreemptEligibleTime is the start plus the
// job's PreemptExemptTime, and PreemptTime when it was preempted. Oracle
// (preempt/qos): a lowx job (QOS PreemptExemptTime=00:01:30) started
// 16:51:24 showed PreemptEligibleTime=16:52:54 PreemptTime=None; a lowc
// job (PreemptMode=cancel) preempted at 16:51:28 showed
// JobState=PREEMPTED Reason=None ExitCode=0:0, EndTime and PreemptTime
// 16:51:28, and its grace-time twin kept PreemptTime at the signal.
func TestPreemptTimes(t *testing.T) {
	h := newHarness(t, `ClusterName=v
SlurmctldHost=ctl
SelectTypeParameters=CR_CPU
AccountingStorageEnforce=associations,limits,qos
PreemptType=preempt/qos
PreemptMode=REQUEUE
NodeName=n[1-2] CPUs=8 RealMemory=64000
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`)
	h.sacctmgr(`sacctmgr -i add account a
sacctmgr -i add qos lowc PreemptMode=cancel
sacctmgr -i add qos lowx PreemptExemptTime=00:01:30
sacctmgr -i add qos high Priority=100 Preempt=lowc,lowx
sacctmgr -i add user u DefaultAccount=a
sacctmgr -i modify account a set qos+=lowc,lowx,high
`)
	c := h.mustSubmit("u", "--qos=lowc -w n1 -n 8")
	x := h.mustSubmit("u", "--qos=lowx -w n2 -n 8")
	if got := PreemptEligibleTime(&h.st.Config, h.st.Policy, x); !got.Equal(x.StartTime.Add(90 * time.Second)) {
		t.Errorf("lowx PreemptEligibleTime %v, want start+90s %v", got, x.StartTime.Add(90*time.Second))
	}
	if got := PreemptEligibleTime(&h.st.Config, h.st.Policy, c); !got.Equal(c.StartTime) {
		t.Errorf("lowc PreemptEligibleTime %v, want its start %v", got, c.StartTime)
	}
	h.advance(4 * time.Second)
	h.mustSubmit("u", "--qos=high -w n1 -n 8")
	h.expectState(c.ID, JobPreempted, "")
	if !c.PreemptTime.Equal(h.now) || !c.EndTime.Equal(h.now) || c.ExitCode != 0 {
		t.Errorf("cancelled victim: PreemptTime %v EndTime %v exit %d, want %v, %v, 0", c.PreemptTime, c.EndTime,
			c.ExitCode, h.now, h.now)
	}
	if !x.PreemptTime.IsZero() {
		t.Errorf("job not preempted has PreemptTime %v", x.PreemptTime)
	}
}

// TestQOSSuspendGangSwapsBack: with QOS preemption and SUSPEND,GANG in a
// FORCE:1 partition, the gang scheduler (which knows only partition
// tiers) gives the cores back to the job it tracked first: the high-QOS
// job ends suspended and its victim running (oracle,
// preempt-qos-suspend scenario: "1 n1 normal R", "6 h1 high S").
func TestQOSSuspendGangSwapsBack(t *testing.T) {
	h := newHarness(t, s6Conf)
	h.sacctmgr(s6Acct)
	var normal []*Job
	for i := 0; i < 5; i++ {
		normal = append(normal, h.mustSubmit("u", "-n 1 --time=01:00:00"))
	}
	h.advance(time.Minute)
	hi := h.mustSubmit("u", "--qos=high -n 1 --time=00:10:00")
	h.schedule()
	h.expectState(hi.ID, JobSuspended, "")
	for _, j := range normal[:4] {
		h.expectState(j.ID, JobRunning, "")
	}
	h.expectState(normal[4].ID, JobPending, ReasonResources)
	h.schedule()
	h.expectState(hi.ID, JobSuspended, "") // no flip-flop
}
