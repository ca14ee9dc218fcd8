package sched

import "math/bits"

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
	if a.Jobs[i] != 0 || i >= len(a.nodes) || a.class[i] < 0 {
		return false
	}
	nd := &a.nodes[i]
	if a.CPUs[i] != nd.CPUs || a.Mem[i] != nd.RealMemory {
		return false
	}
	for k, cnt := range nd.Gres {
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
	for n := 0; n < take; n++ {
		cs = append(cs, cand{node: int32(w<<6 + bits.TrailingZeros64(run)), tasks: k, leftG: lg, leftC: lc})
		run &= run - 1
	}
	*have += int64(take) * int64(k)
	return cs, g.done(len(cs), *have)
}
