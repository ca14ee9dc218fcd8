package ctld

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestUsageStore checks that step usage is stored (overwritten when an
// agent re-sends it) and put on the records: each step its own, the job's
// line the tasks of all its steps, on SQLite and PostgreSQL.
func TestUsageStore(t *testing.T) {
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
