package sched

import (
	"testing"
	"time"
)

// S3 (qos-demo), the steps that are the main scheduler's and submission's:
// 3 (GrpTRES with DenyOnLimit rejects), 5 (MaxWall rejects, MaxJobsPerUser
// pends) and 6 (arrays against MaxSubmitJobsPerUser / MaxJobsPerUser).
// Steps 1, 2 and 4 (preemption) are in the preemption tests.

func qosDemo(t *testing.T) *harness {
	h := newHarness(t, qosDemoConf)
	h.sacctmgr(qosDemoAcct)
	return h
}

func TestS3Step3GrpTRESDenyOnLimitRejects(t *testing.T) {
	h := qosDemo(t)
	before := h.st.NextJobID
	_, err := h.submit("bob", "--qos=interactive --gres=gpu:5 --nodes=1 --time=00:10:00")
	got := submitError(err)
	want := "sbatch: error: QOSGrpGRES\n" +
		"sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if h.st.NextJobID != before || len(h.st.Jobs()) != 0 {
		t.Fatalf("a rejected job must get no id: next id %d, %d jobs", h.st.NextJobID, len(h.st.Jobs()))
	}
	t.Logf("%s", got)
	// Within the cap the same user is accepted and runs.
	j := h.mustSubmit("bob", "--qos=interactive --gres=gpu:4 --nodes=1 --time=00:10:00")
	h.expectState(j.ID, JobRunning, "")
}

func TestS3Step5MaxWallAndMaxJobsPerUser(t *testing.T) {
	h := qosDemo(t)
	_, err := h.submit("bob", "--qos=interactive --gres=gpu:1 --time=02:00:00")
	want := "sbatch: error: QOSMaxWallDurationPerJobLimit\n" +
		"sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
	if got := submitError(err); got != want {
		t.Fatalf("--time over MaxWall: got\n%s\nwant\n%s", got, want)
	}
	var ids []JobID
	for i := 0; i < 3; i++ {
		ids = append(ids, h.mustSubmit("bob", "--qos=interactive --gres=gpu:1 --mem=1000 --time=00:10:00").ID)
	}
	h.expectState(ids[0], JobRunning, "")
	h.expectState(ids[1], JobRunning, "")
	h.expectState(ids[2], JobPending, ReasonQOSMaxJobsPerUserLimit)
	// Another user is not limited by bob's count.
	a := h.mustSubmit("alice", "--qos=interactive --gres=gpu:1 --mem=1000 --time=00:10:00")
	h.expectState(a.ID, JobRunning, "")
	// When one of bob's jobs ends, the third starts.
	h.advance(10 * time.Minute)
	h.expectState(ids[2], JobRunning, "")
}

func TestS3Step6ArraysAgainstSubmitAndRunLimits(t *testing.T) {
	h := qosDemo(t)
	h.sacctmgr("sacctmgr -i add qos submit10 MaxSubmitJobsPerUser=10\n" +
		"sacctmgr -i modify account batch set qos+=submit10")
	_, err := h.submit("charlie", "--qos=submit10 --array=0-99 --mem=1000 --time=01:00:00")
	want := "sbatch: error: QOSMaxSubmitJobPerUserLimit\n" +
		"sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
	if got := submitError(err); got != want {
		t.Fatalf("100 tasks over MaxSubmitJobsPerUser=10: got\n%s\nwant\n%s", got, want)
	}
	if len(h.st.Jobs()) != 0 {
		t.Fatalf("the whole array must be rejected, got %d jobs", len(h.st.Jobs()))
	}
	// Ten tasks are within MaxSubmitJobsPerUser=10.
	small := h.mustSubmit("charlie", "--qos=submit10 --array=0-9 --mem=1000 --time=01:00:00")
	if n := h.countState(JobRunning, nil); n != 10 {
		t.Fatalf("10-task array: %d running", n)
	}
	h.advance(time.Hour)
	if n := h.countState(JobTimeout, nil); n != 10 {
		t.Fatalf("10-task array: %d timed out after 1 h", n)
	}
	_ = small

	arr := h.mustSubmit("charlie", "--qos=batch-lowprio --array=0-99 --mem=1000 --time=01:00:00 --run=30")
	running := func() int {
		return h.countState(JobRunning, func(j *Job) bool { return j.Array != nil && j.Array.JobID == arr.ID })
	}
	if n := running(); n != 10 {
		t.Fatalf("MaxJobsPerUser=10: %d tasks running, want 10", n)
	}
	h.expectState(arr.ID, JobPending, ReasonQOSMaxJobsPerUserLimit)
	if got := arr.JobIDString(); got != itoa(arr.ID)+"_[10-99]" {
		t.Fatalf("pending record prints %q", got)
	}
	for step := 0; step < 12; step++ {
		if n := running(); n > 10 {
			t.Fatalf("step %d: %d tasks running", step, n)
		}
		h.advance(30 * time.Minute)
	}
	done := h.countState(JobCompleted, func(j *Job) bool { return j.Array != nil && j.Array.JobID == arr.ID })
	if done != 100 {
		t.Fatalf("after 6 h: %d of 100 tasks completed", done)
	}
	t.Logf("100 tasks ran at most 10 at a time, all completed")
}

func itoa(id JobID) string { return (&Job{ID: id}).JobIDString() }
