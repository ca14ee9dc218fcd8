// Package cli holds the user commands of the sluice binary, one file per
// command (sbatch, squeue, sinfo, scontrol, sacctmgr, sprio, sshare, ...),
// with Slurm's flags, %-formats, output layouts, error messages and exit
// codes. Commands register themselves in a registry that cmd/sluice
// dispatches on, by the name the binary was invoked as or by its first
// argument.
//
// Commands render what the core decided; they never re-implement scheduling
// logic (see DESIGN.md, "One core, two drivers").
package cli
