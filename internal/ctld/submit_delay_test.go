package ctld

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestSubmitSchedDelay: with Slurm's delay between a submission and the
// pass it asks for, a job submitted right after an array gets the next
// id, before the array's tasks start and take theirs (oracle,
// array-throttle: arr is 1, arr2 is 2, arr's tasks 3 and 4).
func TestSubmitSchedDelay(t *testing.T) {
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, submitDelay: SlurmSubmitSchedDelay})
	arr := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.Array = "0-1" }))
	next := c.submit(c.wrap("sleep 30"))
	if next != arr+1 {
		t.Fatalf("second submission got %d, want %d", next, arr+1)
	}
	if j, _ := c.jobByID(next); j.State != "PENDING" {
		t.Fatalf("job %d is %s before the delay", next, j.State)
	}
	c.eventually(10*time.Second, "array task split off with the next id", func() bool {
		j, ok := c.jobByID(next + 1)
		return ok && j.ArrayJobID == arr && j.State == "RUNNING"
	})
	c.control("cancel", idStr(arr), idStr(next))
}
