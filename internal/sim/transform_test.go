package sim_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/sim"
)

// TestTransform checks the three workload transformations on a small
// trace: submit times divided by --time-scale, sizes and the machine
// multiplied by --scale-cluster, copies with shifted submits and ids.
func TestTransform(t *testing.T) {
	tr := &sim.Trace{MaxNodes: 4, MaxProcs: 8, Jobs: []sim.Job{job(7, 100, 10, 2, 60), job(12, 400, 10, 3, 60)}}
	tr.Jobs[1].MinNodes, tr.Jobs[1].MaxNodes = 1, 2
	out := sim.Transform{TimeScale: 2, ScaleCluster: 3, Repeat: 2}.Apply(tr)
	if out.MaxNodes != 12 || out.MaxProcs != 24 {
		t.Errorf("machine %d nodes %d procs, want 12 and 24", out.MaxNodes, out.MaxProcs)
	}
	type row struct {
		id, submit   int64
		tasks, nodes int
	}
	var got []row
	for _, j := range out.Jobs {
		got = append(got, row{j.ID, j.Submit, j.NTasks, j.MaxNodes})
	}
	// span of one copy: (400-100)/2 + 1 = 151 s; ids offset by 100
	want := []row{{7, 100, 6, 0}, {12, 250, 9, 6}, {107, 251, 6, 0}, {112, 401, 9, 6}}
	if len(got) != len(want) {
		t.Fatalf("got %d jobs, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("job %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if tr.Jobs[0].NTasks != 2 || tr.Jobs[1].Submit != 400 {
		t.Error("Apply changed the original trace")
	}
	if same := (sim.Transform{TimeScale: 1, ScaleCluster: 1, Repeat: 1}).Apply(tr); same != tr {
		t.Error("the identity transform copied the trace")
	}
}

// TestTransformValidate: the command line's factors must be positive.
func TestTransformValidate(t *testing.T) {
	for _, tr := range []sim.Transform{{TimeScale: 0, ScaleCluster: 1, Repeat: 1}, {TimeScale: -1, ScaleCluster: 1, Repeat: 1},
		{TimeScale: 1, ScaleCluster: 0, Repeat: 1}, {TimeScale: 1, ScaleCluster: 1, Repeat: 0}} {
		if tr.Validate() == nil {
			t.Errorf("%+v accepted", tr)
		}
	}
	if err := (sim.Transform{TimeScale: 1.5, ScaleCluster: 64, Repeat: 8}).Validate(); err != nil {
		t.Error(err)
	}
}

// TestOfferedLoad: compressing arrivals twice raises the offered load
// twice (the span halves, the work stays).
func TestOfferedLoad(t *testing.T) {
	tr := &sim.Trace{Jobs: []sim.Job{job(1, 0, 100, 4, 1000), job(2, 1000, 100, 4, 1000)}}
	base := sim.OfferedLoad(tr, 8)
	if base != 0.1 {
		t.Errorf("offered load %v, want 0.1 (800 CPU-s over 1000 s x 8 CPUs)", base)
	}
	if got := sim.OfferedLoad(sim.Transform{TimeScale: 2}.Apply(tr), 8); got != 0.2 {
		t.Errorf("offered load at --time-scale 2 = %v, want 0.2", got)
	}
}

// TestRejectReasonsMaxJobCount replays 200 SDSC jobs on a cluster with
// MaxJobCount=20: the jobs submitted while 20 are held are rejected, and
// the metrics count them by reason with the MaxJobCount advice.
func TestRejectReasonsMaxJobCount(t *testing.T) {
	base, err := os.ReadFile("../../examples/traces/sp2-128-fcfs.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "small.conf")
	if err := os.WriteFile(conf, append(base, "MaxJobCount=20\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := sim.ReadFile("../../examples/traces/sdsc-sp2-5k.swf.gz", sim.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr.Jobs = tr.Jobs[:200]
	run, err := sim.Simulate(sim.Setup{Conf: conf}, sim.Options{Trace: tr})
	if err != nil {
		t.Fatal(err)
	}
	m := &run.Metrics
	if m.Rejected == 0 || m.RejectReasons["MaxJobCount limit reached"] != m.Rejected {
		t.Fatalf("rejected %d, reasons %v: want every rejection for MaxJobCount", m.Rejected, m.RejectReasons)
	}
	if s := m.RejectSummary(); !strings.Contains(s, "MaxJobCount limit reached: ") {
		t.Errorf("summary %q does not name the reason", s)
	}
	if !strings.Contains(m.MaxJobCountHint(), "10000") {
		t.Errorf("hint %q does not name Slurm's default", m.MaxJobCountHint())
	}
}

// TestEngineDuplicateIDNamesLines: two jobs with one id are refused with
// the id and both trace lines.
func TestEngineDuplicateIDNamesLines(t *testing.T) {
	a, b := job(5, 0, 10, 1, 100), job(5, 3, 10, 1, 100)
	a.Line, b.Line = 12, 40
	_, _, err := sim.NewEngine(sim.EngineConfig{}, newFCFS(4), []sim.Job{a, b}).Run()
	if !errors.Is(err, sim.ErrDuplicateID) || !strings.Contains(err.Error(), "job id 5 on line 40 was already used on line 12") {
		t.Errorf("error %v, want the duplicate id 5 with lines 40 and 12", err)
	}
}

// TestEngineStop: a replay whose context is cancelled (SIGINT) ends with
// the context's error.
func TestEngineStop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := sim.NewEngine(sim.EngineConfig{Stop: ctx.Err}, newFCFS(4), []sim.Job{job(1, 0, 10, 1, 100), job(2, 5, 10, 1, 100)}).Run()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
