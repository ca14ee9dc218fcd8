package noded

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Launch starts a job (slurmd's batch launch). Launching a job id that the
// agent already holds with the same or a newer restart count returns the
// existing status, so a retried launch never runs a job twice.
func (a *Agent) Launch(req api.LaunchRequest) (api.JobStatus, error) {
	if err := a.checkLaunch(&req); err != nil {
		return api.JobStatus{}, err
	}
	id := req.JobID
	a.mu.Lock()
	if j, ok := a.jobs[id]; ok {
		switch {
		case req.RestartCount <= j.rec.Req.RestartCount:
			st := j.rec.status(time.Now())
			a.mu.Unlock()
			return st, nil
		case !api.AgentJobFinal(j.rec.State):
			a.mu.Unlock()
			return api.JobStatus{}, fmt.Errorf("job %d is still %s here: %w", id, j.rec.State, ErrConflict)
		}
		// A requeued job's new run supersedes the finished record.
		a.drop(j)
		delete(a.jobs, id)
	}
	if r, ok := a.delivered[id]; ok && req.RestartCount <= r {
		// This run already ended here and the controller acknowledged it:
		// a relaunch that raced that end must not run the job twice.
		a.mu.Unlock()
		return api.JobStatus{}, fmt.Errorf("job %d run %d already ended here: %w", id, req.RestartCount, ErrConflict)
	}
	if a.launching[id] {
		a.mu.Unlock()
		return api.JobStatus{}, fmt.Errorf("job %d is being launched: %w", id, ErrConflict)
	}
	a.launching[id] = true
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.launching, id)
		a.mu.Unlock()
	}()

	j, spec, err := a.prepare(req)
	if err != nil {
		return api.JobStatus{}, err
	}
	failed := a.runProlog(j, &spec)
	if failed == nil {
		failed = a.start(j, spec)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.jobs[id] = j
	if e, ok := a.early[id]; ok {
		delete(a.early, id)
		if e.restart == req.RestartCount && failed == nil {
			failed = &e.ex
		}
	}
	if failed != nil {
		a.finish(j, *failed, time.Now())
		a.wakeReport()
	}
	return j.rec.status(time.Now()), nil
}

// launchParallel bounds the launches of one batch that run at once: the
// supervisor forks one at a time, the rest is file I/O worth overlapping.
const launchParallel = 4

// LaunchBatch launches several jobs (one scheduling pass's starts on this
// node) and returns one result per request, in order.
func (a *Agent) LaunchBatch(reqs []api.LaunchRequest) []api.LaunchResult {
	out := make([]api.LaunchResult, len(reqs))
	sem := make(chan struct{}, launchParallel)
	var wg sync.WaitGroup
	for i := range reqs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			st, err := a.Launch(reqs[i])
			out[i].Status = st
			if err != nil {
				out[i].Error, out[i].HTTPStatus = err.Error(), httpStatus(err)
			}
		}()
	}
	wg.Wait()
	return out
}

// checkLaunch validates a request and applies the identity rule: an agent
// not running as root can only run jobs of its own user.
func (a *Agent) checkLaunch(req *api.LaunchRequest) error {
	if req.JobID == 0 {
		return fmt.Errorf("job id 0: %w", ErrBadRequest)
	}
	if (req.Script == "") == (len(req.Argv) == 0) {
		return fmt.Errorf("job %d: exactly one of script and argv must be given: %w", req.JobID, ErrBadRequest)
	}
	if _, err := ParseExport(req.Export); err != nil {
		return fmt.Errorf("job %d: %v: %w", req.JobID, err, ErrBadRequest)
	}
	if a.euid != 0 && int(req.UID) != a.euid {
		return fmt.Errorf("job %d: user %s (uid %d) differs from the node agent's uid %d; an unprivileged node agent runs only its own user's jobs: %w",
			req.JobID, req.User, req.UID, a.euid, ErrForbidden)
	}
	return nil
}

// defaultOutput is sbatch's default output pattern.
func defaultOutput(req *api.LaunchRequest) string {
	if req.ArrayJobID != 0 {
		return "slurm-%A_%a.out"
	}
	return "slurm-%j.out"
}

func (a *Agent) outputPath(pattern string, req *api.LaunchRequest, workdir string) string {
	p := ExpandPattern(pattern, PatternFields{
		JobID: req.JobID, ArrayJobID: req.ArrayJobID, ArrayTaskID: req.ArrayTaskID,
		Name: req.Name, User: req.User, Node: a.shortHost(),
	})
	if !filepath.IsAbs(p) {
		p = filepath.Join(workdir, p)
	}
	return p
}

// shortHost is %N of an output pattern: the short host name of the machine
// the agent runs on, as slurmstepd uses (with several agents on one host,
// as `sluice up`, not the node's name; on a cluster they are the same).
func (a *Agent) shortHost() string {
	host, _, _ := strings.Cut(a.info.Hostname, ".")
	if host == "" {
		return a.cfg.Name
	}
	return host
}

// prepare writes the job's batch script to the spool and returns
// the job with what the supervisor must start; start writes the record.
func (a *Agent) prepare(req api.LaunchRequest) (*job, execSpec, error) {
	now := time.Now()
	start := req.StartTime
	if start.IsZero() {
		start = now
	}
	workdir := req.WorkDir
	if workdir == "" {
		workdir = req.SubmitDir
	}
	if workdir == "" {
		workdir = "/tmp"
	}
	outPat := req.StdOut
	if outPat == "" {
		outPat = defaultOutput(&req)
	}
	errPat := req.StdErr
	if errPat == "" {
		errPat = outPat
	}
	spec := execSpec{
		Dir: workdir, StdIn: os.DevNull, Umask: -1,
		StdOut: a.outputPath(outPat, &req, workdir), StdErr: a.outputPath(errPat, &req, workdir),
		Append: strings.EqualFold(req.OpenMode, "append"),
		Setuid: a.euid == 0, UID: req.UID, GID: req.GID, Groups: userGroups(req.UID),
	}
	if req.StdIn != "" {
		spec.StdIn = a.outputPath(req.StdIn, &req, workdir)
	}
	env, err := BuildJobEnv(&req, a.cfg.Name, start)
	if err != nil {
		return nil, spec, fmt.Errorf("job %d: %v: %w", req.JobID, err, ErrBadRequest)
	}
	spec.Env = env
	if m, err := strconv.ParseUint(envMap(env)["SLURM_UMASK"], 8, 32); err == nil {
		spec.Umask = int(m)
	}
	var script string
	if spec.Argv, script, err = a.writeScript(&req); err != nil {
		return nil, spec, err
	}
	kw := time.Duration(req.KillWaitSec) * time.Second
	if kw <= 0 {
		kw = DefaultKillWait
	}
	j := &job{script: script, rec: jobRecord{
		Req: req, State: api.StateRunning, Start: start, KillWait: kw,
		StdOut: spec.StdOut, StdErr: spec.StdErr,
	}}
	if a.cg != nil {
		if cg, err := a.cg.create(&req, a.info.Resources.RealMemoryMB, a.hiddenGPUs(req.GPUs)); err == nil {
			spec.Cgroup, j.rec.Cgroup = cg.V2, cg.V2
			spec.CgroupV1, j.rec.CgroupV1, j.rec.CPUIDs = cg.V1, cg.V1, cg.CPUs
		} else {
			a.log.Warn("job runs without a cgroup", "job", req.JobID, "err", err)
		}
	}
	return j, spec, nil
}

// writeScript stores the batch script in SPOOL/scripts (shared by the
// jobs running the same script as the same user, see scriptStore), owned
// by the job's user and readable only by them, and returns the argv and
// the file. The script is executed itself, so the kernel runs its #!
// interpreter as slurmstepd does; a script without one runs under /bin/sh.
func (a *Agent) writeScript(req *api.LaunchRequest) ([]string, string, error) {
	if len(req.Argv) > 0 {
		return req.Argv, "", nil
	}
	path, err := a.scripts.acquire(req, a.euid == 0)
	if err != nil {
		return nil, "", fmt.Errorf("job %d: %w", req.JobID, err)
	}
	argv := []string{path}
	if !strings.HasPrefix(req.Script, "#!") {
		argv = []string{"/bin/sh", path}
	}
	return append(argv, req.Args...), path, nil
}

// groupCacheTTL is how long a user's group list is reused, as slurmd's
// group cache does (GroupUpdateTime): a queue of one user's short jobs
// must not read the group database once per job.
const groupCacheTTL = time.Minute

var groupCache struct {
	sync.Mutex
	m map[uint32]cachedGroups
}

type cachedGroups struct {
	ids []uint32
	at  time.Time
}

// userGroups lists uid's supplementary groups (initgroups), empty when the
// user is unknown locally.
func userGroups(uid uint32) []uint32 {
	groupCache.Lock()
	defer groupCache.Unlock()
	if c, ok := groupCache.m[uid]; ok && time.Since(c.at) < groupCacheTTL {
		return c.ids
	}
	ids := lookupGroups(uid)
	if groupCache.m == nil || len(groupCache.m) > 1024 {
		groupCache.m = map[uint32]cachedGroups{}
	}
	groupCache.m[uid] = cachedGroups{ids: ids, at: time.Now()}
	return ids
}

func lookupGroups(uid uint32) []uint32 {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return nil
	}
	ids, err := u.GroupIds()
	if err != nil {
		return nil
	}
	var out []uint32
	for _, s := range ids {
		if g, err := strconv.ParseUint(s, 10, 32); err == nil {
			out = append(out, uint32(g))
		}
	}
	return out
}

// shimHandshakeTimeout bounds how long a launch waits for the supervisor.
const shimHandshakeTimeout = 30 * time.Second

// start hands a prepared job to the node's supervisor, which forks the
// batch script and answers with its pid. The record names the supervisor
// before the job exists, so an agent that dies in between finds the job
// again through the supervisor's list. It returns the job's end when it
// could not be started.
func (a *Agent) start(j *job, spec execSpec) *exitRecord {
	fail := func(msg string) *exitRecord {
		// Not recorded: finish saves the failed record itself.
		ex := exitRecord{WaitStatus: -1, Time: time.Now(), Error: msg}
		a.log.Warn("job launch failed", "job", j.rec.Req.JobID, "err", msg)
		return &ex
	}
	sup, err := a.supervisor()
	if err != nil {
		return fail(err.Error())
	}
	j.rec.ShimPID, j.rec.ShimTick, j.rec.Resident = sup.pid, sup.tick, true
	a.save(j)
	rep, err := sup.call(supMsg{Op: "start", Job: j.rec.Req.JobID, Restart: j.rec.Req.RestartCount, Spec: &spec,
		Fence: uint64(a.fenceSec.Load())}, shimHandshakeTimeout)
	switch {
	case err != nil:
		// The supervisor may or may not have started the job: the full
		// checks settle it (its pid from a new supervisor's list, or the
		// launch timing out as FAILED).
		a.log.Warn("job supervisor did not confirm the launch", "job", j.rec.Req.JobID, "err", err)
		return nil
	case rep.Error != "":
		return fail(rep.Error)
	}
	// The pid reaches the disk with the job's next save or the next poll
	// (dirty): a batch job that ends at once is written once more, not
	// twice. Until then a restarted agent learns it from the supervisor.
	j.rec.PID, j.rec.PIDTick = rep.PID, rep.Tick
	j.dirty = true
	return nil
}
