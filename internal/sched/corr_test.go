package sched

import (
	"testing"
	"time"
)

// TestAfterCorrTaskByTask: aftercorr holds each task of an array until
// the task of the same index of the other array ended OK (Slurm tests the
// tasks one by one): a task whose other task failed, or that the other
// array never had, stays pending with DependencyNeverSatisfied while the
// others run.
func TestAfterCorrTaskByTask(t *testing.T) {
	h := newHarness(t, cpuConf(4, 4, ""))
	// The first array's tasks run one after the other, 5 minutes each.
	first := h.mustSubmit("u", "--array=0-3%1 -n 1 --time=10 --run=5")
	second := h.mustSubmit("u", "--array=0-5 -n 1 --time=10 --run=1 -d aftercorr:"+itoa(first.ID))
	task := func(arr JobID, i int32) *Job {
		for _, j := range h.st.Jobs() {
			if j.Array != nil && j.Array.JobID == arr && (j.Array.TaskID == i || j.Array.TaskID < 0 && j.Array.Tasks.Has(int(i))) {
				return j
			}
		}
		t.Fatalf("task %d_%d not found", arr, i)
		return nil
	}
	h.advance(6 * time.Minute) // first_0 done, first_1 running
	if j := task(second.ID, 0); j.State.Base() != JobCompleted {
		t.Fatalf("second_0: %v", j.State)
	}
	if j := task(second.ID, 1); j.State.Base() != JobPending || j.Reason != ReasonDependency {
		t.Fatalf("second_1 started before first_1 ended: %v %s", j.State, j.Reason)
	}
	// first_2 fails (it is cancelled while running).
	h.advance(5 * time.Minute)
	if err := h.st.Cancel(task(first.ID, 2).ID, h.now); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	h.advance(20 * time.Minute)
	for i, want := range []JobState{JobCompleted, JobCompleted, JobPending, JobCompleted, JobPending, JobPending} {
		if got := task(second.ID, int32(i)).State.Base(); got != want {
			t.Errorf("second_%d: %v, want %v", i, got, want)
		}
	}
	h.expectState(task(second.ID, 2).ID, JobPending, ReasonDependencyNeverSatisfied)
}
