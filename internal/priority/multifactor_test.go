package priority

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// jobsizeConf is fixtures/jobsize.conf: one node with 4 CPUs,
// PriorityFavorSmall=YES, WeightAge=1000, WeightJobSize=1000, MaxAge=1-0.
func jobsizeConf() (*Config, *Cluster) {
	cfg := DefaultConfig()
	cfg.FavorSmall = true
	cfg.WeightAge, cfg.WeightJobSize = 1000, 1000
	cfg.MaxAge = day
	cl := &Cluster{Nodes: 1, CPUs: 4, Partitions: map[string]*Partition{"debug": {JobFactor: 1}}}
	return &cfg, cl
}

func cpuJob(id uint32, cpus uint32, accrue time.Time) *Job {
	return &Job{ID: id, Partition: "debug", Assoc: NoAssoc, Nodes: 1, CPUs: cpus, AccrueTime: accrue, EligibleTime: accrue}
}

// S4: real Slurm averages the node and CPU fractions, so on a one-node
// cluster a 1-CPU job scores 375 (not the walkthrough's 750) and a 4-CPU
// job 0; age gains 0.69 points a minute, 1000 after 24 h, then stays.
func TestS4JobSizeAndAge(t *testing.T) {
	cfg, cl := jobsizeConf()
	c := NewCalculator(cfg, cl, nil)
	for _, tc := range []struct {
		cpus uint32
		want float64
	}{{1, 375}, {2, 250}, {4, 0}} {
		var f Factors
		c.Factors(cpuJob(1, tc.cpus, t0), t0, &f)
		t.Logf("%d-CPU job: JOBSIZE factor %.7f weighted %.0f", tc.cpus, f.JobSize, f.JobSize*1000)
		if f.JobSize*1000 != tc.want {
			t.Errorf("%d CPUs: job size %v, want %v", tc.cpus, f.JobSize*1000, tc.want)
		}
	}
	for _, tc := range []struct {
		wait time.Duration
		want string
	}{
		{time.Minute, "0.69"},
		{time.Hour, "41.67"},
		{24 * time.Hour, "1000.00"},
		{72 * time.Hour, "1000.00"},
	} {
		var f Factors
		c.Factors(cpuJob(1, 4, t0), t0.Add(tc.wait), &f)
		got := fmt.Sprintf("%.2f", f.Age*1000)
		t.Logf("after %-6v AGE %.2f, PRIORITY %d", tc.wait, f.Age*1000, f.Priority)
		if got != tc.want {
			t.Errorf("after %v: age %v, want %s", tc.wait, f.Age*1000, tc.want)
		}
	}
	// A 4-CPU job that has waited 10 hours outranks a new 1-CPU job.
	big := c.Priority(cpuJob(1, 4, t0), t0.Add(10*time.Hour))
	small := c.Priority(cpuJob(2, 1, t0.Add(10*time.Hour)), t0.Add(10*time.Hour))
	t.Logf("after 10h: waiting 4-CPU job %d, new 1-CPU job %d", big, small)
	if big <= small {
		t.Errorf("large waiting job %d does not outrank new small job %d", big, small)
	}
}

// Job size without FavorSmall, from SEMANTICS: 1 node, 1 CPU on 10 nodes /
// 100 CPUs is (0.1+0.01)/2; SMALL_RELATIVE_TO_TIME divides by minutes.
func TestJobSizeVariants(t *testing.T) {
	cl := &Cluster{Nodes: 10, CPUs: 100, Partitions: map[string]*Partition{"p": {JobFactor: 1, MaxTime: time.Hour}}}
	cases := []struct {
		name  string
		flags Flags
		small bool
		job   Job
		want  float64
	}{
		{"favor large", 0, false, Job{Nodes: 1, CPUs: 1}, 0.055},
		{"favor small", 0, true, Job{Nodes: 1, CPUs: 1}, (0.9 + 0.99) / 2},
		{"relative to time", FlagSmallRelativeToTime, false, Job{Nodes: 1, CPUs: 20, TimeLimit: 10 * time.Minute}, 20.0 / 10 / 100},
		{"relative, node dominates", FlagSmallRelativeToTime, false, Job{Nodes: 2, CPUs: 1, TimeLimit: time.Minute}, 20.0 / 1 / 100},
		{"relative, partition MaxTime", FlagSmallRelativeToTime, true, Job{Nodes: 1, CPUs: 10}, 1 - 10.0/60/100},
	}
	for _, tc := range cases {
		cfg := DefaultConfig()
		cfg.Flags, cfg.FavorSmall, cfg.WeightJobSize = tc.flags, tc.small, 1
		j := tc.job
		j.Partition, j.Assoc = "p", NoAssoc
		var f Factors
		NewCalculator(&cfg, cl, nil).Factors(&j, t0, &f)
		if !near(f.JobSize, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, f.JobSize, tc.want)
		}
	}
}

// The sum is truncated, clamped to [1, 2^32-1]; site is added and nice
// subtracted raw; held jobs get 0; a direct-set priority is kept with
// every factor 0; zero weights are not computed.
func TestPrioritySumRules(t *testing.T) {
	cfg := DefaultConfig()
	cfg.WeightPartition, cfg.WeightQOS = 1000, 999
	cfg.WeightTRES, _ = ParseTRESWeights("CPU=1000,Mem=2000,GRES/gpu=4000")
	tr := buildTree(t, user("u", 1))
	tr.AddQOS("normal", 0, 1, false)
	tr.AddQOS("high", 3, 1, false)
	tr.AddQOS("top", 9, 1, false)
	cl := &Cluster{Nodes: 2, CPUs: 384, Partitions: map[string]*Partition{
		"gpu":   {JobFactor: 1, TRES: map[string]int64{"cpu": 384, "mem": 1520000, "gres/gpu": 16}},
		"other": {JobFactor: 4},
	}}
	u, _ := tr.Lookup("root", "u")
	base := Job{Partition: "gpu", QOS: "high", Assoc: u, Nodes: 1, CPUs: 96, TRES: map[string]int64{"cpu": 96, "mem": 380000, "gres/gpu": 4}}
	c := NewCalculator(&cfg, cl, tr)
	// partition 1/4*1000 = 250; QOS 3/9*999 = 333; TRES cpu 250 + mem 500 + gpu 1000.
	cases := []struct {
		name string
		mod  func(j *Job)
		want uint32
	}{
		{"sum truncated", func(j *Job) {}, 2333},
		{"site added", func(j *Job) { j.SiteFactor = 100 }, 2433},
		{"nice subtracted", func(j *Job) { j.Nice = 2000 }, 333},
		{"clamped to 1", func(j *Job) { j.Nice = 1 << 30 }, 1},
		{"large site", func(j *Job) { j.SiteFactor = math.MaxInt32 }, 2147483647 + 2333},
		{"held", func(j *Job) { j.Held = true }, 0},
		{"direct set", func(j *Job) { j.DirectPriority = 42 }, 42},
		{"QOS priority 0", func(j *Job) { j.QOS = "normal" }, 2000},
	}
	for _, tc := range cases {
		j := base
		tc.mod(&j)
		got := c.Priority(&j, t0)
		t.Logf("%-16s PRIORITY %d", tc.name, got)
		if got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := clampPriority(1e12); got != MaxPriority {
		t.Errorf("clamp to max: %d", got)
	}
	var f Factors
	j := base
	j.DirectPriority = 42
	c.Factors(&j, t0, &f)
	if f.Partition != 0 || f.QOS != 0 || !f.Direct || f.Priority != 42 {
		t.Errorf("direct-set factors %+v", f)
	}
	j = base
	c.Factors(&j, t0, &f)
	if f.Age != 0 || f.FairShare != 0 || f.JobSize != 0 {
		t.Errorf("zero-weight factors computed: %+v", f)
	}
	cfg.Flags = FlagNoNormalAll
	c = NewCalculator(&cfg, cl, tr)
	c.Factors(&j, t0, &f)
	if f.Partition != 1 || f.QOS != 3 || f.TRES[2] != 4 {
		t.Errorf("NO_NORMAL_ALL factors %+v", f)
	}
	cfg.Flags = FlagIncrOnly
	c = NewCalculator(&cfg, cl, tr)
	j.Priority = 5000
	if got := c.Priority(&j, t0); got != 5000 {
		t.Errorf("INCR_ONLY lowered priority to %d", got)
	}
}

// Accrue time: ACCRUE_ALWAYS from submit; with limits enforcement no
// accrual while held, dependent or before the begin time.
func TestAccrueTime(t *testing.T) {
	begin := t0.Add(time.Hour)
	cases := []struct {
		name             string
		flags            Flags
		limits, held, dp bool
		now              time.Time
		want             time.Time
	}{
		{"always", FlagAccrueAlways, true, true, true, t0, t0},
		{"no limits: begin", 0, false, true, false, t0, begin},
		{"limits, held", 0, true, true, false, begin.Add(time.Hour), time.Time{}},
		{"limits, dependent", 0, true, false, true, begin.Add(time.Hour), time.Time{}},
		{"limits, future begin", 0, true, false, false, t0, time.Time{}},
		{"limits, eligible", 0, true, false, false, begin.Add(time.Hour), begin},
	}
	for _, c := range cases {
		if got := AccrueTime(c.flags, c.limits, t0, begin, c.held, c.dp, c.now); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// priority/basic: FIFO from 0xffff0000-1; held jobs 0; nice shifts.
func TestBasic(t *testing.T) {
	var b BasicAllocator
	seq := []struct {
		nice int32
		held bool
		want uint32
	}{
		{0, false, 4294901759},
		{0, false, 4294901758},
		{0, true, 0},
		{10, false, 4294901747},
		{-100, false, 4294901846},
		{0, false, 4294901746},
	}
	for i, s := range seq {
		if got := b.Next(s.nice, s.held, 0); got != s.want {
			t.Errorf("job %d: %d, want %d", i+1, got, s.want)
		}
	}
	b.SetLowest(1)
	if got := b.Next(0, false, 0); got != 1 {
		t.Errorf("floor: %d, want 1", got)
	}
}

func TestUpdateAll(t *testing.T) {
	cfg, cl := jobsizeConf()
	c := NewCalculator(cfg, cl, nil)
	pending := cpuJob(1, 1, t0)
	held := cpuJob(2, 1, t0)
	held.Held, held.Priority = true, 0
	running := cpuJob(3, 1, t0)
	running.Running, running.Priority = true, 7
	direct := cpuJob(4, 1, t0)
	direct.DirectPriority, direct.Priority = 9, 9
	jobs := []*Job{pending, held, running, direct}
	c.UpdateAll(jobs, t0.Add(time.Hour))
	if pending.Priority != 416 || held.Priority != 0 || running.Priority != 7 || direct.Priority != 9 {
		t.Errorf("priorities %d %d %d %d", pending.Priority, held.Priority, running.Priority, direct.Priority)
	}
	cfg.Flags = FlagCalculateRunning
	c.UpdateAll(jobs, t0.Add(time.Hour))
	if running.Priority != 416 {
		t.Errorf("CALCULATE_RUNNING: running job priority %d", running.Priority)
	}
}

func TestValidateNice(t *testing.T) {
	cases := []struct {
		nice int64
		priv bool
		want error
	}{
		{100, false, nil}, {-5, true, nil}, {-5, false, ErrNicePermission},
		{NiceLimit + 1, true, ErrNiceRange}, {-NiceLimit - 1, true, ErrNiceRange}, {NiceLimit, false, nil},
	}
	for _, c := range cases {
		if got := ValidateNice(c.nice, c.priv); got != c.want {
			t.Errorf("nice %d priv %v: %v, want %v", c.nice, c.priv, got, c.want)
		}
	}
}
