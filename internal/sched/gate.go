package sched

import (
	"math"
	"strings"

	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// gate walks every pending job once, gives the ones that cannot be
// considered their reason (holds, dependencies, begin time, partition
// state and limits) and queues one record per (job, usable partition).
func (c *Cycle) gate() {
	// Size the tables once (every job at most): with 50,000 pending jobs,
	// growing them by append cost more than the backfill plan itself.
	// The buffers of the previous cycle are reused (State.bufs).
	n := len(c.State.jobList)
	b := &c.State.bufs
	c.pend = growCap(b.pend[:0], n)
	c.pendJob = growCap(b.pendJob[:0], n)
	c.Queue = growCap(b.queue[:0], n)
	for _, j := range c.State.jobList {
		if j.State.Base() != JobPending || j.State&JobFlagCompleting != 0 {
			continue
		}
		c.gateJob(j)
	}
	c.done = growCap(b.done[:0], len(c.pend))[:len(c.pend)]
	clear(c.done)
}

// gateJob gives pending job j its slot in the cycle's pending table and
// either its gate reason or one queue record per usable partition.
func (c *Cycle) gateJob(j *Job) {
	slot := int32(len(c.pend))
	c.pend = append(c.pend, PendingInfo{Job: j.ID, Partition: -1})
	c.pendJob = append(c.pendJob, j)
	if r := c.jobGate(j, &c.pend[slot]); r != "" {
		c.pend[slot].Reason = r
		c.unqueued++ // main_stuck.go
		return
	}
	first := len(c.Queue)
	for pi, part := range j.Partitions {
		if r := c.partGate(j, part); r != "" {
			if c.pend[slot].Reason == "" {
				c.pend[slot].Reason, c.pend[slot].Partition = r, part
				c.pend[slot].StateDesc = c.partGateDesc(j, part, r)
			}
			continue
		}
		prio := j.Priority
		if pi < len(j.PartPriority) {
			prio = j.PartPriority[pi]
		}
		c.Queue = c.resvRecords(c.Queue, QueueRec{Job: j, Part: part, Priority: prio,
			Tier: c.Cluster.Partitions[part].PriorityTier, slot: slot}) // + reservation records
	}
	for k := first; k < len(c.Queue); k++ {
		c.Queue[k].sub = uint16(min(k-first, math.MaxUint16))
	}
	if !c.hasRecord(slot) {
		c.unqueued++ // main_stuck.go
	}
	if c.pend[slot].Reason != "" && c.hasRecord(slot) {
		c.pend[slot].Reason, c.pend[slot].Partition, c.pend[slot].StateDesc = "", -1, "" // another partition may run it
	}
}

// growCap returns s (empty) with room for n elements; a new one has a
// quarter more, so that a job list growing by one job a pass does not
// reallocate the tables every pass.
func growCap[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n+n/4+16)
	}
	return s
}

// cycleBufs are a cycle's per-job tables, kept by the State between cycles
// so that each cycle does not allocate them again.
type cycleBufs struct {
	// planJobs is Plan.pendJobs' buffer (Recycle), like plan.
	planJobs []*Job
	pend     []PendingInfo
	pendJob  []*Job
	queue    []QueueRec
	// queueAlt is sortQueue's second queue buffer, orderCount its
	// scratch; orderLen is the last sorted queue's length.
	queueAlt   []QueueRec
	orderCount []int
	orderLen   int
	done       []bool
	// plan and starts are the Pending and Starts tables of a plan handed
	// back (State.Recycle).
	plan   []PendingInfo
	starts []Start
	// avail is the last cycle's free-resource view (Cycle.Avail).
	avail *Avail
	// sel is the last cycle's node selector.
	sel *selector
	// partFail, scratch and passNodes are the Cycle's fields of the same
	// names.
	partFail           []bool
	scratch, passNodes NodeSet
	// cycle is the last Cycle, reused whole (a cycle allocated it every
	// pass).
	cycle *Cycle
	// shapes and shapePart are recShape's tables.
	shapes    []shape
	shapePart []int32
}

// selector returns the last cycle's selector to reset, or a new one.
func (b *cycleBufs) selector() *selector {
	s := b.sel
	b.sel = nil
	if s == nil {
		s = &selector{}
	}
	return s
}

// Recycle hands back a plan the caller is done with (applied and not
// kept): the next Schedule fills its Pending and Starts tables again
// instead of allocating them. A driver that keeps plans (the controller)
// does not call it; the simulator, which applies each plan at once, does.
func (st *State) Recycle(p *Plan) {
	clear(p.Pending) // drop the reasons' strings and planned node lists
	clear(p.pendJobs)
	clear(p.Starts) // and the allocations
	st.bufs.plan, st.bufs.planJobs, st.bufs.starts = p.Pending[:0], p.pendJobs[:0], p.Starts[:0]
	p.Pending, p.pendJobs, p.Starts = nil, nil, nil
}

// keep stores the cycle's tables for the next cycle, dropping the
// pointers they hold so the garbage collector can free finished jobs.
func (b *cycleBufs) keep(c *Cycle) {
	clear(c.pend)
	clear(c.pendJob)
	clear(c.Queue)
	b.pend, b.pendJob, b.queue, b.done = c.pend[:0], c.pendJob[:0], c.Queue[:0], c.done[:0]
	b.avail, b.sel = c.Avail, c.sel
	b.partFail, b.scratch, b.passNodes = c.partFail, c.scratch, c.passNodes
	b.cycle = c
}

func (c *Cycle) hasRecord(slot int32) bool {
	n := len(c.Queue)
	return n > 0 && c.Queue[n-1].slot == slot
}

// jobGate returns the reason j cannot be considered at all this cycle. It
// tests j's dependencies first, held or not, as slurmctld does, and puts
// their changed states in p.
func (c *Cycle) jobGate(j *Job, p *PendingInfo) Reason {
	deps := depOK
	if len(j.Req.Deps) > 0 {
		deps, p.DepStates = c.jobDeps(j)
	}
	if deps == depNever && killInvalidDep(j, c.Config) {
		c.Plan.DepCancels = append(c.Plan.DepCancels, j.ID) // held or not, as Slurm
	}
	if r := c.resvJobGate(j); r != "" {
		return r // reservation deleted, invalid or not accessible (resv_cycle.go)
	}
	if deps == depNever {
		return ReasonDependencyNeverSatisfied // shown for a held job too, as Slurm 24.11
	}
	switch j.Hold {
	case HoldUser:
		return ReasonJobHeldUser
	case HoldAdmin:
		return ReasonJobHeldAdmin
	}
	if deps == depWait {
		return ReasonDependency
	}
	if j.Req.BeginTime.After(c.Now) {
		return ReasonBeginTime
	}
	if j.Unfit != "" {
		return j.Unfit // held at submission, never runnable (submit.go)
	}
	if p := c.State.Policy; p != nil && c.Config.Enforce&(EnforceAssociations|EnforceLimits) != 0 && j.assoc < 0 {
		return ReasonInvalidAccount
	}
	if len(j.Partitions) == 0 {
		return ReasonPartitionConfig
	}
	return ""
}

// partGate returns the reason j cannot run in partition part whatever the
// free resources: partition state, MaxTime, node counts, access lists,
// or no usable node matching the job.
func (c *Cycle) partGate(j *Job, part int32) Reason {
	pt := &c.Cluster.Partitions[part]
	switch pt.State {
	case PartitionDown:
		return ReasonPartitionDown
	case PartitionInactive:
		return ReasonPartitionInactive
	}
	if r := partitionLimitReason(c.State.Policy, c.Cluster, j, part); r != "" {
		if r == ReasonAccountNotAllowed {
			return ReasonPartitionConfig // what squeue shows (oracle, 24.11)
		}
		return r
	}
	jm := c.JobMask(j)
	var empty bool
	if jm == nil {
		empty = !c.partHasUsable(part)
	} else {
		m := c.scratch
		m.CopyFrom(pt.Nodes)
		m.And(c.Avail.Usable)
		m.And(jm)
		empty = m.Empty()
	}
	if empty && len(j.Req.NodeList) > 0 {
		return ReasonReqNodeNotAvail
	}
	return c.capacityReason(j, part, jm, empty)
}

// partCap is what a partition's nodes offer whatever their load: alive
// nodes (neither DOWN, FAIL nor drained; a draining node still counts),
// and the usable nodes and their CPUs.
type partCap struct {
	alive, usable int32
	cpus          int64
}

// capacityReason is Slurm 24.11's reason for a job its partition cannot
// run even when idle: fewer alive nodes than it needs pends it on "Nodes
// required for job are DOWN, DRAINED or reserved for jobs in higher
// priority partitions"; too few usable nodes or CPUs on ReqNodeNotAvail,
// "May be reserved for other job" (oracle, node-states).
func (c *Cycle) capacityReason(j *Job, part int32, jm NodeSet, empty bool) Reason {
	minNodes, _ := shapeTasks(&j.Req)
	if !empty && minNodes <= 1 && cpuFloor(&j.Req, &c.Cluster.Partitions[part]) <= 1 {
		return "" // fast path: any usable node runs it
	}
	pc := c.partCapacity(part, jm)
	switch {
	case pc.alive < minNodes:
		return ReasonNodesDown
	case empty || pc.usable < minNodes || pc.cpus < cpuFloor(&j.Req, &c.Cluster.Partitions[part]):
		return ReasonReqNodeNotAvail
	}
	return ""
}

// partCapacity counts partition part's nodes (within the job mask jm,
// if any); cached per cycle without a mask.
func (c *Cycle) partCapacity(part int32, jm NodeSet) partCap {
	if jm == nil && c.partCaps != nil && c.partCaps[part].ok {
		return c.partCaps[part].partCap
	}
	var pc partCap
	pn := c.Cluster.Partitions[part].Nodes
	if av := c.Avail; jm == nil && av.alive != nil && av.uniformCPUs > 0 {
		// Every node alike (a homogeneous pool): count, do not walk.
		pc.alive, pc.usable = int32(pn.AndCount(av.alive)), int32(pn.AndCount(av.Usable))
		pc.cpus = int64(pc.usable) * int64(av.uniformCPUs)
	} else {
		pn.ForEach(func(i int) bool {
			if jm != nil && !jm.Has(i) {
				return true
			}
			if nodeAlive(&c.Cluster.Nodes[i]) {
				pc.alive++
			}
			if c.Avail.Usable.Has(i) {
				pc.usable++
				pc.cpus += int64(c.Cluster.Nodes[i].CPUs)
			}
			return true
		})
	}
	if jm == nil {
		if c.partCaps == nil {
			c.partCaps = make([]cachedCap, len(c.Cluster.Partitions))
		}
		c.partCaps[part] = cachedCap{partCap: pc, ok: true}
	}
	return pc
}

type cachedCap struct {
	partCap
	ok bool
}

// partitionLimitReason checks j against partition part's own limits and
// access lists (PartitionTimeLimit, PartitionNodeLimit, AccountNotAllowed,
// QOSNotAllowed). QOS flags PartitionTimeLimit / PartitionMaxNodes /
// PartitionMinNodes let the QOS override the partition.
func partitionLimitReason(p *Policy, cl *Cluster, j *Job, part int32) Reason {
	pt := &cl.Partitions[part]
	var flags QOSFlags
	if p != nil && j.qos >= 0 {
		flags = p.QOS[j.qos].Flags
	}
	limit := effectiveTimeLimit(p, cl, j, part)
	if flags&QOSPartitionTimeLimit == 0 && pt.MaxTime > 0 && pt.MaxTime != Infinite && limit > pt.MaxTime {
		return ReasonPartitionTimeLimit
	}
	minN := max(j.Req.MinNodes, 1)
	if pt.MaxNodes >= 0 && minN > pt.MaxNodes && flags&QOSPartitionMaxNodes == 0 {
		return ReasonPartitionNodeLimit
	}
	if pt.MinNodes > 0 && flags&QOSPartitionMinNodes == 0 {
		maxN := j.Req.MaxNodes
		if maxN == 0 {
			maxN = minN
		}
		if maxN < pt.MinNodes && j.Req.MaxNodes > 0 || j.Req.MinNodes > 0 && maxN < pt.MinNodes {
			return ReasonPartitionNodeLimit
		}
	}
	if !listAllows(pt.AllowAccounts, pt.DenyAccounts, j.Account) {
		return ReasonAccountNotAllowed
	}
	if !listAllows(pt.AllowQOS, pt.DenyQOS, j.QOS) {
		return ReasonQOSNotAllowed
	}
	return ""
}

// listAllows applies an Allow/Deny pair: nil Allow means ALL.
func listAllows(allow, deny []string, name string) bool {
	if allow == nil && len(deny) == 0 {
		return true // the usual partition: no lists (inlined)
	}
	return listAllowsSlow(allow, deny, name)
}

func listAllowsSlow(allow, deny []string, name string) bool {
	for _, d := range deny {
		if strings.EqualFold(d, name) {
			return false
		}
	}
	if allow == nil {
		return true
	}
	for _, a := range allow {
		if a == "ALL" || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// arrayThrottle returns JobArrayTaskLimit when j's array already runs as
// many tasks as its `%N` allows.
func (c *Cycle) arrayThrottle(j *Job) Reason {
	if j.Array == nil || j.Array.Throttle <= 0 {
		return ""
	}
	if c.arrayRun[j.Array.JobID] >= j.Array.Throttle {
		return ReasonJobArrayTaskLimit
	}
	return ""
}

// JobMask returns the nodes j may use because of its --constraint,
// --nodelist and --exclude (nil when it has none), cached per cycle.
func (c *Cycle) JobMask(j *Job) NodeSet {
	r := &j.Req
	if r.Constraint == "" && len(r.NodeList) == 0 && len(r.Exclude) == 0 {
		return nil
	}
	if m, ok := c.jobMasks[j.ID]; ok {
		return m
	}
	m := jobNodeMask(c.Cluster, r, &c.State.masks)
	if c.jobMasks == nil {
		c.jobMasks = map[JobID]NodeSet{}
	}
	c.jobMasks[j.ID] = m
	return m
}

// jobNodeMask builds the node mask of a request: the constraint
// expression (`a&b`, `a|b`, `a,b`; brackets are read as plain grouping),
// the --nodelist nodes and minus the --exclude nodes.
// Constraint masks come from mc (nil: evaluated afresh).
func jobNodeMask(cl *Cluster, r *Request, mc *maskCache) NodeSet {
	n := len(cl.Nodes)
	m := NewNodeSet(n)
	if r.Constraint != "" {
		m = mc.constraint(cl, r.Constraint)
	} else {
		for i := 0; i < n; i++ {
			m.Set(i)
		}
	}
	if len(r.NodeList) > 0 {
		want := NewNodeSet(n)
		for _, name := range r.NodeList {
			if i := cl.NodeIndex(name); i >= 0 {
				want.Set(int(i))
			}
		}
		m.And(want)
	}
	for _, name := range r.Exclude {
		if i := cl.NodeIndex(name); i >= 0 {
			m.Clear(int(i))
		}
	}
	return m
}

// maskCache keeps the constraint masks of one Cluster by expression, so a
// job's expression is parsed once, not on every pass: a Cluster's feature
// sets are fixed when NewCluster builds it, so a mask never goes stale.
type maskCache struct {
	cl *Cluster
	m  map[string]NodeSet
}

// maxMaskCache bounds the cache (expressions are user input).
const maxMaskCache = 4096

// constraint returns cl's mask for expr, a copy the caller may change.
func (mc *maskCache) constraint(cl *Cluster, expr string) NodeSet {
	if mc == nil {
		return constraintMask(cl, expr)
	}
	if mc.cl != cl || len(mc.m) >= maxMaskCache {
		mc.cl, mc.m = cl, map[string]NodeSet{}
	}
	m, ok := mc.m[expr]
	if !ok {
		m = constraintMask(cl, expr)
		mc.m[expr] = m
	}
	return m.Clone()
}

// featureBrackets drops the grouping characters of a --constraint
// expression. It is built once: a Replacer builds its tables on first use,
// and building one per submitted job was half of what a long replay
// allocated. A Replacer is safe for concurrent use.
var featureBrackets = strings.NewReplacer("[", "", "]", "", "(", "", ")", "")

// constraintMask evaluates a --constraint expression over node features:
// '|' separates alternatives, '&' and ',' join required features.
func constraintMask(cl *Cluster, expr string) NodeSet {
	n := len(cl.Nodes)
	out := NewNodeSet(n)
	expr = featureBrackets.Replace(expr)
	for _, term := range strings.Split(expr, "|") {
		t := NewNodeSet(n)
		for i := 0; i < n; i++ {
			t.Set(i)
		}
		for _, f := range strings.FieldsFunc(term, func(r rune) bool { return r == '&' || r == ',' }) {
			f, _, _ = strings.Cut(strings.TrimSpace(f), "*")
			fs := cl.featureNodes[f]
			if fs == nil {
				t = NewNodeSet(n)
				break
			}
			t.And(fs)
		}
		out.Or(t)
	}
	return out
}

// checkFeatures rejects a --constraint naming a feature no node of the
// cluster has, with Slurm's "Invalid feature specification" (before the
// job gets an id, unlike a request no node can satisfy).
func (st *State) checkFeatures(j *Job, _ Submitter) error {
	if j.Req.Constraint == "" {
		return nil
	}
	expr := featureBrackets.Replace(j.Req.Constraint)
	for _, f := range strings.FieldsFunc(expr, func(r rune) bool { return r == '&' || r == ',' || r == '|' }) {
		f, _, _ = strings.Cut(strings.TrimSpace(f), "*")
		if st.Cluster.featureNodes[f] == nil {
			return reject(ErrInvalidFeature)
		}
	}
	return nil
}

// unavailableDesc is Slurm's state description for ReqNodeNotAvail:
// "ReqNodeNotAvail, UnavailableNodes:node[1-2]" naming the requested nodes
// that cannot take work, "ReqNodeNotAvail, May be reserved for other
// job" for a job that requested none.
func (c *Cycle) unavailableDesc(j *Job) string {
	if len(j.Req.NodeList) == 0 {
		return StateDescMayBeReserved
	}
	var down []string
	for _, name := range j.Req.NodeList {
		if i := c.Cluster.NodeIndex(name); i >= 0 && !c.Avail.Usable.Has(int(i)) {
			down = append(down, name)
		}
	}
	return "ReqNodeNotAvail, UnavailableNodes:" + hostlist.Compress(down)
}

// partGateDesc returns the state description squeue shows instead of a
// partition gate's reason r, "" if none.
func (c *Cycle) partGateDesc(j *Job, part int32, r Reason) string {
	switch r {
	case ReasonReqNodeNotAvail:
		return c.unavailableDesc(j)
	case ReasonNodesDown:
		return StateDescNodesDown
	case ReasonQOSNotAllowed:
		if pt := &c.Cluster.Partitions[part]; pt.AllowQOS != nil {
			// Slurm: "(qosonly allows normal not other)"
			return "Job's QOS not permitted to use this partition (" + pt.Name + " allows " +
				strings.Join(pt.AllowQOS, ",") + " not " + j.QOS + ")"
		}
	}
	return ""
}

// partHasUsable reports (cached per cycle) whether partition part has a
// node that can take work.
func (c *Cycle) partHasUsable(part int32) bool {
	if c.partUsable == nil {
		c.partUsable = make([]int8, len(c.Cluster.Partitions))
	}
	if c.partUsable[part] == 0 {
		c.partUsable[part] = -1
		if c.Cluster.Partitions[part].Nodes.Intersects(c.Avail.Usable) {
			c.partUsable[part] = 1
		}
	}
	return c.partUsable[part] > 0
}
