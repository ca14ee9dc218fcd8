package ctld

import (
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestSubmitKeyRepeated: a submission repeated with its SubmitKey (sbatch
// after a lost answer) gets the job made the first time, also from a
// restarted controller; another key makes another job (finding 8).
func TestSubmitKeyRepeated(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	keyed := func(key string) api.JobSpec {
		return c.wrap("sleep 5", func(s *api.JobSpec) { s.SubmitKey = key })
	}
	first := c.submit(keyed("k1"))
	if again := c.submit(keyed("k1")); again != first {
		t.Fatalf("repeated key made job %d, want %d", again, first)
	}
	c.ctl.Close()
	c.startController()
	if again := c.submit(keyed("k1")); again != first {
		t.Fatalf("repeated key after a restart made job %d, want %d", again, first)
	}
	if other := c.submit(keyed("k2")); other == first {
		t.Fatal("another key answered the first job")
	}
	res, err := c.client.Jobs(c.ctx(), api.JobQuery{})
	if err != nil || len(res.Jobs) != 2 {
		t.Fatalf("jobs: %d, %v; want 2", len(res.Jobs), err)
	}
}
