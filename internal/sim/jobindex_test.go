package sim

import "testing"

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
