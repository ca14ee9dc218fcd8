package api

// srun's step options that travel from srun to the node agents: the CPU
// binding of --cpu-bind (task/affinity) and the per-task programs of
// --multi-prog.

import (
	"fmt"
	"strconv"
	"strings"
)

// CPUBind is srun --cpu-bind as the task/affinity plugin applies it.
type CPUBind struct {
	// Verbose is "verbose" or "quiet" (Slurm's default).
	Verbose bool `json:"verbose,omitempty"`
	// Types are the binding types in Slurm's order ("cores", "none",
	// "map_cpu:", ...); List is the map/mask list ("0,1").
	Types []string `json:"types,omitempty"`
	List  string   `json:"list,omitempty"`
}

// Has reports whether the binding includes type t.
func (b *CPUBind) Has(t string) bool {
	if b == nil {
		return false
	}
	for _, x := range b.Types {
		if x == t {
			return true
		}
	}
	return false
}

// Env returns the SLURM_CPU_BIND* variables srun sets for the tasks, as
// Slurm 24.11's srun prints them ("quiet,cores", "verbose,map_cpu:0,1");
// nil when there is nothing to say (--cpu-bind=quiet alone).
func (b *CPUBind) Env() map[string]string {
	if b == nil || (!b.Verbose && len(b.Types) == 0) {
		return nil
	}
	verbose := "quiet"
	if b.Verbose {
		verbose = "verbose"
	}
	typ := strings.Join(b.Types, ",")
	all := verbose
	if typ != "" {
		all += "," + typ + b.List
	}
	return map[string]string{"SLURM_CPU_BIND": all, "SLURM_CPU_BIND_VERBOSE": verbose,
		"SLURM_CPU_BIND_TYPE": typ, "SLURM_CPU_BIND_LIST": b.List}
}

// MultiProg is srun --multi-prog's configuration file: one record per
// line, task ranks and the program with its arguments.
type MultiProg struct {
	File    string          `json:"file"`
	Records []MultiProgLine `json:"records"`
	// Extra are the words after the file on srun's command line, added to
	// every task's arguments.
	Extra []string `json:"extra,omitempty"`
}

// MultiProgLine is one record: Ranks "*" (every task not named before) or
// task ids; Argv with %t and %o still in it.
type MultiProgLine struct {
	Line  int      `json:"line"`
	All   bool     `json:"all,omitempty"`
	Ranks []int    `json:"ranks,omitempty"`
	Argv  []string `json:"argv"`
}

// Argv returns task's command: the first record naming it (or the "*"
// record), with %t the task id and %o its offset among the record's ranks.
func (m *MultiProg) Argv(task int) ([]string, bool) {
	for _, r := range m.Records {
		off := -1
		for i, t := range r.Ranks {
			if t == task {
				off = i
				break
			}
		}
		if off < 0 && !r.All {
			continue
		}
		if off < 0 {
			off = 0
		}
		rep := strings.NewReplacer("%t", strconv.Itoa(task), "%o", strconv.Itoa(off))
		out := make([]string, 0, len(r.Argv)+len(m.Extra))
		for _, a := range r.Argv {
			out = append(out, rep.Replace(a))
		}
		return append(out, m.Extra...), true
	}
	return nil, false
}

// Check reports the configuration's errors for a step of ntasks tasks in
// srun's words: a rank beyond the step's tasks, a task with no record.
func (m *MultiProg) Check(ntasks int) []string {
	// srun names the highest rank of the first line that has one too many
	// ("1-2" for one task: "Invalid task id, 2 >= ntasks").
	for _, r := range m.Records {
		top := -1
		for _, t := range r.Ranks {
			top = max(top, t)
		}
		if top >= ntasks {
			return []string{fmt.Sprintf("Invalid task id, %d >= ntasks", top),
				fmt.Sprintf("Line %d of configuration file %s invalid", r.Line, m.File)}
		}
	}
	for t := 0; t < ntasks; t++ {
		if _, ok := m.Argv(t); !ok {
			return []string{fmt.Sprintf("Configuration file %s invalid, no record for task id %d", m.File, t)}
		}
	}
	return nil
}

// MultiProgErrorPrefix marks a controller error that is --multi-prog's
// configuration check: srun prints each line of the rest as an error.
const MultiProgErrorPrefix = "multi-prog: "
