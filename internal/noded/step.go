package noded

// Job steps on a node (srun inside an allocation), the part of a step that
// slurmd hands to slurmstepd in Slurm: the controller prepares the step here
// (LaunchStep), srun connects to the step's I/O endpoint, the tasks start as
// the job's user (setuid when the agent is root, the batch launch's rule),
// in the job's cgroup when there is one, with their stdin, stdout and stderr
// carried by the connection. A step ends when all its tasks have exited; its
// time limit, the controller's kill (job cancelled, timed out) and a lost
// srun end it with Slurm's kill sequence (SIGCONT, SIGTERM, SIGKILL after
// KillWait). Tasks are children of the agent: unlike slurmstepd's, they do
// not survive the agent (docs/differences.md).

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// stepAttachTimeout is how long a prepared step waits for srun by default.
const stepAttachTimeout = 60 * time.Second

// stepKeep is how long an ended step's result stays for the controller.
const stepKeep = 10 * time.Minute

type stepKey struct {
	job  uint32
	step int
}

// stepTable is an agent's steps. It hangs off the agent through a
// package-level map so that the step code stays in its own files.
type stepTable struct {
	mu    sync.Mutex
	steps map[stepKey]*stepRun
}

var stepTables sync.Map // *Agent -> *stepTable

func (a *Agent) steps() *stepTable {
	t, _ := stepTables.LoadOrStore(a, &stepTable{steps: map[stepKey]*stepRun{}})
	return t.(*stepTable)
}

func (a *Agent) step(job uint32, step int) (*stepRun, error) {
	t := a.steps()
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.steps[stepKey{job, step}]
	if !ok {
		return nil, fmt.Errorf("step %d.%d: Invalid job step id specified: %w", job, step, ErrUnknownJob)
	}
	return r, nil
}

// stepRun is one step's part on this node.
type stepRun struct {
	a    *Agent
	req  api.AgentStepLaunch
	key  stepKey
	done chan struct{} // closed once result is final

	mu        sync.Mutex
	attached  bool
	tasks     []*stepTask
	termState string
	result    api.StepNodeResult
	out       *stepWriter
	cgroup    string
	cgV1      []string
	ownCG     bool
	// oomBase is the cgroup's OOM kill count when the step started.
	oomBase int64
	timers  []*time.Timer
	pmi     *stepPMI     // --mpi=pmi2 (pmi.go)
	attach  *attachments // sattach's clients (sattach.go)
}

// stepTask is one task (one process group) of a step.
type stepTask struct {
	id    int
	local int
	pgid  int
	stdin chan []byte // nil: the task's stdin is /dev/null
	eof   sync.Once
	exit  string
	ended bool
	// usage is the task's gathered usage (usage.go).
	usage api.TaskUsage
}

// LaunchStep prepares this node's part of a step; its tasks start when
// srun connects to the step's I/O endpoint.
func (a *Agent) LaunchStep(req api.AgentStepLaunch) (api.StepNodeResult, error) {
	if err := a.checkStep(&req); err != nil {
		return api.StepNodeResult{}, err
	}
	if err := a.stepNodeProlog(&req); err != nil { // prolog.go
		return api.StepNodeResult{}, err
	}
	key := stepKey{req.Job.JobID, req.StepID}
	r := &stepRun{a: a, req: req, key: key, done: make(chan struct{}), attach: &attachments{},
		result: api.StepNodeResult{Node: a.cfg.Name, JobID: key.job, StepID: key.step, Start: time.Now()}}
	t := a.steps()
	t.mu.Lock()
	if _, dup := t.steps[key]; dup {
		t.mu.Unlock()
		return api.StepNodeResult{}, fmt.Errorf("step %d.%d exists here: %w", key.job, key.step, ErrConflict)
	}
	t.steps[key] = r
	t.mu.Unlock()
	wait := time.Duration(req.AttachTimeoutSec) * time.Second
	if wait <= 0 {
		wait = stepAttachTimeout
	}
	r.after(wait, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.attached {
			r.finishLocked(api.StateFailed, fmt.Sprintf("srun did not connect within %v", wait))
		}
	})
	a.log.Info("step prepared", "job", key.job, "step", key.step, "tasks", req.Tasks)
	return r.snapshot(), nil
}

// checkStep validates a step request with the batch launch's identity
// rule: an agent not running as root runs only its own user's tasks.
func (a *Agent) checkStep(req *api.AgentStepLaunch) error {
	switch {
	case req.Job.JobID == 0:
		return fmt.Errorf("job id 0: %w", ErrBadRequest)
	case len(req.Argv) == 0 || req.Argv[0] == "":
		return fmt.Errorf("step %d.%d: no command: %w", req.Job.JobID, req.StepID, ErrBadRequest)
	case len(req.Tasks) == 0:
		return fmt.Errorf("step %d.%d: no task on node %s: %w", req.Job.JobID, req.StepID, a.cfg.Name, ErrBadRequest)
	case req.StepID < 0:
		return fmt.Errorf("step id %d: %w", req.StepID, ErrBadRequest)
	case req.Node != "" && req.Node != a.cfg.Name:
		return fmt.Errorf("step %d.%d: part for node %s sent to node %s: %w", req.Job.JobID, req.StepID, req.Node, a.cfg.Name, ErrBadRequest)
	}
	if a.euid != 0 && int(req.Job.UID) != a.euid {
		return fmt.Errorf("step %d.%d: user %s (uid %d) differs from the node agent's uid %d; an unprivileged node agent runs only its own user's tasks: %w",
			req.Job.JobID, req.StepID, req.Job.User, req.Job.UID, a.euid, ErrForbidden)
	}
	return nil
}

// after runs fn once d has passed, unless the step ended first.
func (r *stepRun) after(d time.Duration, fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timers = append(r.timers, time.AfterFunc(d, fn))
}

// snapshot returns the node's result as it stands.
func (r *stepRun) snapshot() api.StepNodeResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.result
	res.Tasks = append([]api.StepTaskExit(nil), res.Tasks...)
	return res
}

// finishLocked records the node's final state (caller holds r.mu).
func (r *stepRun) finishLocked(state, reason string) {
	if r.result.Done {
		return
	}
	r.result.Done, r.result.State, r.result.Reason, r.result.End = true, state, reason, time.Now()
	r.result.Usage = r.usageLocked()
	for _, t := range r.timers {
		t.Stop()
	}
	if r.ownCG {
		r.a.cg.removeIfEmpty(r.key.job, r.cgroup, r.cgV1)
	}
	close(r.done)
	r.a.log.Info("step ended", "job", r.key.job, "step", r.key.step, "state", state, "reason", reason)
	key, a := r.key, r.a
	time.AfterFunc(stepKeep, func() {
		t := a.steps()
		t.mu.Lock()
		if t.steps[key] == r {
			delete(t.steps, key)
		}
		t.mu.Unlock()
	})
}

// claim marks the step attached; only one srun connection is accepted.
func (r *stepRun) claim() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.result.Done:
		return fmt.Errorf("step %d.%d already ended (%s): %w", r.key.job, r.key.step, r.result.State, ErrConflict)
	case r.attached:
		return fmt.Errorf("step %d.%d already has its I/O connection: %w", r.key.job, r.key.step, ErrConflict)
	}
	r.attached = true
	return nil
}

// serveIO runs the step over srun's connection: frames from srun on in,
// frames to srun through conn. It returns when the step has ended here.
func (r *stepRun) serveIO(conn io.ReadWriteCloser, in io.Reader) {
	defer conn.Close()
	r.mu.Lock()
	r.out = &stepWriter{w: conn, att: r.attach}
	r.mu.Unlock()
	// The tasks' stdin queues exist before srun's first frame is read, so
	// input sent at once is not lost.
	r.prepareTasks()
	gone := make(chan struct{})
	go func() {
		r.readFrames(in)
		close(gone)
	}()
	r.start()
	select {
	case <-r.done:
	case <-gone:
		// srun went away (killed, network): Slurm kills the step.
		r.terminate(api.StateCancelled, "-", "srun disconnected")
		<-r.done
	}
	res, _ := jsonBytes(r.snapshot())
	r.out.frame(api.StepFrameDone, 0, res)
}

// readFrames handles srun's frames until the connection ends.
func (r *stepRun) readFrames(in io.Reader) {
	for {
		kind, task, p, err := api.ReadStepFrame(in)
		if err != nil {
			return
		}
		switch kind {
		case api.StepFrameStdin:
			for _, t := range r.stdinTargets(task) {
				select {
				case t.stdin <- p:
				case <-r.done:
				}
			}
		case api.StepFrameStdinEOF:
			for _, t := range r.stdinTargets(task) {
				t.eof.Do(func() { close(t.stdin) })
			}
		case api.StepFrameSignal:
			if sig, err := strconv.Atoi(string(p)); err == nil && sig > 0 && sig < 65 {
				r.signal(syscall.Signal(sig))
			}
		case api.StepFrameKill:
			// A kill with a reason (srun -K) shows slurmstepd's
			// "*** STEP ... CANCELLED AT ... ***" line, as Slurm's does.
			why := "-"
			if len(p) > 0 {
				why = ""
			}
			r.terminate(api.StateCancelled, why, "killed by srun")
		case api.StepFramePMIFence:
			r.pmiAnswer(p)
		}
	}
}

// stdinTargets are the tasks a stdin frame for task is for.
func (r *stepRun) stdinTargets(task uint32) []*stepTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*stepTask
	for _, t := range r.tasks {
		if t.stdin != nil && (task == api.StepAllTasks || uint32(t.id) == task) {
			out = append(out, t)
		}
	}
	return out
}

// prepareTasks creates the step's tasks (not yet started).
func (r *stepRun) prepareTasks() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.result.Done || r.tasks != nil {
		return
	}
	for i, id := range r.req.Tasks {
		t := &stepTask{id: id, local: i}
		if r.getsStdin(id) {
			t.stdin = make(chan []byte, 16)
		}
		r.tasks = append(r.tasks, t)
	}
}

// start spawns the tasks, arms the time limit and follows the tasks to
// their end.
func (r *stepRun) start() {
	r.mu.Lock()
	if r.result.Done { // killed before srun connected
		r.mu.Unlock()
		return
	}
	var cg jobCgroup
	cg, r.ownCG = r.a.stepCgroup(&r.req)
	r.cgroup, r.cgV1 = cg.V2, cg.V1
	r.oomBase = oomKills(r.cgroup, r.cgV1)
	tasks := r.tasks
	r.mu.Unlock()
	r.startPMI()
	if lim := r.req.TimeLimitSec; lim > 0 && lim != api.TimeInfinite {
		r.after(time.Duration(lim)*time.Second, func() {
			r.terminate(api.StateTimeout, " DUE TO TIME LIMIT", "step time limit")
		})
	}
	go r.gather()
	var wg sync.WaitGroup
	for _, t := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.runTask(t)
		}()
	}
	go func() {
		wg.Wait()
		r.stopPMI()
		r.mu.Lock()
		defer r.mu.Unlock()
		state := r.termState
		if state == "" {
			state = api.StateCompleted
			for _, e := range r.result.Tasks {
				if e.ExitCode != "0:0" {
					state = api.StateFailed
				}
			}
			if oomKills(r.cgroup, r.cgV1) > r.oomBase {
				state = api.StateOutOfMemory // task/cgroup saw an OOM kill in the step
			}
		}
		sort.Slice(r.result.Tasks, func(i, j int) bool { return r.result.Tasks[i].Task < r.result.Tasks[j].Task })
		r.finishLocked(state, r.result.Reason)
	}()
}

// getsStdin applies srun --input: all tasks (default), none, or one.
func (r *stepRun) getsStdin(task int) bool {
	switch in := r.req.Input; in {
	case "", api.StepInputAll:
		return true
	case api.StepInputNone:
		return false
	default:
		n, err := strconv.Atoi(in)
		return err == nil && n == task
	}
}

// runTask runs one task to its end and reports its exit status to srun.
func (r *stepRun) runTask(t *stepTask) {
	exit := r.execTask(t)
	res, _ := jsonBytes(api.StepTaskExit{Task: t.id, ExitCode: exit})
	r.out.frame(api.StepFrameExit, uint32(t.id), res)
	r.mu.Lock()
	t.exit, t.ended = exit, true
	r.result.Tasks = append(r.result.Tasks, api.StepTaskExit{Task: t.id, ExitCode: exit})
	r.mu.Unlock()
}

// execTask starts the task's process and waits for it and its output;
// it returns Slurm's "code:signal". A task that cannot start exits 2 with
// slurmstepd's execve() message, as in Slurm.
func (r *stepRun) execTask(t *stepTask) string {
	cmd, files, err := r.taskCommand(t)
	if err == nil {
		err = r.startBound(t, cmd)
	}
	for _, f := range files.child {
		f.Close()
	}
	if err != nil {
		for _, f := range files.parent {
			f.Close()
		}
		go r.drainStdin(t, nil)
		r.out.frame(api.StepFrameStderr, uint32(t.id), []byte(fmt.Sprintf("slurmstepd: error: %v\n", err)))
		return "2:0"
	}
	r.mu.Lock()
	t.pgid = cmd.Process.Pid
	term := r.termState != ""
	r.mu.Unlock()
	if term { // the kill sequence began while the task started
		syscall.Kill(-t.pgid, syscall.SIGKILL)
	}
	go r.drainStdin(t, files.stdin)
	var pumps sync.WaitGroup
	for kind, f := range map[byte]*os.File{api.StepFrameStdout: files.stdout, api.StepFrameStderr: files.stderr} {
		pumps.Add(1)
		go func() {
			defer pumps.Done()
			r.pump(kind, uint32(t.id), f)
		}()
	}
	cmd.Wait()
	r.taskEnded(t, cmd.ProcessState)
	// Output still held by processes the task left behind is waited for
	// a moment; then, as Slurm ends a step's leftovers, they are killed.
	if !waitTimeout(&pumps, 500*time.Millisecond) {
		syscall.Kill(-t.pgid, syscall.SIGKILL)
		if !waitTimeout(&pumps, time.Second) {
			files.stdout.Close()
			files.stderr.Close()
			pumps.Wait()
		}
	}
	syscall.Kill(-t.pgid, syscall.SIGKILL)
	r.stepTaskEpilog(cmd.Env) // prolog.go
	return exitString(cmd.ProcessState)
}

// startBound starts the task bound to its CPUs under srun --cpu-bind;
// a binding that cannot be made is reported on the task's stderr and the
// task runs unbound. --cpu-bind=verbose reports each task's mask there,
// as task/affinity does.
func (r *stepRun) startBound(t *stepTask, cmd *exec.Cmd) error {
	b := r.req.CPUBind
	if b == nil {
		return r.startTask(cmd)
	}
	avail := r.stepCPUSet()
	cpus, err := taskCPUs(b, avail, t.local, r.req.CPUsPerTask, len(r.req.Tasks))
	if err != nil {
		r.out.frame(api.StepFrameStderr, uint32(t.id), []byte(fmt.Sprintf("slurmstepd: error: task/affinity: task %d not bound: %v\n", t.id, err)))
	}
	err = withAffinity(cpus, func() error { return r.startTask(cmd) })
	var ae *affinityError
	if errors.As(err, &ae) {
		r.out.frame(api.StepFrameStderr, uint32(t.id), []byte(fmt.Sprintf("slurmstepd: error: task/affinity: task %d not bound to %s: %v\n", t.id, cpuListString(cpus), ae)))
		cpus, err = nil, r.startTask(cmd)
	}
	if err == nil && b.Verbose {
		// task/affinity's words (oracle with TaskPlugin=task/affinity):
		// "cpu-bind=MASK - n1, task  1  1 [4887]: mask 0x2 set", and for
		// no binding "cpu-bind=NONE - n1, task  0  0 [4932]: mask 0x3".
		line := fmt.Sprintf("cpu-bind=MASK - %s, task %2d %2d [%d]: mask %s set\n", r.a.cfg.Name, t.id, t.local, cmd.Process.Pid, cpuMaskHex(cpus))
		if cpus == nil {
			line = fmt.Sprintf("cpu-bind=NONE - %s, task %2d %2d [%d]: mask %s\n", r.a.cfg.Name, t.id, t.local, cmd.Process.Pid, cpuMaskHex(avail))
		}
		r.out.frame(api.StepFrameStderr, uint32(t.id), []byte(line))
	}
	return err
}

// taskFiles are a task's pipe ends: child's (closed after the start) and
// the agent's.
type taskFiles struct {
	child, parent         []*os.File
	stdin, stdout, stderr *os.File
}

// taskCommand prepares the task's process: environment, credentials,
// process group, pipes.
func (r *stepRun) taskCommand(t *stepTask) (*exec.Cmd, taskFiles, error) {
	var files taskFiles
	env, err := r.taskEnv(t)
	if err == nil {
		env, err = r.stepTaskProlog(t, env) // prolog.go
	}
	if err != nil {
		return nil, files, err
	}
	argv := r.req.Argv
	if t.local < len(r.req.TaskArgv) && len(r.req.TaskArgv[t.local]) > 0 {
		argv = r.req.TaskArgv[t.local] // srun --multi-prog
	}
	path, err := stepLookPath(argv[0], envMap(env)["PATH"])
	if err != nil {
		return nil, files, fmt.Errorf("execve(): %s: %v", argv[0], err)
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Dir: r.req.Cwd}
	if st, err := os.Stat(cmd.Dir); cmd.Dir == "" || err != nil || !st.IsDir() {
		r.out.frame(api.StepFrameStderr, uint32(t.id), []byte(fmt.Sprintf(
			"slurmstepd: error: couldn't chdir to `%s': %v: going to /tmp instead\n", r.req.Cwd, errOr(err, "not a directory"))))
		cmd.Dir = "/tmp"
	}
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if r.a.euid == 0 {
		j := r.req.Job
		attr.Credential = &syscall.Credential{Uid: j.UID, Gid: j.GID, Groups: stepGroups(j.UID)}
	}
	cmd.SysProcAttr = attr
	if r.req.Pty != nil && t.local == 0 && r.req.NodeID == 0 && t.stdin != nil {
		if err := r.ptyTaskFiles(cmd, &files); err != nil {
			return nil, files, fmt.Errorf("openpty: %v", err)
		}
		return cmd, files, nil
	}
	if t.stdin != nil {
		pr, pw, err := os.Pipe()
		if err != nil {
			return nil, files, err
		}
		cmd.Stdin, files.stdin = pr, pw
		files.child, files.parent = append(files.child, pr), append(files.parent, pw)
	} else {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return nil, files, err
		}
		cmd.Stdin = null
		files.child = append(files.child, null)
	}
	for _, dst := range []**os.File{&files.stdout, &files.stderr} {
		pr, pw, err := os.Pipe()
		if err != nil {
			for _, f := range append(files.child, files.parent...) {
				f.Close()
			}
			return nil, taskFiles{}, err
		}
		*dst = pr
		files.child, files.parent = append(files.child, pw), append(files.parent, pr)
	}
	cmd.Stdout, cmd.Stderr = files.child[len(files.child)-2], files.child[len(files.child)-1]
	if err := r.attachPMI(t, cmd, &files); err != nil {
		for _, f := range append(files.child, files.parent...) {
			f.Close()
		}
		return nil, taskFiles{}, err
	}
	return cmd, files, nil
}

func errOr(err error, s string) string {
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return pe.Err.Error()
		}
		return err.Error()
	}
	return s
}

// startTask starts cmd in the step's cgroup when there is one (created
// there by clone3 where the kernel allows it, else moved in at once).
func (r *stepRun) startTask(cmd *exec.Cmd) error {
	if r.cgroup != "" {
		if cg, err := os.Open(r.cgroup); err == nil {
			defer cg.Close()
			attr := *cmd.SysProcAttr
			cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(cg.Fd())
			if err := r.startCmd(cmd); err == nil {
				return nil
			}
			*cmd = exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir, Stdin: cmd.Stdin,
				Stdout: cmd.Stdout, Stderr: cmd.Stderr, ExtraFiles: cmd.ExtraFiles, SysProcAttr: &attr}
		}
	}
	if err := r.startCmd(cmd); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("execve(): %s: %v", cmd.Args[0], err)
	}
	if r.cgroup != "" {
		os.WriteFile(filepath.Join(r.cgroup, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0)
	}
	return nil
}

// startCmd starts a task inside the job's v1 cgroups (startInCgroups).
func (r *stepRun) startCmd(cmd *exec.Cmd) error {
	_, err := startInCgroups(r.cgV1, func(traced bool) (int, error) {
		cmd.SysProcAttr.Ptrace = traced
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	return err
}

// stepCgroup returns the job's cgroups on this node (created, and then
// owned by the step, when the job's batch script runs elsewhere): step
// tasks share the job's limits, freezer and kill, as in Slurm.
func (a *Agent) stepCgroup(req *api.AgentStepLaunch) (jobCgroup, bool) {
	if a.cg == nil {
		return jobCgroup{}, false
	}
	a.mu.Lock()
	if j, ok := a.jobs[req.Job.JobID]; ok && !api.AgentJobFinal(j.rec.State) {
		cg := jobCgroup{V2: j.rec.Cgroup, V1: j.rec.CgroupV1, CPUs: j.rec.CPUIDs}
		a.mu.Unlock()
		return cg, false
	}
	a.mu.Unlock()
	if cg, ok := a.cg.existing(req.Job.JobID); ok {
		return cg, false // another step of the job made it
	}
	cg, err := a.cg.create(&req.Job, a.info.Resources.RealMemoryMB, a.hiddenGPUs(req.GPUs))
	if err != nil {
		return jobCgroup{}, false
	}
	return cg, true
}

// pump copies one output pipe of a task to srun as frames.
func (r *stepRun) pump(kind byte, task uint32, f *os.File) {
	defer f.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			r.out.frame(kind, task, buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// drainStdin writes the task's stdin frames to its pipe (w nil: discards
// them) until srun's EOF; a task that stops reading only loses its input.
func (r *stepRun) drainStdin(t *stepTask, w *os.File) {
	if t.stdin == nil {
		return
	}
	if w != nil {
		defer w.Close()
	}
	ok := w != nil
	for {
		select {
		case p, more := <-t.stdin:
			if !more {
				return
			}
			if ok {
				if _, err := w.Write(p); err != nil {
					ok = false
				}
			}
		case <-r.done:
			return
		}
	}
}

// signal sends sig to every running task's process group.
func (r *stepRun) signal(sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.signalLocked(sig)
}

func (r *stepRun) signalLocked(sig syscall.Signal) {
	for _, t := range r.tasks {
		if t.pgid > 0 && !t.ended {
			syscall.Kill(-t.pgid, sig)
		}
	}
}

// terminate starts Slurm's kill sequence on the step: SIGCONT and SIGTERM,
// SIGKILL after KillWait; the node's part ends in state. why is appended to
// slurmstepd's "*** STEP ... CANCELLED AT ... ***" line shown by srun ("-":
// no line, srun itself asked).
func (r *stepRun) terminate(state, why, reason string) {
	if !r.markTerm(state, reason) {
		return
	}
	// Told before the signals, so the line reaches srun before the
	// node's Done frame.
	if why != "-" {
		msg := fmt.Sprintf("slurmstepd: error: *** STEP %d.%d ON %s CANCELLED AT %s%s ***\n", r.key.job, r.key.step,
			r.a.cfg.Name, time.Now().Format("2006-01-02T15:04:05"), why)
		r.out.frame(api.StepFrameStderr, api.StepAllTasks, []byte(msg))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.signalLocked(syscall.SIGCONT)
	r.signalLocked(syscall.SIGTERM)
	kw := time.Duration(r.req.KillWaitSec) * time.Second
	if kw <= 0 {
		kw = DefaultKillWait
	}
	r.timers = append(r.timers, time.AfterFunc(kw, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.signalLocked(syscall.SIGKILL)
	}))
}

// markTerm records that the step is being ended (a task starting from now
// on is killed at once); it reports whether tasks may be running, or ends
// the step at once when none was started.
func (r *stepRun) markTerm(state, reason string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.result.Done || r.termState != "" {
		return false
	}
	r.termState, r.result.Reason = state, reason
	if !r.attached || r.tasks == nil {
		r.finishLocked(state, reason)
		return false
	}
	return true
}

// taskEnv is the task's environment: srun's, the job's variables
// (BuildJobEnv, as for the batch script) and the step's, from srun(1)'s
// OUTPUT ENVIRONMENT VARIABLES.
func (r *stepRun) taskEnv(t *stepTask) ([]string, error) {
	q := r.req
	job := q.Job
	job.Environment, job.Export = q.Env, ""
	base, err := BuildJobEnv(&job, r.a.cfg.Name, job.StartTime)
	if err != nil {
		return nil, err
	}
	env := envMap(base)
	delete(env, "ENVIRONMENT") // set for batch scripts only
	gtids := make([]string, len(q.Tasks))
	for i, id := range q.Tasks {
		gtids[i] = strconv.Itoa(id)
	}
	for k, v := range map[string]string{
		"SLURM_STEP_ID": strconv.Itoa(q.StepID), "SLURM_STEPID": strconv.Itoa(q.StepID),
		"SLURM_PROCID": strconv.Itoa(t.id), "SLURM_LOCALID": strconv.Itoa(t.local),
		"SLURM_NODEID": strconv.Itoa(q.NodeID), "SLURM_GTIDS": strings.Join(gtids, ","),
		"SLURM_NTASKS": strconv.Itoa(q.NTasks), "SLURM_NPROCS": strconv.Itoa(q.NTasks),
		"SLURM_STEP_NUM_TASKS": strconv.Itoa(q.NTasks), "SLURM_STEP_NUM_NODES": strconv.Itoa(q.NNodes),
		"SLURM_STEP_NODELIST": q.NodeList, "SLURM_STEP_TASKS_PER_NODE": q.TasksPerNode,
		"SLURM_TASKS_PER_NODE": q.TasksPerNode, "SLURMD_NODENAME": r.a.cfg.Name,
		"SLURM_NNODES": strconv.Itoa(q.NNodes), "SLURM_TOPOLOGY_ADDR_PATTERN": "node", "SLURM_OOM_KILL_STEP": "0",
	} {
		env[k] = v
	}
	if q.Distribution != "" {
		env["SLURM_DISTRIBUTION"] = q.Distribution
	}
	if q.StepCPUs > 0 {
		env["SLURM_CPUS_ON_NODE"] = strconv.Itoa(q.StepCPUs) // --exact
	}
	// The job's CPUs on every node, as srun's environment (the batch
	// script's or salloc's) has them: the agent knows only its own.
	srunEnv := envMap(q.Env)
	if v, ok := srunEnv["SLURM_JOB_CPUS_PER_NODE"]; ok {
		env["SLURM_JOB_CPUS_PER_NODE"] = v
	}
	if env["SLURM_SUBMIT_HOST"] == "" && srunEnv["SLURM_SUBMIT_HOST"] != "" {
		env["SLURM_SUBMIT_HOST"] = srunEnv["SLURM_SUBMIT_HOST"]
	}
	// Slurm 24.11 sets no SLURM_JOB_GROUP in a step's environment.
	if _, ok := srunEnv["SLURM_JOB_GROUP"]; !ok {
		delete(env, "SLURM_JOB_GROUP")
	}
	if q.CPUsPerTask > 0 {
		env["SLURM_CPUS_PER_TASK"] = strconv.Itoa(q.CPUsPerTask)
	}
	if len(q.GPUs) > 0 {
		ids := make([]string, len(q.GPUs))
		for i, g := range q.GPUs {
			ids[i] = strconv.Itoa(g)
		}
		env["SLURM_STEP_GPUS"] = strings.Join(ids, ",")
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

// stepWriter serialises frames to srun; after a write error (srun gone)
// frames are dropped so that the tasks' output keeps draining.
type stepWriter struct {
	mu     sync.Mutex
	w      io.Writer
	broken bool
	// att are sattach's clients (sattach.go).
	att *attachments
}

func (s *stepWriter) frame(kind byte, task uint32, p []byte) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.att.record(kind, task, p)
	if s.broken {
		return
	}
	for len(p) > api.MaxStepFrame {
		if api.WriteStepFrame(s.w, kind, task, p[:api.MaxStepFrame]) != nil {
			s.broken = true
			return
		}
		p = p[api.MaxStepFrame:]
	}
	if api.WriteStepFrame(s.w, kind, task, p) != nil {
		s.broken = true
	}
}

// exitString is Slurm's "code:signal" of a finished process.
func exitString(ps *os.ProcessState) string {
	if ps == nil {
		return "1:0"
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return strconv.Itoa(ps.ExitCode()) + ":0"
	case ws.Signaled():
		return "0:" + strconv.Itoa(int(ws.Signal()))
	default:
		return strconv.Itoa(ws.ExitStatus()) + ":0"
	}
}

func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	c := make(chan struct{})
	go func() {
		wg.Wait()
		close(c)
	}()
	select {
	case <-c:
		return true
	case <-time.After(d):
		return false
	}
}

// stepLookPath finds name in the task's PATH, as execvp in the task's
// environment would; srun reports a miss as execve's ENOENT.
func stepLookPath(name, pathEnv string) (string, error) {
	if p, ok := searchPath(name, pathEnv); ok {
		return p, nil
	}
	return "", errors.New("No such file or directory")
}

// stepGroups lists uid's supplementary groups (initgroups).
func stepGroups(uid uint32) []uint32 {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return nil
	}
	ids, _ := u.GroupIds()
	var out []uint32
	for _, s := range ids {
		if g, err := strconv.ParseUint(s, 10, 32); err == nil {
			out = append(out, uint32(g))
		}
	}
	return out
}

func jsonBytes(v any) ([]byte, error) { return json.Marshal(v) }
