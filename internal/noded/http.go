package noded

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Handler is the agent's API for the controller (paths api.PathAgent*),
// behind cluster-key signature verification.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	a.registerSteps(mux)      // job steps launched on this node (srun inside an allocation): step_http.go
	a.registerNodeEpilog(mux) // prolog.go
	mux.HandleFunc("GET "+api.PathAgentNode, func(w http.ResponseWriter, r *http.Request) {
		api.WriteAgentJSON(w, http.StatusOK, a.Info())
	})
	mux.HandleFunc("GET "+api.PathAgentJobs, func(w http.ResponseWriter, r *http.Request) {
		api.WriteAgentJSON(w, http.StatusOK, a.Jobs())
	})
	mux.HandleFunc("GET "+api.PathAgentPids, func(w http.ResponseWriter, r *http.Request) {
		api.WriteAgentJSON(w, http.StatusOK, a.Pids()) // scontrol listpids: pids.go
	})
	mux.HandleFunc("POST "+api.PathAgentJobs, func(w http.ResponseWriter, r *http.Request) {
		var req api.LaunchRequest
		if err := api.DecodeAgentRequest(r, &req); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		reply(w)(a.Launch(req))
	})
	mux.HandleFunc("POST "+api.PathAgentLaunches, func(w http.ResponseWriter, r *http.Request) {
		var b api.LaunchBatch
		if err := api.DecodeAgentRequest(r, &b); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		api.WriteAgentJSON(w, http.StatusOK, api.LaunchBatchResponse{Results: a.LaunchBatch(b.Jobs)})
	})
	mux.HandleFunc("GET "+api.PathAgentJob, withID(func(w http.ResponseWriter, r *http.Request, id uint32) {
		reply(w)(a.Job(id))
	}))
	mux.HandleFunc("GET "+api.PathAgentUsage, withID(func(w http.ResponseWriter, r *http.Request, id uint32) {
		var u api.Usage
		var err error
		if s := r.PathValue("step"); s == "batch" {
			u, err = a.JobUsage(id)
		} else if n, perr := strconv.Atoi(s); perr == nil && n >= 0 {
			u, err = a.StepUsage(id, n)
		} else {
			err = fmt.Errorf("invalid step %q: %w", s, ErrBadRequest)
		}
		if err != nil {
			api.WriteAgentError(w, httpStatus(err), err.Error())
			return
		}
		api.WriteAgentJSON(w, http.StatusOK, u)
	}))
	mux.HandleFunc("POST "+api.PathAgentSignal, withID(func(w http.ResponseWriter, r *http.Request, id uint32) {
		var req api.SignalRequest
		if err := api.DecodeAgentRequest(r, &req); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		reply(w)(a.Signal(id, req))
	}))
	mux.HandleFunc("POST "+api.PathAgentSuspend, withID(func(w http.ResponseWriter, r *http.Request, id uint32) {
		reply(w)(a.Suspend(id))
	}))
	mux.HandleFunc("POST "+api.PathAgentResume, withID(func(w http.ResponseWriter, r *http.Request, id uint32) {
		reply(w)(a.Resume(id))
	}))
	mux.HandleFunc("POST "+api.PathAgentTerminate, withID(func(w http.ResponseWriter, r *http.Request, id uint32) {
		var req api.TerminateRequest
		if err := api.DecodeAgentRequest(r, &req); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		reply(w)(a.Terminate(id, req))
	}))
	mux.HandleFunc("POST "+api.PathAgentTimeLimit, withID(func(w http.ResponseWriter, r *http.Request, id uint32) {
		var req api.TimeLimitRequest
		if err := api.DecodeAgentRequest(r, &req); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		reply(w)(a.SetTimeLimit(id, req))
	}))
	if a.tls == nil { // agenttls.go
		return api.RequireSignature(a.cfg.Key, nil, mux)
	}
	return api.RequireSignature(a.cfg.Key, nil, api.RequireAgentPeer(onlyController, agentPeerPolicy, mux))
}

func withID(h func(http.ResponseWriter, *http.Request, uint32)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseUint(r.PathValue("id"), 10, 32)
		if err != nil || id == 0 {
			api.WriteAgentError(w, http.StatusBadRequest, fmt.Sprintf("invalid job id %q", r.PathValue("id")))
			return
		}
		h(w, r, uint32(id))
	}
}

// reply writes a job status or the error's HTTP form.
func reply(w http.ResponseWriter) func(api.JobStatus, error) {
	return func(st api.JobStatus, err error) {
		if err != nil {
			api.WriteAgentError(w, httpStatus(err), err.Error())
			return
		}
		api.WriteAgentJSON(w, http.StatusOK, st)
	}
}

func httpStatus(err error) int {
	switch {
	case errors.Is(err, ErrUnknownJob):
		return http.StatusNotFound
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, ErrConflict):
		return http.StatusConflict
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}
