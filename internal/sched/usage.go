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

type qosOwnerKey struct {
	qos  int32
	name string
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
	qosUser map[qosOwnerKey]*counter
	qosAcct map[qosOwnerKey]*counter
}

func (u *usage) init() {
	u.qosUser = map[qosOwnerKey]*counter{}
	u.qosAcct = map[qosOwnerKey]*counter{}
}

// reset sizes the counters for policy p (all zero).
func (u *usage) reset(p *Policy) {
	u.init()
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

func (u *usage) owner(m map[qosOwnerKey]*counter, q int32, name string) *counter {
	k := qosOwnerKey{q, name}
	ct := m[k]
	if ct == nil {
		ct = &counter{runTRES: make([]int64, u.ntres)}
		m[k] = ct
	}
	return ct
}

// each calls f for every counter a job of association a, QOS list qs,
// user and account counts in.
func (u *usage) each(p *Policy, a int32, qs []int32, user, account string, f func(*counter)) {
	for cur := a; cur >= 0 && int(cur) < len(u.assoc); cur = p.Assocs[cur].Parent {
		f(&u.assoc[cur])
	}
	for _, q := range qs {
		if q < 0 || int(q) >= len(u.qos) {
			continue
		}
		f(&u.qos[q])
		f(u.owner(u.qosUser, q, user))
		f(u.owner(u.qosAcct, q, account))
	}
}

// cycleUsage is a copy of the usage counters that a cycle updates as it
// decides to start (or preempt) jobs, leaving the State's own untouched.
type cycleUsage struct {
	usage
}

func newCycleUsage(u *usage) *cycleUsage {
	cu := &cycleUsage{usage{ntres: u.ntres}}
	cu.init()
	cu.assoc = cloneCounters(u.assoc)
	cu.qos = cloneCounters(u.qos)
	for k, v := range u.qosUser {
		c := *v
		c.runTRES = append([]int64(nil), v.runTRES...)
		cu.qosUser[k] = &c
	}
	for k, v := range u.qosAcct {
		c := *v
		c.runTRES = append([]int64(nil), v.runTRES...)
		cu.qosAcct[k] = &c
	}
	return cu
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

func cloneCounters(cs []counter) []counter {
	out := make([]counter, len(cs))
	for i, c := range cs {
		out[i] = c
		out[i].runTRES = append([]int64(nil), c.runTRES...)
	}
	return out
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
