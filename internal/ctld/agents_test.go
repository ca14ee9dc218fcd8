package ctld

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/noded"
)

// TestTimeLimitUpdateReachesAgent changes running jobs' limits with
// `scontrol update job TimeLimit=`: the node agent, which enforces limits,
// ends the lowered one TIMEOUT at once (long before the controller's own
// backstop, KillWait plus a minute later) and keeps the raised one running
// past its original limit.
func TestTimeLimitUpdateReachesAgent(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	lowered := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.TimeLimitSec = 600 }))
	raised := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.TimeLimitSec = 3 }))
	c.waitState(lowered, "RUNNING", 5*time.Second)
	c.waitState(raised, "RUNNING", 5*time.Second)
	for id, limit := range map[uint32]string{lowered: "0:01", raised: "10:00"} {
		if err := c.client.UpdateJob(c.ctx(), api.JobUpdateRequest{Job: idStr(id), Set: map[string]string{"TimeLimit": limit}}); err != nil {
			t.Fatalf("update job %d TimeLimit=%s: %v", id, limit, err)
		}
	}
	changed := time.Now()
	c.waitState(lowered, "TIMEOUT", 5*time.Second)
	t.Logf("lowered limit enforced by the agent %v after the update", time.Since(changed).Round(10*time.Millisecond))
	time.Sleep(time.Until(changed.Add(4 * time.Second)))
	if j := c.job(raised); j.State != "RUNNING" {
		t.Fatalf("raised job is %s 4s after the update (old limit 3s), want RUNNING", j.State)
	}
	st, err := c.agents["n1"].Job(raised)
	if err != nil || st.TimeLimitSec != 600 {
		t.Fatalf("agent's limit for the raised job: %+v %v, want 600 s", st, err)
	}
}

// TestAgentsReregisterAtControllerRestart restarts the controller on the
// same address with agents whose heartbeat comes only every 30 s: they
// notice the restart through their watch stream and register at once, so
// the node is back (with its running job re-attached) within seconds,
// not at the next heartbeat.
func TestAgentsReregisterAtControllerRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConf(t, dir, 1, "SlurmdTimeout=60") // silence is not what is tested
	store := openTestSQLite(t)
	addr := freeAddr(t)
	start := func() *Controller {
		ctl, err := New(context.Background(), Options{Conf: cfg, StateDir: dir, Store: store, Socket: shortSocket(t),
			Listen: addr, Logger: quietLogger(), TickInterval: 50 * time.Millisecond, SchedDelay: 5 * time.Millisecond,
			HeartbeatInterval: 30 * time.Second})
		if err != nil {
			t.Fatalf("controller: %v", err)
		}
		if err := ctl.Start(); err != nil {
			t.Fatalf("controller start: %v", err)
		}
		return ctl
	}
	ctl := start()
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
	res, err := cl.Submit(context.Background(), api.SubmitRequest{Spec: api.JobSpec{Name: "w", Wrap: "sleep 5",
		Script: "#!/bin/sh\nsleep 5\n", WorkDir: t.TempDir(), Environment: []string{"PATH=" + os.Getenv("PATH")}}})
	if err != nil {
		t.Fatal(err)
	}
	waitNodeState(t, cl, "mix", 5*time.Second) // one of two CPUs
	ctl.Close()
	ctl = start()
	defer ctl.Close()
	restarted := time.Now()
	cl = api.NewUnixClient(ctl.Socket())
	// Within 3 s, a tenth of the heartbeat: only the watch stream can
	// bring the node back that soon (a loaded CI machine needs the slack).
	waitNodeState(t, cl, "mix", 3*time.Second)
	t.Logf("node registered again %v after the controller restart (heartbeat every 30 s)", time.Since(restarted).Round(time.Millisecond))
	for deadline := time.Now().Add(8 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		jobs, err := cl.Jobs(context.Background(), api.JobQuery{IDs: []string{strconv.Itoa(int(res.JobID))}})
		if err == nil && len(jobs.Jobs) == 1 && jobs.Jobs[0].State == "COMPLETED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d did not complete after the restart: %+v %v", res.JobID, jobs.Jobs, err)
		}
	}
}

// TestGPUIndicesFromGresConf gives a node GPUs whose device files are not
// numbered 0..n-1 (gres.conf File=/dev/nvidia[2,5-7]): jobs see the
// allocated devices' indices in CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS,
// not their positions.
func TestGPUIndicesFromGresConf(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: "GresTypes=gpu\nNodeName=DEFAULT Gres=gpu:4\n", gpus: 4})
	c.agents["n1"].Close()
	c.startAgentGres("n1", "Name=gpu File=/dev/nvidia[2,5-7]\n")
	c.waitNodes("idle", 1)
	var ids []uint32
	for i := 0; i < 2; i++ {
		ids = append(ids, c.submit(c.wrap(`echo "$CUDA_VISIBLE_DEVICES $SLURM_JOB_GPUS"; sleep 1`, func(s *api.JobSpec) { s.Gres = "gpu:2" })))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		c.waitState(id, "COMPLETED", 10*time.Second)
		seen[c.readOut("slurm-"+idStr(id)+".out")] = true
	}
	if !seen["2,5 2,5"] || !seen["6,7 6,7"] {
		t.Errorf("devices seen %v, want \"2,5 2,5\" and \"6,7 6,7\"", seen)
	}
}

// startAgentGres starts node name's agent with gres.conf text as its GPUs.
func (c *cluster) startAgentGres(name, gres string) {
	g := c.gpus
	defer func() { c.gpus = g }()
	c.gpus = 0
	c.startAgent(name)
	a := c.agents[name]
	a.Close()
	spool := filepath.Join(c.dir, "spool", name)
	na, err := noded.New(noded.Config{Name: name, ControllerURL: c.ctl.URL(), Spool: spool, Key: c.ctl.ClusterKey(),
		Listen: "127.0.0.1:0", CPUs: c.cfg.Node(name).CPUs, MemoryMB: c.cfg.Node(name).RealMemory,
		PollInterval: 30 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond, CgroupBase: "none", Logger: quietLogger(),
		GPUs: noded.GPUDiscovery{LookPath: noSMI, Root: c.t.TempDir(), Static: gres}})
	if err != nil {
		c.t.Fatal(err)
	}
	if err := na.Start(context.Background()); err != nil {
		c.t.Fatal(err)
	}
	c.agents[name] = na
	c.t.Cleanup(func() { na.Close() })
}

func noSMI(string) (string, error) { return "", os.ErrNotExist }

// freeAddr returns a free 127.0.0.1 address outside the ephemeral port
// range, for a controller restarted on the same address.
func freeAddr(t *testing.T) string {
	p, err := api.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(p)
}

// waitNodeState waits until every node shows the compact state.
func waitNodeState(t *testing.T, cl *api.Client, state string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		res, err := cl.Nodes(context.Background())
		ok := err == nil && len(res.Nodes) > 0
		for _, n := range res.Nodes {
			ok = ok && n.StateShort == state
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nodes not %s after %v: %+v %v", state, within, res.Nodes, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTimeLimitBackstopCharges: a job the controller itself ends TIMEOUT
// (its agent never reported the limit: here the controller's clock runs
// ahead) is charged to fair-share for its run since the last priority
// pass, as a job an agent reports ended is; before, its last stretch of
// usage was lost.
func TestTimeLimitBackstopCharges(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Now().Truncate(time.Minute)}
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: "SlurmdTimeout=0\nPriorityType=priority/multifactor",
		acct: acctStore(t, "test", "add account research\nadd user alice Account=research"), now: clock.now})
	id := c.submitAs(Who{User: "alice", Group: "root", Via: "socket"}, c.wrap("sleep 300", func(s *api.JobSpec) { s.TimeLimitSec = 60 }))
	c.waitState(id, "RUNNING", 5*time.Second)
	if u := c.rawUsage("alice"); u != 0 {
		t.Fatalf("RawUsage before the end: %v, want 0 (no priority pass yet)", u)
	}
	// past the limit, KillWait and the backstop's minute; short of the
	// next PriorityCalcPeriod pass (5 minutes), which would charge it too
	// (SlurmdTimeout=0: the agents' silence on the jumped clock is no
	// node failure)
	run := time.Minute + c.cfg.KillWait + time.Minute + 5*time.Second
	clock.advance(run)
	c.waitState(id, "TIMEOUT", 10*time.Second)
	if u, want := c.rawUsage("alice"), run.Seconds(); u < want*0.99 || u > want {
		t.Errorf("RawUsage after the controller ended the job: %v, want about %v (one CPU for the run, decayed)", u, want)
	}
}
