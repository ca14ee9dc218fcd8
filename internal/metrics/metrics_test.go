package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-hpc/sluice/internal/api"
)

// fixture: alice runs a 12-CPU GPU job on n1-n2, bob has one job pending
// for resources and one held, on two 8-CPU nodes and one idle, drained
// node.
func fixture() Snapshot {
	jobs := []api.JobInfo{
		{JobID: 1, User: "alice", Account: "physics", Partition: "main", State: "RUNNING", NumNodes: 2,
			AllocTRES: "cpu=12,mem=6000M,node=2,billing=12,gres/gpu=2"},
		{JobID: 2, User: "bob", Account: "chem", Partition: "main", State: "PENDING", Reason: "Resources", NumNodes: 3, MaxNodes: 4},
		{JobID: 3, User: "bob", Account: "chem", Partition: "main,gpu", State: "PENDING", Reason: "JobHeldUser", Hold: "user", NumNodes: 5, MaxNodes: 5},
		{JobID: 4, User: "alice", Account: "physics", Partition: "main", State: "COMPLETED"},
	}
	nodes := []api.NodeRecord{
		{Name: "n1", State: "ALLOCATED", CPUs: 8, AllocCPUs: 8, RealMemory: 64000, AllocMem: 4000, Gres: "gpu:4", GresUsed: "gpu:1(IDX:0)", Partitions: []string{"main"}},
		{Name: "n2", State: "MIXED", CPUs: 8, AllocCPUs: 4, RealMemory: 64000, AllocMem: 2000, Gres: "gpu:4", GresUsed: "gpu:1(IDX:0)", Partitions: []string{"main"}},
		{Name: "n3", State: "IDLE+DRAIN", CPUs: 8, RealMemory: 64000, LoadKnown: true, FreeMem: 1000, Partitions: []string{"main", "gpu"}},
	}
	parts := []api.PartitionRecord{{Name: "main", NodeNames: []string{"n1", "n2", "n3"}}, {Name: "gpu", NodeNames: []string{"n3"}}}
	sdiag := api.SdiagResponse{Cycles: 4, TotalCycleUS: 400, LastCycleUS: 90, BfCycles: 2, BfTotalCycleUS: 1000, BfTotalJobs: 7,
		JobsSubmitted: 4, RPCTypes: []api.RPCStat{{Name: "REQUEST_SUBMIT_BATCH_JOB", Count: 4, TotalUS: 2_000_000}}}
	return Snapshot{Jobs: jobs, Nodes: nodes, Partitions: parts, Sdiag: sdiag}
}

func scrape(t *testing.T, path string) string {
	t.Helper()
	mux := http.NewServeMux()
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_submit_latency_seconds", Help: "x"})
	h.Observe(0.02)
	Register(mux, func(_ *http.Request, parts map[string]bool) (Snapshot, error) {
		s := fixture()
		if !parts["jobs"] {
			s.Jobs = nil // an endpoint reads only what it asked for
		}
		return s, nil
	}, h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
	}
	return string(body)
}

// TestEndpoints: each of Slurm 25.11's endpoints carries its metric
// families with Slurm's names and the counts the fixture implies.
func TestEndpoints(t *testing.T) {
	cases := []struct {
		path string
		want []string
		not  []string
	}{
		{"/metrics", []string{"/metrics/jobs\n", "/metrics/nodes\n", "/metrics/partitions\n", "/metrics/scheduler\n", "/metrics/jobs-users-accts\n"}, nil},
		{"/metrics/jobs", []string{"slurm_jobs 4\n", "slurm_jobs_running 1\n", "slurm_jobs_pending 2\n", "slurm_jobs_completed 1\n",
			"slurm_jobs_hold 1\n", "slurm_jobs_cpus_alloc 12\n", "slurm_jobs_memory_alloc 6.291456e+09\n", "slurm_jobs_nodes_alloc 2\n",
			"sluice_jobs_gpus_alloc 2\n", `sluice_jobs_pending_reason{reason="Resources"} 1`, `sluice_jobs_pending_reason{reason="JobHeldUser"} 1`,
			"# TYPE slurm_jobs gauge"}, []string{"slurm_nodes"}},
		{"/metrics/nodes", []string{"slurm_nodes 3\n", "slurm_nodes_alloc 1\n", "slurm_nodes_mixed 1\n", "slurm_nodes_idle 1\n", "slurm_nodes_drain 1\n",
			`slurm_node_cpus_idle{node="n2"} 4`, `slurm_node_memory_alloc_bytes{node="n1"} 4.194304e+09`, `slurm_node_memory_free_bytes{node="n3"} 1.048576e+09`,
			`sluice_node_gpus{node="n1"} 4`, `sluice_node_gpus_alloc{node="n2"} 1`}, []string{`slurm_node_memory_free_bytes{node="n1"}`}},
		{"/metrics/partitions", []string{"slurm_partitions 2\n", `slurm_partition_jobs{partition="main"} 4`, `slurm_partition_jobs_pending{partition="gpu"} 1`,
			`slurm_partition_jobs_max_job_nodes{partition="main"} 5`, `slurm_partition_jobs_max_job_nodes_nohold{partition="main"} 4`,
			`slurm_partition_jobs_min_job_nodes_nohold{partition="main"} 3`, `slurm_partition_nodes_cpus_alloc{partition="main"} 12`,
			`slurm_partition_nodes{partition="gpu"} 1`}, nil},
		{"/metrics/scheduler", []string{"slurm_sched_cycle_cnt 4\n", "slurm_sched_mean_cycle 100\n", "slurm_bf_mean_cycle 500\n", "slurm_backfilled_jobs 7\n",
			"slurm_sdiag_jobs_submitted 4\n", `sluice_rpc_count{type="REQUEST_SUBMIT_BATCH_JOB"} 4`, `sluice_rpc_time_seconds{type="REQUEST_SUBMIT_BATCH_JOB"} 2`,
			"sluice_submit_latency_seconds_count 1\n"}, nil},
		{"/metrics/jobs-users-accts", []string{`slurm_user_jobs{username="bob"} 2`, `slurm_user_jobs_pending{username="bob"} 2`,
			`slurm_user_jobs_cpus_alloc{username="alice"} 12`, `slurm_account_jobs_running{account="physics"} 1`, `slurm_account_jobs_hold{account="chem"} 1`}, nil},
	}
	for _, c := range cases {
		body := scrape(t, c.path)
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s lacks %q:\n%s", c.path, w, body)
			}
		}
		for _, n := range c.not {
			if strings.Contains(body, n) {
				t.Errorf("%s has %q", c.path, n)
			}
		}
	}
}

func TestGresCount(t *testing.T) {
	for s, want := range map[string]int64{"gpu:4": 4, "gpu:a100:2(IDX:0-1),gpu:l4:1": 3, "": 0, "gpu:0": 0, "mps:100": 0, "gpu:x": 0} {
		if got := gresCount(s); got != want {
			t.Errorf("gresCount(%q) = %d, want %d", s, got, want)
		}
	}
}
