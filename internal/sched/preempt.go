package sched

import (
	"cmp"
	"slices"
	"time"
)

// This file is Slurm's preemption (SEMANTICS §6; preempt.shtml and the
// preempt/qos and preempt/partition_prio plugins). The main scheduler asks
// it about a job that does not fit in the free resources; it finds the
// running jobs that job may preempt, orders them the way Slurm does
// (lowest QOS priority or partition PriorityTier first, then fewest
// nodes), removes them one by one until the job fits, drops every one that
// turns out not to be needed, and records the decisions: a CANCEL,
// REQUEUE or SUSPEND per victim and the preemptor's start.

func init() { preemptStep = runPreempt }

// victim is a preemption candidate with the mode, grace time and order key
// Slurm gives it.
type victim struct {
	job   *Job
	mode  PreemptMode
	grace time.Duration
	key   int64
}

// runPreempt is the PreemptHook: it reports whether rec was started by
// preempting other jobs (now or, with a GraceTime, once the victims end).
func runPreempt(c *Cycle, rec *QueueRec) bool {
	mask := preemptMask(c, rec)
	if mask.Empty() {
		return false
	}
	if waitingForGrace(c, rec, mask) {
		return false // victims chosen earlier are still in their grace time
	}
	cands := preemptCandidates(c, rec, mask)
	if len(cands) == 0 {
		return false
	}
	chosen := chooseVictims(c, rec, mask, cands)
	if chosen == nil {
		return false
	}
	return preemptFor(c, rec, mask, chosen)
}

// preemptMask is the nodes the preemptor may run on: its partition's
// nodes still offered by this pass, within its constraints.
func preemptMask(c *Cycle, rec *QueueRec) NodeSet {
	m := c.passMask(rec)
	c.resvMask(rec, m) // reserved nodes (resv_cycle.go)
	return m
}

// waitingForGrace reports whether rec would fit once the jobs already
// signalled for preemption (in their GraceTime) end: then no further job
// is preempted for it, it waits for those.
func waitingForGrace(c *Cycle, rec *QueueRec, mask NodeSet) bool {
	var trial *Avail
	for _, v := range c.State.jobList {
		if v.State.Base() != JobRunning || v.PreemptTime.IsZero() || !nodesIntersect(v.Alloc.Nodes, mask) {
			continue
		}
		if trial == nil {
			trial = c.Avail.Clone()
		}
		trial.Release(&v.Alloc)
	}
	if trial == nil {
		return false
	}
	_, ok := c.Fit(rec, trial, mask)
	return ok
}

func nodesIntersect(nodes []int32, mask NodeSet) bool {
	for _, n := range nodes {
		if mask.Has(int(n)) {
			return true
		}
	}
	return false
}

// preemptCandidates lists the running jobs on mask that rec's job may
// preempt, in Slurm's order: ascending preempt priority (QOS priority
// under preempt/qos, partition PriorityTier under preempt/partition_prio,
// 16 bits) times 65536 plus node count, then the lowest job id first
// (Slurm's job list order; without preempt_youngest_first the start time
// does not count: on the oracle a requeued job 1 that had started again,
// the youngest job, was still preempted before jobs 4-8).
func preemptCandidates(c *Cycle, rec *QueueRec, mask NodeSet) []victim {
	gone := map[JobID]bool{}
	for _, p := range c.Plan.Preemptions {
		gone[p.Job] = true
	}
	var out []victim
	for _, v := range c.State.jobList {
		if v.State.Base() != JobRunning || !v.PreemptTime.IsZero() || gone[v.ID] || v == rec.Job ||
			!nodesIntersect(v.Alloc.Nodes, mask) {
			continue
		}
		if vc, ok := canPreempt(c, rec, v); ok {
			out = append(out, vc)
		}
	}
	slices.SortStableFunc(out, func(a, b victim) int {
		if a.key != b.key {
			return cmp.Compare(a.key, b.key)
		}
		return cmp.Compare(a.job.ID, b.job.ID)
	})
	return out
}

// canPreempt decides whether rec's job may preempt running job v and how.
func canPreempt(c *Cycle, rec *QueueRec, v *Job) (victim, bool) {
	switch c.Config.PreemptType {
	case PreemptQOS:
		return canPreemptQOS(c, rec, v)
	case PreemptPartitionPrio:
		return canPreemptPartition(c, rec, v)
	}
	return victim{}, false
}

// canPreemptQOS is preempt/qos: the preemptor's QOS lists the victim's
// QOS in Preempt=; within one QOS only with WITHIN and a higher job
// priority; with the PRIORITY flag the preemptor's job priority must also
// be higher. The mode is the victim QOS's PreemptMode, else the cluster's.
func canPreemptQOS(c *Cycle, rec *QueueRec, v *Job) (victim, bool) {
	p := c.State.Policy
	j := rec.Job
	if p == nil || j.qos < 0 || v.qos < 0 || int(j.qos) >= len(p.QOS) || int(v.qos) >= len(p.QOS) {
		return victim{}, false
	}
	jq, vq := &p.QOS[j.qos], &p.QOS[v.qos]
	mode := vq.PreemptMode
	if mode.Action() == 0 {
		mode |= c.Config.PreemptMode.Action()
	}
	flags := mode | c.Config.PreemptMode | jq.PreemptMode
	switch {
	case j.qos == v.qos:
		if flags&PreemptWithin == 0 || rec.Priority <= v.Priority {
			return victim{}, false
		}
	case !slices.Contains(jq.Preempt, v.qos):
		return victim{}, false
	}
	if flags&PreemptPriority != 0 && rec.Priority <= v.Priority {
		return victim{}, false
	}
	return makeVictim(c, v, mode, vq.GraceTime, preemptExempt(c.Config, p, v), vq.Priority)
}

// canPreemptPartition is preempt/partition_prio: the victim's partition
// has a strictly lower PriorityTier, shares nodes with the preemptor's,
// and its PreemptMode (else the cluster's) is not OFF.
func canPreemptPartition(c *Cycle, rec *QueueRec, v *Job) (victim, bool) {
	if v.Partition < 0 {
		return victim{}, false
	}
	jp, vp := &c.Cluster.Partitions[rec.Part], &c.Cluster.Partitions[v.Partition]
	if vp.PriorityTier >= jp.PriorityTier || !vp.Nodes.Intersects(jp.Nodes) {
		return victim{}, false
	}
	mode := vp.PreemptMode
	if mode.Action() == 0 {
		mode |= c.Config.PreemptMode.Action()
	}
	if (mode|c.Config.PreemptMode)&PreemptPriority != 0 && rec.Priority <= v.Priority {
		return victim{}, false
	}
	return makeVictim(c, v, mode, vp.GraceTime, preemptExempt(c.Config, c.State.Policy, v), int64(vp.PriorityTier))
}

// preemptExempt is job v's PreemptExemptTime: its QOS's, else the
// cluster's.
func preemptExempt(cfg *Config, p *Policy, v *Job) time.Duration {
	if p != nil && v.qos >= 0 && int(v.qos) < len(p.QOS) && p.QOS[v.qos].PreemptExemptTime >= 0 {
		return p.QOS[v.qos].PreemptExemptTime
	}
	return cfg.PreemptExemptTime
}

// PreemptEligibleTime is when job j may be preempted: its start plus its
// PreemptExemptTime, which scontrol shows as PreemptEligibleTime for a
// job that started in a cluster with preemption (zero otherwise).
func PreemptEligibleTime(cfg *Config, p *Policy, j *Job) time.Time {
	start := j.StartTime
	if start.IsZero() && j.State.Finished() {
		start = j.EndTime // Slurm starts a job cancelled while pending as it ends it
	}
	if cfg.PreemptType == PreemptNone || start.IsZero() {
		return time.Time{}
	}
	return start.Add(max(preemptExempt(cfg, p, j), 0))
}

// makeVictim applies the mode (OFF: not a candidate; REQUEUE of a job that
// may not be requeued: CANCEL) and PreemptExemptTime.
func makeVictim(c *Cycle, v *Job, mode PreemptMode, grace, exempt time.Duration, prio int64) (victim, bool) {
	act := mode.Action()
	switch {
	case act&PreemptCancel != 0:
		act = PreemptCancel
	case act&PreemptRequeue != 0:
		act = PreemptRequeue
		if !v.Req.Requeue {
			act = PreemptCancel
		}
	case act&PreemptSuspend != 0:
		act = PreemptSuspend
		grace = 0 // GraceTime applies to CANCEL and REQUEUE only
	default:
		return victim{}, false // OFF or unset
	}
	if exempt > 0 && c.Now.Before(v.StartTime.Add(exempt)) {
		return victim{}, false
	}
	key := min(max(prio, 0), 0xffff)<<16 | int64(min(len(v.Alloc.Nodes), 0xffff))
	return victim{job: v, mode: act, grace: grace, key: key}, true
}

// chooseVictims removes candidates in order until rec fits, then tries to
// do without each chosen one but the last (Slurm re-orders and retries to
// minimise the set); nil when even all candidates are not enough.
func chooseVictims(c *Cycle, rec *QueueRec, mask NodeSet, cands []victim) []victim {
	trial := c.Avail.Clone()
	n := -1
	for i := range cands {
		releaseVictim(trial, &cands[i])
		if _, ok := c.Fit(rec, trial, mask); ok {
			n = i + 1
			break
		}
	}
	if n < 0 {
		return nil
	}
	chosen := append([]victim(nil), cands[:n]...)
	for i := len(chosen) - 2; i >= 0; i-- {
		trial.CopyFrom(c.Avail)
		for k := range chosen {
			if k != i {
				releaseVictim(trial, &chosen[k])
			}
		}
		if _, ok := c.Fit(rec, trial, mask); ok {
			chosen = append(chosen[:i], chosen[i+1:]...)
		}
	}
	return chosen
}

// releaseVictim gives a victim's resources back in a trial view: all of
// them for CANCEL/REQUEUE, only its CPUs for SUSPEND (a suspended job
// keeps its memory and GRES, as in Slurm).
func releaseVictim(a *Avail, v *victim) {
	if v.mode == PreemptSuspend {
		cpuOnly := Alloc{Nodes: v.job.Alloc.Nodes, CPUs: v.job.Alloc.CPUs, Mem: make([]int64, len(v.job.Alloc.Nodes)),
			Exclusive: v.job.Alloc.Exclusive}
		a.Release(&cpuOnly)
		a.touchedAll = true // Jobs below: refill cannot follow
		for _, ni := range v.job.Alloc.Nodes {
			a.Jobs[ni]++
		}
		return
	}
	a.Release(&v.job.Alloc)
}

// preemptFor records the preemptions and, when no victim has a grace
// time, the preemptor's start on the freed resources. With a GraceTime
// the victims are signalled now and killed at now+GraceTime; the
// preemptor keeps waiting (reason Resources) until they are gone.
func preemptFor(c *Cycle, rec *QueueRec, mask NodeSet, chosen []victim) bool {
	j := rec.Job
	ids := make([]JobID, 0, len(chosen))
	graced := false
	for i := range chosen {
		v := &chosen[i]
		ids = append(ids, v.job.ID)
		if v.grace > 0 {
			graced = true
			c.Plan.Preemptions = append(c.Plan.Preemptions, Preemption{Job: v.job.ID, Mode: v.mode, By: j.ID,
				GraceEnd: c.Now.Add(v.grace)})
			continue
		}
		c.Preempt(v.job, v.mode, j.ID, 0)
	}
	if graced {
		return false
	}
	al, ok := c.Fit(rec, c.Avail, mask)
	if !ok {
		return false // cannot happen: chooseVictims tested this very set
	}
	c.StartJob(rec, al, c.TimeLimit(j, rec.Part), false, ids)
	return true
}
