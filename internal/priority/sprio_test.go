package priority

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// ohpc is fixtures/ohpc-priority.conf: 100 nodes × 48 CPUs, partitions
// short (PriorityJobFactor 1000) and high (400), weights FairShare 10000,
// JobSize 1000, Partition 10, QOS 1000, Age and Assoc 0.
func ohpc(t testing.TB) (*Config, *Cluster, *Tree) {
	cfg := DefaultConfig()
	cfg.WeightFairshare, cfg.WeightJobSize, cfg.WeightPartition, cfg.WeightQOS = 10000, 1000, 10, 1000
	cfg.DecayHalfLife, cfg.UsageResetPeriod = 30*day, ResetQuarterly
	cl := &Cluster{Nodes: 100, CPUs: 4800, Partitions: map[string]*Partition{
		"short": {JobFactor: 1000, MaxTime: 2 * time.Hour},
		"high":  {JobFactor: 400, MaxTime: 7 * day},
	}}
	tr := buildTree(t, account("physics", 1, user("alice", 1), user("bob", 1)))
	tr.AddQOS("normal", 0, 1, false)
	return &cfg, cl, tr
}

// s7Rows: alice's job in short and bob's in high, with fair-share factors
// 0.9973 and 0.5 (set on their associations as the pass left them).
func s7Rows(t testing.TB, cfg *Config, cl *Cluster, tr *Tree) []SprioRow {
	tr.Recompute(cfg)
	a, _ := tr.Lookup("physics", "alice")
	b, _ := tr.Lookup("physics", "bob")
	tr.Assocs[a].FairShare, tr.Assocs[b].FairShare = 0.9973, 0.5
	jobs := []*Job{
		{ID: 1002, User: "bob", Account: "physics", Partition: "high", QOS: "normal", Assoc: b, Nodes: 2, CPUs: 96, EligibleTime: t0},
		{ID: 1001, User: "alice", Account: "physics", Partition: "short", QOS: "normal", Assoc: a, Nodes: 1, CPUs: 1, EligibleTime: t0},
		{ID: 1003, User: "alice", Account: "physics", Partition: "short", QOS: "normal", Assoc: a, Nodes: 1, CPUs: 1, EligibleTime: t0, Held: true},
		{ID: 1004, User: "alice", Account: "physics", Partition: "short", QOS: "normal", Assoc: a, Nodes: 1, CPUs: 1, EligibleTime: t0.Add(time.Hour)},
		{ID: 1005, User: "bob", Account: "physics", Partition: "short", QOS: "normal", Assoc: b, Nodes: 1, CPUs: 1, EligibleTime: t0, DirectPriority: 777},
	}
	return SprioRows(NewCalculator(cfg, cl, tr), jobs, t0.Add(time.Minute))
}

// S7 (SCENARIOS.md): sprio -w prints the configured weights; sprio -l
// prints FAIRSHARE 9973 and PARTITION 10 for the short-partition job and
// PARTITION 4 for the high one. With the fixture's PriorityWeightJobSize
// 1000 a 1-node, 1-CPU job on 100 nodes / 4800 CPUs adds
// (1/100+1/4800)/2×1000 = 5.1, so Slurm's PRIORITY is 9988; the
// walkthrough's 9983 is the same job without a job-size term (weight 0),
// checked below.
func TestS7Sprio(t *testing.T) {
	cfg, cl, tr := ohpc(t)
	rows := s7Rows(t, cfg, cl, tr)
	for _, tc := range []struct {
		golden string
		opt    SprioOptions
	}{
		{"sprio_s7_w.golden", SprioOptions{Weights: true}},
		{"sprio_s7_l.golden", SprioOptions{Long: true}},
		{"sprio_s7_default.golden", SprioOptions{}},
		{"sprio_s7_n.golden", SprioOptions{Norm: true}},
		{"sprio_s7_nl.golden", SprioOptions{Norm: true, Long: true}},
		{"sprio_s7_u.golden", SprioOptions{Users: []string{"bob"}}},
		{"sprio_s7_p.golden", SprioOptions{Partitions: []string{"high"}}},
		{"sprio_s7_j.golden", SprioOptions{Jobs: []uint32{1001}, NoHeader: true}},
		{"sprio_s7_o.golden", SprioOptions{Format: "%i|%u|%Y|%F|%.6P|%n"}},
	} {
		got, err := FormatSprio(cfg, rows, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, tc.golden, got)
	}
	long, _ := FormatSprio(cfg, rows, SprioOptions{Long: true})
	wantRows := []string{
		"           1001 short        alice  physics       9988          0          0          0       9973          5         10     normal          0           0                     ",
		"           1002 high           bob  physics       5024          0          0          0       5000         20          4     normal          0           0                     ",
		"           1005 short          bob  physics        777          0          0          0          0          0          0     normal          0           0                     ",
	}
	for _, w := range wantRows {
		if !strings.Contains(long, w+"\n") {
			t.Errorf("sprio -l lacks row\n%q", w)
		}
	}

	cfg.WeightJobSize = 0
	rows = s7Rows(t, cfg, cl, tr)
	walk, _ := FormatSprio(cfg, rows, SprioOptions{Long: true, Jobs: []uint32{1001}})
	golden(t, "sprio_s7_walkthrough.golden", walk)
	if !strings.Contains(walk, "      9983          0          0          0       9973          0         10") {
		t.Errorf("walkthrough row: PRIORITY 9983 FAIRSHARE 9973 PARTITION 10 not found")
	}
}

func TestSprioErrors(t *testing.T) {
	cfg, cl, tr := ohpc(t)
	rows := s7Rows(t, cfg, cl, tr)
	if _, err := FormatSprio(cfg, rows, SprioOptions{Jobs: []uint32{9}}); !errors.Is(err, ErrSprioNoJobs) {
		t.Errorf("no match: %v", err)
	}
	if _, err := FormatSprio(cfg, rows, SprioOptions{Format: "%.10Z"}); err == nil {
		t.Errorf("bad format accepted")
	}
	if _, err := FormatSprio(cfg, rows, SprioOptions{Format: "%.10"}); err == nil {
		t.Errorf("truncated format accepted")
	}
}

// The qos-demo weights include PriorityWeightTRES: the default format adds
// a TRES column showing name=weighted value for non-zero factors.
func TestSprioTRES(t *testing.T) {
	cfg := DefaultConfig()
	cfg.WeightAge, cfg.WeightFairshare, cfg.WeightQOS = 1000, 100000, 10000
	cfg.WeightTRESString = "CPU=1000,Mem=2000,GRES/gpu=4000"
	cfg.WeightTRES, _ = ParseTRESWeights(cfg.WeightTRESString)
	tr := qosDemo(t)
	tr.AddQOS("research", 10000, 1, false)
	tr.AddQOS("batch-lowprio", 100, 1, false)
	tr.Recompute(&cfg)
	cl := &Cluster{Nodes: 2, CPUs: 384, Partitions: map[string]*Partition{
		"gpu": {JobFactor: 1, TRES: map[string]int64{"cpu": 384, "mem": 1520000, "gres/gpu": 16, "node": 2}},
	}}
	alice, _ := tr.Lookup("research", "alice")
	charlie, _ := tr.Lookup("batch", "charlie")
	jobs := []*Job{
		{ID: 7, User: "alice", Account: "research", Partition: "gpu", QOS: "research", Assoc: alice, Nodes: 2, CPUs: 2,
			TRES: map[string]int64{"cpu": 2, "mem": 1000, "gres/gpu": 16, "node": 2}, AccrueTime: t0, EligibleTime: t0},
		{ID: 8, User: "charlie", Account: "batch", Partition: "gpu", QOS: "batch-lowprio", Assoc: charlie, Nodes: 1, CPUs: 1,
			TRES: map[string]int64{"cpu": 1, "gres/gpu": 8, "node": 1}, AccrueTime: t0, EligibleTime: t0, Nice: 100},
	}
	rows := SprioRows(NewCalculator(&cfg, cl, tr), jobs, t0.Add(2*time.Hour))
	for _, tc := range []struct {
		name string
		opt  SprioOptions
	}{
		{"sprio_tres_default.golden", SprioOptions{}},
		{"sprio_tres_l.golden", SprioOptions{Long: true}},
		{"sprio_tres_n.golden", SprioOptions{Norm: true}},
		{"sprio_tres_w.golden", SprioOptions{Weights: true}},
	} {
		got, err := FormatSprio(&cfg, rows, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name, got)
	}
}

// A multi-partition job has one row per partition (same job id, each with
// its own partition factor), kept in the order given; -p keeps one.
func TestSprioMultiPartition(t *testing.T) {
	cfg, cl, tr := ohpc(t)
	tr.Recompute(cfg)
	a, _ := tr.Lookup("physics", "alice")
	short := &Job{ID: 2001, User: "alice", Account: "physics", Partition: "short", QOS: "normal", Assoc: a, Nodes: 1, CPUs: 48, EligibleTime: t0}
	high := *short
	high.Partition = "high"
	rows := SprioRows(NewCalculator(cfg, cl, tr), []*Job{short, &high}, t0)
	got, err := FormatSprio(cfg, rows, SprioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "sprio_multipart.golden", got)
	if strings.Count(got, "2001 ") != 2 {
		t.Errorf("want two rows for job 2001:\n%s", got)
	}
	only, _ := FormatSprio(cfg, rows, SprioOptions{Partitions: []string{"high"}, NoHeader: true})
	if strings.Count(only, "\n") != 1 || !strings.Contains(only, "high") {
		t.Errorf("-p high: %q", only)
	}
	basic := *cfg
	basic.Type = Basic
	if _, err := FormatSprio(&basic, rows, SprioOptions{}); !errors.Is(err, ErrSprioUnsupported) {
		t.Errorf("priority/basic: %v", err)
	}
}

// TestSprioSort checks -S: the S7 rows (1001 alice short 9988, 1002 bob
// high 5024, 1005 bob short 777) in the orders a sort list asks for, ties
// keeping job id order, and a bad letter refused.
func TestSprioSort(t *testing.T) {
	cfg, cl, tr := ohpc(t)
	for _, tc := range []struct{ sort, want string }{
		{"", "1001 1002 1005"},
		{"-y", "1001 1002 1005"},
		{"Y", "1005 1002 1001"},
		{"-i", "1005 1002 1001"},
		{"u,-Y", "1001 1002 1005"},
		{"-u,+Y", "1005 1002 1001"},
		{"r", "1002 1001 1005"},
		{"-r,u", "1001 1005 1002"},
		{"P", "1005 1002 1001"}, // PARTITION 0 (a set priority has no factors), 4, 10
	} {
		got, err := FormatSprio(cfg, s7Rows(t, cfg, cl, tr), SprioOptions{Format: "%i", NoHeader: true, Sort: tc.sort})
		if err != nil {
			t.Fatal(err)
		}
		if g := strings.Join(strings.Fields(got), " "); g != tc.want {
			t.Errorf("-S %q: %s, want %s", tc.sort, g, tc.want)
		}
	}
	if _, err := FormatSprio(cfg, s7Rows(t, cfg, cl, tr), SprioOptions{Sort: "u,-Z"}); err == nil || err.Error() != "Invalid sort specification: Z" {
		t.Errorf("bad sort letter: %v", err)
	}
}
