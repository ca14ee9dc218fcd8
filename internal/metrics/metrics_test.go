package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

var snap = Snapshot{
	Jobs: []api.JobInfo{
		{JobID: 1, User: "alice", Account: "research", Partition: "main", State: "RUNNING", NumCPUs: 4, NumNodes: 1,
			AllocTRES: "cpu=4,mem=4000M,node=1,billing=4,gres/gpu=2"},
		{JobID: 2, User: "bob", Account: "research", Partition: "main", State: "PENDING", Reason: "Resources"},
		{JobID: 3, User: "bob", Account: "physics", Partition: "main,short", State: "PENDING",
			Reason: "ReqNodeNotAvail, May be reserved for other job"},
	},
	Nodes: []api.NodeRecord{
		{Name: "n1", State: "MIXED", CPUs: 8, AllocCPUs: 4, RealMemory: 64000, AllocMem: 4000, Gres: "gpu:4", GresUsed: "gpu:2(IDX:0-1)", Partitions: []string{"main"}},
		{Name: "n2", State: "IDLE+DRAIN", CPUs: 8, RealMemory: 64000, Gres: "gpu:4", GresUsed: "gpu:0", Partitions: []string{"main"}},
	},
	Partitions: []api.PartitionRecord{{Name: "main", TotalNodes: 2, TotalCPUs: 16}},
	Diag:       api.SdiagResponse{Cycles: 10, TotalCycleUS: 500, LastCycleUS: 40, BfCycles: 2, JobsSubmitted: 3},
}

func scrape(t *testing.T, src Source, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler(src).ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

// TestEndpoints checks each endpoint's samples: jobs by state and pending
// reason, what running jobs hold, jobs by user and account, node CPUs,
// memory and GPUs, partition jobs and CPUs, scheduler statistics.
func TestEndpoints(t *testing.T) {
	src := func(context.Context, *http.Request) (Snapshot, error) { return snap, nil }
	for path, want := range map[string][]string{
		"/metrics": {"/metrics/jobs\n", "/metrics/jobs-users-accts\n", "/metrics/nodes\n", "/metrics/partitions\n", "/metrics/scheduler\n"},
		"/metrics/jobs": {`slurm_jobs 3`, `slurm_jobs_state{state="running"} 1`, `slurm_jobs_state{state="pending"} 2`,
			`slurm_jobs_state{state="failed"} 0`, `slurm_jobs_pending_reason{reason="Resources"} 1`,
			`slurm_jobs_pending_reason{reason="ReqNodeNotAvail"} 1`, `slurm_jobs_cpus_alloc 4`, `slurm_jobs_gpus_alloc 2`,
			`slurm_jobs_memory_alloc_bytes 4.194304e+09`},
		"/metrics/jobs-users-accts": {`slurm_user_jobs{state="pending",username="bob"} 2`, `slurm_user_cpus_alloc{username="alice"} 4`,
			`slurm_account_jobs{account="physics",state="pending"} 1`, `slurm_account_cpus_alloc{account="research"} 4`},
		"/metrics/nodes": {`slurm_nodes 2`, `slurm_nodes_state{state="mixed"} 1`, `slurm_nodes_state{state="drain"} 1`,
			`slurm_node_cpus_alloc{node="n1"} 4`, `slurm_node_gpus{node="n2"} 4`, `slurm_node_gpus_alloc{node="n1"} 2`},
		"/metrics/partitions": {`slurm_partition_jobs{partition="main",state="pending"} 2`,
			`slurm_partition_jobs{partition="short",state="pending"} 1`, `slurm_partition_cpus{partition="main"} 16`,
			`slurm_partition_cpus_alloc{partition="main"} 4`},
		"/metrics/scheduler": {`slurm_sched_cycles_total 10`, `slurm_sched_cycle_mean_microseconds 50`,
			`slurm_sched_cycle_last_microseconds 40`, `slurm_backfill_cycles_total 2`, `slurm_jobs_submitted_total 3`},
	} {
		code, body := scrape(t, src, path)
		if code != 200 {
			t.Errorf("%s: status %d %s", path, code, body)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q in\n%s", path, w, body)
			}
		}
	}
}

// TestSourceError checks that a refused snapshot (PrivateData) fails the
// scrape with the source's status, and that an unknown set is not found.
func TestSourceError(t *testing.T) {
	src := func(context.Context, *http.Request) (Snapshot, error) {
		return Snapshot{}, api.Errorf(http.StatusForbidden, "metrics are disabled by PrivateData")
	}
	if code, body := scrape(t, src, "/metrics/jobs"); code != http.StatusForbidden || !strings.Contains(body, "PrivateData") {
		t.Errorf("refused: %d %s", code, body)
	}
	if code, _ := scrape(t, src, "/metrics/nosuch"); code != http.StatusNotFound {
		t.Errorf("unknown set: %d", code)
	}
}
