package sched

import (
	"errors"
	"testing"
	"time"
)

func TestParseArray(t *testing.T) {
	cases := []struct {
		spec     string
		want     string
		n        int
		throttle int32
		err      bool
	}{
		{spec: "0-99", want: "0-99", n: 100},
		{spec: "1,3,5", want: "1,3,5", n: 3},
		{spec: "0-10:2", want: "0,2,4,6,8,10", n: 6},
		{spec: "0-15%4", want: "0-15%4", n: 16, throttle: 4},
		{spec: "1-3,7,8", want: "1-3,7-8", n: 5},
		{spec: "1000", want: "1000", n: 1},
		{spec: "1001", err: true}, // MaxArraySize=1001: ids 0..1000
		{spec: "5-3", err: true},
		{spec: "", err: true},
		{spec: "a-b", err: true},
		{spec: "1:2", err: true},
		{spec: "0-4%x", err: true},
	}
	for _, c := range cases {
		tasks, n, thr, err := ParseArray(c.spec, 1001)
		if c.err {
			if !errors.Is(err, ErrInvalidArray) {
				t.Errorf("%q: err %v, want ErrInvalidArray", c.spec, err)
			}
			continue
		}
		if err != nil || n != c.n || thr != c.throttle || FormatArrayTasks(tasks, thr) != c.want {
			t.Errorf("%q: %q n=%d thr=%d err=%v", c.spec, FormatArrayTasks(tasks, thr), n, thr, err)
		}
	}
}

func TestArrayThrottleAndNaming(t *testing.T) {
	h := newHarness(t, cpuConf(4, 4, ""))
	arr := h.mustSubmit("u", "--array=1-6%2 -n 1 --time=10 --run=5")
	if got := h.countState(JobRunning, nil); got != 2 {
		t.Fatalf("%%2 throttle: %d running", got)
	}
	h.expectState(arr.ID, JobPending, ReasonJobArrayTaskLimit)
	if got := arr.JobIDString(); got != itoa(arr.ID)+"_[3-6%2]" {
		t.Fatalf("pending record %q", got)
	}
	var names []string
	for _, j := range h.st.Jobs() {
		if j.State.Base() == JobRunning {
			names = append(names, j.JobIDString())
		}
	}
	if len(names) != 2 || names[0] != itoa(arr.ID)+"_1" || names[1] != itoa(arr.ID)+"_2" {
		t.Fatalf("running tasks %v", names)
	}
	h.advance(15 * time.Minute)
	if n := h.countState(JobCompleted, nil); n != 6 {
		t.Fatalf("%d tasks completed", n)
	}
	// The last task runs under the array's own id.
	if last := h.job(arr.ID); last.Array.TaskID != 6 || last.JobIDString() != itoa(arr.ID)+"_6" {
		t.Fatalf("last task %s", last.JobIDString())
	}
}

func TestMaxArraySizeRejects(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, "MaxArraySize=10"))
	_, err := h.submit("u", "--array=0-10 --time=10")
	if !errors.Is(err, ErrInvalidArray) || err.Error() != "Invalid job array specification" {
		t.Fatalf("err %v", err)
	}
	h.mustSubmit("u", "--array=0-9 --time=10")
}

func TestDependencies(t *testing.T) {
	h := newHarness(t, cpuConf(4, 4, ""))
	ok := h.mustSubmit("u", "-n 1 --time=10 --run=5")
	bad := h.mustSubmit("u", "-n 1 --time=10")
	afterOK := h.mustSubmit("u", "-n 1 --time=10 -d afterok:"+itoa(ok.ID))
	afterNotOK := h.mustSubmit("u", "-n 1 --time=10 -d afternotok:"+itoa(ok.ID))
	afterAny := h.mustSubmit("u", "-n 1 --time=10 -d afterany:"+itoa(bad.ID))
	either := h.mustSubmit("u", "-n 1 --time=10 -d afterok:"+itoa(bad.ID)+"?afterok:"+itoa(ok.ID))
	after := h.mustSubmit("u", "-n 1 --time=10 -d after:"+itoa(bad.ID))
	for _, j := range []*Job{afterOK, afterNotOK, afterAny, either} {
		h.expectState(j.ID, JobPending, ReasonDependency)
	}
	h.expectState(after.ID, JobRunning, "")
	h.advance(5 * time.Minute) // ok completes with exit 0
	h.expectState(afterOK.ID, JobRunning, "")
	h.expectState(afterNotOK.ID, JobPending, ReasonDependencyNeverSatisfied)
	h.expectState(either.ID, JobRunning, "")
	h.expectState(afterAny.ID, JobPending, ReasonDependency)
	h.advance(5 * time.Minute) // bad times out
	h.expectState(bad.ID, JobTimeout, "")
	h.expectState(afterAny.ID, JobRunning, "")

	_, err := h.submit("u", "-d afterok:9999 --time=10")
	if !errors.Is(err, ErrDependency) {
		t.Fatalf("unknown job: %v", err)
	}
}

func TestSingleton(t *testing.T) {
	h := newHarness(t, cpuConf(2, 4, ""))
	a := h.mustSubmit("u", "-J same -d singleton -n 1 --time=10 --run=10")
	b := h.mustSubmit("u", "-J same -d singleton -n 1 --time=10")
	other := h.mustSubmit("v", "-J same -d singleton -n 1 --time=10")
	h.expectState(a.ID, JobRunning, "")
	h.expectState(b.ID, JobPending, ReasonDependency)
	h.expectState(other.ID, JobRunning, "")
	h.advance(10 * time.Minute)
	h.expectState(b.ID, JobRunning, "")
}

func TestAfterCorr(t *testing.T) {
	h := newHarness(t, cpuConf(4, 4, ""))
	first := h.mustSubmit("u", "--array=0-1 -n 1 --time=10 --run=5")
	second := h.mustSubmit("u", "--array=0-1 -n 1 --time=10 -d aftercorr:"+itoa(first.ID))
	h.expectState(second.ID, JobPending, ReasonDependency)
	h.advance(5 * time.Minute)
	if n := h.countState(JobRunning, func(j *Job) bool { return j.Array.JobID == second.ID }); n == 0 {
		t.Fatal("aftercorr tasks did not start after their counterparts")
	}
}

func TestParseDependency(t *testing.T) {
	cases := []struct {
		in   string
		out  string
		any  bool
		fail bool
	}{
		{in: "afterok:12:13,singleton", out: "afterok:12,afterok:13,singleton"},
		{in: "afterany:5?afternotok:6", out: "afterany:5?afternotok:6", any: true},
		{in: "after:7+10", out: "after:7+10"},
		{in: "afterok:3_4", out: "afterok:3_4"},
		{in: "afterok:1,afterany:2?after:3", out: "afterok:1?afterany:2?after:3", any: true},
		{in: "afterok:1+5", out: "afterok:1+5"},
		{in: "afterok:3_*+2", out: "afterok:3_*+2"},
		{in: "afterok:3:3,singleton,singleton", out: "afterok:3,singleton"},
		{in: "afterok:1?afterok:1", out: "afterok:1"},
		// Empty items are a "Job dependency problem" on Slurm 24.11.
		{in: "?after:1", fail: true},
		{in: ",after:1", fail: true},
		{in: "after:1,,after:1", fail: true},
		{in: "after:1??after:1", fail: true},
		{in: "after:1?", fail: true},
		{in: "after:1,?after:1", fail: true},
		{in: "after:3+0", fail: true},
		{in: "afterok:3:", fail: true},
		{in: "afterok:", fail: true},
		{in: "before:1", fail: true},
		{in: "afterok:x", fail: true},
	}
	for _, c := range cases {
		deps, any, err := ParseDependency(c.in)
		if c.fail {
			if !errors.Is(err, ErrDependency) {
				t.Errorf("%q: err %v", c.in, err)
			}
			continue
		}
		if err != nil || any != c.any || FormatDependency(deps, any) != c.out {
			t.Errorf("%q: %q any=%v err=%v", c.in, FormatDependency(deps, any), any, err)
		}
	}
}

// TestArraySetIsSmall: a small array keeps a small task set even with a
// huge MaxArraySize.
func TestArraySetIsSmall(t *testing.T) {
	tasks, n, _, err := ParseArray("0-9", 4000001)
	if err != nil || n != 10 || len(tasks) != 1 {
		t.Fatalf("words %d n %d err %v", len(tasks), n, err)
	}
}

// TestSetArrayThrottle: scontrol update ArrayTaskThrottle changes the
// throttle of every task of the array (0 lifts it); a plain job refuses.
func TestSetArrayThrottle(t *testing.T) {
	h := newHarness(t, cpuConf(4, 4, ""))
	arr := h.mustSubmit("u", "--array=1-8%2 -n 1 --time=10")
	plain := h.mustSubmit("u", "-n 1 --time=10")
	if got := h.countState(JobRunning, nil); got != 3 {
		t.Fatalf("%d running", got)
	}
	if err := h.st.SetArrayThrottle(arr.ID, 4); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	if got := h.countState(JobRunning, func(j *Job) bool { return j.Array != nil }); got != 4 {
		t.Fatalf("throttle 4: %d tasks running", got)
	}
	if got := arr.JobIDString(); got != itoa(arr.ID)+"_[5-8%4]" {
		t.Fatalf("pending record %q", got)
	}
	for _, j := range h.st.Jobs() {
		if j.Array != nil && j.Array.Throttle != 4 {
			t.Errorf("task %s keeps throttle %d", j.JobIDString(), j.Array.Throttle)
		}
	}
	_ = h.st.SetArrayThrottle(arr.ID, 0)
	h.schedule()
	if got := h.countState(JobRunning, func(j *Job) bool { return j.Array != nil }); got != 8 {
		t.Fatalf("no throttle: %d tasks running", got)
	}
	if err := h.st.SetArrayThrottle(plain.ID, 2); !errors.Is(err, ErrNotSupported) {
		t.Errorf("plain job: %v", err)
	}
	if err := h.st.SetArrayThrottle(9999, 2); !errors.Is(err, ErrInvalidJobID) {
		t.Errorf("unknown job: %v", err)
	}
}
