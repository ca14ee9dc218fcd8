package sched

import (
	"math/bits"
	"slices"
)

// Node classes: nodes of one configuration (CPUs, layout, memory, GRES)
// that hold nothing give any job the same share, so selection decides
// once per class and takes such nodes 64 at a time from the free-CPU
// buckets instead of testing them one by one (a deep-queue replay on
// 8,192 identical nodes spent a third of its time testing idle nodes).

// maxClasses caps the classes of a view; nodes beyond get none and are
// tested one by one.
const maxClasses = 64

// classFitOff turns the per-class decisions off (tests compare both ways).
var classFitOff bool

// classify groups the nodes of a view by configuration into a.class and
// a.classSet, and remembers the node records (pristine reads them).
func (a *Avail) classify(nodes []Node) {
	a.nodes = nodes
	a.class = grow(a.class, len(nodes))
	a.fullCPUs, a.fullMem = grow(a.fullCPUs, len(nodes)), grow(a.fullMem, len(nodes))
	a.classRep = a.classRep[:0]
	for c := range a.classSet {
		a.classSet[c] = emptySet(a.classSet[c], len(nodes))
	}
	last := int32(-1)
	for i := range nodes {
		c := last
		if c < 0 || !sameClass(&nodes[a.classRep[c]], &nodes[i]) {
			c = a.findClass(nodes, i)
		}
		a.class[i], last = c, c
		a.fullCPUs[i], a.fullMem[i] = nodes[i].CPUs, nodes[i].RealMemory
		if c >= 0 {
			a.classSet[c].Set(i)
		}
	}
}

// findClass returns node i's class, a new one if none matches (-1 when
// maxClasses are taken).
func (a *Avail) findClass(nodes []Node, i int) int32 {
	for c, r := range a.classRep {
		if sameClass(&nodes[r], &nodes[i]) {
			return int32(c)
		}
	}
	if len(a.classRep) == maxClasses {
		return -1
	}
	a.classRep = append(a.classRep, int32(i))
	if len(a.classSet) < len(a.classRep) {
		a.classSet = append(a.classSet, NewNodeSet(len(nodes)))
	}
	return int32(len(a.classRep) - 1)
}

// sameClass reports whether two nodes are alike for selection (nodeTasks
// reads nothing else of a node).
func sameClass(x, y *Node) bool {
	if x.CPUs != y.CPUs || x.Sockets != y.Sockets || x.ThreadsPerCore != y.ThreadsPerCore ||
		x.RealMemory != y.RealMemory || len(x.Gres) != len(y.Gres) {
		return false
	}
	for k := range x.Gres {
		if x.Gres[k] != y.Gres[k] {
			return false
		}
	}
	return true
}

// isPristine reports whether free node i holds nothing in this view:
// every CPU, all memory and GRES free (then its class alone decides).
func (a *Avail) isPristine(i int) bool {
	if a.Jobs[i] != 0 || i >= len(a.nodes) || a.CPUs[i] != a.fullCPUs[i] || a.Mem[i] != a.fullMem[i] || a.class[i] < 0 {
		return false
	}
	if a.Kinds == 0 {
		return true // no GRES: no node record to read
	}
	for k, cnt := range a.nodes[i].Gres {
		if a.Gres[i*a.Kinds+k] != cnt {
			return false
		}
	}
	return true
}

// classFit is a per-class nodeTasks result for the job being placed.
type classFit struct {
	gen   uint32
	tasks int32
	leftC int32
	leftG int64
}

// classTasks returns nodeTasks for pristine node i from its class's
// result for the current job, computing it on first use.
func (sel *selector) classTasks(s *shape, av *Avail, i int32) (int32, int64, int32) {
	c := av.class[i]
	if int(c) >= len(sel.memo) {
		sel.memo = append(sel.memo, make([]classFit, int(c)+1-len(sel.memo))...)
	}
	m := &sel.memo[c]
	if m.gen != sel.gen {
		k, lg, lc := sel.nodeTasks(s, av, i, s.tasks)
		*m = classFit{gen: sel.gen, tasks: k, leftC: lc, leftG: lg}
	}
	return m.tasks, m.leftG, m.leftC
}

// classRun returns the lowest nodes of word (word w of a candidate set)
// that are pristine and of the lowest node's class, up to the first node
// that is not: a run the job takes alike, in node order. 0 when the
// lowest node is not pristine.
func (av *Avail) classRun(w int, word uint64) uint64 {
	if classFitOff || av.pristine == nil {
		return 0
	}
	if av.pristine[w]&(word&-word) == 0 {
		return 0
	}
	c := av.class[w<<6+bits.TrailingZeros64(word)]
	run := word & av.pristine[w] & av.classSet[c][w]
	if other := word &^ run; other != 0 {
		run &= other&-other - 1
	}
	return run
}

// fitGoal is when fitManyBuckets has gathered enough nodes: minNodes of
// them (best fit), or with enough, minNodes holding every task or
// maxNodes.
type fitGoal struct {
	minNodes, maxNodes int32
	tasks              int64
	enough             bool
}

// done reports whether n nodes holding have tasks reach the goal.
func (g *fitGoal) done(n int, have int64) bool {
	if !g.enough {
		return int32(n) >= g.minNodes
	}
	return int32(n) >= g.minNodes && have >= g.tasks || int32(n) >= g.maxNodes
}

// need returns how many more nodes of k tasks each reach the goal from n
// nodes holding have tasks: the fewest for which done holds, at least 1.
func (g *fitGoal) need(n int, have int64, k int32) int {
	m := int64(g.minNodes) - int64(n)
	if g.enough {
		m = max(m, (g.tasks-have+int64(k)-1)/int64(k))
		m = min(m, int64(g.maxNodes)-int64(n))
	}
	return int(max(m, 1))
}

// collect appends the feasible nodes of bucket (within mask) to cs in
// node order until g is reached; true when it is.
func (sel *selector) collect(s *shape, av *Avail, bucket, mask NodeSet, g *fitGoal, cs []cand, have *int64) ([]cand, bool) {
	for w := range bucket {
		word := bucket[w] & mask[w]
		for word != 0 {
			if run := av.classRun(w, word); run != 0 {
				word &^= run
				var done bool
				if cs, done = sel.collectRun(s, av, w, run, g, cs, have); done {
					return cs, true
				}
				continue
			}
			i := int32(w<<6 + bits.TrailingZeros64(word))
			word &= word - 1
			if k, lg, lc := sel.nodeTasks(s, av, i, s.tasks); k > 0 {
				cs = append(cs, cand{node: i, tasks: k, leftG: lg, leftC: lc})
				*have += int64(k)
				if g.done(len(cs), *have) {
					return cs, true
				}
			}
		}
	}
	return cs, false
}

// collectRun is collect for a run of pristine nodes of one class: each
// takes the same tasks, so as many as the goal needs are appended at once.
func (sel *selector) collectRun(s *shape, av *Avail, w int, run uint64, g *fitGoal, cs []cand, have *int64) ([]cand, bool) {
	k, lg, lc := sel.classTasks(s, av, int32(w<<6+bits.TrailingZeros64(run)))
	if k <= 0 {
		return cs, false
	}
	take := min(g.need(len(cs), *have, k), bits.OnesCount64(run))
	cs = slices.Grow(cs, take)
	twin := av.class[w<<6+bits.TrailingZeros64(run)] + 1
	for n := 0; n < take; n++ {
		cs = append(cs, cand{node: int32(w<<6 + bits.TrailingZeros64(run)), tasks: k, leftG: lg, leftC: lc, twin: twin})
		run &= run - 1
	}
	*have += int64(take) * int64(k)
	return cs, g.done(len(cs), *have)
}

// fitTwins is fitManyBuckets when every free node of mask is pristine
// and of one class (a cluster of identical nodes without partly used
// ones, as 1-CPU nodes always are): then every candidate takes the same
// tasks and sits in one bucket, so both of fitManyBuckets' walks take
// the lowest free nodes in node order, as many as its goal needs, and
// the allocation is written from the bitsets directly. ok false: not
// such a case, fitManyBuckets decides.
func (sel *selector) fitTwins(s *shape, av *Avail, mask NodeSet) (al Alloc, fits, ok bool) {
	first, count := av.twinRun(mask)
	if first < 0 {
		return Alloc{}, false, false
	}
	k, _, _ := sel.classTasks(s, av, first)
	if k <= 0 {
		return Alloc{}, false, true
	}
	g := fitGoal{minNodes: s.minNodes, maxNodes: s.maxNodes, tasks: int64(s.tasks), enough: true}
	m := g.need(0, 0, k)
	if m > count || int32(m) < s.minNodes || int64(m)*int64(k) < int64(s.tasks) {
		return Alloc{}, false, true
	}
	return sel.twinAlloc(s, av, mask, first, m, k), true, true
}

// twinRun returns the lowest free node of mask and how many there are
// when all of them are pristine and of its class; -1 otherwise.
func (av *Avail) twinRun(mask NodeSet) (int32, int) {
	if classFitOff || av.pristine == nil {
		return -1, 0
	}
	first, count := int32(-1), 0
	var same NodeSet
	for w := range av.Free {
		fm := av.Free[w] & mask[w]
		if fm == 0 {
			continue
		}
		if first < 0 {
			first = int32(w<<6 + bits.TrailingZeros64(fm))
			if av.class[first] < 0 {
				return -1, 0
			}
			same = av.classSet[av.class[first]]
		}
		if fm&^(av.pristine[w]&same[w]) != 0 {
			return -1, 0
		}
		count += bits.OnesCount64(fm)
	}
	return first, count
}

// twinAlloc allocates the m lowest free nodes of mask, each able to take
// k tasks, like node first: the tasks spread as distribute does (the
// fixed tasks per node, or one, on each, the rest filling nodes in
// order).
func (sel *selector) twinAlloc(s *shape, av *Avail, mask NodeSet, first int32, m int, k int32) Alloc {
	ids := make([]int32, 2*m) // Nodes and CPUs, one allocation
	al := Alloc{Nodes: ids[:m:m], CPUs: ids[m:], Mem: make([]int64, m)}
	slot := 0
	for w := int(first >> 6); slot < m; w++ {
		for fm := av.Free[w] & mask[w]; fm != 0 && slot < m; fm &= fm - 1 {
			al.Nodes[slot] = int32(w<<6 + bits.TrailingZeros64(fm))
			slot++
		}
	}
	least := int32(1)
	if s.tasksPerNode > 0 {
		least = s.tasksPerNode
	}
	n := &sel.c.Nodes[first]
	cpus := s.cpusFor(sel.cfg, n, least)
	mem := s.memFor(n, cpus)
	for slot := range al.CPUs {
		al.CPUs[slot], al.Mem[slot] = cpus, mem
	}
	// the tasks beyond the least fill the nodes in order
	left := int64(s.tasks) - int64(m)*int64(least)
	for slot := 0; left > 0 && slot < m; slot++ {
		add := min(left, int64(k-least))
		left -= add
		al.CPUs[slot] = s.cpusFor(sel.cfg, n, least+int32(add))
		al.Mem[slot] = s.memFor(n, al.CPUs[slot])
	}
	return al
}
