package sched

// The main pass's certificate (Plan.Stuck), for drivers that run a pass
// on every event, as the simulator does: after a job ends, the main pass
// at that instant usually finds the queue exactly as blocked as the last
// one did, and can be skipped when that is provable.
//
// Claim. Let pass P1 certify (stuck returns non-nil): every record it
// tested either started or found no room (its partition then failed, or
// its node list was taken out of the pass), and nothing can newly gate a
// record (below). Let P2 be the next main pass, where since P1 only
// running jobs ended and jobs were submitted, the queue order of the jobs
// of P1 is unchanged, and no node, partition or reservation changed. If
// every job of Plan.Stuck still pending, and every job submitted since
// P1, fits in no free resources at P2, then P2 starts nothing.
//
// Proof. Walk P2's records in order, with the failed partitions and the
// nodes taken out of the pass so far. A record submitted since P1 fits
// nowhere (or is gated, which fails nothing): it starts nothing and can
// only add failures. A record of P1 that found no room is tested again
// (unless its partition already failed) and again finds no room: the
// same failure as in P1. A record of P1 skipped because its partition had
// failed comes after the records that failed it in P1, which by
// induction failed it again, or were skipped because the same partition
// had already failed; so it is skipped again. Records P1 started are gone
// and tested nothing. So every record of P2 fails or is skipped.
//
// Nothing can newly gate a record that found no room when: limits are
// not enforced, there are no advanced reservations, no queued job is an
// array, a singleton or asks for licenses, and there is no preemption or
// gang scheduling. And no pending job outside the queue (held, waiting on
// a dependency or a begin time) can join it: every pending job has a
// record. The main pass must also not have stopped early
// (default_queue_depth, MaxJobStart), since P2 would look further.

// stuck returns the main pass's certificate: the jobs it found no room
// for, or nil when it cannot certify them (see above).
func (c *Cycle) stuck() []JobID {
	if c.unsure || len(c.blockers) == 0 || !c.Plan.StaticGates {
		return nil
	}
	return append([]JobID(nil), c.blockers...)
}

// gatesStatic reports whether no gate can newly hold back a queued record
// in a later cycle and no pending job can join the queue.
func (c *Cycle) gatesStatic() bool {
	if c.Config.PreemptType != PreemptNone || hasForcePartition(c.Cluster) || len(c.State.resvs.list) > 0 {
		return false
	}
	if c.State.Policy != nil && c.Config.Enforce&(EnforceLimits|EnforceSafe) != 0 {
		return false
	}
	if c.unqueued > 0 {
		return false
	}
	for i := range c.Queue {
		rec := &c.Queue[i]
		j := rec.Job
		if j.Array != nil || hasSingleton(j) || len(j.Req.Licenses) > 0 || rec.Resv > 0 {
			return false
		}
	}
	return true
}
