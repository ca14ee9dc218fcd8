package sched

import "time"

// Backfill with advanced reservations (Slurm's backfill.c asks
// job_test_resv for the nodes a job may use at each candidate start):
//
//   - every reservation window inside bf_window is a blackout in the
//     general node-space map, entered as a whole-node reservation, so a
//     job outside the reservation neither starts on those nodes if it
//     would run into the window nor is planned across it;
//   - a record confined to a reservation is planned in a map of its own
//     holding only the reservation's nodes, free only inside its windows,
//     with the other reservations (MAINT, OVERLAP) as blackouts. Nothing
//     else can run there during the window, so the two maps never
//     disagree.

// addBlackouts enters every reservation window within bf_window into the
// general map.
func (b *backfill) addBlackouts() {
	c := b.c
	if len(c.State.resvs.list) == 0 {
		return
	}
	for _, e := range c.resvc().entries {
		b.blackout(b.m, e, nil)
	}
}

// blackout reserves e's nodes (only those in within, when given) over
// each of its windows in bf_window.
func (b *backfill) blackout(m *bfMap, e *resvEntry, within NodeSet) {
	if e.nodes.Empty() {
		return
	}
	ns := e.nodes
	if within != nil {
		ns = e.nodes.Clone()
		ns.And(within)
		if ns.Empty() {
			return
		}
	}
	nodes := ns.Indices(nil)
	for _, w := range e.R.Occurrences(b.c.Now, b.c.Now.Add(time.Duration(b.window)), 1000) {
		s, end := b.offset(w.Start), b.offset(w.End)
		if end > s {
			m.reserve(nodes, s, m.alignUp(end))
		}
	}
}

// offset converts a time to an offset from the cycle's now (>= 0).
func (b *backfill) offset(t time.Time) int64 {
	d := t.Sub(b.c.Now)
	if d < 0 {
		return 0
	}
	return min(int64(d), bfNever)
}

// resvPlan is backfill's hook for licenses and reservations, called for
// each record before the general plan: a job short of licenses is only
// tested now (Slurm without bf_licenses); a record confined to a
// reservation is started or planned in the reservation's own map; a
// FLEX record first tries to start now on the reservation's nodes and
// anywhere else. It reports whether it dealt with the record.
func (b *backfill) resvPlan(rec *QueueRec) bool {
	c := b.c
	if len(rec.Job.Req.Licenses) > 0 && c.licenseShort(rec) {
		c.setReason(rec, ReasonLicenses)
		return true
	}
	e, ei := c.recEntry(rec)
	if e == nil {
		return false
	}
	if !e.confined() {
		return b.startFlex(rec)
	}
	sh := b.shapeOf(rec)
	if sh == nil || !sh.capable.Intersects(e.nodes) {
		return true
	}
	if b.laterResvsHold(rec, sh, e) {
		return true
	}
	w := c.rx.win[ei]
	limit := c.TimeLimit(rec.Job, rec.Part)
	d := int64(PlanDuration(limit, &c.Cluster.Partitions[rec.Part]))
	lb := b.offset(w.Start)
	d = max(min(d, b.offset(w.End)-lb), 1)
	cur := c.rx.cursor(sh, e, d)
	if *cur >= bfNever {
		return true
	}
	lb = max(lb, *cur)
	saved := b.m
	b.m = b.resvMap(e)
	defer func() { b.m = saved }()
	tried := false
	if lb == 0 && b.mayStart() {
		tried = true
		for b.startInResv(rec, sh, e, d, limit) {
			if c.done[rec.slot] || !b.mayStart() {
				return true
			}
		}
	}
	// the reservation's map has no node outside it free, so the shape's
	// search and pick only ever find the reservation's nodes
	if b.partReserveFull(rec) {
		return true // no reservation, no expected start (bf_job_part_count_reserve)
	}
	t, nodes, ok := b.search(sh, lb, d, lb == 0 && tried)
	if !ok {
		*cur = bfNever
		return true
	}
	*cur = t
	if !b.noReserve(rec.Job) && b.mayReserve(rec) {
		b.reserve(rec, nodes, t, d)
	}
	b.planned(rec, c.Now.Add(time.Duration(t)), nodes)
	return true
}

// laterResvsHold reports whether the reservations after e hold, within
// rec's whole time limit from now, every node of e the job could use:
// it cannot start in e now (Slurm's ReqNodeNotAvail, "Reserved for
// maintenance", as the main pass sets it) and is not planned there. A
// later start is planned inside e's window only.
func (b *backfill) laterResvsHold(rec *QueueRec, sh *bfShape, e *resvEntry) bool {
	c := b.c
	m := sh.capable.Clone()
	m.And(e.nodes)
	c.dropLaterResvs(rec, e, m)
	if !m.Empty() {
		return false
	}
	c.setReqNodeNotAvail(rec, StateDescReservedMaint)
	return true
}

// startInResv starts rec now on its reservation's free nodes none of
// whose blackouts (other reservations) begins before the job's end.
func (b *backfill) startInResv(rec *QueueRec, sh *bfShape, e *resvEntry, d int64, limit time.Duration) bool {
	c := b.c
	mask := sh.capable.Clone()
	mask.And(e.nodes)
	if !sh.shared {
		mask.And(c.Avail.Free)
	}
	b.m.dropReserved(mask, d)
	c.dropLaterResvs(rec, e, mask) // over its whole limit, past e's end
	if mask.Empty() {
		return false
	}
	al, ok := c.Fit(rec, c.Avail, mask)
	if !ok {
		return false
	}
	c.StartJob(rec, al, limit, true, nil)
	b.starts++
	b.m.occupy(al.Nodes, 0, b.m.alignUp(d))
	return true
}

// cursor is the earliest planned start of the previous record of the
// same shape, reservation and duration in this cycle: a lower bound for
// the next one, since free resources only shrink within a cycle.
func (rx *resvCycle) cursor(sh *bfShape, e *resvEntry, d int64) *int64 {
	if rx.cursors == nil {
		rx.cursors = map[rshKey]*int64{}
	}
	k := rshKey{sh, e, d}
	p := rx.cursors[k]
	if p == nil {
		p = new(int64)
		rx.cursors[k] = p
	}
	return p
}

// startFlex tries to start a FLEX (or licenses-only) reservation's record
// now: on its reservation's nodes and any other free node outside the
// other reservations' windows. It reports whether the job started.
func (b *backfill) startFlex(rec *QueueRec) bool {
	c := b.c
	if !b.mayStart() {
		return false
	}
	sh := b.shapeOf(rec)
	if sh == nil {
		return false
	}
	mask := sh.capable.Clone()
	if !sh.shared {
		mask.And(c.Avail.Free)
	}
	c.resvMask(rec, mask)
	al, ok := c.Fit(rec, c.Avail, mask)
	if !ok {
		return false
	}
	limit := c.TimeLimit(rec.Job, rec.Part)
	c.StartJob(rec, al, limit, true, nil)
	b.starts++
	d := int64(PlanDuration(limit, &c.Cluster.Partitions[rec.Part]))
	b.m.occupy(al.Nodes, 0, b.m.alignUp(d))
	return true
}

// resvMap builds (once per cycle) the node-space map of reservation e:
// its nodes only, as the running jobs leave them, unusable outside its
// windows, with the other reservations' windows as blackouts.
func (b *backfill) resvMap(e *resvEntry) *bfMap {
	c := b.c
	rx := c.resvc()
	if m := rx.maps[e]; m != nil {
		return m
	}
	busy := b.busyUntil()
	for i := range busy {
		if !e.nodes.Has(i) {
			busy[i] = -1
		}
	}
	res := c.Config.Backfill.ResolutionOrDefault()
	m := newBFMap(&c.State.bfSlabs, len(c.Cluster.Nodes), c.Now.UnixNano(), int64(res), busy)
	nodes := e.nodes.Indices(nil)
	prev := int64(0)
	for _, w := range e.R.Occurrences(c.Now, c.Now.Add(time.Duration(b.window)), 1000) {
		if s := b.offset(w.Start); s > prev {
			m.occupy(nodes, prev, s)
		}
		prev = b.offset(w.End)
	}
	if prev < bfNever {
		m.occupy(nodes, prev, bfNever)
	}
	for _, o := range rx.entries {
		if o != e {
			b.blackout(m, o, e.nodes)
		}
	}
	if rx.maps == nil {
		rx.maps = map[*resvEntry]*bfMap{}
	}
	rx.maps[e] = m
	return m
}
