package pmi

import "sync"

// Fence gathers the nodes' pairs of each fence where they meet (srun): a
// fence is complete when every node has sent its part; the union is then
// what every node gets back.
type Fence struct {
	mu    sync.Mutex
	nodes int
	all   map[string]string
	in    map[int]int // fence seq -> nodes arrived
}

// NewFence gathers for a step of nodes nodes.
func NewFence(nodes int) *Fence {
	return &Fence{nodes: nodes, all: map[string]string{}, in: map[int]int{}}
}

// Add records one node's pairs of fence seq; when that completes the
// fence it returns every pair put so far (a copy) and true.
func (f *Fence) Add(seq int, pairs map[string]string) (map[string]string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, v := range pairs {
		f.all[k] = v
	}
	f.in[seq]++
	if f.in[seq] < f.nodes {
		return nil, false
	}
	delete(f.in, seq)
	out := make(map[string]string, len(f.all))
	for k, v := range f.all {
		out[k] = v
	}
	return out, true
}
