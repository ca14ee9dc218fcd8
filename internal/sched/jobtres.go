package sched

import "time"

// requestTRES fills out (Policy.TRES order) with what j asks for in
// partition part before it has an allocation (Slurm's tres_req_cnt), and
// perNode with the most of each TRES on one node. An exclusive job or one
// with the whole node's memory counts the partition's largest node.
func requestTRES(cl *Cluster, cfg *Config, p *Policy, j *Job, part int32, out, perNode []int64) {
	clear(out)
	clear(perNode)
	pt := &cl.Partitions[part]
	s := jobShape(cfg, j, pt)
	nodes := int64(s.minNodes)
	cpus := int64(max(s.tasks*s.cpusPerTask, s.minCPUsPerNode*s.minNodes))
	cpn := (cpus + nodes - 1) / nodes
	big := largestNode(cl, pt)
	if s.exclusive && big != nil {
		cpn = int64(big.CPUs)
		cpus = cpn * nodes
	}
	var mpn int64
	switch {
	case s.memPerNode < 0:
		if big != nil {
			mpn = big.RealMemory
		}
	case s.memPerNode > 0:
		mpn = s.memPerNode
	default:
		mpn = s.memPerCPU * cpn
	}
	set2(out, perNode, tresCPU, cpus, cpn)
	set2(out, perNode, tresMem, mpn*nodes, mpn)
	set2(out, perNode, tresNode, nodes, 1)
	set2(out, perNode, tresBilling, cpus, cpn)
	for _, g := range s.gres {
		addGres(p, out, perNode, g.Name, g.Type, g.Count*nodes, g.Count)
	}
	if j.Req.GPUs > 0 {
		addGres(p, out, perNode, "gpu", j.Req.GPUsType, j.Req.GPUs, s.gpusPerNode)
	} else if s.gpusPerNode > 0 { // --gpus-per-task
		addGres(p, out, perNode, "gpu", s.gpusType, s.gpusPerNode*nodes, s.gpusPerNode)
	}
	addLicenseTRES(p, j, out) // license/NAME (license.go)
}

func set2(out, perNode []int64, i int, v, pn int64) {
	out[i], perNode[i] = v, pn
}

func addGres(p *Policy, out, perNode []int64, name, typ string, total, pn int64) {
	if i := p.tresIdx("gres/" + name); i >= 0 {
		out[i] += total
		perNode[i] += pn
	}
	if typ != "" {
		if i := p.tresIdx("gres/" + name + ":" + typ); i >= 0 {
			out[i] += total
			perNode[i] += pn
		}
	}
}

// largestNode returns the partition's node with the most CPUs (nil if the
// partition is empty).
func largestNode(cl *Cluster, pt *Partition) *Node {
	var big *Node
	for _, ni := range pt.NodeList {
		if n := &cl.Nodes[ni]; big == nil || n.CPUs > big.CPUs || n.CPUs == big.CPUs && n.RealMemory > big.RealMemory {
			big = n
		}
	}
	return big
}

// allocTRES fills out with the TRES an allocation holds.
func allocTRES(cl *Cluster, p *Policy, al *Alloc, out []int64) {
	clear(out)
	// sums in registers: accumulating in out (which the compiler must
	// assume aliases al's slices) chained a load and a store per node
	var cpus, mem int64
	for s, c := range al.CPUs[:len(al.Nodes)] {
		cpus += int64(c)
		mem += al.Mem[s]
	}
	out[tresCPU], out[tresMem], out[tresBilling] = cpus, mem, cpus
	out[tresNode] = int64(len(al.Nodes))
	for _, g := range al.Gres {
		k := cl.GresKinds[g.Kind]
		if i := p.tresIdx("gres/" + k.Name); i >= 0 {
			out[i] += g.Count
		}
		if k.Type != "" {
			if i := p.tresIdx(k.TRESName()); i >= 0 {
				out[i] += g.Count
			}
		}
	}
}

// jobTRES returns the TRES j counts against limits in partition part:
// its allocation when al is given, else its request.
func (c *Cycle) jobTRES(j *Job, part int32, al *Alloc) []int64 {
	p := c.State.Policy
	out := make([]int64, len(p.TRES))
	if al != nil && len(al.Nodes) > 0 {
		allocTRES(c.Cluster, p, al, out)
		addLicenseTRES(p, j, out) // license/NAME (license.go)
		return out
	}
	requestTRES(c.Cluster, c.Config, p, j, part, out, make([]int64, len(p.TRES)))
	return out
}

// partQOS returns the index of partition part's QOS, or -1.
func partQOS(p *Policy, cl *Cluster, part int32) int32 {
	if part < 0 || cl.Partitions[part].QOS == "" {
		return -1
	}
	return p.QOSIndex(cl.Partitions[part].QOS)
}

// jobQOSList returns the QOS whose limits apply to j in part, in
// precedence order (-1 entries are absent).
func (c *Cycle) jobQOSList(j *Job, part int32) [2]int32 {
	p := c.State.Policy
	return orderedQOS(p, j.qos, partQOS(p, c.Cluster, part))
}

// assocFor returns the association j bills in partition part: a
// partition-specific association of the user if one exists, else the one
// resolved at submission.
func (j *Job) assocFor(p *Policy, cl *Cluster, part int32) int32 {
	if part >= 0 && p.partAssocs {
		if a, ok := p.assocKey[assocKey{j.Account, j.User, cl.Partitions[part].Name}]; ok {
			return a
		}
	}
	return j.assoc
}

// LimitReason returns the accounting-limit reason keeping rec from
// starting now, counting the jobs started earlier in this cycle, or "".
// Limits apply only with AccountingStorageEnforce=limits.
func (c *Cycle) LimitReason(rec *QueueRec) Reason {
	p := c.State.Policy
	if p == nil || c.Config.Enforce&(EnforceLimits|EnforceSafe) == 0 {
		return ""
	}
	j := rec.Job
	if len(c.limReq) != len(p.TRES) {
		c.limReq = make([]int64, len(p.TRES))
		c.limPerNode = make([]int64, len(p.TRES))
	}
	requestTRES(c.Cluster, c.Config, p, j, rec.Part, c.limReq, c.limPerNode)
	lc := limitCheck{p: p, use: &c.use.usage, qos: c.jobQOSList(j, rec.Part), assoc: j.assocFor(p, c.Cluster, rec.Part),
		user: j.User, account: j.Account, req: c.limReq, perNode: c.limPerNode, wall: c.TimeLimit(j, rec.Part), tasks: 1,
		safe: c.Config.Enforce&EnforceSafe != 0}
	return lc.runnable()
}

// TimeLimit returns the time limit j runs with in partition part: its
// --time, else the partition's DefaultTime, else the partition's MaxTime
// capped by the QOS/association MaxWall (SEMANTICS §5.3, inc21.30.17).
func (c *Cycle) TimeLimit(j *Job, part int32) time.Duration {
	return effectiveTimeLimit(c.State.Policy, c.Cluster, j, part)
}

func effectiveTimeLimit(p *Policy, cl *Cluster, j *Job, part int32) time.Duration {
	if j.Req.TimeLimit != 0 {
		return j.Req.TimeLimit
	}
	if part < 0 {
		return Infinite
	}
	pt := &cl.Partitions[part]
	if pt.DefaultTime > 0 {
		return pt.DefaultTime
	}
	limit := pt.MaxTime
	if limit == 0 {
		limit = Infinite
	}
	if p != nil {
		for _, q := range orderedQOS(p, j.qos, partQOS(p, cl, part)) {
			if q >= 0 && p.QOS[q].MaxWall >= 0 {
				return min(limit, p.QOS[q].MaxWall)
			}
		}
		if a := j.assocFor(p, cl, part); a >= 0 && p.Assocs[a].MaxWall >= 0 {
			return min(limit, p.Assocs[a].MaxWall)
		}
	}
	return limit
}
