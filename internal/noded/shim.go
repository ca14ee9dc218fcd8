package noded

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ShimCommandName is the hidden subcommand the agent runs the shim with:
// `sluice noded-shim run JOBDIR` supervises a job, `sluice noded-shim exec`
// is the shim's second stage that becomes the job.
const ShimCommandName = "noded-shim"

// ShimMain is the entry point of `sluice noded-shim`. The first stage
// ("run") starts the second stage in a new process group, tells the agent
// the pids on its standard output, waits for the job and records its wait
// status; it enforces nothing, so it stays correct whatever happens to the
// agent. The second stage ("exec") joins the job's cgroup, drops to the
// job's user, opens the output files as that user (so permissions are the
// user's, as with slurmstepd), changes directory and execs the script.
func ShimMain(args []string) int {
	if len(args) == 2 && args[0] == "run" {
		return shimRun(args[1])
	}
	if len(args) == 1 && args[0] == "exec" {
		return shimExec()
	}
	fmt.Fprintln(os.Stderr, "usage: sluice noded-shim run JOBDIR (internal to sluice noded)")
	return 2
}

func shimRun(dir string) int {
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	var spec execSpec
	specJSON, err := os.ReadFile(filepath.Join(dir, launchFile))
	if err == nil {
		err = json.Unmarshal(specJSON, &spec)
	}
	if err != nil {
		return shimFail(dir, -1, fmt.Sprintf("read launch spec: %v", err))
	}
	self, err := os.Executable()
	if err != nil {
		return shimFail(dir, -1, fmt.Sprintf("find own executable: %v", err))
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return shimFail(dir, -1, err.Error())
	}
	cmd := exec.Command(self, ShimCommandName, "exec")
	cmd.Stdin = bytes.NewReader(specJSON)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.ExtraFiles = []*os.File{errW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	errW.Close()
	if err != nil {
		return shimFail(dir, -1, fmt.Sprintf("start job: %v", err))
	}
	pid := cmd.Process.Pid
	st, _ := readProcStat(pid)
	msg, _ := io.ReadAll(errR)
	errR.Close()
	if len(msg) > 0 {
		cmd.Wait()
		return shimFail(dir, waitStatus(cmd), string(msg))
	}
	self1, _ := readProcStat(os.Getpid())
	pids := shimPids{ShimPID: os.Getpid(), ShimTick: self1.StartTick, PID: pid, PIDTick: st.StartTick}
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
	if err := writeJSON(filepath.Join(dir, exitFile), exitRecord{WaitStatus: ws, Time: time.Now()}, 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "noded-shim: write exit status: %v\n", err)
		return 1
	}
	return 0
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

// shimExec is the second stage: it becomes the job. Errors before the exec
// go to fd 3, a close-on-exec pipe the first stage reads.
func shimExec() int {
	errPipe := os.NewFile(3, "errpipe")
	fail := func(format string, a ...any) int {
		fmt.Fprintf(errPipe, format, a...)
		return 1
	}
	var spec execSpec
	if err := json.NewDecoder(os.Stdin).Decode(&spec); err != nil {
		return fail("read job spec: %v", err)
	}
	if len(spec.Argv) == 0 {
		return fail("empty command")
	}
	if spec.Cgroup != "" {
		// Joining before dropping privileges: only root may move into it.
		if err := os.WriteFile(filepath.Join(spec.Cgroup, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			return fail("join cgroup %s: %v", spec.Cgroup, err)
		}
	}
	if spec.Umask >= 0 {
		syscall.Umask(spec.Umask)
	}
	if spec.Setuid {
		if err := dropPrivileges(spec); err != nil {
			return fail("%v", err)
		}
	}
	if err := redirectIO(spec); err != nil {
		return fail("%v", err)
	}
	if err := os.Chdir(spec.Dir); err != nil {
		fmt.Fprintf(os.Stderr, "slurmstepd: error: couldn't chdir to `%s': %v: going to /tmp instead\n", spec.Dir, unwrapPathErr(err))
		os.Chdir("/tmp")
	}
	path, err := lookPath(spec.Argv[0], envMap(spec.Env)["PATH"])
	if err != nil {
		return fail("execve(): %s: %v", spec.Argv[0], err)
	}
	// The first stage ignores SIGHUP and SIGPIPE; ignored signals survive
	// exec, and jobs must start with default dispositions.
	signal.Reset(syscall.SIGHUP, syscall.SIGPIPE)
	syscall.CloseOnExec(3)
	err = syscall.Exec(path, spec.Argv, spec.Env)
	return fail("execve(): %s: %v", path, err)
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func dropPrivileges(spec execSpec) error {
	groups := make([]int, 0, len(spec.Groups)+1)
	groups = append(groups, int(spec.GID))
	for _, g := range spec.Groups {
		if g != spec.GID {
			groups = append(groups, int(g))
		}
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(int(spec.GID)); err != nil {
		return fmt.Errorf("setgid(%d): %w", spec.GID, err)
	}
	if err := syscall.Setuid(int(spec.UID)); err != nil {
		return fmt.Errorf("setuid(%d): %w", spec.UID, err)
	}
	return nil
}

// redirectIO opens the job's stdin/stdout/stderr (already running as the
// job's user) and installs them as fds 0, 1, 2.
func redirectIO(spec execSpec) error {
	in, err := os.Open(spec.StdIn)
	if err != nil {
		return fmt.Errorf("open input file %s: %w", spec.StdIn, unwrapPathErr(err))
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if spec.Append {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	out, err := os.OpenFile(spec.StdOut, flags, 0o644)
	if err != nil {
		return fmt.Errorf("could not open stdout file %s: %w", spec.StdOut, unwrapPathErr(err))
	}
	errf := out
	if spec.StdErr != spec.StdOut {
		if errf, err = os.OpenFile(spec.StdErr, flags, 0o644); err != nil {
			return fmt.Errorf("could not open stderr file %s: %w", spec.StdErr, unwrapPathErr(err))
		}
	}
	for fd, f := range []*os.File{in, out, errf} {
		if err := syscall.Dup3(int(f.Fd()), fd, 0); err != nil {
			return fmt.Errorf("dup3: %w", err)
		}
	}
	return nil
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
