package priority

import (
	"strings"
	"testing"
	"time"
)

func TestExplain(t *testing.T) {
	cfg := DefaultConfig()
	cfg.WeightFairshare, cfg.WeightAge, cfg.WeightPartition = 10000, 1000, 10
	tr := s2Tree(t, &cfg)
	cl := &Cluster{Nodes: 2, CPUs: 384, Partitions: map[string]*Partition{"gpu": {JobFactor: 1}}}
	c := NewCalculator(&cfg, cl, tr)
	bob, _ := tr.Lookup("research", "bob")
	cases := []struct {
		name string
		job  Job
		want string
	}{
		{"fair-share", Job{ID: 1, User: "bob", Account: "research", Partition: "gpu", Assoc: bob, AccrueTime: t0},
			"fairshare dominates (1667 of 1676): account research has used 1.20x its share in the last 7 days; user bob ranks 6 of 6"},
		{"held", Job{ID: 3, Assoc: bob, Held: true}, "held: priority 0"},
		{"direct", Job{ID: 4, Assoc: bob, DirectPriority: 9}, "priority 9 was set explicitly"},
	}
	for _, tc := range cases {
		e := c.Explain(&tc.job, t0.Add(time.Minute))
		t.Logf("%s: priority %d: %s", tc.name, e.Priority, e.Summary)
		for _, term := range e.Terms {
			t.Logf("    %-10s factor %.6f × weight %.0f = %.2f", term.Name, term.Factor, term.Weight, term.Contribution)
		}
		if !strings.HasPrefix(e.Summary, tc.want) {
			t.Errorf("%s: summary %q, want prefix %q", tc.name, e.Summary, tc.want)
		}
	}
	ageCfg := cfg
	ageCfg.WeightFairshare = 100
	e := NewCalculator(&ageCfg, cl, tr).Explain(&Job{ID: 2, User: "bob", Partition: "gpu", Assoc: bob, AccrueTime: t0.Add(-3 * day), Nice: 5}, t0)
	t.Logf("age: %s", e.Summary)
	if want := "age dominates (429 of 450): the job has been eligible for 72h0m0s (PriorityMaxAge 7 days); nice 5 lowers it"; e.Summary != want {
		t.Errorf("age summary %q, want %q", e.Summary, want)
	}
	zero := DefaultConfig()
	e = NewCalculator(&zero, cl, tr).Explain(&Job{ID: 5, Assoc: bob}, t0)
	if e.Priority != 1 || !strings.Contains(e.Summary, "every weighted factor is 0") {
		t.Errorf("zero weights: %d %q", e.Priority, e.Summary)
	}
}
