// Package resv is Sluice's model of Slurm advanced reservations and the
// scontrol reservation language: parsing `scontrol create|update|delete|show
// reservation` commands into typed fields, the Reservation record, its
// recurrence (DAILY, WEEKDAY, WEEKEND, WEEKLY, HOURLY) and floating start
// (TIME_FLOAT) as pure functions of now, Slurm's `scontrol show reservation`
// and `sinfo -T` layouts, Slurm's error messages, a reader for files of
// `scontrol create reservation` lines (the simulator's reservations) and the
// reservation utilization that `sreport reservation utilization` reports.
//
// Everything here is pure: no clock, no I/O. The scheduling effects (which
// nodes a job may use, blackout windows for backfill, node selection when
// only a count is given, busy and overlap checks against the live cluster)
// live in internal/sched, which holds the reservations of a cluster.
package resv
