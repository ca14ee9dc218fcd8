package ctld

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestFailedDependencySurvivesPurgeAndRestart: a job whose afternotok
// dependency failed (its parent COMPLETED) keeps DependencyNeverSatisfied
// and Dependency=afternotok:N(failed) once the parent is purged after
// MinJobAge, and after a controller restart that no longer loads the
// parent, as in Slurm; it never runs.
func TestFailedDependencySurvivesPurgeAndRestart(t *testing.T) {
	clock := &fakeClock{t: time.Now().Truncate(time.Second)}
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, now: clock.now})
	parent := c.submit(c.wrap("true"))
	c.waitState(parent, "COMPLETED", 10*time.Second)
	cleanup := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Dependency = "afternotok:" + idStr(parent) }))
	want := "afternotok:" + idStr(parent) + "(failed)"
	never := func(what string) {
		t.Helper()
		c.eventually(5*time.Second, what, func() bool {
			j, ok := c.jobByID(cleanup)
			return ok && j.State == "PENDING" && j.Reason == "DependencyNeverSatisfied" && j.Dependency == want
		})
	}
	never("DependencyNeverSatisfied")
	clock.advance(10 * time.Minute) // past MinJobAge=300
	c.eventually(5*time.Second, "parent purged", func() bool {
		_, ok := c.jobByID(parent)
		return !ok
	})
	time.Sleep(200 * time.Millisecond) // a few scheduling cycles
	never("still DependencyNeverSatisfied after the purge")
	c.ctl.Close()
	c.startController()
	time.Sleep(200 * time.Millisecond)
	never("still DependencyNeverSatisfied after a restart")
}
