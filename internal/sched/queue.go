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
	c.sortQueue()
	c.Plan.Stats.QueueLen = len(c.Queue)
}

// sortQueue sorts the queue exactly as a stable sort by compareRecs would,
// cheaply when the order changed little since the last cycle (as between
// a simulator's passes, where the gate's job-id order was far from the
// priority order and re-sorting it each pass cost as much as the main
// scheduler). The records are first laid out in the last cycle's order
// (by their jobs' first two records' places; others and new jobs last),
// then insertion-sorted. The only ties of compareRecs are records of one
// job, which the insertion sort orders by their place in the gate (sub),
// so the result is the stable sort's whatever the layout; the layout only
// decides the cost. When the insertion sort would move too much, the
// stable sort runs instead.
func (c *Cycle) sortQueue() {
	st := c.State
	st.orderPass++
	q := c.Queue
	if sorted, ok := st.bufs.presort(q, st.orderPass); ok {
		clear(q)                                  // drop its job pointers
		st.bufs.queueAlt, c.Queue = q[:0], sorted // the buffers alternate (keep stores c.Queue's)
	} else {
		slices.SortStableFunc(q, compareRecs)
	}
	for i := range c.Queue {
		if r := &c.Queue[i]; r.sub < 2 {
			r.Job.orderPass, r.Job.orderRank[r.sub] = st.orderPass, int32(i)
		}
	}
}

// presort lays q out in the last cycle's order (see sortQueue) in a buffer
// of its own and insertion-sorts it; false when that took too many moves
// (q is unchanged). The layout is a counting sort on the jobs' last ranks,
// which are below the last queue's length (new jobs: that length).
func (b *cycleBufs) presort(q []QueueRec, pass uint32) ([]QueueRec, bool) {
	prev := b.orderLen
	b.orderLen = len(q)
	if len(q) < 2 {
		return nil, false
	}
	count := grow(b.orderCount, prev+2)
	b.orderCount = count
	clear(count)
	rank := func(r *QueueRec) int {
		if j := r.Job; r.sub < 2 && j.orderPass == pass-1 && int(j.orderRank[r.sub]) < prev {
			return int(j.orderRank[r.sub])
		}
		return prev // a new job (or record)
	}
	for i := range q {
		count[rank(&q[i])+1]++
	}
	for r := 1; r < len(count); r++ {
		count[r] += count[r-1] // count[r]: where rank r's records begin
	}
	out := growCap(b.queueAlt[:0], len(q))[:len(q)]
	for i := range q {
		r := rank(&q[i])
		out[count[r]] = q[i]
		count[r]++
	}
	if !insertionSort(out, 8*len(out)+64) {
		clear(out)
		b.queueAlt = out[:0]
		return nil, false
	}
	return out, true
}

// insertionSort sorts q by compareRecs and then gate order (the only
// ties are records of one job: sub orders them), giving up (q then in
// some order) after budget moves.
func insertionSort(q []QueueRec, budget int) bool {
	for i := 1; i < len(q); i++ {
		if compareSub(&q[i-1], &q[i]) <= 0 {
			continue
		}
		r := q[i]
		k := i
		for ; k > 0 && compareSub(&q[k-1], &r) > 0; k-- {
			if budget--; budget < 0 {
				return false
			}
		}
		copy(q[k+1:i+1], q[k:i])
		q[k] = r
	}
	return true
}

func compareRecs(a, b QueueRec) int { return compareRecPtrs(&a, &b) }

// compareSub is compareRecPtrs with the stable sort's tie-break: records
// of one job in gate order, whatever order they come in.
func compareSub(a, b *QueueRec) int {
	if c := compareRecPtrs(a, b); c != 0 {
		return c
	}
	return cmp.Compare(a.sub, b.sub)
}

// compareRecPtrs is compareRecs without copying the records.
func compareRecPtrs(a, b *QueueRec) int {
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
