package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

func init() {
	Register(Command{Name: "salloc", Summary: "get an allocation, run a shell or command in it, sallocRelease it on exit", Link: true, Run: runSalloc})
}

const sallocUsage = `Usage: salloc [OPTIONS...] [COMMAND [ARGS...]]
Obtains an allocation (sbatch's options: -N -n -c -p -q -A -J -t --mem
--gres ...), runs COMMAND (default: $SHELL) here with SLURM_JOB_ID,
SLURM_JOB_NODELIST, ... set, so that srun inside it runs steps of the
allocation, and releases the allocation when COMMAND exits; the job ends
with COMMAND's exit code.
`

func runSalloc(ctx context.Context, env *Env, args []string) int {
	req, command, err := ParseSbatchOptions(args)
	if err != nil {
		return Errorf(env, "salloc", "%v", err)
	}
	if req.Help || req.Usage {
		fmt.Fprint(env.Stdout, sallocUsage)
		return 0
	}
	if gpusBelowNodes(&req.Spec) {
		return gpusBelowNodesError(env, "salloc")
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "salloc", err)
	}
	if len(command) == 0 {
		sh := env.Getenv("SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		command = []string{sh}
	}
	return sallocAllocate(ctx, env, cl, "salloc", req, command)
}

// sallocAllocate is salloc (and srun --pty): submit a job that holds the
// allocation, wait until it runs, run command here in it, then release
// it.
func sallocAllocate(ctx context.Context, env *Env, cl *api.Client, me string, req *SbatchRequest, command []string) int {
	return allocateAndRun(ctx, env, cl, me, req, true, func(j *api.JobInfo) (int, bool) {
		return sallocRun(ctx, env, command, j), false
	})
}

// allocateAndRun obtains an allocation and runs run in it: the job's
// script holds the allocation over a connection back to this process
// (allocHold); the exit code sent there at the end becomes the job's, so
// sacct shows the allocation COMPLETED (or FAILED with the command's
// code), as Slurm records an salloc job. run may ask for the job to be
// cancelled instead (an interrupted srun). verbose prints salloc's
// allocation messages.
func allocateAndRun(ctx context.Context, env *Env, cl *api.Client, me string, req *SbatchRequest, verbose bool,
	run func(j *api.JobInfo) (int, bool)) int {
	hold, err := newAllocHold(env)
	if err != nil {
		return Errorf(env, me, "%v", err)
	}
	defer hold.Close()
	spec := req.Spec
	if spec.Name == "" {
		spec.Name = "interactive"
	}
	spec.Script = hold.Script(me)
	spec.Output, spec.Error = "/dev/null", "/dev/null"
	fillSubmitContext(env, &spec)
	res, err := cl.Submit(ctx, api.SubmitRequest{Spec: spec, Interactive: true})
	if err != nil {
		var ae *api.Error
		if errors.As(err, &ae) {
			if ae.Plain {
				return Errorf(env, me, "%s", ae.Message)
			}
			if ae.Reason != "" {
				Errorf(env, me, "%s", ae.Reason)
			}
			if me == "srun" {
				return Errorf(env, me, "Unable to allocate resources: %s", ae.Message)
			}
			Errorf(env, me, "Job submit/allocate failed: %s", ae.Message)
			if ae.JobID != 0 { // failed at once (BadConstraints), as salloc reports it
				fmt.Fprintf(env.Stderr, "%s: Job allocation %d has been revoked.\n", me, ae.JobID)
			}
			return 1
		}
		return clientError(env, me, err)
	}
	id := strconv.FormatUint(uint64(res.JobID), 10)
	if verbose {
		fmt.Fprintf(env.Stderr, "%s: Pending job allocation %s\n", me, id)
	}
	j, ok := sallocWaitRunning(ctx, env, cl, me, id)
	if !ok {
		return 1
	}
	if verbose {
		fmt.Fprintf(env.Stderr, "%s: Granted job allocation %s\n", me, id)
	}
	rc, cancel := run(&j)
	if cancel {
		cl.Control(context.Background(), api.JobControlRequest{Op: api.OpCancel, Jobs: []string{id}})
		fmt.Fprintf(env.Stderr, "%s: Job step aborted: job %s cancelled\n", me, id)
		if rc == 0 {
			rc = 130
		}
	} else {
		if verbose {
			fmt.Fprintf(env.Stderr, "%s: Relinquishing job allocation %s\n", me, id)
		}
		hold.Release(rc, 10*time.Second)
	}
	sallocWaitEnded(cl, id, 5*time.Second)
	return rc
}

// sallocWaitRunning polls until the allocation runs; Ctrl-C cancels it.
func sallocWaitRunning(ctx context.Context, env *Env, cl *api.Client, me, id string) (api.JobInfo, bool) {
	queued, t0 := false, time.Now()
	for {
		res, err := cl.Jobs(context.Background(), api.JobQuery{IDs: []string{id}})
		if err == nil && len(res.Jobs) > 0 {
			j := res.Jobs[0]
			switch j.State {
			case "RUNNING":
				if queued {
					fmt.Fprintf(env.Stderr, "%s: job %s has been allocated resources\n", me, id)
				}
				return j, true
			case "PENDING":
				if !queued && time.Since(t0) > srunQueuedAfter {
					fmt.Fprintf(env.Stderr, "%s: job %s queued and waiting for resources\n", me, id)
					queued = true
				}
			default:
				Errorf(env, me, "Job allocation %s has been revoked (%s).", id, j.State)
				return j, false
			}
		}
		select {
		case <-ctx.Done():
			cl.Control(context.Background(), api.JobControlRequest{Op: api.OpCancel, Jobs: []string{id}})
			Errorf(env, me, "Job allocation %s has been revoked.", id)
			return api.JobInfo{}, false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sallocRun runs command with the allocation's environment.
func sallocRun(ctx context.Context, env *Env, command []string, j *api.JobInfo) int {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = env.Cwd
	id := strconv.FormatUint(uint64(j.JobID), 10)
	cmd.Env = append(os.Environ(), "SLURM_JOB_ID="+id, "SLURM_JOBID="+id, "SLURM_JOB_NAME="+j.Name,
		"SLURM_JOB_NODELIST="+j.NodeList, "SLURM_NODELIST="+j.NodeList, "SLURM_JOB_NUM_NODES="+strconv.Itoa(j.NumNodes),
		"SLURM_NNODES="+strconv.Itoa(j.NumNodes), "SLURM_JOB_PARTITION="+j.Partition, "SLURM_JOB_ACCOUNT="+j.Account,
		"SLURM_JOB_QOS="+j.QOS, "SLURM_SUBMIT_DIR="+env.Cwd, "SLURM_NTASKS="+strconv.Itoa(max(j.NumTasks, 1)),
		"SLURM_JOB_CPUS_PER_NODE="+strconv.Itoa(j.NumCPUs/max(j.NumNodes, 1)))
	if conf := env.Getenv("SLURM_CONF"); conf != "" {
		cmd.Env = append(cmd.Env, "SLURM_CONF="+conf)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.Stdin, env.Stdout, env.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(env.Stderr, "salloc: error: %s: %v\n", command[0], err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		cmd.Process.Signal(syscall.SIGHUP)
		err = <-done
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return 0
}

// sallocWaitEnded waits (bounded) until the job has left RUNNING.
func sallocWaitEnded(cl *api.Client, id string, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		res, err := cl.Jobs(context.Background(), api.JobQuery{IDs: []string{id}})
		if err != nil || len(res.Jobs) == 0 || res.Jobs[0].State != "RUNNING" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
