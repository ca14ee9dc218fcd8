package noded

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

func TestExitStatusToState(t *testing.T) {
	a := newAgent(t)
	cases := []struct {
		name, body, state, exit string
	}{
		{"success", "true", api.StateCompleted, "0:0"},
		{"non-zero exit", "exit 3", api.StateFailed, "3:0"},
		{"killed by a signal", "kill -9 $$", api.StateFailed, "0:9"},
		{"missing command", "/no/such/program", api.StateFailed, "127:0"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			launch(t, a, batch(t, uint32(100+i), c.body))
			st := waitFinal(t, a, uint32(100+i), 3*time.Second)
			if st.State != c.state || st.ExitCode != c.exit {
				t.Fatalf("got %s %s, want %s %s", st.State, st.ExitCode, c.state, c.exit)
			}
			t.Logf("%q -> %s ExitCode=%s", c.body, st.State, st.ExitCode)
		})
	}
}

func TestOutputFiles(t *testing.T) {
	a := newAgent(t)
	t.Run("default slurm-%j.out in the submit dir, stderr too", func(t *testing.T) {
		req := batch(t, 200, "echo out; echo err >&2; pwd")
		launch(t, a, req)
		waitFinal(t, a, 200, 3*time.Second)
		got := readFile(t, filepath.Join(req.SubmitDir, "slurm-200.out"))
		if got != "out\nerr\n"+req.SubmitDir+"\n" {
			t.Fatalf("slurm-200.out = %q", got)
		}
	})
	t.Run("-o/-e patterns relative to --chdir", func(t *testing.T) {
		req := batch(t, 201, "echo out; echo err >&2")
		req.WorkDir = t.TempDir()
		req.Name = "myjob"
		req.StdOut = "o-%x-%u-%N-%j-%%-%J.log"
		req.StdErr = "e-%6j.log"
		st := launch(t, a, req)
		waitFinal(t, a, 201, 3*time.Second)
		// %N is the machine's short host name, not the node's name: Slurm's
		// slurmstepd on a host with several slurmd (oracle: -o out-%N.txt
		// of a job on n1 writes out-<host>.txt).
		host, _ := os.Hostname()
		host, _, _ = strings.Cut(host, ".")
		wantOut := filepath.Join(req.WorkDir, "o-myjob-"+req.User+"-"+host+"-201-%-201.batch.log")
		if st.StdOut != wantOut || readFile(t, wantOut) != "out\n" {
			t.Fatalf("stdout path %q (want %q)", st.StdOut, wantOut)
		}
		if got := readFile(t, filepath.Join(req.WorkDir, "e-000201.log")); got != "err\n" {
			t.Fatalf("stderr = %q", got)
		}
	})
	t.Run("array task default slurm-%A_%a.out, append mode", func(t *testing.T) {
		req := batch(t, 205, "echo task $SLURM_ARRAY_TASK_ID")
		req.ArrayJobID, req.ArrayTaskID, req.ArrayTaskCount, req.ArrayTaskMax = 202, 3, 4, 3
		req.OpenMode = "append"
		path := filepath.Join(req.SubmitDir, "slurm-202_3.out")
		os.WriteFile(path, []byte("before\n"), 0o644)
		launch(t, a, req)
		waitFinal(t, a, 205, 3*time.Second)
		if got := readFile(t, path); got != "before\ntask 3\n" {
			t.Fatalf("%s = %q", path, got)
		}
	})
	t.Run("missing working directory: /tmp, like slurmstepd", func(t *testing.T) {
		req := batch(t, 206, "pwd")
		req.WorkDir = "/nonexistent/dir"
		req.StdOut = filepath.Join(req.SubmitDir, "out")
		launch(t, a, req)
		waitFinal(t, a, 206, 3*time.Second)
		got := readFile(t, req.StdOut)
		if !strings.Contains(got, "couldn't chdir to `/nonexistent/dir'") || !strings.HasSuffix(got, "/tmp\n") {
			t.Fatalf("output %q", got)
		}
	})
	t.Run("unwritable output: FAILED with the reason", func(t *testing.T) {
		req := batch(t, 207, "true")
		req.StdOut = "/nonexistent/out"
		launch(t, a, req)
		st := waitFinal(t, a, 207, 3*time.Second)
		if st.State != api.StateFailed || !strings.Contains(st.Reason, "could not open stdout file /nonexistent/out") {
			t.Fatalf("got %+v", st)
		}
	})
}

func TestJobEnvironment(t *testing.T) {
	a := newAgent(t)
	run := func(t *testing.T, req api.LaunchRequest) map[string]string {
		req.StdOut = "env.txt"
		launch(t, a, req)
		waitFinal(t, a, req.JobID, 3*time.Second)
		return envMap(strings.Split(readFile(t, filepath.Join(req.SubmitDir, "env.txt")), "\n"))
	}
	t.Run("Slurm variables and GPUs", func(t *testing.T) {
		req := batch(t, 300, "env")
		req.Environment = append(req.Environment, "EDITOR=vi", "SLURM_CONF=/etc/x.conf")
		req.ArrayJobID, req.ArrayTaskID, req.ArrayTaskCount, req.ArrayTaskMin, req.ArrayTaskMax, req.ArrayTaskStep = 299, 4, 3, 2, 6, 2
		req.GPUs = []int{2, 3}
		req.NodeList, req.NNodes, req.NTasks = "node[01-02]", 2, 8
		env := run(t, req)
		want := map[string]string{
			"SLURM_JOB_ID": "300", "SLURM_JOBID": "300", "SLURM_JOB_NAME": "test-job",
			"SLURM_JOB_NODELIST": "node[01-02]", "SLURM_NNODES": "2", "SLURM_NTASKS": "8",
			"SLURM_CPUS_ON_NODE": "2", "SLURM_JOB_PARTITION": "batch", "SLURM_JOB_ACCOUNT": "research",
			"SLURM_JOB_QOS": "normal", "SLURM_SUBMIT_DIR": req.SubmitDir, "SLURM_SUBMIT_HOST": "login1",
			"SLURM_JOB_USER": req.User, "SLURM_JOB_UID": itoa(req.UID),
			"SLURM_ARRAY_JOB_ID": "299", "SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "3",
			"SLURM_ARRAY_TASK_MIN": "2", "SLURM_ARRAY_TASK_MAX": "6", "SLURM_ARRAY_TASK_STEP": "2",
			"CUDA_VISIBLE_DEVICES": "2,3", "SLURM_JOB_GPUS": "2,3", "GPU_DEVICE_ORDINAL": "2,3",
			"SLURMD_NODENAME": "node01", "EDITOR": "vi", "SLURM_CONF": "/etc/x.conf", "ENVIRONMENT": "BATCH",
		}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s=%q, want %q", k, env[k], v)
			}
		}
	})
	exportCases := []struct {
		export string
		want   map[string]string // "" value = must be absent
	}{
		{"NONE", map[string]string{"EDITOR": "", "PATH": "", "SLURM_CONF": "/etc/x.conf", "SLURM_JOB_ID": "301"}},
		{"ALL,EDITOR=emacs,NEW=1", map[string]string{"EDITOR": "vi", "NEW": "1", "PATH": "/usr/bin:/bin"}},
		{"EDITOR,NEW=2", map[string]string{"EDITOR": "vi", "NEW": "2", "PATH": "", "SLURM_CONF": "/etc/x.conf"}},
	}
	for i, c := range exportCases {
		t.Run("--export="+c.export, func(t *testing.T) {
			req := batch(t, uint32(301+i), "/usr/bin/env")
			req.Environment = []string{"PATH=/usr/bin:/bin", "EDITOR=vi", "SLURM_CONF=/etc/x.conf"}
			req.Export = c.export
			env := run(t, req)
			for k, v := range c.want {
				if k == "SLURM_JOB_ID" {
					v = itoa(req.JobID)
				}
				if got, ok := env[k]; (v == "" && ok) || got != v {
					t.Errorf("%s=%q (present %v), want %q", k, got, ok, v)
				}
			}
		})
	}
}

func TestTimeLimit(t *testing.T) {
	a := newAgent(t)
	cases := []struct {
		name, body string
		exit       string
		minRun     time.Duration
	}{
		{"SIGTERM ends it", "sleep 30", "0:15", time.Second},
		{"SIGKILL after KillWait when SIGTERM is ignored", "trap '' TERM; sleep 30 & wait; sleep 30", "0:9", 2 * time.Second},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := batch(t, uint32(400+i), c.body)
			req.TimeLimitSec, req.KillWaitSec = 1, 1
			launch(t, a, req)
			st := waitFinal(t, a, req.JobID, 4*time.Second)
			ran := st.EndTime.Sub(st.StartTime)
			if st.State != api.StateTimeout || st.ExitCode != c.exit || ran < c.minRun {
				t.Fatalf("got %s %s after %v, want TIMEOUT %s after >= %v", st.State, st.ExitCode, ran, c.exit, c.minRun)
			}
			t.Logf("time limit 1s, KillWait 1s: %s ExitCode=%s after %v", st.State, st.ExitCode, ran.Round(10*time.Millisecond))
		})
	}
}

func TestCancelAndSignal(t *testing.T) {
	a := newAgent(t)
	t.Run("terminate -> CANCELLED", func(t *testing.T) {
		req := batch(t, 500, "sleep 30")
		launch(t, a, req)
		if _, err := a.Terminate(500, api.TerminateRequest{}); err != nil {
			t.Fatal(err)
		}
		st := waitFinal(t, a, 500, 3*time.Second)
		if st.State != api.StateCancelled || st.ExitCode != "0:15" {
			t.Fatalf("got %s %s", st.State, st.ExitCode)
		}
	})
	t.Run("terminate as REQUEUED", func(t *testing.T) {
		launch(t, a, batch(t, 501, "sleep 30"))
		a.Terminate(501, api.TerminateRequest{State: api.StateRequeued})
		if st := waitFinal(t, a, 501, 3*time.Second); st.State != api.StateRequeued {
			t.Fatalf("got %s", st.State)
		}
	})
	t.Run("signal USR1 reaches the script", func(t *testing.T) {
		req := batch(t, 502, "trap 'echo got USR1; exit 0' USR1; echo ready; while :; do sleep 0.05; done")
		launch(t, a, req)
		out := filepath.Join(req.SubmitDir, "slurm-502.out")
		waitFile(t, out, "ready", 3*time.Second)
		if _, err := a.Signal(502, api.SignalRequest{Signal: int(syscall.SIGUSR1), BatchOnly: true}); err != nil {
			t.Fatal(err)
		}
		st := waitFinal(t, a, 502, 3*time.Second)
		if st.State != api.StateCompleted || !strings.Contains(readFile(t, out), "got USR1") {
			t.Fatalf("got %s, output %q", st.State, readFile(t, out))
		}
	})
	// Slurm signals the steps, not the batch script, unless --batch or
	// --full (oracle: scancel -s USR1 of a job running `sleep 60` left it
	// running); --full reaches the script and its children.
	t.Run("signal USR1 without --batch or --full spares the script", func(t *testing.T) {
		req := batch(t, 503, "echo ready; sleep 30")
		launch(t, a, req)
		waitFile(t, filepath.Join(req.SubmitDir, "slurm-503.out"), "ready", 3*time.Second)
		if _, err := a.Signal(503, api.SignalRequest{Signal: int(syscall.SIGUSR1)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if st, _ := a.Job(503); api.AgentJobFinal(st.State) {
			t.Fatalf("job ended on a steps-only signal: %s %s", st.State, st.ExitCode)
		}
		if _, err := a.Signal(503, api.SignalRequest{Signal: int(syscall.SIGUSR1), Full: true}); err != nil {
			t.Fatal(err)
		}
		if st := waitFinal(t, a, 503, 3*time.Second); st.State != api.StateFailed {
			t.Fatalf("--full: got %s %s", st.State, st.ExitCode)
		}
	})
	t.Run("errors", func(t *testing.T) {
		if _, err := a.Terminate(999, api.TerminateRequest{}); !errors.Is(err, ErrUnknownJob) {
			t.Fatalf("unknown job: %v", err)
		}
		if _, err := a.Suspend(500); !errors.Is(err, ErrConflict) {
			t.Fatalf("suspend finished job: %v", err)
		}
		if _, err := a.Launch(api.LaunchRequest{JobID: 9}); !errors.Is(err, ErrBadRequest) {
			t.Fatalf("launch without script: %v", err)
		}
	})
}

func TestLaunchIsIdempotent(t *testing.T) {
	a := newAgent(t)
	req := batch(t, 600, "sleep 30")
	first := launch(t, a, req)
	again, err := a.Launch(req)
	if err != nil || again.PID != first.PID || first.PID == 0 {
		t.Fatalf("second launch: pid %d vs %d, err %v", again.PID, first.PID, err)
	}
	req.RestartCount = 1
	if _, err := a.Launch(req); !errors.Is(err, ErrConflict) {
		t.Fatalf("requeued launch while running: %v", err)
	}
	a.Terminate(600, api.TerminateRequest{State: api.StateRequeued})
	waitFinal(t, a, 600, 3*time.Second)
	second := launch(t, a, req)
	if second.PID == first.PID || second.RestartCount != 1 || second.State != api.StateRunning {
		t.Fatalf("relaunch after requeue: %+v", second)
	}
}

// A terminate for a run that was requeued reaches the agent only after the
// job was started here again (a network cut: the controller's request was
// in flight while the node was down, and the requeued job came back to it
// with the link): the agent leaves the later run alone, and ends it when
// asked for that run.
func TestTerminateOfAnEarlierRunLeavesTheLaterOne(t *testing.T) {
	a := newAgent(t)
	req := batch(t, 610, "sleep 30")
	launch(t, a, req)
	zero, one := 0, 1
	a.Terminate(610, api.TerminateRequest{State: api.StateNodeFail, RestartCount: &zero})
	waitFinal(t, a, 610, 3*time.Second)
	req.RestartCount = 1
	second := launch(t, a, req)
	if _, err := a.Terminate(610, api.TerminateRequest{State: api.StateNodeFail, RestartCount: &zero}); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("terminate of run 0 while run 1 runs: %v, want ErrUnknownJob", err)
	}
	time.Sleep(200 * time.Millisecond)
	if st, err := a.Job(610); err != nil || st.State != api.StateRunning || st.PID != second.PID {
		t.Fatalf("run 1 after a terminate of run 0: %+v, %v", st, err)
	}
	if _, err := a.Terminate(610, api.TerminateRequest{State: api.StateCancelled, RestartCount: &one}); err != nil {
		t.Fatalf("terminate of run 1: %v", err)
	}
	if st := waitFinal(t, a, 610, 3*time.Second); st.State != api.StateCancelled || st.RestartCount != 1 {
		t.Fatalf("run 1 after its terminate: %+v", st)
	}
}

// TestSuspendResume suspends a job whose time limit is 2 s for 1.5 s: every
// process of the job is stopped (state T), the limit is extended by the
// suspended time, and the job still times out once resumed.
// waitGroupStopped returns the states of the process group once every member
// shows 'T', or after 10 s: the stop is delivered at once, but a process caught
// in the kernel (exec, a page fault) shows 'D' until it leaves it, which took
// over 2 s once while CI ran the -race suites side by side.
func waitGroupStopped(pgid int) map[int]byte {
	var states map[int]byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		states = groupStates(pgid)
		stopped := len(states) > 0
		for _, s := range states {
			stopped = stopped && s == 'T'
		}
		if stopped {
			break
		}
	}
	return states
}

func TestSuspendResume(t *testing.T) {
	a := newAgent(t)
	req := batch(t, 700, "sleep 30 & wait")
	req.TimeLimitSec = 2
	st := launch(t, a, req)
	waitChildren(t, st.PID, 2)
	waitSleeping(t, st.PID)
	if _, err := a.Suspend(700); err != nil {
		t.Fatal(err)
	}
	for pid, s := range waitGroupStopped(st.PID) {
		if s != 'T' {
			t.Errorf("pid %d state %c after suspend, want T", pid, s)
		}
	}
	if cg := a.jobs[700].rec.Cgroup; cg != "" {
		if ev := readFile(t, filepath.Join(cg, "cgroup.events")); !strings.Contains(ev, "frozen 1") {
			t.Errorf("cgroup %s not frozen: %q", cg, ev)
		}
		t.Logf("cgroup v2 freezer used: %s", cg)
	}
	time.Sleep(1500 * time.Millisecond)
	if cur, _ := a.Job(700); cur.State != api.StateSuspended {
		t.Fatalf("suspended job is %s", cur.State)
	}
	if _, err := a.Resume(700); err != nil {
		t.Fatal(err)
	}
	for pid, s := range groupStates(st.PID) {
		if s == 'T' {
			t.Errorf("pid %d still stopped after resume", pid)
		}
	}
	final := waitFinal(t, a, 700, 4*time.Second)
	ran := final.EndTime.Sub(final.StartTime)
	if final.State != api.StateTimeout || ran < 3450*time.Millisecond || final.SuspendedSec < 1 {
		t.Fatalf("got %s after %v (suspended %ds), want TIMEOUT after >= 3.45s (2s limit + 1.5s suspended)", final.State, ran, final.SuspendedSec)
	}
	t.Logf("limit 2s + 1.5s suspended: %s after %v", final.State, ran.Round(10*time.Millisecond))
}

func TestSuspendWithSignalsOnly(t *testing.T) {
	a := newAgent(t, withoutCgroups())
	req := batch(t, 701, "sleep 30 & wait")
	st := launch(t, a, req)
	waitChildren(t, st.PID, 2)
	a.Suspend(701)
	for pid, s := range waitGroupStopped(st.PID) {
		if s != 'T' {
			t.Errorf("pid %d state %c, want T", pid, s)
		}
	}
	a.Resume(701)
	a.Terminate(701, api.TerminateRequest{})
	if final := waitFinal(t, a, 701, 3*time.Second); final.State != api.StateCancelled {
		t.Fatalf("got %s", final.State)
	}
}

// waitChildren waits until the job's process group has n processes.
func waitChildren(t *testing.T, pgid, n int) {
	t.Helper()
	for i := 0; i < 300; i++ {
		if len(groupStates(pgid)) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process group %d never reached %d processes", pgid, n)
}

// waitSleeping waits until every process of the group sleeps (state S):
// the job has finished starting. A stop signal sent while a process is
// still in exec (state D on a loaded machine) lands only when exec
// returns, and Suspend freezes the cgroup after a second whether or not
// it has landed, so a test of the stopped state starts from a settled job.
func waitSleeping(t *testing.T, pgid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		states := groupStates(pgid)
		settled := len(states) > 0
		for _, s := range states {
			settled = settled && s == 'S'
		}
		if settled {
			return
		}
	}
	t.Fatalf("process group %d never settled: %v", pgid, groupStates(pgid))
}

func TestUnprivilegedAgentRefusesOtherUsers(t *testing.T) {
	a := newAgent(t, asUnprivileged(4242), withListener())
	req := batch(t, 800, "true")
	req.UID, req.User = 4243, "mallory"
	_, err := a.Launch(req)
	if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), "an unprivileged node agent runs only its own user's jobs") {
		t.Fatalf("got %v", err)
	}
	if _, err := a.Job(800); !errors.Is(err, ErrUnknownJob) {
		t.Fatal("refused job was recorded")
	}
	// Over the API the refusal is a 403 with the same message.
	_, err = api.NewAgentClient(a.Addr(), testClusterKey, nil).Launch(context.Background(), req)
	var ae *api.AgentError
	if !errors.As(err, &ae) || ae.Status != 403 || !strings.Contains(ae.Message, "uid 4243") {
		t.Fatalf("HTTP launch: %v", err)
	}
	// Its own user's jobs run (without any uid switch).
	mine := req
	mine.JobID, mine.UID = 801, 4242
	launch(t, a, mine)
	if st := waitFinal(t, a, 801, 3*time.Second); st.State != api.StateCompleted {
		t.Fatalf("own job: %+v", st)
	}
}

// TestConcurrentLaunches launches jobs from many goroutines at once, as
// the controller does when it starts a batch of jobs on one node.
func TestConcurrentLaunches(t *testing.T) {
	a := newAgent(t)
	var wg sync.WaitGroup
	dir := t.TempDir()
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go func(id uint32) {
			defer wg.Done()
			req := batch(t, id, "echo $SLURM_JOB_ID")
			req.SubmitDir = dir
			if _, err := a.Launch(req); err != nil {
				t.Error(err)
			}
		}(uint32(1500 + i))
	}
	wg.Wait()
	for i := 0; i < 24; i++ {
		id := uint32(1500 + i)
		if st := waitFinal(t, a, id, 4*time.Second); st.State != api.StateCompleted {
			t.Fatalf("job %d: %+v", id, st)
		}
		if got := readFile(t, filepath.Join(dir, "slurm-"+itoa(id)+".out")); got != itoa(id)+"\n" {
			t.Fatalf("job %d output %q", id, got)
		}
	}
}

func TestSetuidToNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	a := newAgent(t)
	for _, d := range []string{a.cfg.Spool, filepath.Dir(a.cfg.Spool)} {
		os.Chmod(d, 0o711)
	}
	req := batch(t, 900, "id -u; id -g; touch mine")
	req.UID, req.GID, req.User = 65534, 65534, "nobody"
	os.Chmod(req.SubmitDir, 0o777)
	os.Chmod(filepath.Dir(req.SubmitDir), 0o755)
	launch(t, a, req)
	st := waitFinal(t, a, 900, 3*time.Second)
	out := filepath.Join(req.SubmitDir, "slurm-900.out")
	if st.State != api.StateCompleted || readFile(t, out) != "65534\n65534\n" {
		t.Fatalf("got %s %q reason %q", st.State, readFile(t, out), st.Reason)
	}
	for _, p := range []string{out, filepath.Join(req.SubmitDir, "mine")} {
		fi, _ := os.Stat(p)
		if s := fi.Sys().(*syscall.Stat_t); s.Uid != 65534 || s.Gid != 65534 {
			t.Errorf("%s owned by %d:%d, want nobody 65534:65534", p, s.Uid, s.Gid)
		}
	}
	// nobody may not write where only root may: the job fails, no file is
	// created on nobody's behalf.
	req2 := batch(t, 901, "true")
	req2.UID, req2.GID, req2.User = 65534, 65534, "nobody"
	launch(t, a, req2)
	if st := waitFinal(t, a, 901, 3*time.Second); st.State != api.StateFailed || !strings.Contains(st.Reason, "permission denied") {
		t.Fatalf("unwritable submit dir: %+v", st)
	}
}

// TestLeftoverProcessesEnded checks that background processes a batch
// script leaves behind are killed and reaped when the script exits, as
// Slurm's proctrack does at the end of the batch step.
func TestLeftoverProcessesEnded(t *testing.T) {
	a := newAgent(t)
	req := batch(t, 1400, "sleep 30 & echo $! > bg.pid")
	req.WorkDir = req.SubmitDir
	st := launch(t, a, req)
	final := waitFinal(t, a, 1400, 3*time.Second)
	if final.State != api.StateCompleted {
		t.Fatalf("got %s", final.State)
	}
	// The supervisor kills the group as the script's exit is recorded and
	// reaps the orphan at its next SIGCHLD, which under load can come
	// after the final state: a leftover that survived would still be
	// there after 30 s, its sleep.
	bg := strings.TrimSpace(readFile(t, filepath.Join(req.SubmitDir, "bg.pid")))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + bg); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("background process %s of job (pgid %d) still exists 5 s after the job ended", bg, st.PID)
		}
	}
}

// TestCgroupLimits runs where the agent can enable the cpu and memory
// controllers (root on a cgroup v2 host): the job's cgroup gets cpu.max and
// memory.max, and a job exceeding its memory ends OUT_OF_MEMORY.
func TestCgroupLimits(t *testing.T) {
	a := newAgent(t)
	if a.cg == nil || !a.cg.limits {
		t.Skip("cgroup v2 cpu/memory controllers not available here")
	}
	req := batch(t, 1600, "cat /proc/self/cgroup; head -c 300000000 /dev/zero | tail > /dev/null")
	req.CPUs, req.MemoryMB = 1, 64
	launch(t, a, req)
	cg := a.jobs[1600].rec.Cgroup
	if got := strings.TrimSpace(readFile(t, filepath.Join(cg, "cpu.max"))); got != "100000 100000" {
		t.Errorf("cpu.max = %q", got)
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(cg, "memory.max"))); got != "67108864" {
		t.Errorf("memory.max = %q", got)
	}
	if st := waitFinal(t, a, 1600, 4*time.Second); st.State != api.StateOutOfMemory {
		t.Fatalf("got %s %s, want OUT_OF_MEMORY", st.State, st.ExitCode)
	}
}

// TestUnprivilegedAgentForReal runs when the tests themselves run as a
// normal user (for example `setpriv --reuid=65534 ./noded.test`): the
// agent's real euid decides, no test hook involved.
func TestUnprivilegedAgentForReal(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("runs only as a non-root user")
	}
	a := newAgent(t)
	req := batch(t, 1700, "true")
	req.UID, req.User = 0, "root"
	if _, err := a.Launch(req); !errors.Is(err, ErrForbidden) {
		t.Fatalf("root's job on an agent run by uid %d: %v", os.Geteuid(), err)
	}
	own := batch(t, 1701, "id -u")
	launch(t, a, own)
	if st := waitFinal(t, a, 1701, 3*time.Second); st.State != api.StateCompleted {
		t.Fatalf("own job: %+v", st)
	}
}

func TestArgvAndScriptArguments(t *testing.T) {
	a := newAgent(t)
	cases := []struct {
		name string
		mod  func(*api.LaunchRequest)
		want string
	}{
		{"script arguments", func(r *api.LaunchRequest) {
			r.Script, r.Args = "#!/bin/sh\necho \"$# $1 $2\"\n", []string{"a b", "c"}
		}, "2 a b c\n"},
		{"argv from the job's PATH", func(r *api.LaunchRequest) {
			r.Script, r.Argv = "", []string{"echo", "direct"}
		}, "direct\n"},
		{"script without #! runs under /bin/sh", func(r *api.LaunchRequest) {
			r.Script = "echo plain\n"
		}, "plain\n"},
		{"stdin from a file", func(r *api.LaunchRequest) {
			os.WriteFile(filepath.Join(r.SubmitDir, "in.txt"), []byte("from stdin\n"), 0o644)
			r.Script, r.StdIn = "#!/bin/sh\ncat\n", "in.txt"
		}, "from stdin\n"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := batch(t, uint32(1800+i), "")
			c.mod(&req)
			launch(t, a, req)
			st := waitFinal(t, a, req.JobID, 3*time.Second)
			if got := readFile(t, st.StdOut); st.State != api.StateCompleted || got != c.want {
				t.Fatalf("got %s %q (reason %q), want %q", st.State, got, st.Reason, c.want)
			}
		})
	}
}
