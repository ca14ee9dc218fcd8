package sim

import (
	"math"
	"math/bits"
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

// backfillBlocked is BackfillBlocked; modelled is 0 when the bounds
// proved it, else how many jobs' reservations plannedBlocked computed to
// prove it.
func (c *Core) backfillBlocked(now int64) (blocked bool, modelled int) {
	if !c.bfOK || !c.TopBlocked(now) {
		return false, 0
	}
	t := c.at(now)
	part := &c.st.Cluster.Partitions[0]
	top := c.queue[0].j
	if top.Req.TimeMin > 0 || top.Req.NTasksPerNode > 0 {
		return false, 0
	}
	free := c.capa.CPUs - c.allocCPU
	nJ := int64(requestCPUs(&top.Req))
	rHigh, ok := c.reservationBound(t, nJ-free)
	if !ok || rHigh >= int64(c.cfg.Backfill.WindowOrDefault()) {
		return false, 0 // J may not be reserved
	}
	avail := free - max(0, nJ-c.endingBy(rHigh))
	if c.othersBlocked(free, avail, rHigh) {
		return true, 0
	}
	return c.plannedBlocked(t, part, free)
}

// othersBlocked reports whether no job after the first of the queue can
// start when the first reserves its nodes from offset r and at most avail
// free nodes are outside its reservation: a job X that fits in the free
// nodes starts only if it ends by r (PlanDuration(X) <= r) or needs no
// more than avail nodes.
func (c *Core) othersBlocked(free, avail, r int64) bool {
	for _, q := range c.queue[1:] {
		nX := q.cpus
		if nX > free {
			continue // fits in no free nodes
		}
		if q.j.Req.TimeMin > 0 || q.dur <= r || nX <= avail {
			return false
		}
	}
	return true
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

// Where J's reservation alone leaves a job that could start, the
// reservations of the next jobs usually block it: in most idle passes
// backfill finds no candidate left after planning two or three jobs.
// plannedBlocked computes those reservations as backfill makes them, on
// a cluster of one node type whose nodes have one CPU each, for jobs that
// ask for tasks only (one node a task). While no job has started, the
// first jobs' reservations depend only on the running jobs and on each
// other: each node is wholly free from its job's expected end aligned up
// to bf_resolution, a reservation holds its nodes over [s, e) with e its
// end aligned up, and a job that cannot start now is reserved from the
// first slot (a boundary of those intervals, after now) at which at least
// n nodes stay wholly free over its whole planned span, on the n of them
// with the lowest index (search, then pick's one tier), unless that slot
// is beyond bf_window. Each modelled job after J must not fit now: n free
// nodes none of whose reservations begins before its planned end
// (fitNow). Then, as in lastCandidate, a later job X starts only on free
// nodes none of whose reservations begins before its planned end; the
// jobs between the modelled ones and X only add reservations, so if X
// lacks such nodes under the modelled reservations it lacks them in the
// pass. When that holds for every later job, the pass starts nothing.

// bfModelJobs is how many jobs plannedBlocked models at most: two or
// three settle most idle passes, and each costs a scan of the map.
const bfModelJobs = 16

// bfResv is a modelled reservation: nodes held over [s, e) from now.
type bfResv struct {
	s, e  int64
	nodes sched.NodeSet
}

// bfPlan is plannedBlocked's working state (Core.bfPlan, reused).
type bfPlan struct {
	nowNs, res int64
	idle       sched.NodeSet // nodes free now
	nIdle      int64
	resv       []bfResv
	// byStart are the reservations' starts in order, heldUpTo how many
	// free nodes the reservations starting up to each one hold (freeFor)
	byStart  []int64
	heldUpTo []int64
	// free holds the nodes free now or after the first ri running jobs
	// (reserve moves it, forward or back, as it scans the slots)
	free sched.NodeSet
	ri   int
	tmp  sched.NodeSet
	ends []int64 // the running jobs' aligned ends, in order
	// cum[i] counts the nodes wholly free from ends[i] on, reservations
	// aside
	cum []int64
	// sets are the reservations' node sets, reused from model to model;
	// order lists the reservations by start (freeFor's counts)
	sets  []sched.NodeSet
	order []int
}

// plannedBlocked reports whether backfill provably starts nothing now (see
// above), and how many jobs it modelled to prove it. free is the number
// of free nodes; J is TopBlocked (it does not fit now). It reads
// c.runEnds as reservationBound left them.
func (c *Core) plannedBlocked(t time.Time, part *sched.Partition, free int64) (bool, int) {
	bp := &c.cfg.Backfill
	nodes := len(c.st.Cluster.Nodes)
	if !c.bfOneType || part.MaxNodes > 0 || bp.MaxJobUser > 0 || bp.MaxJobPart > 0 || bp.PartCountReserve > 0 ||
		bp.MaxJobTest > 0 && bp.MaxJobTest < bfModelJobs {
		return false, 0
	}
	pl := c.planModel(t, nodes)
	if pl.nIdle != free {
		return false, 0 // the running jobs do not account for the free nodes
	}
	window := int64(bp.WindowOrDefault())
	for k := 0; k < len(c.queue) && k < bfModelJobs; k++ {
		q := &c.queue[k]
		if !plainTasks(q.j, q.cpus) || q.cpus > int64(nodes) || slices.Contains(c.since, q.j.ID) {
			return false, 0 // not modelled, and a candidate (laterBlocked failed)
		}
		if k > 0 && q.cpus <= pl.freeFor(q.dur) {
			return false, 0 // it may start now
		}
		pl.reserve(c.runEnds, q.cpus, q.dur, window)
		if c.laterBlocked(pl, free, k+1) {
			return true, k + 1
		}
	}
	return false, 0
}

// laterBlocked reports whether no job from queue index k on may start now
// under the modelled reservations (a job that may is a candidate: the
// model goes on to it).
func (c *Core) laterBlocked(pl *bfPlan, free int64, k int) bool {
	for _, q := range c.queue[k:] {
		if q.cpus > free {
			continue // fits in no free nodes
		}
		if q.j.Req.TimeMin > 0 || q.cpus <= pl.freeFor(q.dur) {
			return false
		}
	}
	return true
}

// plainTasks reports whether j asks for n tasks and nothing else that
// chooses its nodes (topology, memory, GRES, node lists).
func plainTasks(j *sched.Job, n int64) bool {
	req := &j.Req
	return req.MinNodes <= 1 && req.MaxNodes == 0 && req.CPUsPerTask <= 1 && req.MinCPUsPerNode <= 1 &&
		int64(req.NTasks) == n && req.NTasksPerNode == 0 && req.TimeMin == 0 && req.MemPerCPU == 0 && req.MemPerNode == 0 &&
		req.GPUs == 0 && len(req.Gres) == 0 && req.Constraint == "" && len(req.NodeList) == 0 && len(req.Exclude) == 0
}

// planModel starts a model with no reservation: the free nodes, from
// the running jobs' nodes (c.runEnds), and the running jobs' ends aligned
// as the map aligns them.
func (c *Core) planModel(t time.Time, nodes int) *bfPlan {
	pl := &c.bfPlan
	words := (nodes + 63) / 64
	pl.nowNs, pl.res = t.UnixNano(), int64(c.cfg.Backfill.ResolutionOrDefault())
	pl.idle = nodeSet(pl.idle, words)
	for w := range pl.idle {
		pl.idle[w] = ^uint64(0)
	}
	if r := nodes % 64; r != 0 {
		pl.idle[words-1] = 1<<r - 1
	}
	pl.ends, pl.cum = pl.ends[:0], pl.cum[:0]
	var busy int64
	for _, e := range c.runEnds {
		for _, n := range e.j.Alloc.Nodes {
			pl.idle.Clear(int(n))
		}
		busy += int64(len(e.j.Alloc.Nodes))
		pl.ends = append(pl.ends, pl.alignUp(e.end)) // in order: alignUp is monotone
		pl.cum = append(pl.cum, busy)
	}
	pl.nIdle = int64(pl.idle.Count())
	for i := range pl.cum {
		pl.cum[i] += pl.nIdle
	}
	pl.resv, pl.byStart, pl.heldUpTo, pl.order = pl.resv[:0], pl.byStart[:0], pl.heldUpTo[:0], pl.order[:0]
	pl.free, pl.tmp = nodeSet(pl.free, words), nodeSet(pl.tmp, words)
	copy(pl.free, pl.idle)
	pl.ri = 0
	return pl
}

// alignUp is the backfill map's rounding of an offset from now up to a
// bf_resolution boundary (absolute time).
func (pl *bfPlan) alignUp(off int64) int64 {
	return (pl.nowNs+off+pl.res-1)/pl.res*pl.res - pl.nowNs
}

// freeFor counts the free nodes none of whose reservations begins
// before d (fitNow's nodes for a job planned for d).
func (pl *bfPlan) freeFor(d int64) int64 {
	k, _ := slices.BinarySearch(pl.byStart, d) // the reservations starting before d
	if k == 0 {
		return pl.nIdle
	}
	return pl.nIdle - pl.heldUpTo[k-1]
}

// reserve plans a job of n nodes and duration d that cannot start now:
// from the first slot after now at which n nodes stay wholly free for
// d, on the n of lowest index, unless that slot is at or beyond window
// (no reservation). runs are the running jobs in expected end order.
//
// Only a slot where a node becomes wholly free (a running job's aligned
// end, a reservation's end) can hold a placement once the slot before it
// failed, as in search: the others are skipped.
func (pl *bfPlan) reserve(runs []runEnd, n, d, window int64) {
	// no slot before the end that frees the n-th node can hold n nodes
	first, _ := slices.BinarySearch(pl.cum, n)
	if first == len(pl.cum) {
		return
	}
	for s := pl.ends[first]; s < window; s = pl.nextFree(s) {
		// the nodes wholly free from s on, reservations aside
		k, _ := slices.BinarySearch(pl.ends, s+1)
		pl.moveTo(runs, k)
		copy(pl.tmp, pl.free)
		for _, r := range pl.resv {
			if r.s < s+d && r.e > s { // overlaps the span
				pl.tmp.AndNot(r.nodes)
			}
		}
		if int64(pl.tmp.Count()) < n {
			continue
		}
		pl.add(s, pl.alignUp(s+d), n)
		return
	}
}

// moveTo sets free to the free nodes and those of the first ri running
// jobs, from where it is: successive scans start near each other.
func (pl *bfPlan) moveTo(runs []runEnd, ri int) {
	for ; pl.ri < ri; pl.ri++ {
		for _, nd := range runs[pl.ri].j.Alloc.Nodes {
			pl.free.Set(int(nd))
		}
	}
	for ; pl.ri > ri; pl.ri-- {
		for _, nd := range runs[pl.ri-1].j.Alloc.Nodes {
			pl.free.Clear(int(nd))
		}
	}
}

// nextFree is the first slot after offset s at which a node becomes
// wholly free: a running job's aligned end or a reservation's end
// (math.MaxInt64: none).
func (pl *bfPlan) nextFree(s int64) int64 {
	next := int64(math.MaxInt64)
	if k, _ := slices.BinarySearch(pl.ends, s+1); k < len(pl.ends) {
		next = pl.ends[k]
	}
	for _, r := range pl.resv {
		if r.e > s {
			next = min(next, r.e)
		}
	}
	return next
}

// add reserves the n lowest-index nodes of pl.tmp over [s, e).
func (pl *bfPlan) add(s, e, n int64) {
	r := len(pl.resv)
	if r == len(pl.sets) {
		pl.sets = append(pl.sets, nil)
	}
	nodes := nodeSet(pl.sets[r], len(pl.tmp))
	pl.sets[r] = nodes
	clear(nodes)
	lowest(nodes, pl.tmp, n)
	pl.resv = append(pl.resv, bfResv{s: s, e: e, nodes: nodes})
	k, _ := slices.BinarySearch(pl.byStart, s+1)
	pl.byStart = slices.Insert(pl.byStart, k, s)
	pl.order = slices.Insert(pl.order, k, r)
	// the free nodes held by the reservations starting up to each start
	pl.heldUpTo = slices.Grow(pl.heldUpTo[:0], len(pl.order))[:len(pl.order)]
	clear(pl.tmp)
	for i, x := range pl.order {
		for w, v := range pl.resv[x].nodes {
			pl.tmp[w] |= v & pl.idle[w]
		}
		pl.heldUpTo[i] = int64(pl.tmp.Count())
	}
}

// nodeSet returns s with length n, reallocated when too short (its
// contents are the caller's to set).
func nodeSet(s sched.NodeSet, n int) sched.NodeSet { return slices.Grow(s[:0], n)[:n] }

// lowest sets in dst the n lowest bits of src.
func lowest(dst, src sched.NodeSet, n int64) {
	for w, v := range src {
		if c := int64(bits.OnesCount64(v)); c <= n {
			dst[w] |= v
			n -= c
			continue
		}
		for ; n > 0; n-- {
			b := v & -v
			dst[w] |= b
			v ^= b
		}
		return
	}
}
