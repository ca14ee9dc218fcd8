package ctld

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-hpc/sluice/internal/metrics"
)

// Prometheus metrics on the controller's port, as slurmctld 25.11 serves
// them with MetricsType=metrics/openmetrics: without authentication, and
// not at all when PrivateData is set (what users may not see of each
// other would be visible to anyone). See package metrics.

// metricsEnabled says whether slurm.conf asks for the endpoints.
func (c *Controller) metricsEnabled() bool {
	t := strings.ToLower(c.cfg.MetricsType)
	return (t == "metrics/openmetrics" || t == "openmetrics") && len(c.cfg.PrivateData) == 0
}

// submitLatency is the time a submission takes from its request to its
// durable answer (sluice_submit_latency_seconds on /metrics/scheduler).
func newSubmitLatency() prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_submit_latency_seconds",
		Help:    "Time from a submission's request to its stored answer",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}})
}

// registerMetrics adds the endpoints to mux when enabled.
func (c *Controller) registerMetrics(mux *http.ServeMux) {
	if !c.metricsEnabled() {
		return
	}
	metrics.Register(mux, c.metricsSnapshot, c.submitLatency)
}

// metricsSnapshot reads what one endpoint needs, as root sees it (no
// PrivateData: everyone sees everything).
func (c *Controller) metricsSnapshot(r *http.Request, parts map[string]bool) (metrics.Snapshot, error) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	var snap metrics.Snapshot
	if parts["sdiag"] {
		d, err := c.sdiag(ctx, Who{User: "root"})
		if err != nil {
			return snap, err
		}
		snap.Sdiag = d
	}
	_, err := c.do(ctx, func(ls *loopState) (any, error) {
		if parts["jobs"] {
			res, err := ls.queryJobs(nil, false)
			if err != nil {
				return nil, err
			}
			snap.Jobs = res.Jobs
		}
		if parts["nodes"] {
			for i := range ls.st.Cluster.Nodes {
				snap.Nodes = append(snap.Nodes, ls.nodeRecord(i))
			}
		}
		if parts["partitions"] {
			for i := range ls.st.Cluster.Partitions {
				snap.Partitions = append(snap.Partitions, ls.partitionRecord(i))
			}
		}
		return nil, nil
	})
	return snap, err
}

// observeSubmit records one submission's latency.
func (c *Controller) observeSubmit(start time.Time) {
	if c.submitLatency != nil {
		c.submitLatency.Observe(time.Since(start).Seconds())
	}
}
