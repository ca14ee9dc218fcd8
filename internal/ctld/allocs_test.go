package ctld

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestAllocationRelinquishAndOrphan: an salloc allocation is held through
// the controller: relinquished with its command's exit status it ends
// FAILED 3:0 (COMPLETED for 0) with its script killed on the node; one
// whose heartbeats stop is cancelled once allocOrphanAfter (60 s, 3 s here) has passed,
// and heartbeats keep it; a batch job refuses both operations.
func TestAllocationRelinquishAndOrphan(t *testing.T) {
	defer func(d time.Duration) { allocOrphanAfter = d }(allocOrphanAfter)
	allocOrphanAfter = 3 * time.Second
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	alloc := func() uint32 {
		return c.submit(c.wrap("while :; do sleep 1; done", func(s *api.JobSpec) { s.Allocation = true }))
	}
	first := alloc()
	c.waitState(first, "RUNNING", 10*time.Second)
	res, err := c.client.Control(c.ctx(), api.JobControlRequest{Op: api.OpRelinquish, Jobs: []string{idStr(first)}, ExitCode: 3})
	if err != nil || res.Results[0].Error != "" {
		t.Fatalf("relinquish: %+v %v", res, err)
	}
	if j := c.waitState(first, "FAILED", 5*time.Second); j.ExitCode != "3:0" {
		t.Errorf("relinquished allocation: exit %s, want 3:0", j.ExitCode)
	}

	kept, orphan := alloc(), alloc()
	c.waitState(kept, "RUNNING", 10*time.Second)
	c.waitState(orphan, "RUNNING", 10*time.Second)
	for i := 0; i < 5; i++ {
		c.control(api.OpAllocBeat, idStr(kept))
		time.Sleep(time.Second)
	}
	c.waitState(orphan, "CANCELLED", 5*time.Second)
	if j := c.job(kept); j.State != "RUNNING" {
		t.Errorf("allocation with heartbeats: %s, want RUNNING", j.State)
	}
	c.control(api.OpRelinquish, idStr(kept))
	c.waitState(kept, "COMPLETED", 5*time.Second)

	batch := c.submit(c.wrap("sleep 30"))
	res, _ = c.client.Control(c.ctx(), api.JobControlRequest{Op: api.OpRelinquish, Jobs: []string{idStr(batch)}})
	if len(res.Results) != 1 || res.Results[0].Error == "" {
		t.Errorf("relinquish of a batch job: %+v", res)
	}
}
