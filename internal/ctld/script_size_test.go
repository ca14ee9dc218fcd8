package ctld

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestMaxScriptSize: with SchedulerParameters=max_script_size=1000 a
// script of 1000 bytes is queued and one of 1001 refused through the API
// (not only sbatch) with slurmctld's message, using no job id (Slurm
// 24.11, oracle: "Batch job submission failed: Pathname of a file,
// directory or other parameter too long", and the next job got the next id).
func TestMaxScriptSize(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: "SchedulerParameters=max_script_size=1000"})
	script := func(n int) func(*api.JobSpec) {
		return func(s *api.JobSpec) {
			s.Hold = true
			s.Script = "#!/bin/sh\n" + strings.Repeat("#", n-len("#!/bin/sh\n")-1) + "\n"
		}
	}
	if id := c.submit(c.wrap("", script(1000))); id != 1 {
		t.Errorf("1000-byte script: job %d, want 1", id)
	}
	_, err := c.client.Submit(c.ctx(), api.SubmitRequest{Spec: c.wrap("", script(1001))})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Message != "Pathname of a file, directory or other parameter too long" {
		t.Fatalf("1001-byte script: err %v, want slurmctld's too-long refusal", err)
	}
	if id := c.submit(c.wrap("", script(20))); id != 2 {
		t.Errorf("after the refusal: job %d, want 2 (no id used up)", id)
	}
}
