// Package sched is Sluice's deterministic scheduling core: cluster and job
// state, submission validation, the limits gate with Slurm's pending reason
// strings, resource selection in the manner of select/cons_tres, the main
// scheduler, backfill planning, preemption, job arrays, dependencies, holds
// and begin times.
//
// Both drivers (the controller, internal/ctld, and the simulator,
// internal/sim) run the very same code: the core never reads a clock, never
// sleeps, never starts a goroutine and never performs I/O. Time is always a
// parameter. Given the same State, now and Config, Schedule returns the same
// Plan.
//
// # The pipeline
//
// One scheduling cycle reads like Slurm's own story (job_scheduler.c
// _schedule, then backfill.c, then the preempt plugins):
//
//		          +--------+    +--------+    +-----------------+    +--------+    +---------+
//		pending ->|  gate  |--->| order  |--->|       fit       |--->|  plan  |--->| preempt |--> Plan
//		 jobs     | holds, |    | tier,  |    | filter nodes,   |    |backfill|    | victims |
//		          | deps,  |    | prio,  |    | rank (weight,   |    | reser- |    | in Slurm|
//		          | begin, |    | submit,|    | best fit),      |    | vations|    | order   |
//		          | limits |    | id     |    | select          |    |        |    |         |
//		          +--------+    +--------+    +-----------------+    +--------+    +---------+
//
//	  - gate (gate.go, limits.go): a job that is held, waits on a dependency or
//	    a begin time, is over an accounting limit or does not fit its partition's
//	    limits gets its pending reason (JobHeldUser, Dependency, BeginTime,
//	    QOSMaxJobsPerUserLimit, PartitionTimeLimit, ...) and is not tried.
//	  - order (queue.go): Slurm's sort_job_queue2 order: jobs that can preempt
//	    first, then partition PriorityTier, priority, submit time, job id.
//	  - fit (select.go): cons_tres-style selection over index-based nodes and
//	    bitsets: cores or CPUs, memory, typed GRES, features, node Weight first
//	    and best fit second. The main scheduler (schedule.go) takes a
//	    partition's nodes out of the pass after its first Resources failure.
//	  - plan (the BackfillHook): sched/backfill reservations and expected start
//	    times for every pending job.
//	  - preempt (the PreemptHook): preempt/qos and preempt/partition_prio.
//
// Schedule never changes the State it is given; the driver persists the Plan
// and then calls State.Apply, so that a controller killed between the two
// replays the plan or recomputes it, and nothing half-applied is stored.
//
// Lifecycle operations (Submit, Complete, Cancel, Requeue, Hold, Release,
// Update, ...) are methods on State; each is a pure state transition at a
// given time.
package sched
