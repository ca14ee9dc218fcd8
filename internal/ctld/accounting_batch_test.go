package ctld

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestBatchStepRecords: every started run of a batch job gets a
// JOBID.batch record (first node, one node's TRES, the script's state and
// exit code; a killed run's step CANCELLED by SIGTERM); pending jobs and
// salloc/srun allocations get none; steps sort batch, extern, 0, 1, 10.
func TestBatchStepRecords(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	run := func(id uint32, state, exit string) api.AcctRecord {
		return api.AcctRecord{JobID: id, Name: "job", User: "alice", State: state, ExitCode: exit, Submit: t0,
			Start: t0.Add(time.Minute), End: t0.Add(2 * time.Minute), NodeList: "n[1-2]",
			AllocTRES: "cpu=4,mem=2000M,node=2,billing=4", ReqTRES: "cpu=4", TimeLimitSec: 600}
	}
	cases := []struct {
		rec         api.AcctRecord
		state, exit string
	}{
		{run(1, "COMPLETED", "0:0"), "COMPLETED", "0:0"},
		{run(2, "FAILED", "3:0"), "FAILED", "3:0"},
		{run(3, "TIMEOUT", "0:0"), "CANCELLED", "0:15"},
		{run(4, "CANCELLED by 0", "0:0"), "CANCELLED", "0:15"},
		{run(5, "PREEMPTED", "0:0"), "CANCELLED", "0:15"},
		{run(6, "NODE_FAIL", "0:0"), "NODE_FAIL", "0:0"},
		{run(7, "RUNNING", "0:0"), "RUNNING", "0:0"},
		// Killed by a signal: the script's step reads CANCELLED (oracle:
		// `kill -9 $$` gave "6 FAILED 0:9", "6.batch CANCELLED 0:9").
		{run(10, "FAILED", "0:9"), "CANCELLED", "0:9"},
		// The SIGTERM of a cancel or time limit is the step's; the job
		// keeps 0:0 (oracle: "5 TIMEOUT 0:0", "5.batch CANCELLED 0:15").
		{run(11, "TIMEOUT", "0:15"), "CANCELLED", "0:15"},
		{run(12, "CANCELLED by 1001", "0:15"), "CANCELLED", "0:15"},
	}
	jobExit := map[string]string{"TIMEOUT": "0:0", "CANCELLED by 0": "0:0", "CANCELLED by 1001": "0:0", "FAILED": ""}
	for _, tc := range cases {
		out := appendBatchSteps([]api.AcctRecord{tc.rec}, nil)
		if len(out) != 2 {
			t.Fatalf("job %d: %d records", tc.rec.JobID, len(out))
		}
		b := out[1]
		if b.Step != "batch" || b.Name != "batch" || b.NTasks != 1 || b.State != tc.state || b.ExitCode != tc.exit || b.NodeList != "n1" ||
			b.AllocTRES != "cpu=2,mem=1000M,node=1" || !b.Start.Equal(tc.rec.Start) || !b.End.Equal(tc.rec.End) ||
			!b.Submit.Equal(tc.rec.Start) || !b.Eligible.Equal(tc.rec.Start) { // oracle: all three at the run's start
			t.Errorf("%s: batch step %+v", tc.rec.State, b)
		}
		if want, ok := jobExit[tc.rec.State]; ok && want != "" && out[0].ExitCode != want {
			t.Errorf("%s: job exit code %s, want %s", tc.rec.State, out[0].ExitCode, want)
		}
	}
	pending := api.AcctRecord{JobID: 8, State: "PENDING"}
	alloc := run(9, "COMPLETED", "0:0")
	if out := appendBatchSteps([]api.AcctRecord{pending, alloc}, map[uint32]bool{9: true}); len(out) != 2 {
		t.Errorf("pending job or allocation got a batch step: %+v", out)
	}
	recs := []api.AcctRecord{{JobID: 1, Step: "10"}, {JobID: 1, Step: "1"}, {JobID: 1, Step: "batch"},
		{JobID: 1, Step: "0"}, {JobID: 1, Step: "extern"}, {JobID: 1}}
	slices.SortStableFunc(recs, compareRecords)
	var got []string
	for _, r := range recs {
		got = append(got, r.Step)
	}
	if want := []string{"", "batch", "extern", "0", "1", "10"}; !slices.Equal(got, want) {
		t.Errorf("step order %q, want %q", got, want)
	}
	if !isAllocationScript("#!/bin/sh\n# salloc allocation: held until the command exits\nread code < x\n") ||
		isAllocationScript("#!/bin/sh\necho allocation: held until the command exits\n") {
		t.Error("allocation script detection")
	}
}

// TestExternStepRecords: under PrologFlags=Contain every started run
// (batch job or allocation) has a JOBID.extern record on all its nodes
// with the whole allocation but billing, COMPLETED 0:0 however the job
// ended, RUNNING while it runs; a pending job has none.
func TestExternStepRecords(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	run := func(id uint32, state, exit string) api.AcctRecord {
		return api.AcctRecord{JobID: id, Name: "job", State: state, ExitCode: exit, Submit: t0, Start: t0.Add(time.Minute),
			End: t0.Add(2 * time.Minute), NodeList: "n[1-2]", AllocTRES: "cpu=4,mem=2000M,node=2,billing=4", TimeLimitSec: 600}
	}
	recs := []api.AcctRecord{run(1, "TIMEOUT", "0:0"), run(2, "FAILED", "3:0"), run(3, "CANCELLED by 0", "0:0"),
		run(4, "RUNNING", "0:0"), {JobID: 5, State: "PENDING"}, {JobID: 1, Step: "0", State: "COMPLETED"}}
	out := appendExternSteps(recs, 5)
	want := map[uint32]string{1: "COMPLETED", 2: "COMPLETED", 3: "COMPLETED", 4: "RUNNING"}
	if len(out) != len(recs)+len(want) {
		t.Fatalf("%d records, want %d", len(out), len(recs)+len(want))
	}
	for _, e := range out[len(recs):] {
		if e.Step != "extern" || e.Name != "extern" || e.State != want[e.JobID] || e.ExitCode != "0:0" ||
			e.NodeList != "n[1-2]" || e.AllocTRES != "cpu=4,mem=2000M,node=2" || !e.Submit.Equal(e.Start) {
			t.Errorf("job %d: extern step %+v", e.JobID, e)
		}
	}
}

// TestExternStepInSacct runs a job on a cluster with PrologFlags=Contain
// and finds its extern step in the accounting records beside the batch
// step; without the flag there is none.
func TestExternStepInSacct(t *testing.T) {
	t.Parallel()
	for _, contain := range []bool{true, false} {
		extra := ""
		if contain {
			extra = "PrologFlags=Contain\n"
		}
		c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: extra})
		id := c.submit(c.wrap("true"))
		c.waitState(id, "COMPLETED", 10*time.Second)
		res, err := c.client.Accounting(c.ctx())
		if err != nil {
			t.Fatal(err)
		}
		var steps []string
		for _, r := range res.Records {
			if r.JobID == id && r.Step != "" {
				steps = append(steps, r.Step+" "+r.State)
			}
		}
		want := []string{"batch COMPLETED"}
		if contain {
			want = append(want, "extern COMPLETED")
		}
		if !slices.Equal(steps, want) {
			t.Errorf("Contain=%v: steps %q, want %q", contain, steps, want)
		}
	}
}

// TestReqTRESMemoryDefault: a job that names no memory records the
// default one in its ReqTRES, per CPU from the cluster or per node from
// its partition, as slurmctld fills it in at submission (oracle,
// DefMemPerCPU=1000: sbatch -n3 recorded billing=3,cpu=3,mem=3000M,node=1).
func TestReqTRESMemoryDefault(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: "DefMemPerCPU=300\nPartitionName=big Nodes=n1 DefMemPerNode=700 State=UP"})
	cases := []struct {
		mod  func(*api.JobSpec)
		want string
	}{
		{func(s *api.JobSpec) { s.NTasks = 2 }, "cpu=2,mem=600M,node=1,billing=2"},
		{func(s *api.JobSpec) { s.NTasks = 2; s.MemPerCPUMB = 100 }, "cpu=2,mem=200M,node=1,billing=2"},
		{func(s *api.JobSpec) { s.Partitions = []string{"big"} }, "cpu=1,mem=700M,node=1,billing=1"},
	}
	for _, tc := range cases {
		id := c.submit(c.wrap("true", tc.mod, func(s *api.JobSpec) { s.Hold = true }))
		res, err := c.client.Accounting(c.ctx())
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, r := range res.Records {
			if r.JobID == id && r.Step == "" {
				got = r.ReqTRES
			}
		}
		if got != tc.want {
			t.Errorf("job %d: ReqTRES %q, want %q", id, got, tc.want)
		}
	}
}
