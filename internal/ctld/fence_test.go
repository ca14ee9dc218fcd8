package ctld

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestFenceJobsOfDeadAgent is issue 17's finding 6: a node agent dies
// while its job runs (the job's processes survive under the node's
// supervisor). The supervisor, alone for half of SlurmdTimeout, kills
// the job's processes, before the controller marks the node DOWN and
// requeues the job elsewhere: the job never runs twice at once.
func TestFenceJobsOfDeadAgent(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	if got := c.ctl.fenceAfterSec(); got != 1 {
		t.Fatalf("fence delay %d s, want 1 (half of SlurmdTimeout=2)", got)
	}
	id := c.submit(c.wrap("sleep 60"))
	c.waitState(id, "RUNNING", 10*time.Second)
	var pid int
	c.eventually(5*time.Second, "job pid known", func() bool {
		for _, j := range c.agents["n1"].Jobs() {
			if j.JobID == id && j.PID > 0 {
				pid = j.PID
			}
		}
		return pid > 0
	})
	c.agents["n1"].Close()
	dead := time.Now()
	c.eventually(5*time.Second, "job processes killed", func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
	// The fence delay (1 s) plus the supervisor's one-second check: at a
	// real SlurmdTimeout (300 s by default) that is far inside it.
	if waited := time.Since(dead); waited > 3*time.Second {
		t.Fatalf("the job's processes died %v after the agent, want within the 1 s fence delay and a check", waited)
	}
	log, _ := os.ReadFile(filepath.Join(c.dir, "spool", "n1", "supervisor.log"))
	if !strings.Contains(string(log), "fencing: no word from a node agent") {
		t.Fatalf("supervisor log: %q", log)
	}
}

// TestAcceptFenceStoppedAgent: an agent stopped with SIGSTOP keeps its
// connection to the supervisor but falls silent; the supervisor fences
// its job after half of SlurmdTimeout (15 s here), before the controller
// marks the node DOWN (30 s) and requeues the job.
func TestAcceptFenceStoppedAgent(t *testing.T) {
	t.Parallel()
	bin := acceptSluice(t)
	c := startAcceptCluster(t, bin, acceptOpts{nodes: 1, cpus: 2})
	id := c.submit(c.gate("stopped"), "")
	c.waitJobs(20*time.Second, "job running", func(m map[uint32]api.JobInfo) bool { return m[id].State == "RUNNING" })
	// RUNNING is set when the controller sends the launch: wait for the
	// script itself, or the agent could be stopped in the middle of the
	// launch (the first one also starts the supervisor, and over TLS it
	// takes a handshake more), leaving nothing to fence.
	c.wait(20*time.Second, "the job's script started", func() bool { return c.ranCounts()[id] == 1 })
	agent := c.agents["a1"]
	if err := agent.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	defer agent.cmd.Process.Signal(syscall.SIGCONT)
	c.wait(40*time.Second, "the stopped agent's job fenced", func() bool { return c.exited("a1", id) })
	if took := time.Since(stopped); took >= 30*time.Second {
		t.Fatalf("fenced after %v, not before SlurmdTimeout (30 s)", took)
	}
	agent.cmd.Process.Signal(syscall.SIGCONT)
	if n := c.ranCounts()[id]; n != 1 {
		t.Fatalf("job %d ran %d times", id, n)
	}
}
