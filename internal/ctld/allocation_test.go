package ctld

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestAllocationLifecycle: a salloc allocation (a job whose script only
// waits) ends with its holder's exit code when released (OpComplete:
// COMPLETED, or FAILED with the code), stays while its holder says it is
// alive, and is cancelled once the holder has been silent for InactiveLimit
// (30 s when unset: salloc killed, its host lost). Only the owner may keep
// or complete it, and only an allocation can be completed this way.
func TestAllocationLifecycle(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2, extra: "InactiveLimit=3\n"})
	alloc := func(s *api.JobSpec) { s.Allocation = true }
	control := func(who Who, op string, id uint32, code int) string {
		t.Helper()
		var res api.JobControlResponse
		if status, msg := c.as(who, "POST", api.PathJobControl, api.JobControlRequest{Op: op, Jobs: []string{idStr(id)}, ExitCode: code}, &res); status != 200 {
			return msg
		}
		return res.Results[0].Error
	}
	steps := []struct {
		name  string
		code  int
		state string
		exit  string
	}{{"released", 0, "COMPLETED", "0:0"}, {"released with a code", 3, "FAILED", "3:0"}}
	for _, st := range steps {
		id := c.submitAs(alice, c.wrap("sleep 600", alloc))
		c.waitState(id, "RUNNING", 10*time.Second)
		if msg := control(bob, api.OpComplete, id, 0); msg == "" {
			t.Errorf("%s: bob completed alice's allocation", st.name)
		}
		if msg := control(alice, api.OpComplete, id, st.code); msg != "" {
			t.Fatalf("%s: complete: %s", st.name, msg)
		}
		if j := c.waitState(id, st.state, 10*time.Second); j.ExitCode != st.exit {
			t.Errorf("%s: exit code %s, want %s", st.name, j.ExitCode, st.exit)
		}
	}
	batch := c.submitAs(alice, c.wrap("sleep 600"))
	c.waitState(batch, "RUNNING", 10*time.Second)
	if msg := control(alice, api.OpComplete, batch, 0); msg != "Job is not an allocation of salloc or srun" {
		t.Errorf("completing a batch job: %q", msg)
	}
	kept := c.submitAs(alice, c.wrap("sleep 600", alloc))
	orphan := c.submitAs(alice, c.wrap("sleep 600", alloc))
	c.waitState(kept, "RUNNING", 10*time.Second)
	c.waitState(orphan, "RUNNING", 10*time.Second)
	for i := 0; i < 10; i++ { // 5 s: past the limit for the silent holder
		time.Sleep(500 * time.Millisecond)
		if msg := control(alice, api.OpKeepalive, kept, 0); msg != "" {
			t.Fatalf("keepalive: %s (job %+v)", msg, c.job(kept))
		}
	}
	if j := c.waitState(orphan, "CANCELLED", 10*time.Second); j.State != "CANCELLED" {
		t.Errorf("silent holder: %s", j.State)
	}
	if j := c.job(kept); j.State != "RUNNING" {
		t.Errorf("kept allocation: %s", j.State)
	}
	c.as(root, "POST", api.PathJobControl, api.JobControlRequest{Op: api.OpCancel, Jobs: []string{idStr(kept), idStr(batch)}}, &api.JobControlResponse{})
}
