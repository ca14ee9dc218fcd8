package ctld

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestLicensesEndToEnd (issue 8): with Licenses=matlab:4 in slurm.conf,
// three jobs submitted through the API with -L matlab:2 run two at a
// time: the third pends with reason Licenses and runs once a license
// holder ends; -L over the configured count is rejected with Slurm's
// message.
func TestLicensesEndToEnd(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2, extra: "Licenses=matlab:4\n"})
	lic := func(s *api.JobSpec) { s.Licenses = "matlab:2" }
	a := c.submit(c.wrap("sleep 2", lic))
	b := c.submit(c.wrap("sleep 30", lic))
	third := c.submit(c.wrap("true", lic))
	c.waitState(a, "RUNNING", 10*time.Second)
	c.waitState(b, "RUNNING", 10*time.Second)
	var j api.JobInfo
	c.eventually(10*time.Second, "third job pending (Licenses)", func() bool {
		var ok bool
		j, ok = c.jobByID(third)
		return ok && j.State == "PENDING" && j.Reason == "Licenses"
	})
	t.Logf("job %d: %s (%s)", third, j.State, j.Reason)
	c.waitState(third, "COMPLETED", 20*time.Second)
	_, err := c.client.Submit(c.ctx(), api.SubmitRequest{Spec: c.wrap("true", func(s *api.JobSpec) { s.Licenses = "matlab:5" })})
	if err == nil || err.Error() != "Invalid license specification" {
		t.Fatalf("matlab:5: %v, want Invalid license specification", err)
	}
	c.control("cancel", idStr(b))
}
