package sched

import (
	"math/rand"
	"testing"
)

// TestBucketRejectIsSound: whenever the free-node count says a CPU-only
// job cannot fit (bucketsMayHold false, or fitOneBuckets' early return),
// the node-by-node selection over the same free resources finds no place
// either, on random occupancies of clusters of 1- to 8-CPU nodes.
func TestBucketRejectIsSound(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	rejected := 0
	for _, cpus := range []int{1, 2, 8} {
		h := newHarness(t, cpuConf(40, cpus, ""))
		cl, cfg := h.st.Cluster, h.st.Config
		sel := newSelector(cl, &cfg)
		mask := cl.Partitions[0].Nodes
		for trial := 0; trial < 300; trial++ {
			av := NewAvail(cl)
			for i := range av.CPUs {
				av.CPUs[i] = int32(r.Intn(cpus + 1))
				av.updateFree(i)
			}
			s := shape{minNodes: int32(1 + r.Intn(4)), tasks: int32(1 + r.Intn(60)), cpusPerTask: int32(1 + r.Intn(2)),
				share: 1, memPerNode: 1}
			s.maxNodes = max(s.minNodes, s.tasks)
			ref := *av
			ref.byFree, ref.bucketOf = nil, nil      // node-by-node selection
			if s.tasks*s.cpusPerTask > int32(cpus) { // fitOneBuckets returns at once
				if _, ok := sel.fitOne(&Job{}, &s, &ref, mask); ok {
					t.Fatalf("%d-CPU nodes: the scan put %d CPUs on one node", cpus, s.tasks*s.cpusPerTask)
				}
			}
			if bucketsMayHold(&s, av, mask) {
				continue
			}
			rejected++
			if _, ok := sel.fitMany(&Job{}, &s, &ref, mask); ok {
				t.Fatalf("%d-CPU nodes, trial %d: rejected a shape the scan places (%+v)", cpus, trial, s)
			}
		}
	}
	if rejected == 0 {
		t.Fatal("no trial was rejected: the test checks nothing")
	}
	t.Logf("%d rejections, all confirmed by the node-by-node scan", rejected)
}
