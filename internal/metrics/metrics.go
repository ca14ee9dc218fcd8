// Package metrics serves the controller's Prometheus metrics: the endpoints
// of Slurm 25.11's metrics/openmetrics plugin (/metrics listing them,
// /metrics/jobs, /metrics/jobs-users-accts, /metrics/nodes,
// /metrics/partitions, /metrics/scheduler), computed at each scrape from a
// snapshot of the controller's jobs, nodes, partitions and scheduler
// statistics, with the Prometheus Go client.
package metrics

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Snapshot is the controller's state a scrape reports.
type Snapshot struct {
	Jobs       []api.JobInfo
	Nodes      []api.NodeRecord
	Partitions []api.PartitionRecord
	Diag       api.SdiagResponse
}

// Source takes a snapshot for one scrape; an error fails the scrape.
type Source func(ctx context.Context, r *http.Request) (Snapshot, error)

// Endpoints are the metric sets, in the order /metrics lists them.
var Endpoints = []string{"jobs", "jobs-users-accts", "nodes", "partitions", "scheduler"}

// collectors builds the metrics of one endpoint from a snapshot.
var collectors = map[string]func(s *Snapshot) []prometheus.Metric{
	"jobs":             jobMetrics,
	"jobs-users-accts": userAccountMetrics,
	"nodes":            nodeMetrics,
	"partitions":       partitionMetrics,
	"scheduler":        schedulerMetrics,
}

// Handler serves /metrics and /metrics/NAME from src.
func Handler(src Source) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, e := range Endpoints {
			fmt.Fprintf(w, "/metrics/%s\n", e)
		}
	})
	for _, e := range Endpoints {
		mux.Handle("GET /metrics/"+e, endpoint(src, collectors[e]))
	}
	return mux
}

// endpoint serves one metric set: a registry whose only collector takes
// the snapshot at scrape time.
func endpoint(src Source, build func(*Snapshot) []prometheus.Metric) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		snap, err := src(r.Context(), r)
		if err != nil {
			http.Error(w, err.Error(), statusOf(err))
			return
		}
		reg := prometheus.NewRegistry()
		reg.MustRegister(constCollector(build(&snap)))
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	})
}

func statusOf(err error) int {
	if e, ok := err.(*api.Error); ok && e.Status != 0 {
		return e.Status
	}
	return http.StatusInternalServerError
}

// constCollector hands a scrape's ready metrics to the registry (an
// unchecked collector: the families vary with the snapshot).
type constCollector []prometheus.Metric

func (c constCollector) Describe(chan<- *prometheus.Desc) {}

func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}

// gauge is one sample.
func gauge(name, help string, v float64, labels ...string) prometheus.Metric {
	var keys, vals []string
	for i := 0; i+1 < len(labels); i += 2 {
		keys, vals = append(keys, labels[i]), append(vals, labels[i+1])
	}
	return prometheus.MustNewConstMetric(prometheus.NewDesc(name, help, keys, nil), prometheus.GaugeValue, v, vals...)
}

func counter(name, help string, v float64) prometheus.Metric {
	return prometheus.MustNewConstMetric(prometheus.NewDesc(name, help, nil, nil), prometheus.CounterValue, v)
}

// baseState is a job's or node's base state ("MIXED+DRAIN" is MIXED,
// "CANCELLED by 0" CANCELLED), lower-cased as a label value.
func baseState(s string) string {
	s, _, _ = strings.Cut(s, " ")
	s, _, _ = strings.Cut(s, "+")
	return strings.ToLower(s)
}
