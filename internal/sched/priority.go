package sched

import (
	"time"

	"github.com/sluice-hpc/sluice/internal/priority"
)

// Prioritizer recomputes job priorities with internal/priority's
// multifactor calculator: one priority.Job per (job, partition) record,
// as Slurm keeps one priority per partition of a multi-partition job. The
// records are kept between passes so a pass allocates only for new jobs.
// Drivers call Update every PriorityCalcPeriod and after submissions.
type Prioritizer struct {
	Calc *priority.Calculator
	Tree *priority.Tree
	recs map[JobID][]*priority.Job
}

// NewPrioritizer returns a Prioritizer over calc and its fair-share tree.
func NewPrioritizer(calc *priority.Calculator, tree *priority.Tree) *Prioritizer {
	return &Prioritizer{Calc: calc, Tree: tree, recs: map[JobID][]*priority.Job{}}
}

// Update sets Priority and PartPriority of every pending job at now. Held
// jobs get priority 0 (Slurm's representation of a hold) and jobs whose
// priority an operator set keep it.
func (pz *Prioritizer) Update(st *State, now time.Time) {
	st.OrderChanged()
	live := make(map[JobID]bool, len(pz.recs))
	for _, j := range st.jobList {
		if j.State.Base() != JobPending {
			continue
		}
		live[j.ID] = true
		if j.Hold != HoldNone {
			j.Priority = 0
			continue
		}
		if j.DirectPriority {
			continue
		}
		recs := pz.records(j)
		if cap(j.PartPriority) < len(j.Partitions) {
			j.PartPriority = make([]uint32, len(j.Partitions))
		}
		j.PartPriority = j.PartPriority[:len(j.Partitions)]
		for i, part := range j.Partitions {
			st.PriorityJob(j, part, pz.Tree, recs[i])
			j.PartPriority[i] = pz.Calc.Priority(recs[i], now)
		}
		j.Priority = j.PartPriority[0]
	}
	for id := range pz.recs {
		if !live[id] {
			delete(pz.recs, id)
		}
	}
}

func (pz *Prioritizer) records(j *Job) []*priority.Job {
	recs := pz.recs[j.ID]
	for len(recs) < len(j.Partitions) {
		recs = append(recs, &priority.Job{TRES: map[string]int64{}})
	}
	pz.recs[j.ID] = recs
	return recs
}

// PriorityJob fills out with what the multifactor plugin needs of j in
// partition part (tree may be nil: no association).
func (st *State) PriorityJob(j *Job, part int32, tree *priority.Tree, out *priority.Job) {
	pt := &st.Cluster.Partitions[part]
	s := jobShape(&st.Config, j, pt)
	*out = priority.Job{ID: uint32(j.ID), User: j.User, Account: j.Account, Partition: pt.Name, QOS: j.QOS,
		Assoc: priority.NoAssoc, Nodes: uint32(s.minNodes), CPUs: uint32(max(s.tasks*s.cpusPerTask, s.minCPUsPerNode*s.minNodes)),
		AccrueTime: j.AccrueTime, EligibleTime: j.EligibleTime, Nice: j.Req.Nice, Priority: j.Priority,
		Held: j.Hold != HoldNone, Running: isActive(j), TRES: out.TRES}
	if tree != nil {
		if a, ok := tree.LookupJob(j.Account, j.User, pt.Name); ok {
			out.Assoc = a
		}
	}
	if j.Req.TimeLimit != Infinite {
		out.TimeLimit = j.Req.TimeLimit
	}
	if j.DirectPriority {
		out.DirectPriority = j.Priority
	}
	if out.TRES == nil {
		out.TRES = map[string]int64{}
	}
	clear(out.TRES)
	st.tresMap(j, part, &s, out.TRES)
	for _, l := range j.Req.Licenses { // license/NAME: PriorityWeightTRES=license/matlab=...
		out.TRES["license/"+l.Name] += l.Count
	}
}

// tresMap fills m with j's TRES by name: its allocation if it has one,
// else its request in partition part.
func (st *State) tresMap(j *Job, part int32, s *shape, m map[string]int64) {
	cl := st.Cluster
	if len(j.Alloc.Nodes) > 0 {
		for i := range j.Alloc.Nodes {
			m["cpu"] += int64(j.Alloc.CPUs[i])
			m["mem"] += j.Alloc.Mem[i]
		}
		m["node"] = int64(len(j.Alloc.Nodes))
		for _, g := range j.Alloc.Gres {
			addGresTRES(m, cl.GresKinds[g.Kind], g.Count)
		}
		return
	}
	nodes := int64(s.minNodes)
	cpus := int64(max(s.tasks*s.cpusPerTask, s.minCPUsPerNode*s.minNodes))
	m["cpu"], m["node"] = cpus, nodes
	switch {
	case s.memPerNode > 0:
		m["mem"] = s.memPerNode * nodes
	case s.memPerCPU > 0:
		m["mem"] = s.memPerCPU * cpus
	}
	for _, g := range s.gres {
		addGresTRES(m, GresKind{Name: g.Name, Type: g.Type}, g.Count*nodes)
	}
	if j.Req.GPUs > 0 {
		addGresTRES(m, GresKind{Name: "gpu", Type: j.Req.GPUsType}, j.Req.GPUs)
	} else if s.gpusPerNode > 0 { // --gpus-per-task
		addGresTRES(m, GresKind{Name: "gpu", Type: s.gpusType}, s.gpusPerNode*nodes)
	}
}
