package sched

import (
	"cmp"
	"slices"
)

// A cycle's starts change its free view (Take) and, once applied, the
// State's nodes by the same amounts: the next cycle's refill need not
// read those nodes again. Apply confirms each start it carries out as
// planned, and refill skips the nodes of confirmed starts unless the
// State or another change of the view touched them too (a deep-queue
// replay on 8,192 nodes refilled every node of every start and end).

// An ended job's resources go back to the kept view at once (release),
// which costs what the refill of its nodes would, without reading them
// again.

// startSpan is the part of Avail.touched one start's Take appended.
type startSpan struct {
	start  int32  // index in the cycle's Plan.Starts
	lo, hi int32  // touched[lo:hi]
	nodes  *int32 // the allocation's first node, to know it again
	done   bool   // confirmed: the State took exactly this allocation
}

// noteStart records that Take appended touched[lo:] for the plan's start
// index i with allocation al.
func (a *Avail) noteStart(i int, lo int, al *Alloc) {
	if a.touchedAll || a.cl == nil || len(al.Nodes) == 0 {
		return
	}
	a.starts = append(a.starts, startSpan{start: int32(i), lo: int32(lo), hi: int32(len(a.touched)), nodes: &al.Nodes[0]})
}

// notePlan ties the view to the plan of its cycle (by the address of its
// first start, which the view keeps alive: no later plan has it).
func (a *Avail) notePlan(p *Plan) {
	if len(p.Starts) > 0 {
		a.plan = &p.Starts[0]
	}
}

// planView returns the view of the cycle that made plan when it is still
// the State's kept view, not refilled since (nil otherwise).
func (st *State) planView(plan *Plan) *Avail {
	if v := st.bufs.avail; v != nil && len(plan.Starts) > 0 && v.plan == &plan.Starts[0] {
		return v
	}
	return nil
}

// confirmable returns the span of plan start i with allocation al in
// view a, or nil (a nil view, a start not taken in it, an allocation
// that is not the one taken).
func (a *Avail) confirmable(i int, al *Alloc) *startSpan {
	if a == nil || len(al.Nodes) == 0 {
		return nil
	}
	k, ok := slices.BinarySearchFunc(a.starts, int32(i), func(s startSpan, t int32) int { return cmp.Compare(s.start, t) })
	if !ok || a.starts[k].nodes != &al.Nodes[0] || int(a.starts[k].hi-a.starts[k].lo) != len(al.Nodes) {
		return nil
	}
	return &a.starts[k]
}

// refillTouched refills the touched nodes outside confirmed spans.
func (a *Avail) refillTouched(c *Cluster) {
	pos := int32(0)
	for _, sp := range a.starts {
		if sp.done {
			a.refillNodes(c, a.touched[pos:sp.lo])
			pos = sp.hi
		}
	}
	a.refillNodes(c, a.touched[pos:])
}

// refillNodes refills the listed nodes not yet refilled in this round.
func (a *Avail) refillNodes(c *Cluster, list []int32) {
	for _, i := range list {
		if a.stamp[i] == a.round {
			continue
		}
		a.stamp[i] = a.round
		a.fillNode(&c.Nodes[i], int(i), a.Kinds)
		a.rebucket(int(i))
	}
}

// release frees ended job j's allocation on the nodes, and in the kept
// free view when that view is the State's but for the changes refill
// will bring (then its nodes need no refill).
func (st *State) release(j *Job) {
	v := st.bufs.avail
	if v == nil || v.byFree == nil || v.cl != st.Cluster || v.touchedAll || v.owner != nil ||
		st.availAll || !st.Config.IncrementalQueue || j.State.Base() == JobSuspended {
		st.allocate(j, &j.Alloc, false)
		return
	}
	v.change(&j.Alloc, 1)
	if st.allocNodes(j, &j.Alloc, false) {
		for _, ni := range j.Alloc.Nodes {
			if st.Cluster.Nodes[ni].State.Has(NodeFlagDrain) {
				// an idle draining node is no longer alive: refilled
				st.availDirty = append(st.availDirty, ni)
			}
		}
	}
}
