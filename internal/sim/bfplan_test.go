package sim

import (
	"slices"
	"testing"

	"github.com/sluice-hpc/sluice/internal/sched"
)

// jobOn is a running job on nodes.
func jobOn(nodes []int32) *sched.Job { return &sched.Job{Alloc: sched.Alloc{Nodes: nodes}} }

// TestLowest takes the n lowest nodes of a set, across words.
func TestLowest(t *testing.T) {
	for _, c := range []struct {
		src  []uint64
		n    int64
		want []uint64
	}{
		{[]uint64{0b1011, 0}, 2, []uint64{0b0011, 0}},
		{[]uint64{0b1011, 0b110}, 3, []uint64{0b1011, 0}},
		{[]uint64{0b1011, 0b110}, 4, []uint64{0b1011, 0b10}},
		{[]uint64{^uint64(0), 0b1}, 65, []uint64{^uint64(0), 0b1}},
		{[]uint64{0, 0b1100}, 1, []uint64{0, 0b100}},
	} {
		got := make([]uint64, len(c.src))
		lowest(got, c.src, c.n)
		if !slices.Equal(got, c.want) {
			t.Errorf("lowest(%b, %d) = %b, want %b", c.src, c.n, got, c.want)
		}
	}
}

// TestPlanModelReserves plans two jobs on four one-CPU nodes as backfill
// would: nodes 0 and 1 idle, node 2 busy until 600 s, node 3 until
// 1,200 s (bf_resolution 60 s, now on a minute boundary). A 3-node job of
// 1,000 s is reserved from 600 s on nodes 0-2 until 1,620 s (its end
// aligned up); a 2-node job of 300 s finds only node 3 outside that
// reservation at 1,200 s, so it is reserved from 1,620 s on the two
// lowest nodes. Then a job planned for 600 s or less may still take both
// idle nodes now, a longer one neither (freeFor).
func TestPlanModelReserves(t *testing.T) {
	const s = int64(1e9)
	pl := &bfPlan{nowNs: 1_000_000 * 60 * s, res: 60 * s, idle: []uint64{0b0011}, nIdle: 2}
	pl.free, pl.tmp = []uint64{0b0011}, make([]uint64, 1) // free: the idle nodes, no running job's (ri 0)
	runs := []runEnd{{end: 600 * s, nodes: 1}, {end: 1200 * s, nodes: 1}}
	pl.ends, pl.cum = []int64{600 * s, 1200 * s}, []int64{3, 4}
	nodesOf := map[int64][]int32{600 * s: {2}, 1200 * s: {3}}
	for i := range runs {
		runs[i].j = jobOn(nodesOf[runs[i].end])
	}
	pl.reserve(runs, 3, 1000*s, 2880*60*s)
	pl.reserve(runs, 2, 300*s, 2880*60*s)
	want := []bfResv{{s: 600 * s, e: 1620 * s, nodes: []uint64{0b0111}}, {s: 1620 * s, e: 1920 * s, nodes: []uint64{0b0011}}}
	if len(pl.resv) != len(want) {
		t.Fatalf("reservations %+v, want %+v", pl.resv, want)
	}
	for i, r := range pl.resv {
		if r.s != want[i].s || r.e != want[i].e || !slices.Equal(r.nodes, want[i].nodes) {
			t.Errorf("reservation %d: %+v, want %+v", i, r, want[i])
		}
	}
	for _, c := range []struct{ d, free int64 }{{500 * s, 2}, {600 * s, 2}, {601 * s, 0}, {2000 * s, 0}} {
		if got := pl.freeFor(c.d); got != c.free {
			t.Errorf("freeFor(%d s) = %d, want %d", c.d/s, got, c.free)
		}
	}
}
