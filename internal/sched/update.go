package sched

import (
	"fmt"
	"time"
)

// JobUpdate is `scontrol update job`: every non-nil field is a change.
type JobUpdate struct {
	TimeLimit  *time.Duration
	TimeMin    *time.Duration
	Partitions []string
	Account    *string
	QOS        *string
	Name       *string
	Nice       *int32
	// Priority sets an operator priority (0 = hold, as Slurm treats it).
	Priority *uint32
	MinNodes *int32
	MaxNodes *int32
	NTasks   *int32
	// BeginTime is StartTime= / EligibleTime=.
	BeginTime  *time.Time
	Dependency *string
	Constraint *string
	NodeList   []string
	Exclude    []string
	Requeue    *bool
}

// Update applies u to job id as slurmctld's update_job does: a running
// job may only have its time limit changed (raised only by an operator);
// everything else needs a pending job; --priority and a negative nice are
// for operators. The request is validated again as at submission (the
// partition, account, QOS, limits of the partition, the node
// configuration) and nothing changes when it is refused.
func (st *State) Update(id JobID, u JobUpdate, admin bool, now time.Time) error {
	st.orderGen++ // the incremental queue (lazy_queue.go) is built again
	st.shapeGen++ // a remembered canEverFit may no longer hold (everFitCache)
	j, err := st.lookupJob(id)
	if err != nil {
		return err
	}
	if j.State.Finished() {
		return fmt.Errorf("job %d: %w", id, ErrAlreadyDone)
	}
	if isActive(j) {
		return st.updateRunning(j, u, admin)
	}
	if u.Priority != nil && *u.Priority != 0 && j.Hold != HoldNone {
		// Slurm refuses a priority for a held job, to an operator too,
		// rather than releasing it.
		return fmt.Errorf("job %d: %w", id, ErrJobHeld)
	}
	if (u.Priority != nil || u.Nice != nil && *u.Nice < 0) && !admin {
		return fmt.Errorf("job %d: %w", id, ErrAccessDenied)
	}
	trial := *j
	trial.Req = j.Req
	applyUpdate(&trial.Req, u)
	if err := st.revalidate(&trial); err != nil {
		return err
	}
	st.countSubmit(j, -int64(j.Tasks()))
	j.Req, j.Partitions, j.Account, j.QOS, j.assoc, j.qos = trial.Req, trial.Partitions, trial.Account, trial.QOS, trial.assoc, trial.qos
	st.countSubmit(j, int64(j.Tasks()))
	if u.Priority != nil {
		if *u.Priority == 0 {
			j.Hold, j.Reason = HoldAdmin, ReasonJobHeldAdmin
		} else {
			j.Priority, j.DirectPriority = *u.Priority, true
		}
	}
	j.PartPriority = nil
	j.TimeLimit = effectiveTimeLimit(st.Policy, st.Cluster, j, j.Partitions[0])
	j.ExpectedStart, j.PlannedNodes = time.Time{}, nil
	return nil
}

// updateRunning changes the time limit of a running or suspended job.
func (st *State) updateRunning(j *Job, u JobUpdate, admin bool) error {
	if u.TimeLimit == nil || u.Partitions != nil || u.Account != nil || u.QOS != nil || u.MinNodes != nil ||
		u.NTasks != nil || u.Constraint != nil || u.NodeList != nil || u.Dependency != nil || u.BeginTime != nil {
		return fmt.Errorf("job %d: %w", j.ID, ErrNotPending)
	}
	limit := *u.TimeLimit
	if limit > j.TimeLimit && !admin {
		return fmt.Errorf("job %d: %w", j.ID, ErrAccessDenied)
	}
	j.TimeLimit = limit
	j.Req.TimeLimit = limit
	j.EndTime = endTime(j.StartTime, limit)
	if !j.EndTime.IsZero() {
		j.EndTime = j.EndTime.Add(j.Suspended)
	}
	return nil
}

func applyUpdate(r *Request, u JobUpdate) {
	if u.TimeLimit != nil {
		r.TimeLimit = *u.TimeLimit
	}
	if u.TimeMin != nil {
		r.TimeMin = *u.TimeMin
	}
	if u.Partitions != nil {
		r.Partitions = u.Partitions
	}
	if u.Account != nil {
		r.Account = *u.Account
	}
	if u.QOS != nil {
		r.QOS = *u.QOS
	}
	if u.Name != nil {
		r.Name = *u.Name
	}
	if u.Nice != nil {
		r.Nice = *u.Nice
	}
	if u.MinNodes != nil {
		r.MinNodes = *u.MinNodes
	}
	if u.MaxNodes != nil {
		r.MaxNodes = *u.MaxNodes
	}
	if u.NTasks != nil {
		r.NTasks = *u.NTasks
	}
	if u.BeginTime != nil {
		r.BeginTime = *u.BeginTime
	}
	if u.Dependency != nil {
		r.Dependency, r.Deps, r.DepsAny = *u.Dependency, nil, false
	}
	if u.Constraint != nil {
		r.Constraint = *u.Constraint
	}
	if u.NodeList != nil {
		r.NodeList = u.NodeList
	}
	if u.Exclude != nil {
		r.Exclude = u.Exclude
	}
	if u.Requeue != nil {
		r.Requeue = *u.Requeue
	}
}

// revalidate runs the submission checks again on a changed pending job
// (not the submit-count limits: the job is already counted).
func (st *State) revalidate(j *Job) error {
	j.Partitions = nil
	steps := []func(*Job, Submitter) error{st.resolvePartitions, st.resolveAccount, st.resolveQOS,
		st.checkDependency, st.checkPartitionLimits, st.checkGresNames, st.checkFits}
	for _, step := range steps {
		if err := step(j, Submitter{}); err != nil {
			return err
		}
	}
	return nil
}

// SetArrayThrottle is scontrol update JobId=A ArrayTaskThrottle=n: the
// most tasks of array A that may run at once (0 = no limit), on every
// task of the array (each shows it), whatever their state; the tasks
// already running go on. Slurm refuses it on a job that is not an array
// (ErrNotSupported: "only allowed on ArrayJobId").
func (st *State) SetArrayThrottle(arrayID JobID, n int32) error {
	st.orderGen++ // the incremental queue (lazy_queue.go) is built again
	found := false
	for _, j := range st.jobList {
		if j.Array != nil && j.Array.JobID == arrayID {
			j.Array.Throttle, found = n, true
		}
	}
	if found {
		return nil
	}
	if st.jobs[arrayID] != nil {
		return fmt.Errorf("job %d: %w", arrayID, ErrNotSupported)
	}
	return fmt.Errorf("job %d: %w", arrayID, ErrInvalidJobID)
}
