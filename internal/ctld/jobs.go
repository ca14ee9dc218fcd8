package ctld

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/duration"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// apiErr is an error with an HTTP status (and optional reason name).
type apiErr struct {
	status int
	msg    string
	reason string
	// job and detail: see api.Error.
	job    string
	detail string
	jobID  uint32 // the job a refused submission left FAILED
	plain  bool   // Slurm's clients find this error themselves: message alone
}

func (e *apiErr) Error() string { return e.msg }

func denied() error { return &apiErr{status: http.StatusForbidden, msg: sched.ErrAccessDenied.Error()} }

// isAdmin reports whether w may act on every job: root, the SlurmUser, or
// an accounting Operator/Administrator.
func (ls *loopState) isAdmin(w Who) bool {
	if w.UID == 0 || ls.c.slurmUID >= 0 && int(w.UID) == ls.c.slurmUID {
		return true
	}
	if p := ls.st.Policy; p != nil {
		return p.Users[w.User].Admin
	}
	return false
}

// mayModify reports whether w may change j: its owner or an admin.
func (ls *loopState) mayModify(w Who, j *sched.Job) bool {
	return j.UID == w.UID || ls.isAdmin(w)
}

// submit queues a job for w.
func (ls *loopState) submit(w Who, req api.SubmitRequest) (api.SubmitResponse, error) {
	now := ls.c.now()
	spec := req.Spec
	if err := ls.checkScriptSize(&spec); err != nil {
		return api.SubmitResponse{}, err
	}
	if err := checkSpecLimits(&spec); err != nil { // reqlimits.go
		return api.SubmitResponse{}, err
	}
	if res, ok := ls.keyedJob(w, &spec); ok { // a retry after a lost answer (submitkey.go)
		return res, nil
	}
	who := w
	if spec.UID != nil && *spec.UID != w.UID || spec.User != "" && spec.User != w.User && spec.UID == nil {
		if w.UID != 0 {
			return api.SubmitResponse{}, &apiErr{status: http.StatusForbidden,
				msg: sched.ErrAccessDenied.Error() + " (only root may submit jobs as another user)"}
		}
		var err error
		if spec.UID != nil {
			who = whoForUID(*spec.UID, w.GID, w.Via)
			if spec.GID == nil {
				if u, e := whoForName(who.User, w.Via); e == nil {
					who.GID, who.Group = u.GID, u.Group
				}
			}
		} else if who, err = whoForName(spec.User, w.Via); err != nil {
			return api.SubmitResponse{}, &apiErr{status: http.StatusBadRequest, msg: err.Error()}
		}
	}
	if spec.GID != nil && *spec.GID != who.GID {
		if w.UID != 0 {
			return api.SubmitResponse{}, denied()
		}
		who = whoForUID(who.UID, *spec.GID, w.Via)
	}
	spec.User = who.User
	uid, gid := who.UID, who.GID
	spec.UID, spec.GID = &uid, &gid
	if spec.Name == "" {
		spec.Name = "sbatch"
	}
	ls.internSpec(&spec)
	who.User, who.Group = ls.intern.str(who.User), ls.intern.str(who.Group)
	r, err := sched.RequestFromSpec(&spec, now, time.Local, &ls.cfg)
	if err != nil {
		return api.SubmitResponse{}, submitErr(err)
	}
	sub := sched.Submitter{User: who.User, UID: who.UID, GID: who.GID, Group: who.Group, Admin: ls.isAdmin(w)}
	if req.TestOnly {
		return ls.testOnly(r, sub, now)
	}
	next := ls.st.NextJobID
	j, err := ls.st.Submit(r, sub, now)
	if j == nil {
		ls.metaDirty = ls.metaDirty || ls.st.NextJobID != next // an id used up (bad dependency, reservation)
		return api.SubmitResponse{}, submitErr(err)
	}
	ls.specs[j.ID] = &spec
	ls.setPriority(j, now)
	ls.touch(j, "submit", j.User)
	if err != nil {
		// Never runnable: slurmctld keeps the job FAILED (BadConstraints)
		// in the queue and in accounting, and still refuses the submission.
		ls.touch(j, "end", j.State.String())
		ae := submitErr(err)
		ae.jobID = uint32(j.ID)
		return api.SubmitResponse{}, ae
	}
	ls.st.SetSubmitReason(j, now)
	ls.allocSubmitted(j, now)
	ls.rememberKey(spec.SubmitKey, j.ID, now)
	if req.Interactive {
		ls.wantSched = true
	} else {
		ls.wantSubmitPass()
	}
	return api.SubmitResponse{JobID: uint32(j.ID), Cluster: ls.st.Cluster.Name}, nil
}

// testOnly answers sbatch --test-only: the job is queued in the state,
// one scheduling cycle is computed (not applied) to find when and where it
// would start, and the job is taken out again; no job is stored, but the
// job id stays used, as in slurmctld 24.11.
func (ls *loopState) testOnly(r sched.Request, sub sched.Submitter, now time.Time) (api.SubmitResponse, error) {
	next := ls.st.NextJobID
	j, err := ls.st.Submit(r, sub, now)
	ls.metaDirty = ls.metaDirty || ls.st.NextJobID != next
	if err != nil {
		if j != nil {
			ls.st.Purge(func(o *sched.Job) bool { return o.ID == j.ID })
		}
		return api.SubmitResponse{}, submitErr(err)
	}
	ls.setPriority(j, now)
	plan := sched.Schedule(ls.st, now, ls.cfg)
	res := api.SubmitResponse{JobID: uint32(j.ID), TestPartition: ls.partitionName(j)}
	for _, s := range plan.Starts {
		if s.Job == j.ID {
			res.TestStart, res.TestNodes = now, compressNodes(ls.st.Cluster, s.Alloc.Nodes)
			res.TestPartition = ls.st.Cluster.Partitions[s.Partition].Name
			res.TestProcs = int(allocVector(ls.st.Cluster, &s.Alloc)["cpu"])
		}
	}
	for _, p := range plan.Pending {
		if p.Job == j.ID {
			res.TestStart, res.TestNodes = p.ExpectedStart, compressNodes(ls.st.Cluster, p.PlannedNodes)
			res.TestProcs = int(ls.reqVector(j)["cpu"])
		}
	}
	_ = ls.st.Cancel(j.ID, now)
	ls.st.Purge(func(o *sched.Job) bool { return o.ID == j.ID })
	return res, nil
}

// submitErr turns a core rejection into an API error with Slurm's
// message and the line sbatch prints before it: the limit's reason name,
// or slurmctld's explanation of the rejection.
// errScriptTooLong is slurmctld's answer to a batch script over
// SchedulerParameters=max_script_size (Slurm 24.11, oracle: ESLURM_PATHNAME_TOO_LONG's
// text, exit 1, no job id used).
const errScriptTooLong = "Pathname of a file, directory or other parameter too long"

// checkScriptSize refuses a script larger than max_script_size bytes
// (default 4 MiB) in the controller, so the REST and API paths are held
// to it as well as sbatch. A limit of 0 (a configuration not read from
// slurm.conf) checks nothing.
func (ls *loopState) checkScriptSize(spec *api.JobSpec) error {
	limit := ls.c.cfg.SchedulerParameters.MaxScriptSize
	if limit > 0 && int64(len(spec.Script)) > limit {
		return &apiErr{status: http.StatusBadRequest, msg: errScriptTooLong}
	}
	return nil
}

func submitErr(err error) *apiErr {
	var se *sched.SubmitError
	if errors.As(err, &se) {
		line := string(se.Reason)
		if line == "" {
			line = se.Detail
		}
		return &apiErr{status: http.StatusBadRequest, msg: se.Err.Error(), reason: line, plain: se.ClientSide}
	}
	msg := err.Error()
	for _, s := range []error{sched.ErrInvalidGres, sched.ErrInvalidTimeLimit, sched.ErrDependency,
		sched.ErrInvalidNodeName, sched.ErrInvalidArray, sched.ErrInvalidLicense} {
		if errors.Is(err, s) {
			msg = s.Error()
		}
	}
	return &apiErr{status: http.StatusBadRequest, msg: msg}
}

// ---- job selection ----

// jobsByID resolves a job id string ("12", "12_3", "12_[1-3]") to job
// records; an array's own id names every record of the array.
func (ls *loopState) jobsByID(spec string) ([]*sched.Job, []int32, error) {
	base, task, hasTask := strings.Cut(spec, "_")
	id, err := strconv.ParseUint(base, 10, 32)
	if err != nil || id == 0 {
		return nil, nil, &apiErr{status: http.StatusBadRequest, msg: "Invalid job id " + spec}
	}
	var out []*sched.Job
	if !hasTask {
		// A task's own job id names that task alone (oracle: scontrol show
		// job 4 of 3_0 shows JobId=4 ArrayJobId=3 ArrayTaskId=0).
		if j := ls.st.Job(sched.JobID(id)); j != nil && (j.Array == nil || j.Array.JobID != sched.JobID(id)) {
			return []*sched.Job{j}, nil, nil
		}
		for _, j := range ls.st.Jobs() {
			if j.Array != nil && j.Array.JobID == sched.JobID(id) {
				out = append(out, j)
			}
		}
		if len(out) == 0 {
			return nil, nil, notFound()
		}
		return out, nil, nil
	}
	task = strings.Trim(task, "[]")
	tasks, _, _, err := sched.ParseArray(task, max(ls.cfg.MaxArraySize, 1))
	if err != nil {
		return nil, nil, &apiErr{status: http.StatusBadRequest, msg: "Invalid job id " + spec}
	}
	var pendingTasks []int32
	for _, j := range ls.st.Jobs() {
		if j.Array == nil || j.Array.JobID != sched.JobID(id) {
			continue
		}
		if j.Array.TaskID >= 0 && tasks.Has(int(j.Array.TaskID)) {
			out = append(out, j)
		}
		if j.Array.TaskID < 0 {
			tasks.ForEach(func(t int) bool {
				if j.Array.Tasks.Has(t) {
					pendingTasks = append(pendingTasks, int32(t))
				}
				return true
			})
			if len(pendingTasks) > 0 {
				out = append(out, j)
			}
		}
	}
	if len(out) == 0 {
		return nil, nil, notFound()
	}
	return out, pendingTasks, nil
}

func notFound() error {
	return &apiErr{status: http.StatusNotFound, msg: sched.ErrInvalidJobID.Error()}
}

// matches reports whether j passes the filter.
func (ls *loopState) matches(j *sched.Job, f api.JobFilter) bool {
	if f.User != "" && f.User != j.User && f.User != strconv.FormatUint(uint64(j.UID), 10) {
		return false
	}
	if f.Partition != "" && !listHas(f.Partition, ls.partitionName(j)) {
		return false
	}
	if f.Name != "" && f.Name != j.Req.Name {
		return false
	}
	if f.Account != "" && !listHas(f.Account, j.Account) {
		return false
	}
	if f.QOS != "" && !listHas(f.QOS, j.QOS) {
		return false
	}
	if f.Reservation != "" && !listHas(j.Req.Reservation, f.Reservation) {
		return false
	}
	if len(f.States) > 0 {
		ok := false
		for _, s := range f.States {
			if strings.EqualFold(s, j.State.String()) || strings.EqualFold(s, j.State.Short()) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	if f.NodeList != "" {
		want, err := hostlist.Expand(f.NodeList)
		if err != nil {
			return false
		}
		ok := false
		for _, n := range j.Alloc.Nodes {
			for _, w := range want {
				if ls.st.Cluster.Nodes[n].Name == w {
					ok = true
				}
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func listHas(list, v string) bool {
	for _, s := range strings.Split(list, ",") {
		if s == v {
			return true
		}
		for _, p := range strings.Split(v, ",") {
			if s == p {
				return true
			}
		}
	}
	return false
}

// ---- job control ----

// control applies req for w. Per-job failures are reported per job, the
// way scancel and scontrol print one error line per job.
func (ls *loopState) control(w Who, req api.JobControlRequest) (api.JobControlResponse, error) {
	var res api.JobControlResponse
	admin := ls.isAdmin(w)
	if (req.Op == api.OpSuspend || req.Op == api.OpResume) && !admin {
		return res, denied()
	}
	if req.Op == api.OpTop {
		return ls.top(w, admin, req), nil
	}
	type target struct {
		name  string
		j     *sched.Job
		tasks []int32
	}
	var targets []target
	if len(req.Jobs) == 0 {
		for _, j := range ls.st.Jobs() {
			if j.State.Finished() || !ls.matches(j, req.Filter) {
				continue
			}
			if req.Filter.User == "" && !admin && j.UID != w.UID {
				continue // scancel -p/-t without -u: a user's own jobs
			}
			targets = append(targets, target{name: j.JobIDString(), j: j})
		}
	}
	for _, spec := range req.Jobs {
		js, tasks, err := ls.jobsByID(spec)
		if err != nil {
			res.Results = append(res.Results, api.JobResult{Job: spec, Error: err.Error()})
			continue
		}
		for _, j := range js {
			if !ls.matches(j, req.Filter) {
				continue
			}
			t := target{name: j.JobIDString(), j: j}
			if j.Array != nil && j.Array.TaskID < 0 && strings.Contains(spec, "_") {
				t.tasks = tasks
				t.name = spec
			}
			targets = append(targets, t)
		}
	}
	for _, t := range targets {
		err := ls.controlOne(w, admin, req, t.j, t.tasks)
		r := api.JobResult{Job: t.name}
		if err != nil {
			r.Error = err.Error()
		}
		res.Results = append(res.Results, r)
	}
	return res, nil
}

// controlOne applies one operation to one job record.
func (ls *loopState) controlOne(w Who, admin bool, req api.JobControlRequest, j *sched.Job, tasks []int32) error {
	if req.Op == api.OpNotify {
		return ls.notifyCheck(w, j) // admin.go
	}
	if !ls.mayModify(w, j) {
		if req.Op == api.OpHold || req.Op == api.OpUHold || req.Op == api.OpRelease {
			return notOwner()
		}
		return denied()
	}
	now := ls.c.now()
	st := ls.st
	switch req.Op {
	case api.OpCancel:
		if req.Signal != 0 {
			return ls.signal(j, req)
		}
		if len(tasks) > 0 && j.Array.Tasks.Count() > len(tasks) {
			arrayID := j.Array.JobID
			for _, t := range tasks {
				if err := st.CancelArrayTask(arrayID, t, now); err != nil {
					return errMsg(err)
				}
				ls.cancelledBy(arrayID, t, w.UID)
			}
			ls.touchArray(arrayID, "cancel-tasks", fmt.Sprint(tasks))
			ls.wantSched = true
			return nil
		}
		if j.State.Finished() {
			return fmt.Errorf("%s", sched.ErrAlreadyDone)
		}
		nodes := append([]int32(nil), j.Alloc.Nodes...)
		active := isActive(j)
		ls.prio.charge(ls, j, now)
		if err := st.Cancel(j.ID, now); err != nil {
			return errMsg(err)
		}
		ls.requid[j.ID] = w.UID
		ls.touch(j, "cancel", w.User)
		if active {
			ls.terminateOn(j, nodes, j.RestartCount, api.StateCancelled)
		}
		ls.wantSched = true
	case api.OpSignal:
		return ls.signal(j, req)
	case api.OpComplete, api.OpKeepalive:
		return ls.allocationOp(j, req, now) // allocation.go
	case api.OpHold, api.OpUHold:
		if err := st.Hold(j.ID, admin && req.Op == api.OpHold); err != nil {
			return errMsg(err)
		}
		ls.setPriority(j, now)
		ls.touch(j, req.Op, w.User)
	case api.OpRelease:
		if err := st.Release(j.ID, admin); err != nil {
			return errMsg(err)
		}
		ls.setPriority(j, now)
		ls.touch(j, "release", w.User)
		ls.wantTickPass() // "PD None" until then, as in Slurm
	case api.OpRequeue, api.OpRequeueHold:
		return ls.requeue(j, req.Op == api.OpRequeueHold, now)
	case api.OpSuspend:
		if err := st.Suspend(j.ID, now); err != nil {
			return errMsg(err)
		}
		ls.touch(j, "suspend", w.User)
		id := uint32(j.ID)
		ls.agentCall(j, func(ctx context.Context, a *api.AgentClient) error { _, err := a.Suspend(ctx, id); return err })
		ls.wantSched = true
	case api.OpResume:
		if err := st.Resume(j.ID, now); err != nil {
			return errMsg(err)
		}
		ls.touch(j, "resume", w.User)
		ls.agentCall(j, resumeCall(uint32(j.ID)))
	default:
		return &apiErr{status: http.StatusBadRequest, msg: "unknown operation " + req.Op}
	}
	return nil
}

// top is scontrol top (sched.Top): each listed job must exist, be the
// caller's own (unless an operator; users need
// SchedulerParameters=enable_user_top) and pend; the valid ones move up
// their user's queue by nice values.
func (ls *loopState) top(w Who, admin bool, req api.JobControlRequest) api.JobControlResponse {
	var res api.JobControlResponse
	var ids []sched.JobID
	userTop := ls.c.cfg.SchedulerParameters.EnableUserTop
	for _, spec := range req.Jobs {
		r := api.JobResult{Job: spec}
		js, _, err := ls.jobsByID(spec)
		switch {
		case err != nil || len(js) == 0:
			r.Error = sched.ErrInvalidJobID.Error()
		case !admin && (!userTop || js[0].UID != w.UID):
			r.Error = sched.ErrAccessDenied.Error()
		case js[0].State.Base() != sched.JobPending:
			r.Error = sched.ErrNotPending.Error()
		default:
			ids = append(ids, js[0].ID)
		}
		res.Results = append(res.Results, r)
	}
	for _, j := range ls.st.Top(ids) {
		ls.touch(j, "top", w.User) // its priority set now, recomputed at the next pass
	}
	ls.wantSched = true
	return res
}

// cancelledBy records uid as the canceller of task t of array arrayID.
func (ls *loopState) cancelledBy(arrayID sched.JobID, t int32, uid uint32) {
	for _, o := range ls.st.Jobs() {
		if o.Array != nil && o.Array.JobID == arrayID && o.Array.TaskID == t && o.State.Base() == sched.JobCancelled {
			ls.requid[o.ID] = uid
		}
	}
}

// touchArray marks every record of an array changed (a task split off
// gets a record of its own).
func (ls *loopState) touchArray(arrayID sched.JobID, event, detail string) {
	for _, o := range ls.st.Jobs() {
		if o.Array != nil && o.Array.JobID == arrayID {
			if ls.specs[o.ID] == nil {
				ls.specs[o.ID] = ls.specs[arrayID]
			}
			ls.touch(o, event, detail)
		}
	}
}

// requeue puts a running or finished batch job back in the queue.
func (ls *loopState) requeue(j *sched.Job, hold bool, now time.Time) error {
	if !j.Req.Requeue && isActive(j) {
		// Slurm refuses scontrol requeue of a --no-requeue job.
		return fmt.Errorf("%s", sched.ErrDisabled)
	}
	nodes, run := append([]int32(nil), j.Alloc.Nodes...), j.RestartCount
	active := isActive(j)
	if active {
		ls.prio.charge(ls, j, now)
	}
	if err := ls.st.Requeue(j.ID, hold, now); err != nil {
		return errMsg(err)
	}
	ls.setPriority(j, now)
	ls.touch(j, "requeue", "")
	if active {
		ls.terminateOn(j, nodes, run, api.StateRequeued)
	}
	ls.wantSched = true
	return nil
}

// signal sends a signal to a running job's processes.
func (ls *loopState) signal(j *sched.Job, req api.JobControlRequest) error {
	sig := req.Signal
	if j.State.Base() == sched.JobPending {
		// ESLURM_TRANSITION_STATE_NO_UPDATE (oracle: scancel -s USR1 of
		// a held job).
		return errors.New("Job can not be altered now, try again later")
	}
	if !isActive(j) {
		return fmt.Errorf("%s", sched.ErrTransitionState)
	}
	if sig <= 0 || sig > 64 {
		return &apiErr{status: http.StatusBadRequest, msg: "Invalid signal " + strconv.Itoa(sig)}
	}
	// The batch host gets the request as asked; the job's other nodes,
	// which hold only steps, a steps-only one (unless --batch).
	id := uint32(j.ID)
	host := batchHost(j.Alloc.Nodes)
	for _, n := range j.Alloc.Nodes {
		r := api.SignalRequest{Signal: sig, BatchOnly: req.BatchOnly, Full: req.Full}
		if n != host {
			if req.BatchOnly && !req.Full {
				continue
			}
			r = api.SignalRequest{Signal: sig}
		}
		ls.agentCallOn(n, j.ID, func(ctx context.Context, a *api.AgentClient) error {
			_, err := a.Signal(ctx, id, r)
			return err
		})
	}
	ls.touch(j, "signal", syscall.Signal(sig).String())
	return nil
}

// errMsg strips the "job N: " prefix the core adds, keeping Slurm's text.
func errMsg(err error) error {
	for _, s := range []error{sched.ErrInvalidJobID, sched.ErrAlreadyDone, sched.ErrJobPending, sched.ErrNotPending, sched.ErrJobFinished,
		sched.ErrTransitionState, sched.ErrAccessDenied, sched.ErrDisabled, sched.ErrInvalidNodeName, sched.ErrJobHeld} {
		if errors.Is(err, s) {
			return errors.New(s.Error())
		}
	}
	return err
}

// ---- scontrol update job ----

// updateJob applies scontrol update JobId=... KEY=VALUE through the
// core's Update (Slurm's update_job rules: running jobs only change their
// time limit, raising it needs an operator, the result is validated as at
// submission). SiteFactor is the controller's (priority input). A bad
// KEY=VALUE is refused as scontrol itself does; a refusal by the job
// names it (api.Error.Job), as slurmctld's answer does.
func (ls *loopState) updateJob(w Who, req api.JobUpdateRequest) error {
	js, _, err := ls.jobsByID(req.Job)
	if err != nil {
		return &apiErr{status: http.StatusNotFound, msg: sched.ErrInvalidJobID.Error(), job: req.Job}
	}
	admin := ls.isAdmin(w)
	var u sched.JobUpdate
	site := (*int32)(nil)
	var throttle *int32
	var texts specTexts
	for k, v := range req.Set {
		if strings.EqualFold(k, "ArrayTaskThrottle") {
			if throttle, err = parseThrottle(v); err != nil {
				return err
			}
			continue
		}
		if texts.parse(k, v) {
			continue
		}
		if err := parseUpdate(&u, &site, k, v, admin); err != nil {
			return err
		}
	}
	if throttle != nil {
		err = ls.updateThrottle(w, req.Job, js, *throttle)
	}
	if err == nil && (throttle == nil || len(req.Set) > 1) {
		err = ls.applyUpdate(w, js, u, site, fmt.Sprint(req.Set))
	}
	if err == nil {
		for _, j := range js {
			texts.apply(ls, j)
		}
	}
	var ae *apiErr
	if errors.As(err, &ae) && ae.job == "" {
		ae.job = updateLabel(req.Job, js)
	}
	return err
}

// applyUpdate changes every job of js, as w may.
func (ls *loopState) applyUpdate(w Who, js []*sched.Job, u sched.JobUpdate, site *int32, detail string) error {
	admin := ls.isAdmin(w)
	now := ls.c.now()
	for _, j := range js {
		if !ls.mayModify(w, j) {
			return notOwner()
		}
		// Only operators raise the limit of a running job; a user may
		// raise a pending job's (Slurm 24.11; the partition's MaxTime
		// still applies through the core's revalidation).
		if !admin && u.TimeLimit != nil && j.State != sched.JobPending && raisesLimit(j.TimeLimit, *u.TimeLimit) {
			return denied()
		}
		if err := ls.st.Update(j.ID, u, admin, now); err != nil {
			return updateErr(err)
		}
		if site != nil {
			ls.site[j.ID] = *site
		}
		if u.Name != nil {
			ls.editSpec(j, func(s *api.JobSpec) { s.Name = *u.Name })
		}
		ls.setPriority(j, now)
		ls.touch(j, "update", detail)
	}
	ls.wantSched = true
	return nil
}

// specTexts are the free texts scontrol update job sets on the job's
// submission (Comment=, Extra=), which the scheduler never reads.
type specTexts struct{ comment, extra *string }

// parse takes KEY=VALUE when it is one of the texts.
func (t *specTexts) parse(k, v string) bool {
	switch strings.ToLower(k) {
	case "comment":
		t.comment = &v
	case "extra":
		t.extra = &v
	default:
		return false
	}
	return true
}

// apply stores the texts on j's submission (ownership was checked by
// applyUpdate).
func (t specTexts) apply(ls *loopState, j *sched.Job) {
	if t.comment == nil && t.extra == nil {
		return
	}
	ls.editSpec(j, func(s *api.JobSpec) {
		if t.comment != nil {
			s.Comment = *t.comment
		}
		if t.extra != nil {
			e := *t.extra
			s.Extra = &e
		}
	})
	ls.touch(j, "update", "texts")
}

// editSpec changes a copy of j's submission (listings may hold the old one).
func (ls *loopState) editSpec(j *sched.Job, f func(*api.JobSpec)) {
	if ls.specs[j.ID] == nil {
		return
	}
	s := *ls.specs[j.ID]
	f(&s)
	ls.specs[j.ID] = &s
}

// notOwner is slurmctld's answer to an update of another user's job.
func notOwner() error {
	return &apiErr{status: http.StatusForbidden, msg: "Invalid user id"}
}

// updateLabel names the job a refusal of scontrol update is about, as
// Slurm's answer does: the job id, or for an array the array id and the
// tasks asked for (every task of the array for its plain id).
func updateLabel(spec string, js []*sched.Job) string {
	if js[0].Array == nil {
		return strconv.FormatUint(uint64(js[0].ID), 10)
	}
	if base, task, ok := strings.Cut(spec, "_"); ok {
		return base + "_" + strings.Trim(task, "[]")
	}
	tasks := sched.ArrayTaskSet(js)
	return strconv.FormatUint(uint64(js[0].Array.JobID), 10) + "_" + sched.FormatArrayTasks(tasks, 0)
}

// parseThrottle reads ArrayTaskThrottle's value as scontrol does: a
// negative number is refused, anything else that is not a number reads
// as 0 (no limit).
func parseThrottle(v string) (*int32, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err == nil && n < 0 {
		return nil, &apiErr{status: http.StatusBadRequest, msg: "Invalid ArrayTaskThrottle value"}
	}
	n32 := int32(max(n, 0))
	return &n32, nil
}

// updateThrottle sets the task throttle of the array spec names: only
// its array job id (not one task, not a plain job), by its owner or an
// operator; the scheduler then starts at most n tasks at once.
func (ls *loopState) updateThrottle(w Who, spec string, js []*sched.Job, n int32) error {
	if strings.Contains(spec, "_") || js[0].Array == nil {
		return &apiErr{status: http.StatusBadRequest, msg: sched.ErrNotSupported.Error(),
			detail: "Update of ArrayTaskThrottle is only allowed on ArrayJobId"}
	}
	for _, j := range js {
		if !ls.mayModify(w, j) {
			return notOwner()
		}
	}
	if err := ls.st.SetArrayThrottle(js[0].Array.JobID, n); err != nil {
		return updateErr(err)
	}
	ls.touchArray(js[0].Array.JobID, "update", fmt.Sprintf("ArrayTaskThrottle=%d", n))
	ls.wantSched = true
	return nil
}

func raisesLimit(cur, want time.Duration) bool {
	if cur == sched.Infinite || cur <= 0 {
		return false
	}
	return want == sched.Infinite || want > cur
}

func badValue(k, v string) error {
	return &apiErr{status: http.StatusBadRequest, msg: fmt.Sprintf("Invalid %s value: %s", k, v)}
}

// updateErr maps the core's refusals to API errors.
func updateErr(err error) error {
	switch {
	case errors.Is(err, sched.ErrAccessDenied):
		return denied()
	case errors.Is(err, sched.ErrInvalidJobID):
		return notFound()
	case errors.Is(err, sched.ErrNotPending), errors.Is(err, sched.ErrTransitionState):
		return &apiErr{status: http.StatusConflict, msg: errMsg(err).Error()}
	}
	var se *sched.SubmitError
	if errors.As(err, &se) {
		return &apiErr{status: http.StatusBadRequest, msg: se.Err.Error(), reason: string(se.Reason)}
	}
	return &apiErr{status: http.StatusBadRequest, msg: errMsg(err).Error()}
}

// parseUpdate reads one KEY=VALUE of scontrol update job.
func parseUpdate(u *sched.JobUpdate, site **int32, origKey, v string, admin bool) error {
	switch key := strings.ToLower(origKey); key {
	case "partition":
		u.Partitions = strings.Split(v, ",")
	case "timelimit":
		d, err := duration.Parse(v)
		if err != nil { // scontrol names no value here, unlike Priority's
			return &apiErr{status: http.StatusBadRequest, msg: "Invalid TimeLimit value"}
		}
		u.TimeLimit = &d
	case "qos":
		u.QOS = &v
	case "account":
		u.Account = &v
	case "name", "jobname":
		u.Name = &v
	case "nice":
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < -2147483645 || n > 2147483645 {
			return badValue("Nice", v)
		}
		n32 := int32(n)
		u.Nice = &n32
	case "priority":
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return badValue("Priority", v)
		}
		p := uint32(n)
		u.Priority = &p
	case "sitefactor":
		if !admin {
			return denied()
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return badValue("SiteFactor", v)
		}
		n32 := int32(n)
		*site = &n32
	case "dependency":
		u.Dependency = &v
	case "features", "constraint":
		u.Constraint = &v
	case "numnodes", "minnodes":
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n <= 0 {
			return badValue("NumNodes", v)
		}
		n32 := int32(n)
		u.MinNodes = &n32
	case "requeue":
		b := v == "1" || strings.EqualFold(v, "yes")
		u.Requeue = &b
	default:
		return &apiErr{status: http.StatusBadRequest, msg: "Update of this parameter is not supported: " + origKey + "=" + v + "\nRequest aborted"}
	}
	return nil
}

// ---- scontrol update node ----

// updateNode applies scontrol update NodeName=... State=... Reason=...
func (ls *loopState) updateNode(w Who, req api.NodeUpdateRequest) error {
	if !ls.isAdmin(w) {
		// Slurm 24.11 refuses a non-admin's node update with
		// ESLURM_USER_ID_MISSING.
		return &apiErr{status: http.StatusForbidden, msg: "Invalid user id"}
	}
	names, err := hostlist.Expand(req.Nodes)
	if err != nil || len(names) == 0 {
		return &apiErr{status: http.StatusBadRequest, msg: sched.ErrInvalidNodeName.Error()}
	}
	state := strings.ToUpper(req.State)
	if (state == "DRAIN" || state == "DOWN" || state == "FAIL") && req.Reason == "" {
		return &apiErr{status: http.StatusBadRequest, msg: "You must specify a reason when DOWNING or DRAINING a node. Request denied"}
	}
	for _, name := range names {
		if ls.st.Cluster.NodeIndex(name) < 0 {
			return &apiErr{status: http.StatusNotFound, msg: sched.ErrInvalidNodeName.Error()} // unnamed, as Slurm
		}
	}
	now := ls.c.now()
	for _, name := range names {
		if err := ls.setNode(ls.st.Cluster.NodeIndex(name), state, req.Reason, w.User, now); err != nil {
			return err
		}
	}
	ls.wantSched = true
	return nil
}

func (ls *loopState) setNode(i int32, state, reason, user string, now time.Time) error {
	n := &ls.st.Cluster.Nodes[i]
	flags := n.State &^ 0xf
	up := sched.NodeIdle
	if !ls.nodes[i].registered {
		up = sched.NodeUnknown
	}
	switch state {
	case "DRAIN":
		n.State |= sched.NodeFlagDrain
		n.Reason, n.ReasonTime, n.ReasonUser = reason, now, user
	case "FAIL":
		n.State |= sched.NodeFlagFail
		n.Reason, n.ReasonTime, n.ReasonUser = reason, now, user
	case "DOWN":
		ls.nodeDown(i, reason, user, now)
	case "RESUME", "IDLE", "UNDRAIN":
		flags &^= sched.NodeFlagDrain | sched.NodeFlagFail
		base := n.State.Base()
		if state != "UNDRAIN" && (base == sched.NodeDown || base == sched.NodeUnknown) {
			base = up
		}
		if base == sched.NodeMixed || base == sched.NodeAllocated {
			base = sched.NodeIdle // refreshed from the allocation
		}
		_ = ls.st.SetNodeState(n.Name, base|flags, "", now)
		n.ReasonUser = ""
	case "":
		if reason != "" {
			n.Reason, n.ReasonTime, n.ReasonUser = reason, now, user
		}
	default:
		return &apiErr{status: http.StatusBadRequest, msg: "Invalid node state specified"}
	}
	ls.nodeDirty[i] = struct{}{}
	return nil
}
