package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"
)

func init() {
	RegisterBench("exec", BenchSub{Summary: "the floor under sequential sbatch: starting `sluice version` (this binary, no RPC) and /bin/true, one at a time",
		Run: runBenchExec})
}

// ExecFloor is what starting a process costs on this machine, measured
// the way `sluice bench submit` starts sbatch: one at a time, waiting
// for each. A sequential sbatch can go no faster than SluicePerSec (the
// same binary doing nothing: the Go runtime's start, the packages'
// initialization, the page faults of a large static binary), and no
// program at all faster than TruePerSec.
type ExecFloor struct {
	// Runs is how many processes each figure was measured on.
	Runs int `json:"exec_floor_runs"`
	// SluicePerSec and SluiceMedianMS: `sluice version`.
	SluicePerSec   float64 `json:"exec_floor_sluice_version_per_s"`
	SluiceMedianMS float64 `json:"exec_floor_sluice_version_median_ms"`
	// TruePerSec and TrueMedianMS: /bin/true (0 when it is missing).
	TruePerSec   float64 `json:"exec_floor_true_per_s,omitempty"`
	TrueMedianMS float64 `json:"exec_floor_true_median_ms,omitempty"`
}

// MeasureExecFloor starts `sluice version` (this executable) and then
// /bin/true n times each, sequentially, output discarded.
func MeasureExecFloor(n int) (ExecFloor, error) {
	self, err := os.Executable()
	if err != nil {
		return ExecFloor{}, err
	}
	f := ExecFloor{Runs: n}
	if f.SluicePerSec, f.SluiceMedianMS, err = execRate(n, self, "version"); err != nil {
		return f, fmt.Errorf("exec floor: %w", err)
	}
	if _, err := os.Stat("/bin/true"); err == nil {
		if f.TruePerSec, f.TrueMedianMS, err = execRate(n, "/bin/true"); err != nil {
			return f, fmt.Errorf("exec floor: %w", err)
		}
	}
	return f, nil
}

// execRate runs the command n times one after the other and returns the
// rate over the whole run and the median time of one run.
func execRate(n int, name string, args ...string) (rate, medianMS float64, err error) {
	if n <= 0 {
		return 0, 0, nil
	}
	each := make([]time.Duration, 0, n)
	t0 := time.Now()
	for i := 0; i < n; i++ {
		t := time.Now()
		if err := exec.Command(name, args...).Run(); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", name, err)
		}
		each = append(each, time.Since(t))
	}
	total := time.Since(t0)
	slices.Sort(each)
	return perSec(n, total), ms(each[len(each)/2]), nil
}

// runBenchExec is `sluice bench exec [--runs N]`.
func runBenchExec(_ context.Context, env *Env, args []string) int {
	fs := flag.NewFlagSet("bench exec", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	runs := fs.Int("runs", 200, "processes started per figure")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	f, err := MeasureExecFloor(*runs)
	if err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	out, _ := json.Marshal(f)
	fmt.Fprintln(env.Stdout, string(out))
	return 0
}
