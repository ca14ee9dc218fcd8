// Package dataparser writes Sluice's records in Slurm 24.11's data_parser
// v0.0.42 format, the one `squeue --json`, `sinfo --yaml`, `sacct --json`,
// `sdiag --json`, `sshare --json` and `scontrol show ... --json` print and
// slurmrestd serves: the same field names and order, the same nesting, the
// same {set, infinite, number} objects for optional numbers, flag sets as
// arrays of names, and the meta/errors/warnings envelope.
//
// A record is built as an ordered tree (Obj, []any, Num, Float and Go
// scalars) and written by JSON (json-c's pretty layout, as Slurm's
// serializer/json prints it) or YAML (libyaml's explicitly tagged layout,
// as serializer/yaml prints it).
package dataparser
