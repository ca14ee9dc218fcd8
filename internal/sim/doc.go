// Package sim is Sluice's discrete-event simulator: it replays a workload
// trace (SWF from the Parallel Workloads Archive, `sacct -P` output, the UB
// Slurm simulator's events files, or Sluice's own JSONL) through the very
// same scheduling core the controller uses (internal/sched and
// internal/priority), on a virtual clock, and measures the outcome (waits,
// slowdowns, utilization, delivered fair-share) for an HTML report.
//
// The pipeline is: a reader turns a trace into []Job (one normalised job
// type for every format, bad lines counted with their line numbers); the
// Engine keeps a heap of events ordered by time then sequence (submit, job
// end, scheduler pass, priority recalculation) and drives a Policy (the
// real core in production, a trivial FCFS in tests); Metrics folds the
// finished jobs and the sampled cluster state into the figures the report
// draws.
//
// Everything here is deterministic: the same trace and configuration give
// byte-identical JSON. The engine uses int64 seconds of virtual time and
// never reads the wall clock (only the CLI measures wall time).
package sim
