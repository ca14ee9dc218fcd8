package sched

import (
	"math/rand"
	"testing"
	"time"
)

// perfState builds n nodes (a fifth with 8 GPUs) and jobs pending jobs of
// mixed sizes, a third of the nodes already busy, with a fixed seed.
func perfState(tb testing.TB, n, jobs int) *State {
	nodes := make([]Node, n)
	kinds := []GresKind{{Name: "gpu", Type: "a100"}}
	list := make([]int32, n)
	for i := range nodes {
		nodes[i] = Node{Name: "n" + itoa(JobID(i)), CPUs: 64, RealMemory: 256000, State: NodeIdle, Gres: []int64{0}}
		if i%5 == 0 {
			nodes[i].Gres[0] = 8
		}
		list[i] = int32(i)
	}
	cl, err := NewCluster("perf", nodes, []Partition{{Name: "all", NodeList: list, Default: true, MaxTime: Infinite, MaxNodes: -1}}, kinds)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.MaxJobCount = 0
	cfg.Backfill.Enabled = false
	st := NewState(cl, cfg)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < jobs; i++ {
		r := Request{NTasks: int32(1 + rng.Intn(32)), TimeLimit: time.Duration(1+rng.Intn(240)) * time.Minute, MemPerCPU: 1000}
		if rng.Intn(10) == 0 {
			r.Gres = []GresReq{{Name: "gpu", Count: int64(1 + rng.Intn(8))}}
		}
		if rng.Intn(20) == 0 {
			r.MinNodes = int32(2 + rng.Intn(8))
		}
		j, err := st.Submit(r, Submitter{User: "u"}, t0)
		if err != nil {
			tb.Fatal(err)
		}
		j.Priority = uint32(rng.Intn(100000))
	}
	return st
}

func BenchmarkMainPass5000x50000(b *testing.B) {
	st := perfState(b, 5000, 50000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := Schedule(st, t0, st.Config)
		if i == 0 {
			b.ReportMetric(float64(len(p.Starts)), "starts")
		}
	}
}
