package ctld

import (
	"context"
	"net/http"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/metrics"
)

// registerMetrics serves the Prometheus metrics (internal/metrics) on the
// client API: /metrics and /metrics/{jobs,jobs-users-accts,nodes,
// partitions,scheduler}, as Slurm 25.11's slurmctld does. The caller is
// identified as for every command (socket credentials or a token); as in
// Slurm, PrivateData turns the metrics off, here for everyone but
// operators.
func (c *Controller) registerMetrics(mux *http.ServeMux) {
	h := metrics.Handler(c.metricsSnapshot)
	mux.Handle("GET /metrics", h)
	mux.Handle("GET /metrics/{set}", h)
}

// metricsSnapshot takes the state one scrape reports, in one turn of the
// controller's loop, and the scheduler statistics sdiag shows.
func (c *Controller) metricsSnapshot(ctx context.Context, r *http.Request) (metrics.Snapshot, error) {
	who, ok := WhoFrom(r.Context())
	if !ok {
		return metrics.Snapshot{}, api.Errorf(http.StatusUnauthorized, "Unable to identify the caller")
	}
	res, err := c.do(ctx, func(ls *loopState) (any, error) {
		if len(c.cfg.PrivateData) > 0 && !ls.isAdmin(who) {
			return nil, api.Errorf(http.StatusForbidden, "metrics are disabled by PrivateData")
		}
		jobs, err := ls.queryJobs(nil, false)
		if err != nil {
			return nil, err
		}
		s := metrics.Snapshot{Jobs: jobs.Jobs}
		for i := range ls.st.Cluster.Nodes {
			s.Nodes = append(s.Nodes, ls.nodeRecord(i))
		}
		for i := range ls.st.Cluster.Partitions {
			s.Partitions = append(s.Partitions, ls.partitionRecord(i))
		}
		return s, nil
	})
	if err != nil {
		return metrics.Snapshot{}, err
	}
	s := res.(metrics.Snapshot)
	s.Diag, err = c.sdiag(ctx, who)
	return s, err
}
