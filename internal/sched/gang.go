package sched

import (
	"cmp"
	"slices"
	"time"
)

// This file is gang scheduling (PreemptMode=SUSPEND,GANG and
// SchedulerTimeSlice; SEMANTICS §6.4, gang_scheduling.shtml):
//
//   - Shadows: a job suspended by preemption (a higher-tier partition's or
//     a higher QOS's job) resumes as soon as its CPUs are free again, i.e.
//     when the "shadow" of its preemptor ends. The gang step runs first in
//     every cycle, so a suspended job gets its CPUs back before pending
//     jobs are placed. Slurm gives the preemptor the victim's own cores,
//     so a victim waits for its preemptor even when another preemptor's
//     end frees as many CPUs (oracle: j1 suspended by h1, then j2 by h2,
//     on one node; h2 ended first and j2 resumed, j1 waited for h1).
//   - Time slices: in a partition with OverSubscribe=FORCE:n (n > 1), jobs
//     that share CPUs take turns. Every SchedulerTimeSlice the driver
//     calls Timeslice, which rebuilds the partition's active set starting
//     from the longest-suspended job, adds every job that fits without
//     oversubscribing a CPU, and suspends the others.
//
// A suspended job's time limit is extended by the time it spent suspended
// (State.Resume moves its end time).

func init() { gangStep = runGang }

// runGang is the GangHook: it resumes suspended jobs whose preemptor is
// gone and whose CPUs are free, the longest-suspended first.
func runGang(c *Cycle) {
	if c.Config.PreemptType == PreemptNone && !hasForcePartition(c.Cluster) {
		return
	}
	var susp []*Job
	for _, j := range c.State.jobList {
		if j.State.Base() == JobSuspended && j.GangSuspended {
			susp = append(susp, j) // not jobs an operator suspended
		}
	}
	slices.SortStableFunc(susp, func(a, b *Job) int {
		if t := a.SuspendTime.Compare(b.SuspendTime); t != 0 {
			return t
		}
		return cmp.Compare(a.ID, b.ID)
	})
	for _, j := range susp {
		if p := c.State.jobs[j.SuspendedBy]; j.SuspendedBy != 0 && p != nil && isActive(p) {
			if gangSwaps(c, j, p) {
				c.Preempt(p, PreemptSuspend, j.ID, 0)
				c.Resume(j)
			}
			continue // its preemptor still holds its cores
		}
		if cpusFree(c.Avail, &j.Alloc) && allUsable(c.Avail, &j.Alloc) {
			c.Resume(j)
		}
	}
}

// gangSwaps reports whether the gang scheduler gives victim back the
// cores its QOS preemptor p took: it knows only partition tiers, so in
// a FORCE partition of the same tier the job it tracked first (the
// victim) keeps the row and the preemptor is suspended in its turn
// (oracle, preempt-qos-suspend: the high-QOS job ends SUSPENDED, the
// normal job it preempted RUNNING).
func gangSwaps(c *Cycle, victim, p *Job) bool {
	if c.Config.PreemptType != PreemptQOS || p.State.Base() != JobRunning || victim.Partition < 0 || p.Partition < 0 {
		return false
	}
	if !victim.StartTime.Before(p.StartTime) && !(victim.StartTime.Equal(p.StartTime) && victim.ID < p.ID) {
		return false // the preemptor is the older job: it keeps the row
	}
	vp, pp := &c.Cluster.Partitions[victim.Partition], &c.Cluster.Partitions[p.Partition]
	return vp.PriorityTier == pp.PriorityTier && vp.OverSubscribe.Mode == OverSubscribeForce && pp.OverSubscribe.Mode == OverSubscribeForce
}

func hasForcePartition(cl *Cluster) bool {
	for i := range cl.Partitions {
		if cl.Partitions[i].OverSubscribe.Mode == OverSubscribeForce {
			return true
		}
	}
	return false
}

// cpusFree reports whether every node of al has al's CPUs free.
func cpusFree(a *Avail, al *Alloc) bool {
	for s, ni := range al.Nodes {
		if a.CPUs[ni] < al.CPUs[s] {
			return false
		}
	}
	return true
}

func allUsable(a *Avail, al *Alloc) bool {
	for _, ni := range al.Nodes {
		if !a.Usable.Has(int(ni)) {
			return false
		}
	}
	return true
}

// Timeslice is the gang scheduler's time slice, which the driver calls
// every SchedulerTimeSlice with now: for every partition with
// OverSubscribe=FORCE:n (n > 1) when PreemptMode includes GANG, running
// jobs go to the end of the partition's list, the active set is rebuilt
// from the longest-suspended job on, adding each job whose CPUs fit (jobs
// of other partitions keep theirs), and the plan suspends the jobs that
// leave the active set and resumes those that join it. Apply it with
// State.Apply.
func Timeslice(st *State, now time.Time, cfg Config) Plan {
	plan := Plan{Now: now}
	if cfg.PreemptMode&PreemptGang == 0 {
		return plan
	}
	cl := st.Cluster
	for pi := range cl.Partitions {
		p := &cl.Partitions[pi]
		if p.OverSubscribe.Mode != OverSubscribeForce || p.OverSubscribe.Count <= 1 {
			continue
		}
		timeslicePartition(st, int32(pi), &plan)
	}
	return plan
}

func timeslicePartition(st *State, part int32, plan *Plan) {
	cl := st.Cluster
	var jobs []*Job
	used := make(map[int32]int32)
	for _, j := range st.jobList {
		if !isActive(j) || j.Partition < 0 || j.State.Base() == JobSuspended && !j.GangSuspended {
			continue // an operator's suspend is not the gang scheduler's to undo
		}
		if j.Partition == part {
			jobs = append(jobs, j)
			continue
		}
		if j.State.Base() == JobRunning {
			for s, ni := range j.Alloc.Nodes {
				used[ni] += j.Alloc.CPUs[s]
			}
		}
	}
	if len(jobs) == 0 {
		return
	}
	// Longest-suspended first, then the running jobs (moved to the end of
	// the list) in the order they started.
	slices.SortStableFunc(jobs, func(a, b *Job) int {
		as, bs := a.State.Base() == JobSuspended, b.State.Base() == JobSuspended
		if as != bs {
			if as {
				return -1
			}
			return 1
		}
		if as {
			if t := a.SuspendTime.Compare(b.SuspendTime); t != 0 {
				return t
			}
		} else if t := a.StartTime.Compare(b.StartTime); t != 0 {
			return t
		}
		return cmp.Compare(a.ID, b.ID)
	})
	active := make([]bool, len(jobs))
	for i, j := range jobs {
		fits := true
		for s, ni := range j.Alloc.Nodes {
			if used[ni]+j.Alloc.CPUs[s] > cl.Nodes[ni].CPUs {
				fits = false
				break
			}
		}
		if !fits {
			continue
		}
		active[i] = true
		for s, ni := range j.Alloc.Nodes {
			used[ni] += j.Alloc.CPUs[s]
		}
	}
	for i, j := range jobs {
		switch {
		case active[i] && j.State.Base() == JobSuspended:
			plan.Resumes = append(plan.Resumes, j.ID)
		case !active[i] && j.State.Base() == JobRunning:
			plan.Preemptions = append(plan.Preemptions, Preemption{Job: j.ID, Mode: PreemptSuspend, GraceEnd: plan.Now})
		}
	}
}
