package ctld

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestStepShape is srun's step geometry inside an allocation: default
// nodes and tasks, fewer tasks than nodes, too many nodes, and the block
// distribution's SLURM_TASKS_PER_NODE.
func TestStepShape(t *testing.T) {
	t.Parallel()
	cases := []struct {
		alloc, jobTasks, n, N int
		nodes, tasks          int
		perNode               string
		warn, err             string
	}{
		{alloc: 2, jobTasks: 1, nodes: 2, tasks: 2, perNode: "1(x2)"},
		{alloc: 2, jobTasks: 4, nodes: 2, tasks: 4, perNode: "2(x2)"},
		{alloc: 2, jobTasks: 4, n: 3, nodes: 2, tasks: 3, perNode: "2,1"},
		{alloc: 3, jobTasks: 1, n: 1, nodes: 1, tasks: 1, perNode: "1"},
		{alloc: 3, jobTasks: 6, N: 1, nodes: 1, tasks: 1, perNode: "1"},
		{alloc: 3, jobTasks: 1, n: 7, N: 3, nodes: 3, tasks: 7, perNode: "3,2(x2)"},
		{alloc: 2, jobTasks: 1, n: 1, N: 2, nodes: 1, tasks: 1, perNode: "1", warn: "can't run 1 processes on 2 nodes, setting nnodes to 1"},
		{alloc: 1, jobTasks: 1, N: 2, err: "Only allocated 1 nodes asked for 2"},
	}
	for _, c := range cases {
		name := fmt.Sprintf("alloc%d_n%d_N%d", c.alloc, c.n, c.N)
		nodes, tasks, warns, err := stepShape(c.alloc, c.jobTasks, c.N, c.n)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: err %v, want %q", name, err, c.err)
			}
			continue
		}
		caps := make([]int, nodes)
		for i := range caps {
			caps[i] = 8
		}
		got := tasksPerNode(stepCounts(caps, tasks))
		if err != nil || nodes != c.nodes || tasks != c.tasks || got != c.perNode || strings.Join(warns, "") != c.warn {
			t.Errorf("%s: %d nodes %d tasks %q %v %v, want %d %d %q %q", name, nodes, tasks, got, warns, err, c.nodes, c.tasks, c.perNode, c.warn)
		}
	}
}

// TestStepLayout: srun -m places tasks as Slurm 24.11 did on the oracle
// for a job holding 7 CPUs on n1 and 1 on n2 (sbatch -N2 -n8): cyclic
// 0,2,3 on n1 and 1 on n2; plane=2 0,1,3 and 2; block 0-2 and 3; a node
// whose CPUs are used up is skipped, and -O goes on round the nodes.
func TestStepLayout(t *testing.T) {
	t.Parallel()
	cases := []struct {
		caps   []int
		ntasks int
		dist   string
		plane  int
		want   string
	}{
		{[]int{7, 1}, 4, "cyclic", 0, "[[0 2 3] [1]]"},
		{[]int{7, 1}, 3, "cyclic", 0, "[[0 2] [1]]"},
		{[]int{7, 1}, 4, "plane", 2, "[[0 1 3] [2]]"},
		{[]int{7, 1}, 4, "block", 0, "[[0 1 2] [3]]"},
		{[]int{3, 1}, 4, "block:cyclic", 0, "[[0 1 2] [3]]"},
		{[]int{8, 8}, 4, "block", 0, "[[0 1] [2 3]]"},
		{[]int{1, 1}, 3, "block", 0, "[[0 1] [2]]"},
		{[]int{2, 2}, 4, "cyclic,pack", 0, "[[0 2] [1 3]]"},
		{[]int{2, 2}, 2, "block:cyclic,pack", 0, "[[0 1] []]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(stepLayout(c.caps, c.ntasks, c.dist, c.plane)); got != c.want {
			t.Errorf("caps %v -n%d -m %s: %s, want %s", c.caps, c.ntasks, c.dist, got, c.want)
		}
	}
}

// TestCombineStep: a step's state and ExitCode from its nodes' results.
func TestCombineStep(t *testing.T) {
	t.Parallel()
	node := func(state string, exits ...string) api.StepNodeResult {
		r := api.StepNodeResult{Done: true, State: state}
		for i, e := range exits {
			r.Tasks = append(r.Tasks, api.StepTaskExit{Task: i, ExitCode: e})
		}
		return r
	}
	cases := []struct {
		res         []api.StepNodeResult
		state, exit string
	}{
		{[]api.StepNodeResult{node(api.StateCompleted, "0:0"), node(api.StateCompleted, "0:0")}, api.StateCompleted, "0:0"},
		{[]api.StepNodeResult{node(api.StateCompleted, "0:0"), node(api.StateFailed, "3:0", "1:0")}, api.StateFailed, "3:0"},
		{[]api.StepNodeResult{node(api.StateFailed, "0:9")}, api.StateFailed, "0:9"},
		{[]api.StepNodeResult{node(api.StateTimeout, "0:15"), node(api.StateCancelled, "0:15")}, api.StateTimeout, "0:15"},
		{[]api.StepNodeResult{node(api.StateCompleted, "0:0"), node(api.StateNodeFail)}, api.StateNodeFail, "0:0"},
		// A node whose task the OOM killer hit: the step ends
		// OUT_OF_MEMORY 0:125, not FAILED 0:9.
		{[]api.StepNodeResult{node(api.StateCompleted, "0:0"), node(api.StateOutOfMemory, "0:9")}, api.StateOutOfMemory, "0:125"},
	}
	for i, c := range cases {
		if s, e := combineStep(c.res); s != c.state || e != c.exit {
			t.Errorf("case %d: %s %s, want %s %s", i, s, e, c.state, c.exit)
		}
	}
}

// srunIO is what an srun-like client read from a step's nodes.
type srunIO struct {
	mu     sync.Mutex
	stdout []string // "TASK: line"
	stderr string
	exits  map[int]string
}

// attachAll connects to every node of a step as srun does (stdin closed)
// and reads until each node's Done frame.
func attachAll(t *testing.T, res api.StepLaunchResponse) *srunIO {
	t.Helper()
	out := &srunIO{exits: map[int]string{}}
	var wg sync.WaitGroup
	for _, n := range res.Nodes {
		n.CA = res.CA // api.Client does it; tests calling the handler directly too
		rw, err := api.DialStepIO(n, res.JobID, res.StepID, 5*time.Second)
		if err != nil {
			t.Fatalf("connect to %s: %v", n.Node, err)
		}
		api.WriteStepFrame(rw, api.StepFrameStdinEOF, api.StepAllTasks, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rw.Close()
			timer := time.AfterFunc(20*time.Second, func() { rw.Close() })
			defer timer.Stop()
			for {
				kind, task, p, err := api.ReadStepFrame(rw)
				if err != nil {
					return
				}
				out.mu.Lock()
				switch kind {
				case api.StepFrameStdout:
					for _, l := range strings.Split(strings.TrimSpace(string(p)), "\n") {
						out.stdout = append(out.stdout, fmt.Sprintf("%d: %s", task, l))
					}
				case api.StepFrameStderr:
					out.stderr += string(p)
				case api.StepFrameExit:
					var e api.StepTaskExit
					json.Unmarshal(p, &e)
					out.exits[e.Task] = e.ExitCode
				}
				out.mu.Unlock()
				if kind == api.StepFrameDone {
					return
				}
			}
		}()
	}
	wg.Wait()
	sort.Strings(out.stdout)
	return out
}

// stepRecord waits until the accounting records show step job.step in a
// final state and returns it.
func (c *cluster) stepRecord(job uint32, step int) api.AcctRecord {
	c.t.Helper()
	var rec api.AcctRecord
	c.eventually(10*time.Second, fmt.Sprintf("step %d.%d recorded", job, step), func() bool {
		res, err := c.client.Accounting(c.ctx())
		if err != nil {
			return false
		}
		for _, r := range res.Records {
			if r.JobID == job && r.Step == fmt.Sprint(step) && r.State != "RUNNING" {
				rec = r
				return true
			}
		}
		return false
	})
	return rec
}

// TestStepOnAllocatedNodes runs a three-task step in a two-node job: the
// tasks run on the job's nodes through their agents (block distribution:
// two on the first node, one on the second), with the step's environment,
// and the step is recorded COMPLETED; a failing step is recorded FAILED
// with its highest exit code.
func TestStepOnAllocatedNodes(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2})
	id := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.MinNodes, s.NTasks = 2, 3 }))
	c.waitState(id, "RUNNING", 10*time.Second)
	res, err := c.client.StepLaunch(c.ctx(), api.StepLaunchRequest{JobID: id, Name: "env", Cwd: c.work,
		Argv: []string{"sh", "-c", `echo $SLURMD_NODENAME $SLURM_PROCID/$SLURM_NTASKS $SLURM_NODEID $SLURM_LOCALID $SLURM_STEP_NODELIST $SLURM_STEP_TASKS_PER_NODE`},
		Env:  []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StepID != 0 || res.NodeList != "n[1-2]" || len(res.Nodes) != 2 || fmt.Sprint(res.Nodes[0].Tasks, res.Nodes[1].Tasks) != "[0 1] [2]" {
		t.Fatalf("step layout %+v", res)
	}
	got := attachAll(t, res)
	want := []string{"0: n1 0/3 0 0 n[1-2] 2,1", "1: n1 1/3 0 1 n[1-2] 2,1", "2: n2 2/3 1 0 n[1-2] 2,1"}
	if strings.Join(got.stdout, "\n") != strings.Join(want, "\n") {
		t.Errorf("step output:\n%s\nwant:\n%s", strings.Join(got.stdout, "\n"), strings.Join(want, "\n"))
	}
	if rec := c.stepRecord(id, 0); rec.State != "COMPLETED" || rec.ExitCode != "0:0" || rec.Name != "env" || rec.NodeList != "n[1-2]" {
		t.Errorf("step record %+v", rec)
	}

	res, err = c.client.StepLaunch(c.ctx(), api.StepLaunchRequest{JobID: id, Argv: []string{"sh", "-c", "exit $((SLURM_PROCID + 2))"}, NTasks: 2})
	if err != nil {
		t.Fatal(err)
	}
	got = attachAll(t, res)
	if got.exits[0] != "2:0" || got.exits[1] != "3:0" {
		t.Errorf("exit codes %v", got.exits)
	}
	if rec := c.stepRecord(id, 1); rec.State != "FAILED" || rec.ExitCode != "3:0" {
		t.Errorf("failed step record %+v", rec)
	}
}

// TestStepEndsWithJob: scancel of the job kills its running step (srun
// sees slurmstepd's CANCELLED line; the step is recorded CANCELLED), and
// a step's own time limit ends it TIMEOUT.
func TestStepEndsWithJob(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("sleep 30"))
	c.waitState(id, "RUNNING", 10*time.Second)

	res, err := c.client.StepLaunch(c.ctx(), api.StepLaunchRequest{JobID: id, Argv: []string{"sleep", "30"}, TimeLimitSec: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := attachAll(t, res)
	if !strings.Contains(got.stderr, "DUE TO TIME LIMIT") {
		t.Errorf("step time limit: stderr %q", got.stderr)
	}
	if rec := c.stepRecord(id, 0); rec.State != "TIMEOUT" {
		t.Errorf("timed-out step record %+v", rec)
	}

	res, err = c.client.StepLaunch(c.ctx(), api.StepLaunchRequest{JobID: id, Argv: []string{"sleep", "30"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *srunIO)
	go func() { done <- attachAll(t, res) }()
	time.Sleep(300 * time.Millisecond)
	c.control(api.OpCancel, idStr(id))
	select {
	case got = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the step outlived its cancelled job")
	}
	if !strings.Contains(got.stderr, fmt.Sprintf("*** STEP %d.1 ON n1 CANCELLED AT", id)) {
		t.Errorf("srun's stderr after scancel: %q", got.stderr)
	}
	if rec := c.stepRecord(id, 1); rec.State != "CANCELLED" {
		t.Errorf("step of the cancelled job %+v", rec)
	}
}

// TestStepRefused: only the job's owner (or an admin) may run steps in
// it, only while it runs, and only within its nodes.
func TestStepRefused(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	mine := c.submitAs(alice, c.wrap("sleep 30"))
	c.waitState(mine, "RUNNING", 10*time.Second)
	pending := c.submitAs(alice, c.wrap("true", func(s *api.JobSpec) { s.Begin = "now+1hour" }))
	cases := []struct {
		who    Who
		req    api.StepLaunchRequest
		status int
		msg    string
	}{
		{bob, api.StepLaunchRequest{JobID: mine, Argv: []string{"true"}}, http.StatusForbidden, "Access/permission denied"},
		{alice, api.StepLaunchRequest{JobID: pending, Argv: []string{"true"}}, http.StatusConflict, "Job is pending execution"},
		{alice, api.StepLaunchRequest{JobID: 999, Argv: []string{"true"}}, http.StatusNotFound, "Invalid job id specified"},
		{alice, api.StepLaunchRequest{JobID: mine, Argv: []string{"true"}, NNodes: 2}, http.StatusBadRequest, "Only allocated 1 nodes asked for 2"},
		{alice, api.StepLaunchRequest{JobID: mine}, http.StatusBadRequest, "No command given to execute."},
	}
	for _, tc := range cases {
		code, msg := c.as(tc.who, "POST", api.PathStepLaunch, tc.req, nil)
		if code != tc.status || msg != tc.msg {
			t.Errorf("%s: step in job %d: %d %q, want %d %q", tc.who.User, tc.req.JobID, code, msg, tc.status, tc.msg)
		}
	}
	var res api.StepLaunchResponse
	if code, msg := c.as(root, "POST", api.PathStepLaunch, api.StepLaunchRequest{JobID: mine, Argv: []string{"true"}}, &res); code != 200 {
		t.Errorf("root (admin) step in alice's job: %d %s", code, msg)
	} else {
		attachAll(t, res)
	}
}

// TestStepFollowsSuspend: scontrol suspend stops a running step's tasks
// (SIGSTOP; the agents here run without cgroups) and resume continues
// them, so the step ends normally afterwards.
func TestStepFollowsSuspend(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("sleep 30"))
	c.waitState(id, "RUNNING", 10*time.Second)
	pidFile := c.work + "/step.pid"
	res, err := c.client.StepLaunch(c.ctx(), api.StepLaunchRequest{JobID: id,
		Argv: []string{"sh", "-c", "echo $$ > " + pidFile + "; exec sleep 2"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *srunIO)
	go func() { done <- attachAll(t, res) }()
	var pid string
	c.eventually(5*time.Second, "the step's pid", func() bool {
		pid = c.readOut("step.pid")
		return pid != ""
	})
	c.control(api.OpSuspend, idStr(id))
	c.eventually(5*time.Second, "the step's task stopped", func() bool { return procState(pid) == "T" })
	c.control(api.OpResume, idStr(id))
	c.eventually(5*time.Second, "the step's task running again", func() bool { return procState(pid) != "T" })
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the resumed step did not end")
	}
	if rec := c.stepRecord(id, 0); rec.State != "COMPLETED" {
		t.Errorf("resumed step record %+v", rec)
	}
}

// procState is the /proc state letter of pid ("" when gone).
func procState(pid string) string {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return ""
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// TestStepSurvivesControllerRestart: a controller restarted while a step
// runs (its agents and their tasks stay) takes the step up again from the
// store and records its end when the tasks finish.
func TestStepSurvivesControllerRestart(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("sleep 30"))
	c.waitState(id, "RUNNING", 10*time.Second)
	res, err := c.client.StepLaunch(c.ctx(), api.StepLaunchRequest{JobID: id, Argv: []string{"sh", "-c", "sleep 2; echo finished"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *srunIO)
	go func() { done <- attachAll(t, res) }()
	time.Sleep(200 * time.Millisecond)

	// Same address, so the running agents find the new controller.
	addr := c.ctl.Addr()
	c.ctl.Close()
	ctl, err := New(context.Background(), Options{Conf: c.cfg, StateDir: c.dir, Store: c.store, Socket: shortSocket(t),
		Listen: addr, Logger: quietLogger(), TickInterval: 50 * time.Millisecond, SchedDelay: 5 * time.Millisecond,
		HeartbeatInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	c.ctl, c.client = ctl, api.NewUnixClient(ctl.Socket())

	var got *srunIO
	select {
	case got = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the step did not end")
	}
	if len(got.stdout) != 1 || got.stdout[0] != "0: finished" {
		t.Errorf("srun's output across the restart: %q", got.stdout)
	}
	if rec := c.stepRecord(id, 0); rec.State != "COMPLETED" || rec.ExitCode != "0:0" {
		t.Errorf("step record after the restart %+v", rec)
	}
}

// TestStepGPUs: a step's tasks see the job's GPUs on their node
// (CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS), the devices the batch script
// got: the second of two one-GPU jobs on a two-GPU node runs its step on
// device 1.
func TestStepGPUs(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: "GresTypes=gpu\nNodeName=DEFAULT Gres=gpu:2\n", gpus: 2})
	gpu := func(s *api.JobSpec) { s.Gres = "gpu:1" }
	first := c.submit(c.wrap("sleep 30", gpu))
	c.waitState(first, "RUNNING", 10*time.Second)
	second := c.submit(c.wrap(`echo "$CUDA_VISIBLE_DEVICES" > batch.gpus; sleep 30`, gpu))
	c.waitState(second, "RUNNING", 10*time.Second)
	res, err := c.client.StepLaunch(c.ctx(), api.StepLaunchRequest{JobID: second,
		Argv: []string{"sh", "-c", `echo "$CUDA_VISIBLE_DEVICES $SLURM_STEP_GPUS"`}})
	if err != nil {
		t.Fatal(err)
	}
	got := attachAll(t, res)
	c.eventually(5*time.Second, "the batch script's devices", func() bool { return c.readOut("batch.gpus") != "" })
	batch := c.readOut("batch.gpus")
	if want := "0: " + batch + " " + batch; len(got.stdout) != 1 || got.stdout[0] != want || batch != "1" {
		t.Errorf("step GPUs %q, want %q (batch script saw %q)", got.stdout, want, batch)
	}
}
