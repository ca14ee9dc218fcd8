package sim_test

import (
	"math"
	"testing"

	"github.com/sluice-hpc/sluice/internal/sim"
)

func TestMetricsFromAKnownSchedule(t *testing.T) {
	// Two accounts on a 4-CPU cluster over [0, 100]:
	// a1: job 1 waits 0, runs 100 on 2 CPUs; job 3 waits 50, runs 5 s.
	// a2: job 2 waits 10, runs 90 on 2 CPUs (backfilled).
	jobs := []sim.JobResult{
		{ID: 1, Submit: 0, Start: 0, End: 100, State: "COMPLETED", CPUs: 2, Account: "a1", User: "u1"},
		{ID: 2, Submit: 0, Start: 10, End: 100, State: "TIMEOUT", CPUs: 2, Account: "a2", User: "u2", Backfill: true},
		{ID: 3, Submit: 50, Start: 100, End: 105, State: "COMPLETED", CPUs: 1, Account: "a1", User: "u1"},
		{ID: 4, Submit: 100, Start: -1, End: -1, State: "PENDING", CPUs: 0, Account: "", User: "u3"},
	}
	samples := []sim.Sample{{T: 0, CPUs: 2, Pending: 1}, {T: 10, CPUs: 4}, {T: 50, CPUs: 4, Pending: 1}, {T: 100, CPUs: 1, Pending: 1}, {T: 105}}
	m := sim.Compute(jobs, samples, sim.Capacity{CPUs: 4}, map[string]float64{"a1": 0.75, "a2": 0.25}, 0)
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if m.Started != 3 || m.Completed != 2 || m.Timeout != 1 || m.NeverStarted != 1 || m.Makespan != 105 {
		t.Errorf("counts: %+v", m)
	}
	near("backfill fraction", m.BackfillFraction, 1.0/3)
	near("wait mean", m.Overall.WaitMean, 20)
	near("wait median", m.Overall.WaitMedian, 10)
	near("wait max", m.Overall.WaitMax, 50)
	near("response mean", m.Overall.ResponseMean, (100+100+55)/3.0)
	// bounded slowdown: 1, 100/90, 55/10
	near("bounded slowdown", m.Overall.BoundedSlowdown, (1+100.0/90+5.5)/3)
	// window [0,100]: 2*10 + 4*90 = 380 CPU-s of 400
	near("utilization", m.CPUUtilization, 0.95)
	near("offered load", m.OfferedLoad, (200+180+5)/400.0)
	near("a1 wait mean", m.ByAccount["a1"].WaitMean, 25)
	if len(m.Shares) != 2 || m.Shares[0].Account != "a1" {
		t.Fatalf("shares = %+v", m.Shares)
	}
	near("a1 delivered", m.Shares[0].Delivered, 200.0/380)
	near("a2 target", m.Shares[1].NormShares, 0.25)
	if len(m.Series) == 0 || m.Series[0].CPUUtil != 0.5 {
		t.Errorf("series starts %+v, want 50%% busy", m.Series[:1])
	}
}
