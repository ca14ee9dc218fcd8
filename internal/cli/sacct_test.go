package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// acctAt is the fixed "now" of the accounting fixtures.
var acctAt = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// ago is a time d before acctAt.
func ago(d time.Duration) time.Time { return acctAt.Add(-d) }

// acctFixture is a small accounting history: charlie's job 10 preempted
// (requeued) then running again, alice's job 11 completed, bob's job 12
// failed, bob's pending job 13, an array task 14_2, a step 11.0, and an
// old job 5 from yesterday.
func acctFixture() api.AcctResponse {
	rec := func(id uint32, restart int, user string, uid uint32, acct, state, exit string, sub, start, end time.Time) api.AcctRecord {
		r := api.AcctRecord{JobID: id, Restart: restart, ArrayTaskID: -1, Name: "job" + user, User: user, UID: uid,
			GID: uid, Account: acct, QOS: "normal", Partition: "gpu", Submit: sub, Eligible: sub, Start: start,
			End: end, State: state, ExitCode: exit, ReqTRES: "cpu=2,mem=2000M,node=1", TimeLimitSec: 3600}
		if !start.IsZero() {
			r.AllocTRES, r.NodeList = "cpu=2,mem=2000M,node=1", "gpu[01-02]"
		}
		return r
	}
	step := rec(11, 0, "alice", 1001, "research", "COMPLETED", "0:0", ago(50*time.Minute), ago(45*time.Minute), ago(44*time.Minute))
	step.Step, step.Name, step.AllocTRES = "0", "hostname", ""
	arr := rec(15, 0, "alice", 1001, "research", "COMPLETED", "0:0", ago(20*time.Minute), ago(19*time.Minute), ago(18*time.Minute))
	arr.ArrayJobID, arr.ArrayTaskID = 14, 2
	return api.AcctResponse{Now: acctAt, Cluster: "demo", Records: []api.AcctRecord{
		rec(5, 0, "alice", 1001, "research", "COMPLETED", "0:0", ago(30*time.Hour), ago(29*time.Hour), ago(28*time.Hour)),
		rec(10, 0, "charlie", 1003, "physics", "PREEMPTED", "0:15", ago(2*time.Hour), ago(2*time.Hour), ago(time.Hour)),
		rec(10, 1, "charlie", 1003, "physics", "RUNNING", "0:0", ago(time.Hour), ago(30*time.Minute), time.Time{}),
		rec(11, 0, "alice", 1001, "research", "COMPLETED", "0:0", ago(50*time.Minute), ago(45*time.Minute), ago(40*time.Minute)),
		step,
		rec(12, 0, "bob", 1002, "physics", "FAILED", "1:0", ago(10*time.Minute), ago(9*time.Minute), ago(8*time.Minute)),
		rec(13, 0, "bob", 1002, "physics", "PENDING", "0:0", ago(5*time.Minute), time.Time{}, time.Time{}),
		arr,
	}}
}

func TestSacctGolden(t *testing.T) {
	cases := []struct {
		name string
		uid  int
		args string
	}{
		{"default-root", 0, ""},
		{"own-jobs-only", 1001, ""},
		{"allocations-parsable", 0, "-X -P --format=JobID,User,Account,QOS,AllocTRES,State,Elapsed,Planned,Partition,CPUTime,ExitCode,Submit,Start,End"},
		{"requeued-job", 0, "-j 10 --format=JobID,State,ExitCode,NodeList,Start,End%20"},
		{"requeued-job-duplicates", 0, "-D -j 10 --format=JobID,State,ExitCode,NodeList,Start,End%20"},
		{"brief-noheader", 0, "-b -n -S 2026-03-09"},
		{"widths-and-p", 0, "-X -p -o jobid%-8,jobname%4,state"},
		{"states-window", 0, "-s F,PD -S now-1hour -E now"},
		{"user-account", 0, "-u bob -A physics -X"},
		{"long", 0, "-l -j 11"},
		{"array-task", 0, "-j 14_2 -X"},
	}
	for _, c := range cases {
		o, err := parseSacct(strings.Fields(c.args))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out, err := RenderSacct(acctFixture(), o, c.uid, time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		extCheckGolden(t, filepath.Join("testdata", "sacct", c.name+".golden"), out)
	}
}

func TestSacctErrors(t *testing.T) {
	for _, args := range []string{"--format=Bogus", "-s XX", "-S notatime", "--format=JobID%0"} {
		o, err := parseSacct(strings.Fields(args))
		if err == nil {
			_, err = RenderSacct(acctFixture(), o, 0, time.UTC)
		}
		if err == nil {
			t.Errorf("sacct %s: no error", args)
		}
	}
}

// extCheckGolden compares out with a golden file (SLUICE_UPDATE_GOLDEN=1
// rewrites it).
func extCheckGolden(t *testing.T, path, out string) {
	t.Helper()
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

// TestSacctRequeuedLatestRun: without -D sacct shows one record per job,
// the latest run selected. On the oracle, a job requeued by preemption
// and waiting out its requeue delay (its PENDING record eligible later
// than now) showed its PREEMPTED run in plain sacct, the PENDING record
// with -j (no time window), and both with -D; once eligible, plain sacct
// showed the PENDING record.
func TestSacctRequeuedLatestRun(t *testing.T) {
	res := api.AcctResponse{Now: acctAt, Cluster: "demo", Records: []api.AcctRecord{
		{JobID: 20, ArrayTaskID: -1, User: "alice", UID: 1001, State: "PREEMPTED", ExitCode: "0:0",
			Submit: ago(time.Hour), Eligible: ago(time.Hour), Start: ago(time.Hour), End: ago(time.Minute),
			AllocTRES: "billing=4,cpu=4,mem=4000M,node=1"},
		{JobID: 20, Step: "batch", ArrayTaskID: -1, User: "alice", UID: 1001, State: "CANCELLED", ExitCode: "0:15",
			Submit: ago(time.Hour), Start: ago(time.Hour), End: ago(time.Minute), AllocTRES: "cpu=4,mem=4000M,node=1"},
		{JobID: 20, Restart: 1, ArrayTaskID: -1, User: "alice", UID: 1001, State: "PENDING", ExitCode: "0:0",
			Submit: ago(time.Minute), Eligible: acctAt.Add(time.Minute)},
	}}
	cases := []struct{ args, want string }{
		{"-n -P -o JobID,State,ExitCode", "20|PREEMPTED|0:0\n20.batch|CANCELLED|0:15\n"},
		{"-n -P -o JobID,State -j 20", "20|PENDING\n"},
		{"-n -P -o JobID,State -D -X", "20|PREEMPTED\n"},
		{"-n -P -o JobID,State -D -j 20", "20|PREEMPTED\n20.batch|CANCELLED\n20|PENDING\n"},
		{"-n -P -o JobID,State -X -E now+2minutes", "20|PENDING\n"},
	}
	checkSacct(t, res, cases)
}

// TestSacctSuspendedTime: Elapsed (and CPUTime) leave out the time the
// run spent suspended, shown as Suspended. Oracle: a 4-CPU job started
// 16:37:15, suspended 60 s by a gang preemption and cancelled 16:40:10:
// Elapsed 00:01:55, ElapsedRaw 115, Suspended 00:01:00, CPUTimeRAW 460,
// and the same on its batch step.
func TestSacctSuspendedTime(t *testing.T) {
	start := time.Date(2026, 11, 26, 16, 37, 15, 0, time.UTC)
	res := api.AcctResponse{Now: start.Add(time.Hour), Cluster: "demo", Records: []api.AcctRecord{
		{JobID: 1, ArrayTaskID: -1, State: "CANCELLED by 0", ExitCode: "0:0", Submit: start, Eligible: start,
			Start: start, End: start.Add(175 * time.Second), AllocTRES: "billing=4,cpu=4,mem=4000M,node=1", SuspendedSec: 60},
		{JobID: 1, Step: "batch", ArrayTaskID: -1, State: "CANCELLED", ExitCode: "0:15", Submit: start,
			Start: start, End: start.Add(175 * time.Second), AllocTRES: "cpu=4,mem=4000M,node=1", SuspendedSec: 60},
	}}
	o, err := parseSacct(strings.Fields("-n -P -o JobID,Elapsed,ElapsedRaw,Suspended,CPUTimeRAW"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := RenderSacct(res, o, 0, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1|00:01:55|115|00:01:00|460\n1.batch|00:01:55|115|00:01:00|460\n"; out != want {
		t.Errorf("sacct:\n%s\nwant:\n%s", out, want)
	}
}

// TestSacctTRESByName: sacct lists AllocTRES and ReqTRES sorted by name
// (oracle, a 2-CPU job with one GPU: billing=2,cpu=2,gres/gpu=1,
// mem=2000M,node=1 in both; scontrol keeps Slurm's TRES order).
func TestSacctTRESByName(t *testing.T) {
	tr := "cpu=2,mem=2000M,node=1,billing=2,gres/gpu=1"
	res := api.AcctResponse{Now: acctAt, Records: []api.AcctRecord{{JobID: 8, ArrayTaskID: -1, State: "COMPLETED",
		Submit: ago(time.Minute), Eligible: ago(time.Minute), Start: ago(time.Minute), End: acctAt, AllocTRES: tr, ReqTRES: tr}}}
	o, err := parseSacct(strings.Fields("-X -n -P -o AllocTRES,ReqTRES"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := RenderSacct(res, o, 0, time.UTC)
	if want := "billing=2,cpu=2,gres/gpu=1,mem=2000M,node=1|billing=2,cpu=2,gres/gpu=1,mem=2000M,node=1\n"; out != want {
		t.Errorf("sacct: %q, want %q", out, want)
	}
}

// TestSacctRunsInSubmitOrder: records are listed by submit time, each
// run followed by its steps. Oracle (sacct -D -X): jobs 1-9, then the
// second run of job 1 (submitted at its requeue), then job 10.
func TestSacctRunsInSubmitOrder(t *testing.T) {
	rec := func(id uint32, restart int, step string, sub time.Time) api.AcctRecord {
		return api.AcctRecord{JobID: id, Restart: restart, Step: step, ArrayTaskID: -1, State: "COMPLETED",
			Submit: sub, Eligible: sub, Start: sub, End: sub.Add(time.Second)}
	}
	res := api.AcctResponse{Now: acctAt, Records: []api.AcctRecord{
		rec(1, 0, "", ago(30*time.Minute)), rec(1, 0, "batch", ago(30*time.Minute)),
		rec(1, 1, "", ago(10*time.Minute)), rec(1, 1, "batch", ago(9*time.Minute)),
		rec(9, 0, "", ago(20*time.Minute)),
		rec(10, 0, "", ago(5*time.Minute)), rec(10, 0, "batch", ago(5*time.Minute)),
	}}
	o, err := parseSacct(strings.Fields("-D -n -P -o JobID"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := RenderSacct(res, o, 0, time.UTC)
	if want := "1\n1.batch\n9\n1\n1.batch\n10\n10.batch\n"; out != want {
		t.Errorf("sacct -D:\n%s\nwant:\n%s", out, want)
	}
}

// TestSacctOracleSelection: record selection, order and layout as the
// oracle printed them (test/oracle scenarios end-states, array-accounting,
// sacct-options).
func TestSacctOracleSelection(t *testing.T) {
	rec := func(id uint32, name, state, exit string, elig, start, end time.Time) api.AcctRecord {
		return api.AcctRecord{JobID: id, ArrayTaskID: -1, Name: name, User: "alice", UID: 1001, State: state,
			ExitCode: exit, Submit: ago(10 * time.Minute), Eligible: elig, Start: start, End: end}
	}
	task := func(id uint32, task int32, exit string) api.AcctRecord {
		r := rec(id, "arr", "FAILED", exit, ago(20*time.Minute), ago(19*time.Minute), ago(19*time.Minute))
		r.Submit, r.ArrayJobID, r.ArrayTaskID = ago(20*time.Minute), 1, task
		if exit == "0:0" {
			r.State = "COMPLETED"
		}
		return r
	}
	res := api.AcctResponse{Now: acctAt, Records: []api.AcctRecord{
		task(1, 3, "3:0"), task(2, 0, "0:0"), task(3, 1, "1:0"), task(4, 2, "2:0"),
		rec(5, "done", "COMPLETED", "0:0", ago(10*time.Minute), ago(9*time.Minute), ago(8*time.Minute)),
		rec(6, "run", "CANCELLED by 1001", "0:0", ago(10*time.Minute), ago(9*time.Minute), ago(time.Minute)),
		// held, then cancelled: never eligible.
		rec(7, "held", "CANCELLED by 1001", "0:0", time.Time{}, time.Time{}, ago(time.Minute)),
		rec(8, "long", "RUNNING", "0:0", ago(10*time.Minute), ago(9*time.Minute), time.Time{}),
	}}
	cases := []struct{ args, want string }{
		// Array tasks by task id, though 1_3 kept the array's id 1.
		{"-X -n -P -o jobid,jobidraw -j 1", "1_0|2\n1_1|3\n1_2|4\n1_3|1\n"},
		// A job never eligible is in no time window, only in -j.
		{"-X -n -P -o jobid -S now-1hour", "1_0\n1_1\n1_2\n1_3\n5\n6\n8\n"},
		{"-X -n -P -o jobid,state -j 7", "7|CANCELLED by 1001\n"},
		// -s without -E: the window ends at its start.
		{"-X -n -P -o jobid -s CD,F,CA -S now-1hour", ""},
		{"-X -n -P -o jobid -s CA -S now-1hour -E now", "6\n7\n"},
		{"-X -n -P -o jobid -s R -S now-2minutes", "6\n8\n"},
		{"-X -n -P -o jobid -s R", "8\n"},
		// A width's sign decides the justification, JobID's too.
		{"-X -n -o jobid%3,jobname%-6,state%12 -j 5", "  5 done      COMPLETED \n"},
		{"-X -n -P --delimiter=: -o jobid,state -j 5", "5:COMPLETED\n"},
		{"-X -o jobid,derivedexitcode -j 6", "JobID        DerivedExitCode \n------------ --------------- \n6                        0:0 \n"},
	}
	checkSacct(t, res, cases)
}

// TestSacctNTasks: NTasks is blank on a job's record and the task count
// on its steps (oracle, sbatch -N2 -n4 with `srun -l echo hi` and
// `srun -n1 ...`: 1 blank, 1.batch 1, 1.0 4, 1.1 1).
func TestSacctNTasks(t *testing.T) {
	rec := func(step string, n int) api.AcctRecord {
		return api.AcctRecord{JobID: 1, Step: step, ArrayTaskID: -1, State: "COMPLETED", NTasks: n,
			Submit: ago(time.Minute), Eligible: ago(time.Minute), Start: ago(time.Minute), End: acctAt}
	}
	res := api.AcctResponse{Now: acctAt, Records: []api.AcctRecord{rec("", 0), rec("batch", 1), rec("0", 4), rec("1", 1)}}
	o, err := parseSacct(strings.Fields("-n -j 1 -o jobid,ntasks"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := RenderSacct(res, o, 0, time.UTC)
	if want := "1                     \n1.batch             1 \n1.0                 4 \n1.1                 1 \n"; out != want {
		t.Errorf("sacct:\n%q\nwant:\n%q", out, want)
	}
}

// checkSacct renders res with each case's sacct arguments and compares
// the output with the case's.
func checkSacct(t *testing.T, res api.AcctResponse, cases []struct{ args, want string }) {
	t.Helper()
	for _, c := range cases {
		o, err := parseSacct(strings.Fields(c.args))
		if err != nil {
			t.Fatalf("%s: %v", c.args, err)
		}
		out, err := RenderSacct(res, o, 0, time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", c.args, err)
		}
		if out != c.want {
			t.Errorf("sacct %s:\n%s\nwant:\n%s", c.args, out, c.want)
		}
	}
}

// TestSacctJobFilters: -q, -g/--gid/--group, -N and -k/-K select job
// records (and their steps) by QOS, group, node and time limit.
func TestSacctJobFilters(t *testing.T) {
	res := acctFixture()
	res.Records[5].QOS, res.Records[5].NodeList, res.Records[5].TimeLimitSec = "high", "gpu[03-04]", 7200
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-q", "HIGH"}, "12\n"},
		{[]string{"--gid=1003"}, "10\n"},
		{[]string{"-N", "gpu04"}, "12\n"},
		{[]string{"--nodelist=gpu[01-02]"}, "10\n11\n11.0\n14_2\n"},
		{[]string{"-k", "1:30:00"}, "12\n"},
		{[]string{"--timelimit-max=01:00:00", "-u", "bob"}, "13\n"},
	} {
		o, err := parseSacct(append([]string{"-a", "-n", "-o", "jobid", "-S", "2026-03-10T00:00:00"}, c.args...))
		if err != nil {
			t.Fatal(err)
		}
		out, err := RenderSacct(res, o, 0, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(strings.Fields(out), "\n") + "\n"; got != c.want {
			t.Errorf("sacct %v: got %q, want %q", c.args, got, c.want)
		}
	}
}

// TestSacctTruncate: with -T a run is cut to the -S/-E window, so its
// Start, End and Elapsed count only the window's share.
func TestSacctTruncate(t *testing.T) {
	res := acctFixture()
	o, err := parseSacct([]string{"-a", "-X", "-n", "-P", "-o", "jobid,start,end,elapsed", "-j", "11", "-S", "2026-03-10T11:16:00", "-E", "2026-03-10T11:18:00", "-T"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := RenderSacct(res, o, 0, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if want := "11|2026-03-10T11:16:00|2026-03-10T11:18:00|00:02:00\n"; out != want {
		t.Errorf("sacct -T: got %q, want %q", out, want)
	}
}
