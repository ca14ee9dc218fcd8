package ctld

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/noded"
)

// TestControllerStallIsNotNodeSilence stops the controller's loop for
// longer than SlurmdTimeout right after its node registered (a
// controller SIGSTOPped, as TestChaos does): when it runs again the node
// must not be set DOWN for a silence that was the controller's own. The
// agent's heartbeat is every 30 s, so nothing but the stall credit can
// keep the node up in the second after the stall.
func TestControllerStallIsNotNodeSilence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConf(t, dir, 1, "SlurmdTimeout=3")
	ctl, err := New(context.Background(), Options{Conf: cfg, StateDir: dir, Store: openTestSQLite(t), Socket: shortSocket(t),
		Listen: "127.0.0.1:0", Logger: quietLogger(), TickInterval: 50 * time.Millisecond, SchedDelay: 5 * time.Millisecond,
		HeartbeatInterval: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	a, err := noded.New(noded.Config{Name: "n1", ControllerURL: ctl.URL(), Spool: filepath.Join(dir, "spool"), Key: ctl.ClusterKey(),
		Listen: "127.0.0.1:0", CPUs: 2, MemoryMB: 1000, PollInterval: 30 * time.Millisecond, HeartbeatInterval: 30 * time.Second,
		CgroupBase: "none", Logger: quietLogger(), GPUs: noded.GPUDiscovery{LookPath: noSMI, Root: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cl := api.NewUnixClient(ctl.Socket())
	waitNodeState(t, cl, "idle", 5*time.Second)
	// The loop runs nothing else for 4 s (> SlurmdTimeout).
	if _, err := ctl.do(context.Background(), func(*loopState) (any, error) { time.Sleep(4 * time.Second); return nil, nil }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // ten ticks
	res, err := cl.Nodes(context.Background())
	if err != nil || len(res.Nodes) != 1 {
		t.Fatalf("nodes: %+v %v", res, err)
	}
	if st := res.Nodes[0].StateShort; st != "idle" {
		t.Errorf("node is %s after the controller's own 4 s stall, want idle (reason %q)", st, res.Nodes[0].Reason)
	}
}
