package api

import (
	"context"
	"net/http"
)

// StepPid is one process of a step on a node, as scontrol listpids prints
// it: Local and Global are the task's node-local and job-wide ranks, -1
// for a process that is not a task (a task's children, srun inside a
// batch script), which Slurm prints as "-".
type StepPid struct {
	PID    int `json:"pid"`
	Local  int `json:"local"`
	Global int `json:"global"`
}

// StepPids is the processes of one step on a node: Step is "batch" or
// the step number.
type StepPids struct {
	JobID uint32    `json:"job_id"`
	Step  string    `json:"step"`
	Pids  []StepPid `json:"pids"`
}

// PathAgentPids answers GET with the []StepPids of every step running on
// the agent's node (slurmstepd's list of a step's pids).
const PathAgentPids = "/agent/v1/pids"

// Pids lists the processes of the steps running on the agent's node.
func (a *AgentClient) Pids(ctx context.Context) ([]StepPids, error) {
	var s []StepPids
	return s, a.c.call(ctx, http.MethodGet, PathAgentPids, nil, &s)
}

// PathListPids takes a ListPidsRequest and answers a ListPidsResponse:
// the controller asks the node's agent (scontrol listpids).
const PathListPids = "/v1/ext/listpids"

// ListPidsRequest names the node whose steps are listed: Node, or when
// it is empty the node whose NodeName or NodeHostname is Host (the
// client's host, as Slurm's scontrol asks the slurmd of its own host).
type ListPidsRequest struct {
	Node string `json:"node,omitempty"`
	Host string `json:"host,omitempty"`
}

// ListPidsResponse is the node's running steps. Node is the node asked
// ("" when Host named none); Error says why its agent could not answer
// (the steps are then empty, as for a node with none).
type ListPidsResponse struct {
	Node  string     `json:"node,omitempty"`
	Steps []StepPids `json:"steps"`
	Error string     `json:"error,omitempty"`
}

// ListPids returns the processes of the steps running on a node.
func (c *Client) ListPids(ctx context.Context, req ListPidsRequest) (ListPidsResponse, error) {
	var r ListPidsResponse
	return r, c.call(ctx, http.MethodPost, PathListPids, req, &r)
}
