package noded

import "net/http"

// registerSteps adds the agent endpoints that run job steps (srun inside an
// allocation) on this node, as slurmd launches steps for srun.
func (a *Agent) registerSteps(mux *http.ServeMux) {}
