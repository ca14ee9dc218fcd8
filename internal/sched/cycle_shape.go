package sched

// recShape returns rec's job shape in its partition, computed once per
// cycle and job: the main pass, backfill's bound, its shape classes and
// selection all need it, and recomputing it was a tenth of a small
// cluster's cycle. The shape is valid until the cycle asks for another
// partition's record of the same job; callers do not keep it.
func (c *Cycle) recShape(rec *QueueRec) *shape {
	if c.shapePart == nil {
		b := &c.State.bufs
		c.shapes = grow(b.shapes, len(c.pend))
		c.shapePart = grow(b.shapePart, len(c.pend))
		clear(c.shapePart)
		b.shapes, b.shapePart = c.shapes, c.shapePart
	}
	if int(rec.slot) >= len(c.shapes) {
		// The incremental queue (lazy_queue.go) adds slots as it walks.
		n := max(len(c.pend), 2*len(c.shapes))
		c.shapes = append(c.shapes, make([]shape, n-len(c.shapes))...)
		c.shapePart = append(c.shapePart, make([]int32, n-len(c.shapePart))...)
		b := &c.State.bufs
		b.shapes, b.shapePart = c.shapes, c.shapePart
	}
	s := &c.shapes[rec.slot]
	if c.shapePart[rec.slot] != rec.Part+1 {
		*s = jobShape(c.Config, rec.Job, &c.Cluster.Partitions[rec.Part])
		c.shapePart[rec.slot] = rec.Part + 1
	}
	return s
}
