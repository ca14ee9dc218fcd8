package sched

import (
	"testing"
)

// BenchmarkCycle measures one full cycle (multifactor priority of every
// pending job, main scheduler, backfill planning over the whole queue) on
// the generated workload: 5,000 nodes (80% CPU, 20% GPU), about 20,000
// running jobs and 50,000 pending jobs of mixed sizes, fixed seed.
//
//	go test ./internal/sched -run '^$' -bench BenchmarkCycle -benchtime 3x
func BenchmarkCycle(b *testing.B) {
	w, err := NewBenchWorkload(BenchSpec{Nodes: 5000, Jobs: 50000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var plan Plan
	for i := 0; i < b.N; i++ {
		plan = w.Cycle()
	}
	b.StopTimer()
	b.ReportMetric(float64(w.Planned(&plan)), "planned")
	b.ReportMetric(float64(len(plan.Starts)), "starts")
}

// TestBenchWorkloadPlansEveryJob: on a small generated workload every
// pending job is started or given an expected start, and the workload is
// the same for the same seed.
func TestBenchWorkloadPlansEveryJob(t *testing.T) {
	w, err := NewBenchWorkload(BenchSpec{Nodes: 200, Jobs: 2000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	plan := w.Cycle()
	if got := w.Planned(&plan); got != 2000 {
		t.Fatalf("planned %d of 2000 (running %d, starts %d)", got, w.Running, len(plan.Starts))
	}
	w2, _ := NewBenchWorkload(BenchSpec{Nodes: 200, Jobs: 2000, Seed: 7})
	plan2 := w2.Cycle()
	if len(plan2.Starts) != len(plan.Starts) || w2.Running != w.Running {
		t.Fatalf("same seed, different workloads")
	}
	t.Logf("running %d, started %d (backfilled %d), planned %d", w.Running, len(plan.Starts), plan.Stats.Backfilled, w.Planned(&plan))
}
