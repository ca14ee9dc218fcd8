package api

import (
	"context"
	"net/http"
)

// PathAgentEpilog takes a NodeEpilogRequest: the controller asks each node
// of an ended multi-node job other than its batch host to run slurm.conf's
// Epilog there (the batch host runs it after the batch script), as
// slurmctld's job termination request makes every slurmd of the job run it.
const PathAgentEpilog = "/agent/v1/epilog"

// NodeEpilogRequest is a job's end as one of its other nodes needs it for
// the Epilog's environment.
type NodeEpilogRequest struct {
	Job    LaunchRequest `json:"job"`
	Status JobStatus     `json:"status"`
}

// NodeEpilogResult says whether the Epilog failed (the controller then
// drains the node, "Epilog error").
type NodeEpilogResult struct {
	Failed bool   `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
}

// RunEpilog runs the Epilog of an ended job on the agent's node and waits
// for it.
func (a *AgentClient) RunEpilog(ctx context.Context, req NodeEpilogRequest) (NodeEpilogResult, error) {
	var r NodeEpilogResult
	return r, a.c.call(ctx, http.MethodPost, PathAgentEpilog, req, &r)
}
