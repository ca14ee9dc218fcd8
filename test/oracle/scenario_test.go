package oracle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseScenario(t *testing.T) {
	text := `# Title here
# more
conf PreemptMode=SUSPEND,GANG

$ sacctmgr -i add account a
alice$ sbatch --wrap 'sleep 1'
sleep 2.5
wait 1 RUNNING
wait 2 gone 90
sync
@sort
@mask durations numbers
bob$ squeue | cat
`
	sc, err := ParseScenario("x", text)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Title != "Title here" || len(sc.Conf) != 1 || sc.Conf[0] != "PreemptMode=SUSPEND,GANG" {
		t.Fatalf("title/conf: %+v", sc)
	}
	want := []Step{
		{Line: 5, Kind: Run, User: "root", Cmd: "sacctmgr -i add account a"},
		{Line: 6, Kind: Run, User: "alice", Cmd: "sbatch --wrap 'sleep 1'"},
		{Line: 7, Kind: Sleep, Dur: 2500 * time.Millisecond},
		{Line: 8, Kind: Wait, JobID: "1", State: "RUNNING", Dur: 60 * time.Second},
		{Line: 9, Kind: Wait, JobID: "2", State: "gone", Dur: 90 * time.Second},
		{Line: 10, Kind: Sync},
		{Line: 13, Kind: Run, User: "bob", Cmd: "squeue | cat", Masks: []string{"durations", "numbers"}, Sort: true},
	}
	if len(sc.Steps) != len(want) {
		t.Fatalf("%d steps, want %d: %+v", len(sc.Steps), len(want), sc.Steps)
	}
	for i, w := range want {
		g := sc.Steps[i]
		if g.Line != w.Line || g.Kind != w.Kind || g.User != w.User || g.Cmd != w.Cmd || g.Dur != w.Dur ||
			g.JobID != w.JobID || g.State != w.State || g.Sort != w.Sort || strings.Join(g.Masks, ",") != strings.Join(w.Masks, ",") {
			t.Errorf("step %d: got %+v, want %+v", i, g, w)
		}
	}
}

// TestParseRestSteps checks the rest step: user, method, path and the
// body after it, with the @json view of the line before.
func TestParseRestSteps(t *testing.T) {
	sc, err := ParseScenario("x", `# rest
@json jobs[].job_id
rest alice GET /slurm/v0.0.42/jobs
rest bob POST /slurm/v0.0.42/job/submit {"script": "#!/bin/sh\ntrue", "job": {"current_working_directory": "@STATE@/jobs"}}
$ squeue
`)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.REST() {
		t.Error("REST() = false")
	}
	get, post := sc.Steps[0], sc.Steps[1]
	if get.Kind != Rest || get.User != "alice" || get.Method != "GET" || get.Path != "/slurm/v0.0.42/jobs" || get.Body != "" ||
		!get.JSON || strings.Join(get.JSONPaths, " ") != "jobs[].job_id" || !get.Printed() {
		t.Errorf("GET step: %+v", get)
	}
	if post.Method != "POST" || post.Body != `{"script": "#!/bin/sh\ntrue", "job": {"current_working_directory": "@STATE@/jobs"}}` || post.JSON {
		t.Errorf("POST step: %+v", post)
	}
	if got := get.String(); got != "[alice] rest GET /slurm/v0.0.42/jobs" {
		t.Errorf("String() = %q", got)
	}
}

func TestParseScenarioErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "no steps"},
		{"$ true\nconf A=B\n", "x.scn:2: conf lines come before the first step"},
		{"sleep forever\n", "x.scn:1: sleep:"},
		{"wait x RUNNING\n", "x.scn:1: wait: bad job id"},
		{"wait 1 running\n", "x.scn:1: wait: bad state"},
		{"@mask colours\n$ true\n", `x.scn:1: unknown mask "colours"`},
		{"$ true\n@sort\n", "applies to no command"},
		{"squeue\n", "x.scn:1: not a step"},
		{"rest alice FETCH /slurm/v0.0.42/ping\n", "x.scn:1: rest: want USER METHOD /PATH"},
		{"rest alice GET slurm\n", "x.scn:1: rest: want USER METHOD /PATH"},
	} {
		_, err := ParseScenario("x", c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.text, err, c.want)
		}
	}
}

func TestGoldenRoundTrip(t *testing.T) {
	rec := &Recording{Scenario: "s", Hash: "abc", Source: "slurm 24.11.5", Results: []Result{
		{Step: "[root] squeue", Stdout: "a\n\nb\n", Stderr: "", Exit: 0},
		{Step: "[alice] printf x", Stdout: "x", Stderr: "err\n", Exit: 3},
		{Step: "wait 1 RUNNING", Exit: 1, Stderr: "not reached\n"},
	}}
	path := filepath.Join(t.TempDir(), "s.golden")
	if err := os.WriteFile(path, []byte(rec.Format()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ParseRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Scenario != "s" || got.Hash != "abc" || got.Source != rec.Source || len(got.Results) != 3 {
		t.Fatalf("header: %+v", got)
	}
	for i, r := range rec.Results {
		if got.Results[i] != r {
			t.Errorf("result %d: got %+v, want %+v", i, got.Results[i], r)
		}
	}
}

func TestMergeConfFollowsOracleRules(t *testing.T) {
	base := "# c\nPreemptMode=REQUEUE\nNodeName=n1 CPUs=8\nNodeName=n2 CPUs=8\nPartitionName=main Nodes=ALL\nKillWait=5\n"
	got := MergeConf(base, []string{"preemptmode=SUSPEND,GANG", "NodeName=n2 CPUs=4", "PartitionName=a Nodes=ALL", "MinJobAge=10"})
	want := "# c\nNodeName=n1 CPUs=8\nKillWait=5\n# ---- from the scenario\npreemptmode=SUSPEND,GANG\nNodeName=n2 CPUs=4\nPartitionName=a Nodes=ALL\nMinJobAge=10\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestWithNodes(t *testing.T) {
	base := "A=1\nNodeName=n1 NodeHostname=n1 Port=18001 CPUs=8\nNodeName=n2 NodeHostname=n2 Port=18002 CPUs=8\nB=2\n"
	want := "A=1\nNodeName=n1 NodeHostname=n1 Port=18001 CPUs=8\nNodeName=n2 NodeHostname=n2 Port=18002 CPUs=8\nNodeName=n3 NodeHostname=n3 Port=18003 CPUs=8\nB=2\n"
	if got := WithNodes(base, 3); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := WithNodes(base, 1); strings.Contains(got, "n2") {
		t.Errorf("one node kept n2:\n%s", got)
	}
}

func TestNormalize(t *testing.T) {
	n := Normalizer{State: "/var/tmp/slurm-oracle", Host: "box"}
	in := "UserId=alice(1001) GroupId=alice(1001) SubmitTime=2026-11-26T16:40:01 AllocNode:Sid=box:1234 StdOut=/var/tmp/slurm-oracle/jobs/slurm-1.out on box 0:05 1-02:03:04\n"
	want := "UserId=alice(<ID>) GroupId=alice(<ID>) SubmitTime=<TS> AllocNode:Sid=<ALLOC> StdOut=<STATE>/jobs/slurm-1.out on <HOST> 0:05 1-02:03:04\n"
	if got := n.Apply(Step{}, in); got != want {
		t.Errorf("plain:\n got %q\nwant %q", got, want)
	}
	if got := n.Apply(Step{Masks: []string{"durations"}}, "Thu Nov 26 22:40:38 2026\nFri Dec  4 01:02:03 2026\n"); got != "<CTIME>\n<CTIME>\n" {
		t.Errorf("ctime stamps (squeue -l on two days): %q", got)
	}
	if got := n.Apply(Step{Masks: []string{"durations"}}, "R 0:05 1-02:03:04 12:00:00\n"); got != "R <DUR> <DUR> <DUR>\n" {
		t.Errorf("durations: %q", got)
	}
	if got := n.Apply(Step{}, `"slurmdb_qos_remove(0x7fa2ac0046a0) failed"`); got != `"slurmdb_qos_remove() failed"` {
		t.Errorf("slurmrestd's pointer arguments: %q", got)
	}
	if got := sortLines("b\na\n"); got != "a\nb\n" {
		t.Errorf("sortLines: %q", got)
	}
}

// FuzzParseScenario: any text gives a scenario or an error naming a line,
// never a panic.
func FuzzParseScenario(f *testing.F) {
	f.Add("# t\nconf A=B\n$ true\nsleep 1\nwait 1 RUNNING 5\n@sort\n@mask durations\nalice$ squeue\n")
	f.Add("wait 1_2 gone\n")
	f.Fuzz(func(t *testing.T, text string) {
		sc, err := ParseScenario("f", text)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.scn") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if len(sc.Steps) == 0 {
			t.Fatal("a scenario without steps was accepted")
		}
	})
}

// FuzzParseRecording: a damaged golden file is an error, never a panic.
func FuzzParseRecording(f *testing.F) {
	f.Add(">>> [root] x\n[stdout]\n| a\n[no newline at end]\n[stderr]\n[exit 0]\n")
	f.Add("[no newline at end]\n")
	f.Fuzz(func(t *testing.T, text string) {
		path := filepath.Join(t.TempDir(), "g")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = ParseRecording(path)
	})
}

// TestUntilTick: a sync step ends 50 ms past the next whole second.
func TestUntilTick(t *testing.T) {
	base := time.Date(2026, 11, 26, 10, 0, 7, 0, time.UTC)
	for _, c := range []struct{ at, want time.Duration }{
		{0, 1050 * time.Millisecond},
		{20 * time.Millisecond, 1030 * time.Millisecond},
		{990 * time.Millisecond, 60 * time.Millisecond},
	} {
		if got := untilTick(base.Add(c.at)); got != c.want {
			t.Errorf("at +%s: sleeps %s, want %s", c.at, got, c.want)
		}
	}
}

func TestFirstDifference(t *testing.T) {
	for _, c := range []struct{ want, got, say string }{
		{"a\nb\n", "a\nc\n", `line 2: Slurm "b", Sluice "c"`},
		{"a\n", "a\nx\n", `line 2: Slurm "", Sluice "x"`},
		{"a", "a", "none"},
	} {
		if got := firstDifference(c.want, c.got); got != c.say {
			t.Errorf("firstDifference(%q, %q) = %s, want %s", c.want, c.got, got, c.say)
		}
	}
}
