package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// ctlGolden compares out with testdata/<cmd>/<name>.golden; regenerate
// with SLUICE_UPDATE_GOLDEN=1.
func ctlGolden(t *testing.T, cmd, name, out string) {
	t.Helper()
	path := filepath.Join("testdata", cmd, name+".golden")
	if os.Getenv("SLUICE_UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with SLUICE_UPDATE_GOLDEN=1)", err)
	}
	if string(want) != out {
		t.Errorf("%s differs\n--- got\n%s--- want\n%s", path, out, want)
	}
}

// fixtureNow is the controller clock of the fixtures (local time, so the
// rendered wall clock does not depend on TZ).
var fixtureNow = time.Date(2026, 1, 2, 10, 0, 0, 0, time.Local)

func fixtureAgo(d time.Duration) time.Time { return fixtureNow.Add(-d) }

// queueFixture is a small queue: running, pending for resources, held,
// an array with a throttle, a finished job and a ReqNodeNotAvail one.
func queueFixture() api.JobsResponse {
	base := func(id uint32, name, user, part, state, short string) api.JobInfo {
		return api.JobInfo{JobID: id, JobIDStr: fixtureID(id), ArrayTaskID: -1, Name: name, User: user, UID: 1000 + id%7,
			Group: "users", GID: 100, Account: "research", QOS: "normal", Partition: part, State: state,
			StateShort: short, SubmitTime: fixtureAgo(3 * time.Hour), TimeLimitSec: 7200, NumNodes: 1, NumCPUs: 1,
			NumTasks: 1, CPUsPerTask: 1, ExitCode: "0:0", WorkDir: "/home/" + user}
	}
	run := base(101, "train", "alice", "debug", "RUNNING", "R")
	run.StartTime, run.NodeList, run.NumNodes, run.NumCPUs, run.Priority = fixtureAgo(time.Hour+2*time.Minute+3*time.Second), "n[1-2]", 2, 8, 9000
	big := base(102, "big", "bob", "debug", "PENDING", "PD")
	big.Reason, big.Priority, big.ExpectedStart, big.SchedNodes, big.NumCPUs = "Resources", 500, fixtureNow.Add(time.Hour), "n3", 4
	held := base(103, "held", "alice", "gpu", "PENDING", "PD")
	held.Reason, held.Hold, held.TimeLimitSec = "JobHeldUser", "user", api.TimeInfinite
	arr := base(104, "sweep", "carol", "debug", "PENDING", "PD")
	arr.JobIDStr, arr.ArrayJobID, arr.ArrayTasks, arr.Reason, arr.Priority = "104_[3-5%2]", 104, "3-5%2", "JobArrayTaskLimit", 700
	arr.ArrayThrottle = 2
	task := base(108, "sweep", "carol", "debug", "RUNNING", "R")
	task.JobIDStr, task.ArrayJobID, task.ArrayTaskID, task.NodeList = "104_1", 104, 1, "n4"
	task.StartTime, task.TimeLimitSec, task.Priority = fixtureAgo(5*time.Minute), 1800, 700
	done := base(105, "done", "alice", "debug", "COMPLETED", "CD")
	done.StartTime, done.EndTime, done.NodeList = fixtureAgo(2*time.Hour), fixtureAgo(90*time.Minute), "n3"
	nodeWait := base(106, "pinned", "dave", "gpu", "PENDING", "PD")
	nodeWait.Reason, nodeWait.StateDesc, nodeWait.QOS, nodeWait.Account, nodeWait.Priority = "ReqNodeNotAvail",
		"ReqNodeNotAvail, UnavailableNodes:n6", "high", "physics", 800
	return api.JobsResponse{Now: fixtureNow, Jobs: []api.JobInfo{run, big, held, arr, done, nodeWait, task}}
}

func TestSqueueGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"long", []string{"-l"}},
		{"noheader", []string{"-h"}},
		{"format", []string{"-o", "%.7i %.9P %.8j %.8u %.2t %.10M %.6D %R"}},
		{"format-more", []string{"-o", "%i|%A|%F|%K|%a|%q|%T|%l|%L|%C|%r|%Q|%p|%y|%S|%V|%E"}},
		{"Format", []string{"-O", "JobID,Name:12,State:.10,TimeLimit,ReasonList"}},
		{"user", []string{"-u", "alice"}},
		{"states-all", []string{"-t", "all"}},
		{"states-pd", []string{"-t", "PD"}},
		{"partition", []string{"-p", "gpu"}},
		{"account-qos", []string{"-A", "physics", "-q", "high"}},
		{"jobs-array", []string{"-j", "104"}},
		{"jobs-task", []string{"-j", "104_4"}},
		{"expand-array", []string{"-r"}},
		{"start", []string{"--start"}},
		{"sort", []string{"--sort", "-p,i"}},
		// jobs without a start time (N/A) last in both directions, a
		// planned job's %e its expected start plus its limit (oracle)
		{"sort-start", []string{"-S", "S", "-o", "%i %t %S %e"}},
		{"sort-start-desc", []string{"-S", "-S", "-o", "%i %t %S %e"}},
		{"nodelist", []string{"-w", "n2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseSqueue(c.args)
			if err != nil {
				t.Fatal(err)
			}
			out, err := RenderSqueue(queueFixture(), o)
			if err != nil {
				t.Fatal(err)
			}
			ctlGolden(t, "squeue", c.name, out)
		})
	}
}

func TestSqueueErrors(t *testing.T) {
	for _, args := range [][]string{{"-O", "NoSuchField"}, {"-o", "%.10"}} {
		o, err := parseSqueue(args)
		if err == nil {
			_, err = RenderSqueue(queueFixture(), o)
		}
		if err == nil {
			t.Errorf("squeue %v: no error", args)
		}
	}
	if _, err := parseSqueue([]string{"--bogus"}); err == nil {
		t.Error("unknown option accepted")
	}
}

func TestFormatParser(t *testing.T) {
	items, err := parseFormat("%.18i %-8j%%x %5P")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		if it.field == 0 {
			got = append(got, "lit:"+it.lit)
			continue
		}
		got = append(got, string(it.field)+":"+fixtureID(uint32(it.width))+map[bool]string{true: "R", false: "L"}[it.right])
	}
	want := "i:18R|lit: |j:8L|lit:%x |P:5L"
	if strings.Join(got, "|") != want {
		t.Errorf("items %v, want %s", got, want)
	}
}

func fixtureID(id uint32) string { return strconv.FormatUint(uint64(id), 10) }

// FuzzSqueueFormat checks that no format string makes squeue panic.
func FuzzSqueueFormat(f *testing.F) {
	for _, s := range []string{squeueDefault, squeueLong, squeueStart, "%", "%.", "%#", "%5", "%%%i", "%.100000i"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o := &squeueOpts{format: s}
		RenderSqueue(queueFixture(), o)
	})
}

// TestSqueueIterate: -i SECONDS reports again every interval until
// interrupted, each report headed by the time; -h drops the time with the
// header; a zero or non-numeric interval is refused.
func TestSqueueIterate(t *testing.T) {
	h := newCtlHarness(t, "")
	if rc, _, errs := h.run(runSbatch, "-H", "-J", "waits", "--wrap", "true"); rc != 0 {
		t.Fatalf("sbatch: %s", errs)
	}
	for _, tc := range []struct {
		args     []string
		headers  int // at least
		stampRow bool
	}{
		{[]string{"-i", "1"}, 2, true},
		{[]string{"--iterate=1", "-h", "-o", "%j"}, 0, false},
	} {
		env, out, _ := testEnv()
		env.Getenv = func(k string) string {
			if k == "SLUICE_SOCKET" {
				return h.sock
			}
			return ""
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		rc := runSqueue(ctx, env, tc.args)
		cancel()
		text := out.String()
		reports := strings.Count(text, "waits")
		if rc != 0 || reports < 2 || strings.Count(text, "JOBID") < tc.headers {
			t.Errorf("squeue %v: exit %d, %d reports:\n%s", tc.args, rc, reports, text)
		}
		first := strings.SplitN(text, "\n", 2)[0]
		_, err := time.ParseInLocation("Mon Jan _2 15:04:05 2006", first, time.Local)
		if (err == nil) != tc.stampRow {
			t.Errorf("squeue %v: first line %q (time stamp expected: %v)", tc.args, first, tc.stampRow)
		}
	}
	for _, bad := range []string{"0", "-2", "soon"} {
		if _, err := parseSqueue([]string{"-i", bad}); err == nil || err.Error() != "--iterate="+bad {
			t.Errorf("-i %s: %v", bad, err)
		}
	}
}

// TestSqueuePriorityDigits: %p is the priority over 2^32-1 with 14
// decimals, as Slurm 24.11 prints it (oracle: 101250 is 0.00002357410268,
// a held job's 0 is 0.00000000000000, 39 is 0.00000000908040).
func TestSqueuePriorityDigits(t *testing.T) {
	for prio, want := range map[uint32]string{101250: "0.00002357410268", 0: "0.00000000000000", 39: "0.00000000908040"} {
		j := api.JobInfo{Priority: prio}
		if got := squeueField(&j, 'p', time.Time{}); got != want {
			t.Errorf("priority %d: %%p %q, want %q", prio, got, want)
		}
	}
}

// TestSqueueLicensesAndTrailingBlanks: %W prints -L as written ((null)
// without licenses) and a line keeps its padding when the last field is
// empty (oracle: "3   PD " for -o '%i %.4t %N' on a pending job).
func TestSqueueLicensesAndTrailingBlanks(t *testing.T) {
	run := api.JobInfo{JobIDStr: "1", State: "RUNNING", StateShort: "R", Licenses: "zeta:1,matlab", NodeList: "n1"}
	pd := api.JobInfo{JobIDStr: "3", State: "PENDING", StateShort: "PD"}
	o, err := parseSqueue([]string{"-h", "-S", "i", "-o", "%i %.4t %W %N"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := RenderSqueue(api.JobsResponse{Now: fixtureNow, Jobs: []api.JobInfo{run, pd}}, o)
	if err != nil {
		t.Fatal(err)
	}
	want := "1    R zeta:1,matlab n1\n3   PD (null) \n"
	if out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

// TestSqueueArrayOrder: -S i lists an array's pending record after its
// running tasks; without -S, running tasks of one array tie newest
// record first (oracle, array-throttle scenario).
func TestSqueueArrayOrder(t *testing.T) {
	task := func(id uint32, tid int32, st string) api.JobInfo {
		return api.JobInfo{JobID: id, ArrayJobID: 1, ArrayTaskID: tid, JobIDStr: "1_" + strconv.Itoa(int(tid)), State: st,
			StateShort: map[string]string{"RUNNING": "R", "PENDING": "PD"}[st], Partition: "main"}
	}
	meta := task(1, -1, "PENDING")
	meta.JobIDStr = "1_[3-5%3]"
	jobs := []api.JobInfo{meta, task(3, 0, "RUNNING"), task(4, 1, "RUNNING"), task(9, 2, "RUNNING")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-h", "-S", "i", "-o", "%i"}, "1_0\n1_1\n1_2\n1_[3-5%3]\n"},
		{[]string{"-h", "-o", "%i"}, "1_[3-5%3]\n1_2\n1_1\n1_0\n"},
	} {
		o, err := parseSqueue(c.args)
		if err != nil {
			t.Fatal(err)
		}
		out, err := RenderSqueue(api.JobsResponse{Now: fixtureNow, Jobs: slices.Clone(jobs)}, o)
		if err != nil || out != c.want {
			t.Errorf("%v: %q %v, want %q", c.args, out, err, c.want)
		}
	}
}

// TestShowJobNarrowsToTask: scontrol show job 1_5 of a pending array
// record prints ArrayTaskId=5 (oracle, array-throttle scenario).
func TestShowJobNarrowsToTask(t *testing.T) {
	j := api.JobInfo{JobID: 1, ArrayJobID: 1, ArrayTaskID: -1, ArrayTasks: "3,5%3", ArrayThrottle: 3, Name: "arr",
		State: "PENDING", Reason: "JobArrayTaskLimit"}
	narrowToTask(&j, "1_5")
	line := JobRecordLines(&j, fixtureNow)[0]
	if want := "JobId=1 ArrayJobId=1 ArrayTaskId=5 ArrayTaskThrottle=3 JobName=arr"; line != want {
		t.Errorf("got %q, want %q", line, want)
	}
}

// TestSqueueUserAndLicenseFilters: --notme lists every user's jobs but the
// caller's, -L the jobs asking for one of the named licenses.
func TestSqueueUserAndLicenseFilters(t *testing.T) {
	res := queueFixture()
	res.Jobs[1].Licenses = "matlab:2,fluent"
	res.Jobs[3].Licenses = "fluent"
	for _, c := range []struct {
		args    []string
		notUser string
		want    string
	}{
		{[]string{"-h", "-o", "%i"}, "alice", "104_[3-5%2]\n102\n104_1\n106\n"},
		{[]string{"-h", "-o", "%i", "-L", "matlab"}, "", "102\n"},
		{[]string{"-h", "-o", "%i", "--licenses=fluent,abaqus"}, "", "104_[3-5%2]\n102\n"},
	} {
		o, err := parseSqueue(c.args)
		if err != nil {
			t.Fatal(err)
		}
		o.notUser = c.notUser
		out, err := RenderSqueue(res, o)
		if err != nil {
			t.Fatal(err)
		}
		if out != c.want {
			t.Errorf("squeue %v (not %q): got %q, want %q", c.args, c.notUser, out, c.want)
		}
	}
}

// TestSqueueBriefListing: squeue asks the controller for the brief record
// exactly when every column and sort key it prints is carried by it
// (api.BriefFields).
func TestSqueueBriefListing(t *testing.T) {
	cases := []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"-l"}, true},
		{[]string{"--start"}, true},
		{[]string{"-o", "%i %P %j %u %T %M %l %D %R %S %e %p"}, true},
		{[]string{"-o", "%i %C"}, false}, // CPUs come from the TRES
		{[]string{"-o", "%all"}, false},
		{[]string{"-O", "JobID,Name"}, false},
		{[]string{"-S", "C"}, false},
		{[]string{"-S", "-p,i"}, true},
	}
	for _, tc := range cases {
		o, err := parseSqueue(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.brief(); got != tc.want {
			t.Errorf("squeue %v: brief %v, want %v", tc.args, got, tc.want)
		}
	}
}
