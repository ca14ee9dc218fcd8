package sched

import "fmt"

// NewCluster indexes nodes and partitions for the scheduling loop. Each
// partition's NodeList (node indices) must be set; Nodes, TotalCPUs, TRES
// and the nodes' Partitions are derived here. Node.Gres must have one slot
// per entry of kinds (shorter slices are padded with zeros).
func NewCluster(name string, nodes []Node, parts []Partition, kinds []GresKind) (*Cluster, error) {
	c := &Cluster{Name: name, Nodes: nodes, Partitions: parts, GresKinds: kinds, DefaultPartition: -1,
		nodeByName: make(map[string]int32, len(nodes)), partByName: make(map[string]int32, len(parts)),
		featureNodes: map[string]NodeSet{}}
	for i := range c.Nodes {
		if err := c.indexNode(int32(i)); err != nil {
			return nil, err
		}
	}
	for i := range c.Partitions {
		if err := c.indexPartition(int32(i)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) indexNode(i int32) error {
	n := &c.Nodes[i]
	if _, dup := c.nodeByName[n.Name]; dup {
		return fmt.Errorf("node %q: defined twice", n.Name)
	}
	c.nodeByName[n.Name] = i
	if n.ThreadsPerCore <= 0 {
		n.ThreadsPerCore = 1
	}
	if n.CPUs <= 0 {
		n.CPUs = 1
	}
	for len(n.Gres) < len(c.GresKinds) {
		n.Gres = append(n.Gres, 0)
	}
	for len(n.AllocGres) < len(c.GresKinds) {
		n.AllocGres = append(n.AllocGres, 0)
	}
	n.Partitions = n.Partitions[:0]
	for _, f := range n.Features {
		s := c.featureNodes[f]
		if s == nil {
			s = NewNodeSet(len(c.Nodes))
			c.featureNodes[f] = s
		}
		s.Set(int(i))
	}
	return nil
}

func (c *Cluster) indexPartition(i int32) error {
	p := &c.Partitions[i]
	if _, dup := c.partByName[p.Name]; dup {
		return fmt.Errorf("partition %q: defined twice", p.Name)
	}
	c.partByName[p.Name] = i
	p.Index = i
	if p.Default && c.DefaultPartition < 0 {
		c.DefaultPartition = i
	}
	if p.PriorityJobFactor == 0 && p.PriorityTier == 0 {
		p.PriorityJobFactor, p.PriorityTier = 1, 1
	}
	p.Nodes = NewNodeSet(len(c.Nodes))
	p.TotalCPUs = 0
	tres := map[string]int64{}
	for _, ni := range p.NodeList {
		if ni < 0 || int(ni) >= len(c.Nodes) {
			return fmt.Errorf("partition %q: node index %d out of range", p.Name, ni)
		}
		if p.Nodes.Has(int(ni)) {
			continue
		}
		p.Nodes.Set(int(ni))
		n := &c.Nodes[ni]
		n.Partitions = append(n.Partitions, i)
		p.TotalCPUs += int64(n.CPUs)
		tres["cpu"] += int64(n.CPUs)
		tres["mem"] += n.RealMemory
		tres["node"]++
		for k, cnt := range n.Gres {
			if cnt > 0 {
				addGresTRES(tres, c.GresKinds[k], cnt)
			}
		}
	}
	tres["billing"] = tres["cpu"]
	p.TRES = tres
	if p.OverSubscribe.Count <= 0 {
		p.OverSubscribe.Count = 1
		if p.OverSubscribe.Mode == OverSubscribeYes || p.OverSubscribe.Mode == OverSubscribeForce {
			p.OverSubscribe.Count = 4
		}
	}
	return nil
}

// addGresTRES adds cnt of kind to a TRES vector both as the untyped name
// (gres/gpu) and, for typed kinds, as the typed name (gres/gpu:a100), the
// way Slurm accounts typed GRES.
func addGresTRES(v map[string]int64, k GresKind, cnt int64) {
	v["gres/"+k.Name] += cnt
	if k.Type != "" {
		v[k.TRESName()] += cnt
	}
}

// NodeIndex returns the index of the node with that name, or -1.
func (c *Cluster) NodeIndex(name string) int32 {
	if i, ok := c.nodeByName[name]; ok {
		return i
	}
	return -1
}

// PartitionIndex returns the index of the partition, or -1.
func (c *Cluster) PartitionIndex(name string) int32 {
	if i, ok := c.partByName[name]; ok {
		return i
	}
	return -1
}

// Partition returns the partition with that name, or nil.
func (c *Cluster) Partition(name string) *Partition {
	if i, ok := c.partByName[name]; ok {
		return &c.Partitions[i]
	}
	return nil
}

// FeatureNodes returns the set of nodes with feature f (nil if none).
func (c *Cluster) FeatureNodes(f string) NodeSet { return c.featureNodes[f] }

// GresKindIndex returns the index of (name, typ), or -1.
func (c *Cluster) GresKindIndex(name, typ string) int32 {
	for i, k := range c.GresKinds {
		if k.Name == name && k.Type == typ {
			return int32(i)
		}
	}
	return -1
}

// NodeNames returns the names of the given node indices.
func (c *Cluster) NodeNames(idx []int32) []string {
	out := make([]string, len(idx))
	for i, n := range idx {
		out[i] = c.Nodes[n].Name
	}
	return out
}

// refreshNodeState sets an up node's base state from its allocation:
// IDLE with no job, ALLOCATED when every CPU is held, MIXED otherwise.
func (n *Node) refreshNodeState() {
	b := n.State.Base()
	if b != NodeIdle && b != NodeMixed && b != NodeAllocated {
		return
	}
	nb := NodeMixed
	switch {
	case n.Jobs == 0:
		nb = NodeIdle
	case n.AllocCPUs >= n.CPUs || n.ExclusiveJob != 0:
		nb = NodeAllocated
	}
	n.State = n.State&^nodeBaseMask | nb
}
