package ctld

import (
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/priority"
	"github.com/sluice-hpc/sluice/internal/sched"
	"github.com/sluice-hpc/sluice/internal/tres"
)

// prioState drives internal/priority: the fair-share tree (usage charged
// and decayed at every PriorityCalcPeriod) and the job priorities.
type prioState struct {
	cfg      priority.Config
	cluster  *priority.Cluster
	tree     *priority.Tree
	calc     *priority.Calculator
	basic    priority.BasicAllocator
	lastPass time.Time

	// billing holds each partition's TRESBillingWeights (slurm.conf's or
	// set by scontrol), by partition name; billingText as written.
	billing     map[string][]priority.TRESWeight
	billingText map[string]string
	// parts is the scontrol partition bookkeeping (partition.go); stale
	// marks partitions changed before the calculator existed.
	parts      partBook
	partsStale bool
}

// init builds the priority configuration and the fair-share tree.
func (p *prioState) init(c *conf.Config, ap *acct.Policy) {
	cfg, err := priority.ConfigFrom(c)
	if err != nil {
		cfg = priority.DefaultConfig()
	}
	p.cfg = cfg
	p.cluster = priority.ClusterFrom(c)
	if ap != nil {
		if t, err := priority.FromPolicy(ap, c.ClusterName); err == nil {
			p.tree = t
		}
	}
	if p.tree == nil {
		p.tree = priority.NewTree()
	}
	// sshare's TRESRunMins and GrpTRESRaw list the tracked TRES (oracle,
	// acct-shows: gres/gpu brings gres/gpumem and gres/gpuutil)
	p.tree.TRESNames = strings.Split(accountingTRES(strings.Join(c.Accounting.TRES, ",")), ",")
	p.tree.Recompute(&p.cfg)
	p.calc = priority.NewCalculator(&p.cfg, p.cluster, p.tree)
	for _, cp := range c.Partitions {
		if _, set := p.billingText[cp.Name]; !set { // a restored scontrol change wins
			p.setBilling(cp.Name, cp.TRESBillingWeights)
		}
	}
}

// setBilling sets partition name's TRESBillingWeights ("" = bill the
// allocated CPUs); weights that do not parse bill CPUs as well.
func (p *prioState) setBilling(name, text string) {
	if p.billing == nil {
		p.billing, p.billingText = map[string][]priority.TRESWeight{}, map[string]string{}
	}
	w, err := priority.ParseTRESWeights(text)
	if err != nil {
		w = nil
	}
	p.billing[name], p.billingText[name] = w, text
}

// billingText returns partition name's TRESBillingWeights as written.
func (p *prioState) billingTextOf(name string) string { return p.billingText[name] }

// period is PriorityCalcPeriod.
func (p *prioState) period() time.Duration {
	if p.cfg.CalcPeriod <= 0 {
		return 5 * time.Minute
	}
	return p.cfg.CalcPeriod
}

// recalcPriorities is one PriorityCalcPeriod pass: usage of the running
// (and suspended) jobs is charged and decayed, fair-share recomputed, and every pending
// job's priority refreshed.
func (ls *loopState) recalcPriorities(now time.Time) {
	p := &ls.prio
	ls.lastPrio = now
	if p.cfg.Type == priority.Basic {
		return
	}
	if p.partsStale {
		ls.syncPrioPartitions() // partitions restored before the calculator was built
	}
	var running []priority.RunningJob
	for _, j := range ls.st.Jobs() {
		// A suspended job keeps its allocation and is charged like a
		// running one: Slurm charges a run's wall time, suspension included.
		if b := j.State.Base(); b == sched.JobRunning || b == sched.JobSuspended {
			running = append(running, ls.runningJob(j))
		}
	}
	p.tree.Pass(&p.cfg, running, p.lastPass, now, time.Local)
	p.lastPass = now
	p.calc.Reset(&p.cfg, p.cluster, p.tree)
	for _, j := range ls.st.Jobs() {
		if j.State.Base() != sched.JobPending {
			continue
		}
		old := j.Priority
		ls.setPriority(j, now)
		if j.Priority != old {
			ls.dirty[j.ID] = struct{}{}
		}
	}
}

// setPriority computes one job's priority now (at submit, on update).
func (ls *loopState) setPriority(j *sched.Job, now time.Time) {
	p := &ls.prio
	if j.DirectPriority {
		return // kept while held too (shown as 0), restored on release
	}
	if j.Hold != sched.HoldNone {
		j.Priority = 0
		return
	}
	if p.cfg.Type == priority.Basic {
		if j.Priority == 0 {
			j.Priority = p.basic.Next(j.Req.Nice, false, 0)
		}
		return
	}
	// One priority per requested partition, as Slurm keeps them; the
	// job's Priority is its first (highest-tier) partition's.
	if cap(j.PartPriority) < len(j.Partitions) {
		j.PartPriority = make([]uint32, len(j.Partitions))
	}
	j.PartPriority = j.PartPriority[:len(j.Partitions)]
	for i, part := range j.Partitions {
		if int(part) >= len(ls.st.Cluster.Partitions) {
			continue // a partition not restored yet (partition.go)
		}
		pj := ls.priorityJobIn(j, part)
		j.PartPriority[i] = p.calc.Priority(&pj, now)
	}
	if len(j.PartPriority) > 0 {
		j.Priority = j.PartPriority[0]
	}
}

// explain returns the priority breakdown of j (scontrol show job).
func (ls *loopState) explain(j *sched.Job, now time.Time) priority.Explanation {
	pj := ls.priorityJob(j)
	return ls.prio.calc.Explain(&pj, now)
}

// priorityJob is j as the priority package sees it in its first
// partition (the core's PriorityJob, plus the controller's SiteFactor).
func (ls *loopState) priorityJob(j *sched.Job) priority.Job {
	part := j.Partition
	if part < 0 && len(j.Partitions) > 0 {
		part = j.Partitions[0]
	}
	if int(part) >= len(ls.st.Cluster.Partitions) {
		part = 0 // a partition not restored yet (partition.go)
	}
	return ls.priorityJobIn(j, max(part, 0))
}

func (ls *loopState) priorityJobIn(j *sched.Job, part int32) priority.Job {
	var pj priority.Job
	ls.st.PriorityJob(j, part, ls.prio.tree, &pj)
	pj.SiteFactor = ls.site[j.ID]
	return pj
}

// runningJob is j as usage accounting sees it.
func (ls *loopState) runningJob(j *sched.Job) priority.RunningJob {
	assoc := -1
	if a, ok := ls.prio.tree.LookupJob(j.Account, j.User, ls.partitionName(j)); ok {
		assoc = a
	}
	alloc := allocVector(ls.st.Cluster, &j.Alloc)
	// Fair-share is charged the billable TRES: the partition's
	// TRESBillingWeights applied to the allocation (PriorityFlags
	// MAX_TRES / MAX_TRES_GRES honoured), the CPU count without weights.
	billing := priority.Billable(alloc, ls.prio.billing[ls.runPartition(j)], ls.prio.cfg.Flags)
	return priority.RunningJob{Assoc: assoc, QOS: j.QOS, Start: j.StartTime, End: j.EndTime,
		Billing: billing, Alloc: alloc}
}

// allocTRESVector is j's allocated TRES as sacct (AllocTRES) and
// scontrol (TRES=) show them: billing is the billable TRES of the
// partition's TRESBillingWeights (the CPU count without weights), which
// Slurm stores as an integer; the fraction is dropped here.
func (ls *loopState) allocTRESVector(j *sched.Job) tres.Vector {
	return ls.allocTRESOf(&j.Alloc, ls.runPartition(j))
}

// allocTRESOf is allocation al's TRES in partition part (its billing
// weights), for the current run or an earlier one.
func (ls *loopState) allocTRESOf(al *sched.Alloc, part string) tres.Vector {
	v := allocVector(ls.st.Cluster, al)
	if len(v) > 0 {
		v["billing"] = int64(priority.Billable(v, ls.prio.billing[part], ls.prio.cfg.Flags))
	}
	return v
}

// runPartition is the name of the partition j runs in ("" if none).
func (ls *loopState) runPartition(j *sched.Job) string {
	if j.Partition >= 0 && int(j.Partition) < len(ls.st.Cluster.Partitions) {
		return ls.st.Cluster.Partitions[j.Partition].Name
	}
	return ""
}

// refreshPendingPriorities recomputes the pending jobs' priorities
// without a usage pass (after a partition change: PriorityJobFactor and
// the TRES totals may have moved).
func (ls *loopState) refreshPendingPriorities(now time.Time) {
	p := &ls.prio
	if p.cfg.Type == priority.Basic || p.calc == nil {
		return
	}
	p.calc.Reset(&p.cfg, p.cluster, p.tree)
	for _, j := range ls.st.Jobs() {
		if j.State.Base() != sched.JobPending {
			continue
		}
		old := j.Priority
		ls.setPriority(j, now)
		if j.Priority != old {
			ls.dirty[j.ID] = struct{}{}
		}
	}
}

// charge adds the usage of a job that ends at end since the last pass
// (the pass charges running jobs only).
func (p *prioState) charge(ls *loopState, j *sched.Job, end time.Time) {
	if p.cfg.Type == priority.Basic || p.lastPass.IsZero() {
		return
	}
	rj := ls.runningJob(j)
	rj.End = end
	p.tree.Charge(&p.cfg, &rj, p.lastPass, end)
}

// endOverUsage ends with TIMEOUT the running jobs whose QOS or
// association has used up a GrpTRESMins limit (sched.UsageTimedOut). The
// usage only grows at a priority pass, so this runs after each.
func (ls *loopState) endOverUsage(now time.Time) {
	for _, t := range ls.st.UsageTimedOut(ls.cfg) {
		if ls.endTimedOut(ls.st.Job(t.Job), now, t.Limit) {
			ls.c.log.Info("job timed out: at or over a usage limit", "job", t.Job, "limit", t.Limit)
		}
	}
}

// prioUsage is the scheduler's view of the decayed usage that GrpTRESMins
// and GrpWall are checked against (sched.State.Usage): Slurm's
// usage_tres_raw and grp_used_wall, which the priority plugin charges and
// decays at every PriorityCalcPeriod. It reads the tree the controller
// holds now, which sacctmgr changes replace.
type prioUsage struct{ p *prioState }

func (u prioUsage) source() (sched.TreeUsage, bool) {
	return sched.TreeUsage{Tree: u.p.tree}, u.p.tree != nil
}

// AssocUsage implements sched.UsageSource.
func (u prioUsage) AssocUsage(account, user, partition string) (map[string]float64, float64, bool) {
	if s, ok := u.source(); ok {
		return s.AssocUsage(account, user, partition)
	}
	return nil, 0, false
}

// QOSUsage implements sched.UsageSource.
func (u prioUsage) QOSUsage(name string) (map[string]float64, float64, bool) {
	if s, ok := u.source(); ok {
		return s.QOSUsage(name)
	}
	return nil, 0, false
}
