package api

import (
	"context"
	"io"
	"net/http"
	"time"
)

// sattach: a client attaches to a running step's output. The controller
// checks that the caller may use the job and answers with the step's
// nodes, each with a credential for its one attach request; the agents
// replay the output they kept and mirror the rest of the step's stdout,
// stderr and task exits, then the Done frame, over the same framed stream
// as srun's I/O connection (read-only).
const (
	// PathStepAttach takes a StepAttachRequest and answers a
	// StepAttachResponse naming the step's nodes (Tasks left empty).
	PathStepAttach = "/v1/steps/attach"
	// PathAgentStepAttach is sattach's connection to one node (GET with
	// Upgrade: StepIOProtocol).
	PathAgentStepAttach = "/agent/v1/steps/{job}/{step}/attach"
	// StepAttachSender is the sender name inside an attach credential.
	StepAttachSender = "sattach"
)

// StepAttachRequest names the step sattach attaches to.
type StepAttachRequest struct {
	JobID  uint32 `json:"job_id"`
	StepID int    `json:"step_id"`
}

// SignStepAttach returns the credential of sattach's request to one
// agent: the cluster-key signature of that single GET.
func SignStepAttach(key []byte, job uint32, step int, now time.Time) string {
	req, _ := http.NewRequest(http.MethodGet, "http://agent"+StepPath(PathAgentStepAttach, job, step), nil)
	SignRequest(req, key, StepAttachSender, nil, now)
	return req.Header.Get(SignatureHeader)
}

// StepAttachResponse names a step's nodes; Running is false once the step
// ended (sattach then reports each node with no tasks running).
type StepAttachResponse struct {
	StepLaunchResponse
	Running bool `json:"running"`
}

// StepAttach asks the controller for the nodes of a step.
func (c *Client) StepAttach(ctx context.Context, req StepAttachRequest) (StepAttachResponse, error) {
	var r StepAttachResponse
	err := c.call(ctx, http.MethodPost, PathStepAttach, req, &r)
	r.withCA()
	return r, err
}

// DialStepAttach opens sattach's read-only stream to one node of a step
// (as DialStepIO, on the attach path).
func DialStepAttach(n StepNodeIO, job uint32, step int, timeout time.Duration) (io.ReadWriteCloser, error) {
	return dialStepStream(n, StepPath(PathAgentStepAttach, job, step), timeout, "step attach")
}
