package sim

import "github.com/sluice-hpc/sluice/internal/sched"

// coreIDs translates between the trace's job ids and the core's. Both
// directions were maps written at every submission and read at every
// start and end; the core numbers jobs in submission order and trace ids
// are usually dense, so both are tables here, with a map for the ids a
// table does not cover.
type coreIDs struct {
	// trace indexes the trace's ids; sched[i] is the core id of the trace
	// job at index i (0: not submitted), extra the core id of an id the
	// trace does not hold.
	trace jobIndex
	sched []sched.JobID
	extra map[int64]sched.JobID
	// back[sid-first] is core job sid's trace id (ok false: none, or
	// forgotten once purged); first is the first id added (the core
	// numbers jobs upwards).
	first sched.JobID
	back  []traceID
}

type traceID struct {
	id int64
	ok bool
}

func newCoreIDs(jobs []Job) coreIDs {
	return coreIDs{trace: newJobIndex(jobs), sched: make([]sched.JobID, len(jobs)), back: make([]traceID, 0, len(jobs))}
}

// add records that trace job id was submitted as core job sid.
func (x *coreIDs) add(id int64, sid sched.JobID) {
	if i, ok := x.trace.get(id); ok {
		x.sched[i] = sid
	} else {
		if x.extra == nil {
			x.extra = map[int64]sched.JobID{}
		}
		x.extra[id] = sid
	}
	if x.first == 0 {
		x.first = sid
	}
	if sid < x.first { // not expected: ids only grow
		x.rebase(sid)
	}
	k := int(sid - x.first)
	for len(x.back) <= k {
		x.back = append(x.back, traceID{})
	}
	x.back[k] = traceID{id, true}
}

// rebase makes sid the first id of back.
func (x *coreIDs) rebase(sid sched.JobID) {
	back := make([]traceID, int(x.first-sid), int(x.first-sid)+len(x.back))
	x.back, x.first = append(back, x.back...), sid
}

// toSched returns trace job id's core id.
func (x *coreIDs) toSched(id int64) (sched.JobID, bool) {
	if i, ok := x.trace.get(id); ok {
		sid := x.sched[i]
		return sid, sid != 0
	}
	sid, ok := x.extra[id]
	return sid, ok
}

// toTrace returns core job sid's trace id.
func (x *coreIDs) toTrace(sid sched.JobID) (int64, bool) {
	if sid < x.first || int(sid-x.first) >= len(x.back) {
		return 0, false
	}
	t := x.back[sid-x.first]
	return t.id, t.ok
}

// forget drops core job sid's trace id (the job was purged).
func (x *coreIDs) forget(sid sched.JobID) {
	if sid >= x.first && int(sid-x.first) < len(x.back) {
		x.back[sid-x.first] = traceID{}
	}
}
