package noded

import (
	"fmt"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// track brings one job up to date and reports whether it just finished.
// Jobs of the connected supervisor end through its exit events; a full
// check reads the spool and /proc for every job (after an agent restart,
// a lost supervisor connection, and periodically as a safety net). The
// order matters: liveness is read before the exit journal, so a supervisor
// that records the exit and quits in between is never taken for lost.
func (a *Agent) track(j *job, now time.Time, full bool) bool {
	r := &j.rec
	if api.AgentJobFinal(r.State) {
		return false
	}
	if !full && r.Resident && r.ShimPID == a.supPID && r.ShimTick == a.supTick {
		if j.dirty {
			a.save(j)
		}
		a.sampleJob(j, now, false)
		a.enforce(j, now)
		return false
	}
	if r.PID == 0 && !r.Resident {
		// A job of an older agent's per-job shim.
		var p shimPids
		if readJSON(filepath.Join(jobDir(a.cfg.Spool, r.Req.JobID), pidsFile), &p) == nil && p.PID != 0 {
			r.PID, r.PIDTick = p.PID, p.PIDTick
			r.ShimPID, r.ShimTick = p.ShimPID, p.ShimTick
			a.save(j)
		}
	}
	leader := sameProcess(r.PID, r.PIDTick)
	sup := sameProcess(r.ShimPID, r.ShimTick)
	if ex, ok := a.exitOf(j, leader); ok {
		a.finish(j, ex, now)
		return true
	}
	if lost := a.lostReason(r, leader, sup, now); lost != "" {
		a.finish(j, exitRecord{WaitStatus: -1, Time: now, Error: lost}, now)
		return true
	}
	if leader {
		a.sampleJob(j, now, false)
		a.enforce(j, now)
	}
	return false
}

// exitOf returns the recorded end of a job: the supervisor's journal, or
// for a job of an older agent's per-job shim, its exit.json. A job whose
// leader still runs has none, and the journal is not read for it. The
// caller holds a.mu.
func (a *Agent) exitOf(j *job, leaderAlive bool) (exitRecord, bool) {
	if leaderAlive {
		return exitRecord{}, false
	}
	r := &j.rec
	if !r.Resident {
		var ex exitRecord
		if readJSON(filepath.Join(jobDir(a.cfg.Spool, r.Req.JobID), exitFile), &ex) != nil {
			return ex, false
		}
		ex.recorded = true
		return ex, true
	}
	return a.exits.lookup(r.Req.JobID, r.Req.RestartCount)
}

// lostReason says why a job with no exit record can no longer end with a
// known status ("" while it still may). A resident supervisor that is
// alive records every exit of its jobs; once it is gone, a job whose
// leader also ended has an unknown status and ends FAILED (1:0), as a
// batch step whose slurmstepd vanished: the node itself is fine, so this
// is not NODE_FAIL (docs/differences.md).
func (a *Agent) lostReason(r *jobRecord, leader, sup bool, now time.Time) string {
	switch {
	case leader:
		return ""
	case !r.Resident:
		if sup || r.PID == 0 && r.ShimPID == 0 && now.Sub(r.Start) < shimHandshakeTimeout {
			return "" // the per-job shim still runs, or a launch in progress
		}
		return "job supervisor and job processes vanished"
	case r.PID == 0:
		if sup && now.Sub(r.Start) < shimHandshakeTimeout {
			return "" // the supervisor may still answer the launch
		}
		return "batch job launch did not complete"
	case sup:
		return "" // the supervisor is about to record the exit
	}
	return "job supervisor died; the batch script's exit status is unknown"
}

// finish records a job's end: Slurm's state and ExitCode "code:signal".
func (a *Agent) finish(j *job, ex exitRecord, now time.Time) {
	r := &j.rec
	if !r.SuspendedAt.IsZero() {
		r.Suspended += now.Sub(r.SuspendedAt)
		r.SuspendedAt = time.Time{}
	}
	r.State, r.ExitCode = finalState(r.TermState, ex.WaitStatus)
	// Samples are in no journal: a record that holds some is saved.
	sampled := r.Usage != nil && r.Usage.Sampled
	if ex.RU != nil {
		if r.Usage == nil {
			r.Usage = &api.TaskUsage{Node: a.cfg.Name}
		}
		addRusage(r.Usage, ex.RU)
	}
	if r.Cgroup != "" || len(r.CgroupV1) > 0 {
		if r.TermState == "" && jobOOM(r.Cgroup, r.CgroupV1) {
			// Slurm's ExitCode of a job the OOM killer hit (oracle
			// issue 15: "OUT_OF_MEMORY 0:125").
			r.State, r.ExitCode = api.StateOutOfMemory, "0:125"
		}
		a.cg.remove(r.Req.JobID, r.Cgroup, r.CgroupV1)
	}
	a.cg.releaseCPUs(r.Req.JobID)
	r.End = ex.Time
	if r.End.IsZero() {
		r.End = now
	}
	r.Reason = ex.Error
	if !ex.recorded || r.State == api.StateOutOfMemory || sampled {
		// A state the exit journal would not give again (a lost job, an
		// OOM kill seen in the cgroup now removed) is saved; the rest is
		// recomputed by a restarted agent from the record and the
		// journal.
		a.save(j)
	} else {
		j.dirty = false
	}
	a.log.Info("job ended", "job", r.Req.JobID, "state", r.State, "exit_code", r.ExitCode)
	a.startEpilog(j)
}

// finalState maps a wait status to Slurm's job state and ExitCode. A job
// whose kill sequence was started (time limit, cancel, requeue, ...) ends
// in that state whatever its exit status; otherwise exit 0 is COMPLETED and
// anything else (non-zero exit, death by signal) FAILED. ws -1 means the
// job never started (FAILED, 1:0, as a failed batch launch).
func finalState(termState string, ws int) (string, string) {
	code := "1:0"
	state := api.StateFailed
	if ws >= 0 {
		w := syscall.WaitStatus(ws)
		switch {
		case w.Exited():
			code = fmt.Sprintf("%d:0", w.ExitStatus())
			if w.ExitStatus() == 0 {
				state = api.StateCompleted
			}
		case w.Signaled():
			code = fmt.Sprintf("0:%d", int(w.Signal()))
		}
	} else if termState != "" {
		code = "0:0"
	}
	if termState != "" {
		state = termState
	}
	return state, code
}

// enforce applies the time limit and the SIGKILL step of a kill sequence.
// Time spent suspended extends the limit, as in Slurm.
func (a *Agent) enforce(j *job, now time.Time) {
	r := &j.rec
	limit := r.Req.TimeLimitSec
	if r.State == api.StateRunning && r.TermState == "" && limit > 0 {
		deadline := r.Start.Add(time.Duration(limit)*time.Second + r.Suspended)
		if !now.Before(deadline) {
			a.log.Info("job reached its time limit", "job", r.Req.JobID)
			a.beginKill(j, api.StateTimeout, r.KillWait, now)
			return
		}
	}
	if !r.TermSent.IsZero() && r.KillSent.IsZero() && now.Sub(r.TermSent) >= r.KillWait {
		a.signal(j, syscall.SIGKILL, false)
		if r.Cgroup != "" {
			cgroupKill(r.Cgroup)
		} else if len(r.CgroupV1) > 0 {
			cgroupKill(r.CgroupV1[0])
		}
		r.KillSent = now
		a.save(j)
	}
}

// beginKill starts Slurm's kill sequence: a suspended job is resumed, then
// the whole job gets SIGCONT and SIGTERM; SIGKILL follows after killWait.
func (a *Agent) beginKill(j *job, state string, killWait time.Duration, now time.Time) {
	r := &j.rec
	if r.State == api.StateSuspended {
		a.resume(j, now)
	}
	r.TermState, r.TermSent, r.KillWait = state, now, killWait
	a.signal(j, syscall.SIGCONT, false)
	a.signal(j, syscall.SIGTERM, false)
	if killWait <= 0 {
		a.signal(j, syscall.SIGKILL, false)
		r.KillSent = now
	}
	a.save(j)
}

// signal sends sig to the job's process group (or only its leader, the
// batch shell). Nothing is sent once the shim recorded the job's end: the
// group id could then belong to someone else.
func (a *Agent) signal(j *job, sig syscall.Signal, leaderOnly bool) error {
	r := &j.rec
	if r.PID <= 0 {
		return nil
	}
	if _, ended := a.exitOf(j, false); ended {
		return nil
	}
	a.log.Debug("signal", "job", r.Req.JobID, "sig", sig, "pid", r.PID)
	target := -r.PID
	if leaderOnly {
		if !sameProcess(r.PID, r.PIDTick) {
			return nil
		}
		target = r.PID
	}
	if err := syscall.Kill(target, sig); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}

// lookup returns a job that is still active; the caller holds a.mu.
func (a *Agent) lookupActive(id uint32) (*job, error) {
	j, ok := a.jobs[id]
	if !ok {
		return nil, fmt.Errorf("job %d: %w", id, ErrUnknownJob)
	}
	if api.AgentJobFinal(j.rec.State) {
		return nil, fmt.Errorf("job %d has already finished (%s): %w", id, j.rec.State, ErrConflict)
	}
	return j, nil
}

// Signal sends a signal to a job (scancel --signal): to its steps only by
// default, as Slurm signals "all steps but not the batch step" (oracle:
// scancel -s USR1 of a batch job running `sleep 60` left it running);
// --batch signals only the batch shell, --full its process group and the
// steps.
func (a *Agent) Signal(id uint32, req api.SignalRequest) (api.JobStatus, error) {
	if req.Signal <= 0 || req.Signal > 64 {
		return api.JobStatus{}, fmt.Errorf("signal %d: %w", req.Signal, ErrBadRequest)
	}
	sig := syscall.Signal(req.Signal)
	if !req.BatchOnly || req.Full {
		a.signalSteps(id, sig)
	}
	if !req.BatchOnly && !req.Full {
		return api.JobStatus{JobID: id}, nil // a node may hold steps only
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	j, err := a.lookupActive(id)
	if err != nil {
		return api.JobStatus{}, err
	}
	if err := a.signal(j, sig, !req.Full); err != nil {
		return api.JobStatus{}, fmt.Errorf("job %d: kill: %w", id, err)
	}
	return j.rec.status(time.Now()), nil
}

// signalSteps sends sig to the tasks of job id's steps on this node.
func (a *Agent) signalSteps(id uint32, sig syscall.Signal) {
	t := a.steps()
	t.mu.Lock()
	var runs []*stepRun
	for k, r := range t.steps {
		if k.job == id {
			runs = append(runs, r)
		}
	}
	t.mu.Unlock()
	for _, r := range runs {
		r.signal(sig)
	}
}

// Suspend stops a running job: SIGTSTP then SIGSTOP to its process group
// (Slurm's order, letting programs that catch SIGTSTP prepare), and the
// cgroup freezer when the job has a cgroup. The time limit clock stops.
func (a *Agent) Suspend(id uint32) (api.JobStatus, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	j, err := a.lookupActive(id)
	if err != nil {
		return api.JobStatus{}, err
	}
	r := &j.rec
	if r.State != api.StateRunning || r.TermState != "" {
		return api.JobStatus{}, fmt.Errorf("job %d is %s, not running: %w", id, a.describe(r), ErrConflict)
	}
	now := time.Now()
	a.signal(j, syscall.SIGTSTP, false)
	a.signal(j, syscall.SIGSTOP, false)
	// Let the stop land before answering (signals are delivered
	// asynchronously), and before freezing: a task frozen with the signal
	// still pending would show as sleeping instead of stopped.
	waitStopped(r.PID, time.Second)
	if r.Cgroup != "" {
		if err := cgroupFreeze(r.Cgroup, true); err != nil {
			a.log.Warn("cgroup freeze failed, relying on SIGSTOP", "job", id, "err", err)
		}
	}
	r.State, r.SuspendedAt = api.StateSuspended, now
	a.save(j)
	return r.status(now), nil
}

// Resume continues a suspended job (cgroup thaw, SIGCONT) and extends its
// time limit by the time it was suspended.
func (a *Agent) Resume(id uint32) (api.JobStatus, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	j, err := a.lookupActive(id)
	if err != nil {
		return api.JobStatus{}, err
	}
	if j.rec.State != api.StateSuspended {
		return api.JobStatus{}, fmt.Errorf("job %d is %s, not suspended: %w", id, a.describe(&j.rec), ErrConflict)
	}
	now := time.Now()
	a.resume(j, now)
	a.save(j)
	return j.rec.status(now), nil
}

func (a *Agent) resume(j *job, now time.Time) {
	r := &j.rec
	if r.Cgroup != "" {
		cgroupFreeze(r.Cgroup, false)
	}
	a.signal(j, syscall.SIGCONT, false)
	r.Suspended += now.Sub(r.SuspendedAt)
	r.SuspendedAt, r.State = time.Time{}, api.StateRunning
}

func (a *Agent) describe(r *jobRecord) string {
	if r.TermState != "" {
		return "being terminated"
	}
	return r.State
}

// Terminate starts a job's kill sequence; the job ends in req.State
// (CANCELLED by default). Terminating a finished job returns its status. A
// request for an earlier run than the one here (req.RestartCount) is for a
// job no longer here: ErrUnknownJob.
func (a *Agent) Terminate(id uint32, req api.TerminateRequest) (api.JobStatus, error) {
	state := req.State
	if state == "" {
		state = api.StateCancelled
	}
	if !api.AgentJobFinal(state) {
		return api.JobStatus{}, fmt.Errorf("terminate into state %q: %w", state, ErrBadRequest)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	j, ok := a.jobs[id]
	if !ok {
		return api.JobStatus{}, fmt.Errorf("job %d: %w", id, ErrUnknownJob)
	}
	now := time.Now()
	r := &j.rec
	if req.RestartCount != nil && r.Req.RestartCount > *req.RestartCount {
		return api.JobStatus{}, fmt.Errorf("job %d run %d: run %d is here: %w", id, *req.RestartCount, r.Req.RestartCount, ErrUnknownJob)
	}
	if api.AgentJobFinal(r.State) || r.TermState != "" {
		return r.status(now), nil
	}
	kw := r.KillWait
	if req.KillWaitSec > 0 {
		kw = time.Duration(req.KillWaitSec) * time.Second
	}
	a.beginKill(j, state, kw, now)
	return r.status(now), nil
}

// SetTimeLimit changes a running job's time limit (scontrol update job
// TimeLimit=, raised or lowered); the next check enforces it, so a limit
// lowered below the time already used ends the job at once, TIMEOUT, as
// in Slurm. A job already in its kill sequence keeps it.
func (a *Agent) SetTimeLimit(id uint32, req api.TimeLimitRequest) (api.JobStatus, error) {
	if req.TimeLimitSec == 0 || req.TimeLimitSec < api.TimeInfinite {
		return api.JobStatus{}, fmt.Errorf("time limit %d: %w", req.TimeLimitSec, ErrBadRequest)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	j, err := a.lookupActive(id)
	if err != nil {
		return api.JobStatus{}, err
	}
	if j.rec.Req.TimeLimitSec != req.TimeLimitSec {
		a.log.Info("time limit changed", "job", id, "from_s", j.rec.Req.TimeLimitSec, "to_s", req.TimeLimitSec)
		j.rec.Req.TimeLimitSec = req.TimeLimitSec
		a.save(j)
		a.nudge()
	}
	return j.rec.status(time.Now()), nil
}

// waitStopped waits until every process of group pgid is stopped (T/t).
func waitStopped(pgid int, within time.Duration) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		stopped := true
		for _, st := range groupStates(pgid) {
			if st != 'T' && st != 't' && st != 'Z' {
				stopped = false
			}
		}
		if stopped {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func sortStatuses(s []api.JobStatus) {
	sort.Slice(s, func(i, k int) bool { return s[i].JobID < s[k].JobID })
}
