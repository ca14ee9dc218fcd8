package conf

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFixturesLoad: every shared acceptance config loads without error.
func TestFixturesLoad(t *testing.T) {
	needShared(t, fixtures)
	files, err := filepath.Glob(fixtures + "*.conf")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c, _, err := Load(f)
			if err != nil {
				t.Fatalf("%v", err)
			}
			if len(c.Nodes) == 0 || len(c.Partitions) == 0 || c.Default() == nil {
				t.Fatalf("nodes=%d partitions=%d default=%v", len(c.Nodes), len(c.Partitions), c.Default())
			}
		})
	}
}

// TestGPUClusterSummary is the acceptance: 30 nodes, dev default,
// and the cluster TRES totals.
func TestGPUClusterSummary(t *testing.T) {
	c, _, err := Load(examples + "gpu-cluster/slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 30 {
		t.Errorf("nodes = %d, want 30", len(c.Nodes))
	}
	if c.DefaultPartition != "dev" {
		t.Errorf("default partition = %q, want dev", c.DefaultPartition)
	}
	total := c.TotalTRES()
	t.Logf("gpu-cluster TRES: %s", total)
	for _, want := range []string{"cpu=1952", "node=30", "gres/gpu=212", "gres/gpu:a100=148", "gres/gpu:h100=64"} {
		if !strings.Contains(","+total.String()+",", ","+want+",") {
			t.Errorf("TRES %s lacks %s", total, want)
		}
	}
	h := c.Partition("h100-training")
	if h.PriorityTier != 200 || h.PriorityJobFactor != 200 || len(h.Nodes) != 8 {
		t.Errorf("h100-training: tier %d factor %d nodes %d", h.PriorityTier, h.PriorityJobFactor, len(h.Nodes))
	}
	if got := c.PartitionTRES(h).String(); !strings.Contains(got, "gres/gpu=64") || !strings.Contains(got, "cpu=768") {
		t.Errorf("h100-training TRES = %s", got)
	}
	if c.Preempt.Mode != PreemptRequeue || c.Preempt.ExemptTime.Minutes() != 30 {
		t.Errorf("preempt = %v exempt %v", c.Preempt.Mode, c.Preempt.ExemptTime)
	}
	sp := c.SchedulerParameters
	if sp.BfMaxJobTest != 5000 || sp.BfResolution.Seconds() != 600 || sp.BfInterval.Seconds() != 30 || sp.BfWindow.Minutes() != 1440 {
		t.Errorf("scheduler parameters = %+v", sp)
	}
	if got := c.Accounting.TRES; !strings.Contains(strings.Join(got, ","), "gres/gpu:h100") {
		t.Errorf("tracked TRES = %v", got)
	}
}

// TestUBCCRConfig: a production slurm.conf with many keys Sluice does not
// act on parses, each such key kept and reported, never an error.
func TestUBCCRConfig(t *testing.T) {
	needShared(t, ubccr)
	c, warns, err := Load(ubccr + "slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 217 {
		t.Errorf("nodes = %d, want 217", len(c.Nodes))
	}
	// NodeName=DEFAULT lines accumulate: n001 has 2x16 cores and no CPUs=,
	// g001 gets CPUs=40 from the second DEFAULT, b001 keeps it with 754000 MB.
	for _, tc := range []struct {
		name string
		cpus int
		mem  int64
		w    uint32
	}{{"n001", 32, 187000, 60}, {"gn002", 32, 187000, 190}, {"g001", 40, 187000, 190}, {"m096", 40, 187000, 70}, {"b024", 40, 754000, 160}} {
		n := c.Node(tc.name)
		if n == nil || n.CPUs != tc.cpus || n.RealMemory != tc.mem || n.Weight != tc.w {
			t.Errorf("node %s = %+v, want cpus %d mem %d weight %d", tc.name, n, tc.cpus, tc.mem, tc.w)
		}
	}
	if c.TotalTRES()["gres/gpu"] != 20 {
		t.Errorf("gpus = %d, want 20", c.TotalTRES()["gres/gpu"])
	}
	if _, ok := c.Unused["AuthType"]; !ok || !hasWarning(warns, "slurm.conf:6:", "AuthType") {
		t.Errorf("AuthType not kept/reported: %v", warns)
	}
	if c.EnforcePartLimits != EnforcePartAll || c.JobRequeue || c.Priority.FairShareDampeningFactor != 5 {
		t.Errorf("EnforcePartLimits %s JobRequeue %v damp %d", c.EnforcePartLimits, c.JobRequeue, c.Priority.FairShareDampeningFactor)
	}
	if !c.Priority.Flags.Has(FlagNoNormalTRES) || c.Priority.WeightTRES["gres/gpu"] != 30000 {
		t.Errorf("priority = %+v", c.Priority)
	}
	if c.SchedulerParameters.BfMaxJobUser != 100 || c.SchedulerParameters.DefaultQueueDepth != 2500 || !c.SchedulerParameters.BfContinue {
		t.Errorf("sched = %+v", c.SchedulerParameters)
	}
	if c.Gres == nil || len(c.Gres.Lines) != 2 || c.Gres.AutoDetect != "off" {
		t.Fatalf("gres.conf = %+v", c.Gres)
	}
	if l := c.Gres.Lines[0]; l.Name != "gpu" || l.Count != 2 || len(l.Nodes) != 8 {
		t.Errorf("gres line = %+v", l)
	}
	if d := c.Partition("debug"); d.DefaultTime != 0 || d.PriorityTier != 700 || d.QOS != "debug" {
		t.Errorf("debug partition = %+v", d)
	}
}

// TestExamplesLoad: every config shipped in examples/ loads cleanly, with
// its gres.conf when it has one.
func TestExamplesLoad(t *testing.T) {
	files, _ := filepath.Glob(examples + "*/slurm.conf")
	if len(files) < 7 {
		t.Fatalf("examples: found %d slurm.conf files, want at least 7", len(files))
	}
	for _, f := range files {
		c, _, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if strings.Contains(f, "quickstart") {
			if c.Gres == nil || len(c.Gres.Lines) != 1 || c.Gres.Lines[0].Count != 2 || c.TotalTRES()["gres/gpu:l4"] != 4 {
				t.Errorf("quickstart gres = %+v, TRES %s", c.Gres, c.TotalTRES())
			}
		}
	}
}
