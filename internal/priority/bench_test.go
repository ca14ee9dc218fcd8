package priority

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// benchWorld is 10,000 associations (100 accounts × 99 users + root) with
// random usage and 100,000 pending jobs spread over them, 4 partitions and
// 3 QOS, with every weight non-zero (including three TRES weights).
func benchWorld(tb testing.TB) (*Config, *Cluster, *Tree, []Job) {
	rng := rand.New(rand.NewSource(42))
	tr := NewTree()
	var users []int
	for a := 0; a < 100; a++ {
		acc := fmt.Sprintf("acct%03d", a)
		if _, err := tr.AddAccount(acc, "root", uint32(1+rng.Intn(100))); err != nil {
			tb.Fatal(err)
		}
		for u := 0; u < 99; u++ {
			i, err := tr.AddUser(fmt.Sprintf("user%05d", a*99+u), acc, uint32(1+rng.Intn(10)))
			if err != nil {
				tb.Fatal(err)
			}
			users = append(users, i)
			addUsage(tr, i, float64(rng.Intn(1_000_000)))
		}
	}
	for q, p := range []uint32{0, 100, 10000} {
		tr.AddQOS(fmt.Sprintf("qos%d", q), p, 1, false)
	}
	cfg := DefaultConfig()
	cfg.WeightAge, cfg.WeightAssoc, cfg.WeightFairshare = 1000, 100, 100000
	cfg.WeightJobSize, cfg.WeightPartition, cfg.WeightQOS = 500, 2000, 10000
	cfg.WeightTRES, _ = ParseTRESWeights("CPU=1000,Mem=2000,GRES/gpu=4000")
	cl := &Cluster{Nodes: 10000, CPUs: 640000, Partitions: map[string]*Partition{}}
	for p := 0; p < 4; p++ {
		cl.Partitions[fmt.Sprintf("part%d", p)] = &Partition{JobFactor: uint32(1 + p*100), MaxTime: 48 * time.Hour,
			TRES: map[string]int64{"cpu": 160000, "mem": 160000 * 8000, "gres/gpu": 20000}}
	}
	now := t0
	jobs := make([]Job, 100_000)
	for k := range jobs {
		jobs[k] = Job{
			ID: uint32(k + 1), Partition: fmt.Sprintf("part%d", rng.Intn(4)), QOS: fmt.Sprintf("qos%d", rng.Intn(3)),
			Assoc: users[rng.Intn(len(users))], Nodes: uint32(1 + rng.Intn(16)), CPUs: uint32(1 + rng.Intn(1024)),
			AccrueTime: now.Add(-time.Duration(rng.Intn(7*86400)) * time.Second),
			TRES:       map[string]int64{"cpu": int64(1 + rng.Intn(1024)), "mem": int64(rng.Intn(1 << 20)), "gres/gpu": int64(rng.Intn(8))},
			Nice:       int32(rng.Intn(10)),
		}
	}
	tr.Recompute(&cfg)
	return &cfg, cl, tr, jobs
}

// BenchmarkRecomputePass is one PriorityCalcPeriod pass: Fair Tree over
// 10,000 associations, then the priority of 100,000 pending jobs.
// Target: under 100 ms per pass on 2 cores.
func BenchmarkRecomputePass(b *testing.B) {
	cfg, cl, tr, jobs := benchWorld(b)
	prio := make([]uint32, len(jobs))
	var calc Calculator
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		tr.Recompute(cfg)
		calc.Reset(cfg, cl, tr)
		for k := range jobs {
			prio[k] = calc.Priority(&jobs[k], t0)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(jobs)), "ns/job")
}

// BenchmarkFairTree is the fair-share part alone (10,000 associations).
func BenchmarkFairTree(b *testing.B) {
	cfg, _, tr, _ := benchWorld(b)
	b.ReportAllocs()
	for b.Loop() {
		tr.Recompute(cfg)
	}
}

// The hot path allocates nothing: a whole pass over the benchmark world.
func TestRecomputePassAllocationFree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100,000 jobs")
	}
	cfg, cl, tr, jobs := benchWorld(t)
	var calc Calculator
	allocs := testing.AllocsPerRun(2, func() {
		tr.Recompute(cfg)
		calc.Reset(cfg, cl, tr)
		for k := range jobs[:1000] {
			calc.Priority(&jobs[k], t0)
		}
	})
	if allocs != 0 {
		t.Errorf("pass allocates %v times", allocs)
	}
}
