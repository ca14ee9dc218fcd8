package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/priority"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// defaultEpoch is the wall-clock time of a trace's time 0 when the trace
// does not give one (UB events, JSONL): 2026-01-01T00:00:00Z.
const defaultEpoch = 1767225600

// purgeEvery is how many job ends pass between purges of finished jobs
// from the scheduler state (Slurm's MinJobAge), so passes stay
// proportional to the live queue.
const purgeEvery = 512

// Core is the production Policy: it drives the real scheduler core
// (internal/sched: Submit, Schedule, Apply, End) and the real priority
// plugin (internal/priority: fair-share tree, usage decay, multifactor or
// basic priorities) on the engine's virtual clock.
type Core struct {
	// queue holds the pending jobs in queue order under their current
	// priorities; runs the running jobs in id order (queue.go).
	queue []queued
	runs  []running
	// stuck is the last pass's certificate (sched.Plan.Stuck; nil: none)
	// and since the jobs submitted after it (MainMayStart).
	stuck, since []sched.JobID
	// static is the last pass's sched.Plan.StaticGates (TopBlocked).
	static bool
	// bfOK: the cluster is one the backfill certificate covers
	// (bfblocked.go); runEnds is BackfillBlocked's buffer.
	bfOK    bool
	runEnds []runEnd
	// bfOneType: every node is of one type (plannedBlocked); bfPlan is
	// plannedBlocked's buffer.
	bfOneType bool
	bfPlan    bfPlan
	// backfilled and starts are Schedule's per-pass buffers, reused:
	// the engine reads a pass's Decisions before the next pass.
	backfilled map[sched.JobID]bool
	starts     []Started
	conf       *conf.Config
	st         *sched.State
	cfg        sched.Config
	pcfg       priority.Config
	pcl        *priority.Cluster
	tree       *priority.Tree
	calc       priority.Calculator
	basic      priority.BasicAllocator
	epoch      int64

	ids     coreIDs // ids.go
	pending map[sched.JobID]*sched.Job
	ended   []priority.RunningJob
	// chargeBuf is charged's buffer.
	chargeBuf []*priority.RunningJob
	wakes     []int64
	lastCalc  time.Time
	ends      int
	stale     bool // fair-share and priorities need a refresh

	capa                Capacity
	allocCPU, allocGPU  int64
	preemptive, gpuKind []bool
	pj                  priority.Job
}

// NewCore builds the scheduler state and priority plugin of one setup for
// a trace.
func NewCore(setup Setup, tr *Trace) (*Core, error) {
	cf, err := loadConf(setup, tr)
	if err != nil {
		return nil, err
	}
	cl, err := sched.ClusterFromConf(cf)
	if err != nil {
		return nil, err
	}
	c := &Core{conf: cf, cfg: sched.ConfigFromConf(cf), epoch: tr.StartUnix,
		pending: map[sched.JobID]*sched.Job{}}
	// The simulator reports starts, not expected start times: backfill
	// may stop planning once nothing left in the queue can start.
	c.cfg.Backfill.StartsOnly = true
	// Nor every pending job's reason at every pass: the main pass tests
	// the queue from its head only (the starts are the same).
	c.cfg.IncrementalQueue = true
	if c.epoch == 0 {
		c.epoch = defaultEpoch
	}
	c.st = sched.NewState(cl, c.cfg)
	c.ids = newCoreIDs(tr.Jobs)
	markNodesUp(c.st, c.at(0))
	ap, err := loadAccounts(setup, tr, cf.ClusterName)
	if err != nil {
		return nil, err
	}
	c.st.SetPolicy(sched.CompilePolicy(ap, cf.ClusterName))
	if c.pcfg, err = priority.ConfigFrom(cf); err != nil {
		return nil, err
	}
	if c.tree, err = priority.FromPolicy(ap, cf.ClusterName); err != nil {
		return nil, err
	}
	c.pcl = priority.ClusterFrom(cf)
	// The simulator changes usage only through Decay, Charge and
	// ResetUsage and reads fair-share only through the priority package
	// (Calculator, sprio and sshare rows), so usage and the computed
	// values can stay in the tree's packed arrays (priority.PackUsage,
	// DeferFairShare): same values, fewer memory touches, and only the
	// fair-share of the users the Calculator asks for is computed.
	c.tree.PackUsage()
	c.tree.Recompute(&c.pcfg)
	c.calc.Reset(&c.pcfg, c.pcl, c.tree)
	c.capacity()
	c.bfOK = c.bfModel()
	c.bfOneType = oneNodeType(c.st.Cluster)
	return c, nil
}

// markNodesUp brings State=UNKNOWN nodes up, as their slurmd registering
// would on a live cluster.
func markNodesUp(st *sched.State, now time.Time) {
	for i := range st.Cluster.Nodes {
		n := &st.Cluster.Nodes[i]
		if n.State.Base() == sched.NodeUnknown {
			_ = st.SetNodeState(n.Name, sched.NodeIdle, "", now)
		}
	}
}

func (c *Core) capacity() {
	cl := c.st.Cluster
	c.gpuKind = make([]bool, len(cl.GresKinds))
	for k, g := range cl.GresKinds {
		c.gpuKind[k] = g.Name == "gpu"
	}
	for i := range cl.Nodes {
		n := &cl.Nodes[i]
		c.capa.CPUs += int64(n.CPUs)
		for k, cnt := range n.Gres {
			if c.gpuKind[k] {
				c.capa.GPUs += cnt
			}
		}
	}
}

// at converts virtual seconds to the core's wall-clock time.
func (c *Core) at(t int64) time.Time { return time.Unix(c.epoch+t, 0).UTC() }

// Capacity returns the cluster's CPU and GPU totals.
func (c *Core) Capacity() Capacity { return c.capa }

// Describe names the scheduler and priority plugins in use.
func (c *Core) Describe() string {
	s := "sched/builtin"
	if c.cfg.Backfill.Enabled {
		s = "sched/backfill"
	}
	p := "priority/multifactor"
	if c.pcfg.Type == priority.Basic {
		p = "priority/basic"
	}
	return s + ", " + p
}

// EngineConfig returns the engine timers of this configuration:
// bf_interval for backfill passes, PriorityCalcPeriod for multifactor.
func (c *Core) EngineConfig() EngineConfig {
	var ec EngineConfig
	if c.cfg.Backfill.Enabled {
		ec.BackfillInterval = max(int64(c.cfg.Backfill.Interval/time.Second), 1)
	}
	if c.pcfg.Type != priority.Basic {
		ec.CalcPeriod = max(int64(c.pcfg.CalcPeriod/time.Second), 1)
	}
	return ec
}

// NormShares returns each account's target share of the cluster.
func (c *Core) NormShares() map[string]float64 { return globalShares(c.tree) }

// Submit implements Policy: the job goes through sched.State.Submit (the
// same validation slurmctld does) and gets its priority at once.
func (c *Core) Submit(now int64, j *Job) error {
	t := c.at(now)
	req, err := c.request(j.JobSpec, t)
	if err != nil {
		return err
	}
	who := sched.Submitter{User: j.User, Group: j.Group, UID: 1000, GID: 1000}
	if j.UID != nil {
		who.UID = *j.UID
	}
	if j.GID != nil {
		who.GID = *j.GID
	}
	if who.User == "" {
		who.User = "nobody"
	}
	sj, err := c.st.Submit(req, who, t)
	if err != nil {
		if sj != nil { // never runnable: the core keeps it FAILED, the replay drops it
			c.st.Purge(func(o *sched.Job) bool { return o.ID == sj.ID })
		}
		return err
	}
	c.ids.add(j.ID, sj.ID)
	c.pending[sj.ID] = sj
	c.setEligible(sj, t)
	q := c.queued(sj)
	if !sj.DirectPriority {
		if c.pcfg.Type == priority.Basic {
			sj.Priority = c.basic.Next(req.Nice, sj.Hold != sched.HoldNone, 0)
		} else {
			// A refresh is due before any decision reads it (stale):
			// the priority is provisional, from the fair-share factors
			// as last computed, as a submission between Slurm's decay
			// passes reads them.
			c.tree.FreezeFairShare(c.stale)
			sj.Priority = c.calc.Priority(q.pj, t)
			c.tree.FreezeFairShare(false)
		}
	}
	c.enqueue(q)
	c.since = append(c.since, sj.ID)
	if b := req.BeginTime; b.After(t) {
		c.wakes = append(c.wakes, b.Unix()-c.epoch)
	}
	return nil
}

// setEligible starts a plain job's eligibility and age at submit, as the
// scheduler pass at submit would (the engine may skip that pass when it
// provably starts nothing).
func (c *Core) setEligible(j *sched.Job, t time.Time) {
	if j.Hold != sched.HoldNone || len(j.Req.Deps) > 0 || j.Req.BeginTime.After(t) || !j.EligibleTime.IsZero() {
		return
	}
	j.EligibleTime = t
	if j.AccrueTime.IsZero() {
		j.AccrueTime = t
	}
}

// End implements Policy: the job ends COMPLETED or TIMEOUT, its usage is
// charged at the next recalculation.
func (c *Core) End(now int64, id int64, timeout bool) {
	sid, ok := c.ids.toSched(id)
	if !ok {
		return
	}
	t := c.at(now)
	state := sched.JobCompleted
	if timeout {
		state = sched.JobTimeout
	}
	c.release(sid, t)
	_ = c.st.End(sid, state, 0, t)
	c.ends++
	if c.ends%purgeEvery == 0 {
		c.purge(t)
	}
}

// release stops charging a job that leaves the running set.
func (c *Core) release(sid sched.JobID, t time.Time) {
	if rj := c.removeRunning(sid); rj != nil {
		rj.End = t
		c.ended = append(c.ended, *rj)
	}
	if j := c.st.Job(sid); j != nil && j.State.Base() == sched.JobRunning {
		cpus, gpus := c.allocCounts(&j.Alloc)
		c.allocCPU -= cpus
		c.allocGPU -= gpus
	}
}

// purge forgets jobs that ended more than MinJobAge (300 s) ago.
func (c *Core) purge(t time.Time) {
	cutoff := t.Add(-300 * time.Second)
	c.st.Purge(func(j *sched.Job) bool {
		if j.EndTime.Before(cutoff) {
			c.ids.forget(j.ID)
			return true
		}
		return false
	})
}

// Schedule implements Policy: one sched.Schedule cycle (backfill only on
// backfill passes, the main scheduler otherwise), applied to the state.
func (c *Core) Schedule(now int64, backfill bool) Decisions {
	t := c.at(now)
	if c.stale {
		c.refresh(t)
	}
	cfg := c.cfg
	cfg.Backfill.Enabled = cfg.Backfill.Enabled && backfill
	plan := sched.Schedule(c.st, t, cfg)
	c.stuck, c.since = append(c.stuck[:0], plan.Stuck...), c.since[:0]
	c.static = plan.StaticGates && len(plan.Preemptions) == 0
	if plan.Stuck == nil || len(plan.Preemptions) > 0 {
		c.stuck = nil
	}
	var d Decisions
	for _, p := range plan.Preemptions {
		d.Preempted = append(d.Preempted, c.preempted(p, t))
	}
	for _, p := range plan.Preemptions {
		c.release(p.Job, t)
	}
	started := c.st.Apply(&plan)
	defer c.st.Recycle(&plan)            // read below (Starts), not after
	for _, id := range plan.DepCancels { // kill_invalid_depend: they never run
		delete(c.pending, id)
		c.dequeue(id)
	}
	for _, p := range plan.Preemptions {
		if j := c.st.Job(p.Job); j != nil && j.State.Base() == sched.JobRunning {
			// A grace time would keep it running; the simulator ends it
			// at once (see docs/differences.md).
			_ = c.st.Preempted(p.Job, p.Mode, t)
		}
		if j := c.st.Job(p.Job); j != nil && j.State.Base() == sched.JobSuspended {
			// Gang suspension is replayed as a requeue (docs/differences.md).
			_ = c.st.Requeue(p.Job, false, t)
		}
		if j := c.st.Job(p.Job); j != nil && j.State.Base() == sched.JobPending {
			c.pending[j.ID] = j
			j.Priority = c.priority(j, t)
			c.enqueue(c.queued(j))
			d.Wake = append(d.Wake, j.Req.BeginTime.Unix()-c.epoch)
		}
	}
	if c.backfilled == nil {
		c.backfilled = map[sched.JobID]bool{}
	}
	clear(c.backfilled)
	for _, s := range plan.Starts {
		if s.Backfill {
			c.backfilled[s.Job] = true
		}
	}
	d.Starts = c.starts[:0]
	for _, id := range started {
		if s, ok := c.started(id, c.backfilled[id], t); ok {
			d.Starts = append(d.Starts, s)
		}
	}
	c.starts = d.Starts
	d.Wake = append(d.Wake, c.wakes...)
	c.wakes = c.wakes[:0]
	return d
}

func (c *Core) preempted(p sched.Preemption, t time.Time) Preempted {
	id, _ := c.ids.toTrace(p.Job)
	j := c.st.Job(p.Job)
	requeue := p.Mode.Action() != sched.PreemptCancel && j != nil && j.Req.Requeue
	return Preempted{ID: id, Requeue: requeue}
}

// started records a started job and describes it for the engine.
func (c *Core) started(id sched.JobID, backfill bool, t time.Time) (Started, bool) {
	j := c.st.Job(id)
	tid, ok := c.ids.toTrace(id)
	if j == nil || !ok {
		return Started{}, false // an array task split off: not in the trace
	}
	delete(c.pending, id)
	c.dequeue(id)
	cpus, gpus := c.allocCounts(&j.Alloc)
	c.allocCPU += cpus
	c.allocGPU += gpus
	part := ""
	if j.Partition >= 0 {
		part = c.st.Cluster.Partitions[j.Partition].Name
	}
	// Per-TRES usage (GrpTRESRaw) is not tracked: fair-share needs only
	// the billing usage, and the maps cost more than the rest of a pass.
	rj := &priority.RunningJob{Assoc: c.assocIndex(j, part), QOS: j.QOS, Start: t, Billing: float64(cpus)}
	if j.Partition >= 0 {
		if w := c.conf.Partitions[j.Partition].BillingWeights; len(w) > 0 {
			rj.Billing = c.billing(j, cpus, gpus)
		}
	}
	c.addRunning(id, rj)
	return Started{ID: tid, TimeLimit: runLimit(j, t), Backfill: backfill, CPUs: cpus, GPUs: gpus,
		Account: j.Account, User: j.User, QOS: j.QOS, Partition: part}, true
}

// runLimit is how long job j, started at t, may run in seconds (0: no
// limit): its time limit, or less when its reservation ends first
// (Job.ResvEnd, ended TIMEOUT as the controller does).
func runLimit(j *sched.Job, t time.Time) int64 {
	limit := int64(0)
	if j.TimeLimit > 0 && j.TimeLimit != sched.Infinite {
		limit = int64(j.TimeLimit / time.Second)
	}
	if !j.ResvEnd.IsZero() {
		if left := max(int64(j.ResvEnd.Sub(t)/time.Second), 1); limit == 0 || left < limit {
			limit = left
		}
	}
	return limit
}

// billing applies the partition's TRESBillingWeights through the priority
// package's Billable.
func (c *Core) billing(j *sched.Job, cpus, gpus int64) float64 {
	alloc := map[string]int64{"cpu": cpus, "node": int64(len(j.Alloc.Nodes))}
	var mem int64
	for _, m := range j.Alloc.Mem {
		mem += m
	}
	alloc["mem"] = mem
	if gpus > 0 {
		alloc["gres/gpu"] = gpus
	}
	w, err := priority.ParseTRESWeights(c.conf.Partitions[j.Partition].TRESBillingWeights)
	if err != nil {
		return float64(cpus)
	}
	return priority.Billable(alloc, w, c.pcfg.Flags)
}

func (c *Core) allocCounts(al *sched.Alloc) (cpus, gpus int64) {
	for _, n := range al.CPUs {
		cpus += int64(n)
	}
	for _, g := range al.Gres {
		if int(g.Kind) < len(c.gpuKind) && c.gpuKind[g.Kind] {
			gpus += g.Count
		}
	}
	return
}

func (c *Core) assocIndex(j *sched.Job, part string) int {
	if i, ok := c.tree.LookupJob(j.Account, j.User, part); ok {
		return i
	}
	return priority.NoAssoc
}

// Recalc implements Policy: Slurm's decay pass every PriorityCalcPeriod
// (decay usage, charge the running jobs for the period). Fair-share and
// the pending jobs' priorities are recomputed right away only when that
// can reorder a queue a pass will look at (two or more pending jobs and
// not provably blocked); otherwise they are marked stale and recomputed
// before the next pass, which decides the same.
func (c *Core) Recalc(now int64) bool {
	if c.pcfg.Type == priority.Basic {
		return false
	}
	t := c.at(now)
	if priority.ResetDue(c.pcfg.UsageResetPeriod, c.lastCalc, t, time.UTC) {
		c.tree.ResetUsage()
	}
	if !c.lastCalc.IsZero() && t.After(c.lastCalc) {
		c.tree.Decay(&c.pcfg, math.Floor(t.Sub(c.lastCalc).Seconds()))
		c.tree.ChargeAll(&c.pcfg, c.charged(), c.lastCalc, t)
	}
	c.lastCalc = t
	c.ended = c.ended[:0]
	c.stale = true
	if len(c.pending) < 2 || c.Blocked(now) {
		return false
	}
	return c.refresh(t)
}

// charged lists the jobs a recalculation charges: those ended since the
// last one, then the running ones (the order of the additions to usage),
// in a buffer kept from one recalculation to the next.
func (c *Core) charged() []*priority.RunningJob {
	c.chargeBuf = c.chargeBuf[:0]
	for i := range c.ended {
		c.chargeBuf = append(c.chargeBuf, &c.ended[i])
	}
	for _, r := range c.runs {
		c.chargeBuf = append(c.chargeBuf, r.rj)
	}
	return c.chargeBuf
}

// refresh recomputes fair-share and every pending job's priority and
// reports whether the queue order changed. The queue is kept sorted
// under the priorities of the last refresh, so that is one scan; it is
// sorted again only when the order did change. The calculator is not
// Reset: what Reset derives (the largest partition, association and QOS
// priorities) never changes during a simulation, and DeferFairShare makes
// the fair-share values it reads those of the current usage.
func (c *Core) refresh(t time.Time) bool {
	c.stale = false
	moved := false
	c.tree.DeferFairShare(&c.pcfg)
	if !c.queueInOrder() { // a priority changed outside refresh
		slices.SortFunc(c.queue, cmpQueued)
	}
	for k := range c.queue {
		q := &c.queue[k]
		if j := q.j; !j.DirectPriority && j.Hold == sched.HoldNone {
			// what changes of a pending job's priority inputs: its
			// eligibility and accrue times, its hold, its priority
			// (PRIORITY_FLAGS=INCR_ONLY)
			pj := q.pj
			pj.AccrueTime, pj.EligibleTime, pj.Held, pj.Priority = j.AccrueTime, j.EligibleTime, false, j.Priority
			if p := c.calc.Priority(pj, t); p != j.Priority {
				j.Priority = p
				moved = true
			}
		}
	}
	if moved {
		c.st.OrderChanged() // the core's kept queue (sched.Config.IncrementalQueue) is sorted again
	}
	if c.queueInOrder() {
		return false
	}
	slices.SortFunc(c.queue, cmpQueued)
	c.stuck = nil // the last pass's certificate assumed the old order
	return true
}

func sortedJobIDs[V any](m map[sched.JobID]V) []sched.JobID {
	return appendSortedIDs(make([]sched.JobID, 0, len(m)), m)
}

// appendSortedIDs appends m's keys to out, ascending.
func appendSortedIDs[V any](out []sched.JobID, m map[sched.JobID]V) []sched.JobID {
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// priority computes a pending job's multifactor priority.
func (c *Core) priority(j *sched.Job, t time.Time) uint32 {
	c.fillPriorityJob(j, &c.pj)
	return c.calc.Priority(&c.pj, t)
}

func (c *Core) fillPriorityJob(j *sched.Job, pj *priority.Job) {
	c.fillPriorityJobAssoc(j, c.assocIndex(j, firstPartition(c.st, j)), pj)
}

// fillPriorityJobAssoc is fillPriorityJob for a job whose association
// index is known.
func (c *Core) fillPriorityJobAssoc(j *sched.Job, assoc int, pj *priority.Job) {
	part := firstPartition(c.st, j)
	cpus := int64(requestCPUs(&j.Req))
	*pj = priority.Job{ID: uint32(j.ID), User: j.User, Account: j.Account, Partition: part, QOS: j.QOS,
		Assoc: assoc, Nodes: uint32(max(j.Req.MinNodes, 1)), CPUs: uint32(cpus),
		AccrueTime: j.AccrueTime, EligibleTime: j.EligibleTime, Nice: j.Req.Nice,
		Held: j.Hold != sched.HoldNone, Priority: j.Priority, TRES: pj.TRES}
	if j.TimeLimit != sched.Infinite {
		pj.TimeLimit = j.TimeLimit
	}
	if len(c.pcfg.WeightTRES) > 0 {
		pj.TRES = map[string]int64{"cpu": cpus, "node": int64(max(j.Req.MinNodes, 1))}
		if g := requestGPUs(&j.Req); g > 0 {
			pj.TRES["gres/gpu"] = g
		}
		if m := j.Req.MemPerNode; m > 0 {
			pj.TRES["mem"] = m * int64(max(j.Req.MinNodes, 1))
		} else if m := j.Req.MemPerCPU; m > 0 {
			pj.TRES["mem"] = m * cpus
		}
	}
}

// Blocked implements Policy: no pending job asks for no more CPUs and GPUs
// than are free in the whole cluster (a necessary condition to start), no
// preemption is configured and no eligibility time is waiting to be
// reported.
func (c *Core) Blocked(now int64) bool {
	if c.cfg.PreemptType != sched.PreemptNone || len(c.wakes) > 0 {
		return false
	}
	freeCPU, freeGPU := c.capa.CPUs-c.allocCPU, c.capa.GPUs-c.allocGPU
	for k := range c.queue {
		if q := &c.queue[k]; q.cpus <= freeCPU && q.gpus <= freeGPU {
			return false
		}
	}
	return true
}

// MayStart implements Policy: the job fits in the free CPUs and GPUs on
// its own and does not wait behind a certified blocker (behindBlocker),
// or preemption is configured, or an eligibility time is waiting to be
// reported.
func (c *Core) MayStart(now int64, id int64) bool {
	if c.cfg.PreemptType != sched.PreemptNone || len(c.wakes) > 0 {
		return true
	}
	sid, ok := c.ids.toSched(id)
	j := c.pending[sid]
	if !ok || j == nil {
		return false
	}
	return c.fitsFree(j) && !c.behindBlocker(now, j)
}

// fitsFree reports whether j asks for no more CPUs and GPUs than are free
// in the whole cluster, a necessary condition to start.
func (c *Core) fitsFree(j *sched.Job) bool {
	return int64(requestCPUs(&j.Req)) <= c.capa.CPUs-c.allocCPU && requestGPUs(&j.Req) <= c.capa.GPUs-c.allocGPU
}

// behindBlocker reports whether a main pass now would provably skip j: on
// a cluster of one partition, some job of the last pass's certificate
// (sched.Plan.Stuck) is still pending, needs more CPUs or GPUs than are
// free, asks for no node list (so failing it fails the whole partition,
// as Slurm's main scheduler does), and comes before j in the queue. The
// certificate's proof (sched/main_stuck.go) then has that job fail the
// partition again before j is reached, and j is skipped with reason
// Priority. A deferred priority refresh is done first, at the instant
// the pass would do it (see MainMayStart).
func (c *Core) behindBlocker(now int64, j *sched.Job) bool {
	if c.stuck == nil || len(c.st.Cluster.Partitions) != 1 {
		return false
	}
	if c.stale && c.refresh(c.at(now)) {
		return false // the order changed: the certificate is void
	}
	for _, id := range c.stuck {
		b := c.pending[id]
		if b != nil && len(b.Req.NodeList) == 0 && cmpJobs(b, j) < 0 && !c.fitsFree(b) {
			return true
		}
	}
	return false
}

// TopBlocked implements the engine's topPolicy: true when a main pass
// now provably starts nothing, whatever changed since the last pass (an
// end, a reordering): on a cluster of one partition, with the gates of
// the last pass static (sched.Plan.StaticGates: no limits, reservations,
// preemption, arrays, singletons or licenses, every pending job queued),
// the first job of the queue was pending at that pass (so it still has a
// record, and it is the first record), asks for no node list and needs
// more CPUs or GPUs than are free. The main pass tests it first, finds no
// room, and fails the partition, so every other record waits with reason
// Priority (Slurm's main scheduler stops a partition at its first job
// that does not fit). A deferred priority refresh is done first, at the
// instant the pass would do it.
func (c *Core) TopBlocked(now int64) bool {
	if !c.static || len(c.wakes) > 0 || len(c.st.Cluster.Partitions) != 1 {
		return false
	}
	if c.stale {
		c.refresh(c.at(now))
	}
	if len(c.queue) == 0 {
		return false
	}
	top := c.queue[0].j
	if len(top.Req.NodeList) > 0 || c.fitsFree(top) || slices.Contains(c.since, top.ID) {
		return false
	}
	return true
}

// MainMayStart implements the engine's stuckPolicy: false when the last
// pass certified its main pass (sched.Plan.Stuck) and every job it found
// no room for, and every job submitted since, is either no longer pending
// or needs more CPUs or GPUs than are free, or (for the jobs submitted
// since) waits behind such a certified job (behindBlocker). The engine
// asks only when nothing but job ends happened since that pass, and only
// when the pass would otherwise run (the queue is not Blocked), so a
// deferred priority refresh is done here at the instant the pass would do
// it, and a changed order means the pass must run.
func (c *Core) MainMayStart(now int64) bool {
	if c.stuck == nil || len(c.wakes) > 0 {
		return true
	}
	if c.stale && c.refresh(c.at(now)) {
		return true
	}
	for _, id := range c.stuck {
		if j := c.pending[id]; j != nil && c.fitsFree(j) {
			return true
		}
	}
	for _, id := range c.since {
		if j := c.pending[id]; j != nil && c.fitsFree(j) && !c.behindBlocker(now, j) {
			return true
		}
	}
	return false
}

// requestCPUs is the least number of CPUs a request can be given.
func requestCPUs(r *sched.Request) int {
	tasks := int(r.NTasks)
	if tasks <= 0 && r.NTasksPerNode > 0 {
		tasks = int(r.NTasksPerNode) * int(max(r.MinNodes, 1))
	}
	tasks = max(tasks, 1)
	cpus := tasks * int(max(r.CPUsPerTask, 1))
	return max(cpus, int(r.MinNodes))
}

// requestGPUs is the least number of GPUs a request needs.
func requestGPUs(r *sched.Request) int64 {
	g := r.GPUs
	var perNode int64
	for _, x := range r.Gres {
		if x.Name == "gpu" {
			perNode += x.Count
		}
	}
	return max(g, perNode*int64(max(r.MinNodes, 1)))
}

// Inspect renders what squeue, sprio -l and sshare -al would print at
// now.
func (c *Core) Inspect(now int64) Inspection {
	t := c.at(now)
	if c.stale {
		c.refresh(t)
	}
	in := Inspection{T: now, Squeue: c.squeue(t)}
	var jobs []*priority.Job
	for _, id := range sortedJobIDs(c.pending) {
		pj := &priority.Job{}
		c.fillPriorityJob(c.pending[id], pj)
		jobs = append(jobs, pj)
	}
	c.calc.Reset(&c.pcfg, c.pcl, c.tree)
	rows := priority.SprioRows(&c.calc, jobs, t)
	var err error
	if in.Sprio, err = priority.FormatSprio(&c.pcfg, rows, priority.SprioOptions{Long: true}); err != nil {
		in.Sprio = "sprio: error: " + err.Error() + "\n"
	}
	if in.Sshare, err = priority.FormatSshare(c.tree, &c.pcfg, priority.SshareOptions{All: true, Long: true, Cluster: c.conf.ClusterName}); err != nil {
		in.Sshare = "sshare: error: " + err.Error() + "\n"
	}
	return in
}

// squeue renders squeue's default format (%.18i %.9P %.8j %.8u %.2t
// %.10M %.6D %R) for the pending and running jobs, sorted by partition,
// state and descending priority as squeue does by default.
func (c *Core) squeue(t time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%18s %9s %8s %8s %2s %10s %6s %s\n", "JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES", "NODELIST(REASON)")
	var jobs []*sched.Job
	for _, j := range c.st.Jobs() {
		if b := j.State.Base(); b == sched.JobPending || b == sched.JobRunning {
			jobs = append(jobs, j)
		}
	}
	slices.SortStableFunc(jobs, func(x, y *sched.Job) int {
		if px, py := c.partName(x), c.partName(y); px != py {
			return strings.Compare(px, py)
		}
		if x.State.Base() != y.State.Base() {
			return int(y.State.Base()) - int(x.State.Base()) // running (R) before pending (PD)
		}
		if x.Priority != y.Priority {
			if x.Priority > y.Priority {
				return -1
			}
			return 1
		}
		return int(x.ID) - int(y.ID)
	})
	for _, j := range jobs {
		st, elapsed, nodes, where := "PD", "0:00", max(int(j.Req.MinNodes), 1), "("+string(j.Reason)+")"
		if j.State.Base() == sched.JobRunning {
			st, elapsed, nodes = "R", elapsedString(t.Sub(j.StartTime)), len(j.Alloc.Nodes)
			where = compressNames(c.st.Cluster.NodeNames(j.Alloc.Nodes))
		}
		fmt.Fprintf(&b, "%18d %9s %8s %8s %2s %10s %6d %s\n", j.ID, trunc(c.partName(j), 9), trunc(j.Req.Name, 8), trunc(j.User, 8), st, elapsed, nodes, where)
	}
	return b.String()
}

func (c *Core) partName(j *sched.Job) string {
	p := j.Partition
	if p < 0 && len(j.Partitions) > 0 {
		p = j.Partitions[0]
	}
	if p < 0 {
		return ""
	}
	return c.st.Cluster.Partitions[p].Name
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// elapsedString is squeue's TIME column: 0:00, 1:23, 1:02:03, 1-02:03:04.
func elapsedString(d time.Duration) string {
	s := int64(math.Max(0, d.Seconds()))
	days, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	switch {
	case days > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, sec)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%d:%02d", m, sec)
}
