package sim_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/sim"
)

// twoRuns builds two runs whose metrics differ in a known way: the second
// has the lower mean wait and the higher utilization.
func twoRuns() []sim.Run {
	mk := func(name string, wait, util float64) sim.Run {
		m := sim.Metrics{Started: 10, CPUUtilization: util, OfferedLoad: 0.8,
			Overall:   sim.Stats{Jobs: 10, Started: 10, WaitMean: wait, WaitMedian: wait / 2, WaitP25: 1, WaitP75: wait, WaitP95: 2 * wait},
			ByAccount: map[string]sim.Stats{"physics": {Jobs: 6, Started: 6, WaitMedian: wait, WaitP25: 1, WaitP75: wait, WaitP95: 2 * wait}},
			ByQOS:     map[string]sim.Stats{"normal": {Jobs: 10, Started: 10, WaitMedian: wait}},
			Shares:    []sim.Share{{Account: "physics", NormShares: 0.6, Delivered: 0.5}},
			Series:    []sim.Point{{T: 0, CPUUtil: 0.5, Pending: 3}, {T: 3600, CPUUtil: util, Pending: 1}}}
		return sim.Run{Name: name, Metrics: m, Capacity: sim.Capacity{CPUs: 128}}
	}
	return []sim.Run{mk("fcfs", 7200, 0.7), mk("backfill", 600, 0.8)}
}

func TestReportIsSelfContainedAndMarksWinners(t *testing.T) {
	var buf bytes.Buffer
	tr := &sim.Trace{Format: "swf", Records: 12, Jobs: make([]sim.Job, 10), Skipped: map[string]int{"never ran": 2}}
	if err := sim.WriteReport(&buf, sim.ReportInput{TraceName: "t.swf", Trace: tr, Runs: twoRuns()}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, bad := range []string{"<script", "http://", "https://", "<link", "@import"} {
		if strings.Contains(html, bad) {
			t.Errorf("report contains %q: it must open without the network", bad)
		}
	}
	// two runs: their utilization difference, not two overlapping lines
	for _, want := range []string{"<svg", "CPU utilization: difference from ", "Queue length over time", "Wait time per account",
		"Wait time per QOS", "Delivered vs target share", "2 skipped (never ran)",
		`<td class="win">10.0 min</td>`, `<td class="win">80.0%</td>`} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestReportAccountsNaturalOrderAndRejections: accounts sort naturally
// (group2 before group15) in the per-account table, more accounts than a
// chart draws are announced, the log axis uses readable durations, and
// rejected jobs are reported with their reason.
func TestReportAccountsNaturalOrderAndRejections(t *testing.T) {
	runs := twoRuns()
	by := map[string]sim.Stats{}
	for i := 1; i <= 30; i++ {
		by["group"+strconv.Itoa(i)] = sim.Stats{Jobs: 100 - i, Started: 1, WaitMedian: 3600, WaitP25: 60, WaitP75: 7200, WaitP95: 86400}
	}
	runs[0].Metrics.ByAccount = by
	runs[0].Metrics.Rejected = 7
	runs[0].Metrics.RejectReasons = map[string]int{"MaxJobCount limit reached": 7}
	var buf bytes.Buffer
	if err := sim.WriteReport(&buf, sim.ReportInput{Title: "t", Runs: runs}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	table := html[strings.Index(html, "<h2>Per account"):]
	if i2, i15 := strings.Index(table, ">group2<"), strings.Index(table, ">group15<"); i2 < 0 || i15 < 0 || i2 > i15 {
		t.Errorf("group2 at %d, group15 at %d: want natural order", i2, i15)
	}
	for _, want := range []string{"the other 6 are in the table below", ">1 h<", ">1 d<", "MaxJobCount limit reached: 7", "default is 10000", "Jobs rejected"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(html, "16.7 min") {
		t.Error("the log axis still has a 10^3 s tick (16.7 min)")
	}
}

// TestReportUtilizationDifference: with two runs the utilization chart is
// the second minus the first, in percentage points around a zero line;
// with one run it is the plain utilization.
func TestReportUtilizationDifference(t *testing.T) {
	runs := twoRuns()
	var buf bytes.Buffer
	if err := sim.WriteReport(&buf, sim.ReportInput{Runs: runs}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{"CPU utilization: difference from " + runs[0].Name, "percentage points", ">+"} {
		if !strings.Contains(html, want) {
			t.Errorf("two runs: report lacks %q", want)
		}
	}
	buf.Reset()
	if err := sim.WriteReport(&buf, sim.ReportInput{Runs: runs[:1]}); err != nil {
		t.Fatal(err)
	}
	if html := buf.String(); !strings.Contains(html, "CPU utilization over time") || strings.Contains(html, "difference from") {
		t.Error("one run: want the plain utilization chart")
	}
}

// TestReportTieAtShownPrecisionIsNoWin: two makespans that print alike
// (54.1 d) are a tie, not a win for the one a few seconds shorter.
func TestReportTieAtShownPrecisionIsNoWin(t *testing.T) {
	runs := twoRuns()
	runs[0].Metrics.Makespan, runs[1].Metrics.Makespan = 54*86400+9000, 54*86400+9060
	var buf bytes.Buffer
	if err := sim.WriteReport(&buf, sim.ReportInput{Runs: runs}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), `<td class="win">54.1 d</td>`) {
		t.Error("54.1 d against 54.1 d is marked as a win")
	}
}
