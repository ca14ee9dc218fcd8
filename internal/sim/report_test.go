package sim_test

import (
	"bytes"
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
	for _, want := range []string{"<svg", "CPU utilization over time", "Queue length over time", "Wait time per account",
		"Wait time per QOS", "Delivered vs target share", "2 skipped (never ran)",
		`<td class="win">10.0 min</td>`, `<td class="win">80.0%</td>`} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
