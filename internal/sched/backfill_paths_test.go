package sched

import (
	"reflect"
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
