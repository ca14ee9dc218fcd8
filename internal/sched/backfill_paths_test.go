package sched

import (
	"math/bits"
	"math/rand"
	"reflect"
	"slices"
	"testing"
)

// TestBackfillSearchPathsAgree: backfill's two ways to check that nodes
// stay free over a span (ANDing the map's slots, used on small clusters,
// and searching each candidate's busy intervals, used on large ones) give
// the same plan on generated workloads of both sizes.
func TestBackfillSearchPathsAgree(t *testing.T) {
	for _, tc := range []struct{ nodes, jobs int }{{128, 1500}, {200, 2000}, {700, 3000}} {
		plans := make([]Plan, 2)
		for i, words := range []int{0, 1 << 20} { // every map keeps intervals / none does
			old := bfSmallWords
			bfSmallWords = words
			w, err := NewBenchWorkload(BenchSpec{Nodes: tc.nodes, Jobs: tc.jobs, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			plans[i] = w.Cycle()
			bfSmallWords = old
		}
		if !reflect.DeepEqual(plans[0], plans[1]) {
			t.Fatalf("%d nodes: the interval and slot paths plan differently", tc.nodes)
		}
		t.Logf("%d nodes: %d starts, %d pending, same plan", tc.nodes, len(plans[0].Starts), len(plans[0].Pending))
	}
}

// TestSortKeysWithHint: sorting a map's change keys with the last sort as
// a hint gives the plain sort, whether few or many nodes changed their
// key since, or came and went.
func TestSortKeysWithHint(t *testing.T) {
	const nodes = 200
	r := rand.New(rand.NewSource(9))
	var p bfSlabs
	nb := uint(bits.Len32(nodes))
	q := make([]uint64, nodes)
	for n := range q {
		q[n] = uint64(1 + r.Intn(50))
	}
	for pass := 0; pass < 40; pass++ {
		var keys []uint64
		for n := range q {
			if r.Intn(8) == 0 || pass%10 == 0 && r.Intn(2) == 0 {
				q[n] = uint64(1 + r.Intn(50)) // its jobs changed
			}
			if r.Intn(10) != 0 { // busy this pass
				keys = append(keys, q[n]<<nb|uint64(n))
			}
		}
		r.Shuffle(len(keys), func(i, k int) { keys[i], keys[k] = keys[k], keys[i] })
		want := slices.Clone(keys)
		slices.Sort(want)
		p.sortKeys(keys, nodes)
		if !slices.Equal(keys, want) {
			t.Fatalf("pass %d: hinted sort differs from the plain sort", pass)
		}
	}
}
