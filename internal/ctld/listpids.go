package ctld

import (
	"context"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// listPidsTimeout bounds the wait for the agent's process list.
const listPidsTimeout = 10 * time.Second

// listPids answers scontrol listpids: the processes of the steps running
// on one node, which its agent lists. Any user may ask, as in Slurm
// (oracle: bob lists the pids of alice's job). A node that is not in the
// configuration, or whose agent does not answer, has no steps.
func (c *Controller) listPids(ctx context.Context, req api.ListPidsRequest) (api.ListPidsResponse, error) {
	type target struct{ name, addr string }
	res, err := c.do(ctx, func(ls *loopState) (any, error) {
		name := req.Node
		if name == "" {
			name = ls.c.nodeOfHost(req.Host)
		}
		t := target{name: name}
		if i := ls.st.Cluster.NodeIndex(name); name != "" && i >= 0 {
			t.addr = ls.nodes[i].info.Addr
		}
		return t, nil
	})
	if err != nil {
		return api.ListPidsResponse{}, err
	}
	t := res.(target)
	out := api.ListPidsResponse{Node: t.name, Steps: []api.StepPids{}}
	if t.addr == "" {
		return out, nil
	}
	cctx, cancel := context.WithTimeout(ctx, listPidsTimeout)
	defer cancel()
	steps, err := c.agentClient(t.name, t.addr).Pids(cctx)
	if err != nil {
		out.Error = "node " + t.name + ": " + err.Error()
		return out, nil
	}
	if steps != nil {
		out.Steps = steps
	}
	return out, nil
}

// nodeOfHost is the first configured node whose NodeName or NodeHostname
// is host: the node whose slurmd runs on the client's host, as Slurm's
// scontrol finds it ("" when none).
func (c *Controller) nodeOfHost(host string) string {
	if host == "" {
		return ""
	}
	for _, n := range c.cfg.Nodes {
		if n.Name == host || n.Hostname == host {
			return n.Name
		}
	}
	return ""
}
