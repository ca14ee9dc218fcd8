package sim

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Policy is what the engine needs from a scheduler: the production
// implementation (Core) drives internal/sched and internal/priority; tests
// use a trivial FCFS. Times are seconds of virtual time since the trace's
// start; job ids are the trace's.
type Policy interface {
	// Submit hands a job to the scheduler; an error means the job was
	// rejected at submission (it is counted, never run).
	Submit(now int64, j *Job) error
	// End tells the scheduler that a running job ended (timeout: it hit
	// its time limit) so its resources are freed and its usage charged.
	End(now int64, id int64, timeout bool)
	// Schedule runs one scheduling pass (the main scheduler, and backfill
	// when backfill is true) and returns its decisions.
	Schedule(now int64, backfill bool) Decisions
	// Recalc recalculates priorities (and decays usage) as Slurm does every
	// PriorityCalcPeriod; it reports whether the order of the pending
	// queue changed, the only way a recalculation can change a decision.
	Recalc(now int64) (orderChanged bool)
	// Blocked reports that no pending job can start now in any order: none
	// fits in the free resources even alone, and nothing can be preempted.
	// The engine skips passes while it holds.
	Blocked(now int64) bool
	// MayStart reports whether the pending job id could start now on its
	// own (it fits in the free resources, or preemption is possible). When
	// the only changes since the last pass are submissions of jobs that
	// cannot, the pass would decide nothing new and is skipped.
	MayStart(now int64, id int64) bool
}

// Started describes a job the scheduler started, with what the metrics
// need to know of it.
type Started struct {
	ID int64
	// TimeLimit is the limit the job runs under in seconds (<= 0: none).
	TimeLimit int64
	// Backfill marks a start by the backfill scheduler.
	Backfill bool
	// CPUs and GPUs are the allocated counts.
	CPUs, GPUs int64
	// Account, User, QOS and Partition are the resolved names.
	Account, User, QOS, Partition string
}

// Preempted describes a running job the scheduler preempted.
type Preempted struct {
	ID int64
	// Requeue: the job goes back to the queue and will re-run its full
	// runtime; otherwise it is cancelled (state PREEMPTED).
	Requeue bool
}

// Decisions are the outcome of one scheduling pass.
type Decisions struct {
	Starts    []Started
	Preempted []Preempted
	// Wake lists future times at which a pending job becomes eligible
	// without any other event (a requeued job's BeginTime, --begin).
	Wake []int64
}

// EngineConfig sets the engine's timers.
type EngineConfig struct {
	// BackfillInterval is bf_interval in seconds; 0 disables backfill
	// passes (sched/builtin).
	BackfillInterval int64
	// CalcPeriod is PriorityCalcPeriod in seconds; 0 disables periodic
	// recalculation.
	CalcPeriod int64
	// From and To bound the simulated time (seconds from the trace's
	// start): jobs submitted outside [From, To) are left out; 0 To = no end.
	From, To int64
	// Inspect are times at which OnInspect is called, after every event at
	// that time and a scheduling pass.
	Inspect []int64
	// OnInspect is called at each Inspect time.
	OnInspect func(now int64)
	// Progress, when set, is called now and then with jobs finished so far.
	Progress func(done, total int)
	// Stop, when set, is asked now and then during the replay; a non-nil
	// error ends Run with that error (SIGINT and SIGTERM stop a replay).
	Stop func() error
	// NoSkip runs every pass an event asks for, even those that provably
	// decide nothing (for tests that check the skipping changes nothing).
	NoSkip bool
}

// event kinds in the order they are handled at the same time: jobs end
// before new ones arrive, so a pass at t sees both.
const (
	evEnd = iota
	evSubmit
	evWake
	evRecalc
	evBackfill
	evInspect
)

type event struct {
	t    int64
	seq  uint64
	kind uint8
	job  int32 // index in Engine.jobs
	gen  uint32
}

// eventHeap is a binary min-heap of events ordered by (t, kind, seq),
// typed so pushes and pops do not box events in interfaces. Submissions
// are not in it: they are read from the trace in order (Engine.peek).
type eventHeap []event

func (h eventHeap) less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	if h[i].kind != h[j].kind {
		return h[i].kind < h[j].kind
	}
	return h[i].seq < h[j].seq
}

func (h *eventHeap) push(ev event) {
	*h = append(*h, ev)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	for i := 0; ; {
		m, l, r := i, 2*i+1, 2*i+2
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// JobResult is one job's simulated life.
type JobResult struct {
	ID       int64  `json:"id"`
	Submit   int64  `json:"submit"`
	Start    int64  `json:"start"` // last start; -1 never started
	End      int64  `json:"end"`   // -1 never ended
	State    string `json:"state"` // COMPLETED, TIMEOUT, PREEMPTED, REJECTED, PENDING, RUNNING
	Backfill bool   `json:"backfill,omitempty"`
	// Requeues counts preemptions that requeued the job.
	Requeues  int    `json:"requeues,omitempty"`
	CPUs      int64  `json:"cpus"`
	GPUs      int64  `json:"gpus,omitempty"`
	Account   string `json:"account,omitempty"`
	User      string `json:"user,omitempty"`
	QOS       string `json:"qos,omitempty"`
	Partition string `json:"partition,omitempty"`
	// Reject is the submission error of a REJECTED job.
	Reject string `json:"reject,omitempty"`

	runtime int64
	gen     uint32
}

// pending reports whether the job waits: not submitted yet or not
// started (State "" until Engine.Run ends), or requeued.
func (r *JobResult) pending() bool { return r.State == "" || r.State == "PENDING" }

// infiniteRun is how long a job that runs until an infinite time limit
// runs in the simulation: one year.
const infiniteRun = 365 * 86400

// Sample is the cluster's state from time T until the next sample.
type Sample struct {
	T       int64
	CPUs    int64 // allocated CPUs
	GPUs    int64 // allocated GPUs
	Pending int64 // jobs waiting
}

// EngineStats count what the engine did.
type EngineStats struct {
	Events        int `json:"events"`
	Passes        int `json:"passes"`
	SkippedPasses int `json:"skipped_passes"`
	Recalcs       int `json:"recalcs"`
	Preemptions   int `json:"preemptions"`
}

// Engine is the discrete-event simulator: a heap of events ordered by time
// then kind then sequence, driving a Policy.
type Engine struct {
	cfg    EngineConfig
	policy Policy
	trace  []Job
	jobs   []JobResult
	index  jobIndex
	events eventHeap
	seq    uint64

	running, pending int64
	cpus, gpus       int64
	samples          []Sample
	dirty            bool    // something changed since the last pass
	dirtyHard        bool    // ... other than jobs ending, since the last pass run (see stuck)
	bfDirty          bool    // ... since the last backfill pass
	fresh, bfFresh   []int32 // jobs submitted since the last (backfill) pass
	bfQueued         bool    // a backfill event is in the heap
	calcQueued       bool    // a recalculation event is in the heap
	origin           int64
	live             int     // end and wake events in the heap
	nextSub          int     // the next trace job to submit
	subOrder         []int32 // submission order when the trace is not sorted by submit time
	finished         int
	stats            EngineStats
}

// NewEngine prepares a run of trace jobs (sorted by submit time) under p.
func NewEngine(cfg EngineConfig, p Policy, jobs []Job) *Engine {
	e := &Engine{cfg: cfg, policy: p}
	inWindow := func(j *Job) bool { return j.Submit >= cfg.From && (cfg.To <= 0 || j.Submit < cfg.To) }
	n := 0
	for i := range jobs {
		if inWindow(&jobs[i]) {
			n++
		}
	}
	if n == len(jobs) {
		// the whole trace: shared, not copied (the engine and the
		// policy only read it, so runs compared in parallel can share
		// one trace)
		e.trace = jobs
	} else {
		e.trace = make([]Job, 0, n)
		for i := range jobs {
			if inWindow(&jobs[i]) {
				e.trace = append(e.trace, jobs[i])
			}
		}
	}
	e.jobs = make([]JobResult, len(e.trace))
	for i := range e.trace {
		// numbers only: a pending job's State stays "" until Run ends
		// (writing a string into each of 54,000 fresh results, under the
		// collector started by reading the trace, was 3% of a replay)
		j, r := &e.trace[i], &e.jobs[i]
		r.ID, r.Submit, r.Start, r.End, r.runtime = j.ID, j.Submit, -1, -1, j.Runtime
	}
	e.index = newJobIndex(e.trace)
	return e
}

// jobIndex finds a trace job's index from its id: by table when the ids
// are dense (SWF job numbers count from 1: a lookup per start was 1.5% of
// a replay in a map of 54,000 entries), else by map.
type jobIndex struct {
	base  int64
	dense []int32 // index + 1 by id - base; 0: no such id
	m     map[int64]int32
	dup   bool // two jobs share an id
}

func newJobIndex(jobs []Job) jobIndex {
	var x jobIndex
	if len(jobs) == 0 {
		return x
	}
	lo, hi := jobs[0].ID, jobs[0].ID
	for i := range jobs {
		lo, hi = min(lo, jobs[i].ID), max(hi, jobs[i].ID)
	}
	if span := uint64(hi - lo); span < 4*uint64(len(jobs)) {
		x.base, x.dense = lo, make([]int32, span+1)
		for i := range jobs {
			k := jobs[i].ID - lo
			x.dup = x.dup || x.dense[k] != 0
			x.dense[k] = int32(i) + 1
		}
		return x
	}
	x.m = make(map[int64]int32, len(jobs))
	for i := range jobs {
		_, seen := x.m[jobs[i].ID]
		x.dup = x.dup || seen
		x.m[jobs[i].ID] = int32(i)
	}
	return x
}

func (x *jobIndex) get(id int64) (int32, bool) {
	if x.m != nil {
		i, ok := x.m[id]
		return i, ok
	}
	if k := uint64(id - x.base); k < uint64(len(x.dense)) && x.dense[k] != 0 {
		return x.dense[k] - 1, true
	}
	return 0, false
}

// Jobs returns the number of trace jobs inside the From/To window.
func (e *Engine) Jobs() int { return len(e.trace) }

// stopEvery is how many time steps pass between two EngineConfig.Stop
// calls: a few milliseconds of replay at most.
const stopEvery = 256

// ErrDuplicateID is returned by Run when two trace jobs share an id.
var ErrDuplicateID = errors.New("duplicate job id in trace")

// Run simulates until every job has ended (or can never start) and returns
// the jobs' results and the cluster samples.
func (e *Engine) Run() ([]JobResult, []Sample, error) {
	if e.index.dup {
		return nil, nil, e.duplicate()
	}
	e.events = make(eventHeap, 0, 256)
	// about three samples per job on the SWF traces: sized once rather
	// than grown through a dozen copies
	e.samples = make([]Sample, 0, 3*len(e.trace)+16)
	e.sortSubmits()
	if len(e.trace) > 0 {
		e.origin = e.trace[0].Submit
	}
	for _, t := range e.cfg.Inspect {
		e.push(t, evInspect, -1, 0)
	}
	for n := 0; ; n++ {
		ev, ok := e.peek()
		if !ok {
			break
		}
		if err := e.step(ev.t); err != nil {
			return nil, nil, err
		}
		if e.cfg.Stop != nil && n%stopEvery == 0 {
			if err := e.cfg.Stop(); err != nil {
				return nil, nil, err
			}
		}
	}
	for i := range e.jobs {
		if r := &e.jobs[i]; r.State == "" {
			r.State = "PENDING" // never started
		}
	}
	return e.jobs, e.samples, nil
}

// duplicate names the first job id of the trace that another job has
// already used, and where both are.
func (e *Engine) duplicate() error {
	first := make(map[int64]int, len(e.trace))
	for i := range e.trace {
		j := &e.trace[i]
		k, seen := first[j.ID]
		if !seen {
			first[j.ID] = i
			continue
		}
		if o := &e.trace[k]; o.Line > 0 && j.Line > 0 {
			return fmt.Errorf("%w: job id %d on line %d was already used on line %d", ErrDuplicateID, j.ID, j.Line, o.Line)
		}
		return fmt.Errorf("%w: job id %d of job #%d was already used by job #%d", ErrDuplicateID, j.ID, i+1, k+1)
	}
	return ErrDuplicateID
}

// sortSubmits orders the submissions by submit time, ties in trace order,
// when the trace is not already sorted (Trace readers sort it).
func (e *Engine) sortSubmits() {
	if slices.IsSortedFunc(e.trace, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) }) {
		return
	}
	e.subOrder = make([]int32, len(e.trace))
	for i := range e.subOrder {
		e.subOrder[i] = int32(i)
	}
	slices.SortStableFunc(e.subOrder, func(a, b int32) int { return cmp.Compare(e.trace[a].Submit, e.trace[b].Submit) })
}

// Stats returns the engine's counters.
func (e *Engine) Stats() EngineStats { return e.stats }

func (e *Engine) push(t int64, kind uint8, job int32, gen uint32) {
	e.seq++
	if kind <= evWake {
		e.live++
	}
	e.events.push(event{t: t, seq: e.seq, kind: kind, job: job, gen: gen})
}

// peek returns the next event: the heap's first or the next submission of
// the trace (sorted by submit time), whichever comes first in (t, kind)
// order. No other event is a submission, so (t, kind) decides.
func (e *Engine) peek() (event, bool) {
	sub, hasSub := event{}, e.nextSub < len(e.trace)
	if hasSub {
		i := int32(e.nextSub)
		if e.subOrder != nil {
			i = e.subOrder[e.nextSub]
		}
		sub = event{t: e.trace[i].Submit, kind: evSubmit, job: i}
	}
	if len(e.events) == 0 {
		return sub, hasSub
	}
	if top := e.events[0]; !hasSub || top.t < sub.t || top.t == sub.t && top.kind < sub.kind {
		return top, true
	}
	return sub, true
}

// next removes and returns the next event if it happens at now.
func (e *Engine) next(now int64) (event, bool) {
	ev, ok := e.peek()
	if !ok || ev.t != now {
		return ev, false
	}
	if ev.kind == evSubmit {
		e.nextSub++
		return ev, true
	}
	e.events.pop()
	if ev.kind <= evWake {
		e.live--
	}
	return ev, true
}

// step handles every event at time now, then runs a pass if anything
// changed, then the inspections due at now.
func (e *Engine) step(now int64) error {
	var inspect, backfill bool
	for {
		ev, ok := e.next(now)
		if !ok {
			break
		}
		e.stats.Events++
		switch ev.kind {
		case evSubmit:
			e.submit(now, ev.job)
		case evEnd:
			e.end(now, ev.job, ev.gen)
		case evWake:
			e.markDirty(now)
		case evRecalc:
			e.recalc(now)
		case evBackfill:
			e.bfQueued = false
			backfill = true
		case evInspect:
			inspect = true
		}
	}
	e.pass(now, backfill)
	e.sample(now)
	if inspect && e.cfg.OnInspect != nil {
		e.cfg.OnInspect(now)
	}
	return nil
}

func (e *Engine) submit(now int64, i int32) {
	if err := e.policy.Submit(now, &e.trace[i]); err != nil {
		r := &e.jobs[i]
		r.State, r.Reject = "REJECTED", err.Error()
		e.finish()
		return
	}
	e.pending++
	e.fresh = append(e.fresh, i)
	e.bfFresh = append(e.bfFresh, i)
	e.queueBackfill(now)
	e.queueRecalc(now)
}

// queueRecalc keeps priority recalculations going, every CalcPeriod on a
// grid from the first submit, while jobs are pending (they are what
// priorities order); an idle gap costs nothing and the policy charges the
// usage of the gap at the next recalculation.
func (e *Engine) queueRecalc(now int64) {
	p := e.cfg.CalcPeriod
	if p <= 0 || e.calcQueued {
		return
	}
	e.calcQueued = true
	e.push(e.origin+((now-e.origin)/p+1)*p, evRecalc, -1, 0)
}

func (e *Engine) end(now int64, i int32, gen uint32) {
	r := &e.jobs[i]
	if r.gen != gen || r.State != "RUNNING" {
		return // a preempted run's end
	}
	timeout := r.runtime == RunToLimit || now-r.Start < r.runtime
	e.policy.End(now, r.ID, timeout)
	r.End = now
	r.State = "COMPLETED"
	if timeout {
		r.State = "TIMEOUT"
	}
	e.running--
	e.cpus -= r.CPUs
	e.gpus -= r.GPUs
	e.finish()
	e.markEnded(now)
}

func (e *Engine) finish() {
	e.finished++
	if e.cfg.Progress != nil && (e.finished%1024 == 0 || e.finished == len(e.jobs)) {
		e.cfg.Progress(e.finished, len(e.jobs))
	}
}

func (e *Engine) recalc(now int64) {
	e.stats.Recalcs++
	e.calcQueued = false
	if e.policy.Recalc(now) {
		e.markDirty(now)
	}
	if e.pending > 0 && (e.running > 0 || e.live > 0 || e.nextSub < len(e.trace)) {
		e.queueRecalc(now)
	}
}

// markDirty records a change that may alter a decision and queues the next
// backfill pass at the next multiple of bf_interval.
func (e *Engine) markDirty(now int64) {
	e.dirtyHard = true
	e.markEnded(now)
}

// markEnded is markDirty for a job that ended: the one change after which
// a main pass may be provably stuck (see stuck).
func (e *Engine) markEnded(now int64) {
	e.dirty = true
	e.bfDirty = true
	e.queueBackfill(now)
}

// stuckPolicy is implemented by policies that can tell when a main pass
// after jobs ended provably starts nothing (Core.MainMayStart).
type stuckPolicy interface {
	MainMayStart(now int64) bool
}

// stuck reports whether the policy proves that a main pass now would
// start nothing: only jobs ended since the last pass (and jobs were
// submitted that cannot start on their own), and the jobs the last pass
// found no room for still fit nowhere (sched.Plan.Stuck).
func (e *Engine) stuck(now int64) bool {
	sp, ok := e.policy.(stuckPolicy)
	return ok && !e.cfg.NoSkip && !sp.MainMayStart(now)
}

// topPolicy is implemented by policies that can tell when a main pass
// provably starts nothing because the first job of the queue cannot start
// and blocks the rest (Core.TopBlocked).
type topPolicy interface {
	TopBlocked(now int64) bool
}

// bfPolicy is implemented by policies that can tell when a backfill pass
// provably starts nothing (Core.BackfillBlocked).
type bfPolicy interface {
	BackfillBlocked(now int64) bool
}

// bfBlocked reports whether the policy proves that a backfill pass now
// (its main pass included) would start nothing.
func (e *Engine) bfBlocked(now int64) bool {
	bp, ok := e.policy.(bfPolicy)
	return ok && !e.cfg.NoSkip && bp.BackfillBlocked(now)
}

// topBlocked reports whether the policy proves that a main pass now would
// start nothing, whatever changed since the last pass.
func (e *Engine) topBlocked(now int64) bool {
	tp, ok := e.policy.(topPolicy)
	return ok && !e.cfg.NoSkip && tp.TopBlocked(now)
}

// queueBackfill queues a backfill pass at the next multiple of bf_interval.
func (e *Engine) queueBackfill(now int64) {
	if iv := e.cfg.BackfillInterval; iv > 0 && !e.bfQueued {
		e.bfQueued = true
		e.push((now/iv+1)*iv, evBackfill, -1, 0)
	}
}

// pass runs the scheduler if a decision may have changed since the last
// pass (a job ended, an eligibility time came, the queue was reordered, or
// a job that could start was submitted) and the queue is not provably
// blocked, and applies its decisions.
func (e *Engine) pass(now int64, backfill bool) {
	// A main pass after submissions of jobs that cannot start on their own
	// decides nothing new (what it could start, the last pass started).
	// Backfill passes are not skipped that way: their plan depends on the
	// time (reservations are rounded to bf_resolution), so they run on the
	// next bf_interval tick after any change.
	freshMay := e.anyMayStart(now, e.fresh)
	main := e.dirty || freshMay || e.cfg.NoSkip && len(e.fresh) > 0
	bf := backfill && (e.bfDirty || len(e.bfFresh) > 0)
	// only jobs ended (and jobs that cannot start were submitted): the
	// last pass's certificate may prove this main pass stuck
	ended := main && !bf && !freshMay && !e.dirtyHard
	if !main && !bf && (len(e.fresh) > 0 || backfill) {
		e.stats.SkippedPasses++
	}
	e.fresh = e.fresh[:0]
	e.dirty = false
	if backfill {
		e.bfFresh = e.bfFresh[:0]
		e.bfDirty = false
	}
	if !main && !bf {
		return
	}
	if e.pending == 0 || !e.cfg.NoSkip && e.policy.Blocked(now) {
		e.stats.SkippedPasses++
		return
	}
	// Asked only once the pass would otherwise run: the policy may bring
	// deferred priorities up to date at now, as the pass would.
	if ended && e.stuck(now) {
		e.stats.SkippedPasses++ // the queue is provably as blocked as before
		return
	}
	if !bf && e.topBlocked(now) {
		e.stats.SkippedPasses++ // the first job of the queue fails the only partition
		return
	}
	if bf && e.bfBlocked(now) {
		e.stats.SkippedPasses++ // nothing can start before the first job's reservation
		return
	}
	e.stats.Passes++
	e.dirtyHard = false // a pass runs: the certificate is renewed
	d := e.policy.Schedule(now, bf)
	for _, p := range d.Preempted {
		e.preempt(now, p)
	}
	for _, s := range d.Starts {
		e.start(now, s)
	}
	for _, t := range d.Wake {
		if t > now {
			e.push(t, evWake, -1, 0)
		}
	}
}

// anyMayStart reports whether one of the submitted jobs, still pending,
// could start on its own.
func (e *Engine) anyMayStart(now int64, jobs []int32) bool {
	for _, i := range jobs {
		if e.jobs[i].pending() && e.policy.MayStart(now, e.jobs[i].ID) {
			return true
		}
	}
	return false
}

func (e *Engine) start(now int64, s Started) {
	i, ok := e.index.get(s.ID)
	if !ok {
		panic(fmt.Sprintf("sim: policy started unknown job %d", s.ID))
	}
	r := &e.jobs[i]
	r.Start, r.State, r.Backfill = now, "RUNNING", s.Backfill
	r.CPUs, r.GPUs = s.CPUs, s.GPUs
	r.Account, r.User, r.QOS, r.Partition = s.Account, s.User, s.QOS, s.Partition
	r.gen++
	run := r.runtime
	if run == RunToLimit || (s.TimeLimit > 0 && run > s.TimeLimit) {
		run = s.TimeLimit
	}
	if run < 0 { // runs to an infinite limit: end it after a year, the
		run = infiniteRun // horizon Slurm's backfill gives INFINITE limits
	}
	e.pending--
	e.running++
	e.cpus += s.CPUs
	e.gpus += s.GPUs
	e.push(now+run, evEnd, i, r.gen)
}

func (e *Engine) preempt(now int64, p Preempted) {
	i, ok := e.index.get(p.ID)
	if !ok || e.jobs[i].State != "RUNNING" {
		return
	}
	r := &e.jobs[i]
	e.stats.Preemptions++
	r.gen++ // its end event is void: a requeued job re-runs its full runtime
	e.running--
	e.cpus -= r.CPUs
	e.gpus -= r.GPUs
	if p.Requeue {
		r.Requeues++
		r.State, r.Start = "PENDING", -1
		e.pending++
		e.queueRecalc(now)
	} else {
		r.State, r.End = "PREEMPTED", now
		e.finish()
	}
	e.markDirty(now)
}

// sample records the cluster's state when it changed.
func (e *Engine) sample(now int64) {
	s := Sample{T: now, CPUs: e.cpus, GPUs: e.gpus, Pending: e.pending}
	if n := len(e.samples); n > 0 {
		last := &e.samples[n-1]
		if last.CPUs == s.CPUs && last.GPUs == s.GPUs && last.Pending == s.Pending {
			return
		}
		if last.T == now {
			*last = s
			return
		}
	}
	e.samples = append(e.samples, s)
}
