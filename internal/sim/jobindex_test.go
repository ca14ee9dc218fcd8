package sim

import (
	"testing"

	"github.com/sluice-hpc/sluice/internal/sched"
)

// TestJobIndex finds jobs by id through the table (dense ids) and the map
// (sparse ones), and flags a shared id either way.
func TestJobIndex(t *testing.T) {
	for _, c := range []struct {
		ids []int64
		dup bool
	}{
		{[]int64{3, 1, 2, 5}, false},
		{[]int64{1, 1_000_000, 7}, false},
		{[]int64{4, 2, 4}, true},
		{[]int64{-5, 9_000_000_000, -5}, true},
	} {
		jobs := make([]Job, len(c.ids))
		for i, id := range c.ids {
			jobs[i].ID = id
		}
		x := newJobIndex(jobs)
		if x.dup != c.dup {
			t.Errorf("%v: dup %v, want %v", c.ids, x.dup, c.dup)
		}
		if c.dup {
			continue
		}
		for i, id := range c.ids {
			if k, ok := x.get(id); !ok || int(k) != i {
				t.Errorf("%v: get(%d) = %d, %v; want %d", c.ids, id, k, ok, i)
			}
		}
		if _, ok := x.get(999); ok {
			t.Errorf("%v: get(999) found a job", c.ids)
		}
	}
}

// TestCoreIDs translates trace ids to core ids and back, for ids in the
// trace (dense and sparse) and not in it, jobs never submitted, core ids
// the trace has no job for (split array tasks) and purged jobs.
func TestCoreIDs(t *testing.T) {
	for _, trace := range [][]int64{{10, 11, 12, 13}, {10, 5_000_000, 12, 13}} {
		jobs := make([]Job, len(trace))
		for i, id := range trace {
			jobs[i].ID = id
		}
		x := newCoreIDs(jobs)
		x.add(12, 100) // submitted out of trace order
		x.add(10, 101)
		x.add(77, 103) // not in the trace; core id 102 is a split task
		for _, c := range []struct {
			id  int64
			sid sched.JobID
			ok  bool
		}{{12, 100, true}, {10, 101, true}, {77, 103, true}, {11, 0, false}, {13, 0, false}, {78, 0, false}} {
			if sid, ok := x.toSched(c.id); sid != c.sid || ok != c.ok {
				t.Errorf("%v: toSched(%d) = %d, %v; want %d, %v", trace, c.id, sid, ok, c.sid, c.ok)
			}
			if c.ok {
				if id, ok := x.toTrace(c.sid); id != c.id || !ok {
					t.Errorf("%v: toTrace(%d) = %d, %v; want %d", trace, c.sid, id, ok, c.id)
				}
			}
		}
		for _, sid := range []sched.JobID{99, 102, 104} {
			if id, ok := x.toTrace(sid); ok {
				t.Errorf("%v: toTrace(%d) = %d for a core id never added", trace, sid, id)
			}
		}
		x.forget(100)
		if _, ok := x.toTrace(100); ok {
			t.Errorf("%v: toTrace(100) found a purged job", trace)
		}
		x.add(13, 98) // below the first id: the table moves
		if id, ok := x.toTrace(98); id != 13 || !ok {
			t.Errorf("%v: toTrace(98) = %d, %v after a lower id", trace, id, ok)
		}
		if id, ok := x.toTrace(101); id != 10 || !ok {
			t.Errorf("%v: toTrace(101) = %d, %v after a lower id", trace, id, ok)
		}
	}
}
