package sched

import (
	"slices"
	"time"
)

// QueueRec is one record of the scheduling queue: a pending job in one of
// its partitions (Slurm queues one record per job and partition).
type QueueRec struct {
	Job *Job
	// Part is the partition index.
	Part int32
	// Priority is the job's priority in this partition.
	Priority uint32
	// Tier is the partition's PriorityTier.
	Tier uint16
	// sub is the record's place among its job's records in gate order
	// (the stable sort's tie-break, made explicit for sortQueue).
	sub uint16
	// Rank is the preemption rank (a job that can preempt sorts first).
	Rank int32
	// Resv is the reservation the record runs in: 1 + its index in the
	// cycle's reservation list, 0 for none (resv_cycle.go).
	Resv int32
	// slot is the job's entry in the cycle's pending table.
	slot int32
}

// Cycle is one scheduling cycle's working state: the ordered queue, the
// free resources as decisions are taken, the usage counters including the
// jobs started in this cycle, and the plan being built. The pipeline steps
// (main scheduler, backfill, preemption, gang) all work on it.
type Cycle struct {
	State   *State
	Cluster *Cluster
	Config  *Config
	Now     time.Time
	// Plan is the plan being built.
	Plan Plan
	// Queue are the records that passed the gate, in scheduling order.
	Queue []QueueRec
	// Avail are the free resources after the decisions taken so far.
	Avail *Avail

	sel        *selector
	pend       []PendingInfo // one per pending job, job-id order
	pendJob    []*Job
	done       []bool // slot started (or, for arrays, fully started)
	partFail   []bool // partition failed with Resources in the main pass
	use        *cycleUsage
	arrayRun   map[JobID]int32   // running tasks per array job id (nil: none)
	jobMasks   map[JobID]NodeSet // nil until a job has a mask
	scratch    NodeSet
	limReq     []int64
	limPerNode []int64
	arrays     map[JobID][]*Job // array members by array job id
	singletons map[string]bool  // user/name of singleton jobs started this cycle
	// activeNames counts running jobs by user/name and keeps the first
	// pending one (singleton), built lazily.
	activeNames map[string]singletonUse
	// corrIdx are the arrays aftercorr names, indexed by task (lazily).
	corrIdx map[JobID]*corrIndex
	// partUsable caches whether a partition has a usable node (1 yes, -1 no).
	partUsable []int8
	// partCaps caches partCapacity per partition (gate.go).
	partCaps  []cachedCap
	passNodes NodeSet // nodes the main pass still offers
	// blockers are the jobs the main pass found no room for; unsure is
	// set when it skipped a record for another reason (main_stuck.go).
	blockers []JobID
	unsure   bool
	unqueued int    // pending jobs with no queue record (gate)
	cfg      Config // what Config points to (Schedule\'s copy)
	// shapes are the records' job shapes by slot, computed once a cycle
	// (recShape); shapePart is the partition each was computed for, + 1.
	shapes    []shape
	shapePart []int32
	rx        *resvCycle // reservations and licenses (resv_cycle.go)
}

// Schedule runs one scheduling cycle at now: gate, order, main scheduler,
// then the backfill and preemption steps, and returns the plan. It does
// not change st; apply the plan with st.Apply.
func Schedule(st *State, now time.Time, cfg Config) Plan {
	c := newCycle(st, now, cfg)
	if gangStep != nil {
		gangStep(c)
	}
	lazy := c.lazyPass() // lazy_queue.go: the kept queue, walked from its head
	if !lazy {
		c.gate()
		c.order()
		c.mainPass()
	}
	c.Plan.StaticGates = c.gatesStatic()
	c.Plan.Stuck = c.stuck()
	if cfg.Backfill.Enabled && backfillStep != nil {
		backfillStep(c)
		c.Plan.BackfillPass = true
	}
	c.finish()
	c.Avail.notePlan(&c.Plan)
	c.lazyKeep(!lazy)
	st.cycUse = c.use
	st.bufs.keep(c)
	return c.Plan
}

func newCycle(st *State, now time.Time, cfgVal Config) *Cycle {
	cl := st.Cluster
	b := &st.bufs
	c := b.cycle // the last cycle's, every field set afresh (nothing keeps it)
	if c == nil {
		c = &Cycle{}
	}
	*c = Cycle{State: st, Cluster: cl, cfg: cfgVal, Now: now, Plan: Plan{Now: now, Starts: b.starts},
		sel: b.selector().reset(cl, &c.cfg), partFail: grow(b.partFail, len(cl.Partitions)),
		scratch: emptySet(b.scratch, len(cl.Nodes))}
	clear(c.partFail)
	b.starts = nil                              // the plan's now (Recycle hands it back)
	c.Config = &c.cfg                           // a field of the reused Cycle: cfg does not escape
	c.Avail, st.bufs.avail = st.bufs.avail, nil // the last cycle's view, refilled
	if c.Avail == nil {
		c.Avail = &Avail{}
	}
	if !cfgVal.IncrementalQueue || st.availAll || !c.Avail.refill(cl, st.availDirty) {
		c.Avail.fill(cl)
	}
	st.availDirty, st.availAll = st.availDirty[:0], false
	c.trackOwners()
	c.passNodes = append(b.passNodes[:0], c.Avail.Usable...)
	c.use, st.cycUse = st.cycUse, nil
	if c.use == nil {
		c.use = &cycleUsage{}
	}
	c.use.reuse(&st.usage)
	st.bfSlabs.next, st.bfSlabs.nextIval, st.bfSlabs.nextMap = 0, 0, 0
	c.use.addRunMins(c)
	c.use.addHistory(c)
	c.indexArrays()
	return c
}

// isActive reports whether j holds resources (running or suspended).
func isActive(j *Job) bool {
	b := j.State.Base()
	return b == JobRunning || b == JobSuspended
}

// mainPass is Slurm's main scheduler (job_scheduler.c _schedule): records
// in queue order; a record that does not fit for lack of resources marks
// its partition failed and takes the partition's nodes out of the rest of
// the pass, so lower records there (and in overlapping partitions) wait
// with reason Priority; a record blocked by an accounting limit does not
// (unless assoc_limit_stop).
func (c *Cycle) mainPass() {
	for i := range c.Queue {
		c.mainRec(&c.Queue[i])
	}
}

// mainRec is the main pass's step for one record.
func (c *Cycle) mainRec(rec *QueueRec) {
	if c.done[rec.slot] {
		return
	}
	if c.mainStopped() {
		c.setReasonIfNone(rec, ReasonPriority)
		c.unsure = true
		return
	}
	c.Plan.Stats.Depth++
	if c.partFail[rec.Part] {
		c.setReasonPriority(rec)
		return
	}
	blocked := len(c.blockers)
	started := false
	for c.tryStart(rec) {
		started = true
		if rec.Job.Array == nil || rec.Job.Array.TaskID >= 0 || c.done[rec.slot] {
			break
		}
	}
	if !started && len(c.blockers) == blocked {
		c.unsure = true // skipped by a gate, not for lack of room
	}
}

// mainStopped reports whether the main pass has tested as many records
// as default_queue_depth allows or started MaxJobStart jobs.
func (c *Cycle) mainStopped() bool {
	depth, maxStart := c.Config.DefaultQueueDepth, c.Config.MaxJobStart
	return depth > 0 && c.Plan.Stats.Depth >= depth || maxStart > 0 && c.Plan.Stats.Started >= maxStart
}

// tryStart tries to start rec (one task of a pending array record) now.
func (c *Cycle) tryStart(rec *QueueRec) bool {
	j := rec.Job
	if r := c.arrayThrottle(j); r != "" {
		c.setReason(rec, r)
		return false
	}
	if hasSingleton(j) && c.singletons[singletonKey(j)] || !c.corrReady(j) {
		c.setReason(rec, ReasonDependency)
		return false
	}
	if r := c.LimitReason(rec); r != "" {
		c.setReason(rec, r)
		if c.Config.AssocLimitStop {
			c.failPartition(rec)
		}
		return false
	}
	if c.resvGate(rec) {
		return false // reservation not started, or licenses short: the partition is not blocked
	}
	mask := c.candidates(rec, c.passNodes)
	if al, ok := c.Fit(rec, c.Avail, mask); ok {
		c.StartJob(rec, al, c.TimeLimit(j, rec.Part), false, nil)
		return true
	}
	if c.Config.PreemptType != PreemptNone && preemptStep != nil && preemptStep(c, rec) {
		return true
	}
	if c.namedNodesTaken(rec) {
		return false
	}
	if c.resvFitFailed(rec) {
		return false // a reservation's job blocks only its reservation; MAINT reason
	}
	if desc := c.unusableDesc(rec); desc != "" {
		// Too few nodes are up and unreserved for it even with every job
		// ended: Slurm's ReqNodeNotAvail, which does not block the
		// partition (a job naming its nodes blocks those).
		c.setReqNodeNotAvail(rec, desc)
		c.blockNamedNodes(rec)
		return false
	}
	c.setReason(rec, ReasonResources)
	c.blockers = append(c.blockers, j.ID)
	if !c.blockNamedNodes(rec) {
		c.failPartition(rec)
	}
	return false
}

// passMask is a new set of the nodes rec may use in the rest of the main
// pass: its partition's still offered, within its -w/-x/-C mask.
func (c *Cycle) passMask(rec *QueueRec) NodeSet {
	m := c.Cluster.Partitions[rec.Part].Nodes.Clone()
	m.And(c.passNodes)
	if jm := c.JobMask(rec.Job); jm != nil {
		m.And(jm)
	}
	return m
}

// setReqNodeNotAvail gives rec Slurm's ReqNodeNotAvail with the state
// description squeue shows in its place.
func (c *Cycle) setReqNodeNotAvail(rec *QueueRec, desc string) {
	c.setReason(rec, ReasonReqNodeNotAvail)
	c.pend[rec.slot].StateDesc = desc
}

// blockNamedNodes takes the nodes a job named (-w) out of the rest of the
// main pass when it cannot start: such a job blocks only those nodes, not
// its whole partition (job_scheduler.c). It reports whether the job named
// nodes.
func (c *Cycle) blockNamedNodes(rec *QueueRec) bool {
	if len(rec.Job.Req.NodeList) == 0 {
		return false
	}
	if jm := c.JobMask(rec.Job); jm != nil {
		c.passNodes.AndNot(jm)
	}
	return true
}

// namedNodesTaken gives ReqNodeNotAvail, "May be reserved for other job"
// to a job naming (-w) a usable node that a higher-priority job naming it
// took out of this pass by failing to start, busy or reserved (oracle,
// named-nodes-blocked); backfill may still start it. It reports whether
// it did.
func (c *Cycle) namedNodesTaken(rec *QueueRec) bool {
	if len(rec.Job.Req.NodeList) == 0 {
		return false
	}
	jm := c.JobMask(rec.Job)
	if jm == nil || !jm.IntersectsAndNot(c.Avail.Usable, c.passNodes) {
		return false
	}
	c.setReqNodeNotAvail(rec, StateDescMayBeReserved)
	return true
}

// unusableDesc returns the state description of rec when the nodes of
// its partition up and outside other reservations could not run it even
// if idle, "" when they could: "Reserved for maintenance" when
// reservations hold all of them (oracle: a reservation of every node
// for alice, bob's -N1 job), else "May be reserved for other job"
// (a drained node, nodes in another's reservation).
func (c *Cycle) unusableDesc(rec *QueueRec) string {
	pt := &c.Cluster.Partitions[rec.Part]
	m := pt.Nodes.Clone()
	m.And(c.Avail.Usable)
	if jm := c.JobMask(rec.Job); jm != nil {
		m.And(jm)
	}
	if m.Empty() {
		return ""
	}
	c.resvMask(rec, m)
	switch {
	case m.Empty():
		return c.reservedDesc(rec)
	case !c.State.everFit.canEverFit(c.State, c.sel, rec.Job, rec.Part, c.State.emptyView(), m):
		return StateDescMayBeReserved
	}
	return ""
}

// everFitCache remembers canEverFit answers by job shape. The first
// job of a deep queue that does not fit asks, at every pass, whether it
// could ever run on the nodes left up, and every submission asks whether
// it could ever run at all (checkFits): on a large cluster each is a fit
// on the empty 8,192-node view, costing as much as the rest of the pass.
// For a request without GRES the answer depends only on its shape, its
// partition, the nodes offered and ConsumeMemory, and a trace has few
// distinct shapes. Answers are dropped when State.shapeGen moves
// (partition and node-set updates) or the cluster is replaced.
type everFitCache struct {
	cl    *Cluster
	empty *Avail
	gen   uint64
	masks []NodeSet // the node sets offered, by key index
	ok    map[everFitKey]bool
}

// everFitKey is a shape without its GRES list (only gres-free shapes are
// remembered), the partition, the offered set's index and ConsumeMemory.
type everFitKey struct {
	minNodes, maxNodes, tasks, tasksPerNode, cpusPerTask int32
	minCPUsPerNode, maxCPUsPerNode, share                int32
	memPerCPU, memPerNode, gpusPerNode, gpusJob          int64
	gpusType, exclUser                                   string
	exclusive, consumeMem                                bool
	part, mask                                           int32
}

// maxEverFitMasks and maxEverFitShapes bound the distinct offered sets
// and the answers remembered at once.
const (
	maxEverFitMasks  = 8
	maxEverFitShapes = 4096
)

// canEverFit is sel.canEverFit(j, cl.Partitions[part], empty, m),
// remembered for gres-free shapes.
func (e *everFitCache) canEverFit(st *State, sel *selector, j *Job, part int32, empty *Avail, m NodeSet) bool {
	pt := &st.Cluster.Partitions[part]
	s := jobShape(sel.cfg, j, pt)
	if len(s.gres) > 0 {
		return sel.canEverFit(j, pt, empty, m)
	}
	if e.cl != st.Cluster || e.empty != empty || e.gen != st.shapeGen || e.ok == nil {
		*e = everFitCache{cl: st.Cluster, empty: empty, gen: st.shapeGen, masks: e.masks[:0], ok: map[everFitKey]bool{}}
	}
	mi := slices.IndexFunc(e.masks, func(x NodeSet) bool { return slices.Equal(x, m) })
	if mi < 0 {
		if len(e.masks) == maxEverFitMasks {
			e.masks, e.ok = e.masks[:0], map[everFitKey]bool{}
		}
		mi = len(e.masks)
		e.masks = append(e.masks, m.Clone())
	}
	k := everFitKey{minNodes: s.minNodes, maxNodes: s.maxNodes, tasks: s.tasks, tasksPerNode: s.tasksPerNode,
		cpusPerTask: s.cpusPerTask, minCPUsPerNode: s.minCPUsPerNode, maxCPUsPerNode: s.maxCPUsPerNode,
		share: s.share, memPerCPU: s.memPerCPU, memPerNode: s.memPerNode, gpusPerNode: s.gpusPerNode,
		gpusJob: s.gpusJob, gpusType: s.gpusType, exclUser: s.exclUser, exclusive: s.exclusive,
		consumeMem: sel.cfg.ConsumeMemory, part: part, mask: int32(mi)}
	ok, seen := e.ok[k]
	if !seen && len(e.ok) >= maxEverFitShapes {
		clear(e.ok) // shapes are user input: a controller running for months sees many
	}
	if !seen {
		ok = sel.canEverFit(j, pt, empty, m)
		e.ok[k] = ok
	}
	return ok
}

// failPartition takes the record's partition out of the rest of the pass.
func (c *Cycle) failPartition(rec *QueueRec) {
	p := &c.Cluster.Partitions[rec.Part]
	c.partFail[rec.Part] = true
	c.passNodes.AndNot(p.Nodes)
	for i := range c.partFail {
		if !c.partFail[i] && !c.Cluster.Partitions[i].Nodes.Intersects(c.passNodes) {
			c.partFail[i] = true // every node of an overlapping partition is gone
		}
	}
}

// candidates returns the nodes rec may use among offer: the partition's
// nodes and the job's constraint/nodelist/exclude mask. The result is the
// cycle's scratch set, valid until the next call.
func (c *Cycle) candidates(rec *QueueRec, offer NodeSet) NodeSet {
	m := c.scratch
	m.CopyFrom(c.Cluster.Partitions[rec.Part].Nodes)
	m.And(offer)
	if jm := c.JobMask(rec.Job); jm != nil {
		m.And(jm)
	}
	c.resvMask(rec, m)
	return m
}

// Fit selects nodes for rec among mask given the free resources av.
func (c *Cycle) Fit(rec *QueueRec, av *Avail, mask NodeSet) (Alloc, bool) {
	if mask.Empty() {
		return Alloc{}, false
	}
	return c.sel.fitShape(rec.Job, c.recShape(rec), av, mask)
}

// StartJob records the decision to start rec now with allocation al and
// time limit limit, taking the resources from c.Avail and counting the job
// in the cycle's usage. preempts lists the jobs that must be preempted for
// it (already recorded with c.Preempt).
func (c *Cycle) StartJob(rec *QueueRec, al Alloc, limit time.Duration, backfill bool, preempts []JobID) {
	j := rec.Job
	resvEnd := c.resvOnStart(rec) // licenses taken
	task := int32(-1)
	if j.Array != nil && j.Array.TaskID < 0 {
		task = c.nextTask(rec)
		c.countArrayTask(j)
	} else {
		if j.Array != nil {
			c.countArrayTask(j)
		}
		c.done[rec.slot] = true
	}
	lo := len(c.Avail.touched)
	c.Avail.Take(&al)
	c.Avail.noteStart(len(c.Plan.Starts), lo, &al)
	for i := 0; c.Avail.owner != nil && i < len(al.Nodes); i++ { // owners tracked: ExclusiveUser
		c.Avail.setOwner(al.Nodes[i], j.User)
	}
	c.use.start(c, j, rec.Part, &al)
	if hasSingleton(j) {
		if c.singletons == nil {
			c.singletons = map[string]bool{}
		}
		c.singletons[singletonKey(j)] = true
	}
	c.Plan.Starts = append(c.Plan.Starts, Start{Job: j.ID, ArrayTask: task, Partition: rec.Part,
		Alloc: al, TimeLimit: limit, Backfill: backfill, Preempts: preempts, ResvEnd: resvEnd})
	if backfill {
		c.Plan.Stats.Backfilled++
	} else {
		c.Plan.Stats.Started++
	}
}

// nextTask returns the lowest pending task of an array record not yet
// started in this cycle, and marks the record done when none remain.
func (c *Cycle) nextTask(rec *QueueRec) int32 {
	j := rec.Job
	task, started := c.peekTask(j)
	if j.Array.Tasks.Count() == started+1 {
		c.done[rec.slot] = true
	}
	return task
}

// peekTask returns the lowest pending task of array record j not yet
// started in this cycle (-1 if none), and how many were. With aftercorr,
// a task whose dependency can never be satisfied is passed over, as Slurm
// tests each task on its own.
func (c *Cycle) peekTask(j *Job) (int32, int) {
	started := 0
	for _, s := range c.Plan.Starts {
		if s.Job == j.ID {
			started++
		}
	}
	corr := hasAfterCorr(j)
	n := 0
	task := int32(-1)
	j.Array.Tasks.ForEach(func(t int) bool {
		if corr {
			if c.startedTask(j, int32(t)) || c.taskDeps(j, int32(t)) == depNever {
				return true
			}
			task = int32(t)
			return false
		}
		if n == started {
			task = int32(t)
			return false
		}
		n++
		return true
	})
	return task, started
}

// startedTask reports whether task of record j starts in this cycle.
func (c *Cycle) startedTask(j *Job, task int32) bool {
	for _, s := range c.Plan.Starts {
		if s.Job == j.ID && s.ArrayTask == task {
			return true
		}
	}
	return false
}

// taskDeps evaluates the dependencies of one task of record j.
func (c *Cycle) taskDeps(j *Job, task int32) depResult {
	res, _ := c.depStatus(j, task)
	return res
}

// corrReady reports whether the next task of j may start under its
// aftercorr dependencies: a record passes the gate when one of its tasks
// may, and each task of the cycle is judged on its own, as Slurm tests
// aftercorr task by task.
func (c *Cycle) corrReady(j *Job) bool {
	if j.Array == nil || j.Array.TaskID >= 0 || !hasAfterCorr(j) {
		return true
	}
	task, _ := c.peekTask(j)
	return task >= 0 && c.taskDeps(j, task) == depOK
}

// Preempt records the decision to preempt victim (mode PreemptCancel,
// PreemptRequeue or PreemptSuspend) for preemptor by, and gives the
// victim's resources back to c.Avail (a suspended job keeps its memory
// and GRES, as in Slurm, so only its CPUs come back).
func (c *Cycle) Preempt(victim *Job, mode PreemptMode, by JobID, grace time.Duration) {
	c.Plan.Preemptions = append(c.Plan.Preemptions, Preemption{Job: victim.ID, Mode: mode, By: by,
		GraceEnd: c.Now.Add(grace)})
	if mode == PreemptSuspend {
		cpuOnly := Alloc{Nodes: victim.Alloc.Nodes, CPUs: victim.Alloc.CPUs, Mem: make([]int64, len(victim.Alloc.Nodes)),
			Exclusive: victim.Alloc.Exclusive}
		c.Avail.Release(&cpuOnly)
		// a suspended job still counts as holding its nodes
		c.Avail.touchedAll = true // not through Take or Release: refill cannot follow
		for _, ni := range victim.Alloc.Nodes {
			c.Avail.Jobs[ni]++
		}
	} else {
		c.Avail.Release(&victim.Alloc)
	}
	c.use.stop(c, victim)
}

// Resume records the decision to resume suspended job j.
func (c *Cycle) Resume(j *Job) {
	c.Plan.Resumes = append(c.Plan.Resumes, j.ID)
	cpuOnly := Alloc{Nodes: j.Alloc.Nodes, CPUs: j.Alloc.CPUs, Mem: make([]int64, len(j.Alloc.Nodes)),
		Exclusive: j.Alloc.Exclusive}
	c.Avail.Take(&cpuOnly)
	c.Avail.touchedAll = true // Jobs below: refill cannot follow
	for _, ni := range j.Alloc.Nodes {
		c.Avail.Jobs[ni]--
	}
}

// Pending returns the pending entry of rec's job (reason, expected start).
func (c *Cycle) Pending(rec *QueueRec) *PendingInfo { return &c.pend[rec.slot] }

// Started reports whether rec's job was started in this cycle (for an
// array record: whether all its pending tasks were).
func (c *Cycle) Started(rec *QueueRec) bool { return c.done[rec.slot] }

// SetPlanned records backfill's expected start and nodes for rec.
func (c *Cycle) SetPlanned(rec *QueueRec, start time.Time, nodes []int32) {
	p := &c.pend[rec.slot]
	if !p.ExpectedStart.IsZero() && !start.Before(p.ExpectedStart) {
		return // another partition's record plans it earlier
	}
	p.ExpectedStart, p.PlannedNodes, p.Partition = start, nodes, rec.Part
}

// SetReason sets rec's job's pending reason.
func (c *Cycle) SetReason(rec *QueueRec, r Reason) { c.setReason(rec, r) }

// setReason sets the reason unless an earlier record of the same job (a
// higher-ranked partition) already gave one.
func (c *Cycle) setReason(rec *QueueRec, r Reason) {
	p := &c.pend[rec.slot]
	if p.Reason == "" || p.Reason == ReasonNone || p.Partition < 0 || p.Partition == rec.Part {
		p.Reason, p.Partition = r, rec.Part
	}
}

func (c *Cycle) setReasonIfNone(rec *QueueRec, r Reason) {
	if p := &c.pend[rec.slot]; p.Reason == "" || p.Reason == ReasonNone {
		p.Reason, p.Partition = r, rec.Part
	}
}

// setReasonPriority gives Slurm's Priority reason to a record skipped
// because its partition failed (if it had no reason or Resources).
func (c *Cycle) setReasonPriority(rec *QueueRec) {
	p := &c.pend[rec.slot]
	if p.Reason == "" || p.Reason == ReasonNone || p.Reason == ReasonResources && p.Partition == rec.Part {
		p.Reason, p.Partition = ReasonPriority, rec.Part
	}
}

// finish fills Plan.Pending with every job that stays pending.
func (c *Cycle) finish() {
	c.Plan.Pending = slices.Grow(c.State.bufs.plan, len(c.pend)) // sized once: see gate
	c.Plan.pendJobs = slices.Grow(c.State.bufs.planJobs, len(c.pend))
	c.State.bufs.plan, c.State.bufs.planJobs = nil, nil // the plan's now
	for slot := range c.pend {
		if c.done[slot] {
			continue
		}
		p := c.pend[slot]
		if p.Reason == "" {
			p.Reason = ReasonNone
		}
		c.Plan.Pending = append(c.Plan.Pending, p)
		c.Plan.pendJobs = append(c.Plan.pendJobs, c.pendJob[slot])
	}
}

func hasSingleton(j *Job) bool {
	for _, d := range j.Req.Deps {
		if d.Kind == DepSingleton {
			return true
		}
	}
	return false
}

func singletonKey(j *Job) string { return j.User + "\x00" + j.Req.Name }

// trackOwners records which user holds each node when some partition is
// ExclusiveUser=YES (only then does selection need it).
func (c *Cycle) trackOwners() {
	needed := false
	for i := range c.Cluster.Partitions {
		needed = needed || c.Cluster.Partitions[i].ExclusiveUser
	}
	if !needed {
		return
	}
	c.Avail.owner = make([]string, len(c.Cluster.Nodes))
	for _, j := range c.State.jobList {
		if isActive(j) {
			for _, ni := range j.Alloc.Nodes {
				c.Avail.setOwner(ni, j.User)
			}
		}
	}
}
