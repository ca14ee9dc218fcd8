package ctld

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestRejectedSubmissionJobIDs follows slurmctld 24.11 (checked on the
// oracle): a request no node could ever satisfy (-N 9 on a 2-node
// cluster) is refused with "Requested node configuration is not
// available" but uses up a job id and stays as a FAILED job with
// Reason=BadConstraints (scontrol ExitCode 0:1; sacct FAILED 1:0, no
// start, no batch step, Timelimit Partition_Limit), kept across a restart; a bad dependency uses up
// an id and leaves nothing; an unknown partition uses up nothing.
func TestRejectedSubmissionJobIDs(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b backend) {
		c := newCluster(t, b.open(t), clusterOpts{nodes: 2})
		first := c.submit(c.wrap("true"))
		refuse := func(want string, mod func(*api.JobSpec)) {
			t.Helper()
			_, err := c.client.Submit(c.ctx(), api.SubmitRequest{Spec: c.wrap("true", mod)})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("submit: err %v, want %q", err, want)
			}
		}
		refuse("Requested node configuration is not available", func(s *api.JobSpec) { s.MinNodes = 9 })
		refuse("Job dependency problem", func(s *api.JobSpec) { s.Dependency = "afterok:999" })
		refuse("Invalid partition name specified", func(s *api.JobSpec) { s.Partitions = []string{"nosuch"} })
		if next := c.submit(c.wrap("true")); next != first+3 {
			t.Fatalf("next job id %d, want %d", next, first+3)
		}
		failed := first + 1
		check := func() {
			t.Helper()
			j, ok := c.jobByID(failed)
			if !ok || j.State != "FAILED" || j.Reason != "BadConstraints" || j.ExitCode != "0:1" {
				t.Fatalf("job %d: %+v", failed, j)
			}
			runs := c.runs(failed)
			if len(runs) != 1 || runs[0].State != "FAILED" || runs[0].ExitCode != "1:0" || !runs[0].Start.IsZero() ||
				runs[0].TimeLimit != api.TimePartitionLimit {
				t.Fatalf("accounting of job %d: %+v", failed, runs)
			}
			if _, ok := c.jobByID(failed + 1); ok {
				t.Fatalf("the dependency rejection left job %d", failed+1)
			}
		}
		check()
		c.ctl.Close()
		c.startController()
		check()
		if next := c.submit(c.wrap("true")); next != first+4 {
			t.Fatalf("job id after restart %d, want %d", next, first+4)
		}
		// Held, the same request is accepted; released (after a restart
		// too) it pends with PartitionNodeLimit.
		held := c.submit(c.wrap("true", func(s *api.JobSpec) { s.MinNodes, s.Hold = 9, true }))
		c.ctl.Close()
		c.startController()
		c.control(api.OpRelease, idStr(held))
		c.eventually(5*time.Second, "PartitionNodeLimit", func() bool {
			j, ok := c.jobByID(held)
			return ok && j.State == "PENDING" && j.Reason == "PartitionNodeLimit"
		})
	})
}
