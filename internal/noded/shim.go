package noded

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ShimCommandName is the hidden subcommand the agent runs the supervisor
// with: `sluice noded-shim serve SPOOL` supervises every job of the node
// whose spool is SPOOL.
const ShimCommandName = "noded-shim"

// ShimMain is the entry point of `sluice noded-shim serve SPOOL`: the
// node's resident job supervisor (the part slurmstepd plays for batch
// jobs). One supervisor per node, not one per job: an exec of the sluice
// binary costs ~20 ms of page faults on a small VM, which a queue of short
// jobs pays per job, while a fork/exec of the job script from a resident
// process costs a fraction of that.
func ShimMain(args []string) int {
	if len(args) == 2 && args[0] == "serve" {
		return superviseMain(args[1])
	}
	fmt.Fprintln(os.Stderr, "usage: sluice noded-shim serve SPOOL (internal to sluice noded)")
	return 2
}

// supMsg is one line of the agent <-> supervisor protocol (JSON lines over
// the Unix socket). Ops: the supervisor greets with "hello" (its pid),
// answers "start" and "list" with "reply" (same Seq), and pushes "exit"
// when a job's batch script ends.
type supMsg struct {
	Seq     uint64    `json:"seq,omitempty"`
	Op      string    `json:"op"`
	Job     uint32    `json:"job,omitempty"`
	Restart int       `json:"restart,omitempty"`
	Dir     string    `json:"dir,omitempty"`
	Spec    *execSpec `json:"spec,omitempty"`
	PID     int       `json:"pid,omitempty"`
	Tick    uint64    `json:"tick,omitempty"`
	// Fence is the fencing delay in seconds, carried by "start" so that
	// a supervisor never runs a job without it (fence.go).
	Fence uint64 `json:"fence,omitempty"`
	// WaitStatus is the raw wait(2) status (-1: the job never started).
	WaitStatus int       `json:"ws,omitempty"`
	Time       time.Time `json:"time,omitzero"`
	Error      string    `json:"error,omitempty"`
	Jobs       []supJob  `json:"jobs,omitempty"`
	// RU is an exited script's rusage.
	RU *rusageUsage `json:"ru,omitempty"`
}

// supJob is a running job as the supervisor's "list" reports it.
type supJob struct {
	Job     uint32 `json:"job"`
	Restart int    `json:"restart,omitempty"`
	PID     int    `json:"pid"`
	Tick    uint64 `json:"tick"`
}

// supervisor is the state of `noded-shim serve`. mu serialises job starts
// with the reaping of job leaders: a leader's process group is killed
// before its zombie is reaped, under mu, so its pid (= pgid) cannot have
// been reused by a job started meanwhile. Starts are serialised anyway:
// the umask is per process.
type supervisor struct {
	spool string
	pid   int
	tick  uint64
	umask int

	// exits is the journal of exit statuses (SPOOL/exits.log).
	exits *exitLog

	// fenceAfter is how long the supervisor keeps jobs with no agent
	// (0: forever); agentGone is since when no agent is connected,
	// agentSeen when a connected one last said anything (fence.go).
	fenceAfter time.Duration
	agentGone  time.Time
	agentSeen  time.Time

	mu    sync.Mutex
	jobs  map[int]*supRun // by leader pid
	conns map[*supConn]bool
	idle  chan struct{}
}

// supRun is one running batch script.
type supRun struct {
	job     uint32
	restart int
	cgroup  string
	tick    uint64
}

// supConn is one agent connection; writes are serialised.
type supConn struct {
	c  net.Conn
	mu sync.Mutex
}

func (sc *supConn) send(m *supMsg) {
	data, _ := json.Marshal(m)
	sc.mu.Lock()
	sc.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	sc.c.Write(append(data, '\n'))
	sc.mu.Unlock()
}

// supervisorIdleGrace is how long a supervisor with neither jobs nor an
// agent waits before exiting (an agent restarting reconnects sooner).
const supervisorIdleGrace = 2 * time.Second

func superviseMain(spool string) int {
	// One P: job starts are serialised anyway, and with more the runtime
	// keeps threads spinning for work between the starts of a queue of
	// short jobs, CPU taken from the jobs themselves.
	runtime.GOMAXPROCS(1)
	// SIGHUP/SIGPIPE are caught, not ignored: ignored dispositions would be
	// inherited by the jobs, handled ones are reset to default on exec.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGPIPE, syscall.SIGCHLD)
	// Orphaned descendants of jobs are re-parented to the supervisor rather
	// than to init, so it reaps what jobs leave behind (some inits, in
	// containers, never do).
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	self, _ := readProcStat(os.Getpid())
	s := &supervisor{spool: spool, pid: os.Getpid(), tick: self.StartTick, agentGone: time.Now(), agentSeen: time.Now(),
		jobs: map[int]*supRun{}, conns: map[*supConn]bool{}, idle: make(chan struct{}, 1)}
	s.umask = syscall.Umask(0o022)
	syscall.Umask(s.umask)
	addr, err := supervisorAddr(spool) // supsecret.go
	if err != nil {
		handshake(supMsg{Op: "hello", Error: err.Error()})
		return 1
	}
	ln, err := net.Listen("unix", addr)
	if err != nil {
		// Another supervisor serves this spool: the agent connects to it.
		handshake(supMsg{Op: "hello", Error: fmt.Sprintf("listen: %v", err)})
		return 1
	}
	if s.exits, err = openExitLog(spool); err != nil {
		handshake(supMsg{Op: "hello", Error: fmt.Sprintf("exit journal: %v", err)})
		return 1
	}
	handshake(supMsg{Op: "hello", PID: s.pid, Tick: s.tick})
	go s.accept(ln)
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGCHLD {
				s.reap()
			}
		}
	}()
	// Safety net for a coalesced SIGCHLD, and the idle check.
	t := time.NewTicker(time.Second)
	idleSince := time.Now()
	for {
		select {
		case <-t.C:
			s.reap()
		case <-s.idle:
		}
		s.fenceIfAlone(time.Now()) // fence.go
		s.mu.Lock()
		busy := len(s.jobs) > 0 || len(s.conns) > 0
		s.mu.Unlock()
		switch {
		case busy:
			idleSince = time.Now()
		case time.Since(idleSince) >= supervisorIdleGrace:
			ln.Close()
			return 0
		}
	}
}

func (s *supervisor) wakeIdle() {
	select {
	case s.idle <- struct{}{}:
	default:
	}
}

func (s *supervisor) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if uid, ok := peerUID(c); !ok || uid != os.Geteuid() {
			c.Close() // only the node agent's own user may drive jobs
			continue
		}
		go s.serve(&supConn{c: c})
	}
}

// peerUID returns the uid of the other end of a Unix connection.
func peerUID(c net.Conn) (int, bool) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	var cerr error
	raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if cerr != nil || cred == nil {
		return 0, false
	}
	return int(cred.Uid), true
}

func (s *supervisor) serve(sc *supConn) {
	s.mu.Lock()
	s.conns[sc] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, sc)
		if len(s.conns) == 0 {
			s.agentGone = time.Now()
		}
		s.mu.Unlock()
		sc.c.Close()
		s.wakeIdle()
	}()
	sc.send(&supMsg{Op: "hello", PID: s.pid, Tick: s.tick})
	r := bufio.NewReaderSize(sc.c, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var m supMsg
		if json.Unmarshal(line, &m) != nil {
			return
		}
		s.heardAgent() // fence.go
		switch m.Op {
		case "start":
			if m.Fence > 0 {
				s.mu.Lock()
				s.fenceAfter = time.Duration(m.Fence) * time.Second
				s.mu.Unlock()
			}
			s.start(sc, &m)
		case "list":
			s.mu.Lock()
			rep := supMsg{Seq: m.Seq, Op: "reply"}
			for pid, run := range s.jobs {
				rep.Jobs = append(rep.Jobs, supJob{Job: run.job, Restart: run.restart, PID: pid, Tick: run.tick})
			}
			sc.send(&rep)
			s.mu.Unlock()
		case "fence":
			s.mu.Lock()
			s.fenceAfter = time.Duration(m.Tick) * time.Second
			s.mu.Unlock()
		case "forget":
			for _, j := range m.Jobs {
				s.exits.forget(j.Job, j.Restart)
			}
		}
		s.heardAgent() // a long start counts as hearing from the agent
	}
}

// start starts one job and answers with its pid. The answer is sent under
// mu so that it always precedes the job's exit event on the connection.
func (s *supervisor) start(sc *supConn, m *supMsg) {
	rep := supMsg{Seq: m.Seq, Op: "reply", Job: m.Job, Restart: m.Restart}
	if m.Spec == nil {
		rep.Error = "start without a job spec"
		sc.send(&rep)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pid, err := s.fork(*m.Spec)
	if err != nil {
		rep.Error = strings.TrimSpace(err.Error())
		s.exits.add(exitLine{Job: m.Job, Restart: m.Restart, WaitStatus: -1, Time: time.Now(), Error: rep.Error})
		sc.send(&rep)
		return
	}
	st, _ := readProcStat(pid)
	cg := m.Spec.Cgroup
	if cg == "" && len(m.Spec.CgroupV1) > 0 {
		cg = m.Spec.CgroupV1[0] // kills through its cgroup.procs
	}
	s.jobs[pid] = &supRun{job: m.Job, restart: m.Restart, cgroup: cg, tick: st.StartTick}
	rep.PID, rep.Tick = pid, st.StartTick
	sc.send(&rep)
}

// fork starts the job's process: files opened and the working directory
// checked as the job's user (as slurmstepd does), credentials and a new
// process group applied in the child, inside the job's cgroup when there
// is one. The caller holds mu.
func (s *supervisor) fork(spec execSpec) (int, error) {
	if len(spec.Argv) == 0 {
		return 0, fmt.Errorf("empty command")
	}
	if spec.Umask >= 0 {
		syscall.Umask(spec.Umask)
		defer syscall.Umask(s.umask)
	}
	var in, out, errf *os.File
	dir := spec.Dir
	var dirErr error
	err := asUser(spec, func() error {
		var err error
		if in, out, errf, err = openJobFiles(spec); err != nil {
			return err
		}
		// Resolving DIR/. needs search permission on DIR, what chdir
		// needs; the supervisor itself never changes directory (its
		// working directory is shared by every job start).
		_, dirErr = os.Stat(filepath.Join(dir, "."))
		return nil
	})
	if err != nil {
		return 0, err
	}
	defer func() {
		in.Close()
		out.Close()
		errf.Close()
	}()
	if dirErr != nil {
		// Slurm runs the job in /tmp when the working directory is not
		// usable by the user.
		fmt.Fprintf(errf, "slurmstepd: error: couldn't chdir to `%s': %v: going to /tmp instead\n", spec.Dir, unwrapPathErr(dirErr))
		dir = "/tmp"
	}
	path, err := lookPath(spec.Argv[0], envMap(spec.Env)["PATH"])
	if err != nil {
		return 0, fmt.Errorf("execve(): %s: %v", spec.Argv[0], err)
	}
	sys := &syscall.SysProcAttr{Setpgid: true}
	if spec.Setuid {
		sys.Credential = &syscall.Credential{Uid: spec.UID, Gid: spec.GID, Groups: spec.Groups}
	}
	attr := &syscall.ProcAttr{Dir: dir, Env: spec.Env, Files: []uintptr{in.Fd(), out.Fd(), errf.Fd()}, Sys: sys}
	if spec.Cgroup != "" {
		if cg, err := os.Open(spec.Cgroup); err == nil {
			withCg := *sys
			withCg.UseCgroupFD, withCg.CgroupFD = true, int(cg.Fd())
			cgAttr := *attr
			cgAttr.Sys = &withCg
			pid, err := forkExec(path, spec.Argv, &cgAttr, spec.CgroupV1)
			cg.Close()
			if err == nil {
				return pid, nil
			}
		}
	}
	pid, err := forkExec(path, spec.Argv, attr, spec.CgroupV1)
	if err != nil {
		return 0, fmt.Errorf("execve(): %s: %v", path, err)
	}
	if spec.Cgroup != "" {
		// clone3 into the cgroup was refused (old kernel): move it now.
		os.WriteFile(filepath.Join(spec.Cgroup, "cgroup.procs"), []byte(itoa(pid)), 0)
	}
	return pid, nil
}

// forkExec starts the job's process inside its v1 cgroups (v1: the
// directories, see startInCgroups).
func forkExec(path string, argv []string, attr *syscall.ProcAttr, v1 []string) (int, error) {
	return startInCgroups(v1, func(traced bool) (int, error) {
		a := *attr
		sys := *attr.Sys
		sys.Ptrace = traced
		a.Sys = &sys
		return forkExecRetry(path, argv, &a)
	})
}

// forkExecRetry is syscall.ForkExec that retries a moment while the
// kernel answers ETXTBSY: the job's script was just written by the agent,
// and a process the agent forked at that moment (a step's task) may still
// hold the script's descriptor until its own exec closes it.
func forkExecRetry(path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	var err error
	for try := 0; try < 50; try++ {
		var pid int
		if pid, err = syscall.ForkExec(path, argv, attr); err != syscall.ETXTBSY {
			return pid, err
		}
		time.Sleep(time.Duration(try+1) * 2 * time.Millisecond)
	}
	return 0, err
}

// reap collects every exited child. A job leader's end is final for the
// job: what the batch script left behind is killed first (its process
// group and cgroup, as Slurm's proctrack does when the batch step
// completes), then the status is recorded in the node's exit journal and
// pushed to the connected agent.
func (s *supervisor) reap() {
	for {
		s.mu.Lock()
		var info siginfo
		if err := waitidPeek(&info); err != nil || info.pid == 0 {
			s.mu.Unlock()
			return
		}
		pid := int(info.pid)
		run := s.jobs[pid]
		if run != nil {
			syscall.Kill(-pid, syscall.SIGKILL)
			if run.cgroup != "" {
				cgroupKill(run.cgroup)
			}
			delete(s.jobs, pid)
		}
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		syscall.Wait4(pid, &ws, syscall.WNOHANG, &ru)
		s.mu.Unlock()
		if run == nil {
			continue // an orphan the supervisor adopted as subreaper
		}
		ex := exitRecord{WaitStatus: int(ws), Time: time.Now(), RU: fromRusage(&ru)}
		if err := s.exits.add(exitLine{Job: run.job, Restart: run.restart, WaitStatus: ex.WaitStatus, Time: ex.Time, RU: ex.RU}); err != nil {
			fmt.Fprintf(os.Stderr, "noded-shim: job %d: write exit status: %v\n", run.job, err)
		}
		ev := &supMsg{Op: "exit", Job: run.job, Restart: run.restart, PID: pid, WaitStatus: ex.WaitStatus, Time: ex.Time, RU: ex.RU}
		s.mu.Lock()
		conns := make([]*supConn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()
		for _, c := range conns {
			c.send(ev)
		}
		s.wakeIdle()
	}
}

// siginfo is the part of siginfo_t that waitid fills for a child.
type siginfo struct {
	signo, errno, code, _ int32
	pid, uid, status      int32
	_                     [100]byte
}

// waitidPeek finds an exited child without reaping it (waitid WNOHANG
// WNOWAIT): its pid stays reserved until Wait4.
func waitidPeek(info *siginfo) error {
	const pAll = 0
	_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pAll, 0, uintptr(unsafe.Pointer(info)),
		syscall.WEXITED|syscall.WNOHANG|unix.WNOWAIT, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// handshake writes the greeting as one JSON line to the agent that started
// the supervisor, then points stdout at /dev/null: that agent may be gone
// later and a write to a closed pipe must not hurt the supervisor.
func handshake(m supMsg) {
	data, _ := json.Marshal(m)
	os.Stdout.Write(append(data, '\n'))
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		syscall.Dup3(int(null.Fd()), 1, 0)
		null.Close()
	}
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// asUser runs fn on an OS thread whose file-system identity (fsuid,
// fsgid, supplementary groups) is the job's user, so files are opened with
// the user's permissions and created with the user's ownership, without
// changing the identity of the supervisor itself. Such a thread is kept
// locked to a worker goroutine per identity and reused by the user's next
// jobs (a queue of one user's short jobs would otherwise create and destroy
// a thread per job); it never runs anything else, and a worker that is
// evicted exits still locked, so the runtime discards its thread.
func asUser(spec execSpec, fn func() error) error {
	if !spec.Setuid {
		return fn()
	}
	identityWorkers.Lock() // held throughout: eviction closes workers
	defer identityWorkers.Unlock()
	w, err := identityWorker(spec)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	w <- func() { errc <- fn() }
	return <-errc
}

// maxIdentityWorkers bounds the threads kept with a user's identity.
const maxIdentityWorkers = 16

var identityWorkers struct {
	sync.Mutex
	m map[string]chan func()
}

// identityWorker returns the worker running as spec's user, starting it
// (and evicting the others when too many) if needed. The caller holds
// identityWorkers.
func identityWorker(spec execSpec) (chan func(), error) {
	key := fmt.Sprint(spec.UID, spec.GID, spec.Groups)
	if w, ok := identityWorkers.m[key]; ok {
		return w, nil
	}
	if identityWorkers.m == nil || len(identityWorkers.m) >= maxIdentityWorkers {
		for _, w := range identityWorkers.m {
			close(w)
		}
		identityWorkers.m = map[string]chan func(){}
	}
	w := make(chan func())
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the worker
		groups := append([]uint32{spec.GID}, spec.Groups...)
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, uintptr(len(groups)), uintptr(unsafe.Pointer(&groups[0])), 0); e != 0 {
			errc <- fmt.Errorf("setgroups: %v", e)
			return
		}
		syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(spec.GID), 0, 0)
		syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(spec.UID), 0, 0)
		errc <- nil
		for fn := range w {
			fn()
		}
	}()
	if err := <-errc; err != nil {
		return nil, err
	}
	identityWorkers.m[key] = w
	return w, nil
}

// openJobFiles opens the job's stdin, stdout and stderr (one file when
// both outputs go to the same path).
func openJobFiles(spec execSpec) (in, out, errf *os.File, err error) {
	if in, err = os.Open(spec.StdIn); err != nil {
		return nil, nil, nil, fmt.Errorf("open input file %s: %w", spec.StdIn, unwrapPathErr(err))
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if spec.Append {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	if out, err = os.OpenFile(spec.StdOut, flags, 0o644); err != nil {
		in.Close()
		return nil, nil, nil, fmt.Errorf("could not open stdout file %s: %w", spec.StdOut, unwrapPathErr(err))
	}
	if spec.Preamble != "" {
		out.WriteString(spec.Preamble)
	}
	if spec.StdErr == spec.StdOut {
		return in, out, out, nil
	}
	if errf, err = os.OpenFile(spec.StdErr, flags, 0o644); err != nil {
		in.Close()
		out.Close()
		return nil, nil, nil, fmt.Errorf("could not open stderr file %s: %w", spec.StdErr, unwrapPathErr(err))
	}
	return in, out, errf, nil
}

// lookPath finds name in the job's PATH (not the agent's), as execvp would
// in the job's environment.
func lookPath(name, pathEnv string) (string, error) {
	if p, ok := searchPath(name, pathEnv); ok {
		return p, nil
	}
	return "", fmt.Errorf("command not found")
}

// searchPath finds name (as is when it holds a '/') in the colon list
// pathEnv (a default PATH when empty; an empty entry is the current
// directory): the first regular, executable file, as execvp searches.
func searchPath(name, pathEnv string) (string, bool) {
	if strings.Contains(name, "/") {
		return name, true
	}
	if pathEnv == "" {
		pathEnv = "/usr/local/bin:/usr/bin:/bin"
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}
