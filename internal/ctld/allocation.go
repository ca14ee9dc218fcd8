package ctld

import (
	"fmt"
	"net/http"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// Allocations held by salloc (and srun outside an allocation). The job's
// script on its batch host only waits; salloc, wherever it runs, talks to
// the controller alone: it says it is alive (OpKeepalive) every
// allocKeepalive and ends the allocation with its command's exit code
// (OpComplete, Slurm's slurm_complete_job), so no file system is shared
// with the nodes. An allocation whose holder has been silent for
// allocOrphaned is cancelled: salloc was killed or its host lost (Slurm
// keeps such an allocation until its time limit unless InactiveLimit is
// set; a set InactiveLimit is used as the bound here too).

// allocKeepalive is how often salloc says it is alive.
const allocKeepalive = 10 * time.Second

// allocOrphaned is how long an allocation waits for a silent holder.
const allocOrphaned = 30 * time.Second

// orphanedAfter is the silence that ends an allocation.
func (ls *loopState) orphanedAfter() time.Duration {
	if l := ls.c.cfg.InactiveLimit; l > 0 {
		return l
	}
	return allocOrphaned
}

// isAllocation says whether j holds a salloc/srun allocation.
func (ls *loopState) isAllocation(j *sched.Job) bool {
	s := ls.specs[j.ID]
	return s != nil && (s.Allocation || isAllocationScript(s.Script))
}

// allocSubmitted starts a new allocation's wait for its holder: one
// whose salloc dies while it is still pending is cancelled too.
func (ls *loopState) allocSubmitted(j *sched.Job, now time.Time) {
	if ls.isAllocation(j) {
		ls.allocHeard()[j.ID] = now
	}
}

// allocationOp is OpComplete or OpKeepalive from the allocation's holder.
func (ls *loopState) allocationOp(j *sched.Job, req api.JobControlRequest, now time.Time) error {
	if !ls.isAllocation(j) {
		return &apiErr{status: http.StatusBadRequest, msg: "Job is not an allocation of salloc or srun"}
	}
	if j.State.Finished() {
		return fmt.Errorf("%s", sched.ErrAlreadyDone)
	}
	if req.Op == api.OpKeepalive {
		ls.allocHeard()[j.ID] = now
		return nil
	}
	if !isActive(j) { // released before it started: nothing ran
		return ls.cancelAllocation(j, now)
	}
	state := sched.JobCompleted
	if req.ExitCode != 0 {
		state = sched.JobFailed
	}
	return ls.endAllocation(j, state, int32(req.ExitCode&0xff)<<8, "complete", now)
}

// endAllocation ends an allocation job and stops its holder script.
func (ls *loopState) endAllocation(j *sched.Job, state sched.JobState, exit int32, why string, now time.Time) error {
	nodes := append([]int32(nil), j.Alloc.Nodes...)
	ls.prio.charge(ls, j, now)
	if err := ls.st.End(j.ID, state, exit, now); err != nil {
		return errMsg(err)
	}
	delete(ls.allocHeard(), j.ID)
	if _, ok := ls.launched[j.ID]; !ok {
		ls.limits().ended[j.ID] = j.RestartCount // see launchDone
	}
	delete(ls.launched, j.ID)
	ls.touch(j, why, state.String())
	ls.terminateOn(j, nodes, j.RestartCount, api.StateCancelled)
	ls.wantSched = true
	return nil
}

// cancelAllocation cancels an allocation that never started.
func (ls *loopState) cancelAllocation(j *sched.Job, now time.Time) error {
	if err := ls.st.Cancel(j.ID, now); err != nil {
		return errMsg(err)
	}
	delete(ls.allocHeard(), j.ID)
	ls.touch(j, "cancel", "allocation holder")
	ls.wantSched = true
	return nil
}

// checkAllocations cancels the allocations whose holder went silent,
// pending or running (a controller that just started counts from its
// start).
func (ls *loopState) checkAllocations(now time.Time) {
	heard := ls.allocHeard()
	limit := ls.orphanedAfter()
	for _, j := range ls.st.Jobs() {
		if j.State.Finished() || !ls.isAllocation(j) || isActive(j) && ls.specs[j.ID].NoShell {
			// salloc --no-shell has left its granted allocation.
			continue
		}
		last, ok := heard[j.ID]
		if !ok {
			heard[j.ID] = now
			continue
		}
		if now.Sub(last) <= limit {
			continue
		}
		ls.c.log.Warn("allocation holder silent; cancelling the allocation", "job", j.ID, "silent", now.Sub(last).Round(time.Second))
		if !isActive(j) {
			ls.cancelAllocation(j, now)
			continue
		}
		j.StateDesc = "salloc or srun holding the allocation stopped answering"
		ls.endAllocation(j, sched.JobCancelled, 0, "orphaned", now)
	}
}

// allocHeard is when each allocation's holder last said it was alive.
func (ls *loopState) allocHeard() map[sched.JobID]time.Time {
	if ls.allocSeen == nil {
		ls.allocSeen = map[sched.JobID]time.Time{}
	}
	return ls.allocSeen
}
