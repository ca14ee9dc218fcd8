package ctld

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/hostlist"
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
			if s.TimeLimitSec > 0 {
				st.TimeLimitSec = s.TimeLimitSec
			}
			st.CPUs, st.MemMB = ls.stepShare(j, s.NodeList)
			st.Dist, st.SrunHost, st.SrunPid = s.Dist, s.SrunHost, s.SrunPid
			if st.Dist == "" {
				st.Dist = stepDist("", s.NTasks, s.NodeList)
			}
			out.Steps = append(out.Steps, st)
		}
	}
	return out
}

// stepShare is what a step holds of job j's allocation: all its CPUs and
// memory on the step's nodes (oracle: srun -n1 in a -n2 job shows CPUs=2,
// TRES=cpu=2,mem=2000M,node=1).
func (ls *loopState) stepShare(j *sched.Job, nodeList string) (cpus int, mem int64) {
	names, err := hostlist.Expand(nodeList)
	if err != nil {
		return 0, 0
	}
	for s, ni := range j.Alloc.Nodes {
		if slices.Contains(names, ls.st.Cluster.Nodes[ni].Name) {
			cpus += int(j.Alloc.CPUs[s])
			mem += j.Alloc.Mem[s]
		}
	}
	return cpus, mem
}

// stepDist is a step's task distribution as scontrol show step prints it:
// the -m value's first word capitalised, else Slurm's default, cyclic
// when there are no more tasks than nodes, else block.
func stepDist(m string, ntasks int, nodeList string) string {
	m, _, _ = strings.Cut(m, ":")
	m, _, _ = strings.Cut(m, "=")
	if m == "" || m == "*" {
		m = "block"
		if names, err := hostlist.Expand(nodeList); err == nil && ntasks <= len(names) {
			m = "cyclic"
		}
	}
	return strings.ToUpper(m[:1]) + strings.ToLower(m[1:])
}
