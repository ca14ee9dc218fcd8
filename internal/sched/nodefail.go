package sched

import (
	"fmt"
	"time"
)

// NodeFail marks node name DOWN with reason (a node agent stopped
// answering, or an operator downed it) and deals with the jobs on it as
// slurmctld does: a job that may be requeued goes back to PENDING (its run
// recorded as NODE_FAIL), any other ends in state NODE_FAIL. It returns
// the ids of the jobs affected.
func (st *State) NodeFail(name, reason string, now time.Time) ([]JobID, error) {
	st.availAll = true // the next cycle's free view is filled afresh (Avail.refill)
	st.orderGen++      // the incremental queue (lazy_queue.go) is built again
	i := st.Cluster.NodeIndex(name)
	if i < 0 {
		return nil, fmt.Errorf("node %q: %w", name, ErrInvalidNodeName)
	}
	var hit []JobID
	for _, j := range st.jobList {
		if !isActive(j) || !allocHas(&j.Alloc, i) {
			continue
		}
		hit = append(hit, j.ID)
	}
	for _, id := range hit {
		j := st.jobs[id]
		if j.Req.Requeue {
			if err := st.requeue(j, now, JobNodeFail, false); err != nil {
				return hit, err
			}
			continue
		}
		if err := st.End(id, JobNodeFail, 0, now); err != nil {
			return hit, err
		}
	}
	n := &st.Cluster.Nodes[i]
	n.State = NodeDown | n.State&^nodeBaseMask&^NodeFlagCompleting
	n.Reason, n.ReasonTime = reason, now
	return hit, nil
}

func allocHas(al *Alloc, node int32) bool {
	for _, n := range al.Nodes {
		if n == node {
			return true
		}
	}
	return false
}

// CancelArrayTask cancels one task of an array (scancel 123_7). A task
// still inside the pending array record is only taken out of it, without
// a job id or record of its own, as Slurm 24.11 does (oracle: after
// scancel 25_4 of pending tasks, the next job is 27 after 25 and its
// task 26, and "Job 25_4 not found"); the record's last pending task
// ends it CANCELLED; a task already split off is cancelled like any job.
func (st *State) CancelArrayTask(arrayID JobID, task int32, now time.Time) error {
	for _, j := range st.jobList {
		if j.Array == nil || j.Array.JobID != arrayID || j.State.Finished() {
			continue
		}
		if j.Array.TaskID == task {
			return st.Cancel(j.ID, now)
		}
		if j.Array.TaskID < 0 && j.Array.Tasks.Has(int(task)) {
			if j.Array.Tasks.Count() > 1 {
				j.Array.Tasks.Clear(int(task))
				return nil
			}
			t := st.splitTask(j, task)
			return st.End(t.ID, JobCancelled, 0, now)
		}
	}
	return fmt.Errorf("job %d_%d: %w", arrayID, task, ErrInvalidJobID)
}
