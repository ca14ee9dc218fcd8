package sched

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file is sched/backfill (SEMANTICS §4.3, Slurm's backfill.c and
// sched_config.shtml), planned over the whole queue every cycle:
//
//  1. Build the availability profile (bfMap) from the running jobs'
//     expected ends and the jobs the main scheduler just started.
//  2. Walk the queue in scheduling order. A job that fits now in the free
//     resources, on nodes whose reservations all begin after its end,
//     starts now (a backfilled start). Otherwise the earliest slot where
//     enough wholly free nodes stay free for its whole planned duration is
//     its expected start, and those whole nodes are reserved for it.
//  3. Lower-priority jobs only ever see what is left, so none of them can
//     delay a reservation of a higher-priority job.
//
// Speed comes from three things: node types (nodes with the same
// resources share one capability test per job shape), shape classes
// (jobs of the same partition, shape and duration share their capable
// node set and a cursor: the earliest start of the previous job of the
// class is a lower bound for the next, since resources only shrink within
// a cycle), and bitsets over the partition's words of the node space.

func init() { backfillStep = runBackfill }

// bfNever is the offset used for "no end" (UNLIMITED) and "no start".
const bfNever int64 = math.MaxInt64 / 2

// bfYear is the planning time of a job whose limit and partition MaxTime
// are both UNLIMITED (Slurm plans such a job for one year).
const bfYear = 365 * 24 * time.Hour

// backfill is one backfill pass's working state.
type backfill struct {
	c       *Cycle
	m       *bfMap
	empty   *Avail
	types   nodeTypes
	shapes  *shapeCache // State.shapes
	pass    uint64      // State.shapes' pass
	acc     NodeSet
	accSum  []uint64
	mask    NodeSet
	arena   []int32
	perUser map[string]int
	perPart []int
	// reserved counts the reservations made per partition
	// (bf_job_part_count_reserve; nil when unlimited).
	reserved []int
	window   int64
	res      int64 // bf_resolution
	starts   int
	// wholeFree is, per node, the exact offset at which it becomes
	// wholly free (busyUntil, unrounded), for exactStart.
	wholeFree []int64
	// free is freeCPUs' count, valid while freeOK and no start was added
	// to the plan since (len(Plan.Starts) == freeAt).
	free   int64
	freeAt int
	freeOK bool
	// recNeed and recDur are each record's CPUs and planned duration for
	// lastCandidate (suffixNeed).
	recNeed, recDur []int64
	// nres counts the reservations that moved the first reservation of
	// a free node earlier: only those lower lastCandidate's counts.
	nres int
}

// runBackfill is the BackfillHook.
func runBackfill(c *Cycle) {
	b := newBackfill(c)
	defer func() { c.State.bfSlabs.arena = b.arena }() // its free tail serves the next pass
	bp := &c.Config.Backfill
	var need, dmin []int64
	if bp.StartsOnly {
		need, dmin = b.suffixNeed()
	}
	light := false
	cand, candRes := -1, 0 // no record after cand can start now (lastCandidate) while nres is candRes
	for i := range c.Queue {
		rec := &c.Queue[i]
		if c.done[rec.slot] {
			continue
		}
		if bp.MaxJobTest > 0 && c.Plan.Stats.BackfillDepth >= bp.MaxJobTest {
			break
		}
		if b.capped(rec) {
			continue
		}
		c.Plan.Stats.BackfillDepth++
		if !light && need != nil && need[i] > b.freeCPUs(dmin[i]) {
			light = true // nothing from here on can start (StartsOnly)
		}
		if !light && need != nil && (i > cand || b.nres != candRes) {
			if cand, candRes = b.lastCandidate(i), b.nres; cand < 0 {
				light = true // no record from here on fits its own bound (StartsOnly)
			}
		}
		if light {
			b.reasonOnly(rec)
			continue
		}
		if b.m == nil {
			b.build()
		}
		b.plan(rec)
	}
}

// suffixNeed returns, per queue record, the fewest CPUs (need) and the
// shortest planned duration (dmin) of the records from it to the end of
// the queue. A record needs tasks times cpus-per-task CPUs, which Fit
// never goes below (cpusFor) in a partition that does not oversubscribe
// CPUs (0 in one that does); it can start now only on nodes whose first
// reservation begins at or after its planned duration (fitNow), or for
// --time-min and NoReserve jobs a shorter one (0 taken for them). It
// returns nil when the bound cannot be used to stop: a record runs in an
// advanced reservation (planned on a map of its own) or a job has several
// partition records (the partition backfill plans it for decides which
// record's reason it keeps).
func (b *backfill) suffixNeed() (need, dmin []int64) {
	c := b.c
	pool := &c.State.bfSlabs // the last pass's tables, refilled
	need, dmin = grow(pool.need, len(c.Queue)+1), grow(pool.dmin, len(c.Queue)+1)
	pool.need, pool.dmin = need, dmin
	pool.recNeed, pool.recDur = grow(pool.recNeed, len(c.Queue)), grow(pool.recDur, len(c.Queue))
	b.recNeed, b.recDur = pool.recNeed, pool.recDur
	need[len(c.Queue)], dmin[len(c.Queue)] = math.MaxInt64, math.MaxInt64
	for i := len(c.Queue) - 1; i >= 0; i-- {
		rec := &c.Queue[i]
		if rec.Resv > 0 || len(rec.Job.Partitions) > 1 {
			return nil, nil
		}
		n, dm := need[i+1], dmin[i+1]
		v, d := int64(math.MaxInt64), int64(math.MaxInt64)
		if !c.done[rec.slot] {
			p := &c.Cluster.Partitions[rec.Part]
			v = cpuFloor(&rec.Job.Req, p)
			d = int64(PlanDuration(c.TimeLimit(rec.Job, rec.Part), p))
			if rec.Job.Req.TimeMin > 0 || b.noReserve(rec.Job) {
				d = 0
			}
			n, dm = min(n, v), min(dm, d)
		}
		need[i], dmin[i] = n, dm
		b.recNeed[i], b.recDur[i] = v, d
	}
	return need, dmin
}

// lastCandidate returns the last record from i on that may still start
// now, -1 when none may: a record needs recNeed CPUs on free nodes none
// of whose reservations begins before recDur (fitNow), and the free CPUs
// of such nodes (freeCPUs) only shrink as the pass goes on, since a pass
// only adds starts and reservations. So a record after the one returned
// cannot start in this pass, whatever the records before it reserve: the
// pass may stop planning once it is past that record. Unlike the suffix
// bound (need[i] against freeCPUs(dmin[i])), each record's CPUs are
// weighed against its own duration.
func (b *backfill) lastCandidate(i int) int {
	c := b.c
	total := b.freeCPUs(0)
	ends := c.State.bfSlabs.resvEnds[:0]
	if m := b.m; m != nil {
		av := c.Avail
		for wi, w := range av.Free {
			w &= m.hasResv[wi]
			for w != 0 {
				k := wi<<6 + bits.TrailingZeros64(w)
				w &= w - 1
				if av.CPUs[k] > 0 && av.Usable.Has(k) {
					ends = append(ends, resvCPUs{m.resvFirst[k], int64(av.CPUs[k])})
				}
			}
		}
		slices.SortFunc(ends, func(x, y resvCPUs) int { return cmp.Compare(x.first, y.first) })
		for k := 1; k < len(ends); k++ {
			ends[k].cpus += ends[k-1].cpus // CPUs reserved from ends[k].first or earlier
		}
	}
	c.State.bfSlabs.resvEnds = ends
	for k := len(c.Queue) - 1; k >= i; k-- {
		if c.done[c.Queue[k].slot] || b.recNeed[k] > total {
			continue
		}
		// free CPUs on nodes whose first reservation is at or after recDur
		n, _ := slices.BinarySearchFunc(ends, b.recDur[k], func(x resvCPUs, d int64) int { return cmp.Compare(x.first, d) })
		free := total
		if n > 0 {
			free -= ends[n-1].cpus
		}
		if b.recNeed[k] <= free {
			return k
		}
	}
	return -1
}

// resvCPUs is a free node's first reservation and its CPUs (lastCandidate).
type resvCPUs struct{ first, cpus int64 }

// freeCPUs is an upper bound on the CPUs a job planned for at least d can
// start with now: the free CPUs of usable nodes, less those of free nodes
// reserved before d (fitNow drops them). The total is recounted only after
// a start.
func (b *backfill) freeCPUs(d int64) int64 {
	av := b.c.Avail
	if b.freeAt != len(b.c.Plan.Starts) || !b.freeOK {
		var n int64
		for i, v := range av.CPUs {
			if v > 0 && av.Usable.Has(i) {
				n += int64(v)
			}
		}
		b.free, b.freeAt, b.freeOK = n, len(b.c.Plan.Starts), true
	}
	n := b.free
	m := b.m
	if m == nil {
		return n // no map yet: nothing reserved
	}
	for wi, w := range av.Free {
		w &= m.hasResv[wi]
		for w != 0 {
			k := wi<<6 + bits.TrailingZeros64(w)
			w &= w - 1
			if m.resvFirst[k] < d && av.CPUs[k] > 0 && av.Usable.Has(k) {
				n -= int64(av.CPUs[k])
			}
		}
	}
	return n
}

// reasonOnly gives rec the reasons plan would (array throttle, limits,
// licenses) without planning it: used once no job left can start now.
func (b *backfill) reasonOnly(rec *QueueRec) {
	c := b.c
	j := rec.Job
	if b.heldBack(rec) {
		return
	}
	if len(j.Req.Licenses) > 0 && c.licenseShort(rec) {
		c.setReason(rec, ReasonLicenses)
	}
}

// heldBack applies the gates that keep a record from being planned at all
// (array throttle, a singleton already running, association/QOS limits),
// setting its reason; it reports whether one held the record back.
func (b *backfill) heldBack(rec *QueueRec) bool {
	c := b.c
	j := rec.Job
	if r := c.arrayThrottle(j); r != "" {
		c.setReason(rec, r)
		return true
	}
	if hasSingleton(j) && c.singletons[singletonKey(j)] {
		return true
	}
	if r := c.LimitReason(rec); r != "" {
		c.setReason(rec, r)
		return true
	}
	return false
}

func newBackfill(c *Cycle) *backfill {
	n := len(c.Cluster.Nodes)
	bp := &c.Config.Backfill
	res, win := bp.ResolutionOrDefault(), bp.WindowOrDefault()
	pool := &c.State.bfSlabs // the last pass's sets (contents stale: see andInto, fitNow)
	words := (n + 63) / 64
	pool.acc, pool.accSum = grow(pool.acc, words), grow(pool.accSum, (words+63)/64)
	pool.mask, pool.perPart = grow(pool.mask, words), grow(pool.perPart, len(c.Cluster.Partitions))
	clear(pool.perPart)
	if pool.bf == nil {
		pool.bf = &backfill{}
	}
	b := pool.bf // the last pass's, every field set afresh (nothing keeps it)
	*b = backfill{c: c, acc: pool.acc, accSum: pool.accSum, mask: pool.mask, window: int64(win),
		perPart: pool.perPart, arena: pool.arena}
	if bp.StartsOnly {
		b.arena = b.arena[:0] // nothing outside the last pass kept its nodes (planned)
	}
	if bp.MaxJobUser > 0 {
		b.perUser = map[string]int{}
	}
	if bp.PartCountReserve > 0 {
		b.reserved = make([]int, len(c.Cluster.Partitions))
	}
	b.res = int64(res)
	return b
}

// build makes the node types and the availability map, on the first
// record the pass plans: a pass in which no job can start (StartsOnly)
// never needs them.
func (b *backfill) build() {
	c := b.c
	b.types = c.State.ntCache.get(c.Cluster)
	c.State.shapes.begin(c, c.State.ntCache.gen)
	b.shapes = &c.State.shapes
	b.pass = c.State.shapes.pass
	b.empty = c.State.ntCache.emptyView(c.sel)
	busy := b.busyUntil()
	pool := &c.State.bfSlabs
	pool.freeAt = append(pool.freeAt[:0], busy...)
	b.wholeFree = pool.freeAt
	b.m = newBFMap(pool, len(c.Cluster.Nodes), c.Now.UnixNano(), b.res, busy)
	b.addBlackouts() // reservation windows (resv_backfill.go)
}

// capped applies bf_max_job_user and bf_max_job_part: how many jobs of
// one user or one partition a cycle tests.
func (b *backfill) capped(rec *QueueRec) bool {
	bp := &b.c.Config.Backfill
	if bp.MaxJobPart > 0 {
		if b.perPart[rec.Part] >= bp.MaxJobPart {
			return true
		}
		b.perPart[rec.Part]++
	}
	if bp.MaxJobUser > 0 {
		if b.perUser[rec.Job.User] >= bp.MaxJobUser {
			return true
		}
		b.perUser[rec.Job.User]++
	}
	return false
}

// busyUntil returns, per node, the offset from now at which it becomes
// wholly free: the latest expected end of the jobs on it (running,
// suspended, or started by this cycle's main scheduler), 0 when it is
// idle, -1 when it is not usable.
func (b *backfill) busyUntil() []int64 {
	c := b.c
	n := len(c.Cluster.Nodes)
	// one table per State: each map reads it once as it is built
	busy := grow(c.State.bfSlabs.busy, n)
	c.State.bfSlabs.busy = busy
	for i := range busy {
		busy[i] = 0
		if !c.Avail.Usable.Has(i) {
			busy[i] = -1
		}
	}
	var gone map[JobID]time.Time // read from when nil: no preemption
	if len(c.Plan.Preemptions) > 0 {
		gone = map[JobID]time.Time{}
	}
	for _, p := range c.Plan.Preemptions {
		if p.Mode.Action() != PreemptSuspend {
			gone[p.Job] = p.GraceEnd
		}
	}
	mark := func(nodes []int32, end int64) {
		end = max(end, 1)
		for _, ni := range nodes {
			if busy[ni] >= 0 {
				busy[ni] = max(busy[ni], end)
			}
		}
	}
	for _, j := range c.State.jobList {
		if !isActive(j) {
			continue
		}
		end := expectedEndOffset(j, c.Now)
		if ge, ok := gone[j.ID]; ok {
			if !ge.After(c.Now) {
				continue
			}
			end = int64(ge.Sub(c.Now))
		}
		mark(j.Alloc.Nodes, end)
	}
	for i := range c.Plan.Starts {
		s := &c.Plan.Starts[i]
		mark(s.Alloc.Nodes, limitOffset(s.TimeLimit))
	}
	for i := range busy {
		if busy[i] == 0 && c.Avail.Jobs[i] > 0 {
			busy[i] = bfNever // holds a job we know nothing of
		}
	}
	return busy
}

// expectedEndOffset is the offset from now at which running job j is
// expected to end: its start plus its time limit plus the time it spent
// suspended (Job.EndTime), or, for a suspended job, that end moved by the
// time it has been suspended so far.
func expectedEndOffset(j *Job, now time.Time) int64 {
	if j.EndTime.IsZero() {
		return bfNever
	}
	e := j.EndTime
	if j.State.Base() == JobSuspended && !j.SuspendTime.IsZero() {
		e = e.Add(now.Sub(j.SuspendTime))
	}
	return max(int64(e.Sub(now)), 1)
}

func limitOffset(d time.Duration) int64 {
	if d == Infinite || d <= 0 || d >= time.Duration(bfNever) {
		return bfNever
	}
	return int64(d)
}

// PlanDuration is the time backfill plans a job for in partition p
// (SEMANTICS §4.3): the job's limit capped by the partition's MaxTime; an
// UNLIMITED limit in an UNLIMITED partition plans one year.
func PlanDuration(limit time.Duration, p *Partition) time.Duration {
	d := limit
	if p.MaxTime > 0 && p.MaxTime != Infinite && (d <= 0 || d > p.MaxTime) {
		d = p.MaxTime
	}
	if d <= 0 || d == Infinite {
		d = bfYear
	}
	return d
}

// plan tests one queue record: start it now if that delays no
// reservation, else find its expected start and reserve whole nodes.
func (b *backfill) plan(rec *QueueRec) {
	c := b.c
	j := rec.Job
	if b.heldBack(rec) {
		return
	}
	if b.resvPlan(rec) {
		return // licenses short, or planned inside its reservation (resv_backfill.go)
	}
	p := &c.Cluster.Partitions[rec.Part]
	limit := c.TimeLimit(j, rec.Part)
	d := int64(PlanDuration(limit, p))
	noReserve := b.noReserve(j)
	if noReserve {
		d = int64(time.Minute)
	}
	sh := b.shapeOf(rec)
	if sh == nil {
		return // no node of the partition could ever hold this shape
	}
	cur := sh.cursor(d, b.pass)
	if *cur >= bfNever {
		return // a job of the same shape and duration found no place
	}
	if *cur == 0 && b.mayStart() {
		for c.corrReady(j) && b.startNow(rec, sh, d, limit) {
			if c.done[rec.slot] {
				return
			}
			if !b.mayStart() {
				break
			}
		}
	}
	if tmin := j.Req.TimeMin; tmin > 0 && tmin < limit && !noReserve {
		// --time-min: start now with the largest limit that delays no
		// reservation, or plan with the minimum (SEMANTICS §4.3)
		d = int64(PlanDuration(tmin, p))
		if b.mayStart() && b.startNowMin(rec, sh, d, limit) && c.done[rec.slot] {
			return
		}
		if cur = sh.cursor(d, b.pass); *cur >= bfNever {
			return
		}
	}
	if b.partReserveFull(rec) {
		return // no reservation and no expected start (oracle: START_TIME N/A)
	}
	t, nodes, ok := b.search(sh, *cur, d, *cur == 0)
	if !ok {
		*cur = bfNever
		return
	}
	*cur = t
	if !noReserve && b.mayReserve(rec) {
		b.reserve(rec, nodes, t, d)
	}
	b.planned(rec, c.Now.Add(time.Duration(b.exactStart(nodes, t))), nodes)
}

// planned records rec's expected start and planned nodes. With
// StartsOnly (the simulator, which reads neither) the nodes are not kept:
// they lie in the node arena, which the next pass then reuses from its
// start (newBackfill) instead of taking a new block.
func (b *backfill) planned(rec *QueueRec, start time.Time, nodes []int32) {
	if b.c.Config.Backfill.StartsOnly {
		nodes = nil
	}
	b.c.SetPlanned(rec, start, nodes)
}

// exactStart is the expected start reported for a job planned at slot t
// on nodes. The map rounds the running jobs' ends up to bf_resolution,
// but Slurm's expected start after running jobs is their exact end (its
// select plugin's will-run test sees the running jobs as they are, only
// the backfill reservations are rounded): oracle, bf_resolution=60, a job
// waiting for a job that ends at 16:43:35 expects 16:43:35, the next one,
// waiting for that reservation's end 16:46:35, expects 16:47:00. So when
// t is the rounded end of the running jobs on nodes, that end is reported.
func (b *backfill) exactStart(nodes []int32, t int64) int64 {
	if t <= 0 {
		return t
	}
	var end int64
	for _, n := range nodes {
		if int(n) < len(b.wholeFree) {
			end = max(end, b.wholeFree[n])
		}
	}
	if end > 0 && end < t && b.m.alignUp(end) == t {
		return end
	}
	return t
}

func satAdd(a, b int64) int64 {
	if a >= bfNever-b {
		return bfNever
	}
	return a + b
}

// mayStart applies bf_max_job_start.
func (b *backfill) mayStart() bool {
	m := b.c.Config.Backfill.MaxJobStart
	return m <= 0 || b.starts < m
}

// reserve holds nodes for rec from t for d (rounded to bf_resolution)
// and counts the reservation against bf_job_part_count_reserve.
func (b *backfill) reserve(rec *QueueRec, nodes []int32, t, d int64) {
	for _, n := range nodes {
		if t < b.m.resvFirst[n] && b.c.Avail.Free.Has(int(n)) {
			b.nres++
			break
		}
	}
	b.m.reserve(nodes, t, b.m.alignUp(satAdd(t, d)))
	if b.reserved != nil {
		b.reserved[rec.Part]++
	}
}

// partReserveFull reports that rec's partition has had its
// bf_job_part_count_reserve reservations in this pass: rec is only tested
// for an immediate start, and Slurm 24.11 then shows no expected start
// for it (oracle: with bf_job_part_count_reserve=1 the second blocked job
// of a partition pends with START_TIME N/A and a lower job is backfilled
// on the nodes it would have reserved).
func (b *backfill) partReserveFull(rec *QueueRec) bool {
	return b.reserved != nil && b.reserved[rec.Part] >= b.c.Config.Backfill.PartCountReserve
}

// mayReserve applies bf_min_prio_reserve and bf_min_age_reserve: jobs
// below them are only tested for an immediate start.
func (b *backfill) mayReserve(rec *QueueRec) bool {
	bp := &b.c.Config.Backfill
	if bp.MinPrioReserve > 0 && rec.Priority < bp.MinPrioReserve {
		return false
	}
	if bp.MinAgeReserve > 0 {
		since := rec.Job.EligibleTime
		if since.IsZero() {
			since = rec.Job.SubmitTime
		}
		if b.c.Now.Sub(since) < bp.MinAgeReserve {
			return false
		}
	}
	return true
}

// noReserve reports the job QOS's NoReserve flag: the job is planned for
// one minute and never reserves (SEMANTICS §4.3).
func (b *backfill) noReserve(j *Job) bool {
	p := b.c.State.Policy
	return p != nil && j.qos >= 0 && int(j.qos) < len(p.QOS) && p.QOS[j.qos].Flags&QOSNoReserve != 0
}

// startNow starts rec now if it fits in the free resources on nodes none
// of whose reservations begins before the job's planned end.
func (b *backfill) startNow(rec *QueueRec, sh *bfShape, d int64, limit time.Duration) bool {
	al, ok := b.fitNow(rec, sh, d)
	if !ok {
		return false
	}
	b.c.StartJob(rec, al, limit, true, nil)
	b.starts++
	b.m.occupy(al.Nodes, 0, b.m.alignUp(d))
	return true
}

// fitNow selects nodes for rec in the free resources among the nodes
// whose reservations all begin at or after d from now.
func (b *backfill) fitNow(rec *QueueRec, sh *bfShape, d int64) (Alloc, bool) {
	c := b.c
	mask := b.mask
	mask.CopyFrom(sh.capable)
	if !sh.shared {
		mask.And(c.Avail.Free)
	}
	if mask.Empty() {
		return Alloc{}, false
	}
	b.m.dropReserved(mask, d)
	return c.Fit(rec, c.Avail, mask)
}

// startNowMin starts a job with --time-min now if it fits for its
// minimum, with the largest time limit (whole minutes, at most its
// --time) that ends before the first reservation on its nodes, as
// Slurm's backfill does.
func (b *backfill) startNowMin(rec *QueueRec, sh *bfShape, dmin int64, limit time.Duration) bool {
	al, ok := b.fitNow(rec, sh, dmin)
	if !ok {
		return false
	}
	l := limitOffset(limit)
	for _, n := range al.Nodes {
		l = min(l, b.m.resvFirst[n])
	}
	lim := limit
	if l < limitOffset(limit) {
		lim = max(time.Duration(l).Truncate(time.Minute), time.Duration(dmin))
	}
	b.c.StartJob(rec, al, lim, true, nil)
	b.starts++
	b.m.occupy(al.Nodes, 0, b.m.alignUp(limitOffset(lim)))
	return true
}

// search finds the earliest slot, from offset lb and within bf_window,
// where enough capable nodes stay wholly free for d, and picks the nodes.
//
// Only slots where a capable node becomes wholly free can be the start of
// a placement once the slot before them failed: every node free from such
// a slot on was already free in the slot before, and the span starting
// there ends later. That prunes most slots of a dense map.
func (b *backfill) search(sh *bfShape, lb, d int64, skipNow bool) (int64, []int32, bool) {
	m := b.m
	need := sh.minNodes
	acc, accSum := b.acc, b.accSum
	if sh.sum == nil {
		sh.sum = wordSummary(sh.capable)
	}
	tested := false
	for i := m.slotAt(lb); i < len(m.slots); i++ {
		sl := &m.slots[i]
		start := max(sl.t, lb)
		if start >= b.window {
			return 0, nil, false
		}
		if skipNow && start == 0 {
			tested = true // the start-now test covered this slot
			continue
		}
		if tested && !newlyFree(sh, sl, &m.slots[i-1]) {
			continue
		}
		tested = true
		cnt := andInto(acc, accSum, sh.capable, sh.sum, sl.free, sl.sum)
		if cnt < int(need) {
			continue
		}
		end := satAdd(start, d)
		if cnt <= bfFewNodes && m.byNode {
			// few candidates: check each one's busy intervals for the span
			if nodes, ok := b.pickFree(sh, acc, accSum, start, end); ok {
				return start, nodes, true
			}
			continue
		}
		ok := true
		for x := i + 1; x < len(m.slots) && m.slots[x].t < end; x++ {
			sx := &m.slots[x]
			// acc only shrinks: AND only the words that still hold nodes
			if andInto(acc, accSum, acc, accSum, sx.free, sx.sum) < int(need) {
				ok = false
				if !atLeastAnd(sh, sx, need) {
					i = x // no start whose span covers slot x can work
				}
				break
			}
		}
		if !ok {
			continue
		}
		if nodes, ok := b.pick(sh, acc, accSum); ok {
			return start, nodes, true
		}
	}
	return 0, nil, false
}

// bfFewNodes is the candidate count under which search checks nodes one
// by one (binary search in their busy intervals) instead of ANDing the
// slots of the span.
const bfFewNodes = 96

// andInto sets dst = a & b on the words the summaries asum & bsum name,
// sets dsum to the words of dst that hold nodes (dst's other words are
// never read), and returns the number of nodes in dst.
func andInto(dst NodeSet, dsum []uint64, a NodeSet, asum []uint64, b NodeSet, bsum []uint64) int {
	n := 0
	for sw := range dsum {
		mw := asum[sw] & bsum[sw]
		var out uint64
		for mw != 0 {
			bit := mw & -mw
			mw ^= bit
			w := sw<<6 + bits.TrailingZeros64(bit)
			if v := a[w] & b[w]; v != 0 {
				dst[w] = v
				out |= bit
				n += bits.OnesCount64(v)
			}
		}
		dsum[sw] = out
	}
	return n
}

// newlyFree reports whether a capable node is free in cur but was not in
// prev.
func newlyFree(sh *bfShape, cur, prev *bfSlot) bool {
	for sw, cs := range sh.sum {
		mw := cs & cur.sum[sw]
		for mw != 0 {
			w := sw<<6 + bits.TrailingZeros64(mw)
			mw &= mw - 1
			if sh.capable[w]&cur.free[w]&^prev.free[w] != 0 {
				return true
			}
		}
	}
	return false
}

// atLeastAnd reports whether slot sl has at least need capable free nodes.
func atLeastAnd(sh *bfShape, sl *bfSlot, need int32) bool {
	n := 0
	for sw, cs := range sh.sum {
		mw := cs & sl.sum[sw]
		for mw != 0 {
			w := sw<<6 + bits.TrailingZeros64(mw)
			mw &= mw - 1
			n += bits.OnesCount64(sh.capable[w] & sl.free[w])
			if n >= int(need) {
				return true
			}
		}
	}
	return need <= 0
}

// pick chooses the nodes for a planned start among the wholly free
// capable nodes acc: node types in the order select/cons_tres would
// prefer them (lower Weight, then the best fit), lowest index first, until
// the job's nodes and tasks are covered.
func (b *backfill) pick(sh *bfShape, acc NodeSet, accSum []uint64) ([]int32, bool) {
	b.arenaRoom(sh)
	start := len(b.arena)
	var tasks int64
	for ti := range sh.tiers {
		t := &sh.tiers[ti]
		for sw, as := range accSum {
			for as != 0 {
				w := sw<<6 + bits.TrailingZeros64(as)
				as &= as - 1
				word := acc[w] & t.set[w]
				if word == 0 {
					continue
				}
				// take the word's nodes up to the first one after which
				// the job is covered (or has maxNodes): one test a word
				k := int64(len(b.arena) - start)
				covered := max(int64(sh.minNodes)-k, ceilDiv(int64(sh.tasks)-tasks, int64(t.tasks)), 1)
				full := max(int64(sh.maxNodes)-k, 1)
				stop := min(covered, full)
				n := min(stop, int64(bits.OnesCount64(word)))
				b.arena = appendBits(b.arena, w, word, int(n))
				tasks += n * int64(t.tasks)
				if n == stop {
					if stop == covered { // covered is tested first, as node by node
						return b.take(start), true
					}
					b.arena = b.arena[:start]
					return nil, false
				}
			}
		}
	}
	b.arena = b.arena[:start]
	return nil, false
}

// ceilDiv is x/d rounded up for x > 0, 0 otherwise.
func ceilDiv(x, d int64) int64 {
	if x <= 0 {
		return 0
	}
	return (x + d - 1) / d
}

// appendBits appends the nodes of the n lowest bits of word w.
func appendBits(dst []int32, w int, word uint64, n int) []int32 {
	l := len(dst)
	dst = slices.Grow(dst, n)[:l+n]
	for i := l; i < l+n; i++ {
		dst[i] = int32(w<<6 + bits.TrailingZeros64(word))
		word &= word - 1
	}
	return dst
}

// pickFree is pick for a start at t ending at end, checking every
// candidate node's busy intervals over the span.
func (b *backfill) pickFree(sh *bfShape, acc NodeSet, accSum []uint64, t, end int64) ([]int32, bool) {
	b.arenaRoom(sh)
	start := len(b.arena)
	var tasks int64
	for ti := range sh.tiers {
		tr := &sh.tiers[ti]
		for sw, as := range accSum {
			for as != 0 {
				w := sw<<6 + bits.TrailingZeros64(as)
				as &= as - 1
				word := acc[w] & tr.set[w]
				for word != 0 {
					n := int32(w<<6 + bits.TrailingZeros64(word))
					word &= word - 1
					if !b.m.freeDuring(n, t, end) {
						continue
					}
					b.arena = append(b.arena, n)
					tasks += int64(tr.tasks)
					k := int32(len(b.arena) - start)
					if k >= sh.minNodes && tasks >= int64(sh.tasks) {
						return b.take(start), true
					}
					if k >= sh.maxNodes {
						b.arena = b.arena[:start]
						return nil, false
					}
				}
			}
		}
	}
	b.arena = b.arena[:start]
	return nil, false
}

// arenaChunk is the size of the arena's blocks: room for the planned
// nodes of a few reservations, at most 4096 nodes (a 16 KB block per
// cycle was most of what a backfill pass on a small cluster allocated).
func (b *backfill) arenaChunk() int {
	return min(4096, max(256, 2*len(b.c.Cluster.Nodes)))
}

// arenaRoom makes room in the arena for the nodes a pick for sh usually
// appends (at most bfArenaRoom: a wider job's pick may still grow it), so
// that the pick does not grow it node by node; what take returned keeps
// its own block.
func (b *backfill) arenaRoom(sh *bfShape) {
	need := min(int(sh.maxNodes), len(b.c.Cluster.Nodes), bfArenaRoom)
	if cap(b.arena)-len(b.arena) < need {
		size := max(b.arenaChunk(), need)
		if b.c.Config.Backfill.StartsOnly {
			size = max(size, 2*cap(b.arena)) // reused whole by the next pass (planned)
		}
		b.arena = make([]int32, 0, size)
	}
}

// bfArenaRoom bounds the room arenaRoom makes (a job's maxNodes may be
// its task count: leaving the rest of a block for each would waste most).
const bfArenaRoom = 256

// take returns the nodes appended to the arena since start, sorted, as a
// slice of its own (capacity-limited so that later appends do not touch
// it).
func (b *backfill) take(start int) []int32 {
	out := b.arena[start:len(b.arena):len(b.arena)]
	if len(out) > 1 {
		sortInt32(out)
	}
	if cap(b.arena)-len(b.arena) < 64 && !b.c.Config.Backfill.StartsOnly {
		b.arena = make([]int32, 0, b.arenaChunk())
	}
	return out
}

func sortInt32(a []int32) {
	for i := 1; i < len(a); i++ {
		for k := i; k > 0 && a[k] < a[k-1]; k-- {
			a[k], a[k-1] = a[k-1], a[k]
		}
	}
}

// ---------------------------------------------------------------------------
// Node types and job shapes

// nodeTypes groups nodes with identical resources (CPUs, layout, memory,
// GRES, Weight): whether a job shape fits an empty node is decided once
// per type.
type nodeTypes struct {
	sets []NodeSet
	reps []int32
}

// nodeTypeCache keeps the node types between cycles: the nodes rarely
// change, and building the types (a string key per node) cost as much as
// the rest of the backfill map. It is rebuilt when any node's key fields
// differ from the ones it was built from.
type nodeTypeCache struct {
	nt   nodeTypes
	keys []nodeTypeKey
	// empty is the cluster with every node free, which shape tests read
	// (never write); built from the same node fields as the types, so it
	// is dropped with them.
	empty *Avail
	// gen counts the rebuilds (shapeCache drops its shapes on a change).
	gen uint64
}

// emptyView returns the cached all-free view of the cluster get last
// validated, building it on first use.
func (nc *nodeTypeCache) emptyView(sel *selector) *Avail {
	if nc.empty == nil {
		nc.empty = sel.emptyAvail()
	}
	return nc.empty
}

// nodeTypeKey is what makes two nodes the same type.
type nodeTypeKey struct {
	weight                                 int64
	cpus, sockets, cores, threads, realMem int64
	gres                                   []int64
}

func (k *nodeTypeKey) matches(n *Node) bool {
	return k.weight == int64(n.Weight) && k.cpus == int64(n.CPUs) && k.sockets == int64(n.Sockets) &&
		k.cores == int64(n.CoresPerSocket) && k.threads == int64(n.ThreadsPerCore) &&
		k.realMem == n.RealMemory && slices.Equal(k.gres, n.Gres)
}

// get returns cl's node types, rebuilding them if a node changed.
func (nc *nodeTypeCache) get(cl *Cluster) nodeTypes {
	ok := len(nc.keys) == len(cl.Nodes) && nc.nt.sets != nil
	for i := 0; ok && i < len(cl.Nodes); i++ {
		ok = nc.keys[i].matches(&cl.Nodes[i])
	}
	if ok {
		return nc.nt
	}
	nc.nt = buildNodeTypes(cl)
	nc.gen++
	nc.empty = nil
	nc.keys = make([]nodeTypeKey, len(cl.Nodes))
	for i := range cl.Nodes {
		n := &cl.Nodes[i]
		nc.keys[i] = nodeTypeKey{int64(n.Weight), int64(n.CPUs), int64(n.Sockets), int64(n.CoresPerSocket),
			int64(n.ThreadsPerCore), n.RealMemory, slices.Clone(n.Gres)}
	}
	return nc.nt
}

func buildNodeTypes(cl *Cluster) nodeTypes {
	var nt nodeTypes
	idx := map[string]int{}
	var sb strings.Builder
	for i := range cl.Nodes {
		n := &cl.Nodes[i]
		sb.Reset()
		for _, v := range []int64{int64(n.Weight), int64(n.CPUs), int64(n.Sockets), int64(n.CoresPerSocket),
			int64(n.ThreadsPerCore), n.RealMemory} {
			sb.WriteString(strconv.FormatInt(v, 36))
			sb.WriteByte(',')
		}
		for _, g := range n.Gres {
			sb.WriteString(strconv.FormatInt(g, 36))
			sb.WriteByte(',')
		}
		k := sb.String()
		t, ok := idx[k]
		if !ok {
			t = len(nt.sets)
			idx[k] = t
			nt.sets = append(nt.sets, NewNodeSet(len(cl.Nodes)))
			nt.reps = append(nt.reps, int32(i))
		}
		nt.sets[t].Set(i)
	}
	return nt
}

// bfShapeKey identifies the jobs that share one capability test.
type bfShapeKey struct {
	bfShapeInts
	masks, gres, gpusType string
}

// bfShapeInts are the number fields of a shape key: most jobs have no
// masks, GRES or GPU type, and a key of numbers only, without padding
// (exclusive is 0 or 1), hashes as one block of memory, several times
// faster (shapeCache.ints).
type bfShapeInts struct {
	part                                    int32
	minNodes, maxNodes, tasks, tasksPerNode int32
	cpusPerTask, minCPUs, maxCPUsPerNode    int32
	share, exclusive                        int32
	memPerCPU, memPerNode, gpusPerNode      int64
}

// bfShape is a job shape in one partition: the nodes that could ever hold
// it (grouped in tiers of one node type, in preference order), and one
// cursor per planned duration.
type bfShape struct {
	minNodes, maxNodes, tasks int32
	capable                   NodeSet
	sum                       []uint64 // word summary of capable (built on first use when nil)
	lo, hi                    int      // the words of capable that hold nodes
	tiers                     []bfTier
	// cursors are this pass's (pass) earliest starts by planned
	// duration; byD indexes them once there are many.
	cursors []bfCursor
	byD     map[int64]*int64
	pass    uint64
	// shared: the partition oversubscribes CPUs (OverSubscribe=FORCE/YES),
	// so a node without a free CPU may still take the job.
	shared bool
}

type bfTier struct {
	set   NodeSet
	tasks int32 // tasks an empty node of this tier takes
	key   [3]int64
}

func shapeKey(rec *QueueRec, s *shape) bfShapeKey {
	k := bfShapeKey{bfShapeInts: bfShapeInts{part: rec.Part, minNodes: s.minNodes, maxNodes: s.maxNodes, tasks: s.tasks,
		tasksPerNode: s.tasksPerNode, cpusPerTask: s.cpusPerTask, minCPUs: s.minCPUsPerNode,
		maxCPUsPerNode: s.maxCPUsPerNode, share: s.share, memPerCPU: s.memPerCPU, memPerNode: s.memPerNode,
		gpusPerNode: s.gpusPerNode, exclusive: boolInt(s.exclusive)}, gpusType: s.gpusType}
	if len(s.gres) > 0 {
		var sb strings.Builder
		for _, g := range s.gres {
			sb.WriteString(g.Name)
			sb.WriteByte(':')
			sb.WriteString(g.Type)
			sb.WriteByte(':')
			sb.WriteString(strconv.FormatInt(g.Count, 10))
			sb.WriteByte(';')
		}
		k.gres = sb.String()
	}
	r := &rec.Job.Req
	if r.Constraint != "" || len(r.NodeList) > 0 || len(r.Exclude) > 0 {
		k.masks = r.Constraint + "\x00" + strings.Join(r.NodeList, ",") + "\x00" + strings.Join(r.Exclude, ",")
	}
	return k
}

func boolInt(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// shapeOf returns rec's shape class, nil when no usable node of the
// partition could ever hold the job.
func (b *backfill) shapeOf(rec *QueueRec) *bfShape {
	c := b.c
	p := &c.Cluster.Partitions[rec.Part]
	s := c.recShape(rec)
	key := shapeKey(rec, s)
	sh, ok := b.shapes.get(&key)
	if !ok {
		sh = b.newShape(rec, p, s)
		b.shapes.put(&key, sh)
	}
	if sh.capable == nil {
		return nil
	}
	return sh
}

func (b *backfill) newShape(rec *QueueRec, p *Partition, s *shape) *bfShape {
	c := b.c
	n := len(c.Cluster.Nodes)
	sh := &bfShape{minNodes: s.minNodes, maxNodes: max(s.maxNodes, s.minNodes), tasks: s.tasks,
		shared: s.share > 1}
	base := NewNodeSet(n)
	base.CopyFrom(p.Nodes)
	base.And(c.Avail.Usable)
	if jm := c.JobMask(rec.Job); jm != nil {
		base.And(jm)
	}
	single := s.minNodes == 1 && s.maxNodes == 1 || s.minNodes == 1 && s.tasks == 1
	capable := NewNodeSet(n)
	var nodes int
	var tasks int64
	for t, set := range b.types.sets {
		rep := b.types.reps[t]
		k, lg, lc := c.sel.nodeTasks(s, b.empty, rep, s.tasks)
		if k <= 0 || single && k < s.tasks {
			continue
		}
		ts := set.Clone()
		ts.And(base)
		cnt := ts.Count()
		if cnt == 0 {
			continue
		}
		capable.Or(ts)
		nodes += cnt
		tasks += int64(cnt) * int64(k)
		sh.tiers = append(sh.tiers, bfTier{set: ts, tasks: k,
			key: [3]int64{int64(c.Cluster.Nodes[rep].Weight), lg, int64(lc)}})
	}
	if nodes < int(s.minNodes) || tasks < int64(s.tasks) {
		return sh // capable stays nil: never
	}
	sortTiers(sh.tiers)
	sh.capable = capable
	sh.sum = wordSummary(capable)
	sh.lo, sh.hi = wordSpan(capable)
	return sh
}

func sortTiers(ts []bfTier) {
	less := func(a, b *bfTier) bool {
		for i := range a.key {
			if a.key[i] != b.key[i] {
				return a.key[i] < b.key[i]
			}
		}
		return false
	}
	for i := 1; i < len(ts); i++ {
		for k := i; k > 0 && less(&ts[k], &ts[k-1]); k-- {
			ts[k], ts[k-1] = ts[k-1], ts[k]
		}
	}
}

// wordSummary returns the summary of s: bit w set when s[w] != 0.
func wordSummary(s NodeSet) []uint64 {
	sum := make([]uint64, (len(s)+63)/64)
	for w, v := range s {
		if v != 0 {
			sum[w>>6] |= 1 << (uint(w) & 63)
		}
	}
	return sum
}

// wordSpan returns the range of words of s that hold nodes.
func wordSpan(s NodeSet) (int, int) {
	lo, hi := len(s), 0
	for i, w := range s {
		if w != 0 {
			lo = min(lo, i)
			hi = i + 1
		}
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}
