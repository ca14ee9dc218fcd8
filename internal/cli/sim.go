package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sim"
)

func init() {
	Register(Command{Name: "sim", Summary: "replay a workload trace through the scheduler and report (sluice sim --help)", Run: runSim})
}

const simUsage = `Usage: sluice sim --trace FILE [--conf slurm.conf]... [--accounts script]... [options]
       sluice sim --trace FILE --compare a.conf b.conf ... [--accounts script]

Replays a workload trace through Sluice's scheduler core on a virtual clock
and reports waits, slowdowns, utilization and delivered fair-share.

  --trace FILE           trace file (.gz is read transparently)
  --trace-format F       swf, sacct, ub or jsonl (default: guessed)
  --user-map FILE        SWF: "uid user account" lines (default user<N>/group<N>)
  --conf FILE            slurm.conf (repeat to compare policies; default: a
                         cluster from the SWF header, backfill, multifactor)
  --accounts FILE        sacctmgr script (one for all, or one per --conf;
                         default: one account per trace group, equal shares)
  --compare              treat the remaining arguments as more slurm.conf files
  --from T, --to T       replay only jobs submitted in [T, T) (seconds from the
                         trace start, 12h/30d suffixes, or 2026-01-01[T10:00])
  --inspect T            print squeue, sprio -l and sshare -al at T (repeatable)
  --reservations FILE    scontrol create reservation lines (or JSON objects of the
                         same keys) applied at the trace start (now+2hours = two
                         hours into the trace; a JSON StartTime number = seconds)
  --report FILE          write a self-contained HTML report
  --json FILE            write the metrics as JSON ("-" = stdout)
  --jobs-out FILE        write every job's simulated start and end as JSONL
  --jobs N               policies simulated in parallel (default: CPU count)
  -q, --quiet            no summary on stdout
  --cpuprofile FILE      write a Go CPU profile of the replay (go tool pprof)
  --time-scale F         divide submit times by F (F > 1 raises the offered load)
  --scale-cluster K      multiply the SWF machine (MaxNodes, MaxProcs) and every
                         job's task and node counts by K
  --repeat N             replay N copies of the trace one after another
`

type simFlags struct {
	trace, format, userMap, report, jsonOut, jobsOut string
	cpuProfile                                       string
	reservations                                     string // --reservations FILE (sim/resv.go)
	confs, accounts, inspect                         []string
	from, to                                         string
	compare, quiet, help                             bool
	parallel                                         int
	transform                                        sim.Transform
}

func parseSimFlags(args []string) (*simFlags, []string, error) {
	f := &simFlags{}
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.trace, "trace", "", "")
	fs.StringVar(&f.format, "trace-format", "", "")
	fs.StringVar(&f.userMap, "user-map", "", "")
	fs.StringArrayVar(&f.confs, "conf", nil, "")
	fs.StringArrayVar(&f.accounts, "accounts", nil, "")
	fs.StringVar(&f.reservations, "reservations", "", "")
	fs.BoolVar(&f.compare, "compare", false, "")
	fs.StringVar(&f.from, "from", "", "")
	fs.StringVar(&f.to, "to", "", "")
	fs.StringArrayVar(&f.inspect, "inspect", nil, "")
	fs.StringVar(&f.report, "report", "", "")
	fs.StringVar(&f.jsonOut, "json", "", "")
	fs.StringVar(&f.jobsOut, "jobs-out", "", "")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "")
	fs.IntVar(&f.parallel, "jobs", runtime.GOMAXPROCS(0), "")
	fs.Float64Var(&f.transform.TimeScale, "time-scale", 1, "")
	fs.IntVar(&f.transform.ScaleCluster, "scale-cluster", 1, "")
	fs.IntVar(&f.transform.Repeat, "repeat", 1, "")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "")
	fs.BoolVarP(&f.help, "help", "h", false, "")
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if err := f.transform.Validate(); err != nil {
		return nil, nil, err
	}
	return f, fs.Args(), nil
}

func runSim(ctx context.Context, env *Env, args []string) int {
	f, rest, err := parseSimFlags(args)
	if err != nil {
		return Errorf(env, "sim", "%v (see sluice sim --help)", err)
	}
	if f.help {
		fmt.Fprint(env.Stdout, simUsage)
		return 0
	}
	if f.compare {
		f.confs = append(f.confs, rest...)
	} else if len(rest) > 0 {
		return Errorf(env, "sim", "unexpected argument %q (use --compare to give several slurm.conf files)", rest[0])
	}
	if f.trace == "" {
		return Errorf(env, "sim", "--trace is required")
	}
	setups, err := simSetups(env, f)
	if err != nil {
		return Errorf(env, "sim", "%v", err)
	}
	if stop := benchProfile(f.cpuProfile); stop != nil {
		defer stop()
	}
	wallStart := time.Now() // the heap's setup counts
	defer tuneSimMemory(min(len(setups), max(f.parallel, 1)))()
	tr, err := readSimTrace(env, f)
	if err != nil {
		return Errorf(env, "sim", "%v", err)
	}
	if tr.Bad != nil {
		fmt.Fprintf(env.Stderr, "sim: warning: %s: %s\n", f.trace, tr.BadSummary(5))
	}
	if !f.transform.Identity() {
		tr = f.transform.Apply(tr)
		fmt.Fprintf(env.Stderr, "sim: workload transformed: %d jobs (%d copies), arrivals %gx denser, machine and job sizes x%d\n",
			len(tr.Jobs), max(f.transform.Repeat, 1), f.transform.TimeScale, max(f.transform.ScaleCluster, 1))
	}
	opt, err := simOptions(f, tr)
	if err != nil {
		return Errorf(env, "sim", "%v", err)
	}
	runs, err := simulateAll(ctx, env, setups, opt, f.parallel)
	if err != nil {
		if ctx.Err() != nil {
			return Errorf(env, "sim", "interrupted: replay stopped, nothing written")
		}
		return Errorf(env, "sim", "%v", err)
	}
	wall := time.Since(wallStart).Seconds()
	warnRejected(env, runs)
	return simOutputs(env, f, tr, runs, opt, wall)
}

// warnRejected tells on stderr, whatever the outputs, how many jobs each
// policy's simulated cluster refused and why: a replay that silently drops
// jobs (Slurm's default MaxJobCount of 10,000 on a deep queue) would
// otherwise report waits of the jobs that got in only.
func warnRejected(env *Env, runs []sim.Run) {
	for _, r := range runs {
		m := &r.Metrics
		if m.Rejected == 0 {
			continue
		}
		fmt.Fprintf(env.Stderr, "sim: warning: %s: %s jobs rejected at submission: %s\n", r.Name, strconv.Itoa(m.Rejected), strings.TrimPrefix(m.RejectSummary(), strconv.Itoa(m.Rejected)+" "))
		if h := m.MaxJobCountHint(); h != "" {
			fmt.Fprintf(env.Stderr, "sim: warning: %s: %s\n", r.Name, h)
		}
	}
}

// simSetups pairs --conf and --accounts: one accounts script for every
// conf, or one per conf.
func simSetups(env *Env, f *simFlags) ([]sim.Setup, error) {
	confs := f.confs
	if len(confs) == 0 {
		confs = []string{""}
	}
	if len(f.accounts) > 1 && len(f.accounts) != len(confs) {
		return nil, fmt.Errorf("give one --accounts for all policies or one per --conf (%d confs, %d accounts)", len(confs), len(f.accounts))
	}
	var out []sim.Setup
	seen := map[string]int{}
	for i, c := range confs {
		s := sim.Setup{Conf: absPath(env, c), Reservations: absPath(env, f.reservations)}
		switch len(f.accounts) {
		case 1:
			s.Accounts = absPath(env, f.accounts[0])
		case len(confs):
			s.Accounts = absPath(env, f.accounts[i])
		}
		label := s.Label()
		if len(f.accounts) == len(confs) && len(confs) > 1 && f.accounts[i] != "" {
			label += "+" + strings.TrimSuffix(filepath.Base(f.accounts[i]), filepath.Ext(f.accounts[i]))
		}
		if n := seen[label]; n > 0 {
			label = fmt.Sprintf("%s#%d", label, n+1)
		}
		seen[label]++
		s.Name = label
		out = append(out, s)
	}
	return out, nil
}

func absPath(env *Env, p string) string {
	if p == "" || filepath.IsAbs(p) || env.Cwd == "" {
		return p
	}
	return filepath.Join(env.Cwd, p)
}

// SbatchSpecParser adapts the sbatch option parser to the simulator's UB
// events reader.
func SbatchSpecParser(args []string) (api.JobSpec, []string, error) {
	r, rest, err := ParseSbatchOptions(args)
	if err != nil {
		return api.JobSpec{}, nil, err
	}
	return r.Spec, rest, nil
}

func readSimTrace(env *Env, f *simFlags) (*sim.Trace, error) {
	opt := sim.ReadOptions{Format: f.format, SbatchParser: SbatchSpecParser}
	if f.userMap != "" {
		file, err := os.Open(absPath(env, f.userMap))
		if err != nil {
			return nil, err
		}
		defer file.Close()
		if opt.UserMap, err = sim.ReadUserMap(file); err != nil {
			return nil, err
		}
	}
	return sim.ReadFile(absPath(env, f.trace), opt)
}

func simOptions(f *simFlags, tr *sim.Trace) (sim.Options, error) {
	opt := sim.Options{Trace: tr}
	var err error
	if f.from != "" {
		if opt.From, err = parseSimTime(f.from, tr.StartUnix); err != nil {
			return opt, fmt.Errorf("--from: %v", err)
		}
	}
	if f.to != "" {
		if opt.To, err = parseSimTime(f.to, tr.StartUnix); err != nil {
			return opt, fmt.Errorf("--to: %v", err)
		}
	}
	for _, s := range f.inspect {
		t, err := parseSimTime(s, tr.StartUnix)
		if err != nil {
			return opt, fmt.Errorf("--inspect: %v", err)
		}
		opt.Inspect = append(opt.Inspect, t)
	}
	return opt, nil
}

// parseSimTime reads a simulated time: seconds from the trace's start,
// with an optional s/m/h/d suffix, or an absolute UTC date (time) when the
// trace has a start time.
func parseSimTime(s string, startUnix int64) (int64, error) {
	mult := int64(1)
	num := s
	if n := len(s); n > 1 {
		switch s[n-1] {
		case 's':
			num = s[:n-1]
		case 'm':
			mult, num = 60, s[:n-1]
		case 'h':
			mult, num = 3600, s[:n-1]
		case 'd':
			mult, num = 86400, s[:n-1]
		}
	}
	if v, err := strconv.ParseFloat(num, 64); err == nil && v >= 0 {
		return int64(v * float64(mult)), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			if startUnix == 0 {
				return 0, fmt.Errorf("%q: the trace has no start date; give seconds from its start", s)
			}
			return max(t.Unix()-startUnix, 0), nil
		}
	}
	return 0, fmt.Errorf("%q is not a time (seconds, 12h, 30d or 2026-01-01T10:00)", s)
}

// simHeapAhead is how much heap a replay maps ahead in huge pages
// (hugeHeap): address space, resident only once used. SDSC-SP2's replay
// peaks at about 80 MiB.
const simHeapAhead = 256 << 20

// tuneSimMemory sets the heap up for a replay and returns the function
// that restores what it changed: huge pages where the kernel gives them
// (hugeHeap), the collector's default target then (with faults cheap, a
// larger heap that is collected less often is faster: SDSC-SP2 in 1.19 s
// at GOGC 100 against 1.27 s at 35), and tuneSimGC's lower target
// otherwise.
func tuneSimMemory(busy int) func() {
	if simHugeHeap() {
		return func() {}
	}
	return tuneSimGC(busy)
}

// simHugeHeap is hugeHeap once per process: the marks stay, and a second
// allocation ahead would reuse (and zero) the heap the first replay used.
var simHugeHeap = sync.OnceValue(func() bool { return hugeHeap(simHeapAhead) })

// simGCPercent is the GC target while a replay leaves a core idle.
const simGCPercent = 35

// tuneSimGC lowers the garbage collector's heap target while fewer
// replays run than there are cores, and returns the function that restores
// it. The collector then marks on an idle core and the heap stays small and
// warm in cache: on SDSC-SP2 a single replay ran in 2.50-2.55 s at 35
// against 2.67-2.73 s at the default 100 (3.7 s with GC off: every fresh
// page costs a fault). With every core busy the extra GC work is not free
// (two policies in parallel took 3% longer), so the default stays. A GOGC
// in the environment wins.
func tuneSimGC(busy int) func() {
	if busy >= runtime.GOMAXPROCS(0) || os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(simGCPercent)
	return func() { debug.SetGCPercent(old) }
}

// simulateAll runs the policies in parallel, at most n at once; results
// keep the order of the setups so output is deterministic.
func simulateAll(ctx context.Context, env *Env, setups []sim.Setup, opt sim.Options, n int) ([]sim.Run, error) {
	runs := make([]sim.Run, len(setups))
	errs := make([]error, len(setups))
	bar := newProgressBar(env, len(setups)*len(opt.Trace.Jobs))
	sem := make(chan struct{}, max(n, 1))
	var wg sync.WaitGroup
	for i := range setups {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			o := opt
			o.Progress = bar.reporter(i)
			o.Context = ctx
			runs[i], errs[i] = sim.Simulate(setups[i], o)
		}(i)
	}
	wg.Wait()
	bar.done()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// simJSON is the --json document.
type simJSON struct {
	Jobs              int        `json:"jobs"`
	WallSeconds       float64    `json:"wall_seconds"`
	JobsPerWallSecond float64    `json:"jobs_per_wall_second"`
	Trace             *sim.Trace `json:"trace"`
	Policies          []sim.Run  `json:"policies"`
}

func simOutputs(env *Env, f *simFlags, tr *sim.Trace, runs []sim.Run, opt sim.Options, wall float64) int {
	jobs := 0
	if len(runs) > 0 {
		jobs = runs[0].Metrics.Jobs
	}
	if !f.quiet {
		writeSimSummary(env.Stdout, f.trace, tr, runs, wall)
		for _, r := range runs {
			fmt.Fprint(env.Stdout, sim.ReservationSummary(r)) // reserved capacity (sim/resv.go)
			for _, in := range r.Inspections {
				fmt.Fprintf(env.Stdout, "\n== %s at t=%d s ==\n$ squeue\n%s\n$ sprio -l\n%s\n$ sshare -al\n%s", r.Name, in.T, in.Squeue, in.Sprio, in.Sshare)
			}
		}
	}
	if f.jsonOut != "" {
		doc := simJSON{Jobs: jobs, WallSeconds: wall, Trace: tr, Policies: runs}
		if wall > 0 {
			doc.JobsPerWallSecond = float64(jobs*len(runs)) / wall
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return Errorf(env, "sim", "%v", err)
		}
		b = append(b, '\n')
		if err := writeOut(env, f.jsonOut, b); err != nil {
			return Errorf(env, "sim", "%v", err)
		}
	}
	if f.jobsOut != "" {
		if err := writeOut(env, f.jobsOut, jobsJSONL(runs)); err != nil {
			return Errorf(env, "sim", "%v", err)
		}
	}
	if f.report != "" {
		var buf bytes.Buffer
		in := sim.ReportInput{Title: "Sluice simulation: " + filepath.Base(f.trace), TraceName: filepath.Base(f.trace), Trace: tr, Runs: runs}
		if err := sim.WriteReport(&buf, in); err != nil {
			return Errorf(env, "sim", "%v", err)
		}
		if err := writeOut(env, f.report, buf.Bytes()); err != nil {
			return Errorf(env, "sim", "%v", err)
		}
	}
	return 0
}

// jobsJSONL renders every policy's per-job results, one JSON object per
// line with the policy's name.
func jobsJSONL(runs []sim.Run) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range runs {
		for _, j := range r.Jobs {
			_ = enc.Encode(struct {
				Policy string `json:"policy"`
				sim.JobResult
			}{r.Name, j})
		}
	}
	return buf.Bytes()
}

func writeOut(env *Env, path string, b []byte) error {
	if path == "-" {
		_, err := env.Stdout.Write(b)
		return err
	}
	return os.WriteFile(absPath(env, path), b, 0o644)
}

// writeSimSummary prints the plain-text table: one column per policy.
func writeSimSummary(w io.Writer, name string, tr *sim.Trace, runs []sim.Run, wall float64) {
	fmt.Fprintf(w, "Trace %s (%s): %d jobs", filepath.Base(name), tr.Format, len(tr.Jobs))
	if len(tr.Bad) > 0 {
		fmt.Fprintf(w, ", %d bad lines", len(tr.Bad))
	}
	fmt.Fprintf(w, "; simulated in %.2f s\n\n", wall)
	rows := []struct {
		label string
		get   func(m *sim.Metrics) string
	}{
		{"Jobs started", func(m *sim.Metrics) string { return strconv.Itoa(m.Started) }},
		{"Jobs rejected", func(m *sim.Metrics) string { return strconv.Itoa(m.Rejected) }},
		{"Mean wait", func(m *sim.Metrics) string { return shortDur(m.Overall.WaitMean) }},
		{"Median wait", func(m *sim.Metrics) string { return shortDur(m.Overall.WaitMedian) }},
		{"p95 wait", func(m *sim.Metrics) string { return shortDur(m.Overall.WaitP95) }},
		{"Max wait", func(m *sim.Metrics) string { return shortDur(m.Overall.WaitMax) }},
		{"Mean response", func(m *sim.Metrics) string { return shortDur(m.Overall.ResponseMean) }},
		{"Bounded slowdown", func(m *sim.Metrics) string { return fmt.Sprintf("%.2f", m.Overall.BoundedSlowdown) }},
		{"CPU utilization", func(m *sim.Metrics) string { return fmt.Sprintf("%.1f%%", 100*m.CPUUtilization) }},
		{"Offered load", func(m *sim.Metrics) string { return fmt.Sprintf("%.1f%%", 100*m.OfferedLoad) }},
		{"Peak queue", func(m *sim.Metrics) string { return strconv.FormatInt(m.PeakPending, 10) }},
		{"Started by backfill", func(m *sim.Metrics) string { return fmt.Sprintf("%.1f%%", 100*m.BackfillFraction) }},
		{"Preemptions", func(m *sim.Metrics) string { return strconv.Itoa(m.Preemptions) }},
		{"Timeouts", func(m *sim.Metrics) string { return strconv.Itoa(m.Timeout) }},
		{"Makespan", func(m *sim.Metrics) string { return shortDur(float64(m.Makespan)) }},
	}
	fmt.Fprintf(w, "%-20s", "")
	for _, r := range runs {
		fmt.Fprintf(w, " %16s", truncRight(r.Name, 16))
	}
	fmt.Fprintln(w)
	for _, row := range rows {
		fmt.Fprintf(w, "%-20s", row.label)
		for i := range runs {
			fmt.Fprintf(w, " %16s", row.get(&runs[i].Metrics))
		}
		fmt.Fprintln(w)
	}
}

func truncRight(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "+"
}

func shortDur(sec float64) string {
	switch {
	case sec < 120:
		return fmt.Sprintf("%.0fs", sec)
	case sec < 7200:
		return fmt.Sprintf("%.1fm", sec/60)
	case sec < 172800:
		return fmt.Sprintf("%.1fh", sec/3600)
	}
	return fmt.Sprintf("%.1fd", sec/86400)
}

// progressBar draws "[=====>    ]  42%  22680/54044 jobs  12 s" on
// stderr, only when stderr is a terminal (logs and pipes stay clean) and
// only once a replay has run for progressDelay, so short ones print
// nothing.
type progressBar struct {
	mu    sync.Mutex
	w     io.Writer
	total int
	done_ []int
	last  int
	start time.Time
	now   func() time.Time
}

// progressDelay is how long a replay runs before the progress line shows.
const progressDelay = 2 * time.Second

func newProgressBar(env *Env, total int) *progressBar {
	b := &progressBar{total: total, last: -1, start: time.Now(), now: time.Now}
	if f, ok := env.Stderr.(*os.File); ok && isTerminal(f) && total > 0 {
		b.w = f
	}
	return b
}

func (b *progressBar) reporter(i int) func(done, total int) {
	if b.w == nil {
		return nil
	}
	b.mu.Lock()
	for len(b.done_) <= i {
		b.done_ = append(b.done_, 0)
	}
	b.mu.Unlock()
	return func(done, _ int) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.done_[i] = done
		sum := 0
		for _, d := range b.done_ {
			sum += d
		}
		pct := sum * 100 / b.total
		elapsed := b.now().Sub(b.start)
		if pct == b.last || elapsed < progressDelay {
			return
		}
		b.last = pct
		const width = 40
		fill := pct * width / 100
		fmt.Fprintf(b.w, "\r[%s%s] %3d%%  %d/%d jobs  %.0f s", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), pct, sum, b.total, elapsed.Seconds())
	}
}

func (b *progressBar) done() {
	if b.w != nil && b.last >= 0 {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
