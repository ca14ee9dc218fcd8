package sched

import (
	"cmp"
	"slices"
)

// The incremental queue (Config.IncrementalQueue): a main pass whose cost
// follows the records it tests, not the queue's length.
//
// Slurm's main scheduler tests the records in queue order and, once every
// partition has failed (a record found no room), gives every later record
// the reason Priority without testing it. On a deep queue the full cycle
// still gates, sorts and gives a reason to every pending job at every
// pass, which made a simulator's cost per job grow with the queue. When
// every pending job is "simple" (below), the State keeps the queue's order
// across cycles (lazyQueue) and a cycle walks it from the head, queueing
// each job as the full gate would (queueKept), until every partition
// failed or the pass reached its depth limits (a backfill cycle walks it
// to the end: backfill plans every record). Jobs it does not reach keep
// the reason they have, which is Priority, as the full pass would give
// them: the queue also lists the jobs that had another reason at the last
// pass (nonPrio) and the jobs submitted since (fresh), and the cycle gives
// those Priority when it does not reach them.
//
// Simple: one partition, no array, dependency, hold, license, reservation,
// begin time or Unfit reason, and the job passed the gate when it joined
// the queue. Such a job's gate can only change with a node, partition,
// reservation, policy or job update, and each of those voids the queue
// (State.orderGen, State.shapeGen): the next cycle runs in full and
// builds it again. So a job not reached would have been queued, and the
// certificate (main_stuck.go) stays what the full pass would give.
//
// The order is compareRecPtrs' (no preemption rank or reservation
// records in this mode). A driver that writes Job.Priority of a queued job
// must call State.OrderChanged, after which the next cycle sorts the kept
// queue again (lazyResort); a reached job whose priority moved without it
// voids the queue. Plan.Stats.QueueLen and Depth count the records tested.

// lazyQueue is the order kept across cycles (see above).
type lazyQueue struct {
	valid bool
	// recs are the queued jobs' records in queue order; entries of jobs no
	// longer pending are dropped when a cycle reaches them.
	recs []QueueRec
	// nextID: jobs with a larger or equal id joined after the last cycle.
	nextID JobID
	// orderGen and shapeGen are the State's counters when it was built,
	// prioGen when it was last sorted.
	orderGen, shapeGen, prioGen uint64
	// nonPrio are the jobs the last cycle left with a reason other than
	// Priority (a cycle that does not reach them gives them Priority).
	nonPrio []*Job
	// fresh are the jobs this cycle added; spare is a buffer.
	fresh, spare []QueueRec
}

// OrderChanged tells the State that the queue order may have changed
// outside its own calls (a driver wrote Job.Priority): the next cycle
// with Config.IncrementalQueue sorts the kept queue again under the jobs'
// new priorities (lazyResort).
func (st *State) OrderChanged() { st.prioGen++ }

// simpleJob reports whether j may be kept in the incremental queue.
func simpleJob(j *Job) bool {
	return len(j.Partitions) == 1 && j.Array == nil && len(j.Req.Deps) == 0 && j.Hold == HoldNone &&
		len(j.Req.Licenses) == 0 && j.Req.Reservation == "" && j.Req.BeginTime.IsZero() && j.Unfit == "" &&
		j.State&JobFlagCompleting == 0
}

// lazyRegime reports whether the cycle's configuration allows the
// incremental queue: no preemption or gang scheduling, no reservations,
// no limits enforced. A backfill cycle walks the whole kept queue (its
// order saves the sort; backfill needs every record), and the jobs it
// gives another reason than Priority are in nonPrio, as after any cycle.
func (c *Cycle) lazyRegime() bool {
	cfg := c.Config
	if !cfg.IncrementalQueue || cfg.PreemptType != PreemptNone || hasForcePartition(c.Cluster) {
		return false
	}
	if len(c.State.resvs.list) > 0 || c.State.arrayJobs > 0 {
		return false
	}
	return c.State.Policy == nil || cfg.Enforce&(EnforceLimits|EnforceSafe|EnforceAssociations) == 0
}

// lazyKey is rec's job's queue key now (its priority may have moved).
func lazyKey(c *Cycle, j *Job) QueueRec {
	part := j.Partitions[0]
	prio := j.Priority
	if len(j.PartPriority) > 0 {
		prio = j.PartPriority[0]
	}
	return QueueRec{Job: j, Part: part, Priority: prio, Tier: c.Cluster.Partitions[part].PriorityTier}
}

// lazyPass runs gate, order and the main pass on the kept queue; false
// (nothing done) when the queue is void or a new job is not simple, and
// the full cycle must run.
func (c *Cycle) lazyPass() bool {
	st := c.State
	q := &st.lazy
	if !c.lazyRegime() || !q.valid || q.orderGen != st.orderGen || q.shapeGen != st.shapeGen {
		return false
	}
	if !c.lazyFresh() {
		return false
	}
	if q.prioGen != st.prioGen {
		c.lazyResort()
	}
	b := &st.bufs
	c.pend, c.pendJob, c.Queue = b.pend[:0], b.pendJob[:0], b.queue[:0]
	c.done = b.done[:0]
	st.orderPass++
	c.lazyMerge()
	c.lazyWalk()
	c.lazyTail()
	c.Plan.Stats.QueueLen = len(c.Queue)
	return true
}

// lazyFresh collects the jobs submitted since the last cycle, in queue
// order, into q.fresh; false if one of them is not simple or does not pass
// the gate.
func (c *Cycle) lazyFresh() bool {
	st := c.State
	q := &st.lazy
	i, _ := slices.BinarySearchFunc(st.jobList, q.nextID, func(j *Job, id JobID) int { return cmp.Compare(j.ID, id) })
	q.fresh = q.fresh[:0]
	var p PendingInfo
	for _, j := range st.jobList[i:] {
		if j.State.Base() != JobPending {
			continue
		}
		if !simpleJob(j) || c.jobGate(j, &p) != "" || c.partGate(j, j.Partitions[0]) != "" {
			return false
		}
		q.fresh = append(q.fresh, lazyKey(c, j))
	}
	slices.SortStableFunc(q.fresh, compareRecs)
	return true
}

// lazyResort sorts the kept records again after the jobs' priorities
// moved (OrderChanged): a priority is all that changed, and the order is
// total (job ids break ties), so the kept jobs sorted under their new
// keys are in the order a full cycle would sort them in. The jobs no
// longer pending are dropped first. The order usually changes little
// between two recalculations: insertion sort, or a full sort when that
// would move too much.
func (c *Cycle) lazyResort() {
	q := &c.State.lazy
	recs := q.recs[:0]
	for _, r := range q.recs {
		if j := r.Job; j.State.Base() == JobPending && j.State&JobFlagCompleting == 0 {
			recs = append(recs, lazyKey(c, j))
		}
	}
	clear(q.recs[len(recs):])
	q.recs = recs
	if !insertionSort(recs, 8*len(recs)+64) {
		slices.SortFunc(recs, func(a, b QueueRec) int { return compareSub(&a, &b) })
	}
	q.prioGen = c.State.prioGen
}

// lazyMerge merges q.fresh into the kept order.
func (c *Cycle) lazyMerge() {
	q := &c.State.lazy
	q.nextID = c.State.NextJobID
	if len(q.fresh) == 0 {
		return
	}
	if n := len(q.recs); n == 0 || compareSub(&q.recs[n-1], &q.fresh[0]) <= 0 {
		q.recs = append(q.recs, q.fresh...) // the usual case: later jobs last
		return
	}
	out := q.spare[:0]
	a, f := q.recs, q.fresh
	for len(a) > 0 && len(f) > 0 {
		if compareSub(&f[0], &a[0]) < 0 {
			out, f = append(out, f[0]), f[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	out = append(append(out, a...), f...)
	clear(q.recs)
	q.spare, q.recs = q.recs[:0], out
}

// lazyWalk queues and tests the kept records in order until every
// partition failed or the pass stopped (in a backfill cycle, to the end:
// mainRec then gives the rest Priority as the full main pass does),
// dropping the jobs no longer pending.
func (c *Cycle) lazyWalk() {
	q := &c.State.lazy
	w := 0
	i := 0
	for ; i < len(q.recs); i++ {
		r := q.recs[i]
		j := r.Job
		if j.State.Base() != JobPending || j.State&JobFlagCompleting != 0 {
			continue // started, cancelled or ended: dropped
		}
		if whole := c.Config.Backfill.Enabled; !whole && c.allFailed() {
			break
		} else if !whole && c.mainStopped() {
			c.unsure = true // Slurm's main pass would give the rest Priority and look no further
			break
		}
		q.recs[w] = r
		w++
		k := lazyKey(c, j)
		if k.Priority != r.Priority || k.Tier != r.Tier {
			q.valid = false // a priority moved without OrderChanged: sort again next cycle
		}
		j.lazyPass = c.State.orderPass
		c.queueKept(k)
		c.done = append(c.done, false)
		c.mainRec(&c.Queue[len(c.Queue)-1])
	}
	if w < i {
		// The records kept from the walked part (w of them, at the front)
		// move up to just before the part not walked, and the slice
		// starts there: the cost follows the walk, not the queue (the
		// room before it is reused when an append reallocates).
		copy(q.recs[i-w:i], q.recs[:w])
		clear(q.recs[:i-w])
		q.recs = q.recs[i-w:]
	}
}

// queueKept gives a kept job its slot and its one queue record, rec (its
// lazyKey): what gateJob gives a simple job that passes the gate, without
// testing it again. It passed when it joined the kept queue (lazyBuild,
// lazyFresh), and what the gate reads of a simple job (its holds,
// partition, nodes, the policy, reservations) changes only through the
// State's methods that void the kept queue (orderGen, shapeGen).
func (c *Cycle) queueKept(rec QueueRec) {
	rec.slot = int32(len(c.pend))
	c.pend = append(c.pend, PendingInfo{Job: rec.Job.ID, Partition: -1})
	c.pendJob = append(c.pendJob, rec.Job)
	c.Queue = append(c.Queue, rec)
}

// allFailed reports whether every partition failed in the main pass.
func (c *Cycle) allFailed() bool {
	for _, f := range c.partFail {
		if !f {
			return false
		}
	}
	return true
}

// lazyTail gives Priority to the jobs the walk did not reach that had
// another reason (the last cycle's nonPrio) or none yet (fresh), as the
// full main pass would.
func (c *Cycle) lazyTail() {
	st := c.State
	q := &st.lazy
	pass := st.orderPass
	add := func(j *Job) {
		if j.lazyPass == pass || j.State.Base() != JobPending {
			return
		}
		j.lazyPass = pass
		c.pend = append(c.pend, PendingInfo{Job: j.ID, Reason: ReasonPriority, Partition: j.Partitions[0]})
		c.pendJob = append(c.pendJob, j)
		c.done = append(c.done, false)
	}
	for _, j := range q.nonPrio {
		add(j)
	}
	for i := range q.fresh {
		add(q.fresh[i].Job)
	}
	clear(q.fresh)
}

// lazyKeep records, after the cycle, which jobs left pending have a reason
// other than Priority; after a full cycle it builds the kept queue when
// the cycle allows it (every pending job simple and queued).
func (c *Cycle) lazyKeep(full bool) {
	st := c.State
	q := &st.lazy
	if full {
		c.lazyBuild()
	}
	clear(q.nonPrio)
	q.nonPrio = q.nonPrio[:0]
	if !q.valid {
		return
	}
	for slot := range c.pend {
		if !c.done[slot] && c.pend[slot].Reason != ReasonPriority {
			q.nonPrio = append(q.nonPrio, c.pendJob[slot])
		}
	}
}

// lazyBuild keeps a full cycle's queue order when every pending job is
// simple and has its record.
func (c *Cycle) lazyBuild() {
	st := c.State
	q := &st.lazy
	q.valid = false
	clear(q.recs)
	q.recs = q.recs[:0]
	if !c.lazyRegime() || c.unqueued > 0 || len(c.Queue) != len(c.pend) {
		return
	}
	for i := range c.Queue {
		r := c.Queue[i]
		if !simpleJob(r.Job) {
			clear(q.recs)
			q.recs = q.recs[:0]
			return
		}
		if c.done[r.slot] {
			continue
		}
		r.slot, r.sub = 0, 0
		q.recs = append(q.recs, r)
	}
	q.valid, q.nextID, q.orderGen, q.shapeGen, q.prioGen = true, st.NextJobID, st.orderGen, st.shapeGen, st.prioGen
}
