package dataparser

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Sinfo is the data of `sinfo --json`: one record per partition and group
// of its nodes that sinfo would print on one line (same state, shape,
// memory, weight, features, GRES and reason), partitions in configuration
// order, groups in sinfo's "-t" order: decreasing rank (Slurm's node_state
// value), then node order.
func Sinfo(nodes []api.NodeRecord, parts []api.PartitionRecord, rank func(*api.NodeRecord) uint32) Obj {
	byName := map[string]*api.NodeRecord{}
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	list := []any{}
	for i := range parts {
		p := &parts[i]
		var order []string
		groups := map[string][]*api.NodeRecord{}
		for _, name := range p.NodeNames {
			n := byName[name]
			if n == nil {
				continue
			}
			k := sinfoKey(n)
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], n)
		}
		slices.SortStableFunc(order, func(a, b string) int {
			return cmp.Compare(rank(groups[b][0]), rank(groups[a][0]))
		})
		for _, k := range order {
			list = append(list, sinfoRecord(groups[k], p))
		}
	}
	return Obj{{"sinfo", list}}
}

func sinfoKey(n *api.NodeRecord) string {
	return fmt.Sprint(n.State, n.CPUs, n.Sockets, n.Cores, n.Threads, n.RealMemory, n.Weight, n.Features, n.Gres, n.GresUsed, n.Reason)
}

// sinfoRecord is one group: node and CPU counts by allocation, and the
// minimum and maximum of what varies by node.
func sinfoRecord(g []*api.NodeRecord, p *api.PartitionRecord) Obj {
	first := g[0]
	var alloc, idle, other, cAlloc, cIdle, cOther, cTotal int
	var memAlloc int64
	names := []any{}
	load, free := minMax{}, minMax{}
	for _, n := range g {
		names = append(names, n.Name)
		cTotal += n.CPUs
		memAlloc += n.AllocMem
		switch st := NodeState(n.State); {
		case nodeOther(st):
			// A drained or down node's allocated CPUs stay allocated,
			// the rest are other (oracle: n2 draining with 8 of 8 CPUs
			// allocated prints cpus allocated 8, other 0).
			other++
			cAlloc += n.AllocCPUs
			cOther += n.CPUs - n.AllocCPUs
		case n.AllocCPUs > 0:
			alloc++
			cAlloc += n.AllocCPUs
			cIdle += n.CPUs - n.AllocCPUs
		default:
			idle++
			cIdle += n.CPUs
		}
		load.add(cpuLoad(n))
		free.add(n.FreeMem)
	}
	freeObj := Obj{{"minimum", Unset()}, {"maximum", Unset()}}
	if first.LoadKnown {
		freeObj = Obj{{"minimum", N(free.min)}, {"maximum", N(free.max)}}
	}
	return Obj{
		{"port", 0},
		{"node", Obj{{"state", NodeState(first.State)}}},
		{"nodes", Obj{{"allocated", alloc}, {"idle", idle}, {"other", other}, {"total", len(g)},
			{"hostnames", []any{}}, {"addresses", []any{}}, {"nodes", names}}},
		{"cpus", Obj{{"allocated", cAlloc}, {"idle", cIdle}, {"other", cOther}, {"total", cTotal},
			{"minimum", first.CPUs}, {"maximum", first.CPUs},
			{"load", Obj{{"minimum", load.min}, {"maximum", load.max}}},
			{"per_node", Obj{{"max", countLimit(p.MaxCPUsPerNode)}}}}},
		{"sockets", minMaxObj(first.Sockets)},
		{"cores", minMaxObj(first.Cores)},
		{"threads", minMaxObj(first.Threads)},
		{"disk", minMaxObj(0)},
		{"memory", Obj{{"minimum", first.RealMemory}, {"maximum", first.RealMemory}, {"free", freeObj}, {"allocated", memAlloc}}},
		{"weight", minMaxObj(int(first.Weight))},
		{"features", Obj{{"total", first.Features}, {"active", first.Features}}},
		{"gres", Obj{{"total", first.Gres}, {"used", first.GresUsed}}},
		{"cluster", ""},
		{"comment", ""},
		{"extra", ""},
		{"reason", Obj{{"description", first.Reason}, {"time", Time(first.ReasonTime).N}, {"user", first.ReasonUser}}},
		{"reservation", ""},
		{"resource_spec", Obj{{"cpus", ""}, {"memory", 0}}},
		{"partition", Partition(p)},
	}
}

// nodeOther reports a node whose CPUs sinfo counts as "other": down,
// drained or draining, not responding.
func nodeOther(st []any) bool {
	for _, s := range st {
		switch s {
		case "DOWN", "DRAIN", "DRAINED", "DRAINING", "NOT_RESPONDING", "FAIL", "FUTURE":
			return true
		}
	}
	return false
}

type minMax struct {
	min, max int64
	seen     bool
}

func (m *minMax) add(v int64) {
	if !m.seen || v < m.min {
		m.min = v
	}
	if !m.seen || v > m.max {
		m.max = v
	}
	m.seen = true
}

func minMaxObj(v int) Obj { return Obj{{"minimum", v}, {"maximum", v}} }
