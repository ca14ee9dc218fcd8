package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/pmi"
)

func init() {
	Register(Command{Name: "srun", Summary: "run a command as a job (or as a step of the current allocation), streaming its output", Link: true, Run: runSrun})
}

const srunUsage = `Usage: srun [OPTIONS...] COMMAND [ARGS...]
Inside an allocation (SLURM_JOB_ID set, e.g. under salloc or in a batch
script, or --jobid): runs COMMAND as a step of that job, its -n tasks
spread over the job's nodes (-N) and started there by the node agents;
their output comes back here (-l/--label prefixes "TASK: "), stdin goes to
the tasks (-i/--input=all|none|TASKID|FILE), Ctrl-C is forwarded to them,
-t limits the step's time. The step is recorded in sacct as JOBID.STEP and
srun exits with the highest exit code of its tasks.
Outside an allocation: obtains an allocation with sbatch's options (-N -n
-c -p -q -A -J -t --mem --gres ...), runs COMMAND in it as step 0 and
releases it. --pty: task 0 runs on a pseudo-terminal of the step's first
node, attached to this terminal.
Step options: --cpu-bind, -m/--distribution, --exact, -O, --overlap,
-K/--kill-on-bad-exit, --multi-prog, --mpi (--mpi=list).
`

// srunOpts are srun's own options on top of sbatch's.
type srunOpts struct {
	req        *SbatchRequest
	command    []string
	pty        bool
	label      bool
	unbuffered bool
	jobID      string
	// input is --input: all (default), none, a task id or a file name.
	input string
	// Step options of Slurm's srun (srun_opts.go).
	cpuBind      *api.CPUBind
	distribution string
	planeSize    int
	mpi          string
	exact        bool
	overcommit   bool
	killBadExit  bool
	killSet      bool // -K given (else slurm.conf's KillOnBadExit)
	multiProg    bool
	// disableStatus is -X/--disable-status: Ctrl-C only forwards SIGINT
	// to the tasks; quitOnInterrupt is --quit-on-interrupt: Ctrl-C ends
	// the step at once.
	disableStatus, quitOnInterrupt bool
	// notices are lines srun prints on stderr before it runs the step.
	notices []string
}

// srunValue returns the value of option a (a long name or a short one
// written "-x") at args[i]: "--opt=v", "--opt v", "-xv" or "-x v"; the
// index of the last word used; ok false when a is not that option.
func srunValue(args []string, i int, long, short string) (string, int, bool) {
	a := args[i]
	switch {
	case a == long || (short != "" && a == short):
		if i+1 < len(args) {
			return args[i+1], i + 1, true
		}
		return "", i, true
	case strings.HasPrefix(a, long+"="):
		return a[len(long)+1:], i, true
	case short != "" && strings.HasPrefix(a, short) && len(a) > 2 && !strings.HasPrefix(a, "--"):
		return a[2:], i, true
	}
	return "", i, false
}

// parseStepOption takes srun's step options at args[i] (srun_opts.go);
// it returns the index of the last word used, or ok false.
func (o *srunOpts) parseStepOption(args []string, i int) (int, bool, error) {
	a := args[i]
	switch {
	case a == "--exact":
		o.exact = true
		return i, true, nil
	case a == "-O" || a == "--overcommit":
		o.overcommit = true
		return i, true, nil
	case a == "--overlap":
		// Steps always share the allocation's CPUs here (docs/differences.md).
		return i, true, nil
	case a == "--multi-prog":
		o.multiProg = true
		return i, true, nil
	case a == "-K" || a == "--kill-on-bad-exit":
		o.killBadExit, o.killSet = true, true
		return i, true, nil
	case strings.HasPrefix(a, "--kill-on-bad-exit=") || (strings.HasPrefix(a, "-K") && !strings.HasPrefix(a, "--")):
		v := strings.TrimPrefix(strings.TrimPrefix(a, "--kill-on-bad-exit="), "-K")
		n, err := strconv.Atoi(v)
		if err != nil {
			return i, true, fmt.Errorf("Invalid --kill-on-bad-exit value: %s", v)
		}
		o.killBadExit, o.killSet = n != 0, true
		return i, true, nil
	}
	for _, opt := range []struct{ long, short string }{{"--cpu-bind", ""}, {"--cpu_bind", ""}, {"--distribution", "-m"},
		{"--mpi", ""}, {"--het-group", ""}} {
		v, j, ok := srunValue(args, i, opt.long, opt.short)
		if !ok {
			continue
		}
		var err error
		switch opt.long {
		case "--cpu-bind", "--cpu_bind":
			o.cpuBind, err = parseCPUBind(v, func(l string) { o.notices = append(o.notices, l) })
		case "--distribution":
			o.distribution, o.planeSize, err = parseDistribution(v)
		case "--mpi":
			o.mpi = v
		case "--het-group":
			err = hetGroupError(v)
		}
		return j, true, err
	}
	return i, false, nil
}

// parseSrun strips srun's own options, parses the rest with sbatch's
// option set (up to the command) and returns the command.
func parseSrun(args []string) (*srunOpts, error) {
	o := &srunOpts{}
	var rest, after []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, args[i:]...)
			break
		}
		j, ok, err := o.parseStepOption(args, i)
		if err != nil {
			return nil, err
		}
		if ok {
			i = j
			continue
		}
		switch {
		case a == "--pty":
			o.pty = true
		case a == "-l" || a == "--label":
			o.label = true
		case a == "-u" || a == "--unbuffered":
			o.unbuffered = true
		case a == "-X" || a == "--disable-status":
			o.disableStatus = true
		case a == "--quit-on-interrupt":
			o.quitOnInterrupt = true
		case (a == "-i" || a == "--input") && i+1 < len(args):
			o.input = args[i+1]
			i++
		case strings.HasPrefix(a, "--input="):
			o.input = strings.TrimPrefix(a, "--input=")
		case strings.HasPrefix(a, "-i") && len(a) > 2:
			o.input = a[2:]
		case a == "--mpi" && i+1 < len(args):
			o.mpi = args[i+1]
			i++
		case strings.HasPrefix(a, "--mpi="):
			o.mpi = strings.TrimPrefix(a, "--mpi=")
		case a == "--jobid" && i+1 < len(args):
			o.jobID = args[i+1]
			i++
		case strings.HasPrefix(a, "--jobid="):
			o.jobID = strings.TrimPrefix(a, "--jobid=")
		case a == "--":
			// Everything after "--" is the command, even words that
			// look like options.
			after = append([]string{}, args[i+1:]...)
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
	o.req, o.command = req, append(cmd, after...)
	if strings.HasPrefix(o.distribution, "arbitrary") {
		return nil, arbitraryError(req.Spec.NTasks)
	}
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
	var fatal *srunFatal
	if errors.As(err, &fatal) {
		for _, l := range fatal.lines {
			fmt.Fprintln(env.Stderr, l)
		}
		return fatal.code
	}
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			Errorf(env, "srun", "%s", line)
		}
		return 1
	}
	if o.req.Help || o.req.Usage {
		fmt.Fprint(env.Stdout, srunUsage)
		return 0
	}
	if o.mpi == "list" {
		fmt.Fprint(env.Stdout, srunMPIList())
		return 0
	}
	if len(o.command) == 0 {
		if o.multiProg {
			fmt.Fprintln(env.Stderr, "srun: fatal: No command given to execute.")
			return 1
		}
		return Errorf(env, "srun", "No command given to execute.")
	}
	for _, l := range o.notices {
		fmt.Fprintln(env.Stderr, l)
	}
	if !o.killSet {
		o.killBadExit = confKillOnBadExit(env)
	}
	if o.mpi = srunMPIType(env, o.mpi); o.mpi != "" {
		if err := checkMPI(o.mpi); errors.As(err, &fatal) {
			for _, l := range fatal.lines {
				fmt.Fprintln(env.Stderr, l)
			}
			return fatal.code
		}
	}
	if gpusBelowNodes(&o.req.Spec) {
		return gpusBelowNodesError(env, "srun")
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
	return srunJob(ctx, env, cl, o)
}

// srunJob runs the command outside an allocation as Slurm's srun does:
// an allocation for the job (sbatch's options), the command as its step
// 0 with the output streamed here, then the allocation released with the
// step's exit code (an interrupted srun cancels the job).
func srunJob(ctx context.Context, env *Env, cl *api.Client, o *srunOpts) int {
	req := *o.req
	if req.Spec.Name == "" {
		req.Spec.Name = filepath.Base(o.command[0])
	}
	return allocateAndRun(ctx, env, cl, "srun", &req, false, func(j *api.JobInfo, _ string) (int, bool) {
		rc := srunStep(ctx, env, cl, o, strconv.FormatUint(uint64(j.JobID), 10))
		return rc, ctx.Err() != nil
	})
}

// srunQuote quotes words for /bin/sh.
func srunQuote(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// srunQueuedAfter is how long a job may stay pending before srun/salloc
// say it is queued (a job the next cycle starts is "granted" at once).
const srunQueuedAfter = time.Second

// srunFewerTasks warns, as Slurm's srun does, when a step of fewer tasks
// than the allocation's nodes is asked without -N: srun takes the node
// count from SLURM_NNODES, then lowers it to the task count.
func srunFewerTasks(env *Env, spec *api.JobSpec) {
	nn, err := strconv.Atoi(env.Getenv("SLURM_NNODES"))
	if err != nil || spec.MinNodes > 0 || spec.NTasks <= 0 || nn <= spec.NTasks {
		return
	}
	fmt.Fprintf(env.Stderr, "srun: warning: can't run %d processes on %d nodes, setting nnodes to %d\n", spec.NTasks, nn, spec.NTasks)
}

// srunStep runs the command as a step of a running job: the controller
// checks the caller may use the job, lays the tasks out on its nodes and
// has their agents prepare them; srun then connects to each node for the
// tasks' I/O.
func srunStep(ctx context.Context, env *Env, cl *api.Client, o *srunOpts, job string) int {
	n, err := strconv.ParseUint(strings.Split(job, "_")[0], 10, 32)
	if err != nil || n == 0 {
		return Errorf(env, "srun", "Invalid job id %s", job)
	}
	var pty *api.StepPty
	if o.pty {
		var restore func()
		pty, restore = srunPty(env, o)
		defer restore()
	}
	in, input, err := srunInput(env, o.input)
	if err != nil {
		return Errorf(env, "srun", "%v", err)
	}
	if c, ok := in.(io.Closer); ok && in != env.Stdin {
		defer c.Close()
	}
	spec := &o.req.Spec
	name := spec.Name
	if name == "" {
		name = filepath.Base(o.command[0])
	}
	srunFewerTasks(env, spec)
	cwd := env.Cwd
	if spec.WorkDir != "" {
		cwd = spec.WorkDir
		if !filepath.IsAbs(cwd) {
			cwd = filepath.Join(env.Cwd, cwd)
		}
	}
	limit := spec.TimeLimitSec
	if limit == api.TimeInfinite {
		limit = 0
	}
	req := api.StepLaunchRequest{JobID: uint32(n), Name: name, Argv: o.command, Cwd: cwd,
		Env: srunStepEnviron(env, o), NTasks: spec.NTasks, NNodes: spec.MinNodes, CPUsPerTask: spec.CPUsPerTask,
		TimeLimitSec: limit, Input: input, Distribution: o.distribution, PlaneSize: o.planeSize, Overcommit: o.overcommit, Exact: o.exact,
		CPUBind: o.cpuBind, Pty: pty, MPI: o.mpi,
		NodeList: spec.NodeList, Exclude: spec.Exclude, SrunHost: shortHostname(), SrunPid: os.Getpid()}
	if o.multiProg {
		m, err := readMultiProg(env.Cwd, o.command[0], o.command[1:])
		var fatal *srunFatal
		if errors.As(err, &fatal) {
			fmt.Fprintln(env.Stderr, strings.Join(fatal.lines, "\n"))
			return fatal.code
		}
		req.MultiProg = m
	}
	res, err := cl.StepLaunch(ctx, req)
	if err != nil {
		var ae *api.Error
		switch {
		case errors.As(err, &ae) && strings.HasPrefix(ae.Message, api.MultiProgErrorPrefix):
			for _, l := range strings.Split(strings.TrimPrefix(ae.Message, api.MultiProgErrorPrefix), "\n") {
				fmt.Fprintf(env.Stderr, "srun: error: %s\n", l)
			}
			return 1
		case errors.As(err, &ae) && strings.HasPrefix(ae.Message, "Only allocated"):
			return Errorf(env, "srun", "%s", ae.Message)
		case errors.As(err, &ae):
			return Errorf(env, "srun", "Unable to create step for job %s: %s", job, ae.Message)
		}
		return clientError(env, "srun", err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(env.Stderr, "srun: Warning: %s\n", w)
	}
	if t, err := strconv.Atoi(input); err == nil && (t < 0 || t >= res.NTasks) {
		fmt.Fprintf(env.Stderr, "srun: error: --input=%s: task id out of range (step has %d tasks); stdin goes to no task\n", input, res.NTasks)
	}
	s := newSrunSession(env, o, res)
	closeFiles, err := s.openOutputs(spec, cwd)
	if err != nil {
		s.abandon()
		return Errorf(env, "srun", "%v", err)
	}
	defer closeFiles()
	return s.run(ctx, in)
}

// openOutputs applies srun's -o/-e: the step's stdout (and stderr, unless
// -e names another file) go to a file on this host instead of srun's own
// streams. %j, %s, %J (job.step) and %% are expanded.
func (s *srunSession) openOutputs(spec *api.JobSpec, cwd string) (func(), error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	open := func(pattern string) (*os.File, error) {
		r := strings.NewReplacer("%%", "%", "%j", strconv.FormatUint(uint64(s.res.JobID), 10),
			"%s", strconv.Itoa(s.res.StepID), "%J", fmt.Sprintf("%d.%d", s.res.JobID, s.res.StepID))
		path := r.Replace(pattern)
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, fmt.Errorf("Could not open output file %s: %v", path, err)
		}
		files = append(files, f)
		return f, nil
	}
	if spec.Output != "" {
		f, err := open(spec.Output)
		if err != nil {
			return closeAll, err
		}
		s.stdout, s.stderr = f, f
	}
	if spec.Error != "" && spec.Error != spec.Output {
		f, err := open(spec.Error)
		if err != nil {
			closeAll()
			return func() {}, err
		}
		s.stderr = f
	}
	return closeAll, nil
}

// abandon ends a step srun will not attach to: connecting and closing at
// once makes every node kill its part.
func (s *srunSession) abandon() {
	for _, n := range s.res.Nodes {
		if rw, err := api.DialStepIO(n, s.res.JobID, s.res.StepID, srunConnectTimeout); err == nil {
			rw.Close()
		}
	}
}

// srunInput resolves --input: all (default), none, a task id, or a file
// on this host broadcast to all tasks (srun(1) "IO Redirection").
func srunInput(env *Env, mode string) (io.Reader, string, error) {
	switch mode {
	case "", api.StepInputAll:
		return env.Stdin, api.StepInputAll, nil
	case api.StepInputNone:
		return nil, api.StepInputNone, nil
	}
	if _, err := strconv.Atoi(mode); err == nil {
		return env.Stdin, mode, nil
	}
	path := mode
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.Cwd, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("Could not open stdin file: %v", err)
	}
	return f, api.StepInputAll, nil
}

// srunEnviron is the environment srun passes to the tasks (--export=ALL):
// its own, as the command environment shows it.
func srunEnviron(env *Env) []string {
	seen := map[string]bool{}
	var out []string
	add := func(k, v string) {
		if !seen[k] && k != "SLURM_JWT" {
			seen[k] = true
			out = append(out, k+"="+v)
		}
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if ev := env.Getenv(k); ev != "" {
			v = ev
		}
		add(k, v)
	}
	for _, k := range []string{"SLURM_CONF", "SLURM_JOB_ID", "HOME", "PATH", "USER"} {
		if v := env.Getenv(k); v != "" {
			add(k, v)
		}
	}
	return out
}

// srunStepEnviron is srunEnviron with the variables srun itself sets for
// its tasks: SLURM_CPU_BIND*, SLURM_MPI_TYPE, SLURM_UMASK, SLURM_PRIO_PROCESS
// (srun's nice value) and the address
// of the launching host (SLURM_LAUNCH_NODE_IPADDR, SLURM_SRUN_COMM_HOST).
func srunStepEnviron(env *Env, o *srunOpts) []string {
	out := srunEnviron(env)
	set := map[string]string{"SLURM_UMASK": srunUmask()}
	if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0); err == nil {
		set["SLURM_PRIO_PROCESS"] = strconv.Itoa(20 - p) // the kernel answers 20-nice
	}
	for k, v := range o.cpuBind.Env() {
		set[k] = v
	}
	if o.mpi != "" && o.mpi != "none" {
		set["SLURM_MPI_TYPE"] = o.mpi
	}
	if ip := srunLaunchAddr(env); ip != "" {
		set["SLURM_LAUNCH_NODE_IPADDR"], set["SLURM_SRUN_COMM_HOST"] = ip, ip
	}
	out = slices.DeleteFunc(out, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, ok := set[k]
		return ok || strings.HasPrefix(k, "SLURM_CPU_BIND")
	})
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

// srunUmask is srun's umask as SLURM_UMASK prints it ("0022").
func srunUmask() string {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fmt.Sprintf("%04o", m)
}

// srunLaunchAddr is this host's address toward the controller (the
// address slurmd sees srun connect from): 127.0.0.1 over the local socket.
func srunLaunchAddr(env *Env) string {
	host := "127.0.0.1"
	if env.Getenv("SLURM_JWT") != "" {
		if cfg, _, err := conf.Load(confPath(env)); err == nil && len(cfg.SlurmctldHosts) > 0 {
			h := cfg.SlurmctldHosts[0].Addr
			if h == "" {
				h = cfg.SlurmctldHosts[0].Name
			}
			if c, err := net.Dial("udp", net.JoinHostPort(h, strconv.Itoa(cfg.SlurmctldPort))); err == nil {
				host = c.LocalAddr().(*net.UDPAddr).IP.String()
				c.Close()
			}
		}
	}
	return host
}

// srunSession is srun attached to a step: one I/O connection per node.
type srunSession struct {
	env            *Env
	o              *srunOpts
	res            api.StepLaunchResponse
	width          int
	stdout, stderr io.Writer

	outMu   sync.Mutex
	partial map[srunStream][]byte
	conns   []*srunConn
	exits   map[int]string
	lost    []string
	// fence gathers the nodes' PMI fences (--mpi=pmi2).
	fence *pmi.Fence
	// reported are tasks whose failure was printed when it came (-K).
	reported map[int]bool
	killed   bool
}

type srunStream struct {
	task   int
	stderr bool
}

// srunConn is the connection to one node of the step.
type srunConn struct {
	node api.StepNodeIO
	rw   io.ReadWriteCloser
	mu   sync.Mutex
}

func (c *srunConn) send(kind byte, task uint32, p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	api.WriteStepFrame(c.rw, kind, task, p)
}

func newSrunSession(env *Env, o *srunOpts, res api.StepLaunchResponse) *srunSession {
	return &srunSession{env: env, o: o, res: res, width: len(strconv.Itoa(max(res.NTasks-1, 0))),
		stdout: env.Stdout, stderr: env.Stderr, partial: map[srunStream][]byte{}, exits: map[int]string{}, reported: map[int]bool{}}
}

// srunConnectTimeout bounds the connection to a node agent.
const srunConnectTimeout = 30 * time.Second

// run connects, streams until every node is done and returns srun's exit
// status: the highest of its tasks' (128+signal for a task killed by a
// signal).
func (s *srunSession) run(ctx context.Context, in io.Reader) int {
	for _, n := range s.res.Nodes {
		rw, err := api.DialStepIO(n, s.res.JobID, s.res.StepID, srunConnectTimeout)
		if err != nil {
			for _, c := range s.conns {
				c.rw.Close()
			}
			return Errorf(s.env, "srun", "Unable to connect to node %s for step %d.%d: %v", n.Node, s.res.JobID, s.res.StepID, err)
		}
		s.conns = append(s.conns, &srunConn{node: n, rw: rw})
	}
	s.fence = pmi.NewFence(len(s.conns))
	var wg sync.WaitGroup
	for _, c := range s.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.read(c)
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	if s.res.Nodes != nil && s.stdinTargets() != nil {
		go s.forwardStdin(in)
	}
	select {
	case <-done:
	case <-ctx.Done():
		s.interrupt(done)
	}
	for _, c := range s.conns {
		c.rw.Close()
	}
	s.flushPartial()
	return s.report()
}

// interrupt is Ctrl-C: SIGINT goes to every task, then, if they have not
// ended within a second, the step's kill sequence (SIGCONT, SIGTERM,
// SIGKILL), as srun does for a Ctrl-C repeated within a second. With
// --quit-on-interrupt the kill sequence starts at once; with -X the
// tasks get SIGINT only and srun waits for them, as Slurm's srun does.
func (s *srunSession) interrupt(done <-chan struct{}) {
	if !s.o.quitOnInterrupt {
		fmt.Fprintf(s.env.Stderr, "srun: sending Ctrl-C to StepId=%d.%d\n", s.res.JobID, s.res.StepID)
		for _, c := range s.conns {
			c.send(api.StepFrameSignal, 0, []byte(strconv.Itoa(int(syscall.SIGINT))))
		}
		wait := time.After(time.Second)
		if s.o.disableStatus {
			wait = nil
		}
		select {
		case <-done:
			return
		case <-wait:
		}
	}
	fmt.Fprintf(s.env.Stderr, "srun: forcing job termination\n")
	for _, c := range s.conns {
		c.send(api.StepFrameKill, 0, nil)
	}
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		fmt.Fprintf(s.env.Stderr, "srun: error: Timed out waiting for job step to complete\n")
	}
}

// stdinTargets are the connections (and task) srun's stdin goes to.
func (s *srunSession) stdinTargets() map[*srunConn]uint32 {
	in := s.res.Nodes
	mode := s.o.input
	if mode == api.StepInputNone || len(in) == 0 {
		return nil
	}
	out := map[*srunConn]uint32{}
	task, err := strconv.Atoi(mode)
	for _, c := range s.conns {
		if err != nil {
			out[c] = api.StepAllTasks
			continue
		}
		for _, t := range c.node.Tasks {
			if t == task {
				out[c] = uint32(t)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// forwardStdin sends srun's stdin to the tasks until its end.
func (s *srunSession) forwardStdin(in io.Reader) {
	targets := s.stdinTargets()
	if in != nil {
		buf := make([]byte, 32<<10)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				for c, task := range targets {
					c.send(api.StepFrameStdin, task, buf[:n])
				}
			}
			if err != nil {
				break
			}
		}
	}
	for c, task := range targets {
		c.send(api.StepFrameStdinEOF, task, nil)
	}
}

// read handles one node's frames until its Done frame.
func (s *srunSession) read(c *srunConn) {
	for {
		kind, task, p, err := api.ReadStepFrame(c.rw)
		if err != nil {
			s.outMu.Lock()
			s.lost = append(s.lost, c.node.Node)
			s.outMu.Unlock()
			return
		}
		switch kind {
		case api.StepFrameStdout, api.StepFrameStderr:
			s.output(int(int32(task)), kind == api.StepFrameStderr, p)
		case api.StepFrameExit:
			var e api.StepTaskExit
			if json.Unmarshal(p, &e) == nil {
				s.outMu.Lock()
				s.exits[e.Task] = e.ExitCode
				s.flushTask(e.Task)
				s.killOnBadExit(c, e)
				s.outMu.Unlock()
			}
		case api.StepFramePMIFence:
			s.pmiFence(p)
		case api.StepFrameDone:
			return
		}
	}
}

// pmiFence takes a node's part of a PMI fence; the last part sends every
// pair put so far to every node.
func (s *srunSession) pmiFence(p []byte) {
	var f api.StepPMIFence
	if json.Unmarshal(p, &f) != nil {
		return
	}
	all, done := s.fence.Add(f.Seq, f.Pairs)
	if !done {
		return
	}
	body, err := json.Marshal(api.StepPMIFence{Seq: f.Seq, Pairs: all})
	if err != nil {
		return
	}
	for _, c := range s.conns {
		c.send(api.StepFramePMIFence, 0, body)
	}
}

// killOnBadExit is -K: the first task to fail ends the step. srun says
// so at once ("srun: error: n2: task 1: Exited with exit code 3", then
// "srun: Terminating StepId=12.0") and kills every node's part (caller
// holds outMu).
func (s *srunSession) killOnBadExit(c *srunConn, e api.StepTaskExit) {
	if !s.o.killBadExit || s.killed || e.ExitCode == "0:0" {
		return
	}
	s.killed = true
	s.reported[e.Task] = true
	code, sig := srunExitParts(e.ExitCode)
	msg := fmt.Sprintf("Exited with exit code %d", code)
	if sig != 0 {
		msg = srunSignalText(sig)
	}
	fmt.Fprintf(s.env.Stderr, "srun: error: %s: task %d: %s\n", c.node.Node, e.Task, msg)
	fmt.Fprintf(s.env.Stderr, "srun: Terminating StepId=%d.%d\n", s.res.JobID, s.res.StepID)
	for _, k := range s.conns {
		go k.send(api.StepFrameKill, 0, []byte("kill-on-bad-exit"))
	}
}

// output writes a task's output: whole lines (with "TASK: " under -l),
// as srun's default line-buffered output; -u writes as it comes.
// Messages of the node itself (task -1) are written as they are.
func (s *srunSession) output(task int, stderr bool, p []byte) {
	if s.o.pty && task > 0 {
		// srun(1) --pty: every task but task zero writes to /dev/null.
		return
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	w := s.stdout
	if stderr {
		w = s.stderr
	}
	if task < 0 || (s.o.unbuffered && !s.o.label) {
		w.Write(p)
		return
	}
	k := srunStream{task, stderr}
	buf := append(s.partial[k], p...)
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		s.writeLine(w, task, buf[:i+1])
		buf = buf[i+1:]
	}
	s.partial[k] = append(s.partial[k][:0], buf...)
}

func (s *srunSession) writeLine(w io.Writer, task int, line []byte) {
	if s.o.label {
		fmt.Fprintf(w, "%*d: ", s.width, task)
	}
	w.Write(line)
}

// flushTask writes what is left of an ended task's last line (caller
// holds outMu).
func (s *srunSession) flushTask(task int) {
	for _, stderr := range []bool{false, true} {
		k := srunStream{task, stderr}
		if len(s.partial[k]) > 0 {
			w := s.stdout
			if stderr {
				w = s.stderr
			}
			s.writeLine(w, task, s.partial[k])
			delete(s.partial, k)
		}
	}
}

func (s *srunSession) flushPartial() {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	for k := range s.partial {
		s.flushTask(k.task)
	}
}

// report prints srun's per-node errors for failed tasks ("srun: error:
// node1: tasks 0-1: Exited with exit code 3") and returns the exit status.
func (s *srunSession) report() int {
	rc := 0
	for _, c := range s.conns {
		groups := map[string][]int{}
		var order []string
		for _, t := range c.node.Tasks {
			e, ok := s.exits[t]
			if !ok {
				continue
			}
			code, sig := srunExitParts(e)
			if s.reported[t] {
				rc = max(rc, code)
				if sig != 0 {
					rc = max(rc, 128+sig)
				}
				continue
			}
			msg := ""
			switch {
			case sig != 0:
				msg = srunSignalText(sig)
				rc = max(rc, 128+sig)
			case code != 0:
				msg = fmt.Sprintf("Exited with exit code %d", code)
				rc = max(rc, code)
			default:
				continue
			}
			if _, ok := groups[msg]; !ok {
				order = append(order, msg)
			}
			groups[msg] = append(groups[msg], t)
		}
		for _, msg := range order {
			ts := groups[msg]
			word := "task"
			if len(ts) > 1 {
				word = "tasks"
			}
			fmt.Fprintf(s.env.Stderr, "srun: error: %s: %s %s: %s\n", c.node.Node, word, srunTaskRanges(ts), msg)
		}
	}
	for _, n := range s.lost {
		fmt.Fprintf(s.env.Stderr, "srun: error: Node failure on %s\n", n)
		rc = max(rc, 1)
	}
	if s.killed {
		fmt.Fprintf(s.env.Stderr, "srun: Force Terminated StepId=%d.%d\n", s.res.JobID, s.res.StepID)
	}
	return rc
}

func srunExitParts(s string) (int, int) {
	a, b, _ := strings.Cut(s, ":")
	code, _ := strconv.Atoi(a)
	sig, _ := strconv.Atoi(b)
	return code, sig
}

// srunSignalText is strsignal's text for a signal, the words srun prints
// for a task killed by one.
func srunSignalText(sig int) string { return api.SignalText(sig) }

// srunTaskRanges prints sorted task ids as ranges: "0-2,5".
func srunTaskRanges(ts []int) string {
	sort.Ints(ts)
	var parts []string
	for i := 0; i < len(ts); {
		k := i
		for k+1 < len(ts) && ts[k+1] == ts[k]+1 {
			k++
		}
		if k > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ts[i], ts[k]))
		} else {
			parts = append(parts, strconv.Itoa(ts[i]))
		}
		i = k + 1
	}
	return strings.Join(parts, ",")
}
