package sched

import (
	"math"
	"time"
)

// counter is what a limit counts for one entity (an association subtree,
// a QOS, a QOS-user or QOS-account pair): running jobs, submitted jobs
// (pending and running, every array task counted) and the TRES held by
// running jobs, indexed like Policy.TRES.
type counter struct {
	runJobs    int64
	submitJobs int64
	runTRES    []int64
	// runMins are the TRES-minutes the running jobs still have before
	// their time limits (Slurm's TRESRunMins); only a cycle's copy of the
	// counters fills them, since they depend on now.
	runMins []int64
	// usedMins (TRES-minutes) and usedWall (minutes) are the decayed
	// historical usage for GrpTRESMins and GrpWall, loaded per cycle from
	// State.Usage.
	usedMins []int64
	usedWall int64
}

// addMins adds tres × minutes to the run-minutes counter.
func (ct *counter) addMins(tres []int64, minutes int64) {
	if ct.runMins == nil {
		ct.runMins = make([]int64, len(ct.runTRES))
	}
	for i, v := range tres {
		if i < len(ct.runMins) {
			ct.runMins[i] = satAddMins(ct.runMins[i], tresMinutes(v, time.Duration(minutes)*time.Minute))
		}
	}
}

func satAddMins(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func (ct *counter) addRun(sign int64, tres []int64) {
	ct.runJobs += sign
	for i, v := range tres {
		if i < len(ct.runTRES) {
			ct.runTRES[i] += sign * v
		}
	}
}

// ownerCounters are the QOS-user (or QOS-account) counters: per QOS
// index, by user (account) name. Keyed by the name alone a lookup is a
// string map's fast path, and a cycle's view, which writes a few owners,
// holds maps small enough to be searched without hashing.
type ownerCounters []map[string]*counter

func (oc ownerCounters) get(q int32, name string) *counter {
	if int(q) >= len(oc) || oc[q] == nil {
		return nil
	}
	return oc[q][name]
}

// put returns oc with ct as q's counter for name.
func (oc ownerCounters) put(q int32, name string, ct *counter) ownerCounters {
	for int(q) >= len(oc) {
		oc = append(oc, nil)
	}
	if oc[q] == nil {
		oc[q] = map[string]*counter{}
	}
	oc[q][name] = ct
	return oc
}

// clear empties every QOS's map, keeping them.
func (oc ownerCounters) clear() {
	for _, m := range oc {
		clear(m)
	}
}

// usage holds the counters the limits gate compares with the limits. The
// lifecycle methods keep it current; Schedule reads it through a
// cycleUsage that adds the jobs started in the cycle. Association counters
// are subtree totals (a job counts in its association and every ancestor),
// which is what Grp limits at each level of the tree compare with.
type usage struct {
	ntres   int
	assoc   []counter
	qos     []counter
	qosUser ownerCounters
	qosAcct ownerCounters
	// base, when set, makes this a cycle's copy-on-write view of base: a
	// counter is copied from base on its first write in the cycle (its
	// stamp equals gen) and read from base until then, so a cycle costs
	// what it touches, not a copy of every association's counters.
	base             *usage
	gen              uint32
	assocGen, qosGen []uint32
	// spare holds the view's owner counters, handed out again by the
	// next cycles (spare[:used] are in this cycle's maps): a cycle that
	// starts jobs allocates no counters.
	spare []*counter
	used  int
}

// assocR returns association a's counter for reading.
func (u *usage) assocR(a int32) *counter {
	if u.base != nil && u.assocGen[a] != u.gen {
		return &u.base.assoc[a]
	}
	return &u.assoc[a]
}

// qosR returns QOS q's counter for reading.
func (u *usage) qosR(q int32) *counter {
	if u.base != nil && u.qosGen[q] != u.gen {
		return &u.base.qos[q]
	}
	return &u.qos[q]
}

// ownerR returns the QOS-user (acct false) or QOS-account counter for
// reading, nil when nobody has counted there yet.
func (u *usage) ownerR(acct bool, q int32, name string) *counter {
	m := u.qosUser
	if acct {
		m = u.qosAcct
	}
	if ct := m.get(q, name); ct != nil || u.base == nil {
		return ct
	}
	return u.base.ownerR(acct, q, name)
}

// assocW returns association a's counter for writing.
func (u *usage) assocW(a int32) *counter {
	if u.base != nil && u.assocGen[a] != u.gen {
		copyCounter(&u.assoc[a], &u.base.assoc[a])
		u.assocGen[a] = u.gen
	}
	return &u.assoc[a]
}

// qosW returns QOS q's counter for writing.
func (u *usage) qosW(q int32) *counter {
	if u.base != nil && u.qosGen[q] != u.gen {
		copyCounter(&u.qos[q], &u.base.qos[q])
		u.qosGen[q] = u.gen
	}
	return &u.qos[q]
}

// copyCounter copies src into dst, reusing dst's runTRES buffer.
func copyCounter(dst, src *counter) {
	rt := dst.runTRES[:0]
	*dst = *src
	dst.runTRES = append(rt, src.runTRES...)
}

// reset sizes the counters for policy p (all zero).
func (u *usage) reset(p *Policy) {
	u.qosUser, u.qosAcct = nil, nil
	u.assoc, u.qos, u.ntres = nil, nil, 0
	if p == nil {
		return
	}
	u.ntres = len(p.TRES)
	u.assoc = make([]counter, len(p.Assocs))
	for i := range u.assoc {
		u.assoc[i].runTRES = make([]int64, u.ntres)
	}
	u.qos = make([]counter, len(p.QOS))
	for i := range u.qos {
		u.qos[i].runTRES = make([]int64, u.ntres)
	}
}

// owner returns the QOS-user (acct false) or QOS-account counter for
// writing, creating it (copied from base in a cycle's view) when needed.
func (u *usage) owner(acct bool, q int32, name string) *counter {
	m := &u.qosUser
	if acct {
		m = &u.qosAcct
	}
	if ct := m.get(q, name); ct != nil {
		return ct
	}
	ct := u.newCounter()
	if u.base != nil {
		if b := u.base.ownerR(acct, q, name); b != nil {
			copyCounter(ct, b)
		}
	}
	*m = m.put(q, name, ct)
	return ct
}

// newCounter returns a zero counter: in a cycle's view, a spare one.
func (u *usage) newCounter() *counter {
	if u.base == nil {
		return &counter{runTRES: make([]int64, u.ntres)}
	}
	if u.used == len(u.spare) {
		u.spare = append(u.spare, &counter{})
	}
	ct := u.spare[u.used]
	u.used++
	rt := ct.runTRES[:0]
	*ct = counter{runTRES: append(rt, make([]int64, u.ntres)...)}
	return ct
}

// each calls f for every counter a job of association a, QOS list qs,
// user and account counts in.
func (u *usage) each(p *Policy, a int32, qs []int32, user, account string, f func(*counter)) {
	for cur := a; cur >= 0 && int(cur) < len(u.assoc); cur = p.Assocs[cur].Parent {
		f(u.assocW(cur))
	}
	for _, q := range qs {
		if q < 0 || int(q) >= len(u.qos) {
			continue
		}
		f(u.qosW(q))
		f(u.owner(false, q, user))
		f(u.owner(true, q, account))
	}
}

// cycleUsage is a copy of the usage counters that a cycle updates as it
// decides to start (or preempt) jobs, leaving the State's own untouched.
type cycleUsage struct {
	usage
}

// reuse makes cu a fresh copy-on-write view of u, keeping the buffers of
// earlier cycles (newCycle takes cu from the State and Schedule gives it
// back).
func (cu *cycleUsage) reuse(u *usage) {
	cu.qosUser.clear()
	cu.qosAcct.clear()
	cu.used = 0
	cu.base, cu.ntres = u, u.ntres
	cu.assoc, cu.assocGen = sizeCounters(cu.assoc, cu.assocGen, len(u.assoc))
	cu.qos, cu.qosGen = sizeCounters(cu.qos, cu.qosGen, len(u.qos))
	cu.gen++
	if cu.gen == 0 { // wrapped: no stamp may look current
		clear(cu.assocGen)
		clear(cu.qosGen)
		cu.gen = 1
	}
}

// sizeCounters returns n counters and stamps, reusing cs and gens when
// they have that length (stamps of new ones are 0, never a current gen).
func sizeCounters(cs []counter, gens []uint32, n int) ([]counter, []uint32) {
	if len(cs) == n && len(gens) == n {
		return cs, gens
	}
	return make([]counter, n), make([]uint32, n)
}

// addRunMins counts the TRES-minutes every running job still holds at
// now (time limit left; suspended jobs hold theirs too), for the
// GrpTRESRunMins and MaxTRESRunMinsPer{User,Account} limits.
func (cu *cycleUsage) addRunMins(c *Cycle) {
	p := c.State.Policy
	if p == nil || !p.hasRunMinLimits() {
		return
	}
	for _, j := range c.State.jobList {
		if !isActive(j) || j.Partition < 0 {
			continue
		}
		left := int64(math.MaxInt64 / 2)
		if !j.EndTime.IsZero() {
			left = max(int64(j.EndTime.Sub(c.Now)/time.Minute), 0)
		}
		tres := c.jobTRES(j, j.Partition, &j.Alloc)
		qs := c.jobQOSList(j, j.Partition)
		cu.each(p, j.assocFor(p, c.Cluster, j.Partition), qs[:], j.User, j.Account,
			func(ct *counter) { ct.addMins(tres, left) })
	}
}

// start counts job j (about to start in partition part with al) as running.
func (cu *cycleUsage) start(c *Cycle, j *Job, part int32, al *Alloc) {
	p := c.State.Policy
	if p == nil {
		return
	}
	tres := c.jobTRES(j, part, al)
	qs := c.jobQOSList(j, part)
	mins := int64(math.MaxInt64 / 2)
	if limit := c.TimeLimit(j, part); limit != Infinite {
		mins = int64(limit / time.Minute)
	}
	runMins := p.hasRunMinLimits()
	cu.each(p, j.assocFor(p, c.Cluster, part), qs[:], j.User, j.Account, func(ct *counter) {
		ct.addRun(1, tres)
		if runMins {
			ct.addMins(tres, mins)
		}
	})
}

// stop counts job j (preempted in this cycle) as no longer running.
func (cu *cycleUsage) stop(c *Cycle, j *Job) {
	p := c.State.Policy
	if p == nil || j.Partition < 0 {
		return
	}
	tres := c.jobTRES(j, j.Partition, &j.Alloc)
	qs := c.jobQOSList(j, j.Partition)
	cu.each(p, j.assocFor(p, c.Cluster, j.Partition), qs[:], j.User, j.Account, func(ct *counter) { ct.addRun(-1, tres) })
}
