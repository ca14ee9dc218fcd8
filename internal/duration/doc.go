// Package duration reads and prints Slurm's time strings.
//
// Time limits (`sbatch --time`, partition `MaxTime`, QOS `MaxWall`) use the forms
// "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes" and "days-hours:minutes:seconds" (sbatch(1), slurm.conf(5)), plus
// `UNLIMITED`/`INFINITE` for no limit. Parse reads them; Format prints Slurm's
// `[D-]HH:MM:SS` form and FormatElapsed the squeue TIME form (`1:23`, `1-02:03:04`).
//
// Points in time (`sbatch --begin`, `sacct -S/-E`) use the forms listed in sacct(1):
// `now[{+|-}count[units]]`, `today`, `midnight`, `noon`, `HH:MM[:SS][AM|PM]`,
// `YYYY-MM-DD[THH:MM[:SS]]`, `MMDD[YY]`, `MM/DD[/YY]`, `MM.DD[.YY]`. ParseTime reads them
// against a caller-supplied `now`: nothing here reads the clock, so results are
// deterministic and the simulator can use the same code.
package duration
