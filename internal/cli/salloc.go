package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/spf13/pflag"
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

// sallocOnly are salloc's options that sbatch does not have.
var sallocOnly = map[string]func(*SbatchRequest){
	"--no-shell": func(r *SbatchRequest) { r.NoShell = true },
	"--bell":     func(r *SbatchRequest) { r.Bell, r.NoBell = true, false },
	"--no-bell":  func(r *SbatchRequest) { r.NoBell, r.Bell = true, false },
}

// parseSalloc reads salloc's options: sbatch's, and salloc's own
// (sallocOnly) up to the command.
func parseSalloc(args []string) (*SbatchRequest, []string, error) {
	var rest []string
	var own []func(*SbatchRequest)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			rest = append(rest, args[i:]...)
			break
		}
		if set, ok := sallocOnly[a]; ok {
			own = append(own, set)
			continue
		}
		rest = append(rest, a)
		if sbatchOptionTakesValue(a) && i+1 < len(args) {
			rest = append(rest, args[i+1])
			i++
		}
	}
	req, command, err := ParseSbatchOptions(rest)
	if err != nil {
		return nil, nil, err
	}
	for _, set := range own {
		set(req)
	}
	return req, command, nil
}

// sbatchOptionTakesValue says whether a is an sbatch option whose value,
// required, is the next argument ("-J name", "--time 5").
func sbatchOptionTakesValue(a string) bool {
	if strings.Contains(a, "=") || len(a) < 2 {
		return false
	}
	fs := newSbatchFlagSet(&SbatchRequest{})
	var f *pflag.Flag
	switch {
	case strings.HasPrefix(a, "--"):
		f = fs.Lookup(a[2:])
	case len(a) == 2:
		f = fs.ShorthandLookup(a[1:])
	}
	return f != nil && f.NoOptDefVal == ""
}

func runSalloc(ctx context.Context, env *Env, args []string) int {
	req, command, err := parseSalloc(args)
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
	return allocateAndRun(ctx, env, cl, me, req, true, func(j *api.JobInfo, cluster string) (int, bool) {
		return sallocRun(ctx, env, command, j, cluster, req.Spec.NTasks), false
	})
}

// allocateAndRun obtains an allocation and runs run in it. The job's
// script only waits: the allocation is held through the controller, not
// through anything on the nodes. While it holds it salloc says it is alive
// every allocKeepalive (OpKeepalive: the controller ends an allocation
// that goes silent, salloc killed); at the end it ends it (OpComplete)
// with run's exit code, so sacct shows the allocation COMPLETED (or FAILED
// with the command's code), as Slurm records an salloc job. run may ask
// for the job to be cancelled instead (an interrupted srun). verbose
// prints salloc's allocation messages.
func allocateAndRun(ctx context.Context, env *Env, cl *api.Client, me string, req *SbatchRequest, verbose bool,
	run func(j *api.JobInfo, cluster string) (int, bool)) int {
	spec := req.Spec
	spec.NoShell = req.NoShell
	switch {
	case spec.Name == "" && req.NoShell:
		spec.Name = "no-shell" // Slurm's name for it (oracle)
	case spec.Name == "":
		spec.Name = "interactive"
	}
	spec.Allocation = true
	// The marker line tells accounting this job has no batch step
	// (api.AllocationMarker).
	spec.Script = "#!/bin/sh\n# " + me + " " + api.AllocationMarker + " (" + me +
		" relinquishes it through the controller)\nwhile :; do sleep 3600; done\n"
	spec.Output, spec.Error = "/dev/null", "/dev/null"
	fillSubmitContext(env, &spec)
	res, err := cl.Submit(ctx, api.SubmitRequest{Spec: spec, Interactive: true})
	if err != nil {
		return sallocSubmitError(env, me, err)
	}
	id := strconv.FormatUint(uint64(res.JobID), 10)
	// Said alive from the submission on: a salloc killed while it waits
	// leaves no allocation behind either.
	stopKeepalive := keepAllocation(cl, id)
	defer stopKeepalive()
	t0 := time.Now()
	j, ok := sallocWaitRunning(ctx, env, cl, me, id, verbose)
	if !ok {
		return 1
	}
	if me == "salloc" && ringBell(req, time.Since(t0), writerIsTerminal(env.Stdout)) {
		fmt.Fprint(env.Stdout, "\a")
	}
	if verbose {
		fmt.Fprintf(env.Stderr, "%s: Granted job allocation %s\n", me, id)
		fmt.Fprintf(env.Stderr, "%s: Nodes %s are ready for job\n", me, j.NodeList)
	}
	if req.NoShell {
		// salloc --no-shell leaves at once; the allocation stays until it
		// is cancelled or reaches its time limit (the controller does not
		// wait for a holder: JobSpec.NoShell).
		return 0
	}
	rc, cancel := run(&j, res.Cluster)
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
		cl.Control(context.Background(), api.JobControlRequest{Op: api.OpComplete, Jobs: []string{id}, ExitCode: rc & 0xff})
	}
	sallocWaitEnded(cl, id, 5*time.Second)
	return rc
}

// bellAfter is how long an allocation pends before salloc rings the
// terminal bell when it is granted (Slurm's default, without --bell or
// --no-bell).
const bellAfter = 10 * time.Second

// ringBell says whether salloc rings the bell on a grant that took
// waited: only on a terminal, always with --bell, never with --no-bell,
// else after bellAfter.
func ringBell(req *SbatchRequest, waited time.Duration, tty bool) bool {
	switch {
	case !tty || req.NoBell:
		return false
	case req.Bell:
		return true
	}
	return waited > bellAfter
}

// writerIsTerminal says whether w is a terminal.
func writerIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// sallocSubmitError reports a refused allocation as salloc (or srun) does.
func sallocSubmitError(env *Env, me string, err error) int {
	var ae *api.Error
	if !errors.As(err, &ae) {
		return clientError(env, me, err)
	}
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

// sallocWaitRunning polls until the allocation runs; Ctrl-C cancels it.
// An allocation granted at once says nothing here; one that waits is
// "Pending job allocation" (salloc only) and "queued and waiting".
func sallocWaitRunning(ctx context.Context, env *Env, cl *api.Client, me, id string, verbose bool) (api.JobInfo, bool) {
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
					if verbose {
						fmt.Fprintf(env.Stderr, "%s: Pending job allocation %s\n", me, id)
					}
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

// sallocEnv is the environment salloc gives its command, as Slurm 24.11's
// salloc sets it: the job's identity, nodes, CPUs per node and tasks per
// node (one per node unless -n), SLURM_NTASKS only when -n was given.
func sallocEnv(env *Env, j *api.JobInfo, cluster string, ntasks int) []string {
	id := strconv.FormatUint(uint64(j.JobID), 10)
	cpn := j.CPUsPerNode
	if cpn == "" {
		cpn = strconv.Itoa(j.NumCPUs / max(j.NumNodes, 1))
	}
	host, _ := os.Hostname()
	out := []string{"SLURM_JOB_ID=" + id, "SLURM_JOBID=" + id, "SLURM_JOB_NAME=" + j.Name,
		"SLURM_JOB_NODELIST=" + j.NodeList, "SLURM_NODELIST=" + j.NodeList, "SLURM_JOB_NUM_NODES=" + strconv.Itoa(j.NumNodes),
		"SLURM_NNODES=" + strconv.Itoa(j.NumNodes), "SLURM_JOB_PARTITION=" + j.Partition, "SLURM_JOB_ACCOUNT=" + j.Account,
		"SLURM_JOB_QOS=" + j.QOS, "SLURM_SUBMIT_DIR=" + env.Cwd, "SLURM_SUBMIT_HOST=" + host,
		"SLURM_JOB_CPUS_PER_NODE=" + cpn}
	if cluster != "" {
		out = append(out, "SLURM_CLUSTER_NAME="+cluster)
	}
	counts := make([]int, max(j.NumNodes, 1))
	for i := range counts {
		counts[i] = 1
	}
	if ntasks > 0 {
		out = append(out, "SLURM_NTASKS="+strconv.Itoa(ntasks), "SLURM_NPROCS="+strconv.Itoa(ntasks))
		for i := range counts {
			counts[i] = ntasks / len(counts)
			if i < ntasks%len(counts) {
				counts[i]++
			}
		}
	}
	out = append(out, "SLURM_TASKS_PER_NODE="+compressCounts(counts))
	return out
}

// compressCounts prints per-node counts as Slurm does: "2(x3),1".
func compressCounts(counts []int) string {
	var parts []string
	for i := 0; i < len(counts); {
		k := i
		for k < len(counts) && counts[k] == counts[i] {
			k++
		}
		if k-i > 1 {
			parts = append(parts, fmt.Sprintf("%d(x%d)", counts[i], k-i))
		} else {
			parts = append(parts, strconv.Itoa(counts[i]))
		}
		i = k
	}
	return strings.Join(parts, ",")
}

// sallocRun runs command with the allocation's environment.
func sallocRun(ctx context.Context, env *Env, command []string, j *api.JobInfo, cluster string, ntasks int) int {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = env.Cwd
	cmd.Env = append(os.Environ(), sallocEnv(env, j, cluster, ntasks)...)
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

// keepAllocation tells the controller every allocKeepalive that this
// process still holds allocation id, until the returned stop is called.
func keepAllocation(cl *api.Client, id string) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(allocKeepalive)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), allocKeepalive)
				cl.Control(ctx, api.JobControlRequest{Op: api.OpKeepalive, Jobs: []string{id}})
				cancel()
			}
		}
	}()
	return func() { close(done) }
}

// allocKeepalive is how often an allocation's holder says it is alive
// (the controller ends an allocation silent for 30 s).
const allocKeepalive = 10 * time.Second

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
