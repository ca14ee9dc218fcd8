package ctld

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Issue 7 acceptance, restart: "kill the controller with SIGKILL while 200
// jobs are pending and 20 running, restart it: every job is still there
// with its state, the running ones finish and are accounted; no job is
// lost or run twice. The same for a node agent." Run against real
// `sluice ctld` and `sluice noded` processes; every job appends its id to
// one shared file when it starts, so a job started twice shows up twice.

// TestAcceptRestartController SIGKILLs `sluice ctld` with 20 jobs running
// on 5 agents (4 CPUs each, so they are full) and 200 pending. While the
// controller is dead, 10 of the running jobs end (their agents must report
// them later). The restarted controller must show every job in the state
// it had (or the one the agents reported), keep the 10 others running
// with their nodes and start times, then run the 200 exactly once; every
// job ends COMPLETED with one accounting record, also as `sacct` shows it.
// Against SQLite and PostgreSQL.
func TestAcceptRestartController(t *testing.T) {
	t.Parallel()
	bin := acceptSluice(t)
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			extra := ""
			if store == "postgres" {
				extra = "AccountingStorageType=accounting_storage/pgsql\nAccountingStorageLoc=" + pgSchemaDSN(t)
			}
			restartController(t, startAcceptCluster(t, bin, acceptOpts{nodes: 5, cpus: 4, extra: extra}))
		})
	}
}

func restartController(t *testing.T, c *acceptCluster) {
	t0 := time.Now()
	gateA, gateB, gateC := c.gate("A"), c.gate("B"), c.gate("C")
	var running, endWhileDown, keepRunning, pending []uint32
	for i := 0; i < 20; i++ {
		g := gateA
		if i >= 10 {
			g = gateB
		}
		id := c.submit(g, "")
		running = append(running, id)
		if i < 10 {
			endWhileDown = append(endWhileDown, id)
		} else {
			keepRunning = append(keepRunning, id)
		}
	}
	c.waitJobs(60*time.Second, "20 jobs running", func(j map[uint32]api.JobInfo) bool { return countIn(j, running, "RUNNING") == 20 })
	c.wait(30*time.Second, "20 job scripts started", func() bool { return len(c.ranCounts()) == 20 })
	for i := 0; i < 200; i++ {
		pending = append(pending, c.submit(gateC, ""))
	}
	all := append(append([]uint32{}, running...), pending...)
	before := c.jobs()
	if n := countIn(before, pending, "PENDING"); n != 200 || countIn(before, running, "RUNNING") != 20 {
		t.Fatalf("before the kill: %d of 200 pending, %d of 20 running", n, countIn(before, running, "RUNNING"))
	}
	t.Logf("%v: 20 running, 200 pending; kill -9 sluice ctld", time.Since(t0).Round(time.Millisecond))

	c.ctld.kill9(t)
	// Ten running jobs end while no controller listens: their agents
	// hold the results until one does.
	c.open(gateA)
	c.wait(30*time.Second, "10 jobs ended while the controller was down", func() bool {
		for _, id := range endWhileDown {
			if !c.exited(before[id].BatchHost, id) {
				return false
			}
		}
		return true
	})
	c.startCtld()
	after := c.jobs()
	t.Logf("%v: controller restarted", time.Since(t0).Round(time.Millisecond))
	if len(after) != 220 {
		t.Fatalf("after the restart the controller knows %d jobs, want 220", len(after))
	}
	ended := countIn(after, endWhileDown, "COMPLETED")
	startedSince := 0
	for _, id := range all {
		b, a := before[id], after[id]
		switch {
		case a.State == b.State:
		case b.State == "RUNNING" && a.State == "COMPLETED" && contains(endWhileDown, id):
		case b.State == "PENDING" && a.State == "RUNNING":
			startedSince++ // only on CPUs freed by the jobs that ended
		default:
			t.Errorf("job %d was %s before the kill, %s after the restart", id, b.State, a.State)
		}
		if a.State == "RUNNING" && b.State == "RUNNING" && (a.NodeList != b.NodeList || !a.StartTime.Equal(b.StartTime)) {
			t.Errorf("job %d: running on %s since %v, before the kill on %s since %v", id, a.NodeList, a.StartTime, b.NodeList, b.StartTime)
		}
		if a.Name != b.Name || a.UID != b.UID || !a.SubmitTime.Equal(b.SubmitTime) {
			t.Errorf("job %d changed: %+v, was %+v", id, a, b)
		}
	}
	if startedSince > ended {
		t.Errorf("%d pending jobs started right after the restart, only %d CPUs were freed", startedSince, ended)
	}
	c.waitJobs(30*time.Second, "the 10 jobs that ended while the controller was down are COMPLETED", func(j map[uint32]api.JobInfo) bool {
		return countIn(j, endWhileDown, "COMPLETED") == 10
	})
	now := c.jobs()
	for _, id := range keepRunning {
		if j := now[id]; j.State != "RUNNING" || !j.StartTime.Equal(before[id].StartTime) {
			t.Errorf("job %d: %s since %v after the restart, want RUNNING since %v", id, j.State, j.StartTime, before[id].StartTime)
		}
	}
	c.open(gateB)
	c.open(gateC)
	c.waitJobs(120*time.Second, "all 220 jobs COMPLETED", func(j map[uint32]api.JobInfo) bool { return countIn(j, all, "COMPLETED") == 220 })
	t.Logf("%v: all 220 jobs completed", time.Since(t0).Round(time.Millisecond))
	c.checkRanOnce(all)
	starts := map[uint32]time.Time{}
	for _, id := range running {
		starts[id] = before[id].StartTime
	}
	c.checkAccounted(all, starts)
	c.checkSacct(all)
	next := c.submit("", "")
	if max := all[len(all)-1]; next <= max {
		t.Errorf("job id %d handed out after the restart, ids up to %d were already used", next, max)
	}
}

// TestAcceptRestartAgent SIGKILLs one `sluice noded` while it runs four
// jobs and four more wait for its CPUs. Two of its jobs end while it is
// dead. Restarted on the same spool directory it must re-attach: the
// controller sees the two that ended COMPLETED, the two others still
// RUNNING with their start times (not started again), and the node never
// went DOWN; then the waiting jobs run on it. Every job runs once and has
// one COMPLETED accounting record.
func TestAcceptRestartAgent(t *testing.T) {
	t.Parallel()
	bin := acceptSluice(t)
	c := startAcceptCluster(t, bin, acceptOpts{nodes: 2, cpus: 4})
	t0 := time.Now()
	gateA, gateB := c.gate("A"), c.gate("B")
	var onA1, endWhileDown, keepRunning, queued, others []uint32
	for i := 0; i < 4; i++ {
		g := gateA
		if i >= 2 {
			g = gateB
		}
		id := c.submit(g, "a1")
		onA1 = append(onA1, id)
		if i < 2 {
			endWhileDown = append(endWhileDown, id)
		} else {
			keepRunning = append(keepRunning, id)
		}
	}
	for i := 0; i < 2; i++ {
		others = append(others, c.submit(gateB, "a2"))
	}
	started := append(append([]uint32{}, onA1...), others...)
	c.waitJobs(60*time.Second, "6 jobs running", func(j map[uint32]api.JobInfo) bool { return countIn(j, started, "RUNNING") == 6 })
	c.wait(30*time.Second, "6 job scripts started", func() bool { return len(c.ranCounts()) == 6 })
	for i := 0; i < 4; i++ {
		queued = append(queued, c.submit("", "a1"))
	}
	all := append(append([]uint32{}, started...), queued...)
	before := c.jobs()
	if n := countIn(before, queued, "PENDING"); n != 4 {
		t.Fatalf("%d of 4 jobs for a1 pending before the kill", n)
	}
	for _, id := range onA1 {
		if before[id].NodeList != "a1" {
			t.Fatalf("job %d runs on %q, want a1", id, before[id].NodeList)
		}
	}
	t.Logf("%v: a1 runs 4 jobs, 4 wait for it; kill -9 its agent", time.Since(t0).Round(time.Millisecond))
	c.agents["a1"].kill9(t)
	c.open(gateA)
	c.wait(30*time.Second, "2 jobs ended while their agent was down", func() bool {
		return c.exited("a1", endWhileDown[0]) && c.exited("a1", endWhileDown[1])
	})
	// The controller has not heard of those endings: nothing changed.
	mid := c.jobs()
	for _, id := range all {
		if mid[id].State != before[id].State {
			t.Errorf("job %d is %s while a1's agent is down, was %s", id, mid[id].State, before[id].State)
		}
	}
	c.startAgent("a1")
	c.waitJobs(30*time.Second, "the 2 jobs that ended while a1's agent was down are COMPLETED", func(j map[uint32]api.JobInfo) bool {
		return countIn(j, endWhileDown, "COMPLETED") == 2
	})
	t.Logf("%v: agent restarted and re-attached", time.Since(t0).Round(time.Millisecond))
	now := c.jobs()
	for _, id := range append(append([]uint32{}, keepRunning...), others...) {
		if j := now[id]; j.State != "RUNNING" || !j.StartTime.Equal(before[id].StartTime) || j.NodeList != before[id].NodeList {
			t.Errorf("job %d: %s on %s since %v, want RUNNING on %s since %v", id, j.State, j.NodeList, j.StartTime,
				before[id].NodeList, before[id].StartTime)
		}
	}
	if n := c.node("a1"); strings.Contains(strings.ToLower(n.State), "down") || n.StateShort == "down" {
		t.Errorf("node a1 went %s (%s) across its agent's restart", n.State, n.Reason)
	}
	c.waitJobs(60*time.Second, "the 4 queued jobs ran on a1", func(j map[uint32]api.JobInfo) bool { return countIn(j, queued, "COMPLETED") == 4 })
	c.open(gateB)
	c.waitJobs(60*time.Second, "all 10 jobs COMPLETED", func(j map[uint32]api.JobInfo) bool { return countIn(j, all, "COMPLETED") == 10 })
	t.Logf("%v: all jobs completed", time.Since(t0).Round(time.Millisecond))
	c.checkRanOnce(all)
	starts := map[uint32]time.Time{}
	for _, id := range started {
		starts[id] = before[id].StartTime
	}
	c.checkAccounted(all, starts)
	c.checkSacct(all)
}

// checkSacct runs the real `sacct` and expects one COMPLETED line per job.
func (c *acceptCluster) checkSacct(ids []uint32) {
	c.t.Helper()
	rc, out, errs := c.sluice(nil, "sacct", "-a", "-X", "-n", "-P", "--format=JobID,State,ExitCode", "-j", idList(ids))
	if rc != 0 {
		c.t.Fatalf("sacct: exit %d: %s", rc, errs)
	}
	lines := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		lines[l]++
	}
	for _, id := range ids {
		want := strconv.FormatUint(uint64(id), 10) + "|COMPLETED|0:0"
		if lines[want] != 1 {
			c.t.Errorf("sacct shows %q %d times, want once", want, lines[want])
		}
	}
	if n := len(strings.Split(strings.TrimSpace(out), "\n")); n != len(ids) {
		c.t.Errorf("sacct printed %d lines for %d jobs", n, len(ids))
	}
}

func contains(ids []uint32, id uint32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// TestAcceptKillDuringSubmitAndLaunch is the rule "nothing acknowledged is
// lost" under fire: four clients submit short jobs as fast as they can
// while the agents start and finish them, and `sluice ctld` is killed with
// SIGKILL in the middle of it, then again while the restarted controller
// is launching what it recovered. Every job whose id a client received
// must exist afterwards; every job the controller knows (acknowledged or
// not) must run exactly once and be accounted once.
func TestAcceptKillDuringSubmitAndLaunch(t *testing.T) {
	t.Parallel()
	bin := acceptSluice(t)
	c := startAcceptCluster(t, bin, acceptOpts{nodes: 5, cpus: 4})
	t0 := time.Now()
	var (
		mu    sync.Mutex
		acked []uint32
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	// The jobs wait for a gate that opens after the first restart, so a
	// backlog is queued at the first kill however fast jobs start, and the
	// restarted controller has that backlog to launch at the second.
	gate := filepath.Join(c.work, "burst-gate")
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := api.NewUnixClient(filepath.Join(c.state, api.SocketFile))
			spec := api.JobSpec{Name: "burst", Script: c.script(gate), WorkDir: c.work, Environment: []string{"PATH=" + os.Getenv("PATH")}}
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				res, err := cl.Submit(ctx, api.SubmitRequest{Spec: spec})
				cancel()
				if err != nil {
					return // the controller is gone
				}
				mu.Lock()
				acked = append(acked, res.JobID)
				mu.Unlock()
			}
		}()
	}
	// Kill once some jobs have run and many are queued or starting.
	c.wait(60*time.Second, "jobs running while clients submit", func() bool {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		return n >= 100 && len(c.ranCounts()) >= 5
	})
	c.ctld.kill9(t)
	close(stop)
	wg.Wait()
	ran := len(c.ranCounts())
	t.Logf("%v: kill -9 with %d jobs acknowledged, %d started", time.Since(t0).Round(time.Millisecond), len(acked), ran)
	c.startCtld()
	got := c.jobs()
	for _, id := range acked {
		if _, ok := got[id]; !ok {
			t.Errorf("job %d was acknowledged before the kill and is gone after the restart", id)
		}
	}
	// Second kill: while the restarted controller launches the backlog.
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.wait(60*time.Second, "the restarted controller starting jobs", func() bool { return len(c.ranCounts()) > ran })
	c.ctld.kill9(t)
	t.Logf("%v: second kill -9 with %d jobs started", time.Since(t0).Round(time.Millisecond), len(c.ranCounts()))
	c.startCtld()
	final := c.waitJobs(120*time.Second, "every job COMPLETED", func(j map[uint32]api.JobInfo) bool {
		for _, job := range j {
			if job.State != "COMPLETED" {
				return false
			}
		}
		return len(j) >= len(acked)
	})
	t.Logf("%v: %d jobs completed (%d acknowledged)", time.Since(t0).Round(time.Millisecond), len(final), len(acked))
	var all []uint32
	for id := range final {
		all = append(all, id)
	}
	for _, id := range acked {
		if _, ok := final[id]; !ok {
			t.Errorf("acknowledged job %d is lost", id)
		}
	}
	c.checkRanOnce(all)
	c.checkAccounted(all, nil)
}

// TestAcceptAgentDownAtLaunch restarts an agent the way an upgrade does
// (kill -9, start again a little later) on a node with free CPUs: jobs
// submitted in between are given to the node by the controller, which
// does not know yet that its agent is gone, and their launch finds no
// agent. They must not be lost: once the agent is back each runs once and
// completes (Slurm requeues a batch job whose launch failed; it never
// reports it as the job's own failure).
func TestAcceptAgentDownAtLaunch(t *testing.T) {
	t.Parallel()
	bin := acceptSluice(t)
	c := startAcceptCluster(t, bin, acceptOpts{nodes: 1, cpus: 4})
	c.agents["a1"].kill9(t)
	var ids []uint32
	for i := 0; i < 3; i++ {
		ids = append(ids, c.submit("", "a1"))
	}
	// Sync point, not an assertion: the controller tried to launch them
	// (its log names each job) or a short while passed.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(c.ctld.log)
		if strings.Count(string(data), "launch") >= len(ids) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.startAgent("a1")
	final := c.waitJobs(60*time.Second, "the 3 jobs ended", func(j map[uint32]api.JobInfo) bool {
		n := 0
		for _, id := range ids {
			if s := j[id].State; s != "PENDING" && s != "RUNNING" && s != "CONFIGURING" {
				n++
			}
		}
		return n == len(ids)
	})
	for _, id := range ids {
		if j := final[id]; j.State != "COMPLETED" {
			t.Errorf("job %d submitted while a1's agent restarted ended %s (%s), want COMPLETED", id, j.State, j.StateDesc)
		}
	}
	c.checkRanOnce(ids)
}

// TestAcceptAcknowledgedChangesSurviveKill: changes a user was told were
// done (scancel of a pending and of a running job, scontrol hold,
// scontrol update) are stored before the answer. The controller is
// SIGKILLed right after the last answer; the restarted one shows every
// change, kills the cancelled job's processes if its agent still runs
// them, and never starts the cancelled pending job.
func TestAcceptAcknowledgedChangesSurviveKill(t *testing.T) {
	t.Parallel()
	bin := acceptSluice(t)
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			extra := ""
			if store == "postgres" {
				extra = "AccountingStorageType=accounting_storage/pgsql\nAccountingStorageLoc=" + pgSchemaDSN(t)
			}
			acknowledgedChanges(t, startAcceptCluster(t, bin, acceptOpts{nodes: 1, cpus: 2, extra: extra}))
		})
	}
}

func acknowledgedChanges(t *testing.T, c *acceptCluster) {
	gate := c.gate("G")
	r1, r2 := c.submit(gate, ""), c.submit(gate, "")
	c.waitJobs(60*time.Second, "2 jobs running", func(j map[uint32]api.JobInfo) bool {
		return countIn(j, []uint32{r1, r2}, "RUNNING") == 2
	})
	c.wait(30*time.Second, "2 job scripts started", func() bool { return len(c.ranCounts()) == 2 })
	var p []uint32
	for i := 0; i < 4; i++ {
		p = append(p, c.submit("", ""))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	control := func(op string, id uint32) {
		res, err := c.client.Control(ctx, api.JobControlRequest{Op: op, Jobs: []string{idStr(id)}})
		if err != nil || len(res.Results) != 1 || res.Results[0].Error != "" {
			t.Fatalf("%s %d: %+v %v", op, id, res, err)
		}
	}
	control(api.OpCancel, p[0])
	control(api.OpHold, p[1])
	if err := c.client.UpdateJob(ctx, api.JobUpdateRequest{Job: idStr(p[2]), Set: map[string]string{"TimeLimit": "5", "Nice": "50"}}); err != nil {
		t.Fatalf("update %d: %v", p[2], err)
	}
	control(api.OpCancel, r1)
	c.ctld.kill9(t)
	c.startCtld()
	after := c.jobs()
	check := func(id uint32, what string, ok bool) {
		if !ok {
			t.Errorf("job %d after the restart: want %s, got %s hold=%q limit=%d nice=%d", id, what,
				after[id].State, after[id].Hold, after[id].TimeLimitSec, after[id].Nice)
		}
	}
	check(p[0], "CANCELLED", after[p[0]].State == "CANCELLED")
	check(p[1], "PENDING and held", after[p[1]].State == "PENDING" && after[p[1]].Hold != "")
	check(p[2], "time limit 5:00 and nice 50", after[p[2]].TimeLimitSec == 300 && after[p[2]].Nice == 50)
	check(r1, "CANCELLED", after[r1].State == "CANCELLED")
	check(r2, "RUNNING", after[r2].State == "RUNNING")
	// r1's processes end without the gate opening: killed by the
	// controller before the kill or by the restarted one (when the agent
	// registers again, at its next heartbeat at the latest).
	restarted := time.Now()
	c.wait(60*time.Second, "the cancelled running job's processes are gone", func() bool { return c.endedOrForgotten("a1", r1) })
	t.Logf("the cancelled running job ended %v after the restart", time.Since(restarted).Round(time.Millisecond))
	control(api.OpRelease, p[1])
	c.open(gate)
	done := []uint32{r2, p[1], p[2], p[3]}
	c.waitJobs(60*time.Second, "the other jobs COMPLETED", func(j map[uint32]api.JobInfo) bool { return countIn(j, done, "COMPLETED") == 4 })
	counts := c.ranCounts()
	for _, id := range append([]uint32{r1}, done...) {
		if counts[id] != 1 {
			t.Errorf("job %d ran %d times, want once", id, counts[id])
		}
	}
	if counts[p[0]] != 0 {
		t.Errorf("cancelled pending job %d ran %d times", p[0], counts[p[0]])
	}
	c.checkAccounted(done, nil)
}

// TestAcceptControllerAndAgentDown: the controller and an agent are both
// SIGKILLed while jobs run; the jobs end while neither is there. The
// agent comes back first, then the controller: the endings kept in the
// agent's spool reach the new controller, and every job is COMPLETED and
// accounted once.
func TestAcceptControllerAndAgentDown(t *testing.T) {
	t.Parallel()
	bin := acceptSluice(t)
	c := startAcceptCluster(t, bin, acceptOpts{nodes: 2, cpus: 2})
	gate := c.gate("G")
	var ids []uint32
	for i := 0; i < 4; i++ {
		ids = append(ids, c.submit(gate, ""))
	}
	queued := c.submit("", "")
	before := c.waitJobs(60*time.Second, "4 jobs running", func(j map[uint32]api.JobInfo) bool { return countIn(j, ids, "RUNNING") == 4 })
	c.wait(30*time.Second, "4 job scripts started", func() bool { return len(c.ranCounts()) == 4 })
	c.agents["a1"].kill9(t)
	c.ctld.kill9(t)
	c.open(gate)
	c.wait(30*time.Second, "the jobs ended with nobody watching", func() bool {
		for _, id := range ids {
			if !c.exited(before[id].BatchHost, id) {
				return false
			}
		}
		return true
	})
	c.startAgent("a1")
	c.startCtld()
	all := append(append([]uint32{}, ids...), queued)
	c.waitJobs(60*time.Second, "all 5 jobs COMPLETED", func(j map[uint32]api.JobInfo) bool { return countIn(j, all, "COMPLETED") == 5 })
	c.checkRanOnce(all)
	starts := map[uint32]time.Time{}
	for _, id := range ids {
		starts[id] = before[id].StartTime
	}
	c.checkAccounted(all, starts)
}

// TestAcceptAgentKilledDuringKillSequence: scancel sends SIGTERM, which
// the job ignores, and the agent is SIGKILLed before KillWait is over. The
// restarted agent must carry the kill sequence on (SIGKILL) and the job
// must end CANCELLED, once, with the processes gone.
func TestAcceptAgentKilledDuringKillSequence(t *testing.T) {
	t.Parallel()
	bin := acceptSluice(t)
	c := startAcceptCluster(t, bin, acceptOpts{nodes: 1, cpus: 2})
	gate := c.gate("G")
	termed := filepath.Join(c.work, "termed")
	spec := api.JobSpec{Name: "stubborn", WorkDir: c.work, Environment: []string{"PATH=" + os.Getenv("PATH")},
		Script: "#!/bin/sh\ntrap 'echo $SLURM_JOB_ID >> " + termed + "' TERM\n" + strings.TrimPrefix(c.script(gate), "#!/bin/sh\n")}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.client.Submit(ctx, api.SubmitRequest{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	id := res.JobID
	c.waitJobs(60*time.Second, "the job running", func(j map[uint32]api.JobInfo) bool { return j[id].State == "RUNNING" })
	c.wait(30*time.Second, "the job script started", func() bool { return c.ranCounts()[id] == 1 })
	if r, err := c.client.Control(ctx, api.JobControlRequest{Op: api.OpCancel, Jobs: []string{idStr(id)}}); err != nil || r.Results[0].Error != "" {
		t.Fatalf("scancel: %+v %v", r, err)
	}
	c.wait(30*time.Second, "the job got SIGTERM", func() bool { data, _ := os.ReadFile(termed); return len(data) > 0 })
	c.agents["a1"].kill9(t)
	c.startAgent("a1")
	c.wait(30*time.Second, "the job's processes killed by the restarted agent", func() bool { return c.endedOrForgotten("a1", id) })
	j := c.waitJobs(30*time.Second, "the job CANCELLED", func(j map[uint32]api.JobInfo) bool { return j[id].State == "CANCELLED" })[id]
	if j.State != "CANCELLED" {
		t.Errorf("job %d is %s", id, j.State)
	}
	c.checkRanOnce([]uint32{id})
}
