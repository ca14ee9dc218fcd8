package oracle

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSluiceAgainstGolden plays every scenario on `sluice up` and compares
// each point with what real Slurm printed (golden/*.golden). A point that
// differs fails the test unless differences.txt lists it with its reason.
// SLUICE_DIFF_ONLY=a,b plays only the named scenarios.
// checkParallel is how many scenarios play on Sluice at once. A scenario
// mostly waits (for a job to end, for a recalculation period): the whole
// suite uses about a minute of CPU over its few minutes, so eight at once
// keep a 2-core machine far from busy while cutting the wall time to the
// longest scenarios'.
const checkParallel = 8

func TestSluiceAgainstGolden(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the differential suite needs root: it starts clusters and runs commands as alice, bob, charlie and dave (CI runs as root)")
	}
	if testing.Short() {
		t.Skip("-short: the differential suite plays real clusters for minutes")
	}
	var only []string
	if v := os.Getenv("SLUICE_DIFF_ONLY"); v != "" {
		only = strings.Split(v, ",")
	}
	suite, err := LoadSuite(".", only)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureUsers(); err != nil {
		t.Fatal(err)
	}
	bin := buildSluice(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	log := testLog{t} // a line per scenario played, as it ends: the suite runs for minutes
	newSluice := func() Target { return &SluiceTarget{Binary: bin, BaseConf: suite.BaseConf} }
	outs := suite.CheckGolden(ctx, newSluice, checkParallel, log)
	var report strings.Builder
	total, unexpected, stale := Report(&report, outs, suite.Known)
	t.Log("\n" + report.String())
	// Real clusters have timing: a scenario with an unexpected difference
	// is played once more, and only a point that differs both times, or
	// a scenario that cannot be played twice, fails. The second time the
	// scenarios play one at a time: under the load of eight clusters a
	// pass can come later than a scenario's wait allows (a job still
	// pending where Slurm had started it), and a replay beside the longest
	// scenario met the same load again.
	if retry := scenariosOf(outs, unexpected); len(retry) > 0 {
		again := *suite
		again.Scenarios = retry
		outs2 := again.CheckGolden(ctx, newSluice, 1, log)
		var report2 strings.Builder
		_, unexpected2, _ := Report(&report2, outs2, suite.Known)
		t.Logf("played again: %d scenarios\n%s", len(retry), report2.String())
		unexpected = bothTimes(unexpected, unexpected2)
		outs = replayed(outs, outs2)
	}
	failed := map[string]bool{}
	for _, o := range outs {
		if o.Err != nil {
			failed[o.Scenario.Name] = true
			t.Errorf("%s: %v", o.Scenario.Name, o.Err)
		}
	}
	for _, d := range unexpected {
		// The first differing line goes into the failure itself: CI shows
		// the failures, not always the whole log.
		t.Errorf("%s step %d (%s): %s differs from Slurm and is not in differences.txt; first difference: %s",
			d.Scenario, d.Step, d.What, d.Point, firstDifference(d.Want, d.Got))
	}
	for _, s := range stale {
		t.Logf("now equal to Slurm, remove from differences.txt: %s", s)
	}
	// The summary line, also when the test passes (go test -v shows it).
	t.Log(total.String())
}

// scenariosOf returns the scenarios of the diffs and of the outcomes that
// failed to play.
func scenariosOf(outs []Outcome, diffs []Diff) []*Scenario {
	names := map[string]bool{}
	for _, d := range diffs {
		names[d.Scenario] = true
	}
	var out []*Scenario
	for _, o := range outs {
		if names[o.Scenario.Name] || o.Err != nil {
			out = append(out, o.Scenario)
		}
	}
	return out
}

// replayed keeps the first outcome of each scenario, with the error of the
// second play for those played again: one that played the second time
// did not fail.
func replayed(first, second []Outcome) []Outcome {
	again := map[string]Outcome{}
	for _, o := range second {
		again[o.Scenario.Name] = o
	}
	out := make([]Outcome, len(first))
	for i, o := range first {
		if o2, ok := again[o.Scenario.Name]; ok && (o.Err == nil || o2.Err == nil) {
			o.Err = nil
		}
		out[i] = o
	}
	return out
}

// bothTimes keeps the diffs of a that b has too (same scenario, step and
// point).
func bothTimes(a, b []Diff) []Diff {
	seen := map[string]bool{}
	for _, d := range b {
		seen[knownKey(d.Scenario, d.Step, d.Point)] = true
	}
	var out []Diff
	for _, d := range a {
		if seen[knownKey(d.Scenario, d.Step, d.Point)] {
			out = append(out, d)
		}
	}
	return out
}

// firstDifference names the first line where want and got differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: Slurm %q, Sluice %q", i+1, a, b)
		}
	}
	return "none"
}

// testLog writes each line to the test's log, which go test -v shows as
// it comes.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
