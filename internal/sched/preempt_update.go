package sched

import (
	"fmt"
	"time"
)

// UpdatePartition is `scontrol update jobid=N partition=LIST` on a pending
// job: the job's partitions are replaced (ordered by PriorityTier, as
// Slurm lists them) and its time limit, association and QOS are resolved
// again against the new partition. With preemption enabled this is how an
// operator escalates a waiting job: moved to a higher-tier partition it
// sorts ahead and, at the next cycle, preempts (SUSPEND, REQUEUE or
// CANCEL) lower-tier jobs for room, as in SCENARIOS.md S5.
func (st *State) UpdatePartition(id JobID, names []string) error {
	j, err := st.lookupJob(id)
	if err != nil {
		return err
	}
	if j.State.Base() != JobPending {
		return fmt.Errorf("job %d: %w", id, ErrNotPending)
	}
	old, oldReq := j.Partitions, j.Req.Partitions
	st.countSubmit(j, -int64(j.Tasks()))
	j.Partitions, j.Req.Partitions = nil, names
	if err := st.resolvePartitions(j, Submitter{}); err != nil {
		j.Partitions, j.Req.Partitions = old, oldReq
		st.countSubmit(j, int64(j.Tasks()))
		return err
	}
	st.resolvePolicy(j)
	st.countSubmit(j, int64(j.Tasks()))
	j.PartPriority = nil
	j.TimeLimit = effectiveTimeLimit(st.Policy, st.Cluster, j, j.Partitions[0])
	j.ExpectedStart, j.PlannedNodes = time.Time{}, nil
	return nil
}
