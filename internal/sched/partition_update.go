package sched

import (
	"errors"
	"fmt"
	"slices"
)

// Partition administration (scontrol create|update|delete partition): the
// driver builds the new Partition (NodeList set) and the State re-indexes
// the cluster in place, so every cached view keyed by the *Cluster stays
// valid. Slurm applies such a change at once: pending jobs see the new
// limits and state at the next scheduling cycle; running jobs keep their
// allocation ("Changing the Nodes in a partition has no effect upon jobs
// that have already begun execution", scontrol(1)).

// ErrPartitionInUse is Slurm's ESLURM_PARTITION_IN_USE: a partition that
// pending or running jobs name cannot be deleted.
var ErrPartitionInUse = errors.New("Partition is in use")

// AddPartition appends p to the cluster's partitions. A Default partition
// replaces the previous default, as `scontrol create partition ...
// Default=YES` does.
func (st *State) AddPartition(p Partition) error {
	st.shapeGen++ // a remembered canEverFit may no longer hold (everFitCache)
	cl := st.Cluster
	if p.Name == "" || cl.PartitionIndex(p.Name) >= 0 {
		return fmt.Errorf("add partition %q: %w", p.Name, ErrInvalidPartition)
	}
	if err := checkNodeList(cl, &p); err != nil {
		return err
	}
	old := cl.Partitions
	cl.Partitions = append(slices.Clone(old), p)
	if p.Default {
		clearDefault(cl, int32(len(cl.Partitions)-1))
	}
	if err := cl.reindexPartitions(); err != nil {
		cl.Partitions = old
		_ = cl.reindexPartitions()
		return err
	}
	return nil
}

// InsertPartition puts p at index at (0..len), shifting the partitions
// from at up by one and renumbering the jobs' partition indices: a
// partition slurm.conf defines, deleted and created again, goes back to
// its place among slurm.conf's partitions.
func (st *State) InsertPartition(p Partition, at int32) error {
	st.shapeGen++ // a remembered canEverFit may no longer hold (everFitCache)
	cl := st.Cluster
	if p.Name == "" || cl.PartitionIndex(p.Name) >= 0 || at < 0 || int(at) > len(cl.Partitions) {
		return fmt.Errorf("insert partition %q: %w", p.Name, ErrInvalidPartition)
	}
	if err := checkNodeList(cl, &p); err != nil {
		return err
	}
	old := cl.Partitions
	cl.Partitions = slices.Insert(slices.Clone(old), int(at), p)
	if p.Default {
		clearDefault(cl, at)
	}
	if err := cl.reindexPartitions(); err != nil {
		cl.Partitions = old
		_ = cl.reindexPartitions()
		return err
	}
	for _, j := range st.jobList {
		if j.Partition >= at {
			j.Partition++
		}
		for k, q := range j.Partitions {
			if q >= at {
				j.Partitions[k] = q + 1
			}
		}
	}
	return nil
}

// ReplacePartition replaces the partition named p.Name by p, keeping its
// index (jobs refer to partitions by index). Setting Default makes it the
// only default partition.
func (st *State) ReplacePartition(p Partition) error {
	st.shapeGen++ // a remembered canEverFit may no longer hold (everFitCache)
	cl := st.Cluster
	i := cl.PartitionIndex(p.Name)
	if i < 0 {
		return fmt.Errorf("replace partition %q: %w", p.Name, ErrInvalidPartition)
	}
	if err := checkNodeList(cl, &p); err != nil {
		return err
	}
	old := slices.Clone(cl.Partitions)
	cl.Partitions[i] = p
	if p.Default {
		clearDefault(cl, i)
	}
	if err := cl.reindexPartitions(); err != nil {
		cl.Partitions = old
		_ = cl.reindexPartitions()
		return err
	}
	return nil
}

// PartitionInUse reports whether a pending, running or suspended job (or
// one still completing) names partition i, which makes Slurm refuse its
// deletion.
func (st *State) PartitionInUse(i int32) bool {
	for _, j := range st.jobList {
		if j.State.Finished() && j.State&JobFlagCompleting == 0 {
			continue
		}
		if j.Partition == i || slices.Contains(j.Partitions, i) {
			return true
		}
	}
	return false
}

// DeletePartition removes a partition no live job names (else
// ErrPartitionInUse). Finished jobs still held in memory lose their
// partition reference (their accounting rows keep its name); the other
// jobs' partition indices are renumbered.
func (st *State) DeletePartition(name string) error {
	st.shapeGen++ // a remembered canEverFit may no longer hold (everFitCache)
	cl := st.Cluster
	i := cl.PartitionIndex(name)
	if i < 0 {
		return fmt.Errorf("delete partition %q: %w", name, ErrInvalidPartition)
	}
	if st.PartitionInUse(i) {
		return fmt.Errorf("delete partition %q: %w", name, ErrPartitionInUse)
	}
	cl.Partitions = slices.Delete(slices.Clone(cl.Partitions), int(i), int(i)+1)
	for _, j := range st.jobList {
		renumberJobPartitions(j, i)
	}
	return cl.reindexPartitions()
}

// SetPartitions replaces the whole partition list, leaving the jobs'
// partition indices as they are: a restarted driver uses it to put back
// the partition list it had stored (the jobs' stored indices refer to
// that list), before or after replaying the jobs.
func (st *State) SetPartitions(parts []Partition) error {
	st.shapeGen++ // a remembered canEverFit may no longer hold (everFitCache)
	cl := st.Cluster
	for i := range parts {
		if err := checkNodeList(cl, &parts[i]); err != nil {
			return err
		}
	}
	old := cl.Partitions
	cl.Partitions = parts
	if err := cl.reindexPartitions(); err != nil {
		cl.Partitions = old
		_ = cl.reindexPartitions()
		return err
	}
	return nil
}

// renumberJobPartitions drops partition gone from j and shifts the
// indices above it down by one.
func renumberJobPartitions(j *Job, gone int32) {
	switch {
	case j.Partition == gone:
		j.Partition = -1
	case j.Partition > gone:
		j.Partition--
	}
	out := j.Partitions[:0]
	var prio []uint32
	for k, p := range j.Partitions {
		if p == gone {
			continue
		}
		if p > gone {
			p--
		}
		out = append(out, p)
		if k < len(j.PartPriority) {
			prio = append(prio, j.PartPriority[k])
		}
	}
	j.Partitions = out
	if j.PartPriority != nil {
		j.PartPriority = prio
	}
}

// clearDefault leaves Default set on partition keep only.
func clearDefault(cl *Cluster, keep int32) {
	for k := range cl.Partitions {
		if int32(k) != keep {
			cl.Partitions[k].Default = false
		}
	}
}

// checkNodeList rejects node indices outside the cluster with Slurm's
// "Invalid node name specified".
func checkNodeList(cl *Cluster, p *Partition) error {
	for _, n := range p.NodeList {
		if n < 0 || int(n) >= len(cl.Nodes) {
			return fmt.Errorf("partition %q: node index %d: %w", p.Name, n, ErrInvalidNodeName)
		}
	}
	return nil
}

// reindexPartitions rebuilds every partition-derived index (names, node
// sets, the nodes' partition lists, TRES totals, the default partition)
// after the partition list changed.
func (c *Cluster) reindexPartitions() error {
	for i := range c.Nodes {
		c.Nodes[i].Partitions = c.Nodes[i].Partitions[:0]
	}
	c.partByName = make(map[string]int32, len(c.Partitions))
	c.DefaultPartition = -1
	for i := range c.Partitions {
		if err := c.indexPartition(int32(i)); err != nil {
			return err
		}
	}
	return nil
}
