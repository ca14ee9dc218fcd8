package sched

import "slices"

// shapeCache keeps backfill's shape classes (capable nodes and tiers)
// from pass to pass: they depend only on the cluster's nodes and
// partitions, the usable nodes and the job's shape, which rarely change
// between passes, while building them was a tenth of a small cluster's
// backfill pass. The cursors are per pass: a shape met in a new pass has
// them reset (bfShape.pass). The cache is dropped whole when anything it
// depends on changed.
type shapeCache struct {
	m      map[bfShapeKey]*bfShape
	ints   map[bfShapeInts]*bfShape // the keys without strings
	cl     *Cluster
	types  uint64    // nodeTypeCache.gen the shapes were built with
	usable NodeSet   // Avail.Usable they were built with
	parts  []NodeSet // the partitions' node sets they were built with
	unit   ConsumeUnit
	mem    bool // Config.ConsumeMemory
	// pass counts the passes that used the cache (the cursors' epoch).
	pass uint64
}

// maxShapeCache bounds the cache (job shapes are user input).
const maxShapeCache = 4096

// begin starts a pass: it drops the shapes if what they were built from
// changed.
func (sc *shapeCache) begin(c *Cycle, types uint64) {
	sc.pass++
	if sc.m == nil || !sc.valid(c, types) || len(sc.m)+len(sc.ints) >= maxShapeCache {
		sc.m, sc.ints = map[bfShapeKey]*bfShape{}, map[bfShapeInts]*bfShape{}
		sc.cl, sc.types = c.Cluster, types
		sc.unit, sc.mem = c.Config.Unit, c.Config.ConsumeMemory
		sc.usable = append(sc.usable[:0], c.Avail.Usable...)
		sc.parts = grow(sc.parts, len(c.Cluster.Partitions))
		for i := range c.Cluster.Partitions {
			sc.parts[i] = append(sc.parts[i][:0], c.Cluster.Partitions[i].Nodes...)
		}
	}
}

// get returns the shape of key k.
func (sc *shapeCache) get(k *bfShapeKey) (*bfShape, bool) {
	if k.masks == "" && k.gres == "" && k.gpusType == "" {
		sh, ok := sc.ints[k.bfShapeInts]
		return sh, ok
	}
	sh, ok := sc.m[*k]
	return sh, ok
}

// put stores the shape of key k.
func (sc *shapeCache) put(k *bfShapeKey, sh *bfShape) {
	if k.masks == "" && k.gres == "" && k.gpusType == "" {
		sc.ints[k.bfShapeInts] = sh
		return
	}
	sc.m[*k] = sh
}

// valid reports whether the cached shapes still describe c.
func (sc *shapeCache) valid(c *Cycle, types uint64) bool {
	cl := c.Cluster
	if sc.cl != cl || sc.types != types || sc.unit != c.Config.Unit || sc.mem != c.Config.ConsumeMemory ||
		!slices.Equal(sc.usable, c.Avail.Usable) || len(sc.parts) != len(cl.Partitions) {
		return false
	}
	for i := range cl.Partitions {
		if !slices.Equal(sc.parts[i], cl.Partitions[i].Nodes) {
			return false
		}
	}
	return true
}

// bfCursor is a shape's earliest possible start for one planned duration
// (a pointer so that plan may hold it while other cursors are added).
type bfCursor struct {
	d int64
	p *int64
}

// bfCursorScan is the cursor count up to which cursor scans the list; a
// shape with more durations in one pass indexes them in a map.
const bfCursorScan = 16

// cursor returns the shape's cursor for duration d in pass. A shape last
// used in an earlier pass drops its cursors first, keeping their storage.
func (sh *bfShape) cursor(d int64, pass uint64) *int64 {
	if sh.pass != pass {
		sh.pass = pass
		sh.cursors = sh.cursors[:0]
		clear(sh.byD)
	}
	if len(sh.cursors) > bfCursorScan {
		if p := sh.byD[d]; p != nil {
			return p
		}
	} else {
		for _, c := range sh.cursors {
			if c.d == d {
				return c.p
			}
		}
	}
	return sh.addCursor(d)
}

// addCursor adds a zero cursor for d, reusing a dropped one's storage.
func (sh *bfShape) addCursor(d int64) *int64 {
	n := len(sh.cursors)
	if n < cap(sh.cursors) && sh.cursors[:n+1][n].p != nil {
		sh.cursors = sh.cursors[:n+1]
		sh.cursors[n].d = d
		*sh.cursors[n].p = 0
	} else {
		sh.cursors = append(sh.cursors, bfCursor{d, new(int64)})
	}
	p := sh.cursors[n].p
	if n+1 > bfCursorScan {
		if sh.byD == nil {
			sh.byD = map[int64]*int64{}
		}
		if n+1 == bfCursorScan+1 { // index the ones scanned so far
			for _, c := range sh.cursors[:n] {
				sh.byD[c.d] = c.p
			}
		}
		sh.byD[d] = p
	}
	return p
}
