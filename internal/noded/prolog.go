package noded

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// Slurm's SLURM_SCRIPT_CONTEXT values of the node-side scripts.
const (
	contextProlog     = "prolog_slurmd"
	contextEpilog     = "epilog_slurmd"
	contextTaskProlog = "prolog_task"
	contextTaskEpilog = "epilog_task"
)

// scriptKillGrace is how long a timed-out script has between SIGTERM
// (what slurmd sends at PrologEpilogTimeout: "prolog killed by signal 15")
// and SIGKILL.
const scriptKillGrace = 2 * time.Second

// scriptOutputMax bounds the output of a script kept for the log (or, for
// a TaskProlog, parsed).
const scriptOutputMax = 64 << 10

// scriptRun is one run of a node script.
type scriptRun struct {
	path    string
	env     []string
	dir     string
	timeout time.Duration
	// cred runs the script as the job's user (TaskProlog/TaskEpilog);
	// nil runs it as the agent (root for Prolog/Epilog).
	cred *syscall.Credential
}

// runScript runs a node script in a process group of its own with stdin
// on /dev/null, and returns its standard output and an error when it did
// not exit 0. At the timeout the whole group gets SIGTERM, then SIGKILL.
func runScript(r scriptRun) ([]byte, error) {
	ctx := context.Background()
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, r.path)
	cmd.Env, cmd.Dir = r.env, r.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: r.cred}
	var out, errb limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = scriptKillGrace
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left behind
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			err = fmt.Errorf("timed out after %s: %w", r.timeout, err)
		}
		msg := strings.TrimSpace(out.String() + errb.String())
		return out.Bytes(), fmt.Errorf("%s: %w (output: %q)", r.path, err, msg)
	}
	return out.Bytes(), nil
}

// limitedBuffer keeps the first scriptOutputMax bytes written to it.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := scriptOutputMax - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// scriptTimeout is PrologEpilogTimeout as a duration (0 = none).
func scriptTimeout(s *api.NodeScripts) time.Duration {
	return time.Duration(s.TimeoutSec) * time.Second
}

// scriptEnv is the environment slurmd gives Prolog and Epilog (checked on
// Slurm 24.11): the job's identity, allocation and files, no PATH. ended
// is the job's final status for the epilog (nil for the prolog).
func scriptEnv(req *api.LaunchRequest, node, context string, ended *api.JobStatus) []string {
	start := req.StartTime
	end := start.Add(time.Duration(req.TimeLimitSec) * time.Second)
	if req.TimeLimitSec <= 0 {
		end = start.AddDate(1, 0, 0) // Slurm: one year for an unlimited job
	}
	m := map[string]string{
		"SLURMD_NODENAME": node, "SLURM_SCRIPT_CONTEXT": context,
		"SLURM_JOB_ID": itoa(req.JobID), "SLURM_JOBID": itoa(req.JobID),
		"SLURM_JOB_USER": req.User, "SLURM_JOB_UID": itoa(req.UID), "SLURM_UID": itoa(req.UID),
		"SLURM_JOB_GID": itoa(req.GID), "SLURM_JOB_ACCOUNT": req.Account,
		"SLURM_JOB_PARTITION": req.Partition, "SLURM_CLUSTER_NAME": req.ClusterName,
		"SLURM_JOB_NODELIST": req.NodeList, "SLURM_NODELIST": req.NodeList,
		"SLURM_JOB_NUM_NODES": itoa(max(req.NNodes, 1)), "SLURM_JOB_RESTART_COUNT": itoa(req.RestartCount),
		"SLURM_JOB_START_TIME": itoa(start.Unix()), "SLURM_JOB_END_TIME": itoa(end.Unix()),
		"SLURM_JOB_WORK_DIR": req.WorkDir, "SLURM_JOB_OVERSUBSCRIBE": "OK",
	}
	if s := req.Scripts; s != nil && s.CPUsPerNode != "" {
		m["SLURM_JOB_CPUS_PER_NODE"] = s.CPUsPerNode
	}
	if ended != nil {
		code, sig := splitExit(ended.ExitCode)
		if !ended.EndTime.IsZero() {
			m["SLURM_JOB_END_TIME"] = itoa(ended.EndTime.Unix())
		}
		m["SLURM_JOB_EXIT_CODE"] = itoa(code<<8 | sig) // a wait status, as Slurm
		m["SLURM_JOB_EXIT_CODE2"] = fmt.Sprintf("%d:%d", code, sig)
		m["SLURM_JOB_DERIVED_EC"] = "0"
	}
	return sortedEnv(m)
}

// withJobFiles adds the batch job's expanded file names to a script's
// environment (SLURM_JOB_STDOUT/STDERR/STDIN).
func withJobFiles(env []string, stdin, stdout, stderr string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SLURM_JOB_STDIN=") && !strings.HasPrefix(kv, "SLURM_JOB_STDOUT=") {
			out = append(out, kv)
		}
	}
	if stdout == "" {
		return out
	}
	out = append(out, "SLURM_JOB_STDIN="+stdin, "SLURM_JOB_STDOUT="+stdout)
	if stderr != stdout {
		out = append(out, "SLURM_JOB_STDERR="+stderr)
	}
	sort.Strings(out)
	return out
}

func sortedEnv(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// splitExit parses Slurm's "code:signal".
func splitExit(s string) (int, int) {
	c, g, _ := strings.Cut(s, ":")
	code, _ := strconv.Atoi(c)
	sig, _ := strconv.Atoi(g)
	return code, sig
}

// applyTaskProlog applies a TaskProlog's standard output to the task's
// environment as slurmstepd does: "export NAME=value" sets a variable,
// "unset NAME" removes one, "print TEXT" writes TEXT to the task's
// standard output (returned as the preamble); other lines are ignored.
func applyTaskProlog(env []string, out []byte) ([]string, string) {
	m := envMap(env)
	var preamble strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "export "):
			name, value, ok := strings.Cut(strings.TrimSpace(line[len("export "):]), "=")
			if ok && validEnvName(name) {
				m[name] = value
			}
		case strings.HasPrefix(line, "unset "):
			delete(m, strings.TrimSpace(line[len("unset "):]))
		case strings.HasPrefix(line, "print "):
			preamble.WriteString(line[len("print "):] + "\n")
		}
	}
	return sortedEnv(m), preamble.String()
}

// taskCred is the job user's identity for TaskProlog/TaskEpilog (nil
// when the agent is not root and runs everything as itself).
func (a *Agent) taskCred(req *api.LaunchRequest) *syscall.Credential {
	if a.euid != 0 {
		return nil
	}
	return &syscall.Credential{Uid: req.UID, Gid: req.GID, Groups: userGroups(req.UID)}
}

// runProlog runs slurm.conf's Prolog (as root, before the batch script)
// and TaskProlog (as the user, its output applied to spec) for a batch
// launch. It returns the job's end when the Prolog failed or timed out:
// slurmd then reports the failure, and the controller drains the node
// and requeues the job.
func (a *Agent) runProlog(j *job, spec *execSpec) *exitRecord {
	req := &j.rec.Req
	s := req.Scripts
	if s == nil {
		return nil
	}
	if s.Prolog != "" {
		env := withJobFiles(scriptEnv(req, a.cfg.Name, contextProlog, nil), spec.StdIn, spec.StdOut, spec.StdErr)
		if _, err := runScript(scriptRun{path: s.Prolog, env: env, dir: "/", timeout: scriptTimeout(s)}); err != nil {
			a.log.Error("prolog failed", "job", req.JobID, "err", err)
			j.rec.ScriptFailure = "prolog"
			return &exitRecord{WaitStatus: -1, Time: time.Now(), Error: "prolog failed"}
		}
	}
	if s.TaskProlog != "" {
		env := append(append([]string(nil), spec.Env...), "SLURM_SCRIPT_CONTEXT="+contextTaskProlog)
		out, err := runScript(scriptRun{path: s.TaskProlog, env: env, dir: spec.Dir, cred: a.taskCred(req)})
		if err != nil {
			// slurmstepd fails the task when its TaskProlog fails.
			a.log.Error("task prolog failed", "job", req.JobID, "err", err)
			return &exitRecord{WaitStatus: -1, Time: time.Now(), Error: "task prolog failed"}
		}
		spec.Env, spec.Preamble = applyTaskProlog(spec.Env, out)
		j.taskEnv = spec.Env
	}
	return nil
}

// wantsEpilog reports whether a finished job still has node scripts to run.
func wantsEpilog(j *job) bool {
	s := j.rec.Req.Scripts
	return s != nil && (s.Epilog != "" || (s.TaskEpilog != "" && j.rec.PID != 0))
}

// runEpilog runs TaskEpilog (as the user, when the batch script ran) and
// Epilog (as root) after a batch job ended, then lets its end be reported;
// a failed Epilog is reported with it so that the controller drains the
// node. It runs outside the agent's lock.
func (a *Agent) runEpilog(j *job, ended api.JobStatus, stdout string) {
	req := &j.rec.Req
	s := req.Scripts
	if s.TaskEpilog != "" && j.rec.PID != 0 {
		env := j.taskEnv
		if env == nil {
			env, _ = BuildJobEnv(req, a.cfg.Name, req.StartTime)
		}
		env = append(append([]string(nil), env...), "SLURM_SCRIPT_CONTEXT="+contextTaskEpilog)
		dir := req.WorkDir
		if _, err := runScript(scriptRun{path: s.TaskEpilog, env: env, dir: dir, timeout: scriptTimeout(s), cred: a.taskCred(req)}); err != nil {
			a.log.Warn("task epilog failed", "job", req.JobID, "err", err)
		}
	}
	failed := false
	if s.Epilog != "" {
		env := withJobFiles(scriptEnv(req, a.cfg.Name, contextEpilog, &ended), os.DevNull, stdout, ended.StdErr)
		if _, err := runScript(scriptRun{path: s.Epilog, env: env, dir: "/", timeout: scriptTimeout(s)}); err != nil {
			a.log.Error("epilog failed", "job", req.JobID, "err", err)
			failed = true
		}
	}
	a.mu.Lock()
	j.epilogRunning = false
	if failed && j.rec.ScriptFailure == "" {
		j.rec.ScriptFailure = "epilog"
		a.save(j)
	}
	a.mu.Unlock()
	a.wakeReport()
}

// startEpilog starts the epilog of a job that just ended (the caller holds
// a.mu); its end is reported once the epilog is done.
func (a *Agent) startEpilog(j *job) {
	if !wantsEpilog(j) || j.epilogRunning {
		return
	}
	j.epilogRunning = true
	go a.runEpilog(j, j.rec.status(time.Now()), j.rec.StdOut)
}

// stepTaskProlog runs TaskProlog as the user before a step's task (srun),
// with the task's environment: its export/unset lines change that
// environment, its print lines go to the task's stdout, as slurmstepd
// does. A failing TaskProlog fails the task.
func (r *stepRun) stepTaskProlog(t *stepTask, env []string) ([]string, error) {
	s := r.req.Job.Scripts
	if s == nil || s.TaskProlog == "" {
		return env, nil
	}
	penv := append(append([]string(nil), env...), "SLURM_SCRIPT_CONTEXT="+contextTaskProlog)
	out, err := runScript(scriptRun{path: s.TaskProlog, env: penv, dir: r.req.Cwd, timeout: scriptTimeout(s), cred: r.a.taskCred(&r.req.Job)})
	if err != nil {
		return nil, fmt.Errorf("TaskProlog failed: %v", err)
	}
	env, preamble := applyTaskProlog(env, out)
	if preamble != "" {
		r.out.frame(api.StepFrameStdout, uint32(t.id), []byte(preamble))
	}
	return env, nil
}

// stepTaskEpilog runs TaskEpilog as the user after a step's task ended,
// with the task's environment; a failure is only logged.
func (r *stepRun) stepTaskEpilog(env []string) {
	s := r.req.Job.Scripts
	if s == nil || s.TaskEpilog == "" || env == nil {
		return
	}
	env = append(append([]string(nil), env...), "SLURM_SCRIPT_CONTEXT="+contextTaskEpilog)
	if _, err := runScript(scriptRun{path: s.TaskEpilog, env: env, dir: r.req.Cwd, timeout: scriptTimeout(s), cred: r.a.taskCred(&r.req.Job)}); err != nil {
		r.a.log.Warn("task epilog failed", "job", r.req.Job.JobID, "step", r.req.StepID, "err", err)
	}
}

// RunNodeEpilog runs slurm.conf's Epilog for a job that ended, on a node of
// the job other than its batch host (the controller asks every such node).
func (a *Agent) RunNodeEpilog(req api.NodeEpilogRequest) api.NodeEpilogResult {
	s := req.Job.Scripts
	if s == nil || s.Epilog == "" {
		return api.NodeEpilogResult{}
	}
	env := scriptEnv(&req.Job, a.cfg.Name, contextEpilog, &req.Status)
	if _, err := runScript(scriptRun{path: s.Epilog, env: env, dir: "/", timeout: scriptTimeout(s)}); err != nil {
		a.log.Error("epilog failed", "job", req.Job.JobID, "err", err)
		return api.NodeEpilogResult{Failed: true, Error: err.Error()}
	}
	return api.NodeEpilogResult{}
}

// registerNodeEpilog adds the endpoint through which the controller has a
// non-batch node of an ended job run the Epilog.
func (a *Agent) registerNodeEpilog(mux *http.ServeMux) {
	mux.HandleFunc("POST "+api.PathAgentEpilog, func(w http.ResponseWriter, r *http.Request) {
		var req api.NodeEpilogRequest
		if err := api.DecodeAgentRequest(r, &req); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		api.WriteAgentJSON(w, http.StatusOK, a.RunNodeEpilog(req))
	})
}

// errStepProlog marks a step refused because the node's Prolog failed.
var errStepProlog = errors.New("Prolog failed")

// nodePrologs records, per agent, the job runs whose Prolog ran on this
// node for a step (nodes other than the batch host).
var nodePrologs sync.Map // *Agent -> *prologRuns

type prologRuns struct {
	mu   sync.Mutex
	done map[uint32]int // job -> restart count
}

// stepNodeProlog runs the Prolog on a node of a job other than its batch
// host before the job's first step there, as slurmd does without
// PrologFlags=Alloc (oracle 24.11: an -N2 job's second node runs its
// Prolog only when a step reaches it). A failed Prolog refuses the step.
func (a *Agent) stepNodeProlog(req *api.AgentStepLaunch) error {
	job := &req.Job
	s := job.Scripts
	if s == nil || s.Prolog == "" {
		return nil
	}
	if nodes, err := hostlist.Expand(job.NodeList); err != nil || len(nodes) == 0 || nodes[0] == a.cfg.Name {
		return nil // the batch host ran it before the batch script
	}
	v, _ := nodePrologs.LoadOrStore(a, &prologRuns{done: map[uint32]int{}})
	pr := v.(*prologRuns)
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if r, ok := pr.done[job.JobID]; ok && r >= job.RestartCount {
		return nil
	}
	env := scriptEnv(job, a.cfg.Name, contextProlog, nil)
	if _, err := runScript(scriptRun{path: s.Prolog, env: env, dir: "/", timeout: scriptTimeout(s)}); err != nil {
		a.log.Error("prolog failed", "job", job.JobID, "err", err)
		return fmt.Errorf("job %d on %s: %w", job.JobID, a.cfg.Name, errStepProlog)
	}
	if len(pr.done) > 100000 {
		clear(pr.done)
	}
	pr.done[job.JobID] = job.RestartCount
	return nil
}
