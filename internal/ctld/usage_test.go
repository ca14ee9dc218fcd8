package ctld

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestUsageStore checks that step usage is stored (overwritten when an
// agent re-sends it) and put on the records: each step its own, the job's
// line the tasks of all its steps, on SQLite and PostgreSQL.
func TestUsageStore(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b backend) {
		c := &Controller{store: b.open(t)}
		ctx := context.Background()
		batch := &api.Usage{Tasks: []api.TaskUsage{{Node: "n1", MaxRSS: 1 << 20, UserUS: 1000, Sampled: true}}}
		step := &api.Usage{Tasks: []api.TaskUsage{{Node: "n1", UserUS: 2000}, {Task: 1, Node: "n2", UserUS: 3000}}}
		for _, s := range []struct {
			k usageKey
			u *api.Usage
		}{{usageKey{7, 1, "batch"}, step}, {usageKey{7, 1, "batch"}, batch}, {usageKey{7, 0, "0"}, step}} {
			if err := c.saveUsage(ctx, s.k, s.u); err != nil {
				t.Fatal(err)
			}
		}
		usage, err := c.loadUsage(ctx)
		if err != nil || len(usage) != 2 {
			t.Fatalf("loaded %v %v, want 2", usage, err)
		}
		recs := []api.AcctRecord{{JobID: 7, Restart: 1}, {JobID: 7, Restart: 1, Step: "batch"}, {JobID: 7, Step: "0"},
			{JobID: 8}}
		attachUsage(recs, usage)
		if got := recs[1].Usage; got == nil || len(got.Tasks) != 1 || got.Tasks[0].MaxRSS != 1<<20 {
			t.Errorf("batch usage %+v", got)
		}
		if got := recs[2].Usage; got == nil || len(got.Tasks) != 2 {
			t.Errorf("step usage %+v", got)
		}
		// Restart 1's job line gets its batch step; step 0 (restart 0)
		// belongs to the first run's line, absent here.
		if got, _ := recs[0].Usage.UsageField("TotalCPU", false); got != "00:00.001" {
			t.Errorf("job line TotalCPU %q", got)
		}
		if recs[3].Usage != nil {
			t.Errorf("a job without usage got %+v", recs[3].Usage)
		}
	})
}

// TestBatchUsageInAccounting runs a batch job and an srun step on real
// agents and checks that sacct's records carry their usage.
func TestBatchUsageInAccounting(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"))
	c.waitState(id, "COMPLETED", 20*time.Second)
	res, err := c.client.Accounting(c.ctx())
	if err != nil {
		t.Fatal(err)
	}
	var batch, job *api.AcctRecord
	for i := range res.Records {
		r := &res.Records[i]
		if r.JobID == id && r.Step == "batch" {
			batch = r
		}
		if r.JobID == id && r.Step == "" {
			job = r
		}
	}
	if batch == nil || batch.Usage.Empty() || job == nil || job.Usage.Empty() {
		t.Fatalf("records without usage: batch %+v job %+v", batch, job)
	}
	if cpu := batch.Usage.Tasks[0].CPUUS(); cpu <= 0 || batch.Usage.Tasks[0].MaxRSS <= 0 {
		t.Errorf("batch usage %+v", batch.Usage.Tasks[0])
	}
}

// TestSstat checks the controller's side of sstat: a running batch job's
// live usage (listed with All, or asked for as JOB.batch, not by default),
// and Slurm's messages for a held job, a step not running and a job it
// does not know.
func TestSstat(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	run := c.submit(c.wrap("sleep 30"))
	held := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Hold = true }))
	c.waitState(run, "RUNNING", 10*time.Second)
	ask := func(id uint32, step string, all bool) (api.SstatResponse, string) {
		res, err := c.client.Sstat(c.ctx(), api.SstatRequest{JobID: id, Step: step, All: all})
		if err != nil {
			return res, err.Error()
		}
		return res, ""
	}
	var res api.SstatResponse
	var msg string
	c.eventually(5*time.Second, "live batch usage", func() bool {
		res, msg = ask(run, "", true)
		return msg == "" && len(res.Steps) == 1 && len(res.Steps[0].Usage.Tasks) == 1 && len(res.Steps[0].Usage.Tasks[0].Pids) > 0
	})
	if st := res.Steps[0]; st.Step != "batch" || st.NodeList != "n1" || st.NTasks != 1 || !st.Usage.Tasks[0].Sampled {
		t.Errorf("sstat -a: %+v", st)
	}
	if res, msg = ask(run, "", false); msg != "" || len(res.Steps) != 0 {
		t.Errorf("sstat without -a lists the batch step: %+v %s", res, msg)
	}
	if res, msg = ask(run, "batch", false); msg != "" || len(res.Steps) != 1 {
		t.Errorf("sstat -j JOB.batch: %+v %s", res, msg)
	}
	for _, c := range []struct {
		id   uint32
		step string
		want string
	}{
		{held, "", "No steps running for job " + idStr(held)},
		{run, "3", "StepId=" + idStr(run) + ".3 not found running."},
		{9999, "", "couldn't get steps for job 9999"},
	} {
		if _, msg := ask(c.id, c.step, false); !strings.Contains(msg, c.want) {
			t.Errorf("sstat %d.%s: %q, want %q", c.id, c.step, msg, c.want)
		}
	}
}

// TestStepUsage runs a three-task step on two nodes: sstat sees its tasks
// live on both nodes, and its record carries every task's usage.
func TestStepUsage(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2})
	id := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.MinNodes, s.NTasks = 2, 3 }))
	c.waitState(id, "RUNNING", 10*time.Second)
	res, err := c.client.StepLaunch(c.ctx(), api.StepLaunchRequest{JobID: id, Cwd: c.work,
		Argv: []string{"sh", "-c", "sleep 2"}, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		attachAll(t, res)
		close(done)
	}()
	var live api.SstatResponse
	c.eventually(5*time.Second, "live step usage", func() bool {
		live, err = c.client.Sstat(c.ctx(), api.SstatRequest{JobID: id, Step: "0"})
		if err != nil || len(live.Steps) != 1 || len(live.Steps[0].Usage.Tasks) != 3 {
			return false
		}
		for _, tu := range live.Steps[0].Usage.Tasks {
			if len(tu.Pids) == 0 {
				return false
			}
		}
		return true
	})
	if st := live.Steps[0]; st.NodeList != "n[1-2]" || st.NTasks != 3 {
		t.Errorf("live step %+v", st)
	}
	<-done
	rec := c.stepRecord(id, 0)
	if rec.Usage == nil || len(rec.Usage.Tasks) != 3 {
		t.Fatalf("step record usage %+v", rec.Usage)
	}
	nodes := map[string]int{}
	for _, tu := range rec.Usage.Tasks {
		nodes[tu.Node]++
	}
	if nodes["n1"] != 2 || nodes["n2"] != 1 {
		t.Errorf("tasks by node %v, want 2 on n1 and 1 on n2", nodes)
	}
}
