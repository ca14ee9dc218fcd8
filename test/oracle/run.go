package oracle

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Suite is the differential suite on disk: scenarios, golden files and the
// list of known differences, next to this package.
type Suite struct {
	Dir       string // test/oracle
	Scenarios []*Scenario
	Known     Known
	BaseConf  string
}

// LoadSuite reads the suite below dir; only keeps the named scenarios.
func LoadSuite(dir string, only []string) (*Suite, error) {
	scs, err := LoadScenarios(filepath.Join(dir, "scenarios"), only)
	if err != nil {
		return nil, err
	}
	known, err := LoadKnown(filepath.Join(dir, "differences.txt"))
	if err != nil {
		return nil, err
	}
	base, err := os.ReadFile(filepath.Join(dir, "base.conf"))
	if err != nil {
		return nil, err
	}
	return &Suite{Dir: dir, Scenarios: scs, Known: known, BaseConf: string(base)}, nil
}

// GoldenPath is where a scenario's oracle recording lives.
func (s *Suite) GoldenPath(name string) string {
	return filepath.Join(s.Dir, "golden", name+".golden")
}

// Record plays every scenario on the oracles (several play in parallel,
// one scenario each) and writes the golden files; a scenario that cannot
// be played is reported and the others recorded.
func (s *Suite) Record(ctx context.Context, oracles []Target, log io.Writer) error {
	pool := make(chan Target, len(oracles))
	for _, o := range oracles {
		pool <- o
	}
	var mu sync.Mutex
	var failed []string
	s.each(len(oracles), func(sc *Scenario) Outcome {
		o := <-pool
		defer func() { pool <- o }()
		fmt.Fprintf(log, "recording %s on the oracle\n", sc.Name)
		rec, err := Play(ctx, o, sc, nil)
		if err == nil {
			canonicalState(rec, o.Normalizer().State)
			err = os.WriteFile(s.GoldenPath(sc.Name), []byte(rec.Format()), 0o644)
		}
		if err != nil {
			fmt.Fprintf(log, "!!! %v\n", err)
			mu.Lock()
			failed = append(failed, sc.Name)
			mu.Unlock()
		}
		return Outcome{Scenario: sc, Err: err}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		return fmt.Errorf("not recorded: %s", strings.Join(failed, ", "))
	}
	return nil
}

// Stale returns the scenarios whose golden file is missing or was recorded
// from another version of the scenario.
func (s *Suite) Stale() []*Scenario {
	var out []*Scenario
	for _, sc := range s.Scenarios {
		rec, err := ParseRecording(s.GoldenPath(sc.Name))
		if err != nil || rec.Hash != HashText(sc.Text) {
			out = append(out, sc)
		}
	}
	return out
}

// Outcome is one scenario's comparison.
type Outcome struct {
	Scenario *Scenario
	Diffs    []Diff
	Tally    Tally
	Err      error
}

// CheckGolden plays the scenarios on Sluice, parallel at a time, and
// compares each with its golden file. newSluice makes one target per
// scenario.
func (s *Suite) CheckGolden(ctx context.Context, newSluice func() Target, parallel int, log io.Writer) []Outcome {
	wantNorm := (&OracleTarget{}).Normalizer()
	return s.each(parallel, func(sc *Scenario) Outcome {
		want, err := ParseRecording(s.GoldenPath(sc.Name))
		if err != nil {
			return Outcome{Scenario: sc, Err: fmt.Errorf("%v (record it with `make oracle-record ONLY=%s`)", err, sc.Name)}
		}
		t := newSluice()
		began := time.Now()
		got, err := Play(ctx, t, sc, nil)
		if err != nil {
			return Outcome{Scenario: sc, Err: err}
		}
		fmt.Fprintf(log, "played %s on sluice in %.1f s\n", sc.Name, time.Since(began).Seconds())
		diffs, tally, err := Compare(sc, want, wantNorm, got, t.Normalizer(), s.Known)
		return Outcome{Scenario: sc, Diffs: diffs, Tally: tally, Err: err}
	})
}

// Live plays each scenario on an oracle and on Sluice at the same time
// and compares them (the golden files are not read or written). Several
// oracles (each its own chroot, state and ports) play scenarios in
// parallel, one each.
func (s *Suite) Live(ctx context.Context, oracles []Target, newSluice func() Target, log io.Writer) []Outcome {
	pool := make(chan Target, len(oracles))
	for _, o := range oracles {
		pool <- o
	}
	return s.each(len(oracles), func(sc *Scenario) Outcome {
		o := <-pool
		defer func() { pool <- o }()
		fmt.Fprintf(log, "playing %s on both\n", sc.Name)
		var want *Recording
		var werr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); want, werr = Play(ctx, o, sc, nil) }()
		t := newSluice()
		got, gerr := Play(ctx, t, sc, nil)
		wg.Wait()
		if werr != nil || gerr != nil {
			return Outcome{Scenario: sc, Err: fmt.Errorf("oracle: %v; sluice: %v", werr, gerr)}
		}
		diffs, tally, err := Compare(sc, want, o.Normalizer(), got, t.Normalizer(), s.Known)
		return Outcome{Scenario: sc, Diffs: diffs, Tally: tally, Err: err}
	})
}

// each plays f on every scenario, parallel at a time, the longest first
// (by their sleeps) so that a few long scenarios do not end the run
// alone; the outcomes keep the suite's order.
func (s *Suite) each(parallel int, f func(*Scenario) Outcome) []Outcome {
	out := make([]Outcome, len(s.Scenarios))
	order := make([]int, len(s.Scenarios))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return s.Scenarios[order[a]].Sleeps() > s.Scenarios[order[b]].Sleeps()
	})
	sem := make(chan struct{}, max(parallel, 1))
	var wg sync.WaitGroup
	for _, i := range order {
		sc := s.Scenarios[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = f(sc)
		}()
	}
	wg.Wait()
	return out
}

// Report prints every difference and the summary; it returns the summary
// and the unexpected differences (those not in differences.txt) and stale
// entries of differences.txt (listed points that are now equal).
func Report(w io.Writer, outs []Outcome, known Known) (Tally, []Diff, []string) {
	var total Tally
	var unexpected []Diff
	seen := map[string]bool{}
	ran := map[string]bool{}
	for _, o := range outs {
		ran[o.Scenario.Name] = true
		if o.Err != nil {
			fmt.Fprintf(w, "!!! %s: %v\n", o.Scenario.Name, o.Err)
			continue
		}
		total.add(o.Tally)
		for _, d := range o.Diffs {
			fmt.Fprint(w, d.Format())
			seen[knownKey(d.Scenario, d.Step, d.Point)] = true
			if d.Known == "" {
				unexpected = append(unexpected, d)
			}
		}
	}
	var stale []string
	for k := range known {
		if !seen[k] && ran[strings.Fields(k)[0]] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	for _, d := range unexpected {
		fmt.Fprintf(w, "not in differences.txt: %s %d %s\n", d.Scenario, d.Step, d.Point)
	}
	fmt.Fprintln(w, total.String())
	fmt.Fprintf(w, "differential: %d differences listed in differences.txt, %d not listed\n", len(seen)-len(unexpected), len(unexpected))
	return total, unexpected, stale
}

// DefaultOracleState is the oracle's default ORACLE_STATE, the path golden
// files are written with whatever state directory recorded them.
const DefaultOracleState = "/var/tmp/slurm-oracle"

// canonicalState rewrites a second oracle's state directory (one running
// beside the default with ORACLE_STATE set) to the default one.
func canonicalState(rec *Recording, state string) {
	if state == DefaultOracleState || state == "" {
		return
	}
	for i := range rec.Results {
		r := &rec.Results[i]
		// JSON replies (--json) escape the slashes of the path.
		for _, s := range []string{state, strings.ReplaceAll(state, "/", `\/`)} {
			canon := DefaultOracleState
			if s != state {
				canon = strings.ReplaceAll(canon, "/", `\/`)
			}
			r.Stdout = strings.ReplaceAll(r.Stdout, s, canon)
			r.Stderr = strings.ReplaceAll(r.Stderr, s, canon)
		}
	}
}
