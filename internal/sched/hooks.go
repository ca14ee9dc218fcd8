package sched

// The pipeline's later steps live in their own files (backfill*.go,
// preempt*.go, gang*.go) and plug into Schedule through these hooks, set
// from an init function in those files. A nil hook is a step that is not
// there: Schedule then behaves like Slurm with sched/builtin and
// preempt/none.
var (
	// backfillStep runs after the main scheduler when
	// Config.Backfill.Enabled: it walks c.Queue in order, gives every
	// pending record an expected start (c.Plan via c.SetPlanned), starts
	// the jobs that delay no reservation (c.StartJob with backfill=true),
	// and may refine pending reasons.
	backfillStep func(c *Cycle)

	// preemptStep is asked by the main scheduler (and may be asked by
	// backfill) when rec does not fit in the free resources and
	// Config.PreemptType is not PreemptNone. It chooses victims in Slurm's
	// order, records them with c.Preempt and the start with c.StartJob,
	// and reports whether it did.
	preemptStep func(c *Cycle, rec *QueueRec) bool

	// gangStep runs first in every cycle when gang scheduling is in use
	// (PreemptMode GANG / OverSubscribe=FORCE): it time-slices suspended
	// jobs (c.Resume, c.Preempt with PreemptSuspend) before jobs are placed.
	gangStep func(c *Cycle)

	// preemptRank, when set, orders the queue's "a job that can preempt
	// sorts first" rule (SEMANTICS §4.1, item 2): a higher rank sorts first.
	// Without it the queue uses QOSPreemptRank.
	preemptRank func(c *Cycle, j *Job) int32
)
