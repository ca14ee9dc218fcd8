package sched

import "math/bits"

// NodeSet is a set of node indices (a bitset over Cluster.Nodes). Sets are
// sized for one cluster; the word-wise operations below are what keeps a
// scheduling pass over 10,000 nodes and 100,000 jobs cheap: "the partition's
// nodes that are still available this pass" is one AND per 64 nodes.
type NodeSet []uint64

// NewNodeSet returns an empty set able to hold n node indices.
func NewNodeSet(n int) NodeSet { return make(NodeSet, (n+63)/64) }

// Set adds node i.
func (s NodeSet) Set(i int) { s[i>>6] |= 1 << (uint(i) & 63) }

// Clear removes node i.
func (s NodeSet) Clear(i int) { s[i>>6] &^= 1 << (uint(i) & 63) }

// Has reports whether node i is in the set.
func (s NodeSet) Has(i int) bool {
	w := i >> 6
	return w < len(s) && s[w]&(1<<(uint(i)&63)) != 0
}

// Count returns the number of nodes in the set.
func (s NodeSet) Count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// AndCount returns the number of nodes in both s and o.
func (s NodeSet) AndCount(o NodeSet) int {
	n := 0
	for i, w := range s[:min(len(s), len(o))] {
		n += bits.OnesCount64(w & o[i])
	}
	return n
}

// Empty reports whether the set holds no node.
func (s NodeSet) Empty() bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

// Clone returns an independent copy.
func (s NodeSet) Clone() NodeSet { return append(NodeSet(nil), s...) }

// CopyFrom overwrites s with o (same size).
func (s NodeSet) CopyFrom(o NodeSet) { copy(s, o) }

// And keeps only the nodes also in o.
func (s NodeSet) And(o NodeSet) {
	for i := range s {
		if i < len(o) {
			s[i] &= o[i]
		} else {
			s[i] = 0
		}
	}
}

// AndNot removes the nodes in o.
func (s NodeSet) AndNot(o NodeSet) {
	for i := range s {
		if i < len(o) {
			s[i] &^= o[i]
		}
	}
}

// Or adds the nodes in o.
func (s NodeSet) Or(o NodeSet) {
	for i := range s {
		if i < len(o) {
			s[i] |= o[i]
		}
	}
}

// Intersects reports whether s and o share a node.
func (s NodeSet) Intersects(o NodeSet) bool {
	for i := range s {
		if i < len(o) && s[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// IntersectsAnd reports whether s, a and b share a node, without allocating.
func (s NodeSet) IntersectsAnd(a, b NodeSet) bool {
	for i := range s {
		if s[i]&a[i]&b[i] != 0 {
			return true
		}
	}
	return false
}

// IntersectsAndNot reports whether s and a share a node that is not in
// b, without allocating.
func (s NodeSet) IntersectsAndNot(a, b NodeSet) bool {
	for i := range s {
		if s[i]&a[i]&^b[i] != 0 {
			return true
		}
	}
	return false
}

// SubsetOf reports whether every node of s is in o.
func (s NodeSet) SubsetOf(o NodeSet) bool {
	for i := range s {
		var ow uint64
		if i < len(o) {
			ow = o[i]
		}
		if s[i]&^ow != 0 {
			return false
		}
	}
	return true
}

// ForEach calls f for every node index in ascending order; f returns false
// to stop early.
func (s NodeSet) ForEach(f func(i int) bool) {
	for wi, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			if !f(wi<<6 + b) {
				return
			}
			w &= w - 1
		}
	}
}

// Indices appends the node indices of s to dst in ascending order.
func (s NodeSet) Indices(dst []int32) []int32 {
	for wi, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			dst = append(dst, int32(wi<<6+b))
			w &= w - 1
		}
	}
	return dst
}
