package ctld

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// extState is the loop-owned bookkeeping of the accounting/statistics
// API (sdiag counters, job steps). It lives in loopState.ext.
type extState struct {
	started time.Time
	reset   time.Time

	cycles       int
	lastCycle    time.Duration
	maxCycle     time.Duration
	totalCycle   time.Duration
	totalDepth   int64
	lastQueueLen int

	bfTotalJobs  int
	bfSinceReset int
	bfCycles     int
	bfLastWhen   time.Time
	bfLastCycle  time.Duration
	bfMaxCycle   time.Duration
	bfTotalCycle time.Duration
	bfLastDepth  int
	bfTotalDepth int64
	bfLastQueue  int
	bfTotalQueue int64

	// steps are the job steps begun by srun inside an allocation.
	steps map[sched.JobID][]stepRec
	// nodes is the node state history sampler's state (accounting.go).
	nodes *nodeHistory
}

// observeCycle records one scheduling cycle for sdiag (called by
// schedule). Sluice runs the main pass and backfill in one cycle, so a
// cycle that tested jobs in backfill counts as a backfill cycle too, with
// the same duration (docs/differences.md).
func (e *extState) observeCycle(s *sched.CycleStats, d time.Duration, now time.Time) {
	e.resetAtMidnight(now)
	e.cycles++
	e.lastCycle = d
	e.maxCycle = max(e.maxCycle, d)
	e.totalCycle += d
	e.totalDepth += int64(s.Depth)
	e.lastQueueLen = s.QueueLen
	e.bfTotalJobs += s.Backfilled
	e.bfSinceReset += s.Backfilled
	if s.BackfillDepth > 0 {
		e.bfCycles++
		e.bfLastWhen = now
		e.bfLastCycle = d
		e.bfMaxCycle = max(e.bfMaxCycle, d)
		e.bfTotalCycle += d
		e.bfLastDepth = s.BackfillDepth
		e.bfTotalDepth += int64(s.BackfillDepth)
		e.bfLastQueue = s.QueueLen
		e.bfTotalQueue += int64(s.QueueLen)
	}
}

// resetAtMidnight clears the counters at midnight UTC, as slurmctld does.
func (e *extState) resetAtMidnight(now time.Time) {
	if e.started.IsZero() {
		// The first observation may come after the first submissions (the
		// statistics start with the first scheduling cycle), so the job
		// counters start at the last midnight UTC rather than now: jobs
		// submitted just before the first cycle still count.
		e.started, e.reset = now, now.UTC().Truncate(24*time.Hour)
	}
	mid := now.UTC().Truncate(24 * time.Hour)
	if e.reset.Before(mid) {
		e.clear(mid)
	}
}

// clear resets the statistics (sdiag -r); totals since start stay.
func (e *extState) clear(at time.Time) {
	*e = extState{started: e.started, reset: at, bfTotalJobs: e.bfTotalJobs, steps: e.steps, nodes: e.nodes}
}

// registerAccounting adds the accounting and statistics endpoints to the client
// API (called from clientMux).
func (c *Controller) registerAccounting(mux *http.ServeMux) {
	mux.HandleFunc("GET "+api.PathAccounting, c.endpoint(func(ctx context.Context, w Who, _ *http.Request) (any, error) {
		return c.accounting(ctx, w)
	}))
	mux.HandleFunc("GET "+api.PathNodeUsage, c.endpoint(func(ctx context.Context, _ Who, r *http.Request) (any, error) {
		q := r.URL.Query()
		start, err1 := strconv.ParseInt(q.Get("start"), 10, 64)
		end, err2 := strconv.ParseInt(q.Get("end"), 10, 64)
		if err1 != nil || err2 != nil {
			return nil, &apiErr{status: http.StatusBadRequest, msg: "Invalid time specification"}
		}
		return c.nodeUsage(ctx, time.Unix(start, 0), time.Unix(end, 0))
	}))
	mux.HandleFunc("GET "+api.PathSdiag, c.endpoint(func(ctx context.Context, w Who, _ *http.Request) (any, error) {
		return c.sdiag(ctx, w)
	}))
	mux.HandleFunc("POST "+api.PathSdiag, c.endpoint(func(ctx context.Context, w Who, _ *http.Request) (any, error) {
		return c.do(ctx, func(ls *loopState) (any, error) {
			if !ls.isAdmin(w) {
				return nil, &apiErr{status: http.StatusForbidden, msg: sched.ErrAccessDenied.Error()}
			}
			ls.ext.resetAtMidnight(ls.c.now())
			ls.ext.clear(ls.c.now())
			c.rpc.reset()
			return struct{}{}, nil
		})
	}))
	mux.HandleFunc("POST "+api.PathSprio, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.SprioRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.do(ctx, func(ls *loopState) (any, error) { return ls.sprio(req) })
	}))
	mux.HandleFunc("POST "+api.PathSshare, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.SshareRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.do(ctx, func(ls *loopState) (any, error) { return ls.sshare(w, req) })
	}))
	mux.HandleFunc("POST "+api.PathSacctmgr, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.SacctmgrRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.sacctmgr(ctx, w, req)
	}))
	mux.HandleFunc("POST "+api.PathSteps, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.StepRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.step(ctx, w, req)
	}))
	mux.HandleFunc("POST "+api.PathSstat, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.SstatRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.sstat(ctx, w, req)
	}))
	mux.HandleFunc("POST "+api.PathListPids, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.ListPidsRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.listPids(ctx, req) // listpids.go
	}))
	c.registerStepRoutes(mux)     // steps on the allocated nodes: steps.go
	c.registerPartitionAdmin(mux) // scontrol create/update/delete partition: partition.go
}
