package cli

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSreportGolden(t *testing.T) {
	proper := func(login string) string { return map[string]string{"alice": "Alice A", "bob": "Bob B"}[login] }
	window := "start=2026-03-10T10:00:00 end=2026-03-10T12:00:00"
	cases := []struct{ name, args string }{
		{"utilization", "cluster utilization " + window},
		{"utilization-percent-parsable", "-t percent -P cluster utilization " + window},
		{"utilization-hours-format", "-t Hours cluster utilization " + window + " format=Cluster,Allocated,Idle,Reported%8"},
		{"account-by-user", "cluster AccountUtilizationByUser " + window},
		{"account-by-user-physics", "cluster AccountUtilizationByUser accounts=physics " + window},
		{"top", "user topusage " + window},
		{"top-1-minper", "-t MinPer user topusage topcount=1 " + window},
		{"default-period", "cluster utilization"},
	}
	for _, c := range cases {
		o, err := parseSreport(strings.Fields(c.args))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		res := acctFixture()
		res.ClusterCPUs = 8
		out, err := RenderSreport(res, o, time.UTC, proper)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		extCheckGolden(t, filepath.Join("testdata", "sreport", c.name+".golden"), out)
	}
}

// TestSreportAllocated checks the arithmetic: in 10:00-12:00 charlie's
// two runs (1 h and 30 min on 2 CPUs), alice's 5 min and 1 min, bob's
// 1 min, all on 2 CPUs: 2*(60+30+5+1+1) = 194 CPU minutes of 8*120.
// Planned is the eligible jobs' waiting: charlie's second run 30 min,
// alice 5 and 1, bob 1 and his pending job 5, on 2 CPUs = 84.
func TestSreportAllocated(t *testing.T) {
	o, err := parseSreport(strings.Fields("-P -n cluster utilization start=2026-03-10T10:00:00 end=2026-03-10T12:00:00"))
	if err != nil {
		t.Fatal(err)
	}
	res := acctFixture()
	res.ClusterCPUs = 8
	out, err := RenderSreport(res, o, time.UTC, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if want := "demo|194|0|0|682|84|960\n"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestSreportErrors(t *testing.T) {
	for _, args := range []string{"cluster", "cluster bogus", "-t furlongs cluster utilization", "user topusage topcount=0",
		"cluster utilization start=never", "cluster utilization format=Nope", "cluster utilization color=red"} {
		o, err := parseSreport(strings.Fields(args))
		if err == nil {
			res := acctFixture()
			_, err = RenderSreport(res, o, time.UTC, func(string) string { return "" })
		}
		if err == nil {
			t.Errorf("sreport %s: no error", args)
		}
	}
}

// TestSreportDownPlanned: Down and PlannedDown come from the node
// history, Planned from the eligible jobs' waiting, capped by what is
// left after Allocated, Down and PlannedDown; the excess waiting is
// OverCommitted, and the columns always add up to Reported.
func TestSreportDownPlanned(t *testing.T) {
	cases := []struct {
		name       string
		down, plnd int64 // CPU-seconds from the controller
		cpus       int64
		want       string // Cluster|Allocated|Down|PlannedDown|Idle|Planned|Reported|OverCommitted
	}{
		{"nothing down", 0, 0, 8, "demo|194|0|0|682|84|960|0"},
		{"one node of 2 CPUs down 1 h", 2 * 3600, 0, 8, "demo|194|120|0|562|84|960|0"},
		{"maintenance 30 min on 4 CPUs", 0, 4 * 1800, 8, "demo|194|0|120|562|84|960|0"},
		{"small cluster: waiting over the rest", 0, 0, 2, "demo|194|0|0|0|46|240|38"},
		{"down beyond what is left is capped", 8 * 7200, 0, 8, "demo|194|766|0|0|0|960|84"},
	}
	for _, tc := range cases {
		o, err := parseSreport(strings.Fields("-P -n cluster utilization start=2026-03-10T10:00:00 end=2026-03-10T12:00:00 " +
			"format=Cluster,Allocated,Down,PlannedDown,Idle,Planned,Reported,OverCommitted"))
		if err != nil {
			t.Fatal(err)
		}
		o.plannedDown = tc.plnd
		res := acctFixture()
		res.ClusterCPUs, res.DownCPUSeconds = tc.cpus, tc.down
		out, err := RenderSreport(res, o, time.UTC, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		if out != tc.want+"\n" {
			t.Errorf("%s: got %q, want %q", tc.name, out, tc.want)
		}
	}
}

// TestE2ESreportDown drains a node of a real cluster for a few seconds
// and reads its Down time back from sreport cluster utilization (the
// controller's node history through the command).
func TestE2ESreportDown(t *testing.T) {
	c := upCluster(t, 2, "")
	if rc, _, errs := c.run("scontrol", "update", "NodeName=node1", "State=DRAIN", "Reason=test"); rc != 0 {
		t.Fatalf("drain: %s", errs)
	}
	time.Sleep(3 * time.Second)
	if rc, _, errs := c.run("scontrol", "update", "NodeName=node1", "State=RESUME"); rc != 0 {
		t.Fatalf("resume: %s", errs)
	}
	rc, out, errs := c.run("sreport", "-t", "Seconds", "-P", "-n", "cluster", "utilization", "start=now-1hours", "end=now",
		"format=Down,PlannedDown")
	if rc != 0 {
		t.Fatalf("sreport: %d %s", rc, errs)
	}
	var down, plnd int64
	if _, err := fmt.Sscanf(strings.TrimSpace(out), "%d|%d", &down, &plnd); err != nil {
		t.Fatalf("sreport output %q: %v", out, err)
	}
	_, info, _ := c.run("sinfo", "-h", "-N", "-n", "node1", "-o", "%c")
	cpus, err := strconv.ParseInt(strings.TrimSpace(info), 10, 64)
	if err != nil {
		t.Fatalf("sinfo CPUs of node1: %q", info)
	}
	t.Logf("sreport Down %d CPU-seconds, PLND Down %d (node1: %d CPUs)", down, plnd, cpus)
	// The history samples node states every 250 ms: the span is about
	// 3 s, shorter on a loaded machine, never longer than the 4 s or so
	// between the two commands' answers.
	if down < cpus || down > 5*cpus || plnd != 0 {
		t.Errorf("Down %d CPU-seconds for a node of %d CPUs drained ~3 s; PLND Down %d", down, cpus, plnd)
	}
}
