package ctld

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// scontrol's administration requests about one job or the daemon:
// write batch_script, notify (OpNotify in jobs.go) and setdebug. Messages
// and who may do what were checked on Slurm 24.11 (scenarios
// scontrol-admin-misc and scontrol-steps-script).

func (c *Controller) registerAdminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+api.PathJobScript, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		id := r.URL.Query().Get("id")
		return c.do(ctx, func(ls *loopState) (any, error) { return ls.jobScript(w, id) })
	}))
	mux.HandleFunc("POST "+api.PathSetDebug, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.SetDebugRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.do(ctx, func(ls *loopState) (any, error) { return nil, ls.setDebug(w, req.Level) })
	}))
}

// jobScript returns job id's batch script to its owner or an operator;
// anyone else gets Slurm's "Invalid user id".
func (ls *loopState) jobScript(w Who, id string) (api.JobScriptResponse, error) {
	js, _, err := ls.jobsByID(id)
	if err != nil || len(js) == 0 {
		return api.JobScriptResponse{}, notFound()
	}
	j := js[0]
	if !ls.mayModify(w, j) {
		return api.JobScriptResponse{}, invalidUser()
	}
	s := ls.specFor(j)
	if s == nil || s.Script == "" {
		// salloc and srun allocations have no script (the text is
		// Sluice's: not checked on Slurm)
		return api.JobScriptResponse{}, &apiErr{status: http.StatusNotFound, msg: "No batch script for job " + j.JobIDString()}
	}
	return api.JobScriptResponse{Script: s.Script}, nil
}

// invalidUser is Slurm's ESLURM_USER_ID_MISSING text, answered to a user
// asking for another's job script or notifying another's job.
func invalidUser() error { return &apiErr{status: http.StatusForbidden, msg: "Invalid user id"} }

// setDebug sets the controller's log level (operators): quiet, fatal and
// error log errors only, info and verbose informational messages, debug
// and beyond everything.
func (ls *loopState) setDebug(w Who, level string) error {
	if !ls.isAdmin(w) {
		return &apiErr{status: http.StatusForbidden, msg: "Permission denied"}
	}
	n := slices.Index(api.DebugLevels, level)
	if v, err := strconv.Atoi(level); err == nil && v >= 0 && v < len(api.DebugLevels) {
		n = v
	}
	if n < 0 {
		return &apiErr{status: http.StatusBadRequest, msg: "invalid debug level: " + level}
	}
	lv := ls.c.opts.LogLevel
	if lv == nil {
		return nil // a logger the controller does not own (tests)
	}
	switch {
	case n <= 2:
		lv.Set(slog.LevelError)
	case n <= 4:
		lv.Set(slog.LevelInfo)
	default:
		lv.Set(slog.LevelDebug)
	}
	ls.c.log.Info("debug level set", "level", api.DebugLevels[n], "by", w.User)
	return nil
}

// notifyCheck is scontrol notify's test: the job exists (checked by the
// caller) and belongs to the caller or an operator calls. Slurm hands the
// message to the job's srun or salloc, which print it; Sluice's do not
// receive it (docs/differences.md, scontrol).
func (ls *loopState) notifyCheck(w Who, j *sched.Job) error {
	if !ls.mayModify(w, j) {
		return invalidUser()
	}
	return nil
}
