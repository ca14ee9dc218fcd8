package ctld

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFenceJobsOfDeadAgent is issue 17's finding 6: a node agent dies
// while its job runs (the job's processes survive under the node's
// supervisor). The supervisor, alone for half of SlurmdTimeout, kills
// the job's processes, before the controller marks the node DOWN and
// requeues the job elsewhere: the job never runs twice at once.
func TestFenceJobsOfDeadAgent(t *testing.T) {
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
	if waited := time.Since(dead); waited > 2*time.Second {
		t.Fatalf("the job's processes died %v after the agent, not before SlurmdTimeout (2 s)", waited)
	}
	log, _ := os.ReadFile(filepath.Join(c.dir, "spool", "n1", "supervisor.log"))
	if !strings.Contains(string(log), "fencing: no node agent") {
		t.Fatalf("supervisor log: %q", log)
	}
}
