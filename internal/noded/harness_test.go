package noded

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestMain lets the test binary act as the job shim: the agent re-executes
// its own binary with "noded-shim ...", exactly as `sluice noded` does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ShimCommandName {
		os.Exit(ShimMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

var testClusterKey = []byte("noded-test-cluster-key-0123456789")

// agentOpt adjusts a test agent's configuration.
type agentOpt func(*Config)

func withController(url string) agentOpt { return func(c *Config) { c.ControllerURL = url } }
func withSpool(dir string) agentOpt      { return func(c *Config) { c.Spool = dir } }
func withListener() agentOpt             { return func(c *Config) { c.Listen = "127.0.0.1:0" } }
func withoutCgroups() agentOpt           { return func(c *Config) { c.CgroupBase = "none" } }

// asUnprivileged makes the agent behave as if started by uid (not root).
func asUnprivileged(uid int) agentOpt { return func(c *Config) { c.euid = &uid } }

// testCgroupBase gives each test its own cgroup directory when cgroup v2
// is usable (root), so tests exercise the freezer path where they can.
func testCgroupBase(t *testing.T) string {
	mount := cgroup2Mount()
	if os.Geteuid() != 0 || mount == "" {
		return "none"
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	base := filepath.Join(mount, "sluice-test", fmt.Sprintf("%d-%s", os.Getpid(), name))
	t.Cleanup(func() {
		jobs, _ := filepath.Glob(filepath.Join(base, "job_*"))
		for _, j := range jobs {
			cgroupRemove(j) // a failed test may leave a job behind
		}
		os.Remove(base)
		os.Remove(filepath.Dir(base))
	})
	return base
}

// newAgent starts an agent on a fresh spool (node01) and stops it at the
// end of the test. Jobs it started are killed at cleanup.
func newAgent(t *testing.T, opts ...agentOpt) *Agent {
	t.Helper()
	cfg := Config{
		Name: "node01", Spool: t.TempDir(), Key: testClusterKey,
		PollInterval: 20 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond,
		CgroupBase: testCgroupBase(t), CPUs: 4, MemoryMB: 8192, plainHTTP: true,
		GPUs:   GPUDiscovery{LookPath: noNvidiaSMI, Root: t.TempDir()},
		Logger: slog.New(slog.NewTextHandler(testLogOut(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// Not t.Context(): it is cancelled before cleanups run, and the
	// cleanups still need the agent to reap the jobs they terminate.
	if err := a.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func noNvidiaSMI(string) (string, error) { return "", os.ErrNotExist }

// batch returns a launch request for a script run by the test's own user in
// a fresh working directory.
func batch(t *testing.T, id uint32, body string) api.LaunchRequest {
	t.Helper()
	dir := t.TempDir()
	return api.LaunchRequest{
		JobID: id, Name: "test-job", User: currentUser(), UID: uint32(os.Getuid()), GID: uint32(os.Getgid()),
		Script: "#!/bin/sh\n" + body + "\n", SubmitDir: dir, SubmitHost: "login1",
		Environment: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir},
		Partition:   "batch", Account: "research", QOS: "normal", NodeList: "node01",
		NNodes: 1, NTasks: 1, CPUs: 2, KillWaitSec: 1,
	}
}

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// launch starts req and fails the test on error.
func launch(t *testing.T, a *Agent, req api.LaunchRequest) api.JobStatus {
	t.Helper()
	st, err := a.Launch(req)
	if err != nil {
		t.Fatalf("launch job %d: %v", req.JobID, err)
	}
	t.Cleanup(func() {
		if a.closed.Load() {
			return // a test stopped this agent; a successor owns the job
		}
		// Leave no process behind: the job's spool must be quiet before
		// the test's temporary directories are removed.
		if _, err := a.Terminate(req.JobID, api.TerminateRequest{KillWaitSec: 1}); err != nil {
			return
		}
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			// Gone (reported to a controller and forgotten) or final.
			if st, err := a.Job(req.JobID); err != nil || api.AgentJobFinal(st.State) {
				return
			}
		}
		t.Errorf("job %d did not end at cleanup", req.JobID)
	})
	return st
}

// waitFinal waits for the job to reach a final state.
func waitFinal(t *testing.T, a *Agent, id uint32, within time.Duration) api.JobStatus {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st, err := a.Job(id)
		if err != nil {
			t.Fatalf("job %d: %v", id, err)
		}
		if api.AgentJobFinal(st.State) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d still %s after %v", id, st.State, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitFile waits until path exists with content containing want.
func waitFile(t *testing.T, path, want string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), want) {
			return string(data)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q never appeared (content %q)", path, want, data)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// testLogOut is where test agents log: stderr with SLUICE_TEST_LOG=1.
func testLogOut() io.Writer {
	if os.Getenv("SLUICE_TEST_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}

// killProcess SIGKILLs pid (a negative pid is a process group) and waits
// until it is gone.
func killProcess(t *testing.T, pid int) {
	t.Helper()
	syscall.Kill(pid, syscall.SIGKILL)
	abs := pid
	if abs < 0 {
		abs = -abs
	}
	for i := 0; i < 200; i++ {
		if st, err := readProcStat(abs); err != nil || st.State == 'Z' {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
