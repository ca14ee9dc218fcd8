package cli

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestSreportHeaders: the column headers of each report as Slurm 24.11
// prints them (oracle, sreport-basic and sreport-errors; the rows under
// them are checked by TestSreportAllocated and TestSreportDownPlanned, as
// the oracle's fresh cluster has nothing rolled up to compare).
func TestSreportHeaders(t *testing.T) {
	window := "start=2026-03-10T10:00:00 end=2026-03-10T12:00:00"
	cases := []struct{ args, want string }{
		{"user topusage " + window, "  Cluster     Login     Proper Name         Account     Used   Energy \n" +
			"--------- --------- --------------- --------------- -------- -------- \n"},
		{"cluster AccountUtilizationByUser " + window, "  Cluster         Account     Login     Proper Name     Used   Energy \n" +
			"--------- --------------- --------- --------------- -------- -------- \n"},
		{"-P user topusage " + window, "Cluster|Login|Proper Name|Account|Used|Energy\n"},
		{"-P cluster AccountUtilizationByUser " + window, "Cluster|Account|Login|Proper Name|Used|Energy\n"},
	}
	for _, c := range cases {
		o, err := parseSreport(strings.Fields(c.args))
		if err != nil {
			t.Fatal(err)
		}
		out, err := RenderSreport(acctFixture(), o, time.UTC, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(out, "\n")
		if got := strings.Join(lines[4:min(len(lines), 4+strings.Count(c.want, "\n"))], ""); got != c.want {
			t.Errorf("sreport %s: headers %q, want %q", c.args, got, c.want)
		}
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

// TestSreportErrors: what sreport 24.11 refuses outright (stderr as it
// stands, exit 1) and what it only warns about before printing the report
// (oracle).
func TestSreportErrors(t *testing.T) {
	cases := []struct {
		args, stderr string
		refused      bool
		exit         int
	}{
		{"cluster", "too few arguments for keyword:cluster\n", true, 1},
		{"banana banana", "invalid keyword: banana\n", true, 1},
		{"account banana", "invalid keyword: account\n", true, 1},
		{"user banana", "Not valid report banana\nValid user reports are, \"Top\"\n", true, 1},
		{"job banana", "Not valid report banana\nValid job reports are, \"SizesByAccount, SizesByAccountAndWcKey, and  SizesByWckey\"\n", true, 1},
		{"-t furlongs cluster utilization", "unknown time format furlongs", false, 0},
		{"cluster utilization start=garbage", "Invalid time specification (pos=0): garbage\n", false, 0},
		{"cluster utilization format=Nope", " Unknown field 'nope'\n", false, 1},
		{"cluster utilization color=red", " Unknown condition: color=red\nUse keyword set to modify value\n", false, 1},
		{"user topusage topcount=0", "", false, 0},
	}
	for _, c := range cases {
		o, err := parseSreport(strings.Fields(c.args))
		var refusal *sreportRefusal
		if c.refused {
			if !errors.As(err, &refusal) || refusal.text != c.stderr {
				t.Errorf("sreport %s: %v, want the refusal %q", c.args, err, c.stderr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("sreport %s: %v", c.args, err)
		}
		if _, err := RenderSreport(acctFixture(), o, time.UTC, func(string) string { return "" }); err != nil {
			t.Fatalf("sreport %s: %v", c.args, err)
		}
		if got := strings.Join(o.warnings, ""); got != c.stderr || o.exit != c.exit {
			t.Errorf("sreport %s: stderr %q exit %d, want %q and %d", c.args, got, o.exit, c.stderr, c.exit)
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

// TestE2ESreportDown drains a node of a real cluster for a few seconds:
// the controller's node history holds the Down time (read through the
// API sreport uses), and sreport itself reports nothing for the current
// hour, which slurmdbd has not rolled up yet, nor for a day before the
// cluster existed (oracle, sreport-basic).
func TestE2ESreportDown(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 2, "")
	before := time.Now()
	if rc, _, errs := c.run("scontrol", "update", "NodeName=node1", "State=DRAIN", "Reason=test"); rc != 0 {
		t.Fatalf("drain: %s", errs)
	}
	time.Sleep(3 * time.Second)
	if rc, _, errs := c.run("scontrol", "update", "NodeName=node1", "State=RESUME"); rc != 0 {
		t.Fatalf("resume: %s", errs)
	}
	for _, period := range []string{"start=now-1hours end=now", "start=2020-01-01 end=2020-01-02"} {
		args := append([]string{"-t", "Seconds", "-P", "-n", "cluster", "utilization"}, strings.Fields(period)...)
		if rc, out, errs := c.run("sreport", args...); rc != 0 || out != "" {
			t.Errorf("sreport %s: rc %d stdout %q stderr %q, want no rows", period, rc, out, errs)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nu, err := api.NewUnixClient(filepath.Join(c.state, api.SocketFile)).NodeUsage(ctx, before.Add(-time.Minute), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, info, _ := c.run("sinfo", "-h", "-N", "-n", "node1", "-o", "%c")
	cpus, err := strconv.ParseInt(strings.TrimSpace(info), 10, 64)
	if err != nil {
		t.Fatalf("sinfo CPUs of node1: %q", info)
	}
	t.Logf("node history: Down %d CPU-seconds, PLND Down %d (node1: %d CPUs)", nu.DownCPUSeconds, nu.PlannedDownCPUSeconds, cpus)
	// The history samples node states every 250 ms: the span is about
	// 3 s, shorter on a loaded machine, never longer than the 4 s or so
	// between the two commands' answers.
	if nu.DownCPUSeconds < cpus || nu.DownCPUSeconds > 5*cpus || nu.PlannedDownCPUSeconds != 0 {
		t.Errorf("Down %d CPU-seconds for a node of %d CPUs drained ~3 s; PLND Down %d", nu.DownCPUSeconds, cpus, nu.PlannedDownCPUSeconds)
	}
}

// TestSreportRolledUp: only whole hours after the cluster registered and
// before the last hourly rollup are reported; a period with none prints
// the headers only, cluster utilization in Slurm's 8-wide layout.
func TestSreportRolledUp(t *testing.T) {
	res := acctFixture()
	day := func(h, m int) time.Time { return time.Date(2026, 3, 10, h, m, 0, 0, time.UTC) }
	cases := []struct {
		name       string
		registered time.Time
		now        time.Time
		args       string
		want       string
	}{
		{"before the cluster existed", day(9, 30), day(20, 0), "-P cluster utilization start=2026-03-09T00:00:00 end=2026-03-10T00:00:00",
			"Cluster|Allocated|Down|Planned|Idle|Planned|Reported\n"},
		{"the current hour is not rolled up", day(9, 30), day(10, 40), "-P -n cluster utilization start=2026-03-10T10:00:00 end=2026-03-10T11:00:00", ""},
		{"from the registration to the last rollup", day(10, 30), day(11, 40), "-P -n -t Seconds cluster utilization start=2026-03-10T10:00:00 end=2026-03-10T12:00:00 format=Reported",
			"28800\n"},
		{"no account rows either", day(9, 30), day(10, 40), "-P -n cluster AccountUtilizationByUser start=2026-03-10T10:00:00 end=2026-03-10T11:00:00", ""},
	}
	for _, tc := range cases {
		o, err := parseSreport(strings.Fields(tc.args))
		if err != nil {
			t.Fatal(err)
		}
		r := res
		r.Registered, r.Now, r.ClusterCPUs = tc.registered, tc.now, 16
		out, err := RenderSreport(r, o, time.UTC, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		if body := strings.Join(strings.SplitAfter(out, "\n")[min(4, strings.Count(out, "\n")):], ""); !strings.Contains(tc.args, "-n") && body != tc.want || strings.Contains(tc.args, "-n") && out != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, out, tc.want)
		}
	}
}

// TestSreportEmptyUtilizationHeader: the header lines Slurm 24.11 prints
// for cluster utilization with nothing rolled up (oracle, sreport-basic).
func TestSreportEmptyUtilizationHeader(t *testing.T) {
	o, err := parseSreport(strings.Fields("cluster utilization start=2020-01-01 end=2020-01-02"))
	if err != nil {
		t.Fatal(err)
	}
	r := acctFixture()
	r.Registered = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out, err := RenderSreport(r, o, time.UTC, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	want := "  Cluster Allocate     Down  Planned     Idle  Planned Reported \n--------- -------- -------- -------- -------- -------- -------- \n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("got %q, want it to end with %q", out, want)
	}
}
