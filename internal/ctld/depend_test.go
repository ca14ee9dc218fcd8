package ctld

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// TestFailedDependencySurvivesPurgeAndRestart: a job whose afternotok
// dependency failed (its parent COMPLETED) keeps DependencyNeverSatisfied
// and Dependency=afternotok:N(failed) once the parent is purged after
// MinJobAge, and after a controller restart that no longer loads the
// parent, as in Slurm; it never runs.
func TestFailedDependencySurvivesPurgeAndRestart(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Now().Truncate(time.Second)}
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, now: clock.now})
	parent := c.submit(c.wrap("true"))
	c.waitState(parent, "COMPLETED", 10*time.Second)
	cleanup := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Dependency = "afternotok:" + idStr(parent) }))
	want := "afternotok:" + idStr(parent) + "(failed)"
	never := func(what string) {
		t.Helper()
		c.eventually(5*time.Second, what, func() bool {
			j, ok := c.jobByID(cleanup)
			return ok && j.State == "PENDING" && j.Reason == "DependencyNeverSatisfied" && j.Dependency == want
		})
	}
	never("DependencyNeverSatisfied")
	clock.advance(10 * time.Minute) // past MinJobAge=300
	c.eventually(5*time.Second, "parent purged", func() bool {
		_, ok := c.jobByID(parent)
		return !ok
	})
	time.Sleep(200 * time.Millisecond) // a few scheduling cycles
	never("still DependencyNeverSatisfied after the purge")
	c.ctl.Close()
	c.startController()
	time.Sleep(200 * time.Millisecond)
	never("still DependencyNeverSatisfied after a restart")
}

// TestArrayTaskThrottleUpdate: scontrol update JobId=<array>
// ArrayTaskThrottle=K changes how many tasks run at once (squeue shows
// A_[...%K]); Slurm refuses it on a task id or a plain job, to a user who
// does not own the array, and a negative value.
func TestArrayTaskThrottleUpdate(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2})
	arr := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.Array = "0-7%1" }))
	plain := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Hold = true }))
	running := func() int {
		res, _ := c.client.Jobs(c.ctx(), api.JobQuery{IDs: []string{idStr(arr)}})
		n := 0
		for _, j := range res.Jobs {
			if j.State == "RUNNING" {
				n++
			}
		}
		return n
	}
	c.eventually(5*time.Second, "one task running", func() bool { return running() == 1 })
	update := func(who Who, job, v string) (int, string) {
		return c.as(who, "POST", api.PathJobUpdate, api.JobUpdateRequest{Job: job, Set: map[string]string{"ArrayTaskThrottle": v}}, nil)
	}
	notArray := "Requested operation not supported on this system"
	refusals := []struct {
		who    Who
		job, v string
		code   int
		msg    string
	}{
		{bob, idStr(arr), "3", 403, "Invalid user id"},
		{root, idStr(plain), "3", 400, notArray},
		{root, idStr(arr) + "_5", "3", 400, notArray},
		{root, idStr(arr), "-1", 400, "Invalid ArrayTaskThrottle value"},
		{root, "99999", "3", 404, "Invalid job id specified"},
	}
	for _, r := range refusals {
		if code, msg := update(r.who, r.job, r.v); code != r.code || msg != r.msg {
			t.Errorf("%s: ArrayTaskThrottle=%s as %s: %d %q, want %d %q", r.job, r.v, r.who.User, code, msg, r.code, r.msg)
		}
	}
	if code, msg := update(root, idStr(arr), "3"); code != 200 {
		t.Fatalf("update: %d %s", code, msg)
	}
	c.eventually(5*time.Second, "three tasks running", func() bool { return running() == 3 })
	time.Sleep(100 * time.Millisecond)
	if n := running(); n != 3 {
		t.Fatalf("%d tasks running with ArrayTaskThrottle=3", n)
	}
	rec, ok := c.jobByID(arr)
	if !ok || rec.ArrayTasks != "3-7%3" {
		t.Errorf("pending record: %+v", rec.ArrayTasks)
	}
}

// TestKillOnInvalidDep: sbatch --kill-on-invalid-dep=yes cancels the job
// once its dependency fails, as Slurm does, and scontrol show job says
// KillOInInvalidDependent=Yes (Slurm's spelling).
func TestKillOnInvalidDep(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	bad := c.submit(c.wrap("exit 1"))
	dep := c.submit(c.wrap("true", func(s *api.JobSpec) {
		s.Dependency, s.KillOnInvalidDep = "afterok:"+idStr(bad), "yes"
	}))
	j := c.waitState(dep, "CANCELLED", 10*time.Second)
	if j.Dependency != "afterok:"+idStr(bad)+"(failed)" || j.KillOnInvalidDep != "Yes" {
		t.Errorf("cancelled job: Dependency=%s KillOnInvalidDep=%q", j.Dependency, j.KillOnInvalidDep)
	}
}

// TestUpdateLabel: a refused update names the job as Slurm does: the id,
// an array's id with all its tasks (running ones and the pending
// record's), or the task asked for.
func TestUpdateLabel(t *testing.T) {
	t.Parallel()
	pending := sched.NewNodeSet(10)
	for i := 2; i <= 9; i++ {
		pending.Set(i)
	}
	arr := []*sched.Job{
		{ID: 110, Array: &sched.ArrayInfo{JobID: 110, TaskID: -1, Tasks: pending}},
		{ID: 113, Array: &sched.ArrayInfo{JobID: 110, TaskID: 0}},
		{ID: 114, Array: &sched.ArrayInfo{JobID: 110, TaskID: 1}},
	}
	cases := []struct {
		spec string
		js   []*sched.Job
		want string
	}{
		{"111", []*sched.Job{{ID: 111}}, "111"},
		{"110", arr, "110_0-9"},
		{"110_5", arr[:1], "110_5"},
	}
	for _, c := range cases {
		if got := updateLabel(c.spec, c.js); got != c.want {
			t.Errorf("%s: %q, want %q", c.spec, got, c.want)
		}
	}
}
