package ctld

import (
	"context"
	"net/http"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// registerAttachRoute adds sattach's endpoint: the nodes of a running step,
// each with a credential for its one attach request.
func (c *Controller) registerAttachRoute(mux *http.ServeMux) {
	mux.HandleFunc("POST "+api.PathStepAttach, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.StepAttachRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.attachStep(ctx, w, req)
	}))
}

// attachStep answers sattach: the step must exist and run, the caller
// must own the job (or be an operator). Slurm answers an unknown job or
// step alike ("Invalid job id specified").
func (c *Controller) attachStep(ctx context.Context, w Who, req api.StepAttachRequest) (api.StepAttachResponse, error) {
	steps, err := c.loadSteps(ctx)
	if err != nil {
		return api.StepAttachResponse{}, err
	}
	var rec *stepRec
	for i := range steps {
		if steps[i].JobID == req.JobID && steps[i].StepID == req.StepID {
			rec = &steps[i]
		}
	}
	if rec == nil {
		return api.StepAttachResponse{}, notFound()
	}
	res, err := c.do(ctx, func(ls *loopState) (any, error) {
		j := ls.st.Job(sched.JobID(req.JobID))
		if j == nil {
			return nil, notFound()
		}
		if !ls.mayModify(w, j) {
			return nil, denied()
		}
		names, _ := hostlist.Expand(rec.NodeList)
		var nodes []api.StepNodeIO
		for k, name := range names {
			if i := ls.st.Cluster.NodeIndex(name); i >= 0 {
				nodes = append(nodes, api.StepNodeIO{Node: name, NodeID: k, URL: ls.nodes[i].info.Addr})
			}
		}
		return nodes, nil
	})
	if err != nil {
		return api.StepAttachResponse{}, err
	}
	out := api.StepAttachResponse{Running: rec.State == "RUNNING" && rec.End.IsZero(),
		StepLaunchResponse: api.StepLaunchResponse{JobID: rec.JobID, StepID: rec.StepID, NodeList: rec.NodeList,
			NTasks: rec.NTasks, Nodes: res.([]api.StepNodeIO), CA: c.CACertPEM()}}
	now := time.Now() // agents check credentials against their own clock
	for i := range out.Nodes {
		out.Nodes[i].Credential = api.SignStepAttach(c.clusterKey, rec.JobID, rec.StepID, now)
	}
	return out, nil
}
