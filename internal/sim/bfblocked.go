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
	if !c.bfOK || !c.TopBlocked(now) {
		return false
	}
	t := c.at(now)
	part := &c.st.Cluster.Partitions[0]
	top := c.queue[0].j
	if top.Req.TimeMin > 0 || top.Req.NTasksPerNode > 0 {
		return false
	}
	free := c.capa.CPUs - c.allocCPU
	nJ := int64(requestCPUs(&top.Req))
	rHigh, ok := c.reservationBound(t, nJ-free)
	if !ok || rHigh >= int64(c.cfg.Backfill.WindowOrDefault()) {
		return false // J may not be reserved
	}
	avail := free - max(0, nJ-c.endingBy(rHigh))
	for _, q := range c.queue[1:] {
		x := q.j
		nX := q.cpus
		if nX > free {
			continue // fits in no free nodes
		}
		if x.Req.TimeMin > 0 || int64(sched.PlanDuration(x.TimeLimit, part)) <= rHigh || nX <= avail {
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
		c.runEnds = append(c.runEnds, runEnd{max(int64(j.EndTime.Sub(t)), 1), int64(len(j.Alloc.Nodes))})
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

type runEnd struct{ end, nodes int64 }
