// Package priority computes job priorities and fair-share the way Slurm's
// priority/multifactor and priority/basic plugins do, and renders the sprio
// and sshare views of that state.
//
// It is deterministic core: no clock, no I/O, no goroutines. Time is always
// a parameter. The drivers (controller, simulator) own the data and call:
//
//   - Tree: the fair-share tree of associations (accounts and users) with
//     their RawShares (or FS=parent) and decayed raw usage. Tree.Pass applies
//     a PriorityCalcPeriod step (usage reset at calendar boundaries, decay
//     by 1-0.693/half-life per second, new usage of running jobs), and
//     Tree.Recompute computes NormShares, NormUsage, EffectvUsage, LevelFS
//     and FairShare of every association with Fair Tree (the default), the
//     classic algorithm (NO_FAIR_TREE) or DEPTH_OBLIVIOUS. A driver that
//     reads those values only through this package (the simulator) can
//     call Tree.PackUsage once and Tree.RecomputeFairShare at each pass:
//     the same values, kept in packed arrays and written to the Assoc
//     records only when this package reads them.
//   - Calculator: the multifactor sum for one pending job (age, association,
//     fair-share, job size, partition, QOS, TRES, site, nice), truncated and
//     clamped as Slurm does; Basic reproduces priority/basic (FIFO).
//   - FormatSprio, FormatSshare: sprio and sshare output with Slurm's
//     formats, widths and rounding.
//   - Explain: every factor of one job with its weight and contribution and
//     a sentence saying what dominates.
//
// The formulas follow Slurm's priority_multifactor, fair_tree and
// classic_fair_share documentation; differences are listed in
// docs/differences.md.
package priority
