package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/sched"
)

// BenchSub is one `sluice bench` subcommand (sched, and others that
// register themselves from their own files with RegisterBench).
type BenchSub struct {
	Summary string
	Run     func(ctx context.Context, env *Env, args []string) int
}

var benchSubs = map[string]BenchSub{}

// RegisterBench adds a `sluice bench NAME` subcommand; call it from init.
func RegisterBench(name string, sub BenchSub) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := benchSubs[name]; dup {
		panic("cli: bench subcommand registered twice: " + name)
	}
	benchSubs[name] = sub
}

func init() {
	Register(Command{Name: "bench", Summary: "measure Sluice: `sluice bench sched --nodes 5000 --jobs 50000`", Run: runBench})
	RegisterBench("sched", BenchSub{Summary: "full scheduling cycles (priority, main scheduler, backfill) on a generated workload",
		Run: runBenchSched})
}

func benchUsage(w io.Writer) {
	regMu.Lock()
	names := make([]string, 0, len(benchSubs))
	for n := range benchSubs {
		names = append(names, n)
	}
	regMu.Unlock()
	sort.Strings(names)
	fmt.Fprintln(w, "usage: sluice bench SUBCOMMAND [options]")
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, benchSubs[n].Summary)
	}
}

// runBench dispatches to the subcommand.
func runBench(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		benchUsage(env.Stdout)
		if len(args) == 0 {
			return 1
		}
		return 0
	}
	regMu.Lock()
	sub, ok := benchSubs[args[0]]
	regMu.Unlock()
	if !ok {
		return Errorf(env, "bench", "unknown subcommand %q (try `sluice bench --help`)", args[0])
	}
	return sub.Run(ctx, env, args[1:])
}

// benchSchedResult is the JSON object `sluice bench sched` prints.
type benchSchedResult struct {
	Nodes      int     `json:"nodes"`
	Jobs       int     `json:"jobs"`
	Seed       uint64  `json:"seed"`
	Running    int     `json:"running"`
	Cycles     int     `json:"cycles"`
	CycleMS    float64 `json:"cycle_ms"`
	CycleMinMS float64 `json:"cycle_min_ms"`
	CycleMaxMS float64 `json:"cycle_max_ms"`
	CycleCPUMS float64 `json:"cycle_cpu_ms"`
	Planned    int     `json:"planned"`
	Started    int     `json:"started"`
	Backfilled int     `json:"backfilled"`
	SetupMS    float64 `json:"setup_ms"`
	MaxRSSMB   float64 `json:"max_rss_mb"`
	GOMAXPROCS int     `json:"gomaxprocs"`
}

// runBenchSched generates the fixed-seed workload (sched.NewBenchWorkload)
// and times full cycles: multifactor priority of every pending job, the
// main scheduler and backfill planning over the whole queue. cycle_ms is
// the median wall time, cycle_cpu_ms the mean CPU time (user+system, all
// threads) per cycle.
func runBenchSched(_ context.Context, env *Env, args []string) int {
	fs := flag.NewFlagSet("bench sched", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	nodes := fs.Int("nodes", 5000, "number of nodes (80% CPU, 20% GPU)")
	jobs := fs.Int("jobs", 50000, "number of pending jobs")
	seed := fs.Uint64("seed", 1, "generator seed")
	cycles := fs.Int("cycles", 5, "timed cycles (after one warm-up cycle)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(env.Stdout)
			fmt.Fprintln(env.Stdout, "usage: sluice bench sched [--nodes N] [--jobs N] [--seed N] [--cycles N]")
			fs.PrintDefaults()
			return 0
		}
		return Errorf(env, "bench", "%v", err)
	}
	if fs.NArg() > 0 {
		return Errorf(env, "bench", "unexpected argument %q", fs.Arg(0))
	}
	if *cycles < 1 {
		return Errorf(env, "bench", "--cycles must be at least 1")
	}
	t0 := time.Now()
	w, err := sched.NewBenchWorkload(sched.BenchSpec{Nodes: *nodes, Jobs: *jobs, Seed: *seed})
	if err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	res := benchSchedResult{Nodes: *nodes, Jobs: *jobs, Seed: *seed, Running: w.Running, Cycles: *cycles,
		SetupMS: ms(time.Since(t0)), GOMAXPROCS: runtime.GOMAXPROCS(0)}
	plan := w.Cycle() // warm-up
	walls := make([]time.Duration, 0, *cycles)
	cpu0 := cpuTime()
	for i := 0; i < *cycles; i++ {
		s := time.Now()
		plan = w.Cycle()
		walls = append(walls, time.Since(s))
	}
	res.CycleCPUMS = ms(cpuTime()-cpu0) / float64(*cycles)
	slices.Sort(walls)
	res.CycleMS, res.CycleMinMS, res.CycleMaxMS = ms(walls[len(walls)/2]), ms(walls[0]), ms(walls[len(walls)-1])
	res.Planned, res.Started, res.Backfilled = w.Planned(&plan), len(plan.Starts), plan.Stats.Backfilled
	res.MaxRSSMB = maxRSSMB()
	out, _ := json.Marshal(res)
	fmt.Fprintln(env.Stdout, strings.TrimSpace(string(out)))
	return 0
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// maxRSSMB is the peak resident set size in MB (ru_maxrss is in KB on
// Linux).
func maxRSSMB() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}
