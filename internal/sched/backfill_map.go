package sched

import (
	"math"
	"math/bits"
	"sort"
)

// bfSlot is one entry of backfill's node-space map: from t (nanoseconds
// after the cycle's now) until the next slot's t, the nodes in free are
// wholly free: no running job and no reservation holds any part of them.
type bfSlot struct {
	t    int64
	free NodeSet
}

// bfMap is backfill's availability profile, Slurm's node-space map
// (backfill.c): a time-ordered list of change points, each with the set of
// nodes wholly free until the next one. It is built from the running jobs'
// expected ends (start + time limit + time suspended), rounded up to
// bf_resolution, and then receives one whole-node reservation per blocked
// job, rounded outward to bf_resolution, exactly as Slurm reserves whole
// nodes. Fine-grained (partial node) availability is only used for "start
// now" decisions, which read the cycle's Avail.
type bfMap struct {
	slots []bfSlot
	nowNs int64 // the cycle's now, Unix nanoseconds
	res   int64 // bf_resolution in nanoseconds
	// resvFirst is, per node, the earliest start of a reservation on it
	// (math.MaxInt64 when none): a job started now on the node must end
	// before it.
	resvFirst []int64
	hasResv   NodeSet
	spare     []NodeSet
	words     int
	// slab is where slot sets are carved from, 256 at a time, so that a
	// map of thousands of slots is a handful of allocations.
	slab []uint64
}

// newSet returns an empty node set carved from the slab.
func (m *bfMap) newSet() NodeSet {
	if len(m.slab) < m.words {
		m.slab = make([]uint64, m.words*256)
	}
	s := NodeSet(m.slab[:m.words:m.words])
	m.slab = m.slab[m.words:]
	return s
}

// alignUp rounds an offset up to the next bf_resolution boundary (absolute
// time), as Slurm rounds reservation ends.
func (m *bfMap) alignUp(off int64) int64 {
	if off >= math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	abs := m.nowNs + off
	r := abs % m.res
	if r == 0 {
		return off
	}
	return off + m.res - r
}

// newBFMap builds the map: busy[n] is the offset at which node n becomes
// wholly free (0 = free now, negative = never: not usable).
func newBFMap(nodes int, nowNs, res int64, busy []int64) *bfMap {
	m := &bfMap{nowNs: nowNs, res: max(res, 1), words: (nodes + 63) / 64,
		resvFirst: make([]int64, nodes), hasResv: NewNodeSet(nodes)}
	for i := range m.resvFirst {
		m.resvFirst[i] = math.MaxInt64
	}
	type change struct {
		t    int64
		node int32
	}
	changes := make([]change, 0, nodes)
	first := NewNodeSet(nodes)
	for i, b := range busy {
		switch {
		case b == 0:
			first.Set(i)
		case b > 0:
			changes = append(changes, change{m.alignUp(b), int32(i)})
		}
	}
	sort.Slice(changes, func(a, b int) bool { return changes[a].t < changes[b].t })
	m.slots = append(m.slots, bfSlot{t: 0, free: first})
	for _, ch := range changes {
		last := &m.slots[len(m.slots)-1]
		if ch.t != last.t {
			ns := m.newSet()
			ns.CopyFrom(last.free)
			m.slots = append(m.slots, bfSlot{t: ch.t, free: ns})
			last = &m.slots[len(m.slots)-1]
		}
		last.free.Set(int(ch.node))
	}
	return m
}

// slotAt returns the index of the slot holding offset t.
func (m *bfMap) slotAt(t int64) int {
	i := sort.Search(len(m.slots), func(i int) bool { return m.slots[i].t > t })
	return max(i-1, 0)
}

// split makes t a slot boundary and returns the index of the slot that
// starts at t.
func (m *bfMap) split(t int64) int {
	i := m.slotAt(t)
	if m.slots[i].t == t {
		return i
	}
	var ns NodeSet
	if n := len(m.spare); n > 0 {
		ns, m.spare = m.spare[n-1], m.spare[:n-1]
		ns.CopyFrom(m.slots[i].free)
	} else {
		ns = m.newSet()
		ns.CopyFrom(m.slots[i].free)
	}
	m.slots = append(m.slots, bfSlot{})
	copy(m.slots[i+2:], m.slots[i+1:])
	m.slots[i+1] = bfSlot{t: t, free: ns}
	return i + 1
}

// occupy takes nodes out of the map over [s, e): they are not wholly free
// then (a job runs or is reserved there).
func (m *bfMap) occupy(nodes []int32, s, e int64) {
	i := m.split(s)
	k := len(m.slots)
	if e < math.MaxInt64/2 {
		k = m.split(e)
	}
	for x := i; x < k; x++ {
		f := m.slots[x].free
		for _, n := range nodes {
			f.Clear(int(n))
		}
	}
}

// reserve records a whole-node reservation of nodes over [s, e).
func (m *bfMap) reserve(nodes []int32, s, e int64) {
	m.occupy(nodes, s, e)
	for _, n := range nodes {
		m.hasResv.Set(int(n))
		m.resvFirst[n] = min(m.resvFirst[n], s)
	}
}

// dropReserved clears from mask the nodes reserved before offset end (a
// job started now and running until end would delay those reservations).
func (m *bfMap) dropReserved(mask NodeSet, end int64) {
	for wi, w := range mask {
		w &= m.hasResv[wi]
		for w != 0 {
			b := bits.TrailingZeros64(w)
			w &= w - 1
			n := wi<<6 + b
			if m.resvFirst[n] < end {
				mask.Clear(n)
			}
		}
	}
}
