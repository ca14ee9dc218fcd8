package priority

import (
	"math"
	"time"
)

// MaxPriority is the largest job priority (2^32-1); 0 is reserved for held
// jobs and 1 is the floor of a computed priority.
const MaxPriority = math.MaxUint32

// Partition is what the priority factors need of a partition.
type Partition struct {
	// JobFactor is PriorityJobFactor (default 1).
	JobFactor uint32
	// MaxTime is the partition MaxTime (the job size time base when a job
	// has no time limit); 0 = unlimited.
	MaxTime time.Duration
	// TRES is the partition's total TRES (part_ptr->tres_cnt), the
	// denominator of the TRES factors; global TRES (license/, bb/) carry
	// the system count.
	TRES map[string]int64
}

// Cluster is the cluster-wide state the factors are normalised against.
type Cluster struct {
	// Nodes is the number of active nodes (active_node_record_count).
	Nodes uint32
	// CPUs is the cluster CPU count (cluster_cpus).
	CPUs uint32
	// Partitions by name.
	Partitions map[string]*Partition
}

// Job is the per-job input of the multifactor plugin (one record per
// partition/QOS pair for multi-partition jobs).
type Job struct {
	ID                            uint32
	User, Account, Partition, QOS string
	// Assoc is the job's association index in the Tree (NoAssoc: none).
	Assoc int
	// Nodes is min_nodes; CPUs is the allocated CPU count if known, else
	// the requested maximum, else the minimum.
	Nodes, CPUs uint32
	// TimeLimit is the job's limit (0: unset, the partition MaxTime is used).
	TimeLimit time.Duration
	// AccrueTime is when the job started accruing age (see AccrueTime);
	// zero when it does not accrue.
	AccrueTime time.Time
	// EligibleTime is the job's begin (eligible) time, the submit time
	// with ACCRUE_ALWAYS; zero while it waits on a dependency. sprio hides
	// jobs whose eligible time is zero or in the future.
	EligibleTime time.Time
	// TRES is the allocated TRES if the job has an allocation, else the
	// requested TRES.
	TRES map[string]int64
	// Nice is --nice (subtracted raw); SiteFactor is added raw.
	Nice, SiteFactor int32
	// Held jobs have priority 0 and are not recomputed.
	Held bool
	// DirectPriority is a priority set explicitly (scontrol update
	// priority=N, sbatch --priority): never recomputed, every factor 0.
	DirectPriority uint32
	// Priority is the current priority (used by INCR_ONLY).
	Priority uint32
	// Running marks running/suspended jobs (recomputed only with
	// CALCULATE_RUNNING, listed by sprio only then).
	Running bool
}

// Factors are the normalised factors of one job and its priority.
type Factors struct {
	Age, Assoc, FairShare, JobSize, Partition, QOS float64
	// TRES holds one normalised factor per Config.WeightTRES entry.
	TRES []float64
	// Site and Nice are the raw site factor and nice value.
	Site, Nice int64
	// Priority is the stored priority: the truncated, clamped sum.
	Priority uint32
	// Direct is set for a direct-set priority (every factor 0).
	Direct bool
}

// Calculator computes multifactor priorities for one recompute pass. It is
// built once per pass (after Tree.Recompute) and then used for every
// pending job; Priority allocates nothing.
type Calculator struct {
	cfg      *Config
	cluster  *Cluster
	tree     *Tree
	maxPart  float64
	maxQOS   float64
	maxAssoc float64
	// maxAge in seconds, for the MaxAge it was computed from: age runs
	// for every pending job at every recalculation
	maxAge    time.Duration
	maxAgeSec float64
}

// NewCalculator prepares a pass: it finds the largest PriorityJobFactor
// (at least 1, Slurm's DEF_PART_MAX_PRIORITY), QOS priority and
// association priority used for normalisation. tree may be nil (no
// fair-share, association or QOS data).
func NewCalculator(cfg *Config, cluster *Cluster, tree *Tree) *Calculator {
	c := &Calculator{}
	c.Reset(cfg, cluster, tree)
	return c
}

// Reset prepares an existing Calculator for a new pass without allocating.
func (c *Calculator) Reset(cfg *Config, cluster *Cluster, tree *Tree) {
	*c = Calculator{cfg: cfg, cluster: cluster, tree: tree, maxPart: 1}
	if cluster != nil {
		for _, p := range cluster.Partitions {
			c.maxPart = math.Max(c.maxPart, float64(p.JobFactor))
		}
	}
	if tree != nil {
		tree.prepare()
		tree.refreshHot()
		for i := range tree.Assocs {
			c.maxAssoc = math.Max(c.maxAssoc, float64(tree.Assocs[i].Priority))
		}
		for _, q := range tree.QOS {
			c.maxQOS = math.Max(c.maxQOS, float64(q.Priority))
		}
	}
}

// Config returns the configuration the calculator was built with.
func (c *Calculator) Config() *Config { return c.cfg }

// Priority returns the job's multifactor priority: 0 for held jobs, the
// direct-set value if any, else site + Σ weight×factor − nice truncated to
// an integer and clamped to [1, 2^32-1]. With INCR_ONLY a lower result
// keeps the current priority.
func (c *Calculator) Priority(j *Job, now time.Time) uint32 {
	switch {
	case j.Held:
		return 0
	case j.DirectPriority > 0:
		return j.DirectPriority
	}
	sum := c.weightedSum(j, now, nil)
	p := clampPriority(sum + float64(j.SiteFactor) - float64(j.Nice))
	if c.cfg.Flags&FlagIncrOnly != 0 && p < j.Priority {
		return j.Priority
	}
	return p
}

// Factors returns every normalised factor of the job and its priority.
// f.TRES is reused when it has room.
func (c *Calculator) Factors(j *Job, now time.Time, f *Factors) {
	tres := f.TRES[:0]
	*f = Factors{Site: int64(j.SiteFactor), Nice: int64(j.Nice)}
	if j.DirectPriority > 0 && !j.Held {
		f.Direct, f.Priority, f.Site, f.Nice = true, j.DirectPriority, 0, 0
		f.TRES = tres
		return
	}
	for range c.cfg.WeightTRES {
		tres = append(tres, 0)
	}
	f.TRES = tres
	c.weightedSum(j, now, f)
	f.Priority = c.Priority(j, now)
}

// weightedSum computes Σ weight×factor; when f is non-nil it records the
// factors. Factors whose weight is 0 are not computed, as in Slurm.
func (c *Calculator) weightedSum(j *Job, now time.Time, f *Factors) float64 {
	cfg := c.cfg
	var sum float64
	if cfg.WeightAge != 0 {
		v := c.age(j, now)
		sum += v * float64(cfg.WeightAge)
		if f != nil {
			f.Age = v
		}
	}
	if cfg.WeightAssoc != 0 {
		v := c.assoc(j)
		sum += v * float64(cfg.WeightAssoc)
		if f != nil {
			f.Assoc = v
		}
	}
	if cfg.WeightFairshare != 0 {
		v := c.fairShare(j)
		sum += v * float64(cfg.WeightFairshare)
		if f != nil {
			f.FairShare = v
		}
	}
	if cfg.WeightJobSize != 0 {
		v := c.jobSize(j)
		sum += v * float64(cfg.WeightJobSize)
		if f != nil {
			f.JobSize = v
		}
	}
	// the partition (a lookup by name) only when a weight reads it: this
	// runs for every pending job at every PriorityCalcPeriod
	var part *Partition
	if cfg.WeightPartition != 0 || len(cfg.WeightTRES) > 0 {
		part = c.partition(j)
	}
	if cfg.WeightPartition != 0 {
		v := c.partFactor(part)
		sum += v * float64(cfg.WeightPartition)
		if f != nil {
			f.Partition = v
		}
	}
	if cfg.WeightQOS != 0 {
		v := c.qos(j)
		sum += v * float64(cfg.WeightQOS)
		if f != nil {
			f.QOS = v
		}
	}
	for k, w := range cfg.WeightTRES {
		if w.Weight == 0 {
			continue
		}
		v := c.tres(j, part, w.Name)
		sum += v * w.Weight
		if f != nil {
			f.TRES[k] = v
		}
	}
	return sum
}

func clampPriority(v float64) uint32 {
	switch {
	case v < 1 || math.IsNaN(v):
		return 1
	case v > MaxPriority:
		return MaxPriority
	}
	return uint32(v)
}

// age is min(1, (now - accrue_time) / PriorityMaxAge); 0 when the job does
// not accrue or accrues from the future.
func (c *Calculator) age(j *Job, now time.Time) float64 {
	if j.AccrueTime.IsZero() || !now.After(j.AccrueTime) {
		return 0
	}
	if c.maxAge != c.cfg.MaxAge || c.maxAgeSec == 0 {
		c.maxAge, c.maxAgeSec = c.cfg.MaxAge, c.cfg.MaxAge.Seconds()
	}
	maxAge := c.maxAgeSec
	if maxAge <= 0 {
		return 1
	}
	return math.Min(1, floorSeconds(now, j.AccrueTime)/maxAge)
}

func (c *Calculator) assoc(j *Job) float64 {
	if c.tree == nil || j.Assoc < 0 || j.Assoc >= len(c.tree.hot) {
		return 0
	}
	p := c.tree.hot[j.Assoc].priority
	if c.cfg.Flags&FlagNoNormalAssoc != 0 {
		return p
	}
	if c.maxAssoc == 0 {
		return 0
	}
	return p / c.maxAssoc
}

func (c *Calculator) fairShare(j *Job) float64 {
	if c.tree == nil || j.Assoc < 0 || j.Assoc >= len(c.tree.hot) {
		return 0
	}
	return c.tree.fairShareOf(j.Assoc)
}

func (c *Calculator) partition(j *Job) *Partition {
	if c.cluster == nil {
		return nil
	}
	return c.cluster.Partitions[j.Partition]
}

// partFactor is PriorityJobFactor / max(1, largest PriorityJobFactor).
func (c *Calculator) partFactor(p *Partition) float64 {
	if p == nil || p.JobFactor == 0 {
		return 0
	}
	if c.cfg.Flags&FlagNoNormalPart != 0 {
		return float64(p.JobFactor)
	}
	return float64(p.JobFactor) / c.maxPart
}

// qos is the job QOS priority over the largest QOS priority (0 when the
// QOS priority is 0). The partition QOS is not used, as in Slurm.
func (c *Calculator) qos(j *Job) float64 {
	if c.tree == nil {
		return 0
	}
	q := c.tree.QOS[j.QOS]
	if q == nil || q.Priority == 0 {
		return 0
	}
	if c.cfg.Flags&FlagNoNormalQOS != 0 {
		return float64(q.Priority)
	}
	return float64(q.Priority) / c.maxQOS
}

// tres is the job's count of one TRES over the partition's total.
func (c *Calculator) tres(j *Job, p *Partition, name string) float64 {
	v := float64(j.TRES[name])
	if c.cfg.Flags&FlagNoNormalTRES != 0 {
		return v
	}
	if p == nil {
		return 0
	}
	total := p.TRES[name]
	if total <= 0 {
		return 0
	}
	return v / float64(total)
}

// jobSize mixes the node fraction and the CPU fraction of the cluster:
// (nodes/N + cpus/C)/2, inverted with PriorityFavorSmall, and relative to
// the time limit in minutes with SMALL_RELATIVE_TO_TIME; clamped to [0,1].
func (c *Calculator) jobSize(j *Job) float64 {
	cl := c.cluster
	if cl == nil || cl.Nodes == 0 {
		return 0
	}
	n, cpus := float64(cl.Nodes), float64(cl.CPUs)
	nodes, jc := float64(j.Nodes), float64(j.CPUs)
	var v float64
	switch {
	case c.cfg.Flags&FlagSmallRelativeToTime != 0:
		v = c.sizeRelativeToTime(j, n, cpus, nodes, jc)
	case c.cfg.FavorSmall:
		if nodes < n {
			v = (n - nodes) / n
		}
		if cpus > 0 && jc < cpus {
			v += (cpus - jc) / cpus
		}
		v /= 2
	default:
		v = nodes / n
		if cpus > 0 && jc > 0 {
			v = (v + jc/cpus) / 2
		}
	}
	return math.Max(0, math.Min(1, v))
}

func (c *Calculator) sizeRelativeToTime(j *Job, n, cpus, nodes, jc float64) float64 {
	if cpus == 0 {
		return 0
	}
	size := math.Max(nodes*cpus/n, jc)
	limit := j.TimeLimit
	if limit <= 0 {
		if p := c.partition(j); p != nil {
			limit = p.MaxTime
		}
	}
	var v float64
	if mins := limit.Minutes(); mins > 0 {
		v = size / mins / cpus // no limit: an unbounded time makes it 0
	}
	if c.cfg.FavorSmall {
		v = 1 - v
	}
	return v
}

// AccrueTime applies Slurm's accrue-time rules: with ACCRUE_ALWAYS the
// job accrues from submit; without limits enforcement from its begin
// (eligible) time; with limits enforcement not while held, dependent or
// begin time in the future. It returns the zero time when the job does
// not accrue. A requeue resets accrual: pass the new submit/begin times.
func AccrueTime(flags Flags, enforceLimits bool, submit, begin time.Time, held, dependent bool, now time.Time) time.Time {
	if flags&FlagAccrueAlways != 0 {
		return submit
	}
	if begin.IsZero() {
		begin = submit
	}
	if enforceLimits && (held || dependent || begin.After(now)) {
		return time.Time{}
	}
	return begin
}

// UpdateAll is the job part of a recompute pass: it stores the new
// priority of every pending job (and running ones with CALCULATE_RUNNING),
// skipping held jobs (priority 0) and direct-set priorities, as Slurm's
// decay thread does. It allocates nothing.
func (c *Calculator) UpdateAll(jobs []*Job, now time.Time) {
	for _, j := range jobs {
		if j.Held || j.DirectPriority > 0 || j.Running && c.cfg.Flags&FlagCalculateRunning == 0 {
			continue
		}
		j.Priority = c.Priority(j, now)
	}
}
