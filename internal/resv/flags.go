package resv

import (
	"fmt"
	"strings"
)

// Flags is a reservation's Flags= set (reservation_flags in Slurm).
type Flags uint32

// Reservation flags.
const (
	FlagMaint       Flags = 1 << iota // MAINT: maintenance; may overlap other reservations
	FlagFlex                          // FLEX: jobs may start before, end after, spill outside
	FlagOverlap                       // OVERLAP: may use nodes already reserved
	FlagIgnoreJobs                    // IGNORE_JOBS: running jobs do not make nodes busy
	FlagHourly                        // HOURLY repeat
	FlagDaily                         // DAILY repeat
	FlagWeekday                       // WEEKDAY repeat (Monday to Friday)
	FlagWeekend                       // WEEKEND repeat (Saturday and Sunday)
	FlagWeekly                        // WEEKLY repeat
	FlagSpecNodes                     // SPEC_NODES: nodes named explicitly (output only)
	FlagAnyNodes                      // ANY_NODES / LICENSE_ONLY: licenses or burst buffers only
	FlagPartNodes                     // PART_NODES: all nodes of PartitionName
	FlagTimeFloat                     // TIME_FLOAT: start stays a fixed time ahead of now
	FlagReplace                       // REPLACE: allocated nodes are replaced with idle ones
	FlagReplaceDown                   // REPLACE_DOWN
	FlagPurgeComp                     // PURGE_COMP: purged once idle
	FlagMagnetic                      // MAGNETIC: attracts jobs that did not ask for it
	FlagNoHoldJobs                    // NO_HOLD_JOBS_AFTER_END
	FlagStaticAlloc                   // STATIC_ALLOC
	FlagFirstCores                    // FIRST_CORES
	FlagAllNodes                      // ALL_NODES: Nodes=ALL (output only)
)

// flagNames are the flag names in the order Slurm prints them; the first
// name of a flag is its printed name, the others are accepted aliases.
var flagNames = []struct {
	f     Flags
	names []string
}{
	{FlagMaint, []string{"MAINT"}},
	{FlagFlex, []string{"FLEX"}},
	{FlagOverlap, []string{"OVERLAP"}},
	{FlagIgnoreJobs, []string{"IGNORE_JOBS"}},
	{FlagHourly, []string{"HOURLY"}},
	{FlagDaily, []string{"DAILY"}},
	{FlagWeekday, []string{"WEEKDAY"}},
	{FlagWeekend, []string{"WEEKEND"}},
	{FlagWeekly, []string{"WEEKLY"}},
	{FlagSpecNodes, []string{"SPEC_NODES"}},
	{FlagAllNodes, []string{"ALL_NODES"}},
	{FlagAnyNodes, []string{"ANY_NODES", "LICENSE_ONLY"}},
	{FlagStaticAlloc, []string{"STATIC_ALLOC"}},
	{FlagPartNodes, []string{"PART_NODES"}},
	{FlagFirstCores, []string{"FIRST_CORES"}},
	{FlagTimeFloat, []string{"TIME_FLOAT"}},
	{FlagReplace, []string{"REPLACE"}},
	{FlagReplaceDown, []string{"REPLACE_DOWN"}},
	{FlagPurgeComp, []string{"PURGE_COMP"}},
	{FlagMagnetic, []string{"MAGNETIC"}},
	{FlagNoHoldJobs, []string{"NO_HOLD_JOBS_AFTER_END", "NO_HOLD_JOBS_AFTER", "NO_HOLD_JOBS"}},
}

// Repeating are the flags that make a reservation recur.
const Repeating = FlagHourly | FlagDaily | FlagWeekday | FlagWeekend | FlagWeekly

// Has reports whether every flag of g is set.
func (f Flags) Has(g Flags) bool { return f&g == g }

// String prints the flags comma-separated in Slurm's order ("" for none).
func (f Flags) String() string {
	var out []string
	for _, fn := range flagNames {
		if f&fn.f != 0 {
			out = append(out, fn.names[0])
		}
	}
	return strings.Join(out, ",")
}

// ParseFlags reads a Flags= value: names separated by commas, any case.
// PURGE_COMP may carry a time (`PURGE_COMP=10:00`), returned as purge.
func ParseFlags(s string) (f Flags, purge string, err error) {
	for _, w := range strings.Split(s, ",") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		name, val, hasVal := strings.Cut(w, "=")
		g := flagByName(name)
		if g == 0 || hasVal && g != FlagPurgeComp {
			return 0, "", fmt.Errorf("invalid flag %q", w)
		}
		if hasVal {
			purge = val
		}
		f |= g
	}
	return f, purge, nil
}

func flagByName(name string) Flags {
	for _, fn := range flagNames {
		for _, n := range fn.names {
			if strings.EqualFold(n, name) {
				return fn.f
			}
		}
	}
	return 0
}
