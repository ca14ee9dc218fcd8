package sched

import (
	"reflect"
	"testing"
	"time"
)

// TestScheduleIsDeterministicAndPure: the same state and time give the
// same plan, and Schedule leaves the state as it found it (only Apply
// changes it).
func TestScheduleIsDeterministicAndPure(t *testing.T) {
	h := newHarness(t, qosDemoConf)
	h.sacctmgr(qosDemoAcct)
	h.mustSubmit("alice", "--qos=research --gres=gpu:4 --time=1:00:00 --mem=1000")
	for i := 0; i < 5; i++ {
		h.queue("bob", "--qos=interactive --gres=gpu:1 --time=10 --mem=1000")
		h.queue("charlie", "--qos=batch-lowprio --array=0-9%3 --gres=gpu:1 --time=2:00:00 --mem=1000")
	}
	h.now = h.now.Add(time.Minute)
	before := snapshotJobs(h.st)
	p1 := Schedule(h.st, h.now, h.st.Config)
	p2 := Schedule(h.st, h.now, h.st.Config)
	if !reflect.DeepEqual(p1, p2) {
		t.Fatal("two cycles on the same state differ")
	}
	if after := snapshotJobs(h.st); !reflect.DeepEqual(before, after) {
		t.Fatal("Schedule changed the state")
	}
	if len(p1.Starts) == 0 || len(p1.Pending) == 0 {
		t.Fatalf("plan: %d starts, %d pending: the test needs both", len(p1.Starts), len(p1.Pending))
	}
	t.Logf("plan: %d starts, %d pending", len(p1.Starts), len(p1.Pending))
}

type jobSnap struct {
	State  JobState
	Reason Reason
	Nodes  []int32
	Prio   uint32
}

func snapshotJobs(st *State) map[JobID]jobSnap {
	out := map[JobID]jobSnap{}
	for _, j := range st.Jobs() {
		out[j.ID] = jobSnap{j.State, j.Reason, append([]int32(nil), j.Alloc.Nodes...), j.Priority}
	}
	for i, n := range st.Cluster.Nodes {
		out[JobID(1<<30+i)] = jobSnap{State: JobState(n.State), Nodes: []int32{n.AllocCPUs, int32(n.AllocMem), n.Jobs}}
	}
	return out
}

// TestMultiPartitionRunsWhereItFits: a job submitted to two partitions
// runs in whichever can start it.
func TestMultiPartitionRunsWhereItFits(t *testing.T) {
	h := newHarness(t, `ClusterName=m
SlurmctldHost=h
SelectTypeParameters=CR_CPU
NodeName=a1 CPUs=4 RealMemory=1000
NodeName=b1 CPUs=4 RealMemory=1000
PartitionName=pa Nodes=a1 Default=YES PriorityTier=2
PartitionName=pb Nodes=b1 PriorityTier=1
`)
	h.mustSubmit("u", "-p pa -n 4 --time=10")
	j := h.mustSubmit("u", "-p pa,pb -n 4 --time=10")
	h.expectState(j.ID, JobRunning, "")
	if got := h.st.Cluster.Partitions[j.Partition].Name; got != "pb" {
		t.Fatalf("ran in %s", got)
	}
}
