package ctld

import (
	"context"
	"net/http"
	"strconv"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// squeue -s: the running steps of running jobs, each batch job's batch
// step first among its own as slurmctld lists them (a salloc or srun
// allocation has none), then its srun steps.

func (c *Controller) registerStepList(mux *http.ServeMux) {
	mux.HandleFunc("GET "+api.PathStepList, c.endpoint(func(ctx context.Context, _ Who, _ *http.Request) (any, error) {
		return c.do(ctx, func(ls *loopState) (any, error) { return ls.stepList(), nil })
	}))
}

func (ls *loopState) stepList() api.StepsResponse {
	out := api.StepsResponse{Now: ls.c.now()}
	for _, j := range ls.st.Jobs() {
		if j.State.Base() != sched.JobRunning && j.State.Base() != sched.JobSuspended {
			continue
		}
		base := api.StepInfo{JobID: uint32(j.ID), JobIDStr: j.JobIDString(), Partition: ls.partitionName(j), User: j.User,
			UID: j.UID, TimeLimitSec: api.TimeInfinite, State: "RUNNING"}
		if !ls.isAllocation(j) {
			b := base
			b.Step, b.Name, b.Start, b.NTasks = "batch", "batch", j.StartTime, 1
			if h := batchHost(j.Alloc.Nodes); h >= 0 {
				b.NodeList = ls.st.Cluster.Nodes[h].Name
			}
			out.Steps = append(out.Steps, b)
		}
		for _, s := range ls.ext.steps[j.ID] {
			if s.State != "RUNNING" {
				continue
			}
			st := base
			st.Step, st.Name, st.Start, st.NTasks, st.NodeList = strconv.Itoa(s.StepID), s.Name, s.Start, s.NTasks, s.NodeList
			out.Steps = append(out.Steps, st)
		}
	}
	return out
}
