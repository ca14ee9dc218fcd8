package sched

import (
	"testing"
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
