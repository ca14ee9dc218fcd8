package sched

import (
	"math"
	"math/bits"
)

// Avail is a view of the resources still free on every node: the state's
// allocations minus whatever the current cycle has already decided to
// start. Selection (fit) reads and commits to it; backfill builds future
// views by releasing running jobs in end-time order.
type Avail struct {
	// CPUs, Mem and Jobs are the free CPUs, free memory (MB) and the number
	// of jobs holding resources, per node.
	CPUs []int32
	Mem  []int64
	Jobs []int32
	// Gres are the free GRES counts, flat: node i, kind k at i*Kinds+k.
	Gres  []int64
	Kinds int
	// Excl marks nodes held by an exclusive job.
	Excl []bool
	// Usable are the nodes that may take new work (up, not draining).
	Usable NodeSet
	// Free are usable nodes with at least one free CPU.
	Free NodeSet

	// byFree[b] are the usable, non-exclusive nodes with exactly b free
	// CPUs (the last bucket: at least that many); bucketOf is each node's
	// bucket, -1 for none. Best-fit selection walks the buckets upward
	// from the request instead of every node. nil: not maintained (views
	// cloned for trials), selection then scans the nodes.
	byFree   []NodeSet
	bucketOf []int32
	// pristine are the free nodes holding nothing, of a class (classes.go):
	// class is each node's, classSet the nodes of each, classRep one node
	// of each, nodes the records they were read from, fullCPUs and
	// fullMem each node's CPUs and memory (read without following a
	// pointer per node). Maintained with the buckets.
	pristine NodeSet
	class    []int32
	classSet []NodeSet
	classRep []int32
	nodes    []Node
	fullCPUs []int32
	fullMem  []int64
	// exactTop is set when no node has more CPUs than the last bucket's
	// value, so that bucket too holds nodes of equal free CPUs.
	exactTop bool
	// alive are the nodes neither DOWN, FAIL nor idle and drained (a
	// draining node still counts), and uniformCPUs every node's CPUs when
	// all nodes have as many (0 otherwise): partCapacity counts them with
	// a popcount instead of a walk over every node at every cycle. Set by
	// fill only.
	alive       NodeSet
	uniformCPUs int32
	// touched are the nodes this view changed since fill (Take, Release),
	// touchedAll set when it changed them otherwise; cl is the cluster it
	// was filled from. refill brings only these and the nodes the State
	// changed up to date.
	touched    []int32
	touchedAll bool
	cl         *Cluster
	// stamp is the refill round that last refilled each node (round).
	stamp []uint32
	round uint32
	// starts are the spans of touched the cycle's starts appended, plan
	// that cycle's first start (avail_confirm.go).
	starts []startSpan
	plan   *Start
	// owner is the user whose jobs hold each node ("" for none, ownerMixed
	// for several users), for ExclusiveUser partitions; nil when not
	// tracked (then ExclusiveUser is not enforced on this view).
	owner []string
}

// ownerMixed marks a node held by jobs of several users.
const ownerMixed = "\x00mixed"

// setOwner records that user's job now holds node i (after Take).
func (a *Avail) setOwner(i int32, user string) {
	if a.owner == nil {
		return
	}
	switch a.owner[i] {
	case "", user:
		a.owner[i] = user
	default:
		a.owner[i] = ownerMixed
	}
}

// ownedByOther reports whether node i holds jobs of a user other than
// user (ExclusiveUser partitions give a node to one user at a time).
func (a *Avail) ownedByOther(i int32, user string) bool {
	return a.owner != nil && a.Jobs[i] > 0 && a.owner[i] != "" && a.owner[i] != user
}

// maxBucket caps the free-CPU buckets: nodes with more free CPUs share the
// last bucket, where selection compares them one by one.
const maxBucket = 128

// buildBuckets indexes the nodes by free CPUs.
func (a *Avail) buildBuckets(c *Cluster) {
	top := int32(0)
	for i := range c.Nodes {
		top = max(top, c.Nodes[i].CPUs)
	}
	a.classify(c.Nodes)
	a.fillBuckets(len(c.Nodes), top)
}

// fillBuckets is buildBuckets once the most CPUs of a node (top) is known.
func (a *Avail) fillBuckets(n int, top int32) {
	a.exactTop = top <= maxBucket
	top = min(top, maxBucket)
	a.byFree = grow(a.byFree, int(top)+1)
	for b := range a.byFree {
		a.byFree[b] = emptySet(a.byFree[b], n)
	}
	a.bucketOf = grow(a.bucketOf, n)
	for i := range a.bucketOf {
		a.bucketOf[i] = -1
	}
	a.pristine = emptySet(a.pristine, n)
	last := int32(len(a.byFree) - 1)
	for w, word := range a.Free { // rebucket from no bucket, inlined (once per cycle per node)
		for word != 0 {
			i := w<<6 + bits.TrailingZeros64(word)
			word &= word - 1
			b := min(a.CPUs[i], last)
			a.byFree[b].Set(i)
			a.bucketOf[i] = b
			if a.isPristine(i) {
				a.pristine.Set(i)
			}
		}
	}
}

// rebucket moves node i to the bucket of its free CPUs.
func (a *Avail) rebucket(i int) { a.placeBucket(i, a.Free.Has(i)) }

// placeBucket moves node i, free or not, to the bucket of its free CPUs
// (none when not free) and sets whether it is pristine.
func (a *Avail) placeBucket(i int, free bool) {
	if a.byFree == nil {
		return
	}
	w, bit := i>>6, uint64(1)<<(uint(i)&63)
	b := int32(-1)
	if free {
		b = min(a.CPUs[i], int32(len(a.byFree)-1))
	}
	if old := a.bucketOf[i]; old != b {
		if old >= 0 {
			a.byFree[old][w] &^= bit
		}
		if b >= 0 {
			a.byFree[b][w] |= bit
		}
		a.bucketOf[i] = b
	}
	if free && a.isPristine(i) {
		a.pristine[w] |= bit
	} else {
		a.pristine[w] &^= bit
	}
}

// NewAvail builds the free-resource view of cluster c from its nodes'
// current allocations.
func NewAvail(c *Cluster) *Avail {
	a := &Avail{}
	a.fill(c)
	return a
}

// fill makes a the free-resource view of c, reusing a's tables (a
// cycle's view is refilled from the last cycle's, see cycleBufs).
func (a *Avail) fill(c *Cluster) {
	n := len(c.Nodes)
	k := len(c.GresKinds)
	a.CPUs, a.Mem, a.Jobs = grow(a.CPUs, n), grow(a.Mem, n), grow(a.Jobs, n)
	a.Gres, a.Kinds, a.Excl = grow(a.Gres, n*k), k, grow(a.Excl, n)
	a.Usable, a.Free = emptySet(a.Usable, n), emptySet(a.Free, n)
	a.owner = nil
	a.alive = emptySet(a.alive, n)
	a.touched, a.touchedAll, a.cl = a.touched[:0], false, c
	a.starts, a.plan = a.starts[:0], nil
	top, low := int32(0), int32(math.MaxInt32)
	for i := range c.Nodes {
		nd := &c.Nodes[i]
		top, low = max(top, nd.CPUs), min(low, nd.CPUs)
		a.fillNode(nd, i, k)
	}
	a.uniformCPUs = 0
	if top == low {
		a.uniformCPUs = top
	}
	a.classify(c.Nodes)
	a.fillBuckets(n, top)
}

// fillNode sets node i's free resources and sets from nd.
func (a *Avail) fillNode(nd *Node, i, k int) {
	a.CPUs[i] = nd.CPUs - nd.AllocCPUs
	a.Mem[i] = nd.RealMemory - nd.AllocMem
	a.Jobs[i] = nd.Jobs
	a.Excl[i] = nd.ExclusiveJob != 0
	for g := 0; g < k; g++ {
		a.Gres[i*k+g] = nd.Gres[g] - nd.AllocGres[g]
	}
	a.Usable.Clear(i)
	a.Free.Clear(i)
	a.alive.Clear(i)
	if nodeAlive(nd) {
		a.alive.Set(i)
	}
	if nd.Usable() {
		a.Usable.Set(i)
		if a.CPUs[i] > 0 && !a.Excl[i] {
			a.Free.Set(i)
		}
	}
}

// refill makes a, the last cycle's view of c, the free-resource view of c
// again by refilling only the nodes that view changed (touched) and the
// nodes the State changed since (dirty); false, with a unchanged, when it
// cannot (another cluster, a view changed otherwise, owners tracked), and
// fill must run. With 8,192 nodes the full fill was a quarter of a
// simulator's pass.
func (a *Avail) refill(c *Cluster, dirty []int32) bool {
	if a.cl != c || a.touchedAll || a.byFree == nil || a.owner != nil || len(a.CPUs) != len(c.Nodes) || a.Kinds != len(c.GresKinds) {
		return false
	}
	// A started job's nodes are both touched (Take) and dirty (its
	// allocation applied): each node is refilled once, by its stamp.
	a.round++
	if len(a.stamp) != len(c.Nodes) {
		a.stamp, a.round = make([]uint32, len(c.Nodes)), 1
	}
	a.refillTouched(c)
	a.refillNodes(c, dirty)
	a.touched, a.starts, a.plan = a.touched[:0], a.starts[:0], nil
	return true
}

// nodeAlive reports whether a node counts as alive for Slurm 24.11's
// "Nodes required for job are DOWN, DRAINED or reserved" reason: neither
// DOWN nor FAIL, and not drained unless still busy (draining).
func nodeAlive(n *Node) bool {
	busy := n.State.Base() == NodeMixed || n.State.Base() == NodeAllocated
	return n.State.Base() != NodeDown && !n.State.Has(NodeFlagFail) && (!n.State.Has(NodeFlagDrain) || busy)
}

// emptySet returns an empty set for n nodes, reusing s's words.
func emptySet(s NodeSet, n int) NodeSet {
	s = NodeSet(grow([]uint64(s), (n+63)/64))
	clear(s)
	return s
}

// Clone returns an independent copy (backfill plans on copies).
func (a *Avail) Clone() *Avail {
	return &Avail{CPUs: append([]int32(nil), a.CPUs...), Mem: append([]int64(nil), a.Mem...),
		Jobs: append([]int32(nil), a.Jobs...), Gres: append([]int64(nil), a.Gres...), Kinds: a.Kinds,
		Excl: append([]bool(nil), a.Excl...), Usable: a.Usable.Clone(), Free: a.Free.Clone(),
		owner: append([]string(nil), a.owner...)}
}

// CopyFrom overwrites a with o (same cluster), without allocating (a's
// free-CPU buckets, if any, are rebuilt from o's values).
func (a *Avail) CopyFrom(o *Avail) {
	a.touchedAll = true
	defer func() {
		for i := range a.bucketOf {
			a.rebucket(i)
		}
	}()
	if a.owner != nil && o.owner != nil {
		copy(a.owner, o.owner)
	}
	copy(a.CPUs, o.CPUs)
	copy(a.Mem, o.Mem)
	copy(a.Jobs, o.Jobs)
	copy(a.Gres, o.Gres)
	copy(a.Excl, o.Excl)
	a.Usable.CopyFrom(o.Usable)
	a.Free.CopyFrom(o.Free)
}

// Take removes an allocation from the free resources.
func (a *Avail) Take(al *Alloc) { a.apply(al, -1) }

// Release gives an allocation's resources back.
func (a *Avail) Release(al *Alloc) { a.apply(al, 1) }

func (a *Avail) apply(al *Alloc, sign int) {
	if a.cl != nil && !a.touchedAll {
		a.touched = append(a.touched, al.Nodes...)
	}
	a.change(al, sign)
}

// change is apply without listing the nodes as touched.
func (a *Avail) change(al *Alloc, sign int) {
	for _, g := range al.Gres { // first: a node's pristine state reads its GRES
		ni := al.Nodes[g.Slot]
		a.Gres[int(ni)*a.Kinds+int(g.Kind)] += int64(sign) * g.Count
	}
	sg, excl, owned := int32(sign), al.Exclusive, a.owner != nil
	cpus, mem, jobs := a.CPUs, a.Mem, a.Jobs // not reloaded per node
	e := wordEdits{w: -1}
	for s, ni := range al.Nodes {
		cpus[ni] += sg * al.CPUs[s]
		mem[ni] += int64(sign) * al.Mem[s]
		jobs[ni] -= sg
		if excl {
			a.Excl[ni] = sign < 0
		}
		if owned && jobs[ni] <= 0 {
			a.owner[ni] = ""
		}
		e.node(a, int(ni))
	}
	e.flush(a)
}

// wordEdits gathers the bits of one 64-node word that change sets
// (Free, pristine, the free-CPU buckets) and writes each word once: the
// nodes of an allocation run in order, and a read-modify-write of the
// same word per node chained each node's update on the last one's.
type wordEdits struct {
	w                 int
	freeOn, freeOff   uint64
	pristOn, pristOff uint64
	fromB, toB        int32
	from, to          uint64
}

// node records node i's new Free, bucket and pristine bits (as
// updateFree would set them).
func (e *wordEdits) node(a *Avail, i int) {
	w, bit := i>>6, uint64(1)<<(uint(i)&63)
	if w != e.w {
		e.flush(a)
		e.w = w
	}
	free := a.Usable[w]&bit != 0 && a.CPUs[i] > 0 && !a.Excl[i]
	if free {
		e.freeOn |= bit
	} else {
		e.freeOff |= bit
	}
	if a.byFree == nil {
		return
	}
	b := int32(-1)
	if free {
		b = min(a.CPUs[i], int32(len(a.byFree)-1))
	}
	if old := a.bucketOf[i]; old != b {
		e.move(a, old, b, bit)
		a.bucketOf[i] = b
	}
	if free && a.isPristine(i) {
		e.pristOn |= bit
	} else {
		e.pristOff |= bit
	}
}

// move records a node's move from bucket old to bucket b (-1: none).
func (e *wordEdits) move(a *Avail, old, b int32, bit uint64) {
	if old >= 0 {
		if e.from != 0 && e.fromB != old {
			a.byFree[e.fromB][e.w] &^= e.from
			e.from = 0
		}
		e.fromB, e.from = old, e.from|bit
	}
	if b >= 0 {
		if e.to != 0 && e.toB != b {
			a.byFree[e.toB][e.w] |= e.to
			e.to = 0
		}
		e.toB, e.to = b, e.to|bit
	}
}

// flush writes the gathered bits of word e.w.
func (e *wordEdits) flush(a *Avail) {
	if e.w < 0 {
		return
	}
	w := e.w
	a.Free[w] = a.Free[w]&^e.freeOff | e.freeOn
	if a.byFree != nil {
		a.pristine[w] = a.pristine[w]&^e.pristOff | e.pristOn
		if e.from != 0 {
			a.byFree[e.fromB][w] &^= e.from
		}
		if e.to != 0 {
			a.byFree[e.toB][w] |= e.to
		}
	}
	*e = wordEdits{w: -1}
}

func (a *Avail) updateFree(i int) {
	w, bit := i>>6, uint64(1)<<(uint(i)&63)
	free := a.Usable[w]&bit != 0 && a.CPUs[i] > 0 && !a.Excl[i]
	if free {
		a.Free[w] |= bit
	} else {
		a.Free[w] &^= bit
	}
	a.placeBucket(i, free)
}
