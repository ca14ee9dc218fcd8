package sched

import (
	"fmt"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Apply carries out a plan computed by Schedule at plan.Now: preemptions
// first (their resources are what the preemptors start on), resumes, then
// starts, then the pending jobs' reasons and expected start times. It
// returns the ids of the jobs started (array tasks split off a pending
// record get their own new ids here).
func (st *State) Apply(plan *Plan) []JobID {
	now := plan.Now
	for _, p := range plan.Preemptions {
		st.applyPreemption(p, now)
	}
	for _, id := range plan.Resumes {
		_ = st.Resume(id, now)
	}
	started := make([]JobID, 0, len(plan.Starts))
	view := st.planView(plan)
	for i := range plan.Starts {
		span := view.confirmable(i, &plan.Starts[i].Alloc)
		if id, ok := st.applyStart(&plan.Starts[i], now, span != nil); ok {
			started = append(started, id)
			if span != nil {
				span.done = true // the view holds this start already
			}
		}
	}
	for i := range plan.Pending {
		var j *Job
		if i < len(plan.pendJobs) {
			j = plan.pendJobs[i]
		}
		st.applyPending(&plan.Pending[i], j, now, plan.BackfillPass)
	}
	for _, id := range plan.DepCancels {
		st.cancelInvalidDep(id, now)
	}
	return started
}

func (st *State) applyPreemption(p Preemption, now time.Time) {
	j := st.jobs[p.Job]
	if j == nil || !isActive(j) {
		return
	}
	if p.GraceEnd.After(now) && p.Mode != PreemptSuspend {
		// Slurm signals the job now and kills it at the end of its grace
		// time; the driver calls Preempted then.
		j.PreemptTime = now
		j.EndTime = p.GraceEnd
		return
	}
	if st.Preempted(p.Job, p.Mode, now) == nil && j.State.Base() == JobSuspended {
		j.SuspendedBy = p.By // 0 for a time slice
	}
}

// Preempted carries out the preemption of job id with mode (CANCEL,
// REQUEUE or SUSPEND) at now. A job that may not be requeued is cancelled
// instead, as Slurm does.
func (st *State) Preempted(id JobID, mode PreemptMode, now time.Time) error {
	j, err := st.lookupJob(id)
	if err != nil {
		return err
	}
	switch mode.Action() {
	case PreemptSuspend:
		if err := st.Suspend(id, now); err != nil {
			return err
		}
		j.GangSuspended = true // the gang step resumes it (gang.go)
		return nil
	case PreemptRequeue:
		if j.Req.Requeue {
			return st.requeue(j, now, JobPreempted, false)
		}
	}
	if j.PreemptTime.IsZero() {
		j.PreemptTime = now // scontrol's PreemptTime (kept from the signal with a GraceTime)
	}
	return st.End(id, JobPreempted, 0, now)
}

// applyStart starts s; inView: the kept free view took its allocation
// already (its nodes need no refill).
func (st *State) applyStart(s *Start, now time.Time, inView bool) (JobID, bool) {
	j := st.jobs[s.Job]
	if j == nil || j.State.Base() != JobPending {
		return 0, false
	}
	if s.ArrayTask >= 0 {
		j = st.splitTask(j, s.ArrayTask)
		if j == nil {
			return 0, false
		}
	}
	j.State = JobRunning
	j.Reason, j.StateDesc = ReasonNone, ""
	j.Partition = s.Partition
	j.TimeLimit = s.TimeLimit
	j.StartTime = now
	j.EndTime = endTime(now, s.TimeLimit)
	j.ResvEnd = s.ResvEnd
	j.Alloc = s.Alloc
	j.ExpectedStart, j.PlannedNodes = time.Time{}, nil
	j.Suspended = 0
	if j.EligibleTime.IsZero() {
		j.EligibleTime = now
	}
	if !inView {
		st.markDirty(&j.Alloc)
	}
	st.allocNodes(j, &j.Alloc, true)
	st.countRun(j, 1)
	return j.ID, true
}

// AcctEligible is the eligible time accounting records for j's current
// run: Slurm stores the job's begin time there, so a job that waited for
// its --begin time or its requeue delay shows that time (a pending one
// already before it is reached), not the scheduler pass that found it
// eligible. Zero while a job without a begin time is not eligible.
func (j *Job) AcctEligible() time.Time {
	b := j.Req.BeginTime
	switch {
	case b.IsZero() || !b.After(j.SubmitTime):
		return j.EligibleTime
	case j.EligibleTime.IsZero() || b.Before(j.EligibleTime):
		return b
	}
	return j.EligibleTime
}

func endTime(start time.Time, limit time.Duration) time.Time {
	if limit == Infinite || limit <= 0 {
		return time.Time{}
	}
	return start.Add(limit)
}

// splitTask takes task out of the pending array record j: a new job record
// with the next job id, or j itself when task is its last pending task
// (the array's own id then names that task), as Slurm splits arrays.
func (st *State) splitTask(j *Job, task int32) *Job {
	a := j.Array
	if a == nil || a.TaskID >= 0 || !a.Tasks.Has(int(task)) {
		return nil
	}
	if a.Tasks.Count() == 1 {
		a.TaskID, a.Tasks = task, nil
		return j
	}
	a.Tasks.Clear(int(task))
	t := *j
	t.ID = st.NextJobID
	st.NextJobID++
	t.Array = &ArrayInfo{JobID: a.JobID, TaskID: task, Throttle: a.Throttle}
	t.Runs = nil
	st.addJob(&t)
	return &t
}

// cancelInvalidDep ends a pending job whose dependency failed for good,
// as slurmctld does under kill_invalid_depend: CANCELLED, its last reason
// kept (squeue shows DependencyNeverSatisfied).
func (st *State) cancelInvalidDep(id JobID, now time.Time) {
	j := st.jobs[id]
	if j == nil || j.State.Base() != JobPending {
		return
	}
	if st.End(id, JobCancelled, 0, now) == nil {
		j.Reason = ReasonDependencyNeverSatisfied
	}
}

// applyPending records p on its job: j when the plan carries it (the job
// the cycle read; while it is pending it is the State's record of that
// id), else looked up by id. The expected start and planned nodes are
// recorded from a backfill pass only (planned).
func (st *State) applyPending(p *PendingInfo, j *Job, now time.Time, planned bool) {
	if j == nil || j.ID != p.Job {
		j = st.jobs[p.Job]
	}
	if j == nil || j.State.Base() != JobPending {
		return
	}
	j.Reason = p.Reason
	if planned {
		j.ExpectedStart, j.PlannedNodes = p.ExpectedStart, p.PlannedNodes
	}
	recordDepStates(j, p.DepStates)
	if p.StateDesc != "" || !requeueHeldDesc(j.StateDesc) {
		j.StateDesc = p.StateDesc
	}
	if j.EligibleTime.IsZero() && eligibleReason(p.Reason) {
		j.EligibleTime = now
		if j.AccrueTime.IsZero() {
			j.AccrueTime = now
		}
	}
}

// eligibleReason reports whether a job pending for reason r is eligible
// (begin time reached, no hold, dependencies met): Slurm starts its age
// (accrue time) then.
func eligibleReason(r Reason) bool {
	switch r {
	case ReasonJobHeldUser, ReasonJobHeldAdmin, ReasonDependency, ReasonDependencyNeverSatisfied,
		ReasonBeginTime, ReasonInvalidAccount, ReasonInvalidQOS:
		return false
	}
	return true
}

// allocate adds (take) or removes (!take) an allocation on the nodes.
// cpus false leaves CPUs alone (suspend/resume move only CPUs).
func (st *State) allocate(j *Job, al *Alloc, take bool) {
	st.markDirty(al)
	st.allocNodes(j, al, take)
}

// markDirty lists al's nodes for the next cycle's refill.
func (st *State) markDirty(al *Alloc) {
	if st.availDirty = append(st.availDirty, al.Nodes...); len(st.availDirty) > len(st.Cluster.Nodes) {
		st.availDirty, st.availAll = st.availDirty[:0], true // refilling every node is no dearer
	}
}

// allocNodes is allocate without marking the nodes dirty; it reports
// whether one of the nodes is draining.
func (st *State) allocNodes(j *Job, al *Alloc, take bool) (drain bool) {
	sign := int64(1)
	if !take {
		sign = -1
	}
	nodes := st.Cluster.Nodes
	cpus := j.State.Base() != JobSuspended // a suspended job's CPUs are free already
	for s, ni := range al.Nodes {
		n := &nodes[ni]
		if cpus {
			n.AllocCPUs += int32(sign) * al.CPUs[s]
		}
		n.AllocMem += sign * al.Mem[s]
		n.Jobs += int32(sign)
		if al.Exclusive {
			if take {
				n.ExclusiveJob = j.ID
			} else if n.ExclusiveJob == j.ID {
				n.ExclusiveJob = 0
			}
		}
		n.refreshNodeState()
		drain = drain || n.State.Has(NodeFlagDrain)
	}
	for _, g := range al.Gres {
		nodes[al.Nodes[g.Slot]].AllocGres[g.Kind] += sign * g.Count
	}
	return drain
}

// End ends job id at now in final state (COMPLETED, FAILED, TIMEOUT,
// CANCELLED, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED, ...) with exit code; its
// resources are freed. A pending job (or pending array record) ends
// without having run.
func (st *State) End(id JobID, state JobState, exit int32, now time.Time) error {
	j, err := st.lookupJob(id)
	if err != nil {
		return err
	}
	if j.State.Finished() {
		return fmt.Errorf("job %d: %w", id, ErrAlreadyDone)
	}
	if isActive(j) {
		st.countRun(j, -1)
		if j.State.Base() == JobSuspended {
			j.Suspended += now.Sub(j.SuspendTime)
		}
		st.release(j)
	}
	st.countSubmit(j, -int64(j.Tasks()))
	j.Reason = endReason(j, state, exit)
	j.State = state
	j.ExitCode = exit
	j.EndTime = now
	return nil
}

// endReason is the reason a job ending in state with wait status exit
// keeps, as squeue (%r, and %R for FAILED and TIMEOUT) and scontrol show
// it. Oracle: TIMEOUT shows TimeLimit; FAILED with an exit code
// NonZeroExitCode, killed by a signal RaisedSignal:9(Killed); a pending
// job cancelled keeps its pending reason (CANCELLED JobHeldUser); a
// running one cancelled, and COMPLETED, show None.
func endReason(j *Job, state JobState, exit int32) Reason {
	switch {
	case state.Base() == JobTimeout:
		return ReasonTimeLimit
	case state.Base() == JobFailed && exit&0x7f != 0:
		sig := exit & 0x7f
		return Reason(fmt.Sprintf("RaisedSignal:%d(%s)", sig, api.SignalText(int(sig))))
	case state.Base() == JobFailed && exit>>8&0xff != 0:
		return ReasonNonZeroExitCode
	case state.Base() == JobCancelled && j.State.Base() == JobPending && j.Reason != "":
		return j.Reason
	}
	return ReasonNone
}

// Complete ends a running job: COMPLETED with exit code 0, else FAILED.
func (st *State) Complete(id JobID, exit int32, now time.Time) error {
	state := JobCompleted
	if exit != 0 {
		state = JobFailed
	}
	return st.End(id, state, exit, now)
}

// Cancel cancels job id (scancel): a pending job ends CANCELLED without
// running, a running or suspended one is stopped.
func (st *State) Cancel(id JobID, now time.Time) error {
	return st.End(id, JobCancelled, 0, now)
}

// TimedOut lists the running jobs whose time limit (extended by the time
// they spent suspended) has passed at now, in id order: the driver ends
// them with state TIMEOUT.
func (st *State) TimedOut(now time.Time) []JobID {
	var out []JobID
	for _, j := range st.jobList {
		if j.State.Base() == JobRunning && !j.EndTime.IsZero() && !now.Before(j.EndTime) {
			out = append(out, j.ID)
		}
	}
	return out
}

// ResvEnded lists the running or suspended jobs started in a reservation
// whose end (plus ResvOverRun, Job.ResvEnd) has come by now: Slurm ends
// them with TIMEOUT whatever their own limit.
func (st *State) ResvEnded(now time.Time) []JobID {
	var out []JobID
	for _, j := range st.jobList {
		if isActive(j) && !j.ResvEnd.IsZero() && !now.Before(j.ResvEnd) {
			out = append(out, j.ID)
		}
	}
	return out
}

// Requeue puts a running (or suspended) job back to PENDING (scontrol
// requeue): its run is recorded as REQUEUED; with hold it is held
// (scontrol requeuehold).
func (st *State) Requeue(id JobID, hold bool, now time.Time) error {
	j, err := st.lookupJob(id)
	if err != nil {
		return err
	}
	if !isActive(j) && !(j.State.Finished() && j.State.Base() != JobCancelled) {
		return fmt.Errorf("job %d: %w", id, ErrTransitionState)
	}
	return st.requeue(j, now, JobRequeued, hold)
}

// requeue is Slurm's _job_requeue_op: the run is recorded (PREEMPTED or
// REQUEUED), restart_cnt++, the job is PENDING again with a new submit
// time, its age restarts (accrue time cleared) and it becomes eligible
// only after the requeue delay (begin time = now + delay + 1 s, reason
// BeginTime). It keeps its id.
func (st *State) requeue(j *Job, now time.Time, runState JobState, hold bool) error {
	st.orderGen++ // the incremental queue (lazy_queue.go) is built again
	if isActive(j) {
		st.countRun(j, -1)
		if j.State.Base() == JobSuspended {
			j.Suspended += now.Sub(j.SuspendTime)
		}
		st.release(j)
	} else {
		st.countSubmit(j, 1) // a finished job counts as submitted again
	}
	j.Runs = append(j.Runs, RunRecord{Start: j.StartTime, End: now, State: runState,
		Nodes: append([]int32(nil), j.Alloc.Nodes...), ExitCode: j.ExitCode,
		Submit: j.SubmitTime, Eligible: j.AcctEligible(), Alloc: j.Alloc, Partition: j.Partition,
		Suspended: j.Suspended})
	j.RestartCount++
	j.State = JobPending
	j.Alloc = Alloc{}
	j.SubmitTime = now
	j.EligibleTime, j.AccrueTime, j.StartTime, j.EndTime = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	j.PreemptTime, j.SuspendTime, j.Suspended = time.Time{}, time.Time{}, 0
	j.Req.BeginTime = now.Add(st.Config.RequeueDelay + time.Second)
	j.Reason, j.StateDesc = ReasonBeginTime, ""
	if hold {
		j.Hold, j.Reason, j.StateDesc = HoldUser, ReasonJobHeldUser, StateDescRequeuedHeld
	}
	return nil
}

// Suspend suspends a running job (scontrol suspend, or preemption with
// SUSPEND): its CPUs are freed for others, its memory and GRES stay held.
func (st *State) Suspend(id JobID, now time.Time) error {
	st.availAll = true // the next cycle's free view is filled afresh (Avail.refill)
	st.orderGen++      // the incremental queue (lazy_queue.go) is built again
	j, err := st.lookupJob(id)
	if err != nil {
		return err
	}
	if j.State.Base() != JobRunning {
		return fmt.Errorf("job %d: %w", id, ErrTransitionState)
	}
	for s, ni := range j.Alloc.Nodes {
		n := &st.Cluster.Nodes[ni]
		n.AllocCPUs -= j.Alloc.CPUs[s]
		n.refreshNodeState()
	}
	j.State = JobSuspended
	j.SuspendTime = now
	return nil
}

// Resume resumes a suspended job: its CPUs are taken again and its end
// time moves by the time it spent suspended (Slurm extends the limit).
func (st *State) Resume(id JobID, now time.Time) error {
	st.availAll = true // the next cycle's free view is filled afresh (Avail.refill)
	st.orderGen++      // the incremental queue (lazy_queue.go) is built again
	j, err := st.lookupJob(id)
	if err != nil {
		return err
	}
	if j.State.Base() != JobSuspended {
		return fmt.Errorf("job %d: %w", id, ErrTransitionState)
	}
	for s, ni := range j.Alloc.Nodes {
		n := &st.Cluster.Nodes[ni]
		n.AllocCPUs += j.Alloc.CPUs[s]
		n.refreshNodeState()
	}
	d := now.Sub(j.SuspendTime)
	j.Suspended += d
	if !j.EndTime.IsZero() {
		j.EndTime = j.EndTime.Add(d)
	}
	j.State = JobRunning
	j.SuspendTime = now
	j.GangSuspended, j.SuspendedBy = false, 0
	return nil
}

// Hold holds a job (scontrol hold / uhold): priority 0 in Slurm, reason
// JobHeldAdmin when an operator holds it, JobHeldUser otherwise. Slurm
// also holds a running job (it keeps running, squeue shows "R
// JobHeldUser" and priority 0 until a release); a finished one is refused
// with "Job has already finished".
func (st *State) Hold(id JobID, admin bool) error {
	st.orderGen++ // the incremental queue (lazy_queue.go) is built again
	j, err := st.lookupJob(id)
	if err != nil {
		return err
	}
	if j.State.Finished() {
		return fmt.Errorf("job %d: %w", id, ErrJobFinished)
	}
	if admin {
		j.Hold, j.Reason = HoldAdmin, ReasonJobHeldAdmin
	} else if j.Hold != HoldAdmin {
		j.Hold, j.Reason = HoldUser, ReasonJobHeldUser
	}
	return nil
}

// Release releases a held job (scontrol release), running ones included
// as in Slurm. A user may not release an operator's hold.
func (st *State) Release(id JobID, admin bool) error {
	st.orderGen++ // the incremental queue (lazy_queue.go) is built again
	j, err := st.lookupJob(id)
	if err != nil {
		return err
	}
	if j.State.Finished() {
		return fmt.Errorf("job %d: %w", id, ErrJobFinished)
	}
	if j.Hold == HoldAdmin && !admin {
		return fmt.Errorf("job %d: %w", id, ErrAccessDenied)
	}
	j.Hold, j.Reason = HoldNone, ReasonNone
	if requeueHeldDesc(j.StateDesc) {
		j.StateDesc = ""
	}
	return nil
}

// SetNodeState sets a node's state flags and reason (scontrol update
// nodename=... state=DRAIN|DOWN|RESUME|IDLE reason=...). The base state of
// an up node keeps following its allocation.
func (st *State) SetNodeState(name string, state NodeState, reason string, now time.Time) error {
	st.availAll = true // the next cycle's free view is filled afresh (Avail.refill)
	st.orderGen++      // the incremental queue (lazy_queue.go) is built again
	i := st.Cluster.NodeIndex(name)
	if i < 0 {
		return fmt.Errorf("node %q: %w", name, ErrInvalidNodeName)
	}
	n := &st.Cluster.Nodes[i]
	n.State = state
	if state.Base() == NodeIdle || state.Base() == NodeMixed || state.Base() == NodeAllocated {
		n.refreshNodeState()
	}
	n.Reason, n.ReasonTime = reason, now
	if reason == "" {
		n.ReasonTime = time.Time{}
	}
	return nil
}

// countRun updates the usage counters for a job starting (+1) or stopping
// (-1) to run.
func (st *State) countRun(j *Job, sign int64) {
	p := st.Policy
	if p == nil || j.Partition < 0 {
		return
	}
	tres := make([]int64, len(p.TRES))
	allocTRES(st.Cluster, p, &j.Alloc, tres)
	addLicenseTRES(p, j, tres) // license/NAME (license.go)
	qs := orderedQOS(p, j.qos, partQOS(p, st.Cluster, j.Partition))
	st.usage.each(p, j.assocFor(p, st.Cluster, j.Partition), qs[:], j.User, j.Account,
		func(ct *counter) { ct.addRun(sign, tres) })
}

// countSubmit updates the submitted-jobs counters by n tasks.
func (st *State) countSubmit(j *Job, n int64) {
	p := st.Policy
	if p == nil {
		return
	}
	part := int32(-1) // submit counts always use the first requested partition
	if len(j.Partitions) > 0 {
		part = j.Partitions[0]
	}
	qs := orderedQOS(p, j.qos, partQOS(p, st.Cluster, part))
	st.usage.each(p, j.assocFor(p, st.Cluster, part), qs[:], j.User, j.Account,
		func(ct *counter) { ct.submitJobs += n })
}
