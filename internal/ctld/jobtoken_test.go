package ctld

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestJobToken: a batch job gets a token for its user in SLUICE_JOB_TOKEN
// (a job on a node host has no controller socket; its srun reaches the
// controller over TCP with it), signed with the controller's JWT key and
// valid past the job's time limit.
func TestJobToken(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	out := filepath.Join(c.work, "token")
	id := c.submit(c.wrap("echo $"+api.JobTokenEnv+" > "+out, func(s *api.JobSpec) { s.TimeLimitSec = 600 }))
	c.waitState(id, "COMPLETED", 10*time.Second)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(string(data))
	me, _ := user.Current()
	if name, err := verifyToken(c.ctl.jwtKey, tok, time.Now()); err != nil || name != me.Username {
		t.Fatalf("job token %q: user %q, %v; want %q", tok, name, err, me.Username)
	}
	if _, err := verifyToken(c.ctl.jwtKey, tok, time.Now().Add(10*time.Minute+30*time.Minute)); err != nil {
		t.Errorf("the token expires within the job's time limit and half an hour: %v", err)
	}
	if _, err := verifyToken(c.ctl.jwtKey, tok, time.Now().Add(10*time.Minute+2*time.Hour)); err == nil {
		t.Errorf("the token of a 10-minute job is still valid 2 hours after its limit")
	}
}

// TestSubmitHostInJob: the job's SLURM_SUBMIT_HOST is the host sbatch ran
// on (its AllocNode), as Slurm sets it; it was empty.
func TestSubmitHostInJob(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	out := filepath.Join(c.work, "host")
	id := c.submit(c.wrap("echo $SLURM_SUBMIT_HOST > "+out, func(s *api.JobSpec) { s.AllocNode = "login7" }))
	c.waitState(id, "COMPLETED", 10*time.Second)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(data)); got != "login7" {
		t.Errorf("SLURM_SUBMIT_HOST = %q, want login7", got)
	}
}
