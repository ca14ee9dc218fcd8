package sim

import (
	"slices"
	"time"

	"github.com/sluice-hpc/sluice/internal/sched"
)

// A backfill pass that provably starts nothing is skipped too, on the
// clusters SWF traces are replayed on: one partition over every node,
// every node one CPU, no GPUs. Claim: let J be the first job of the
// queue, with TopBlocked true (J needs more nodes than are free, so the
// main pass starts nothing and J does not start now). Backfill plans J
// first and reserves its nodes from R_J, the first slot at which enough
// nodes are free: J needs n_J nodes free from R_J on, of which at most A
// are busy now (A counts the nodes whose running job ends by R_J), so at
// least n_J - A of J's nodes are free now. A later job X starts now only
// on free nodes none of whose reservations begins before X's end; if X's
// planned end is after R_J it cannot use J's nodes, so it needs n_X free
// nodes outside them: at most free - (n_J - A). If every other pending
// job needs more nodes than are free, or ends after R_J and needs more
// than free - max(0, n_J - A), no job starts (the reservations of the
// jobs between J and X, and earlier starts, only take more). R_J and A
// are bounded from above from the running jobs' expected ends (the map
// aligns each end up to bf_resolution), and J must be reserved: R_J
// within bf_window, no bf_min_prio_reserve or bf_min_age_reserve, no
// NoReserve QOS, no --time-min.

// bfModel reports whether the cluster and backfill configuration are the
// ones the certificate above covers (fixed for a simulation).
func (c *Core) bfModel() bool {
	cl := c.st.Cluster
	bp := &c.cfg.Backfill
	if !bp.Enabled || len(cl.Partitions) != 1 || cl.Partitions[0].Nodes.Count() != len(cl.Nodes) || c.capa.GPUs != 0 {
		return false
	}
	if bp.MinPrioReserve > 0 || bp.MinAgeReserve > 0 {
		return false
	}
	if cl.Partitions[0].State != sched.PartitionUp {
		return false
	}
	for i := range cl.Nodes {
		// the simulator never changes a node's state after setup: a node
		// configured DOWN or DRAIN stays unusable, and the free count
		// would overstate the free nodes
		if cl.Nodes[i].CPUs != 1 || !cl.Nodes[i].Usable() {
			return false
		}
		for _, g := range cl.Nodes[i].Gres {
			if g != 0 {
				return false
			}
		}
	}
	if p := c.st.Policy; p != nil {
		for i := range p.QOS {
			if p.QOS[i].Flags&sched.QOSNoReserve != 0 {
				return false
			}
		}
	}
	return true
}

// BackfillBlocked implements the engine's bfPolicy: true when a backfill
// pass now (main pass included) provably starts nothing (see above).
func (c *Core) BackfillBlocked(now int64) bool {
	blocked, _ := c.backfillBlocked(now)
	return blocked
}

// backfillBlocked is BackfillBlocked; exact tells that the bounds alone
// did not prove it and J's exact reservation did (topReservation).
func (c *Core) backfillBlocked(now int64) (blocked, exact bool) {
	if !c.bfOK || !c.TopBlocked(now) {
		return false, false
	}
	t := c.at(now)
	part := &c.st.Cluster.Partitions[0]
	top := c.queue[0].j
	if top.Req.TimeMin > 0 || top.Req.NTasksPerNode > 0 {
		return false, false
	}
	free := c.capa.CPUs - c.allocCPU
	nJ := int64(requestCPUs(&top.Req))
	rHigh, ok := c.reservationBound(t, nJ-free)
	if !ok || rHigh >= int64(c.cfg.Backfill.WindowOrDefault()) {
		return false, false // J may not be reserved
	}
	avail := free - max(0, nJ-c.endingBy(rHigh))
	if c.othersBlocked(part, free, avail, rHigh) {
		return true, false
	}
	r, held, ok := c.topReservation(t, top, nJ)
	return ok && c.othersBlocked(part, free, free-held, r), true
}

// othersBlocked reports whether no job after the first of the queue can
// start when the first reserves its nodes from offset r and at most avail
// free nodes are outside its reservation: a job X that fits in the free
// nodes starts only if it ends by r (PlanDuration(X) <= r) or needs no
// more than avail nodes.
func (c *Core) othersBlocked(part *sched.Partition, free, avail, r int64) bool {
	for _, q := range c.queue[1:] {
		x := q.j
		nX := q.cpus
		if nX > free {
			continue // fits in no free nodes
		}
		if x.Req.TimeMin > 0 || int64(sched.PlanDuration(x.TimeLimit, part)) <= r || nX <= avail {
			return false
		}
	}
	return true
}

// topReservation is the first job J's backfill reservation exactly, where
// the bounds above do not prove the pass idle: on a cluster of one node
// type (bfOneType) and for a job that asks for tasks only (one node a
// task), the map holds only the running jobs, each node (one CPU: one
// job) wholly free from its job's expected end aligned up to
// bf_resolution (absolute time) on. The first slot with nJ such nodes is
// the aligned end of the running job that frees the nJ-th node, r; the
// nodes free over J's whole span from r are all those free by r, of which
// backfill's pick reserves the nJ of lowest index (one node type: one
// tier). held counts the ones free now: the free nodes a later job can no
// longer use past r. ok is false when J is not of that form or its
// reservation would start beyond bf_window. It reads c.runEnds as
// reservationBound left them.
func (c *Core) topReservation(t time.Time, top *sched.Job, nJ int64) (r, held int64, ok bool) {
	req := &top.Req
	if !c.bfOneType || req.MinNodes > 1 || req.MaxNodes > 0 || req.CPUsPerTask > 1 || req.MinCPUsPerNode > 1 ||
		int64(req.NTasks) != nJ || req.MemPerCPU > 0 || req.MemPerNode != 0 || req.GPUs > 0 || len(req.Gres) > 0 ||
		req.Constraint != "" || len(req.NodeList) > 0 || len(req.Exclude) > 0 {
		return 0, 0, false
	}
	nodes := len(c.st.Cluster.Nodes)
	free := c.capa.CPUs - c.allocCPU
	if nJ > int64(nodes) || c.st.Cluster.Partitions[0].MaxNodes > 0 {
		return 0, 0, false
	}
	res := int64(c.cfg.Backfill.ResolutionOrDefault())
	nowNs := t.UnixNano()
	alignUp := func(off int64) int64 { return (nowNs+off+res-1)/res*res - nowNs } // the map's
	freed := free
	for _, e := range c.runEnds { // in end order
		if freed += e.nodes; freed >= nJ {
			r = alignUp(e.end)
			break
		}
	}
	if freed < nJ || r >= int64(c.cfg.Backfill.WindowOrDefault()) {
		return 0, 0, false
	}
	// by node: 0 idle, 1 busy past r, 2 free by r
	state := slices.Grow(c.nodeState[:0], nodes)[:nodes]
	clear(state)
	c.nodeState = state
	for _, e := range c.runEnds {
		v := uint8(1)
		if alignUp(e.end) <= r {
			v = 2
		}
		for _, ni := range e.j.Alloc.Nodes {
			state[ni] = max(state[ni], v)
		}
	}
	var idle, taken int64
	for _, v := range state {
		if v == 0 {
			idle++
		}
	}
	if idle != free {
		return 0, 0, false // the running jobs do not account for the free nodes
	}
	for n := 0; n < nodes && taken < nJ; n++ {
		if state[n] != 1 {
			taken++
			if state[n] == 0 {
				held++
			}
		}
	}
	return r, held, true
}

// oneNodeType reports whether every node has the same resources and
// Weight: backfill then has one node type, and its pick takes the lowest
// indices first (topReservation).
func oneNodeType(cl *sched.Cluster) bool {
	for i := range cl.Nodes {
		a, b := &cl.Nodes[0], &cl.Nodes[i]
		if a.CPUs != b.CPUs || a.Weight != b.Weight || a.RealMemory != b.RealMemory || a.Sockets != b.Sockets ||
			a.CoresPerSocket != b.CoresPerSocket || a.ThreadsPerCore != b.ThreadsPerCore || !slices.Equal(a.Gres, b.Gres) {
			return false
		}
	}
	return true
}

// reservationBound returns an upper bound on the offset (ns from t) of
// the first slot with need more nodes free than now: the expected end of
// the running job that frees the need-th node, plus bf_resolution (the
// map aligns ends up to it). It also fills c.runEnds, the running jobs'
// expected ends in order with their node counts.
func (c *Core) reservationBound(t time.Time, need int64) (int64, bool) {
	c.runEnds = c.runEnds[:0]
	for _, r := range c.runs {
		j := c.st.Job(r.id)
		if j == nil || j.EndTime.IsZero() {
			return 0, false
		}
		c.runEnds = append(c.runEnds, runEnd{max(int64(j.EndTime.Sub(t)), 1), int64(len(j.Alloc.Nodes)), j})
	}
	slices.SortFunc(c.runEnds, func(a, b runEnd) int { return int(min(max(a.end-b.end, -1), 1)) })
	var freed int64
	for _, e := range c.runEnds {
		if freed += e.nodes; freed >= need {
			return e.end + int64(c.cfg.Backfill.ResolutionOrDefault()), true
		}
	}
	return 0, false
}

// endingBy counts the nodes of running jobs expected to end by off (c.runEnds
// as reservationBound left it).
func (c *Core) endingBy(off int64) int64 {
	var n int64
	for _, e := range c.runEnds {
		if e.end > off {
			break
		}
		n += e.nodes
	}
	return n
}

// runEnd is a running job's expected end (offset from now) and nodes.
type runEnd struct {
	end, nodes int64
	j          *sched.Job
}
