package conf

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/tres"
)

func minutes(n int64) time.Duration { return time.Duration(n) * time.Minute }

// parseWeights reads TRESBillingWeights / PriorityWeightTRES.
func parseWeights(v string) (tres.Weights, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	return tres.ParseWeights(v)
}

// Node returns the node with that name, or nil. A Config built as a
// literal (in tests) has no index and is searched linearly.
func (c *Config) Node(name string) *Node {
	if c.nodeIndex != nil {
		return c.nodeIndex[name]
	}
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Partition returns the partition with that name, or nil.
func (c *Config) Partition(name string) *Partition {
	if name == "" {
		return nil
	}
	if c.partIndex != nil {
		return c.partIndex[name]
	}
	for _, p := range c.Partitions {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Default returns the default partition, or nil when none is marked.
func (c *Config) Default() *Partition { return c.Partition(c.DefaultPartition) }

// NodeSet returns the node set with that name, or nil.
func (c *Config) NodeSet(name string) *NodeSet {
	for _, ns := range c.NodeSets {
		if ns.Name == name {
			return ns
		}
	}
	return nil
}

// TRES returns the node's trackable resources: cpu, mem (MB), node=1,
// billing (= CPUs, Slurm's default), and each GRES both untyped
// (gres/gpu) and, when typed, by type (gres/gpu:a100).
func (n *Node) TRES() tres.Vector {
	v := tres.Vector{}
	n.addTRES(v)
	return v
}

// addTRES adds the node's TRES to v without allocating a vector per node.
func (n *Node) addTRES(v tres.Vector) {
	v[tres.CPU] += int64(n.CPUs)
	v[tres.Mem] += n.RealMemory
	v[tres.Node]++
	v[tres.BillingTRES] += int64(n.CPUs)
	for _, g := range n.Gres {
		v[tres.GresName(g.Name, "")] += g.Count
		if g.Type != "" {
			v[tres.GresName(g.Name, g.Type)] += g.Count
		}
	}
}

// GresCount returns how many of a GRES the node has: name alone ("gpu")
// counts every type, name and type ("gpu", "a100") that type only.
func (n *Node) GresCount(name, typ string) int64 {
	var total int64
	for _, g := range n.Gres {
		if strings.EqualFold(g.Name, name) && (typ == "" || strings.EqualFold(g.Type, typ)) {
			total += g.Count
		}
	}
	return total
}

// TotalTRES sums every node's TRES and adds the cluster's licenses
// (license/NAME): the cluster TRES Slurm reports (cpu, mem, node, billing,
// gres/gpu, gres/gpu:TYPE, ...).
func (c *Config) TotalTRES() tres.Vector {
	total := c.nodesTRES(c.Nodes)
	for _, l := range c.Licenses {
		total["license/"+l.Name] += l.Count
	}
	return total
}

// PartitionTRES sums the TRES of a partition's nodes; billing is computed
// from the partition's TRESBillingWeights when it has them (the totals the
// TRES priority factors are normalised against).
func (c *Config) PartitionTRES(p *Partition) tres.Vector {
	nodes := make([]*Node, 0, len(p.Nodes))
	for _, name := range p.Nodes {
		if n := c.Node(name); n != nil {
			nodes = append(nodes, n)
		}
	}
	v := c.nodesTRES(nodes)
	if len(p.BillingWeights) > 0 {
		delete(v, tres.BillingTRES)
		b := tres.Billing(v, p.BillingWeights, c.billingFlags())
		v[tres.BillingTRES] = int64(math.Floor(b))
	}
	return v
}

func (c *Config) nodesTRES(nodes []*Node) tres.Vector {
	v := tres.Vector{tres.CPU: 0, tres.Mem: 0, tres.Node: 0, tres.BillingTRES: 0}
	for _, n := range nodes {
		n.addTRES(v)
	}
	return v
}

func (c *Config) billingFlags() tres.BillingFlags {
	var f tres.BillingFlags
	if c.Priority.Flags.Has(FlagMaxTRES) {
		f |= tres.MaxTRES
	}
	if c.Priority.Flags.Has(FlagMaxTRESGres) {
		f |= tres.MaxTRESGres
	}
	return f
}

// NodeNames returns every node name in configuration order.
func (c *Config) NodeNames() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Name
	}
	return out
}

// nodeSetSpec and downSpec wait for all nodes to be known.
type nodeSetSpec struct {
	ns      NodeSet
	expr    string
	exprPos Pos
}

type downSpec struct {
	d    DownNodes
	expr string
}

// nodeSetLine handles NodeSet=NAME Nodes=... Feature=... lines.
func (p *parser) nodeSetLine(st stmt) {
	s := nodeSetSpec{ns: NodeSet{Name: st.Pairs[0].Value, Pos: st.Pos}, exprPos: st.Pos}
	if s.ns.Name == "" {
		p.errorf(st.Pos, "NodeSet", "empty name")
		return
	}
	for _, pr := range st.Pairs[1:] {
		switch strings.ToLower(pr.Key) {
		case "nodes":
			s.expr, s.exprPos = pr.Value, pr.Pos
		case "feature":
			s.ns.Feature = pr.Value
		default:
			p.errorf(pr.Pos, "NodeSet="+s.ns.Name+": "+pr.Key, "unrecognized key")
			return
		}
	}
	p.nodeSets = append(p.nodeSets, s)
}

// downNodesLine handles DownNodes=... State=... Reason=... lines.
func (p *parser) downNodesLine(st stmt) {
	s := downSpec{d: DownNodes{State: "DOWN", Pos: st.Pos}, expr: st.Pairs[0].Value}
	for _, pr := range st.Pairs[1:] {
		switch strings.ToLower(pr.Key) {
		case "state":
			v := strings.ToUpper(pr.Value)
			if !containsFold([]string{"DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE"}, v) {
				p.errorf(pr.Pos, "DownNodes: State", "invalid state %s (DOWN, DRAIN, FAIL, FAILING or FUTURE)", quote(pr.Value))
				return
			}
			s.d.State = v
		case "reason":
			s.d.Reason = pr.Value
		default:
			p.errorf(pr.Pos, "DownNodes: "+pr.Key, "unrecognized key")
			return
		}
	}
	p.downs = append(p.downs, s)
}

func (p *parser) resolveNodeSets() {
	for _, s := range p.nodeSets {
		ns := s.ns
		seen := map[string]bool{}
		if s.expr != "" {
			names, err := p.knownNodes(s.expr)
			if err != nil {
				p.errorf(s.exprPos, "NodeSet="+ns.Name+": Nodes", "%v", err)
				continue
			}
			for _, n := range names {
				seen[n] = true
			}
		}
		if ns.Feature != "" {
			for _, n := range p.cfg.Nodes {
				if containsFold(n.Features, ns.Feature) {
					seen[n.Name] = true
				}
			}
		}
		for _, n := range p.cfg.Nodes {
			if seen[n.Name] {
				ns.Nodes = append(ns.Nodes, n.Name)
			}
		}
		p.cfg.NodeSets = append(p.cfg.NodeSets, &ns)
	}
}

func (p *parser) resolveDownNodes() {
	for _, s := range p.downs {
		d := s.d
		names, err := p.knownNodes(s.expr)
		if err != nil {
			p.errorf(d.Pos, "DownNodes", "%v", err)
			continue
		}
		d.Nodes = names
		for _, name := range names {
			n := p.cfg.nodeIndex[name]
			n.State, n.Reason = d.State, d.Reason
		}
		p.cfg.DownNodes = append(p.cfg.DownNodes, &d)
	}
}

// knownNodes expands a host list whose names must all be defined nodes.
func (p *parser) knownNodes(expr string) ([]string, error) {
	names, err := hostlist.Expand(expr)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if p.cfg.nodeIndex[n] == nil {
			return nil, fmt.Errorf("unknown node %s (no NodeName line defines it)", quote(n))
		}
	}
	return names, nil
}
