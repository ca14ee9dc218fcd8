package sched

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestFailedDependencyOutlivesParent: when the job a dependency names
// leaves memory (MinJobAge), Slurm lifts the dependency only if it is
// still unfulfilled; one already failed stays failed, so a cleanup job
// (afternotok on a job that COMPLETED) never runs, alone or in an OR list.
func TestFailedDependencyOutlivesParent(t *testing.T) {
	h := newHarness(t, cpuConf(4, 4, ""))
	ok := h.mustSubmit("u", "-n 1 --time=10 --run=5")
	long := h.mustSubmit("u", "-n 1 --time=60")
	cleanup := h.mustSubmit("u", "-n 1 --time=10 -d afternotok:"+itoa(ok.ID))
	either := h.mustSubmit("u", "-n 1 --time=10 -d afternotok:"+itoa(ok.ID)+"?afterok:"+itoa(long.ID))
	later := h.mustSubmit("u", "-n 1 --time=10 -d after:"+itoa(ok.ID)+"+30")
	h.advance(5 * time.Minute) // ok completes with exit 0
	h.expectState(cleanup.ID, JobPending, ReasonDependencyNeverSatisfied)
	h.expectState(either.ID, JobPending, ReasonDependency)
	h.expectState(later.ID, JobPending, ReasonDependency)

	if n := h.st.Purge(func(j *Job) bool { return j.ID == ok.ID }); n != 1 {
		t.Fatalf("purged %d jobs", n)
	}
	h.advance(time.Minute)
	h.expectState(cleanup.ID, JobPending, ReasonDependencyNeverSatisfied)
	h.expectState(either.ID, JobPending, ReasonDependency)
	h.expectState(later.ID, JobRunning, "") // unfulfilled when ok left: lifted
	want := map[JobID]string{
		cleanup.ID: "afternotok:" + itoa(ok.ID) + "(failed)",
		either.ID:  "afternotok:" + itoa(ok.ID) + "(failed)?afterok:" + itoa(long.ID) + "(unfulfilled)",
	}
	for id, w := range want {
		if got := DependencyString(h.job(id)); got != w {
			t.Errorf("job %d: Dependency=%s, want %s", id, got, w)
		}
	}
}

// TestHeldJobDependencyFails: slurmctld tests a held job's dependencies
// too, so a failure seen while it is held survives the parent's purge.
func TestHeldJobDependencyFails(t *testing.T) {
	h := newHarness(t, cpuConf(4, 4, ""))
	ok := h.mustSubmit("u", "-n 1 --time=10 --run=5")
	held := h.mustSubmit("u", "-n 1 --time=10 --hold -d afternotok:"+itoa(ok.ID))
	h.advance(6 * time.Minute)
	h.st.Purge(func(j *Job) bool { return j.ID == ok.ID })
	held.Hold = HoldNone
	h.advance(time.Minute)
	h.expectState(held.ID, JobPending, ReasonDependencyNeverSatisfied)
}

// TestDependencyString: the Dependency= of scontrol show job and %E of
// squeue, golden strings printed by Slurm 24.11 for the same situations:
// fulfilled dependencies of a ',' list are left out, failed ones stay,
// a whole array prints id_*, a satisfied list or a started job (null).
func TestDependencyString(t *testing.T) {
	h := newHarness(t, cpuConf(4, 8, ""))
	ok := h.mustSubmit("u", "-n 1 --time=10 --run=1")       // COMPLETED exit 0
	bad := h.mustSubmit("u", "-n 1 --time=1")               // TIMEOUT
	run := h.mustSubmit("u", "-n 1 --time=600")             // stays RUNNING
	hold := h.mustSubmit("u", "-n 1 --time=10 --hold")      // stays PENDING
	arr := h.mustSubmit("u", "--array=0-2 -n 1 --time=600") // tasks RUNNING
	h.advance(2 * time.Minute)
	id := func(j *Job) string { return itoa(j.ID) }
	cases := []struct{ dep, want string }{
		{"afternotok:" + id(ok), "afternotok:OK(failed)"},
		{"afterok:" + id(bad), "afterok:BAD(failed)"},
		{"afterok:" + id(ok), ""},
		{"afterok:" + id(run), "afterok:RUN(unfulfilled)"},
		{"afterany:" + id(run), "afterany:RUN(unfulfilled)"},
		{"after:" + id(hold), "after:HOLD(unfulfilled)"},
		{"after:" + id(run) + "+5", "after:RUN+5(unfulfilled)"},
		{"afterok:" + id(run) + "+5", "afterok:RUN+5(unfulfilled)"},
		{"aftercorr:" + id(run), "aftercorr:RUN(unfulfilled)"},
		{"afterburstbuffer:" + id(run), "afterburstbuffer:RUN(unfulfilled)"},
		{"afterok:" + id(ok) + ",afterok:" + id(run), "afterok:RUN(unfulfilled)"},
		{"afterok:" + id(bad) + ",afterok:" + id(run), "afterok:BAD(failed),afterok:RUN(unfulfilled)"},
		{"afterok:" + id(bad) + "?afterok:" + id(run), "afterok:BAD(failed)?afterok:RUN(unfulfilled)"},
		{"afterok:" + id(bad) + "?afterok:" + id(ok), ""},
		{"afterok:" + id(run) + ":" + id(hold), "afterok:RUN(unfulfilled),afterok:HOLD(unfulfilled)"},
		{"afterok:" + id(run) + ",afterok:" + id(run), "afterok:RUN(unfulfilled)"},
		{"afterok:" + id(arr), "afterok:ARR_*(unfulfilled)"},
		{"afterok:" + id(arr) + "_*+2", "afterok:ARR_*+2(unfulfilled)"},
		{"afterok:" + id(arr) + "_1+2", "afterok:ARR_1+2(unfulfilled)"},
		{"afterok:" + id(arr) + ":" + id(arr) + "_1", "afterok:ARR_*(unfulfilled),afterok:ARR_1(unfulfilled)"},
		{"after:" + id(arr) + "+5,after:" + id(arr) + "+6", "after:ARR_*+5(unfulfilled)"},
		{"aftercorr:" + id(arr) + "_1", "aftercorr:ARR_1(unfulfilled)"},
		{"afterok:" + itoa(arr.ID+1), "afterok:" + itoa(arr.ID+1) + "(unfulfilled)"}, // a task's own job id
		{"afterok:" + id(arr) + ",afterok:" + id(run) + "?afterany:" + id(hold),
			"afterok:ARR_*(unfulfilled)?afterok:RUN(unfulfilled)?afterany:HOLD(unfulfilled)"},
	}
	names := strings.NewReplacer("OK", id(ok), "BAD", id(bad), "RUN", id(run), "HOLD", id(hold), "ARR", id(arr))
	for _, c := range cases {
		// Held, so that a satisfied list does not start: Slurm tests a
		// held job's dependencies all the same.
		j := h.mustSubmit("u", "-n 1 --time=10 --hold -d "+c.dep)
		h.schedule()
		if got, want := DependencyString(j), names.Replace(c.want); got != want {
			t.Errorf("-d %s: Dependency=%q, want %q", c.dep, got, want)
		}
	}
}

// TestDependencyStringLifecycle: a satisfied singleton and a started job
// print (null); a job cancelled while pending keeps its last string.
func TestDependencyStringLifecycle(t *testing.T) {
	h := newHarness(t, cpuConf(4, 8, ""))
	bad := h.mustSubmit("u", "-n 1 --time=1")
	first := h.mustSubmit("u", "-J s -n 1 --time=10")
	single := h.mustSubmit("u", "-J s -d singleton -n 1 --time=10")
	never := h.mustSubmit("u", "-n 1 --time=10 -d afterok:"+itoa(bad.ID))
	started := h.mustSubmit("u", "-n 1 --time=10 -d afterany:"+itoa(bad.ID))
	if got := DependencyString(single); got != "singleton(unfulfilled)" {
		t.Fatalf("singleton waiting: %q", got)
	}
	h.advance(2 * time.Minute)
	h.expectState(started.ID, JobRunning, "")
	if err := h.st.Cancel(never.ID, h.now); err != nil {
		t.Fatal(err)
	}
	h.advance(10 * time.Minute) // first ends; the singleton runs
	h.expectState(single.ID, JobRunning, "")
	want := map[JobID]string{single.ID: "", started.ID: "", never.ID: "afterok:" + itoa(bad.ID) + "(failed)"}
	for id, w := range want {
		if got := DependencyString(h.job(id)); got != w {
			t.Errorf("job %d: %q, want %q", id, got, w)
		}
	}
	_ = first
}

// TestSingletonWaitsForEarlierPending: as in Slurm 24.11, a singleton
// waits while a job of the same user and name submitted before it is
// still pending (held, or waiting on its own dependency), not only while
// one runs; a later pending job does not hold it back.
func TestSingletonWaitsForEarlierPending(t *testing.T) {
	h := newHarness(t, cpuConf(2, 4, ""))
	held := h.mustSubmit("u", "-J s -n 1 --time=10 --run=5 --hold")
	single := h.mustSubmit("u", "-J s -d singleton -n 1 --time=10")
	first := h.mustSubmit("u", "-J t -d singleton -n 1 --time=10 --begin=now+1hour")
	later := h.mustSubmit("u", "-J t -n 1 --time=10 --hold")
	h.expectState(single.ID, JobPending, ReasonDependency)
	if got := DependencyString(single); got != "singleton(unfulfilled)" {
		t.Errorf("Dependency=%q", got)
	}
	h.expectState(first.ID, JobPending, ReasonBeginTime) // the later held job does not block it
	held.Hold = HoldNone
	h.schedule()
	h.expectState(held.ID, JobRunning, "")
	h.expectState(single.ID, JobPending, ReasonDependency)
	h.advance(6 * time.Minute) // held ends; the singleton runs
	h.expectState(single.ID, JobRunning, "")
	_ = later
}

// TestKillInvalidDepend: under DependencyParameters=kill_invalid_depend,
// or with --kill-on-invalid-dep=yes, a job whose dependency can never be
// satisfied is cancelled (an OR list once every member failed);
// --kill-on-invalid-dep=no keeps it pending, as Slurm 24.11 does.
func TestKillInvalidDepend(t *testing.T) {
	for _, c := range []struct {
		conf, opt string
		cancelled bool
	}{
		{"", "", false},
		{"", "--kill-on-invalid-dep=yes", true},
		{"DependencyParameters=kill_invalid_depend", "", true},
		{"SchedulerParameters=kill_invalid_depend", "", false}, // ignored there by Slurm 24.11
		{"DependencyParameters=kill_invalid_depend", "--kill-on-invalid-dep=no", false},
	} {
		h := newHarness(t, cpuConf(2, 4, c.conf))
		bad := h.mustSubmit("u", "-n 1 --time=1")
		long := h.mustSubmit("u", "-n 1 --time=60")
		dep := h.mustSubmit("u", "-n 1 --time=10 -d afterok:"+itoa(bad.ID)+" "+c.opt)
		either := h.mustSubmit("u", "-n 1 --time=10 -d afterok:"+itoa(bad.ID)+"?afterok:"+itoa(long.ID)+" "+c.opt)
		held := h.mustSubmit("u", "-n 1 --time=10 --hold -d afterok:"+itoa(bad.ID)+" "+c.opt)
		h.advance(2 * time.Minute) // bad times out
		h.expectState(either.ID, JobPending, ReasonDependency)
		if c.cancelled {
			h.expectState(dep.ID, JobCancelled, ReasonDependencyNeverSatisfied)
			h.expectState(held.ID, JobCancelled, ReasonDependencyNeverSatisfied) // held jobs too
		} else {
			h.expectState(dep.ID, JobPending, ReasonDependencyNeverSatisfied)
			h.expectState(held.ID, JobPending, ReasonDependencyNeverSatisfied) // held, but Slurm shows this
		}
		if got := DependencyString(h.job(dep.ID)); got != "afterok:"+itoa(bad.ID)+"(failed)" {
			t.Errorf("%s %s: Dependency=%q", c.conf, c.opt, got)
		}
	}
}

// TestCircularDependencyRefused: scontrol update refuses a dependency on
// the job itself ("Job dependency problem") and one that closes a cycle,
// directly or through another job ("Circular job dependency"), as Slurm
// 24.11 does; an OR list is checked too.
func TestCircularDependencyRefused(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, ""))
	a := h.mustSubmit("u", "-n 1 --time=10 --hold")
	b := h.mustSubmit("u", "-n 1 --time=10 --hold -d afterok:"+itoa(a.ID))
	c := h.mustSubmit("u", "-n 1 --time=10 --hold -d afterok:"+itoa(b.ID))
	dep := func(s string) JobUpdate { return JobUpdate{Dependency: &s} }
	cases := []struct {
		job  *Job
		dep  string
		want error
	}{
		{a, "afterok:" + itoa(b.ID), ErrCircularDependency},
		{a, "afterok:" + itoa(c.ID), ErrCircularDependency},
		{a, "afterok:" + itoa(a.ID), ErrDependency},
		{b, "afterok:" + itoa(a.ID) + "?afterany:" + itoa(c.ID), ErrCircularDependency},
		{b, "singleton", nil},
		{c, "afterok:" + itoa(a.ID), nil},
	}
	for _, k := range cases {
		err := h.st.Update(k.job.ID, dep(k.dep), false, h.now)
		if k.want == nil && err != nil || k.want != nil && !errors.Is(err, k.want) {
			t.Errorf("job %d Dependency=%s: %v, want %v", k.job.ID, k.dep, err, k.want)
		}
	}
}
