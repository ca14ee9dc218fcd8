package sched

import (
	"testing"
	"time"
)

func TestNodeFail(t *testing.T) {
	h := newHarness(t, cpuConf(2, 4, ""))
	requeued := h.mustSubmit("u", "-n 4 -w node1 --time=1:00:00")
	lost := h.mustSubmit("u", "-n 4 -w node2 --time=1:00:00 --no-requeue")
	if _, err := h.st.NodeFail("node1", "Not responding", h.now); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.NodeFail("node2", "Not responding", h.now); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	h.expectState(requeued.ID, JobPending, ReasonBeginTime)
	if requeued.Runs[0].State != JobNodeFail {
		t.Fatalf("run record %s", requeued.Runs[0].State)
	}
	h.expectState(lost.ID, JobNodeFail, "")
	if s := h.st.Cluster.Nodes[0].State; s.Base() != NodeDown || s.Short() != "down" {
		t.Fatalf("node state %s", s)
	}
	h.advance(5 * time.Minute)
	h.expectState(requeued.ID, JobPending, ReasonReqNodeNotAvail)
	if requeued.StateDesc != "ReqNodeNotAvail, UnavailableNodes:node1" {
		t.Fatalf("state desc %q", requeued.StateDesc)
	}
}

func TestCancelArrayTask(t *testing.T) {
	h := newHarness(t, cpuConf(1, 1, ""))
	arr := h.mustSubmit("u", "--array=0-3 --time=10")
	if err := h.st.CancelArrayTask(arr.ID, 2, h.now); err != nil {
		t.Fatal(err)
	}
	if got := arr.JobIDString(); got != itoa(arr.ID)+"_[1,3]" {
		t.Fatalf("pending record %q", got)
	}
	// no record nor job id of its own (oracle: Slurm 24.11)
	if n := h.countState(JobCancelled, nil); n != 0 {
		t.Fatalf("%d cancelled records", n)
	}
	next := h.st.NextJobID
	if err := h.st.CancelArrayTask(arr.ID, 3, h.now); err != nil || h.st.NextJobID != next {
		t.Fatalf("task 3: %v, next id %d, want %d", err, h.st.NextJobID, next)
	}
	if err := h.st.CancelArrayTask(arr.ID, 2, h.now); err == nil {
		t.Fatal("cancelled a task twice")
	}
}
