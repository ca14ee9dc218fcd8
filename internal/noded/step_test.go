package noded

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// The step tests drive a real agent over HTTP as the controller and srun
// do: the signed step launch, then srun's I/O connection with the step
// credential, reading the frames the real task processes produce.

// stepReq is a step of job id running sh -c script as tasks on this node.
func stepReq(t *testing.T, id uint32, step int, script string, tasks ...int) api.AgentStepLaunch {
	job := batch(t, id, "true")
	job.Script, job.Environment = "", nil
	return api.AgentStepLaunch{Job: job, StepID: step, Name: "sh", Argv: []string{"sh", "-c", script},
		Cwd: t.TempDir(), Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "FROM_SRUN=yes"},
		NodeID: 1, Tasks: tasks, NTasks: 4, NNodes: 2, NodeList: "node[00-01]", TasksPerNode: "2(x2)",
		KillWaitSec: 1}
}

// stepIO is what srun received from one node.
type stepIO struct {
	stdout, stderr map[int]string
	exits          map[int]string
	done           api.StepNodeResult
	err            error
}

// prepareStep sends the controller's signed launch.
func prepareStep(t *testing.T, a *Agent, req api.AgentStepLaunch) {
	t.Helper()
	if _, err := api.NewAgentClient(a.Addr(), testClusterKey, nil).LaunchStep(t.Context(), req); err != nil {
		t.Fatalf("launch step: %v", err)
	}
}

// attachStep opens srun's I/O connection with the controller's credential.
func attachStep(a *Agent, job uint32, step int, key []byte) (io.ReadWriteCloser, error) {
	cred := api.SignStepIO(key, job, step, time.Now())
	return api.DialStepIO(api.StepNodeIO{Node: "node01", URL: a.Addr(), Credential: cred}, job, step, 5*time.Second)
}

// collect reads frames until the Done frame (or the deadline).
func collect(t *testing.T, rw io.ReadWriteCloser, limit time.Duration) stepIO {
	t.Helper()
	res := stepIO{stdout: map[int]string{}, stderr: map[int]string{}, exits: map[int]string{}}
	timer := time.AfterFunc(limit, func() { rw.Close() })
	defer timer.Stop()
	for {
		kind, task, p, err := api.ReadStepFrame(rw)
		if err != nil {
			res.err = err
			t.Fatalf("step stream ended without its Done frame: %v (so far %+v)", err, res)
		}
		switch kind {
		case api.StepFrameStdout:
			res.stdout[int(int32(task))] += string(p)
		case api.StepFrameStderr:
			res.stderr[int(int32(task))] += string(p)
		case api.StepFrameExit:
			var e api.StepTaskExit
			json.Unmarshal(p, &e)
			res.exits[e.Task] = e.ExitCode
		case api.StepFrameDone:
			json.Unmarshal(p, &res.done)
			rw.Close()
			return res
		}
	}
}

func send(t *testing.T, rw io.Writer, kind byte, task uint32, p string) {
	t.Helper()
	if err := api.WriteStepFrame(rw, kind, task, []byte(p)); err != nil {
		t.Fatalf("send frame: %v", err)
	}
}

// TestStepTasksStreamsAndEnvironment runs two tasks of a four-task step on
// node 1: stdin broadcast (srun's default --input=all), the step's
// variables, stderr, and each task's exit code; the node's part ends
// FAILED because one task exited non-zero.
func TestStepTasksStreamsAndEnvironment(t *testing.T) {
	a := newAgent(t, withListener())
	req := stepReq(t, 41, 3, `read x; echo "$SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $SLURM_STEP_ID $SLURM_STEP_NUM_TASKS $SLURM_STEP_NODELIST $SLURM_JOB_ID $FROM_SRUN $x"; echo "err $SLURM_PROCID" >&2; exit $SLURM_LOCALID`, 2, 3)
	prepareStep(t, a, req)
	rw, err := attachStep(a, 41, 3, testClusterKey)
	if err != nil {
		t.Fatal(err)
	}
	send(t, rw, api.StepFrameStdin, api.StepAllTasks, "hello\n")
	send(t, rw, api.StepFrameStdinEOF, api.StepAllTasks, "")
	got := collect(t, rw, 10*time.Second)
	for task, want := range map[int]string{2: "2 0 1 3 4 node[00-01] 41 yes hello\n", 3: "3 1 1 3 4 node[00-01] 41 yes hello\n"} {
		if got.stdout[task] != want {
			t.Errorf("task %d stdout %q, want %q", task, got.stdout[task], want)
		}
		if got.stderr[task] != "err "+strconv.Itoa(task)+"\n" {
			t.Errorf("task %d stderr %q", task, got.stderr[task])
		}
	}
	if got.exits[2] != "0:0" || got.exits[3] != "1:0" {
		t.Errorf("exit codes %v, want 2:0:0 3:1:0", got.exits)
	}
	if !got.done.Done || got.done.State != api.StateFailed || len(got.done.Tasks) != 2 {
		t.Errorf("done %+v, want FAILED with two tasks", got.done)
	}
	// The controller's long poll sees the same result.
	res, err := api.NewAgentClient(a.Addr(), testClusterKey, nil).WaitStep(t.Context(), 41, 3, time.Second)
	if err != nil || !res.Done || res.State != api.StateFailed {
		t.Errorf("wait: %+v %v", res, err)
	}
}

// TestStepInputOneTask is srun --input=3: only task 3 reads srun's stdin,
// the other task's stdin is /dev/null.
func TestStepInputOneTask(t *testing.T) {
	a := newAgent(t, withListener())
	req := stepReq(t, 42, 0, `read x; echo "[$x]"`, 2, 3)
	req.Input = "3"
	prepareStep(t, a, req)
	rw, err := attachStep(a, 42, 0, testClusterKey)
	if err != nil {
		t.Fatal(err)
	}
	send(t, rw, api.StepFrameStdin, 3, "only-three\n")
	send(t, rw, api.StepFrameStdinEOF, 3, "")
	got := collect(t, rw, 10*time.Second)
	if got.stdout[2] != "[]\n" || got.stdout[3] != "[only-three]\n" {
		t.Errorf("stdout %v", got.stdout)
	}
	if got.done.State != api.StateFailed && got.done.State != api.StateCompleted {
		t.Errorf("state %q", got.done.State)
	}
}

// TestStepEnds covers the ways a step ends early: its time limit
// (TIMEOUT, slurmstepd's "DUE TO TIME LIMIT" line), the controller's kill
// (job cancelled: CANCELLED), Ctrl-C forwarded by srun (the task's trap
// runs) and srun going away (the tasks are killed).
func TestStepEnds(t *testing.T) {
	cases := []struct {
		name      string
		script    string
		limit     int64
		act       func(t *testing.T, a *Agent, rw io.ReadWriteCloser)
		state     string
		exit      string
		stderrHas string
	}{
		{name: "time limit", script: "sleep 30", limit: 1, state: api.StateTimeout, exit: "0:15", stderrHas: "DUE TO TIME LIMIT ***"},
		{name: "controller kill", script: "sleep 30", state: api.StateCancelled, exit: "0:15", stderrHas: "CANCELLED AT",
			act: func(t *testing.T, a *Agent, rw io.ReadWriteCloser) {
				cl := api.NewAgentClient(a.Addr(), testClusterKey, nil)
				if _, err := cl.SignalStep(t.Context(), 50, 0, api.StepSignalRequest{Kill: true}); err != nil {
					t.Errorf("kill: %v", err)
				}
			}},
		{name: "srun ctrl-c", script: `trap 'echo interrupted; exit 7' INT; sleep 30 & wait`, state: api.StateFailed, exit: "7:0",
			act: func(t *testing.T, a *Agent, rw io.ReadWriteCloser) {
				send(t, rw, api.StepFrameSignal, 0, "2")
			}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := newAgent(t, withListener())
			req := stepReq(t, 50, 0, c.script, 0)
			req.TimeLimitSec = c.limit
			req.Input = api.StepInputNone
			prepareStep(t, a, req)
			rw, err := attachStep(a, 50, 0, testClusterKey)
			if err != nil {
				t.Fatal(err)
			}
			if c.act != nil {
				time.Sleep(300 * time.Millisecond) // let the task start and trap
				c.act(t, a, rw)
			}
			t0 := time.Now()
			got := collect(t, rw, 10*time.Second)
			if got.done.State != c.state || got.exits[0] != c.exit {
				t.Errorf("case %d: state %s exit %s, want %s %s (%+v)", i, got.done.State, got.exits[0], c.state, c.exit, got)
			}
			if !strings.Contains(got.stderr[-1], c.stderrHas) {
				t.Errorf("srun's stderr %q lacks %q", got.stderr[-1], c.stderrHas)
			}
			if d := time.Since(t0); d > 5*time.Second {
				t.Errorf("step took %v to end", d)
			}
		})
	}
}

// TestStepSrunGone: when srun's connection drops, the tasks are killed
// (Slurm ends a step whose srun died) and the node's part ends CANCELLED.
func TestStepSrunGone(t *testing.T) {
	a := newAgent(t, withListener())
	pidFile := t.TempDir() + "/pid"
	prepareStep(t, a, stepReq(t, 51, 0, "echo $$ > "+pidFile+"; exec sleep 30", 0))
	rw, err := attachStep(a, 51, 0, testClusterKey)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for i := 0; i < 100 && pid == 0; i++ {
		time.Sleep(20 * time.Millisecond)
		data, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	rw.Close()
	res, err := api.NewAgentClient(a.Addr(), testClusterKey, nil).WaitStep(t.Context(), 51, 0, 10*time.Second)
	if err != nil || !res.Done || res.State != api.StateCancelled {
		t.Fatalf("after srun left: %+v %v", res, err)
	}
	if pid == 0 || sameProcessAlive(pid) {
		t.Errorf("task process %d still alive after srun left", pid)
	}
}

func sameProcessAlive(pid int) bool {
	st, err := readProcStat(pid)
	return err == nil && st.State != 'Z'
}

// TestStepRefusals: a forged credential (another key), a second
// connection to the same step, an unprivileged agent asked to run another
// user's tasks, and a step srun never connects to.
func TestStepRefusals(t *testing.T) {
	a := newAgent(t, withListener())
	prepareStep(t, a, stepReq(t, 60, 0, "sleep 1", 0))
	if _, err := attachStep(a, 60, 0, []byte("not-the-cluster-key-0123456789")); !isStatus(err, 401) {
		t.Errorf("forged credential: %v, want 401", err)
	}
	rw, err := attachStep(a, 60, 0, testClusterKey)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if _, err := attachStep(a, 60, 0, testClusterKey); !isStatus(err, 409) {
		t.Errorf("second connection: %v, want 409", err)
	}
	if _, err := attachStep(a, 60, 9, testClusterKey); !isStatus(err, 404) {
		t.Errorf("unknown step: %v, want 404", err)
	}

	u := newAgent(t, withListener(), asUnprivileged(os.Getuid()+1))
	_, err = api.NewAgentClient(u.Addr(), testClusterKey, nil).LaunchStep(t.Context(), stepReq(t, 61, 0, "true", 0))
	if !isStatus(err, 403) {
		t.Errorf("unprivileged agent, other uid: %v, want 403", err)
	}

	req := stepReq(t, 62, 0, "true", 0)
	req.AttachTimeoutSec = 1
	prepareStep(t, a, req)
	res, err := api.NewAgentClient(a.Addr(), testClusterKey, nil).WaitStep(t.Context(), 62, 0, 5*time.Second)
	if err != nil || res.State != api.StateFailed || !strings.Contains(res.Reason, "srun did not connect") {
		t.Errorf("never attached: %+v %v", res, err)
	}
}

func isStatus(err error, status int) bool {
	var ae *api.AgentError
	return errors.As(err, &ae) && ae.Status == status
}

// TestStepOptionsOnNode: what the agent does with srun's step options:
// --multi-prog gives each task its own command line, the step's variables
// Slurm 24.11 sets (SLURM_DISTRIBUTION, the step's SLURM_NNODES, --exact's
// SLURM_CPUS_ON_NODE, SLURM_TOPOLOGY_ADDR_PATTERN, SLURM_OOM_KILL_STEP,
// the job's SLURM_JOB_CPUS_PER_NODE from srun's environment, no
// SLURM_JOB_GROUP), --cpu-bind=cores binds each task to one CPU of the
// step's set, and --pty gives task 0 a terminal.
func TestStepOptionsOnNode(t *testing.T) {
	a := newAgent(t, withListener())
	env := `echo "$SLURM_DISTRIBUTION $SLURM_NNODES $SLURM_CPUS_ON_NODE $SLURM_TOPOLOGY_ADDR_PATTERN $SLURM_OOM_KILL_STEP $SLURM_JOB_CPUS_PER_NODE ${SLURM_JOB_GROUP:-nogroup}"`
	req := stepReq(t, 51, 0, "unused", 2, 3)
	req.Env = append(req.Env, "SLURM_JOB_CPUS_PER_NODE=2(x2)")
	req.TaskArgv = [][]string{{"sh", "-c", env}, {"sh", "-c", "grep Cpus_allowed_list /proc/self/status; tty || true"}}
	req.Distribution, req.StepCPUs = "cyclic", 2
	req.CPUBind = &api.CPUBind{Types: []string{"cores"}}
	req.Pty = &api.StepPty{Rows: 24, Cols: 80}
	req.NodeID = 0
	prepareStep(t, a, req)
	rw, err := attachStep(a, 51, 0, testClusterKey)
	if err != nil {
		t.Fatal(err)
	}
	send(t, rw, api.StepFrameStdinEOF, api.StepAllTasks, "")
	got := collect(t, rw, 10*time.Second)
	if want := "cyclic 2 2 node 0 2(x2) nogroup"; strings.TrimSpace(got.stdout[2]) != want {
		t.Errorf("task 2 (a pty) stdout %q, want %q", got.stdout[2], want)
	}
	lines := strings.Split(strings.TrimSpace(got.stdout[3]), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], ",") || strings.Contains(lines[0], "-") || lines[1] != "not a tty" {
		t.Errorf("task 3: one CPU and no terminal, got %q", got.stdout[3])
	}
	if got.exits[2] != "0:0" || got.exits[3] != "0:0" {
		t.Errorf("exits %v (stderr %v)", got.exits, got.stderr)
	}
}

// TestStepCPUBindVerbose: --cpu-bind=verbose reports each task's binding
// on its stderr in task/affinity's words, as the oracle printed them with
// TaskPlugin=task/affinity: "cpu-bind=MASK - n1, task  0  0 [4886]: mask
// 0x1 set", and "cpu-bind=NONE - n1, task  0  0 [4932]: mask 0x3".
func TestStepCPUBindVerbose(t *testing.T) {
	a := newAgent(t, withListener())
	for step, typ := range []string{"none", "cores"} {
		req := stepReq(t, 52, step, "true", 0)
		req.CPUBind = &api.CPUBind{Verbose: true, Types: []string{typ}}
		prepareStep(t, a, req)
		rw, err := attachStep(a, 52, step, testClusterKey)
		if err != nil {
			t.Fatal(err)
		}
		send(t, rw, api.StepFrameStdinEOF, api.StepAllTasks, "")
		got := collect(t, rw, 10*time.Second).stderr[0]
		want := regexp.MustCompile(`^cpu-bind=NONE - \S+, task  0  0 \[\d+\]: mask 0x[0-9A-F]+\n$`)
		if typ == "cores" {
			want = regexp.MustCompile(`^cpu-bind=MASK - \S+, task  0  0 \[\d+\]: mask 0x[0-9A-F]+ set\n$`)
		}
		if !want.MatchString(got) {
			t.Errorf("--cpu-bind=verbose,%s: stderr %q", typ, got)
		}
	}
}
