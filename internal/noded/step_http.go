package noded

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// registerSteps adds the agent endpoints that run job steps (srun inside an
// allocation) on this node, as slurmd launches steps for srun. They sit
// behind the cluster-key check like every agent endpoint: the controller
// signs its calls, srun presents the step credential the controller signed
// for its one I/O request.
func (a *Agent) registerSteps(mux *http.ServeMux) {
	mux.HandleFunc("POST "+api.PathAgentSteps, func(w http.ResponseWriter, r *http.Request) {
		var req api.AgentStepLaunch
		if err := api.DecodeAgentRequest(r, &req); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		stepReply(w)(a.LaunchStep(req))
	})
	mux.HandleFunc("GET "+api.PathAgentStepIO, withStep(a, a.serveStepIO))
	mux.HandleFunc("GET "+api.PathAgentStepAttach, withStep(a, a.serveStepAttach)) // sattach.go
	mux.HandleFunc("GET "+api.PathAgentStepWait, withStep(a, func(w http.ResponseWriter, r *http.Request, s *stepRun) {
		wait, _ := strconv.Atoi(r.URL.Query().Get("wait"))
		wait = min(max(wait, 0), 25)
		select {
		case <-s.done:
		case <-r.Context().Done():
		case <-time.After(time.Duration(wait) * time.Second):
		}
		api.WriteAgentJSON(w, http.StatusOK, s.snapshot())
	}))
	mux.HandleFunc("POST "+api.PathAgentStepSignal, withStep(a, func(w http.ResponseWriter, r *http.Request, s *stepRun) {
		var req api.StepSignalRequest
		if err := api.DecodeAgentRequest(r, &req); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		switch {
		case req.Kill:
			state := req.State
			if state == "" {
				state = api.StateCancelled
			}
			s.terminate(state, req.Message, "killed by the controller")
		case req.Signal > 0 && req.Signal < 65:
			s.signal(syscall.Signal(req.Signal))
		default:
			api.WriteAgentError(w, http.StatusBadRequest, fmt.Sprintf("invalid signal %d", req.Signal))
			return
		}
		api.WriteAgentJSON(w, http.StatusOK, s.snapshot())
	}))
}

// withStep resolves {job} and {step} to a step of this agent.
func withStep(a *Agent, h func(http.ResponseWriter, *http.Request, *stepRun)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		job, err1 := strconv.ParseUint(r.PathValue("job"), 10, 32)
		step, err2 := strconv.Atoi(r.PathValue("step"))
		if err1 != nil || err2 != nil || job == 0 || step < 0 {
			api.WriteAgentError(w, http.StatusBadRequest, fmt.Sprintf("invalid step id %s.%s", r.PathValue("job"), r.PathValue("step")))
			return
		}
		s, err := a.step(uint32(job), step)
		if err != nil {
			api.WriteAgentError(w, httpStatus(err), err.Error())
			return
		}
		h(w, r, s)
	}
}

// serveStepIO turns srun's request into the step's framed I/O stream (an
// HTTP/1.1 upgrade) and runs the tasks over it.
func (a *Agent) serveStepIO(w http.ResponseWriter, r *http.Request, s *stepRun) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), api.StepIOProtocol) {
		api.WriteAgentError(w, http.StatusBadRequest, "step I/O needs Upgrade: "+api.StepIOProtocol)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		api.WriteAgentError(w, http.StatusInternalServerError, "step I/O needs an HTTP/1.1 connection")
		return
	}
	if err := s.claim(); err != nil {
		api.WriteAgentError(w, httpStatus(err), err.Error())
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		s.terminate(api.StateFailed, "-", "I/O connection: "+err.Error())
		return
	}
	conn.SetDeadline(time.Time{})
	brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + api.StepIOProtocol + "\r\n\r\n")
	if err := brw.Flush(); err != nil {
		conn.Close()
		s.terminate(api.StateFailed, "-", "I/O connection: "+err.Error())
		return
	}
	s.serveIO(conn, brw.Reader)
}

// stepReply writes a step result or the error's HTTP form.
func stepReply(w http.ResponseWriter) func(api.StepNodeResult, error) {
	return func(res api.StepNodeResult, err error) {
		if err != nil {
			api.WriteAgentError(w, httpStatus(err), err.Error())
			return
		}
		api.WriteAgentJSON(w, http.StatusOK, res)
	}
}
