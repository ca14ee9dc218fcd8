package noded

// The processes of the steps running on this node, which scontrol
// listpids prints (Slurm asks each slurmstepd for the pids of its step's
// container). A step's processes here are its tasks' process trees: each
// task's leader (the batch script, or an srun task) with its rank, then
// the leader's descendants and the other members of its process group,
// which are not tasks (Slurm prints "-" for their ranks).

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Pids lists the processes of every batch script and step task running on
// the node, by job and then step (the batch step first).
func (a *Agent) Pids() []api.StepPids {
	table := procTable()
	out := a.batchPids(table)
	for _, r := range a.runningSteps() {
		if sp := r.pids(table); len(sp.Pids) > 0 {
			out = append(out, sp)
		}
	}
	slices.SortStableFunc(out, func(x, y api.StepPids) int {
		if x.JobID != y.JobID {
			return cmpUint(x.JobID, y.JobID)
		}
		return stepOrder(x.Step) - stepOrder(y.Step)
	})
	return out
}

func cmpUint(x, y uint32) int {
	if x < y {
		return -1
	}
	return 1
}

// stepOrder puts the batch step before the numbered steps.
func stepOrder(step string) int {
	n, err := strconv.Atoi(step)
	if err != nil {
		return -1
	}
	return n
}

// batchPids is the batch scripts' processes. An salloc or srun
// allocation's holder process is no batch step (Slurm has none for it).
func (a *Agent) batchPids(table map[int]procUsage) []api.StepPids {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []api.StepPids
	for id, j := range a.jobs {
		r := &j.rec
		if r.PID <= 0 || (r.State != api.StateRunning && r.State != api.StateSuspended) ||
			strings.Contains(r.Req.Script, api.AllocationMarker) {
			continue
		}
		if pids := taskPids(table, r.PID, 0, 0); len(pids) > 0 {
			out = append(out, api.StepPids{JobID: id, Step: "batch", Pids: pids})
		}
	}
	return out
}

// runningSteps is the node's steps that have not ended.
func (a *Agent) runningSteps() []*stepRun {
	t := a.steps()
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*stepRun
	for _, r := range t.steps {
		out = append(out, r)
	}
	return out
}

// pids is the processes of the step's running tasks on this node, in
// task order.
func (r *stepRun) pids(table map[int]procUsage) api.StepPids {
	r.mu.Lock()
	defer r.mu.Unlock()
	sp := api.StepPids{JobID: r.key.job, Step: strconv.Itoa(r.key.step)}
	if r.result.Done {
		return sp
	}
	for _, t := range r.tasks {
		if t.pgid > 0 && !t.ended {
			sp.Pids = append(sp.Pids, taskPids(table, t.pgid, t.local, t.id)...)
		}
	}
	return sp
}

// taskPids is a task's processes: its leader with its ranks first, then
// its descendants and the rest of its process group by pid, ranked -1.
// Nothing when the leader is gone.
func taskPids(table map[int]procUsage, leader, local, global int) []api.StepPid {
	if _, ok := table[leader]; !ok {
		return nil
	}
	members := map[int]bool{leader: true}
	children := map[int][]int{}
	for pid, p := range table {
		children[p.ppid] = append(children[p.ppid], pid)
		if p.pgrp == leader {
			members[pid] = true
		}
	}
	for queue := []int{leader}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			members[c] = true
			queue = append(queue, c)
		}
	}
	rest := make([]int, 0, len(members)-1)
	for pid := range members {
		if pid != leader {
			rest = append(rest, pid)
		}
	}
	slices.Sort(rest)
	out := []api.StepPid{{PID: leader, Local: local, Global: global}}
	for _, pid := range rest {
		out = append(out, api.StepPid{PID: pid, Local: -1, Global: -1})
	}
	return out
}
