package sched

import (
	"cmp"
	"slices"
)

// order sorts the queue as Slurm's sort_job_queue2 does (SEMANTICS §4.1):
// a job that can preempt first (when preemption is enabled), then higher
// partition PriorityTier, higher priority, earlier submit time, lower job
// id (array tasks by the array's id, then task id).
func (c *Cycle) order() {
	if c.Config.PreemptType != PreemptNone {
		ranks := c.qosPreemptRanks()
		for i := range c.Queue {
			r := &c.Queue[i]
			if preemptRank != nil {
				r.Rank = preemptRank(c, r.Job)
			} else if ranks != nil && r.Job.qos >= 0 && int(r.Job.qos) < len(ranks) {
				r.Rank = ranks[r.Job.qos]
			}
		}
	}
	slices.SortStableFunc(c.Queue, compareRecs)
	c.Plan.Stats.QueueLen = len(c.Queue)
}

func compareRecs(a, b QueueRec) int {
	if a.Rank != b.Rank {
		return cmp.Compare(b.Rank, a.Rank)
	}
	if (a.Resv != 0) != (b.Resv != 0) {
		if a.Resv != 0 {
			return -1 // rule 3: a record in a reservation first
		}
		return 1
	}
	if a.Tier != b.Tier {
		return cmp.Compare(b.Tier, a.Tier)
	}
	if a.Priority != b.Priority {
		return cmp.Compare(b.Priority, a.Priority)
	}
	if c := a.Job.SubmitTime.Compare(b.Job.SubmitTime); c != 0 {
		return c
	}
	ai, at := arrayKey(a.Job)
	bi, bt := arrayKey(b.Job)
	if ai != bi {
		return cmp.Compare(ai, bi)
	}
	return cmp.Compare(at, bt)
}

// arrayKey is the (id, task) pair used for the last tie-break.
func arrayKey(j *Job) (JobID, int32) {
	if j.Array != nil {
		return j.Array.JobID, j.Array.TaskID
	}
	return j.ID, -1
}

// qosPreemptRanks gives every QOS a rank under preempt/qos: 0 for a QOS
// that preempts nothing, else one more than the highest rank among the
// QOS it may preempt. Sorting by rank puts every job that can preempt
// another's QOS before it, which is Slurm's "preemptor first" rule made
// a total order (see docs/differences.md).
func (c *Cycle) qosPreemptRanks() []int32 {
	p := c.State.Policy
	if p == nil || c.Config.PreemptType != PreemptQOS {
		return nil
	}
	ranks := make([]int32, len(p.QOS))
	state := make([]uint8, len(p.QOS)) // 0 new, 1 visiting, 2 done
	var visit func(q int32) int32
	visit = func(q int32) int32 {
		switch state[q] {
		case 1:
			return 0 // a cycle in Preempt lists: stop
		case 2:
			return ranks[q]
		}
		state[q] = 1
		r := int32(0)
		for _, v := range p.QOS[q].Preempt {
			if v != q {
				r = max(r, visit(v)+1)
			}
		}
		ranks[q], state[q] = r, 2
		return r
	}
	for q := range p.QOS {
		visit(int32(q))
	}
	return ranks
}
