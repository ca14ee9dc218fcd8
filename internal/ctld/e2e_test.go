package ctld

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// These tests run a real controller, real node agents and real processes
// (short shell commands) against SQLite and PostgreSQL.

func TestSubmitRunComplete(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b backend) {
		c := newCluster(t, b.open(t), clusterOpts{})
		id := c.submit(c.wrap(`echo "job $SLURM_JOB_ID on $SLURM_JOB_NODELIST in $SLURM_JOB_PARTITION"`))
		j := c.waitState(id, "COMPLETED", 10*time.Second)
		if j.ExitCode != "0:0" {
			t.Errorf("exit code %q, want 0:0", j.ExitCode)
		}
		if got, want := c.readOut("slurm-"+idStr(id)+".out"), "job "+idStr(id)+" on n1 in debug"; got != want {
			t.Errorf("output %q, want %q", got, want)
		}
		runs := c.runs(id)
		if len(runs) != 1 || runs[0].State != "COMPLETED" || runs[0].NodeList != "n1" || runs[0].End.IsZero() {
			t.Fatalf("accounting rows %+v, want one COMPLETED run on n1", runs)
		}
		fail := c.submit(c.wrap("exit 3"))
		if j := c.waitState(fail, "FAILED", 10*time.Second); j.ExitCode != "3:0" {
			t.Errorf("failed job exit code %q, want 3:0", j.ExitCode)
		}
	})
}

func TestCancelPendingAndRunning(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	run := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.NTasks = 2 }))
	c.waitState(run, "RUNNING", 5*time.Second)
	pend := c.submit(c.wrap("true", func(s *api.JobSpec) { s.NTasks = 2 }))
	c.eventually(5*time.Second, "pending reason Resources", func() bool {
		j, _ := c.jobByID(pend)
		return j.Reason == "Resources"
	})
	c.control(api.OpCancel, idStr(pend))
	c.control(api.OpCancel, idStr(run))
	// Slurm shows a job cancelled while pending as started when it ended
	// (oracle, cancel-pending-show: StartTime= and squeue %S the cancel time).
	if j := c.waitState(pend, "CANCELLED", 5*time.Second); !j.StartTime.Equal(j.EndTime) || j.StartTime.IsZero() {
		t.Errorf("cancelled pending job shows start %v and end %v, want both the cancel time", j.StartTime, j.EndTime)
	}
	c.waitState(run, "CANCELLED", 5*time.Second)
	checkCancelledRecords(t, c, pend, run)
	// The node is free again: a new job runs.
	next := c.submit(c.wrap("true", func(s *api.JobSpec) { s.NTasks = 2 }))
	c.waitState(next, "COMPLETED", 10*time.Second)
	res, err := c.client.Control(c.ctx(), api.JobControlRequest{Op: api.OpCancel, Jobs: []string{"9999"}})
	if err != nil || len(res.Results) != 1 || res.Results[0].Error != "Invalid job id specified" {
		t.Errorf("cancel of an unknown job: %+v, %v", res, err)
	}
}

// checkCancelledRecords: the accounting records of cancelled jobs read
// "CANCELLED by UID" with the exit code 0:0 the controller gave them,
// while a running job's batch step shows the SIGTERM it died of (oracle:
// "3 CANCELLED by 1001 0:0", "3.batch CANCELLED 0:15"; a pending job
// cancelled "CANCELLED by 1001 0:0").
func checkCancelledRecords(t *testing.T, c *cluster, pend, run uint32) {
	t.Helper()
	want := map[string]string{
		idStr(pend):           fmt.Sprintf("CANCELLED by %d 0:0", os.Getuid()),
		idStr(run):            fmt.Sprintf("CANCELLED by %d 0:0", os.Getuid()),
		idStr(run) + ".batch": "CANCELLED 0:15",
	}
	c.eventually(5*time.Second, "batch step killed", func() bool {
		res, err := c.client.Accounting(c.ctx())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range res.Records {
			id := idStr(r.JobID)
			if r.Step != "" {
				id += "." + r.Step
			}
			if _, ok := want[id]; ok {
				got[id] = r.State + " " + r.ExitCode
			}
		}
		return maps.Equal(got, want)
	})
}

func TestHoldRelease(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Hold = true }))
	time.Sleep(200 * time.Millisecond)
	j := c.job(id)
	if j.State != "PENDING" || j.Reason != "JobHeldUser" || j.Priority != 0 {
		t.Fatalf("held job: state %s reason %s priority %d", j.State, j.Reason, j.Priority)
	}
	if !strings.Contains(j.WhyPending, "held by its user") {
		t.Errorf("why pending %q", j.WhyPending)
	}
	c.control(api.OpRelease, idStr(id))
	c.waitState(id, "COMPLETED", 10*time.Second)
	// An admin hold (scontrol hold by root) then release.
	id2 := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Hold = true }))
	c.control(api.OpHold, idStr(id2))
	if j := c.job(id2); j.Reason != "JobHeldAdmin" {
		t.Errorf("reason after admin hold %q", j.Reason)
	}
	c.control(api.OpRelease, idStr(id2))
	c.waitState(id2, "COMPLETED", 10*time.Second)
}

// TestHoldRunningJob: Slurm holds a running job too (oracle: scontrol
// uhold of a running job exits 0, squeue shows "R JobHeldUser" with
// priority 0, scontrol release gives "R None" and its priority back) and
// refuses a hold of a finished job with "Job has already finished".
func TestHoldRunningJob(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("sleep 30"))
	c.waitState(id, "RUNNING", 10*time.Second)
	c.control(api.OpUHold, idStr(id))
	if j := c.job(id); j.State != "RUNNING" || j.Reason != "JobHeldUser" || j.Priority != 0 {
		t.Fatalf("held running job: state %s reason %s priority %d", j.State, j.Reason, j.Priority)
	}
	c.control(api.OpRelease, idStr(id))
	// a running job's reason is not rendered: squeue prints None
	if j := c.job(id); j.State != "RUNNING" || j.Reason != "" || j.Priority == 0 {
		t.Fatalf("released running job: state %s reason %s priority %d", j.State, j.Reason, j.Priority)
	}
	done := c.submit(c.wrap("true"))
	c.waitState(done, "COMPLETED", 10*time.Second)
	res, err := c.client.Control(c.ctx(), api.JobControlRequest{Op: api.OpHold, Jobs: []string{idStr(done)}})
	if err != nil || len(res.Results) != 1 || res.Results[0].Error != "Job has already finished" {
		t.Errorf("hold of a finished job: %+v, %v", res, err)
	}
}

func TestTimeLimitTimeout(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.TimeLimitSec = 1 }))
	j := c.waitState(id, "TIMEOUT", 15*time.Second)
	if d := j.EndTime.Sub(j.StartTime); d < time.Second || d > 6*time.Second {
		t.Errorf("ran %v, want about the 1 s limit plus KillWait", d)
	}
	if r := c.runs(id); len(r) != 1 || r[0].State != "TIMEOUT" {
		t.Errorf("accounting %+v", r)
	}
}

func TestArrayJob(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2})
	id := c.submit(c.wrap(`echo "$SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT"`,
		func(s *api.JobSpec) { s.Array = "1-4%2"; s.Output = "arr-%A_%a.out" }))
	c.eventually(20*time.Second, "every array task completed", func() bool {
		res, err := c.client.Jobs(c.ctx(), api.JobQuery{IDs: []string{idStr(id)}})
		if err != nil {
			return false
		}
		done := 0
		for _, j := range res.Jobs {
			if j.State == "COMPLETED" {
				done++
			}
		}
		return done == 4
	})
	for task := 1; task <= 4; task++ {
		name := "arr-" + idStr(id) + "_" + idStr(uint32(task)) + ".out"
		if got, want := c.readOut(name), idStr(id)+" "+idStr(uint32(task))+" 4"; got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestDependencyAfterOK(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2})
	first := c.submit(c.wrap("sleep 1; echo first > order.txt"))
	second := c.submit(c.wrap("echo second >> order.txt", func(s *api.JobSpec) { s.Dependency = "afterok:" + idStr(first) }))
	time.Sleep(300 * time.Millisecond)
	if j := c.job(second); j.State != "PENDING" || j.Reason != "Dependency" {
		t.Fatalf("dependent job: %s (%s), want PENDING (Dependency)", j.State, j.Reason)
	}
	c.waitState(second, "COMPLETED", 15*time.Second)
	if got := c.readOut("order.txt"); got != "first\nsecond" {
		t.Errorf("order %q", got)
	}
	bad := c.submit(c.wrap("exit 1"))
	never := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Dependency = "afterok:" + idStr(bad) }))
	c.eventually(10*time.Second, "DependencyNeverSatisfied", func() bool {
		j, _ := c.jobByID(never)
		return j.Reason == "DependencyNeverSatisfied"
	})
}

func TestRequeueRecordsRuns(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap(`if [ "$SLURM_RESTART_COUNT" = "" ] || [ "$SLURM_RESTART_COUNT" = 0 ]; then sleep 30; fi; echo done`))
	c.waitState(id, "RUNNING", 5*time.Second)
	c.control(api.OpRequeue, idStr(id))
	j := c.job(id)
	if j.State != "PENDING" || j.RestartCount != 1 {
		t.Fatalf("after requeue: %s restarts %d", j.State, j.RestartCount)
	}
	c.waitState(id, "COMPLETED", 15*time.Second)
	runs := c.runs(id)
	if len(runs) != 2 || runs[0].State != "REQUEUED" || runs[1].State != "COMPLETED" {
		t.Fatalf("runs %+v, want REQUEUED then COMPLETED", runs)
	}
}

func TestSuspendResume(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("sleep 30"))
	c.waitState(id, "RUNNING", 5*time.Second)
	c.control(api.OpSuspend, idStr(id))
	if j := c.job(id); j.State != "SUSPENDED" {
		t.Fatalf("state %s after suspend", j.State)
	}
	c.control(api.OpResume, idStr(id))
	if j := c.job(id); j.State != "RUNNING" {
		t.Fatalf("state %s after resume", j.State)
	}
	c.control(api.OpCancel, idStr(id))
	c.waitState(id, "CANCELLED", 5*time.Second)
}

// TestRestartRecovers stops the controller while jobs pend and run,
// starts a new one on the same store: every job is back with its state,
// the running ones are kept (not started twice) and finish.
func TestRestartRecovers(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b backend) {
		c := newCluster(t, b.open(t), clusterOpts{nodes: 2})
		var running, pending []uint32
		for i := 0; i < 4; i++ {
			running = append(running, c.submit(c.wrap("echo start >> runs-$SLURM_JOB_ID; sleep 2")))
		}
		for i := 0; i < 6; i++ {
			pending = append(pending, c.submit(c.wrap("echo start >> runs-$SLURM_JOB_ID")))
		}
		held := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Hold = true }))
		for _, id := range running {
			c.waitState(id, "RUNNING", 5*time.Second)
		}
		c.ctl.Close()
		c.startController()
		for _, id := range running {
			if j, ok := c.jobByID(id); !ok || j.State != "RUNNING" && j.State != "COMPLETED" {
				t.Fatalf("running job %d after restart: %+v", id, j)
			}
		}
		if j, ok := c.jobByID(held); !ok || j.Reason != "JobHeldUser" {
			t.Fatalf("held job after restart: %+v", j)
		}
		for _, id := range append(running, pending...) {
			c.waitState(id, "COMPLETED", 20*time.Second)
			if got := c.readOut("runs-" + idStr(id)); got != "start" {
				j, _ := c.jobByID(id)
				t.Errorf("job %d ran %q, want exactly once (restarts %d, runs %+v)", id, got, j.RestartCount, c.runs(id))
			}
		}
		next := c.submit(c.wrap("true"))
		if next != held+1 {
			t.Errorf("job id after restart %d, want %d", next, held+1)
		}
	})
}

// TestSilentNodeGoesDown stops a node's agent: after SlurmdTimeout the node
// is DOWN, its --no-requeue job ends NODE_FAIL and its requeueable job is
// pending again with its first run recorded as NODE_FAIL. A restarted
// agent brings the node back (ReturnToService=1).
func TestSilentNodeGoesDown(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	no := false
	keep := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.Requeue = &no }))
	again := c.submit(c.wrap("sleep 30"))
	c.waitState(keep, "RUNNING", 5*time.Second)
	c.waitState(again, "RUNNING", 5*time.Second)
	c.eventually(10*time.Second, "both jobs launched", func() bool { return len(c.agents["n1"].Jobs()) == 2 })
	c.agents["n1"].Close()
	c.waitNodes("down*", 1)
	c.waitState(keep, "NODE_FAIL", time.Second)
	j := c.waitState(again, "PENDING", time.Second)
	if j.RestartCount != 1 {
		t.Errorf("requeued job restarts %d", j.RestartCount)
	}
	if r := c.runs(again); len(r) == 0 || r[0].State != "NODE_FAIL" {
		t.Errorf("first run of the requeued job: %+v", r)
	}
	c.startAgent("n1")
	// The restarted agent still runs both jobs: the controller kills them
	// (neither runs any more) and the requeued one starts again later.
	c.eventually(10*time.Second, "orphans killed", func() bool {
		for _, s := range c.agents["n1"].Jobs() {
			if s.JobID == keep {
				return false
			}
		}
		return true
	})
	c.waitState(again, "RUNNING", 10*time.Second)
	c.control(api.OpCancel, idStr(again))
	c.eventually(10*time.Second, "agent idle", func() bool { return len(c.agents["n1"].Jobs()) == 0 })
}

func TestCancelOneArrayTask(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Array = "0-3"; s.Hold = true }))
	c.control(api.OpCancel, idStr(id)+"_2")
	res, err := c.client.Jobs(c.ctx(), api.JobQuery{IDs: []string{idStr(id)}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, j := range res.Jobs {
		got[j.JobIDStr] = j.State
	}
	// Slurm 24.11 only takes the task out of the pending record: no
	// record of its own (oracle: "Job 25_4 not found" after scancel 25_4)
	want := idStr(id) + "_2"
	if _, ok := got[want]; ok || got[idStr(id)+"_[0-1,3]"] != "PENDING" || len(got) != 1 {
		t.Errorf("records after scancel %s: %v", want, got)
	}
}

// TestArrayTaskByOwnID: a started task is found by its own job id alone,
// as Slurm 24.11's scontrol show job 4 of task 3_0 (json-array scenario).
func TestArrayTaskByOwnID(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.Array = "0-3%1" }))
	var task api.JobInfo
	c.eventually(10*time.Second, "task 0 started", func() bool {
		res, err := c.client.Jobs(c.ctx(), api.JobQuery{IDs: []string{idStr(id) + "_0"}})
		if err != nil || len(res.Jobs) != 1 || res.Jobs[0].State != "RUNNING" {
			return false
		}
		task = res.Jobs[0]
		return true
	})
	res, err := c.client.Jobs(c.ctx(), api.JobQuery{IDs: []string{idStr(task.JobID)}})
	if err != nil || len(res.Jobs) != 1 || res.Jobs[0].JobIDStr != idStr(id)+"_0" {
		t.Fatalf("job %d (task %s_0): %+v %v", task.JobID, idStr(id), res.Jobs, err)
	}
}

// TestGPUDevicesAreDistinct runs two one-GPU jobs on a two-GPU node: each
// sees a different CUDA_VISIBLE_DEVICES.
func TestGPUDevicesAreDistinct(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: "GresTypes=gpu\nNodeName=DEFAULT Gres=gpu:2\n", gpus: 2})
	var ids []uint32
	for i := 0; i < 2; i++ {
		ids = append(ids, c.submit(c.wrap(`echo "$CUDA_VISIBLE_DEVICES"; sleep 1`, func(s *api.JobSpec) { s.Gres = "gpu:1" })))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		c.waitState(id, "COMPLETED", 10*time.Second)
		seen[c.readOut("slurm-"+idStr(id)+".out")] = true
	}
	if !seen["0"] || !seen["1"] {
		t.Errorf("devices seen %v, want 0 and 1", seen)
	}
}

// s5Conf is SCENARIOS.md S5's partition-prio.conf on a local node.
const s5Conf = `ClusterName=ack
SlurmctldHost=localhost
StateSaveLocation=%s
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
PriorityType=priority/multifactor
PreemptType=preempt/partition_prio
PreemptMode=SUSPEND,GANG
KillWait=1
NodeName=w0 CPUs=4 RealMemory=8000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES PriorityTier=1 OverSubscribe=FORCE:1 State=UP
PartitionName=hipri Nodes=ALL PriorityTier=2 OverSubscribe=NO State=UP
`

// TestS5SuspendAndResume: four 1-CPU jobs fill the node in debug; a hipri
// job starts at once and one debug job is suspended (its processes
// stopped); when the hipri job ends the debug job runs again with its end
// time moved by the time it spent suspended.
func TestS5SuspendAndResume(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{conf: s5Conf})
	var low []uint32
	for i := 0; i < 4; i++ {
		low = append(low, c.submit(c.wrap("sleep 60", func(s *api.JobSpec) { s.TimeLimitSec = 300 })))
	}
	for _, id := range low {
		c.waitState(id, "RUNNING", 5*time.Second)
	}
	before := map[uint32]time.Time{}
	for _, id := range low {
		before[id] = c.job(id).EndTime
	}
	hi := c.submit(c.wrap("sleep 2", func(s *api.JobSpec) { s.Partitions = []string{"hipri"} }))
	c.waitState(hi, "RUNNING", 5*time.Second)
	var victim uint32
	c.eventually(5*time.Second, "a debug job suspended", func() bool {
		for _, id := range low {
			if j, _ := c.jobByID(id); j.State == "SUSPENDED" {
				victim = id
				return true
			}
		}
		return false
	})
	c.eventually(5*time.Second, "the agent stopped the victim", func() bool {
		for _, s := range c.agents["w0"].Jobs() {
			if s.JobID == victim {
				return s.State == api.StateSuspended
			}
		}
		return false
	})
	c.waitState(hi, "COMPLETED", 10*time.Second)
	j := c.waitState(victim, "RUNNING", 10*time.Second)
	if shift := j.EndTime.Sub(before[victim]); shift < time.Second {
		t.Errorf("end time moved by %v after about 2 s suspended", shift)
	}
	for _, id := range low {
		c.control(api.OpCancel, idStr(id))
	}
}

// failingStore fails every commit while broken is set.
type failingStore struct {
	Store
	broken atomic.Bool
}

func (f *failingStore) Commit(ctx context.Context, b *Batch) error {
	if f.broken.Load() {
		return errors.New("disk full")
	}
	return f.Store.Commit(ctx, b)
}

// TestStoreFailureAcknowledgesNothing: while the store fails, a submission
// is answered with an error and nothing is launched; once it works again
// the refused submission stays refused (it is not stored late: issue 17,
// finding 2).
func TestStoreFailureAcknowledgesNothing(t *testing.T) {
	t.Parallel()
	fs := &failingStore{Store: openTestSQLite(t)}
	c := newCluster(t, fs, clusterOpts{nodes: 1})
	fs.broken.Store(true)
	_, err := c.client.Submit(c.ctx(), api.SubmitRequest{Spec: c.wrap("echo ran > ran.txt")})
	if err == nil || !strings.Contains(err.Error(), "Unable to save state, nothing was changed: disk full") {
		t.Fatalf("submit with a failing store: %v", err)
	}
	time.Sleep(300 * time.Millisecond)
	if got := c.readOut("ran.txt"); got != "" {
		t.Fatalf("a job ran while nothing could be stored: %q", got)
	}
	fs.broken.Store(false)
	c.eventually(10*time.Second, "state save resumed", func() bool {
		w, err := c.client.Ping(c.ctx())
		return err == nil && w.StateSave == ""
	})
	rows, err := fs.Store.Load(context.Background(), time.Time{})
	if err != nil || len(rows.Jobs) != 0 {
		t.Fatalf("the refused submission was stored late: %d rows, %v", len(rows.Jobs), err)
	}
}

// TestSignalRunningJob is scancel --full --signal=USR1: the job's
// processes get the signal (the trap ends the script).
func TestSignalRunningJob(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap(`trap 'echo got USR1 > sig.txt; exit 0' USR1; while :; do sleep 0.1; done`))
	c.waitState(id, "RUNNING", 5*time.Second)
	c.eventually(5*time.Second, "launched", func() bool { return len(c.agents["n1"].Jobs()) == 1 })
	time.Sleep(200 * time.Millisecond) // let the shell install its trap
	res, err := c.client.Control(c.ctx(), api.JobControlRequest{Op: api.OpCancel, Jobs: []string{idStr(id)}, Signal: 10, Full: true})
	if err != nil || res.Results[0].Error != "" {
		t.Fatalf("signal: %+v %v", res, err)
	}
	c.waitState(id, "COMPLETED", 10*time.Second)
	if got := c.readOut("sig.txt"); got != "got USR1" {
		t.Errorf("trap output %q", got)
	}
}

// TestAgentLostAcrossRestart: the controller restarts while a job runs and
// the node's agent never comes back: after SlurmdTimeout the node is DOWN
// and the job requeued (its run NODE_FAIL).
func TestAgentLostAcrossRestart(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("sleep 30"))
	c.waitState(id, "RUNNING", 5*time.Second)
	c.eventually(5*time.Second, "launched", func() bool { return len(c.agents["n1"].Jobs()) == 1 })
	c.ctl.Close()
	a := c.agents["n1"]
	delete(c.agents, "n1")
	a.Close()
	c.startController()
	c.waitNodes("down*", 1)
	if j := c.waitState(id, "PENDING", time.Second); j.RestartCount != 1 {
		t.Errorf("restarts %d", j.RestartCount)
	}
	c.startAgent("n1") // the returning agent's job is killed, the job runs again
	c.waitState(id, "RUNNING", 10*time.Second)
	c.control(api.OpCancel, idStr(id))
	c.eventually(10*time.Second, "agent idle", func() bool { return len(c.agents["n1"].Jobs()) == 0 })
}

// s3Conf is SCENARIOS.md S3's qos-demo.conf on local nodes.
const s3Conf = `ClusterName=slurm-qos-demo
SlurmctldHost=localhost
StateSaveLocation=%s
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageTRES=gres/gpu
AccountingStorageEnforce=associations,limits,qos
PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=100000
PriorityWeightQOS=10000
PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=4000
PriorityDecayHalfLife=7-0
PreemptType=preempt/qos
PreemptMode=REQUEUE
SchedulerType=sched/backfill
KillWait=1
NodeName=g[1-2] CPUs=192 RealMemory=760000 Gres=gpu:8 State=UNKNOWN
PartitionName=gpu Nodes=g[1-2] Default=YES MaxTime=INFINITE State=UP
`

// TestS3QOSPolicy runs SCENARIOS.md S3 with real agents and processes.
// The users are identities given to the API (their jobs run as root).
func TestS3QOSPolicy(t *testing.T) {
	t.Parallel()
	script, err := os.ReadFile("../../examples/qos-demo/accounts.sacctmgr")
	if err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, openTestSQLite(t), clusterOpts{conf: s3Conf, gpus: 8,
		acct: acctStore(t, "slurm-qos-demo", string(script))})
	as := func(name string) Who { return Who{UID: 0, GID: 0, User: name, Group: "root", Via: "socket"} }
	job := func(qos, gres string, nodes int, limit int64, cmd string) api.JobSpec {
		return c.wrap(cmd, func(s *api.JobSpec) {
			s.QOS, s.Gres, s.MinNodes, s.TimeLimitSec = qos, gres, nodes, limit
		})
	}
	charlie := c.submitAs(as("charlie"), job("batch-lowprio", "gpu:8", 2, 4*3600, "echo run >> charlie.txt; sleep 60"))
	c.waitState(charlie, "RUNNING", 5*time.Second)
	c.eventually(10*time.Second, "charlie launched", func() bool { return c.readOut("charlie.txt") == "run" })
	alice := c.submitAs(as("alice"), job("research", "gpu:8", 2, 2*3600, "sleep 3"))
	c.waitState(alice, "RUNNING", 5*time.Second)
	j := c.job(charlie)
	if j.State != "PENDING" || j.Reason != "BeginTime" || j.RestartCount != 1 {
		t.Errorf("charlie after preemption: %s (%s) restarts %d", j.State, j.Reason, j.RestartCount)
	}
	if r := c.runs(charlie); len(r) != 1 || r[0].State != "PREEMPTED" {
		t.Errorf("charlie's first run: %+v, want PREEMPTED", r)
	}
	var res api.SubmitResponse
	code, msg := c.as(as("bob"), "POST", api.PathSubmit, api.SubmitRequest{Spec: job("interactive", "gpu:5", 1, 600, "true")}, &res)
	if code != 400 || c.lastReason != "QOSGrpGRES" ||
		msg != "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)" {
		t.Errorf("bob gpu:5: %d %s %q", code, c.lastReason, msg)
	}
	bob := c.submitAs(as("bob"), job("interactive", "gpu:4", 1, 600, "sleep 1"))
	if bob != alice+1 {
		t.Errorf("bob's job id %d: the rejected submission used an id", bob)
	}
	c.waitState(alice, "COMPLETED", 15*time.Second)
	c.waitState(bob, "COMPLETED", 15*time.Second)
	c.control(api.OpCancel, idStr(charlie))
}
