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
	st.shapeGen++ // a remembered canEverFit may no longer hold (everFitCache)
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

// GraceExpired lists the jobs signalled for preemption (GraceTime) whose
// grace has ended at now, with the action Slurm then carries out: the
// victim's PreemptMode (its QOS's under preempt/qos, its partition's
// under preempt/partition_prio, else the cluster's), REQUEUE falling back
// to CANCEL for a job that may not be requeued. The driver calls it
// before TimedOut and applies each with State.Preempted: a job killed at
// the end of its grace time ends PREEMPTED (or is requeued), not TIMEOUT,
// even if it exits during the grace time.
func (st *State) GraceExpired(now time.Time) []Preemption {
	var out []Preemption
	for _, j := range st.jobList {
		if j.State.Base() != JobRunning || j.PreemptTime.IsZero() || j.EndTime.After(now) {
			continue
		}
		out = append(out, Preemption{Job: j.ID, Mode: st.victimMode(j), GraceEnd: j.EndTime})
	}
	return out
}

// victimMode resolves the preemption action for job j.
func (st *State) victimMode(j *Job) PreemptMode {
	mode := PreemptUnset
	switch st.Config.PreemptType {
	case PreemptQOS:
		if p := st.Policy; p != nil && j.qos >= 0 && int(j.qos) < len(p.QOS) {
			mode = p.QOS[j.qos].PreemptMode.Action()
		}
	case PreemptPartitionPrio:
		if j.Partition >= 0 {
			mode = st.Cluster.Partitions[j.Partition].PreemptMode.Action()
		}
	}
	if mode == 0 {
		mode = st.Config.PreemptMode.Action()
	}
	switch {
	case mode&PreemptRequeue != 0 && j.Req.Requeue:
		return PreemptRequeue
	case mode&PreemptSuspend != 0:
		return PreemptSuspend
	}
	return PreemptCancel
}
