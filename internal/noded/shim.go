package noded

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// ShimCommandName is the hidden subcommand the agent runs the shim with:
// `sluice noded-shim run JOBDIR` supervises one job.
const ShimCommandName = "noded-shim"

// ShimMain is the entry point of `sluice noded-shim run JOBDIR`. The shim
// opens the job's files with the job user's file-system identity (so the
// user's permissions apply and the files are theirs, as with slurmstepd),
// starts the job as that user in a new process group (and cgroup), tells the
// agent the pids on its standard output, waits for the job and records its
// wait status. It enforces nothing, so it stays correct whatever happens to
// the agent.
func ShimMain(args []string) int {
	if len(args) == 2 && args[0] == "run" {
		return shimRun(args[1])
	}
	fmt.Fprintln(os.Stderr, "usage: sluice noded-shim run JOBDIR (internal to sluice noded)")
	return 2
}

func shimRun(dir string) int {
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	// Orphaned descendants of the job are re-parented to the shim rather
	// than to init, so the shim can reap what the job leaves behind (some
	// inits, in containers, never do).
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	var spec execSpec
	if err := readJSON(filepath.Join(dir, launchFile), &spec); err != nil {
		return shimFail(dir, -1, fmt.Sprintf("read launch spec: %v", err))
	}
	cmd, err := jobCommand(spec)
	if err != nil {
		return shimFail(dir, -1, err.Error())
	}
	// The shim ignores SIGHUP and SIGPIPE; ignored signals survive exec,
	// and jobs must start with default dispositions.
	signal.Reset(syscall.SIGHUP, syscall.SIGPIPE)
	err = startJob(cmd, spec)
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	for _, f := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		if c, ok := f.(io.Closer); ok {
			c.Close()
		}
	}
	if err != nil {
		return shimFail(dir, -1, err.Error())
	}
	pid := cmd.Process.Pid
	st, _ := readProcStat(pid)
	self, _ := readProcStat(os.Getpid())
	pids := shimPids{ShimPID: os.Getpid(), ShimTick: self.StartTick, PID: pid, PIDTick: st.StartTick}
	if err := writeJSON(filepath.Join(dir, pidsFile), pids, 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "noded-shim: write pids: %v\n", err)
	}
	handshake(pids)
	cmd.Wait()
	ws := waitStatus(cmd)
	// The batch script is done: end whatever it left behind, as Slurm's
	// proctrack does when the batch step completes.
	syscall.Kill(-pid, syscall.SIGKILL)
	if spec.Cgroup != "" {
		cgroupKill(spec.Cgroup)
	}
	reapOrphans(time.Second)
	if err := writeJSON(filepath.Join(dir, exitFile), exitRecord{WaitStatus: ws, Time: time.Now()}, 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "noded-shim: write exit status: %v\n", err)
		return 1
	}
	return 0
}

// jobCommand prepares the job's process: files opened and working
// directory checked as the job's user, credentials, process group.
func jobCommand(spec execSpec) (*exec.Cmd, error) {
	if len(spec.Argv) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	if spec.Umask >= 0 {
		syscall.Umask(spec.Umask)
	}
	var in, out, errf *os.File
	dir := spec.Dir
	var chdirErr error
	err := asUser(spec, func() error {
		var err error
		if in, out, errf, err = openJobFiles(spec); err != nil {
			return err
		}
		// Slurm runs the job in /tmp when the working directory is not
		// usable by the user. Chdir is harmless in the shim: it uses
		// absolute paths only.
		if chdirErr = syscall.Chdir(dir); chdirErr != nil {
			dir = "/tmp"
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if chdirErr != nil {
		fmt.Fprintf(errf, "slurmstepd: error: couldn't chdir to `%s': %v: going to /tmp instead\n", spec.Dir, chdirErr)
	}
	path, err := lookPath(spec.Argv[0], envMap(spec.Env)["PATH"])
	if err != nil {
		in.Close()
		out.Close()
		errf.Close()
		return nil, fmt.Errorf("execve(): %s: %v", spec.Argv[0], err)
	}
	cmd := &exec.Cmd{Path: path, Args: spec.Argv, Env: spec.Env, Dir: dir, Stdin: in, Stdout: out, Stderr: errf}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if spec.Setuid {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: spec.UID, Gid: spec.GID, Groups: spec.Groups}
	}
	return cmd, nil
}

// startJob starts cmd, inside the job's cgroup when there is one: created
// there directly (clone3 CLONE_INTO_CGROUP) where the kernel allows it,
// else moved in right after the fork.
func startJob(cmd *exec.Cmd, spec execSpec) error {
	if spec.Cgroup == "" {
		return wrapStart(cmd.Start(), cmd)
	}
	cg, err := os.Open(spec.Cgroup)
	if err != nil {
		return fmt.Errorf("open cgroup %s: %w", spec.Cgroup, err)
	}
	defer cg.Close()
	attr := *cmd.SysProcAttr
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, int(cg.Fd())
	if err := cmd.Start(); err == nil {
		return nil
	}
	retry := &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir, Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr, SysProcAttr: &attr}
	*cmd = *retry
	if err := cmd.Start(); err != nil {
		return wrapStart(err, cmd)
	}
	os.WriteFile(filepath.Join(spec.Cgroup, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0)
	return nil
}

func wrapStart(err error, cmd *exec.Cmd) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("execve(): %s: %v", cmd.Path, unwrapPathErr(err))
}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// reapOrphans collects the job's leftover processes (already sent SIGKILL)
// for at most d; a process that escaped the job's process group and cgroup
// is left to run.
func reapOrphans(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case err == syscall.ECHILD:
			return
		case err != nil || pid == 0:
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func waitStatus(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return -1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		return int(ws)
	}
	return -1
}

// handshake writes the pids as one JSON line to the agent, then points
// stdout at /dev/null: the agent may be gone later and a write to a closed
// pipe must not kill the shim.
func handshake(p shimPids) {
	data, _ := json.Marshal(p)
	os.Stdout.Write(append(data, '\n'))
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		syscall.Dup3(int(null.Fd()), 1, 0)
		null.Close()
	}
}

// shimFail records a job that could not be started.
func shimFail(dir string, ws int, msg string) int {
	msg = strings.TrimSpace(msg)
	fmt.Fprintf(os.Stderr, "noded-shim: %s\n", msg)
	writeJSON(filepath.Join(dir, exitFile), exitRecord{WaitStatus: ws, Time: time.Now(), Error: msg}, 0o600)
	handshake(shimPids{ShimPID: os.Getpid(), Error: msg})
	return 1
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// asUser runs fn on a dedicated OS thread whose file-system identity
// (fsuid, fsgid, supplementary groups) is the job's user, so files are
// opened with the user's permissions and created with the user's
// ownership, without changing the identity of the shim itself. The thread
// is never unlocked, so the runtime discards it afterwards.
func asUser(spec execSpec, fn func() error) error {
	if !spec.Setuid {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		groups := append([]uint32{spec.GID}, spec.Groups...)
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETGROUPS, uintptr(len(groups)), uintptr(unsafe.Pointer(&groups[0])), 0); e != 0 {
			errc <- fmt.Errorf("setgroups: %v", e)
			return
		}
		syscall.RawSyscall(syscall.SYS_SETFSGID, uintptr(spec.GID), 0, 0)
		syscall.RawSyscall(syscall.SYS_SETFSUID, uintptr(spec.UID), 0, 0)
		errc <- fn()
	}()
	return <-errc
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
	if strings.Contains(name, "/") {
		return name, nil
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
			return p, nil
		}
	}
	return "", fmt.Errorf("command not found")
}
