package sched

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// bfSlot is one entry of backfill's node-space map: from t (nanoseconds
// after the cycle's now) until the next slot's t, the nodes in free are
// wholly free: no running job and no reservation holds any part of them.
type bfSlot struct {
	t    int64
	free NodeSet
	// sum has bit w set when word w of free may hold a node (a summary:
	// dense maps have few free nodes, and the search visits only these
	// words).
	sum []uint64
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
	words     int
	// busy holds, per node, the sorted, disjoint intervals in which it is
	// not wholly free (running jobs, starts, reservations): the same
	// information as the slots, by node, so that a few candidate nodes can
	// be checked for a whole span by binary search.
	busy [][]ival
	// byNode is set when busy is kept (maps of more than bfSmallWords).
	byNode    bool
	wordMasks []wordMask // occupy's scratch
	// slab is where slot sets are carved from, 256 at a time, so that a
	// map of thousands of slots is a handful of allocations; the slabs
	// come from pool, the State's, reused from cycle to cycle.
	slab []uint64
	pool *bfSlabs
	// changes is newBFMap's scratch (kept with a pooled map).
	changes []bfChange
	keys    []uint64 // sortChanges' scratch
}

// bfChange is a node becoming wholly free at t.
type bfChange struct {
	t    int64
	node int32
}

// bfSlabs are the slabs backfill maps carve their node sets from, kept by
// the State: a cycle's maps take them in turn (next), and the next cycle
// takes them again from the first, so a cycle allocates none once the
// pool is large enough. Nothing carved from a slab outlives its cycle.
type bfSlabs struct {
	slabs [][]uint64
	next  int
	// ivalSlabs are the maps' busy-interval lists, taken in turn (nextIval).
	ivalSlabs [][]ival
	nextIval  int
	// maps are the maps themselves, taken in turn (nextMap), their
	// per-node tables and slot lists reused.
	maps    []*bfMap
	nextMap int
	// hint is the last sort of the change points (sortKeys).
	hint sortHint
	// acc, accSum, mask and perPart are a backfill pass's tables of the
	// same names (newBackfill).
	acc, mask NodeSet
	accSum    []uint64
	perPart   []int
	// arena is the last pass's node arena: what it handed out (planned
	// nodes, kept by the plan and the jobs) lies below its length and is
	// never written again; the next pass appends above it.
	arena []int32
	// busy is busyUntil's table, need and dmin suffixNeed's: rewritten
	// by each use, read only until the next.
	busy, need, dmin []int64
	// bf is the last pass's working state, reused (a pass allocated it).
	bf *backfill
	// recNeed and recDur are suffixNeed's per-record tables, resvEnds
	// lastCandidate's scratch.
	recNeed, recDur []int64
	resvEnds        []resvCPUs
	// freeAt is the pass's copy of busyUntil's table for the whole
	// cluster (exactStart reads it).
	freeAt []int64
}

// bfMap returns an empty map for nodes nodes: a pooled one with its
// tables reset (a nil pool: a fresh one). resvFirst is left for
// newBFMap to fill.
func (p *bfSlabs) bfMap(nodes int) *bfMap {
	if p == nil {
		return &bfMap{resvFirst: make([]int64, nodes), hasResv: NewNodeSet(nodes), busy: make([][]ival, nodes)}
	}
	if p.nextMap == len(p.maps) {
		p.maps = append(p.maps, &bfMap{})
	}
	m := p.maps[p.nextMap]
	p.nextMap++
	words := (nodes + 63) / 64
	*m = bfMap{slots: m.slots[:0], resvFirst: grow(m.resvFirst, nodes), hasResv: NodeSet(grow(m.hasResv, words)),
		busy: grow(m.busy, nodes), wordMasks: m.wordMasks[:0], changes: m.changes[:0], keys: m.keys}
	clear(m.hasResv)
	return m
}

// grow returns s resliced to n elements, reallocated when too small
// (contents stale).
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// bfIvals is the busy intervals per node a map has room for at first.
const bfIvals = 4

// ivals returns n intervals (content stale) for a map's busy lists, from
// the pool's interval slabs in turn like get.
func (p *bfSlabs) ivals(n int) []ival {
	if p == nil {
		return make([]ival, n)
	}
	if p.nextIval < len(p.ivalSlabs) && len(p.ivalSlabs[p.nextIval]) >= n {
		p.nextIval++
		return p.ivalSlabs[p.nextIval-1][:n]
	}
	s := make([]ival, n)
	if p.nextIval < len(p.ivalSlabs) {
		p.ivalSlabs[p.nextIval] = s
	} else {
		p.ivalSlabs = append(p.ivalSlabs, s)
	}
	p.nextIval++
	return s
}

// get returns a slab of at least size words (its content is stale).
func (p *bfSlabs) get(size int) []uint64 {
	if p == nil {
		return make([]uint64, size)
	}
	if p.next < len(p.slabs) && len(p.slabs[p.next]) >= size {
		p.next++
		return p.slabs[p.next-1]
	}
	s := make([]uint64, size)
	if p.next < len(p.slabs) {
		p.slabs[p.next] = s
	} else {
		p.slabs = append(p.slabs, s)
	}
	p.next++
	return s
}

// wordMask is the nodes of one word of a node set.
type wordMask struct {
	w    int
	mask uint64
}

// ival is a half-open interval of offsets.
type ival struct{ s, e int64 }

// addBusy merges [s, e) into node n's busy intervals.
func (m *bfMap) addBusy(n int32, s, e int64) {
	iv := m.busy[n]
	lo, hi := 0, len(iv)
	for lo < hi { // first interval ending at or after s
		mid := (lo + hi) / 2
		if iv[mid].e < s {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	j := lo
	for j < len(iv) && iv[j].s <= e {
		s, e = min(s, iv[j].s), max(e, iv[j].e)
		j++
	}
	m.busy[n] = slices.Replace(iv, lo, j, ival{s, e})
}

// freeDuring reports whether node n is wholly free over [t, end).
func (m *bfMap) freeDuring(n int32, t, end int64) bool {
	iv := m.busy[n]
	lo, hi := 0, len(iv)
	for lo < hi { // first interval ending after t
		mid := (lo + hi) / 2
		if iv[mid].e <= t {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo == len(iv) || iv[lo].s >= end
}

// newSet returns an empty node set carved from the slab.
func (m *bfMap) newSet() NodeSet {
	return NodeSet(m.carve(m.words))
}

func (m *bfMap) carve(n int) []uint64 {
	if len(m.slab) < n {
		m.slab = m.pool.get(max(m.words, 64) * 256)
	}
	s := m.slab[:n:n]
	clear(s) // a pooled slab holds an earlier cycle's sets
	m.slab = m.slab[n:]
	return s
}

// sumWords is the length of a word summary.
func (m *bfMap) sumWords() int { return (m.words + 63) / 64 }

// summarize returns the summary of s: bit w set when s[w] != 0.
func (m *bfMap) summarize(s NodeSet) []uint64 {
	sum := m.carve(m.sumWords())
	for w, v := range s {
		if v != 0 {
			sum[w>>6] |= 1 << (uint(w) & 63)
		}
	}
	return sum
}

// newSlot returns a slot at t with a copy of src's free set.
func (m *bfMap) newSlot(t int64, src *bfSlot) bfSlot {
	ns := m.newSet()
	ns.CopyFrom(src.free)
	sum := m.carve(m.sumWords())
	copy(sum, src.sum)
	return bfSlot{t: t, free: ns, sum: sum}
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
// Its node sets are carved from pool's slabs (nil: fresh ones).
func newBFMap(pool *bfSlabs, nodes int, nowNs, res int64, busy []int64) *bfMap {
	m := pool.bfMap(nodes)
	m.pool, m.nowNs, m.res, m.words = pool, nowNs, max(res, 1), (nodes+63)/64
	m.byNode = m.words > bfSmallWords
	if m.byNode {
		m.buildBusy(pool, busy)
	}
	for i := range m.resvFirst {
		m.resvFirst[i] = math.MaxInt64
	}
	first := m.newSet()
	changes := m.changeList(busy, first)
	m.slots = append(m.slots, bfSlot{t: 0, free: first, sum: m.summarize(first)})
	for _, ch := range changes {
		last := &m.slots[len(m.slots)-1]
		if ch.t != last.t {
			m.slots = append(m.slots, m.newSlot(ch.t, last))
			last = &m.slots[len(m.slots)-1]
		}
		last.free.Set(int(ch.node))
		w := int(ch.node) >> 6
		last.sum[w>>6] |= 1 << (uint(w) & 63)
	}
	return m
}

// changeList sets in first the nodes wholly free now (busy 0) and returns
// the others' change points (busy > 0: free from alignUp(busy)) in time
// order; the order of equal times does not matter, they set bits of one
// slot.
func (m *bfMap) changeList(busy []int64, first NodeSet) []bfChange {
	changes := m.changes[:0]
	defer func() { m.changes = changes }()
	if keys, nb, ok := m.changeKeys(busy, first); ok {
		qNever, mask := uint64(1)<<(64-nb)-1, uint64(1)<<nb-1
		for _, k := range keys {
			t := bfNever
			if q := k >> nb; q != qNever {
				t = int64(q)*m.res - m.nowNs
			}
			changes = append(changes, bfChange{t, int32(k & mask)})
		}
		return changes
	}
	for i, b := range busy {
		switch {
		case b == 0:
			first.Set(i)
		case b > 0:
			changes = append(changes, bfChange{m.alignUp(b), int32(i)})
		}
	}
	slices.SortFunc(changes, func(a, b bfChange) int { return cmp.Compare(a.t, b.t) })
	return changes
}

// changeKeys is changeList through packed integer keys, several times
// faster than a sort with a comparison function (it was most of building
// a small cluster's map): a change time is a bf_resolution boundary
// (alignUp) or bfNever, so it is a whole number q of resolutions since the
// epoch, one division per node; the key is q above the node index, unique
// per change, so every sort gives the same order. It returns the sorted
// keys and the node bits, or false (first untouched) when the keys would
// not fit in 64 bits.
func (m *bfMap) changeKeys(busy []int64, first NodeSet) ([]uint64, uint, bool) {
	nb := uint(bits.Len32(uint32(len(busy))))
	qNever := uint64(1)<<(64-nb) - 1 // above the q of any aligned time
	// q must be at least 1 (sortKeys reads a 0 key as none), and
	// nowNs+busy+res must not overflow
	if m.nowNs < m.res || m.nowNs > math.MaxInt64-bfNever-m.res || uint64((m.nowNs+bfNever)/m.res) >= qNever {
		return nil, 0, false
	}
	keys := m.keys[:0]
	for i, b := range busy {
		switch {
		case b == 0:
			first.Set(i)
		case b > 0:
			q := qNever
			if b < bfNever {
				q = uint64((m.nowNs + b + m.res - 1) / m.res) // alignUp(b) = q*res - nowNs
			}
			keys = append(keys, q<<nb|uint64(i))
		}
	}
	m.keys = keys
	m.pool.sortKeys(keys, len(busy))
	return keys, nb, true
}

// sortKeys sorts the change keys of a map of nodes nodes. Between two
// passes most nodes keep their key (the same running jobs end at the same
// time), so the keys that equal their node's key of the last sort are
// taken in the last sort's order, already sorted; only the others (nodes
// whose jobs changed) are sorted, and the two lists merged.
func (p *bfSlabs) sortKeys(keys []uint64, nodes int) {
	if p == nil {
		slices.Sort(keys)
		return
	}
	h := &p.hint
	if len(h.last) != nodes {
		h.last, h.cur, h.order = make([]uint64, nodes), make([]uint64, nodes), h.order[:0]
	}
	mask := uint64(1)<<bits.Len32(uint32(nodes)) - 1
	for _, k := range keys {
		h.cur[k&mask] = k // keys are never 0: q >= 1
	}
	same, other := h.same[:0], h.other[:0]
	for _, n := range h.order {
		if k := h.cur[n]; k != 0 && k == h.last[n] {
			same = append(same, k)
			h.cur[n] = 0
		}
	}
	for _, k := range keys {
		if n := k & mask; h.cur[n] != 0 {
			other = append(other, k)
			h.cur[n] = 0
		}
	}
	slices.Sort(other)
	mergeKeys(keys, same, other)
	h.same, h.other, h.order = same, other, h.order[:0]
	for _, k := range keys {
		h.order = append(h.order, int32(k&mask))
		h.last[k&mask] = k
	}
}

// mergeKeys merges the sorted lists a and b into dst.
func mergeKeys(dst, a, b []uint64) {
	i, j := 0, 0
	for k := range dst {
		if j == len(b) || i < len(a) && a[i] < b[j] {
			dst[k] = a[i]
			i++
		} else {
			dst[k] = b[j]
			j++
		}
	}
}

// sortHint is the last sort of a map's change keys (bfSlabs.sortKeys):
// the nodes in key order and each node's key; cur, same and other are
// scratch.
type sortHint struct {
	order       []int32
	last, cur   []uint64
	same, other []uint64
}

// buildBusy fills the per-node busy intervals from busy (see newBFMap).
func (m *bfMap) buildBusy(pool *bfSlabs, busy []int64) {
	// room for bfIvals intervals per node in one (pooled) allocation, so
	// that reserving on a node rarely grows its list
	ivs := pool.ivals(len(busy) * bfIvals)
	for i, b := range busy {
		iv := ivs[i*bfIvals : i*bfIvals : (i+1)*bfIvals]
		switch {
		case b < 0:
			iv = append(iv, ival{0, bfNever})
		case b > 0:
			iv = append(iv, ival{0, m.alignUp(b)})
		}
		m.busy[i] = iv
	}
}

// bfSmallWords is the node-set size (in words) up to which a map keeps no
// per-node busy intervals: on such a map ANDing the slots of a span costs
// a few words per slot, less than keeping and searching the intervals.
var bfSmallWords = 4 // a variable so that tests can run both search paths

// slotAt returns the index of the slot holding offset t.
func (m *bfMap) slotAt(t int64) int {
	lo, hi := 0, len(m.slots) // first slot starting after t (sort.Search, without its closure)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if m.slots[mid].t > t {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return max(lo-1, 0)
}

// split makes t a slot boundary and returns the index of the slot that
// starts at t.
func (m *bfMap) split(t int64) int {
	i := m.slotAt(t)
	if m.slots[i].t == t {
		return i
	}
	ns := m.newSlot(t, &m.slots[i])
	m.slots = append(m.slots, bfSlot{})
	copy(m.slots[i+2:], m.slots[i+1:])
	m.slots[i+1] = ns
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
	if m.byNode {
		for _, n := range nodes {
			m.addBusy(n, s, min(e, bfNever))
		}
	}
	// group the nodes by word: a job's nodes are usually neighbours, so a
	// slot costs one AND-NOT per word, not one per node
	wm := m.wordMasks[:0]
	for _, n := range nodes {
		w, bit := int(n)>>6, uint64(1)<<(uint(n)&63)
		if l := len(wm); l > 0 && wm[l-1].w == w {
			wm[l-1].mask |= bit
		} else {
			wm = append(wm, wordMask{w, bit})
		}
	}
	m.wordMasks = wm
	for x := i; x < k; x++ {
		f, sum := m.slots[x].free, m.slots[x].sum
		for _, e := range wm {
			if f[e.w] &^= e.mask; f[e.w] == 0 {
				sum[e.w>>6] &^= 1 << (uint(e.w) & 63)
			}
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
