package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

func init() {
	Register(Command{Name: "srun", Summary: "run a command as a job (or as a step of the current allocation), streaming its output", Link: true, Run: runSrun})
}

const srunUsage = `Usage: srun [OPTIONS...] COMMAND [ARGS...]
Outside an allocation: submits COMMAND as a job (-N -n -c -p -q -A -J -t
--mem --gres ...: sbatch's options), streams its output while it runs and
exits with its exit code; Ctrl-C cancels it. --pty: COMMAND runs here,
attached to this terminal, inside a fresh allocation.
Inside an allocation (SLURM_JOB_ID set, e.g. under salloc or in a batch
script): runs COMMAND as a step of that job (-n copies, SLURM_PROCID set),
recorded in sacct as JOBID.STEP.
`

// srunOpts are srun's own options on top of sbatch's.
type srunOpts struct {
	req     *SbatchRequest
	command []string
	pty     bool
	label   bool
	jobID   string
}

// parseSrun strips srun's own options, parses the rest with sbatch's
// option set (up to the command) and returns the command.
func parseSrun(args []string) (*srunOpts, error) {
	o := &srunOpts{}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, args[i:]...)
			break
		}
		switch {
		case a == "--pty":
			o.pty = true
		case a == "-l" || a == "--label":
			o.label = true
		case a == "--jobid" && i+1 < len(args):
			o.jobID = args[i+1]
			i++
		case strings.HasPrefix(a, "--jobid="):
			o.jobID = strings.TrimPrefix(a, "--jobid=")
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		default:
			rest = append(rest, a)
			if srunTakesValue(a) && i+1 < len(args) {
				rest = append(rest, args[i+1])
				i++
			}
		}
	}
	req, cmd, err := ParseSbatchOptions(rest)
	if err != nil {
		return nil, err
	}
	o.req, o.command = req, cmd
	return o, nil
}

// srunTakesValue reports whether a short or long option written without
// '=' takes the next word as its value (so that the scan above does not
// mistake the value for the command).
func srunTakesValue(a string) bool {
	if strings.Contains(a, "=") {
		return false
	}
	switch a {
	case "-N", "-n", "-c", "-p", "-q", "-A", "-J", "-t", "-w", "-x", "-C", "-D", "-o", "-e", "-i", "-G", "-d", "-L",
		"--nodes", "--ntasks", "--cpus-per-task", "--partition", "--qos", "--account", "--job-name", "--time",
		"--mem", "--mem-per-cpu", "--gres", "--gpus", "--gpus-per-node", "--nodelist", "--exclude", "--constraint",
		"--chdir", "--output", "--error", "--input", "--dependency", "--licenses", "--export", "--begin",
		"--ntasks-per-node", "--reservation", "--comment", "--nice":
		return true
	}
	return false
}

func runSrun(ctx context.Context, env *Env, args []string) int {
	o, err := parseSrun(args)
	if err != nil {
		return Errorf(env, "srun", "%v", err)
	}
	if o.req.Help || o.req.Usage {
		fmt.Fprint(env.Stdout, srunUsage)
		return 0
	}
	if len(o.command) == 0 {
		return Errorf(env, "srun", "No command given to execute.")
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "srun", err)
	}
	job := o.jobID
	if job == "" {
		job = env.Getenv("SLURM_JOB_ID")
	}
	if job != "" {
		return srunStep(ctx, env, cl, o, job)
	}
	if o.pty {
		return sallocAllocate(ctx, env, cl, "srun", o.req, o.command)
	}
	return srunJob(ctx, env, cl, o)
}

// srunQuote quotes words for /bin/sh.
func srunQuote(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// srunJob runs the command as a new job. Design: the agent writes the
// job's output (stdout and stderr) to a private file srun created, and
// srun follows that file until the job ends, then exits with the job's
// exit code (docs/differences.md: output arrives in chunks, not per
// line as Slurm's I/O forwarding does, and stdin is not forwarded).
func srunJob(ctx context.Context, env *Env, cl *api.Client, o *srunOpts) int {
	dir, err := os.MkdirTemp("", "srun-")
	if err != nil {
		return Errorf(env, "srun", "%v", err)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "output")
	if err := os.WriteFile(out, nil, 0o600); err != nil {
		return Errorf(env, "srun", "%v", err)
	}
	spec := o.req.Spec
	if spec.Name == "" {
		spec.Name = filepath.Base(o.command[0])
	}
	spec.Script = "#!/bin/sh\n# srun\nexec " + srunQuote(o.command) + "\n"
	spec.Output, spec.Error, spec.OpenMode = out, out, "append"
	fillSubmitContext(env, &spec)
	res, err := cl.Submit(ctx, api.SubmitRequest{Spec: spec})
	if err != nil {
		return srunSubmitFailed(env, err)
	}
	id := strconv.FormatUint(uint64(res.JobID), 10)
	return srunFollow(ctx, env, cl, id, out)
}

func srunSubmitFailed(env *Env, err error) int {
	var ae *api.Error
	if errors.As(err, &ae) {
		if ae.Reason != "" {
			Errorf(env, "srun", "%s", ae.Reason)
		}
		return Errorf(env, "srun", "Unable to allocate resources: %s", ae.Message)
	}
	return clientError(env, "srun", err)
}

// srunFollow copies the output file to stdout while job id is pending or
// running and returns its exit code; a cancelled context cancels the job.
func srunFollow(ctx context.Context, env *Env, cl *api.Client, id, path string) int {
	f, err := os.Open(path)
	if err != nil {
		return Errorf(env, "srun", "%v", err)
	}
	defer f.Close()
	queued, t0 := false, time.Now()
	for {
		io.Copy(env.Stdout, f)
		if ctx.Err() != nil {
			cl.Control(context.Background(), api.JobControlRequest{Op: api.OpCancel, Jobs: []string{id}})
			fmt.Fprintf(env.Stderr, "srun: Job step aborted: job %s cancelled\n", id)
			return 130
		}
		res, err := cl.Jobs(ctx, api.JobQuery{IDs: []string{id}})
		if err != nil || len(res.Jobs) == 0 {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		j := res.Jobs[0]
		switch j.State {
		case "PENDING":
			if !queued && time.Since(t0) > srunQueuedAfter {
				fmt.Fprintf(env.Stderr, "srun: job %s queued and waiting for resources\n", id)
				queued = true
			}
		case "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING":
		default:
			time.Sleep(20 * time.Millisecond) // the agent closes the file as it reports
			io.Copy(env.Stdout, f)
			return srunExit(env, &j)
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// srunQueuedAfter is how long a job may stay pending before srun/salloc
// say it is queued (a job the next cycle starts is "granted" at once).
const srunQueuedAfter = time.Second

// srunExit turns a finished job into srun's exit status and message.
func srunExit(env *Env, j *api.JobInfo) int {
	code, sig := srunExitParts(j.ExitCode)
	switch {
	case j.State == "COMPLETED":
		return 0
	case j.State == "CANCELLED":
		fmt.Fprintf(env.Stderr, "srun: error: job %d: CANCELLED\n", j.JobID)
	case j.State == "TIMEOUT":
		fmt.Fprintf(env.Stderr, "srun: error: job %d: task 0: TIMEOUT (time limit reached)\n", j.JobID)
	case sig != 0:
		fmt.Fprintf(env.Stderr, "srun: error: job %d: task 0: Killed by signal %d\n", j.JobID, sig)
		return 128 + sig
	default:
		fmt.Fprintf(env.Stderr, "srun: error: job %d: task 0: Exited with exit code %d\n", j.JobID, code)
	}
	if code == 0 {
		return 1
	}
	return code
}

func srunExitParts(s string) (int, int) {
	a, b, _ := strings.Cut(s, ":")
	code, _ := strconv.Atoi(a)
	sig, _ := strconv.Atoi(b)
	return code, sig
}

// srunStep runs the command as a step of a running job: the controller
// numbers the step and checks the caller owns the job; the tasks run
// here (Sluice's nodes share this machine under `sluice up`; on a
// multi-host cluster steps run on the submit host: docs/differences.md).
func srunStep(ctx context.Context, env *Env, cl *api.Client, o *srunOpts, job string) int {
	n, err := strconv.ParseUint(strings.Split(job, "_")[0], 10, 32)
	if err != nil {
		return Errorf(env, "srun", "Invalid job id %s", job)
	}
	ntasks := max(o.req.Spec.NTasks, 1)
	name := o.req.Spec.Name
	if name == "" {
		name = filepath.Base(o.command[0])
	}
	st, err := cl.Step(ctx, api.StepRequest{Op: api.StepBegin, JobID: uint32(n), Name: name, NTasks: ntasks})
	if err != nil {
		var ae *api.Error
		if errors.As(err, &ae) {
			return Errorf(env, "srun", "Unable to create step for job %s: %s", job, ae.Message)
		}
		return clientError(env, "srun", err)
	}
	codes := make([]int, ntasks)
	var wg sync.WaitGroup
	var outMu sync.Mutex
	for t := 0; t < ntasks; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[t] = srunTask(ctx, env, o, st, t, ntasks, &outMu)
		}()
	}
	wg.Wait()
	rc, state := 0, "COMPLETED"
	for _, c := range codes {
		if c != 0 && rc == 0 {
			rc, state = c, "FAILED"
		}
	}
	exit := strconv.Itoa(rc) + ":0"
	if rc > 128 {
		exit, state = "0:"+strconv.Itoa(rc-128), "CANCELLED"
	}
	if _, err := cl.Step(context.Background(), api.StepRequest{Op: api.StepEnd, JobID: st.JobID, StepID: st.StepID,
		ExitCode: exit, State: state}); err != nil {
		fmt.Fprintf(env.Stderr, "srun: error: recording the end of step %d.%d: %v\n", st.JobID, st.StepID, err)
	}
	return rc
}

// srunTask runs one task of a step with Slurm's step environment.
func srunTask(ctx context.Context, env *Env, o *srunOpts, st api.StepResponse, task, ntasks int, mu *sync.Mutex) int {
	cmd := exec.CommandContext(ctx, o.command[0], o.command[1:]...)
	cmd.Dir = env.Cwd
	cmd.Env = append(os.Environ(),
		"SLURM_JOB_ID="+strconv.FormatUint(uint64(st.JobID), 10), "SLURM_JOBID="+strconv.FormatUint(uint64(st.JobID), 10),
		"SLURM_STEP_ID="+strconv.Itoa(st.StepID), "SLURM_STEPID="+strconv.Itoa(st.StepID),
		"SLURM_PROCID="+strconv.Itoa(task), "SLURM_LOCALID="+strconv.Itoa(task), "SLURM_NTASKS="+strconv.Itoa(ntasks),
		"SLURM_NPROCS="+strconv.Itoa(ntasks), "SLURM_STEP_NUM_TASKS="+strconv.Itoa(ntasks),
		"SLURM_STEP_NODELIST="+st.NodeList, "SLURM_NODEID=0")
	if conf := env.Getenv("SLURM_CONF"); conf != "" {
		cmd.Env = append(cmd.Env, "SLURM_CONF="+conf)
	}
	var stdout, stderr io.Writer = env.Stdout, env.Stderr
	if o.label {
		stdout = &srunLabelWriter{w: env.Stdout, prefix: strconv.Itoa(task) + ": ", mu: mu}
		stderr = &srunLabelWriter{w: env.Stderr, prefix: strconv.Itoa(task) + ": ", mu: mu}
	} else {
		stdout, stderr = &srunLockedWriter{w: env.Stdout, mu: mu}, &srunLockedWriter{w: env.Stderr, mu: mu}
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if task == 0 {
		cmd.Stdin = env.Stdin
	}
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return ee.ExitCode()
		}
		fmt.Fprintf(env.Stderr, "srun: error: task %d: %v\n", task, err)
		return 2
	}
	return 0
}

// srunLockedWriter serialises writes of concurrent tasks.
type srunLockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *srunLockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// srunLabelWriter is srun -l: every line prefixed with the task number.
type srunLabelWriter struct {
	w      io.Writer
	prefix string
	mu     *sync.Mutex
	buf    []byte
}

func (l *srunLabelWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			return len(p), nil
		}
		if _, err := io.WriteString(l.w, l.prefix+string(l.buf[:i+1])); err != nil {
			return 0, err
		}
		l.buf = l.buf[i+1:]
	}
}
