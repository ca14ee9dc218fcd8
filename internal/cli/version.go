package cli

import (
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// SlurmVersion is the Slurm release whose behaviour Sluice reproduces;
// -V/--version of every Slurm command prints it as Slurm does.
const SlurmVersion = api.SlurmRelease

// VersionLine is what `squeue -V` prints ("slurm 24.11.5"); Sluice's own
// version is `sluice version`.
func VersionLine() string { return "slurm " + SlurmVersion }

// stopsAtCommand are the commands whose first non-option argument starts
// a script or program with arguments of its own (sbatch job.sh -V passes
// -V to the script).
var stopsAtCommand = map[string]bool{"sbatch": true, "srun": true, "salloc": true}

// VersionRequested reports whether a Slurm command was asked for its
// version (-V or --version among its own options). Every command answers
// that before doing anything else: `salloc -V` takes no allocation.
func VersionRequested(command string, args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case a == "-V" || a == "--version":
			return true
		case stopsAtCommand[command] && !strings.HasPrefix(a, "-"):
			return false
		}
	}
	return false
}
