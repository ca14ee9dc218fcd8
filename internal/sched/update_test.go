package sched

import (
	"errors"
	"testing"
	"time"
)

func TestUpdate(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, "PartitionName=short Nodes=node1 MaxTime=30"))
	run := h.mustSubmit("u", "-n 4 --time=1:00:00")
	wait := h.mustSubmit("u", "-n 4 --time=1:00:00")
	h.expectState(wait.ID, JobPending, ReasonResources)
	d := 20 * time.Minute
	if err := h.st.Update(run.ID, JobUpdate{TimeLimit: &d}, false, h.now); err != nil {
		t.Fatalf("lowering a running job's limit: %v", err)
	}
	if !run.EndTime.Equal(run.StartTime.Add(d)) {
		t.Fatalf("end time %v", run.EndTime)
	}
	up := 2 * time.Hour
	if err := h.st.Update(run.ID, JobUpdate{TimeLimit: &up}, false, h.now); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("a user raised a running limit: %v", err)
	}
	if err := h.st.Update(run.ID, JobUpdate{Partitions: []string{"short"}}, true, h.now); !errors.Is(err, ErrNotPending) {
		t.Fatalf("moved a running job: %v", err)
	}
	if err := h.st.Update(wait.ID, JobUpdate{Partitions: []string{"nosuch"}}, true, h.now); !errors.Is(err, ErrInvalidPartition) {
		t.Fatalf("unknown partition: %v", err)
	}
	if wait.Req.Partitions != nil {
		t.Fatal("a refused update changed the job")
	}
	prio := uint32(5)
	if err := h.st.Update(wait.ID, JobUpdate{Priority: &prio}, false, h.now); !errors.Is(err, ErrAccessDenied) {
		t.Fatalf("user set a priority: %v", err)
	}
	if err := h.st.Update(wait.ID, JobUpdate{Partitions: []string{"short"}, TimeLimit: &d}, false, h.now); err != nil {
		t.Fatal(err)
	}
	h.advance(20 * time.Minute)
	h.expectState(wait.ID, JobRunning, "")
	if h.st.Cluster.Partitions[wait.Partition].Name != "short" {
		t.Fatal("job did not run in its new partition")
	}
}
