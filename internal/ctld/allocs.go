package ctld

// Allocations held by salloc (and srun outside an allocation): the job's
// batch script only waits; salloc ends the allocation through the
// controller when its command exits (OpRelinquish, with the command's exit
// status, COMPLETED or FAILED as Slurm records an salloc job), and sends a
// heartbeat (OpAllocBeat) every api.AllocBeatEvery while it holds it. An
// allocation whose heartbeats stop for api.AllocOrphanAfter (salloc killed,
// its host gone) is cancelled, as slurmctld ends an allocation whose srun
// or salloc no longer answers. No file is shared between salloc's host and
// the nodes.

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// allocBeats is each allocation's last heartbeat, kept in memory: after a
// controller restart every allocation starts a fresh AllocOrphanAfter.
var allocBeats sync.Map // *loopState -> map[sched.JobID]time.Time

func (ls *loopState) allocBeats() map[sched.JobID]time.Time {
	m, _ := allocBeats.LoadOrStore(ls, map[sched.JobID]time.Time{})
	return m.(map[sched.JobID]time.Time)
}

// isAllocation reports whether j is held by salloc.
func (ls *loopState) isAllocation(j *sched.Job) bool {
	spec := ls.specs[j.ID]
	return spec != nil && spec.Allocation
}

// allocBeat records salloc's heartbeat for j.
func (ls *loopState) allocBeat(j *sched.Job, now time.Time) error {
	if !ls.isAllocation(j) {
		return &apiErr{status: http.StatusBadRequest, msg: fmt.Sprintf("job %d is not an allocation", j.ID)}
	}
	ls.allocBeats()[j.ID] = now
	return nil
}

// relinquish ends allocation j with its command's exit status.
func (ls *loopState) relinquish(j *sched.Job, code int, now time.Time) error {
	if !ls.isAllocation(j) {
		return &apiErr{status: http.StatusBadRequest, msg: fmt.Sprintf("job %d is not an allocation", j.ID)}
	}
	if j.State.Finished() {
		return fmt.Errorf("%s", sched.ErrAlreadyDone)
	}
	if !isActive(j) { // still pending: nothing ran
		return ls.cancelAllocation(j, now)
	}
	state, word := sched.JobCompleted, api.StateCompleted
	if code != 0 {
		state, word = sched.JobFailed, api.StateFailed
	}
	nodes := append([]int32(nil), j.Alloc.Nodes...)
	ls.prio.charge(ls, j, now)
	if err := ls.st.End(j.ID, state, int32(code&0xff)<<8, now); err != nil {
		return errMsg(err)
	}
	delete(ls.allocBeats(), j.ID)
	delete(ls.launched, j.ID)
	ls.touch(j, "end", fmt.Sprintf("%s %d:0 (allocation relinquished)", state, code&0xff))
	ls.terminateOn(j, nodes, word)
	ls.wantSched = true
	return nil
}

// cancelAllocation cancels allocation j (salloc gone, or released before
// it started).
func (ls *loopState) cancelAllocation(j *sched.Job, now time.Time) error {
	nodes := append([]int32(nil), j.Alloc.Nodes...)
	active := isActive(j)
	ls.prio.charge(ls, j, now)
	if err := ls.st.Cancel(j.ID, now); err != nil {
		return errMsg(err)
	}
	delete(ls.allocBeats(), j.ID)
	ls.touch(j, "cancel", j.User)
	if active {
		ls.terminateOn(j, nodes, api.StateCancelled)
	}
	ls.wantSched = true
	return nil
}

// checkAllocations cancels the allocations whose salloc stopped sending
// heartbeats; one never heard of (the controller restarted) starts its
// wait now.
func (ls *loopState) checkAllocations(now time.Time) {
	beats := ls.allocBeats()
	if _, done := allocScanned.LoadOrStore(ls, true); !done {
		for _, j := range ls.st.Jobs() {
			if !j.State.Finished() && ls.isAllocation(j) {
				beats[j.ID] = now
			}
		}
	}
	for id, last := range beats {
		j := ls.st.Job(id)
		switch {
		case j == nil || j.State.Finished():
			delete(beats, id)
		case now.Sub(last) > allocOrphanAfter:
			ls.c.log.Warn("allocation orphaned: no heartbeat from salloc, cancelling", "job", id, "last", last)
			ls.cancelAllocation(j, now)
		}
	}
}

// allocOrphanAfter is api.AllocOrphanAfter (shortened by tests).
var allocOrphanAfter = api.AllocOrphanAfter

// allocScanned marks a loop whose recovered allocations were given their
// first heartbeat.
var allocScanned sync.Map

// allocSubmitted starts a new allocation's heartbeat wait.
func (ls *loopState) allocSubmitted(j *sched.Job, now time.Time) {
	if ls.isAllocation(j) {
		ls.allocBeats()[j.ID] = now
	}
}
