package ctld

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestMetricsEndpoint checks that the controller serves /metrics/jobs
// and /metrics/nodes from its own state (a held job is pending), and that
// PrivateData closes the metrics to users but not to operators.
func TestMetricsEndpoint(t *testing.T) {
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	c.submitAs(alice, c.wrap("true", func(s *api.JobSpec) { s.Hold = true; s.TimeLimitSec = 600 }))
	get := func(who Who, path string) (int, string) {
		rec := httptest.NewRecorder()
		c.ctl.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil).WithContext(WithWho(context.Background(), who)))
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b)
	}
	if code, body := get(alice, "/metrics/jobs"); code != 200 || !strings.Contains(body, `slurm_jobs_state{state="pending"} 1`) {
		t.Errorf("jobs: %d\n%s", code, body)
	}
	if code, body := get(alice, "/metrics/nodes"); code != 200 || !strings.Contains(body, "slurm_nodes 1") {
		t.Errorf("nodes: %d\n%s", code, body)
	}
	c.ctl.cfg.PrivateData = []string{"jobs"}
	if code, _ := get(alice, "/metrics/jobs"); code != 403 {
		t.Errorf("PrivateData, user: %d", code)
	}
	if code, _ := get(root, "/metrics/scheduler"); code != 200 {
		t.Errorf("PrivateData, root: %d", code)
	}
}
