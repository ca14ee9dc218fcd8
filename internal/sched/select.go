package sched

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// shape is a job's request normalised for one partition: what each node
// must give, how many nodes and tasks. It is computed per attempt, without
// allocating.
type shape struct {
	minNodes, maxNodes int32
	tasks              int32 // total tasks
	tasksPerNode       int32 // fixed tasks per node, 0 = flexible
	cpusPerTask        int32
	minCPUsPerNode     int32
	maxCPUsPerNode     int32 // partition MaxCPUsPerNode, 0 = none
	memPerCPU          int64 // MB per allocated CPU, 0 = not per CPU
	memPerNode         int64 // MB per node; -1 = the node's whole memory
	gres               []GresReq
	gpusPerNode        int64 // from --gpus spread over minNodes
	gpusJob            int64 // --gpus alone: the job's total, split over its nodes
	gpusType           string
	exclusive          bool
	share              int32  // OverSubscribe multiplier on CPUs (1 = none)
	exclUser           string // the job's user in an ExclusiveUser partition
}

// jobShape normalises j's request for partition p the way Slurm derives
// node and task counts: ntasks-per-node times nodes, one task per node at
// least, --mem / --mem-per-cpu with the partition's then the cluster's
// DefMemPerCPU/DefMemPerNode, and the whole node's memory when nothing
// sets it (Slurm's behaviour with DefMemPerNode unset).
func jobShape(cfg *Config, j *Job, p *Partition) shape {
	r := &j.Req
	s := shape{cpusPerTask: max(r.CPUsPerTask, 1), minCPUsPerNode: r.MinCPUsPerNode,
		tasksPerNode: r.NTasksPerNode, gres: r.Gres, exclusive: r.Exclusive, share: 1}
	s.minNodes, s.tasks = shapeTasks(r)
	switch {
	case r.MaxNodes > 0:
		s.maxNodes = max(r.MaxNodes, s.minNodes)
	case r.MinNodes > 0:
		s.maxNodes = s.minNodes
	default:
		s.maxNodes = s.tasks
	}
	if p.MaxNodes > 0 && s.maxNodes > p.MaxNodes && s.minNodes <= p.MaxNodes {
		s.maxNodes = p.MaxNodes
	}
	if p.MaxCPUsPerNode > 0 {
		s.maxCPUsPerNode = p.MaxCPUsPerNode
	}
	if r.GPUs > 0 {
		s.gpusPerNode = (r.GPUs + int64(s.minNodes) - 1) / int64(s.minNodes)
		s.gpusType = r.GPUsType
		if r.GPUsPerTask == 0 {
			s.gpusJob = r.GPUs
		}
	}
	if r.GPUsPerTask > 0 {
		// Tasks per node times GPUs per task: the fixed tasks per node, or
		// all tasks on one node for a one-node job.
		tpn := s.tasksPerNode
		if tpn == 0 {
			tpn = (s.tasks + s.minNodes - 1) / s.minNodes
			s.maxNodes = s.minNodes
		}
		s.gpusPerNode = max(s.gpusPerNode, int64(tpn)*r.GPUsPerTask)
		s.gpusType = r.GPUsType
	}
	s.memPerCPU, s.memPerNode = jobMemory(cfg, r, p)
	if gpn := s.gpusOnNode(); gpn > 0 {
		if r.CPUsPerGPU > 0 {
			s.minCPUsPerNode = max(s.minCPUsPerNode, int32(gpn)*r.CPUsPerGPU)
		}
		if r.MemPerGPU > 0 && !r.MemPerNodeSet && r.MemPerNode == 0 && r.MemPerCPU == 0 {
			s.memPerCPU, s.memPerNode = 0, gpn*r.MemPerGPU
		}
	}
	if p.ExclusiveUser {
		s.exclUser = j.User
	}
	if p.OverSubscribe.Mode == OverSubscribeExclusive {
		s.exclusive = true
	}
	s.share = shapeShare(r, p)
	return s
}

// shapeTasks returns the fewest nodes and the tasks of request r: its
// ntasks-per-node times nodes, one task per node at least.
func shapeTasks(r *Request) (minNodes, tasks int32) {
	minNodes, tasks = max(r.MinNodes, 1), r.NTasks
	if tpn := r.NTasksPerNode; tpn > 0 {
		if tasks <= 0 {
			tasks = tpn * minNodes
		}
		minNodes = max(minNodes, (tasks+tpn-1)/tpn)
	}
	return minNodes, max(tasks, minNodes, 1)
}

// shapeShare returns the OverSubscribe multiplier on CPUs of request r in
// partition p (1 = none).
func shapeShare(r *Request, p *Partition) int32 {
	switch p.OverSubscribe.Mode {
	case OverSubscribeForce:
		return p.OverSubscribe.Count
	case OverSubscribeYes:
		if r.OverSubscribe {
			return p.OverSubscribe.Count
		}
	}
	return 1
}

// cpuFloor is the fewest CPUs selection ever gives request r in partition
// p (tasks times cpus-per-task, see cpusFor), 0 in a partition that
// oversubscribes its CPUs; without computing the whole shape.
func cpuFloor(r *Request, p *Partition) int64 {
	if shapeShare(r, p) > 1 {
		return 0
	}
	_, tasks := shapeTasks(r)
	return int64(max(tasks*max(r.CPUsPerTask, 1), 1))
}

// gpusOnNode returns the GPUs the job holds on each node (--gpus-per-node,
// --gres=gpu, --gpus spread, --gpus-per-task).
func (s *shape) gpusOnNode() int64 {
	n := s.gpusPerNode
	for _, g := range s.gres {
		if g.Name == "gpu" {
			n += g.Count
		}
	}
	return n
}

// JobMemory is the memory j asks for in partition p as Slurm records it
// at submission (ReqTRES mem, MinMemoryCPU/MinMemoryNode): --mem or
// --mem-per-cpu, else the partition's then the cluster's DefMemPerCPU or
// DefMemPerNode. Per node -1 means all of each node's memory.
func JobMemory(cfg *Config, j *Job, p *Partition) (perCPU, perNode int64) {
	return jobMemory(cfg, &j.Req, p)
}

// JobTasks is j's node and task counts as Slurm derives them at
// submission (scontrol NumTasks): -n, else --ntasks-per-node times the
// nodes, at least one task per node.
func JobTasks(j *Job) (minNodes, tasks int32) { return shapeTasks(&j.Req) }

// jobMemory resolves the memory request: (per CPU, per node); per node -1
// means all of each node's memory.
func jobMemory(cfg *Config, r *Request, p *Partition) (int64, int64) {
	switch {
	case r.MemPerNodeSet || r.MemPerNode > 0:
		if r.MemPerNode == 0 {
			return 0, -1
		}
		return 0, r.MemPerNode
	case r.MemPerCPU > 0:
		return r.MemPerCPU, 0
	case p.DefMemPerCPU > 0:
		return p.DefMemPerCPU, 0
	case p.DefMemPerNode > 0:
		return 0, p.DefMemPerNode
	case cfg.DefMemPerCPU > 0:
		return cfg.DefMemPerCPU, 0
	case cfg.DefMemPerNode > 0:
		return 0, cfg.DefMemPerNode
	}
	return 0, -1
}

// cpusFor returns the CPUs k tasks hold on node n: cpus-per-task times k,
// at least --mincpus, rounded up to whole cores under CR_Core, all CPUs
// for an exclusive job.
func (s *shape) cpusFor(cfg *Config, n *Node, k int32) int32 {
	if s.exclusive {
		return n.CPUs
	}
	c := max(k*s.cpusPerTask, s.minCPUsPerNode)
	if cfg.Unit == ConsumeCore && n.ThreadsPerCore > 1 {
		t := n.ThreadsPerCore
		c = (c + t - 1) / t * t
	} else if cfg.Unit == ConsumeSocket && n.Sockets > 1 {
		per := n.CPUs / n.Sockets
		c = (c + per - 1) / per * per
	}
	return c
}

// memFor returns the memory (MB) a node gives a job holding cpus CPUs.
func (s *shape) memFor(n *Node, cpus int32) int64 {
	switch {
	case s.memPerNode < 0:
		return n.RealMemory
	case s.memPerNode > 0:
		return s.memPerNode
	}
	return s.memPerCPU * int64(cpus)
}

// selector is the cycle's resource selection state: scratch buffers reused
// across jobs so the hot loop does not allocate.
type selector struct {
	c     *Cluster
	cfg   *Config
	cands []cand
	// gresNodes are the nodes configured with some GRES of a name; tmp is
	// scratch for the narrowed mask.
	gresNodes map[string]NodeSet
	tmp       NodeSet
	// anyFit makes selection stop at the first feasible placement (for
	// "could this job ever run" checks, where the best one does not matter).
	anyFit bool
	// weighted marks clusters whose nodes do not all have the same Weight.
	weighted bool
	byWeight []int32 // node indices sorted by (Weight, index)
	// memo are the per-class decisions for the job being placed while
	// their gen is gen (classes.go).
	memo []classFit
	gen  uint32
	// chosen, tasks and gpus are byNode's, distribute's and gpuSplit's
	// scratch.
	chosen []cand
	tasks  []int32
	gpus   []int64
}

// cand is a feasible node for the job being placed.
type cand struct {
	node   int32
	weight uint32
	tasks  int32 // most tasks the node can take
	leftC  int32 // CPUs left free after the job's minimum use
	// twin is the node's class plus one when the node is pristine (the
	// job's share of it is its class's, see classes.go), 0 otherwise.
	twin  int32
	leftG int64 // GRES left free after the job's minimum use
}

func newSelector(c *Cluster, cfg *Config) *selector {
	return (&selector{}).reset(c, cfg)
}

// reset makes s a fresh selector for c and cfg, keeping its buffers (a
// cycle's selector is the last cycle's, see cycleBufs).
func (s *selector) reset(c *Cluster, cfg *Config) *selector {
	// the identity order of the last cycle's equal-weight cluster stands
	identity := s.c == c && len(s.byWeight) == len(c.Nodes) && !s.weighted
	if s.c == c && len(s.byWeight) == len(c.Nodes) && cfg.IncrementalQueue {
		// Node weights are read once per Cluster (Config.IncrementalQueue):
		// the last cycle's order stands, without walking the 8,192 node
		// records of a deep-queue replay on every pass.
		*s = selector{c: c, cfg: cfg, cands: s.cands[:0], chosen: s.chosen[:0], tasks: s.tasks[:0],
			byWeight: s.byWeight, weighted: s.weighted, memo: s.memo, gen: s.gen}
		return s
	}
	*s = selector{c: c, cfg: cfg, cands: s.cands[:0], chosen: s.chosen[:0], tasks: s.tasks[:0],
		byWeight: grow(s.byWeight, len(c.Nodes)), memo: s.memo, gen: s.gen}
	for i := range c.Nodes {
		if c.Nodes[i].Weight != c.Nodes[0].Weight {
			s.weighted = true
			break
		}
	}
	if identity && !s.weighted {
		return s
	}
	for i := range s.byWeight {
		s.byWeight[i] = int32(i)
	}
	if s.weighted { // equal weights: the stable sort is the identity
		sort.SliceStable(s.byWeight, func(a, b int) bool {
			return c.Nodes[s.byWeight[a]].Weight < c.Nodes[s.byWeight[b]].Weight
		})
	}
	return s
}

// nodeTasks returns the number of tasks (at most want) node i can take for
// shape s given the free resources in av, and the GRES and CPUs it would
// leave free with its minimum share; 0 tasks when it cannot take the job.
func (sel *selector) nodeTasks(s *shape, av *Avail, i int32, want int32) (int32, int64, int32) {
	n := &sel.c.Nodes[i]
	if s.exclusive && (av.Jobs[i] > 0) || av.Excl[i] || s.exclUser != "" && av.ownedByOther(i, s.exclUser) {
		return 0, 0, 0
	}
	leftG, ok := sel.gresFits(s, av, i)
	if !ok {
		return 0, 0, 0
	}
	free := av.CPUs[i]
	if s.share > 1 {
		free += n.CPUs * (s.share - 1)
	}
	if s.maxCPUsPerNode > 0 {
		free = min(free, s.maxCPUsPerNode)
	}
	k := min(want, free/s.cpusPerTask)
	if s.tasksPerNode > 0 {
		k = min(k, s.tasksPerNode)
	}
	for k > 0 && s.cpusFor(sel.cfg, n, k) > free {
		k--
	}
	for k > 0 && s.memFor(n, s.cpusFor(sel.cfg, n, k)) > sel.memFree(av, n, i) {
		if s.memPerCPU == 0 {
			return 0, 0, 0 // per-node memory does not shrink with fewer tasks
		}
		k--
	}
	if k <= 0 || (s.tasksPerNode > 0 && k < s.tasksPerNode) {
		return 0, 0, 0
	}
	return k, leftG, free - s.cpusFor(sel.cfg, n, 1)
}

// memFree returns the memory available on node i: the free memory when
// memory is consumable, the node's RealMemory otherwise (then memory is
// only checked against the node's size).
func (sel *selector) memFree(av *Avail, n *Node, i int32) int64 {
	if sel.cfg.ConsumeMemory {
		return av.Mem[i]
	}
	return n.RealMemory
}

// gresFits checks the per-node GRES request on node i and returns the
// matching GRES left free afterwards (the best-fit key for GPU jobs).
func (sel *selector) gresFits(s *shape, av *Avail, i int32) (int64, bool) {
	var left int64
	for gi := range s.gres {
		g := &s.gres[gi]
		free := sel.gresFree(av, i, g.Name, g.Type)
		if free < g.Count {
			return 0, false
		}
		left += free - g.Count
	}
	if s.gpusPerNode > 0 {
		free := sel.gresFree(av, i, "gpu", s.gpusType)
		if free < s.gpusPerNode {
			return 0, false
		}
		left += free - s.gpusPerNode
	}
	return left, true
}

// gresFree sums the free GRES of name (and type, if given) on node i.
func (sel *selector) gresFree(av *Avail, i int32, name, typ string) int64 {
	var free int64
	base := int(i) * av.Kinds
	for k := range sel.c.GresKinds {
		gk := &sel.c.GresKinds[k]
		if gk.Name == name && (typ == "" || gk.Type == typ) {
			free += av.Gres[base+k]
		}
	}
	return free
}

// fit selects nodes for job j in partition p among the nodes of mask
// (already restricted to the partition, the job's constraints and what the
// pass still offers), following select/cons_tres: feasible nodes, lowest
// Weight first, then best fit (the node left with the fewest free GRES,
// then CPUs, so large holes stay open), then node order. It returns the
// allocation or false.
func (sel *selector) fit(j *Job, p *Partition, av *Avail, mask NodeSet) (Alloc, bool) {
	s := jobShape(sel.cfg, j, p)
	return sel.fitShape(j, &s, av, mask)
}

// fitShape is fit for j's shape s (read only) in its partition.
func (sel *selector) fitShape(j *Job, s *shape, av *Avail, mask NodeSet) (Alloc, bool) {
	mask = sel.restrictToGres(s, mask)
	if s.minNodes == 1 && (s.tasksPerNode == 0 || s.tasksPerNode >= s.tasks) {
		// One node if one can take every task (the fewest nodes, as
		// cons_tres prefers), else spread over several.
		if al, ok := sel.fitOne(j, s, av, mask); ok || s.maxNodes == 1 {
			return al, ok
		}
	}
	if s.gpusJob > 0 && s.gpusPerNode > 1 {
		// --gpus is a total: spread over more nodes than -N, each of them
		// needs one GPU at least, and together all of them (gpuSplit).
		m := *s
		m.gpusPerNode = 1
		s = &m
	}
	return sel.fitMany(j, s, av, mask)
}

// restrictToGres narrows mask to the nodes configured with every GRES
// name the job asks for (GPU jobs then visit only GPU nodes).
func (sel *selector) restrictToGres(s *shape, mask NodeSet) NodeSet {
	if len(s.gres) == 0 && s.gpusPerNode == 0 {
		return mask
	}
	if sel.gresNodes == nil {
		sel.gresNodes = map[string]NodeSet{}
		for i := range sel.c.Nodes {
			for k, cnt := range sel.c.Nodes[i].Gres {
				if cnt <= 0 {
					continue
				}
				name := sel.c.GresKinds[k].Name
				if sel.gresNodes[name] == nil {
					sel.gresNodes[name] = NewNodeSet(len(sel.c.Nodes))
				}
				sel.gresNodes[name].Set(i)
			}
		}
		sel.tmp = NewNodeSet(len(sel.c.Nodes))
	}
	sel.tmp.CopyFrom(mask)
	for _, g := range s.gres {
		if set := sel.gresNodes[g.Name]; set != nil {
			sel.tmp.And(set)
		} else {
			clear(sel.tmp)
		}
	}
	if s.gpusPerNode > 0 {
		if set := sel.gresNodes["gpu"]; set != nil {
			sel.tmp.And(set)
		} else {
			clear(sel.tmp)
		}
	}
	return sel.tmp
}

// fitOne places a single-node job on the best node.
func (sel *selector) fitOne(j *Job, s *shape, av *Avail, mask NodeSet) (Alloc, bool) {
	if sel.bucketable(s, av) {
		return sel.fitOneBuckets(j, s, av, mask)
	}
	best := cand{node: -1}
	consider := func(i int32) bool {
		if best.node >= 0 && sel.weighted && sel.c.Nodes[i].Weight > best.weight {
			return false // later nodes only weigh more
		}
		k, lg, lc := sel.nodeTasks(s, av, i, s.tasks)
		if k < s.tasks {
			return true
		}
		c := cand{node: i, weight: sel.c.Nodes[i].Weight, tasks: k, leftG: lg, leftC: lc}
		if best.node < 0 || better(&c, &best) {
			best = c
		}
		return !(lg == 0 && lc == 0) && !sel.anyFit // a perfect fit cannot be beaten
	}
	sel.forEach(mask, consider)
	if best.node < 0 {
		return Alloc{}, false
	}
	return sel.makeAlloc(j, s, av, []cand{best}, []int32{s.tasks}, nil), true
}

// fitOneBuckets is fitOne for CPU-only jobs on nodes of equal weight:
// the best fit is the node with the fewest free CPUs that can take the
// job, so the free-CPU buckets are walked upward from the request and the
// first bucket holding a feasible node decides (lowest index within it,
// except in the last, open-ended bucket where free CPUs still differ).
func (sel *selector) fitOneBuckets(j *Job, s *shape, av *Avail, mask NodeSet) (Alloc, bool) {
	need := max(s.tasks*s.cpusPerTask, s.minCPUsPerNode, 1)
	top := int32(len(av.byFree) - 1)
	if need > top && av.exactTop {
		return Alloc{}, false // every node has at most top free CPUs
	}
	for b := min(need, top); b <= top; b++ {
		best := cand{node: -1}
		bucket := av.byFree[b]
	words:
		for w := range bucket {
			word := bucket[w] & mask[w]
			for word != 0 {
				i := int32(w<<6 + bits.TrailingZeros64(word))
				word &= word - 1
				k, lg, lc := sel.nodeTasks(s, av, i, s.tasks)
				if k < s.tasks {
					continue
				}
				c := cand{node: i, tasks: k, leftG: lg, leftC: lc}
				if best.node < 0 || better(&c, &best) {
					best = c
				}
				if b < top || av.exactTop || sel.anyFit {
					break words // equal free CPUs in this bucket: the lowest index wins
				}
			}
		}
		if best.node >= 0 {
			return sel.makeAlloc(j, s, av, []cand{best}, []int32{s.tasks}, nil), true
		}
	}
	return Alloc{}, false
}

// better orders candidates: lower weight, then less GRES left, then fewer
// CPUs left, then lower index.
func better(a, b *cand) bool {
	if a.weight != b.weight {
		return a.weight < b.weight
	}
	if a.leftG != b.leftG {
		return a.leftG < b.leftG
	}
	if a.leftC != b.leftC {
		return a.leftC < b.leftC
	}
	return a.node < b.node
}

// forEach visits the nodes of mask in (Weight, index) order.
func (sel *selector) forEach(mask NodeSet, f func(i int32) bool) {
	if !sel.weighted {
		mask.ForEach(func(i int) bool { return f(int32(i)) })
		return
	}
	for _, i := range sel.byWeight {
		if mask.Has(int(i)) && !f(i) {
			return
		}
	}
}

// bucketable reports whether the free-CPU buckets of av order the nodes
// for shape s exactly as best fit does: CPU-only, non-exclusive, no
// oversubscription, nodes of equal weight.
func (sel *selector) bucketable(s *shape, av *Avail) bool {
	return av.byFree != nil && !sel.weighted && s.share == 1 && !s.exclusive && len(s.gres) == 0 && s.gpusPerNode == 0
}

// fitManyBuckets is fitMany over the free-CPU buckets: the minNodes
// best-fitting nodes (fewest free CPUs) if they hold every task, else the
// roomiest nodes, without visiting or sorting every node.
func (sel *selector) fitManyBuckets(j *Job, s *shape, av *Avail, mask NodeSet) (Alloc, bool) {
	top := int32(len(av.byFree) - 1)
	if !bucketsMayHold(s, av, mask) {
		return Alloc{}, false
	}
	if sel.gen++; sel.gen == 0 { // a new job: the per-class decisions of the last are void
		clear(sel.memo)
		sel.gen = 1
	}
	if al, fits, ok := sel.fitTwins(s, av, mask); ok {
		return al, fits
	}
	var have int64
	cs := sel.cands[:0]
	full := false
	g := fitGoal{minNodes: s.minNodes, maxNodes: s.maxNodes, tasks: int64(s.tasks)}
	for b := int32(1); b <= top && !full; b++ {
		cs, full = sel.collect(s, av, av.byFree[b], mask, &g, cs, &have)
	}
	if !full || have < int64(s.tasks) {
		cs, have, full = cs[:0], 0, false
		g.enough = true
		for b := top; b >= 1 && !full; b-- {
			cs, full = sel.collect(s, av, av.byFree[b], mask, &g, cs, &have)
		}
	}
	sel.cands = cs
	if int32(len(cs)) < s.minNodes || have < int64(s.tasks) {
		return Alloc{}, false
	}
	chosen := sel.byNode(cs)
	return sel.allocMany(j, s, av, chosen)
}

// bucketsMayHold reports whether the free nodes of mask may hold s,
// from their count alone: each takes at most top/cpusPerTask tasks when
// the buckets are exact, so when all of them together cannot take every
// task, or there are fewer than minNodes, fitManyBuckets would fail after
// visiting every node (as a blocked job's main-pass and backfill attempts
// do on a full cluster). One popcount pass instead of a node-by-node one.
func bucketsMayHold(s *shape, av *Avail, mask NodeSet) bool {
	n := int64(av.Free.AndCount(mask))
	if n < int64(s.minNodes) {
		return false
	}
	top := int64(len(av.byFree) - 1)
	return !av.exactTop || n*(top/int64(max(s.cpusPerTask, 1))) >= int64(s.tasks)
}

// fitMany places a multi-node job: the best-ranked feasible nodes, at
// least minNodes of them, each taking at least one task (or exactly
// ntasks-per-node), until every task has a place.
func (sel *selector) fitMany(j *Job, s *shape, av *Avail, mask NodeSet) (Alloc, bool) {
	if sel.bucketable(s, av) {
		return sel.fitManyBuckets(j, s, av, mask)
	}
	sel.cands = sel.cands[:0]
	var capacity int64
	sel.forEach(mask, func(i int32) bool {
		k, lg, lc := sel.nodeTasks(s, av, i, s.tasks)
		if k > 0 {
			sel.cands = append(sel.cands, cand{node: i, weight: sel.c.Nodes[i].Weight, tasks: k, leftG: lg, leftC: lc})
			capacity += int64(k)
		}
		return true
	})
	if int32(len(sel.cands)) < s.minNodes || capacity < int64(s.tasks) {
		return Alloc{}, false
	}
	cs := sel.cands
	sort.Slice(cs, func(a, b int) bool { return better(&cs[a], &cs[b]) })
	// Take the best minNodes nodes, then add nodes while tasks remain.
	n := int(s.minNodes)
	var have int64
	for _, c := range cs[:n] {
		have += int64(c.tasks)
	}
	for have < int64(s.tasks) && n < len(cs) && int32(n) < s.maxNodes {
		have += int64(cs[n].tasks)
		n++
	}
	if have < int64(s.tasks) {
		// The best-fitting nodes are too small together: take the roomiest
		// nodes instead (fewest nodes that can hold every task).
		sort.Slice(cs, func(a, b int) bool {
			if cs[a].tasks != cs[b].tasks {
				return cs[a].tasks > cs[b].tasks
			}
			return better(&cs[a], &cs[b])
		})
		n, have = 0, 0
		for n < len(cs) && int32(n) < s.maxNodes && (n < int(s.minNodes) || have < int64(s.tasks)) {
			have += int64(cs[n].tasks)
			n++
		}
		if have < int64(s.tasks) || n < int(s.minNodes) {
			return Alloc{}, false
		}
	}
	chosen := sel.byNode(cs[:n])
	return sel.allocMany(j, s, av, chosen)
}

// allocMany builds the allocation of a multi-node job on the chosen
// nodes: the job's --gpus total split over them first, its tasks then
// spread in proportion (gpuSplit, distribute).
func (sel *selector) allocMany(j *Job, s *shape, av *Avail, chosen []cand) (Alloc, bool) {
	var gpus []int64
	if s.gpusJob > 0 {
		if !sel.gpuSplit(s, av, chosen) {
			return Alloc{}, false
		}
		gpus = sel.gpus
	}
	return sel.makeAlloc(j, s, av, chosen, sel.distribute(s, chosen, gpus), gpus), true
}

// gpuSplit deals the job's --gpus total over the chosen nodes one at a
// time in node order, as far as each has free GPUs (oracle: --gpus=2 over
// two nodes is 1+1, --gpus=3 is 2+1), into sel.gpus; false when the nodes
// do not hold that many together.
func (sel *selector) gpuSplit(s *shape, av *Avail, chosen []cand) bool {
	g := grow(sel.gpus, len(chosen))
	sel.gpus = g
	clear(g)
	left := s.gpusJob
	for left > 0 {
		gave := false
		for i := range chosen {
			if left > 0 && g[i] < sel.gresFree(av, chosen[i].node, "gpu", s.gpusType) {
				g[i]++
				left--
				gave = true
			}
		}
		if !gave {
			return false
		}
	}
	return true
}

// distribute spreads the tasks over the chosen nodes: one each (or the
// fixed tasks per node) first, then filling nodes in order up to their
// capacity, as cons_tres does (oracle: -N2 -n5 is 4+1, -N3 -n10 8+1+1).
// With a --gpus total split as gpus, each node first takes its share of
// the tasks in proportion to its GPUs (oracle: -n12 --gpus=2 is 6+6,
// --gpus=3 8+4).
func (sel *selector) distribute(s *shape, chosen []cand, gpus []int64) []int32 {
	t := grow(sel.tasks, len(chosen))
	sel.tasks = t
	left := s.tasks
	first := int32(1)
	if s.tasksPerNode > 0 {
		first = s.tasksPerNode
	}
	for i := range chosen {
		want := first
		if gpus != nil && s.tasksPerNode == 0 {
			want = max(first, int32(int64(s.tasks)*gpus[i]/s.gpusJob))
		}
		t[i] = min(want, chosen[i].tasks, max(left-int32(len(chosen)-1-i), first))
		left -= t[i]
	}
	for i := range chosen {
		if left <= 0 {
			break
		}
		add := min(left, chosen[i].tasks-t[i])
		t[i] += add
		left -= add
	}
	return t
}

// byNode returns cs in node order: cs itself when it is already (the
// candidates gathered from one free-CPU bucket, every node of a cluster
// of 1-CPU nodes: one scan instead of a copy and a sort of thousands of
// them per start), else a sorted copy in the selector's scratch (valid
// until the next selection; makeAlloc copies what it keeps).
func (sel *selector) byNode(cs []cand) []cand {
	for k := 1; k < len(cs); k++ {
		if cs[k].node < cs[k-1].node {
			chosen := append(sel.chosen[:0], cs...)
			sel.chosen = chosen
			slices.SortFunc(chosen, func(a, b cand) int { return cmp.Compare(a.node, b.node) })
			return chosen
		}
	}
	return cs
}

// makeAlloc builds the allocation of tasks[i] tasks on chosen[i], with
// gpus[i] GPUs of the job's --gpus total when gpus is given.
func (sel *selector) makeAlloc(j *Job, s *shape, av *Avail, chosen []cand, tasks []int32, gpus []int64) Alloc {
	n := len(chosen)
	ids := make([]int32, 2*n) // Nodes and CPUs, one allocation
	al := Alloc{Nodes: ids[:n:n], CPUs: ids[n:], Mem: make([]int64, n), Exclusive: s.exclusive}
	plain := !s.exclusive && len(s.gres) == 0 && s.gpusPerNode == 0
	last := -1 // the last slot computed in full
	for slot, c := range chosen {
		al.Nodes[slot] = c.node
		if plain && last >= 0 && c.twin != 0 && c.twin == chosen[last].twin && tasks[slot] == tasks[last] {
			// a node like the last one, as many tasks: the same share,
			// without reading its node record
			al.CPUs[slot], al.Mem[slot] = al.CPUs[last], al.Mem[last]
			continue
		}
		last = slot
		sel.allocSlot(&al, s, av, c, slot, tasks[slot], gpus)
	}
	return al
}

// allocSlot fills slot of al: tasks tasks on candidate c, with gpus[slot]
// GPUs of the job's --gpus total when gpus is given.
func (sel *selector) allocSlot(al *Alloc, s *shape, av *Avail, c cand, slot int, tasks int32, gpus []int64) {
	n := &sel.c.Nodes[c.node]
	al.CPUs[slot] = s.cpusFor(sel.cfg, n, tasks)
	al.Mem[slot] = s.memFor(n, al.CPUs[slot])
	if s.exclusive && s.memPerNode == 0 && s.memPerCPU == 0 {
		al.Mem[slot] = n.RealMemory
	}
	if s.exclusive {
		for k, cnt := range n.Gres {
			if cnt > 0 {
				al.Gres = append(al.Gres, GresUse{Slot: int32(slot), Kind: int32(k), Count: cnt})
			}
		}
		return
	}
	for gi := range s.gres {
		al.Gres = sel.takeGres(al.Gres, av, int32(slot), c.node, s.gres[gi].Name, s.gres[gi].Type, s.gres[gi].Count)
	}
	if g := s.gpusPerNode; g > 0 {
		if gpus != nil {
			g = gpus[slot]
		}
		al.Gres = sel.takeGres(al.Gres, av, int32(slot), c.node, "gpu", s.gpusType, g)
	}
}

// takeGres assigns count GRES of name/type on node from the kinds in index
// order, merging with what the allocation already holds.
func (sel *selector) takeGres(out []GresUse, av *Avail, slot, node int32, name, typ string, count int64) []GresUse {
	base := int(node) * av.Kinds
	for k := range sel.c.GresKinds {
		if count == 0 {
			break
		}
		gk := &sel.c.GresKinds[k]
		if gk.Name != name || (typ != "" && gk.Type != typ) {
			continue
		}
		free := av.Gres[base+k]
		for _, u := range out {
			if u.Slot == slot && u.Kind == int32(k) {
				free -= u.Count
			}
		}
		take := min(free, count)
		if take > 0 {
			out = append(out, GresUse{Slot: slot, Kind: int32(k), Count: take})
			count -= take
		}
	}
	return out
}

// canEverFit reports whether j could run in p on an empty cluster (all the
// partition's usable and unusable nodes free): Slurm rejects or pends with
// a configuration reason a job that never can.
func (sel *selector) canEverFit(j *Job, p *Partition, empty *Avail, mask NodeSet) bool {
	sel.anyFit = true
	_, ok := sel.fit(j, p, empty, mask)
	sel.anyFit = false
	return ok
}

// emptyAvail returns a view of the cluster with every node free and usable.
func (sel *selector) emptyAvail() *Avail {
	c := sel.c
	n := len(c.Nodes)
	k := len(c.GresKinds)
	a := &Avail{CPUs: make([]int32, n), Mem: make([]int64, n), Jobs: make([]int32, n),
		Gres: make([]int64, n*k), Kinds: k, Excl: make([]bool, n), Usable: NewNodeSet(n), Free: NewNodeSet(n)}
	for i := range c.Nodes {
		nd := &c.Nodes[i]
		a.CPUs[i], a.Mem[i] = nd.CPUs, nd.RealMemory
		copy(a.Gres[i*k:(i+1)*k], nd.Gres)
		a.Usable.Set(i)
		a.Free.Set(i)
	}
	a.buildBuckets(c)
	return a
}

var _ = math.MaxInt64
