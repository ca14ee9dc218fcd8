package sched

import (
	"errors"
	"testing"
	"time"
)

func FuzzParseArray(f *testing.F) {
	for _, s := range []string{"0-99", "1,3,5", "0-10:2", "0-15%4", "", "%", "1-", "-1", "0-4000000", "1,,2", "3:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tasks, n, thr, err := ParseArray(s, 1001)
		if err != nil {
			return
		}
		if n <= 0 || n != tasks.Count() || thr < 0 {
			t.Fatalf("%q: n=%d count=%d throttle=%d", s, n, tasks.Count(), thr)
		}
		// The printed form parses back to the same set.
		again, n2, thr2, err := ParseArray(FormatArrayTasks(tasks, thr), 1001)
		if err != nil || n2 != n || thr2 != thr || FormatArrayTasks(again, thr2) != FormatArrayTasks(tasks, thr) {
			t.Fatalf("%q: round trip %q: %v", s, FormatArrayTasks(tasks, thr), err)
		}
	})
}

func FuzzParseDependency(f *testing.F) {
	for _, s := range []string{"afterok:12:13,singleton", "afterany:5?afternotok:6", "after:7+10", "afterok:3_4", "x", ":", "afterok:1+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		deps, any, err := ParseDependency(s)
		if err != nil {
			return
		}
		out := FormatDependency(deps, any)
		deps2, any2, err := ParseDependency(out)
		if err != nil || any2 != any || FormatDependency(deps2, any2) != out {
			t.Fatalf("%q: round trip %q: %v", s, out, err)
		}
	})
}

func FuzzParseGres(f *testing.F) {
	for _, s := range []string{"gpu:4", "gpu:a100:2", "gpu", "gres/gpu:1,shard:2", "gpu:a:b:c", ":", "gpu:-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gs, err := ParseGres(s)
		if err != nil {
			return
		}
		for _, g := range gs {
			if g.Name == "" || g.Count < 0 {
				t.Fatalf("%q: %+v", s, g)
			}
		}
	})
}

// FuzzSubmit: any request is either rejected with one of Slurm's errors or
// accepted as a pending job that a scheduling cycle can handle; nothing
// panics and a rejection leaves no job behind, except a request no node
// can run, which leaves the one FAILED (BadConstraints) job returned.
func FuzzSubmit(f *testing.F) {
	f.Add(int32(1), int32(0), int32(1), int32(1), int32(0), int64(0), int64(0), int64(0), int64(60), "gpu:1", "0-3%2", "")
	f.Add(int32(-1), int32(-3), int32(0), int32(-2), int32(5), int64(-1), int64(7), int64(-4), int64(-1), "gpu:a:b:c", "9-1", "afterok:1")
	f.Fuzz(func(t *testing.T, minN, maxN, ntasks, cpt, tpn int32, mem, mpc, gpus, minutes int64, gres, array, dep string) {
		h := newHarness(t, gpuConf)
		r := Request{MinNodes: minN, MaxNodes: maxN, NTasks: ntasks, CPUsPerTask: cpt, NTasksPerNode: tpn % 64,
			MemPerNode: mem, MemPerCPU: mpc, GPUs: gpus % 1000, TimeLimit: time.Duration(minutes%100000) * time.Minute,
			Array: array, Dependency: dep}
		var err error
		if r.Gres, err = ParseGres(gres); err != nil {
			return
		}
		before := len(h.st.Jobs())
		j, err := h.st.Submit(r, Submitter{User: "u"}, h.now)
		if err != nil {
			var se *SubmitError
			left := 0
			if errors.Is(err, ErrNodeConfig) {
				left = 1
				if j == nil || j.State != JobFailed || j.Reason != ReasonBadConstraints {
					t.Fatalf("never-runnable job %+v", j)
				}
			}
			if !errors.As(err, &se) || len(h.st.Jobs()) != before+left {
				t.Fatalf("rejection %v (%T) left %d jobs", err, err, len(h.st.Jobs()))
			}
			return
		}
		if j.State != JobPending {
			t.Fatalf("accepted job in state %s", j.State)
		}
		h.schedule()
		h.advance(time.Hour)
	})
}
