package sched

import (
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/resv"
)

// This file is the reservations' and licenses' part of a scheduling cycle
// (Slurm's job_test_resv and license_job_test): which queue records a job
// gets (one per requested reservation, one per MAGNETIC reservation it
// may use plus its plain record), which nodes each record may use now,
// the Reservation and Licenses reasons, and the time limit cap of a job
// started inside a reservation. The pipeline calls these from small
// hooks in gate.go, schedule.go, queue.go and backfill.go.

// resvCycle is a cycle's view of the reservations and licenses.
type resvCycle struct {
	entries []*resvEntry
	win     []resv.Window // the window in effect at the cycle's now
	licUsed []int64       // per license: held by active jobs and this cycle's starts
	licInit bool
	maps    map[*resvEntry]*bfMap
	cursors map[rshKey]*int64
}

type rshKey struct {
	sh *bfShape
	e  *resvEntry
	d  int64
}

// resvc returns the cycle's reservation view, built on first use.
func (c *Cycle) resvc() *resvCycle {
	if c.rx != nil {
		return c.rx
	}
	rx := &resvCycle{entries: c.State.resvs.list}
	rx.win = make([]resv.Window, len(rx.entries))
	for i, e := range rx.entries {
		if w := e.R.Window(c.Now); w.End.After(c.Now) {
			rx.win[i] = w
		} else {
			// an ended reservation not yet purged holds nothing
			rx.win[i] = resv.Window{Start: c.Now.Add(Infinite / 2), End: c.Now.Add(Infinite / 2)}
		}
	}
	c.rx = rx
	return rx
}

// confined reports whether jobs of the reservation must stay on its nodes
// and inside its window (not FLEX, not a licenses-only reservation).
func (e *resvEntry) confined() bool {
	return e.R.Flags&(resv.FlagFlex|resv.FlagAnyNodes) == 0 && !e.nodes.Empty()
}

// usableBy reports whether job j may run in reservation e at now.
func (e *resvEntry) usableBy(j *Job, now time.Time) bool {
	if e.R.Expired(now) || e.R.Flags&resv.FlagTimeFloat != 0 {
		return false
	}
	return e.R.Allows(j.User, j.Account, []string{j.Group})
}

// resvJobGate gives the job-level reservation reasons: held because its
// reservation was deleted (ReservationDeleted), asking only for
// reservations that no longer exist (ReservationInvalid) or that it may
// not use (Reservation).
func (c *Cycle) resvJobGate(j *Job) Reason {
	st := c.State
	if j.Hold != HoldNone {
		name, ok := st.resvs.deleted[j.ID]
		if !ok {
			// recovered state: the description the hold was stored with
			name, ok = strings.CutPrefix(j.StateDesc, "Reservation ")
			name, ok = strings.CutSuffix(name, " was deleted")
		}
		if ok {
			c.pend[len(c.pend)-1].StateDesc = "Reservation " + name + " was deleted"
			return ReasonReservationDeleted
		}
	}
	if j.Req.Reservation == "" || j.Hold != HoldNone {
		return ""
	}
	known, usable := false, false
	for _, name := range resvNames(j.Req.Reservation) {
		e := st.resvEntry(name)
		if e == nil || e.R.Expired(c.Now) {
			continue
		}
		known = true
		if e.usableBy(j, c.Now) {
			usable = true
		}
	}
	switch {
	case !known:
		return ReasonReservationInvalid
	case !usable:
		return ReasonReservation
	}
	return ""
}

// resvRecords appends rec's queue records: one per usable reservation the
// job asked for, else one per usable MAGNETIC reservation sharing nodes
// with the partition followed by the plain record.
func (c *Cycle) resvRecords(q []QueueRec, rec QueueRec) []QueueRec {
	if len(c.State.resvs.list) == 0 {
		return append(q, rec)
	}
	rx := c.resvc()
	j := rec.Job
	pn := c.Cluster.Partitions[rec.Part].Nodes
	if names := resvNames(j.Req.Reservation); len(names) > 0 {
		n := len(q)
		for _, name := range names {
			for i, e := range rx.entries {
				if e.R.Name == name && e.usableBy(j, c.Now) && (!e.confined() || e.nodes.Intersects(pn)) {
					r := rec
					r.Resv = int32(i + 1)
					q = append(q, r)
				}
			}
		}
		if p := &c.pend[rec.slot]; len(q) == n && p.Reason == "" {
			// no reservation of the job has nodes in this partition
			p.Reason, p.Partition = ReasonReservation, rec.Part
		}
		return q
	}
	for i, e := range rx.entries {
		if e.R.Flags&resv.FlagMagnetic != 0 && e.usableBy(j, c.Now) && e.nodes.Intersects(pn) {
			r := rec
			r.Resv = int32(i + 1)
			q = append(q, r)
		}
	}
	return append(q, rec)
}

// recEntry returns the reservation of a record (nil for a plain one) and
// its index.
func (c *Cycle) recEntry(rec *QueueRec) (*resvEntry, int) {
	if rec.Resv <= 0 {
		return nil, -1
	}
	rx := c.resvc()
	i := int(rec.Resv - 1)
	if i >= len(rx.entries) {
		return nil, -1
	}
	return rx.entries[i], i
}

// resvGate stops a record before node selection: a job confined to a
// reservation whose window has not begun (reason Reservation), or a job
// whose licenses are not free (reason Licenses). Neither blocks the
// partition. It reports whether the record stops.
func (c *Cycle) resvGate(rec *QueueRec) bool {
	if rec.Resv > 0 {
		if e, i := c.recEntry(rec); e != nil && e.confined() && !c.rx.win[i].Contains(c.Now) {
			c.setReason(rec, ReasonReservation)
			return true
		}
	}
	if len(rec.Job.Req.Licenses) > 0 && c.licenseShort(rec) {
		c.setReason(rec, ReasonLicenses)
		return true
	}
	return false
}

// recEnd is the time a record's job would end if started now, by its own
// time limit: Slurm tests a job in a reservation against the later
// reservations on its nodes over its whole limit, not only up to its
// reservation's end (oracle, resv-overlap: a 150-minute job in a
// one-hour reservation starts before a maintenance three hours away, an
// unlimited one waits).
func (c *Cycle) recEnd(rec *QueueRec) time.Time {
	return c.Now.Add(PlanDuration(c.TimeLimit(rec.Job, rec.Part), &c.Cluster.Partitions[rec.Part]))
}

// resvMask narrows m to the nodes rec may use now: a job confined to a
// reservation only its nodes; every job loses the nodes of the other
// reservations whose window begins before the job would end.
func (c *Cycle) resvMask(rec *QueueRec, m NodeSet) {
	if len(c.State.resvs.list) == 0 {
		return
	}
	own, _ := c.recEntry(rec)
	if own != nil && own.confined() {
		m.And(own.nodes)
	}
	c.dropLaterResvs(rec, own, m)
}

// dropLaterResvs takes out of m the nodes of the reservations other than
// own whose window begins before rec's job would end.
func (c *Cycle) dropLaterResvs(rec *QueueRec, own *resvEntry, m NodeSet) {
	rx := c.resvc()
	end := c.recEnd(rec)
	for i, e := range rx.entries {
		if e != own && rx.win[i].Start.Before(end) {
			m.AndNot(e.nodes)
		}
	}
}

// resvFitFailed handles a record that did not fit. A job confined to a
// reservation that would fit on its nodes but for a later reservation its
// time limit runs into pends with ReqNodeNotAvail, "Reserved for
// maintenance", whatever that reservation's flags (oracle, resv-overlap),
// and blocks nothing; one short of resources blocks only its
// reservation's nodes (reason Resources). A plain job kept off nodes by a
// MAINT reservation it would otherwise fit on gets ReqNodeNotAvail too.
// It reports whether it dealt with the record.
func (c *Cycle) resvFitFailed(rec *QueueRec) bool {
	if len(c.State.resvs.list) == 0 {
		return false
	}
	own, _ := c.recEntry(rec)
	if own != nil && own.confined() {
		if c.laterResvBlocks(rec, own) {
			c.setReqNodeNotAvail(rec, StateDescReservedMaint)
			return true
		}
		c.setReason(rec, ReasonResources)
		c.passNodes.AndNot(own.nodes)
		return true
	}
	if !c.maintBlocks(rec, own) {
		return false
	}
	c.setReqNodeNotAvail(rec, c.reservedDesc(rec))
	if !c.blockNamedNodes(rec) {
		c.failPartition(rec)
	}
	return true
}

// laterResvBlocks reports whether rec, confined to reservation own, would
// fit on own's nodes now if no later reservation held any of them.
func (c *Cycle) laterResvBlocks(rec *QueueRec, own *resvEntry) bool {
	m := c.passMask(rec)
	m.And(own.nodes)
	all := m.Clone()
	if c.dropLaterResvs(rec, own, m); all.SubsetOf(m) {
		return false
	}
	_, ok := c.Fit(rec, c.Avail, all)
	return ok
}

// reservedDesc is the description of a job without a reservation kept
// off its nodes by reservations: "May be reserved for other job" when it
// named its nodes (-w), "Reserved for maintenance" otherwise (oracle,
// resv-end-running: -w jobs before a later plain or MAINT reservation).
func (c *Cycle) reservedDesc(rec *QueueRec) string {
	if len(rec.Job.Req.NodeList) > 0 {
		return StateDescMayBeReserved
	}
	return StateDescReservedMaint
}

// StateDescReservedMaint is what squeue shows for a job kept off nodes by
// a maintenance reservation.
const StateDescReservedMaint = "ReqNodeNotAvail, Reserved for maintenance"

// maintBlocks reports whether a MAINT reservation starting before rec's
// job would end holds nodes without which the job does not fit.
func (c *Cycle) maintBlocks(rec *QueueRec, own *resvEntry) bool {
	rx := c.rx
	end := c.recEnd(rec)
	m := c.passMask(rec)
	maint := false
	for i, e := range rx.entries {
		if e == own || !rx.win[i].Start.Before(end) {
			continue
		}
		if e.maint() && e.nodes.Intersects(m) {
			maint = true
			continue
		}
		m.AndNot(e.nodes)
	}
	if !maint {
		return false
	}
	_, ok := c.Fit(rec, c.Avail, m)
	return ok
}

// resvOnStart is called as rec starts: it takes the job's licenses and
// returns when a job confined to a reservation is ended if still running,
// the reservation's end plus ResvOverRun (zero: never). The job keeps its
// own limit, as in Slurm (oracle, resv-end-running: TimeLimit=00:05:00
// shown, the job ends TIMEOUT with the reservation's one minute).
func (c *Cycle) resvOnStart(rec *QueueRec) time.Time {
	j := rec.Job
	if len(j.Req.Licenses) > 0 && len(c.Cluster.Licenses) > 0 {
		used := c.licensesUsed()
		for _, l := range j.Req.Licenses {
			if i := c.Cluster.LicenseIndex(l.Name); i >= 0 {
				used[i] += l.Count
			}
		}
	}
	own, oi := c.recEntry(rec)
	if own == nil || !own.confined() || c.Config.ResvOverRun == Infinite {
		return time.Time{}
	}
	return c.rx.win[oi].End.Add(c.Config.ResvOverRun)
}

// licensesUsed returns the cycle's license counts in use.
func (c *Cycle) licensesUsed() []int64 {
	rx := c.resvc()
	if !rx.licInit {
		rx.licUsed, rx.licInit = c.State.licensesInUse(), true
	}
	return rx.licUsed
}

// licenseShort reports whether rec's job cannot get its licenses now:
// what running and suspended jobs (and this cycle's starts) hold plus
// what active reservations other than the record's own hold leaves too
// few (Slurm's license_job_test).
func (c *Cycle) licenseShort(rec *QueueRec) bool {
	used := c.licensesUsed()
	own, _ := c.recEntry(rec)
	var except []*resvEntry
	if own != nil {
		except = []*resvEntry{own}
	}
	reserved := c.State.reservedLicenses(c.Now, except)
	for _, l := range rec.Job.Req.Licenses {
		i := c.Cluster.LicenseIndex(l.Name)
		if i < 0 || used[i]+l.Count > c.Cluster.Licenses[i].Total-reserved[i] {
			return true
		}
	}
	return false
}
