package ctld

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestRPCNames checks the names sdiag's call table gives: Slurm's message
// type for a route that has one (refined by the operation for scancel and
// scontrol), SLUICE_<path> with number 0 for the rest.
func TestRPCNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got  rpcType
		name string
		id   uint32
	}{
		{rpcFor("POST " + api.PathSubmit), "REQUEST_SUBMIT_BATCH_JOB", 4003},
		{rpcFor("GET " + api.PathAccounting), "SLUICE_ACCOUNTING", 0},
		{rpcFor("GET " + api.PathResvUtilization), "SLUICE_RESERVATIONS_UTILIZATION", 0},
		{controlRPC(api.OpCancel), "REQUEST_KILL_JOB", 5032},
		{controlRPC(api.OpHold), "REQUEST_UPDATE_JOB", 3001},
		{controlRPC(api.OpResume), "REQUEST_SUSPEND", 5014},
		{controlRPC(api.OpRequeueHold), "REQUEST_JOB_REQUEUE", 5023},
		{resvRPC([]string{"create", "reservation"}), "REQUEST_CREATE_RESERVATION", 3006},
		{resvRPC([]string{"show", "reservation"}), "REQUEST_RESERVATION_INFO", 2024},
		{partitionRPC(api.PartitionDelete), "REQUEST_DELETE_PARTITION", 3004},
	} {
		if tc.got.name != tc.name || tc.got.id != tc.id {
			t.Errorf("got %s (%d), want %s (%d)", tc.got.name, tc.got.id, tc.name, tc.id)
		}
	}
}

// TestRPCStatsCountAndReset checks the tables' sums and that a reset
// empties them.
func TestRPCStatsCountAndReset(t *testing.T) {
	t.Parallel()
	var s rpcStats
	alice, bob := rpcUser{"alice", 1001}, rpcUser{"bob", 1002}
	s.record(rpcJobInfo, alice, 3*time.Millisecond)
	s.record(rpcJobInfo, bob, time.Millisecond)
	s.record(rpcKillJob, alice, 2*time.Millisecond)
	var out api.SdiagResponse
	s.fill(&out)
	types, users := map[string]api.RPCStat{}, map[string]api.RPCStat{}
	for _, r := range out.RPCTypes {
		types[r.Name] = r
	}
	for _, r := range out.RPCUsers {
		users[r.Name] = r
	}
	if r := types["REQUEST_JOB_INFO"]; r.Count != 2 || r.TotalUS != 4000 || r.ID != 2003 {
		t.Errorf("job info row %+v", r)
	}
	if r := users["alice"]; r.Count != 2 || r.TotalUS != 5000 || r.ID != 1001 {
		t.Errorf("alice's row %+v", r)
	}
	s.reset()
	out = api.SdiagResponse{}
	s.fill(&out)
	if len(out.RPCTypes)+len(out.RPCUsers) != 0 {
		t.Errorf("after reset: %+v %+v", out.RPCTypes, out.RPCUsers)
	}
}

// TestServerThreadCount: sdiag's "Server thread count" is the requests
// being answered, the sdiag request itself among them (slurmctld shows 1
// on an idle controller; the exporters graph it), not every goroutine.
func TestServerThreadCount(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	res, err := c.client.Sdiag(c.ctx())
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerThreads != 1 {
		t.Fatalf("server thread count %d on an idle controller, want 1", res.ServerThreads)
	}
}
