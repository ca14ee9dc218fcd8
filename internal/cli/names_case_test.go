package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestFilterNamesCaseInsensitive: account and QOS names are stored
// lowercase, so squeue -A/-q and sacct -A match them in any case, as in
// Slurm (squeue -A Proj lists the jobs of account proj).
func TestFilterNamesCaseInsensitive(t *testing.T) {
	squeue := func(args ...string) string {
		o, err := parseSqueue(args)
		if err != nil {
			t.Fatal(err)
		}
		out, err := RenderSqueue(queueFixture(), o)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if lower, mixed := squeue("-A", "physics", "-q", "high"), squeue("-A", "PHYSICS", "-q", "High"); mixed != lower || strings.Count(lower, "\n") < 2 {
		t.Errorf("squeue -A PHYSICS -q High:\n%s\nwant\n%s", mixed, lower)
	}
	sacct := func(args string) string {
		o, err := parseSacct(strings.Fields(args))
		if err != nil {
			t.Fatal(err)
		}
		out, err := RenderSacct(acctFixture(), o, 0, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if lower, mixed := sacct("-A physics -X"), sacct("-A Physics -X"); mixed != lower || strings.Count(lower, "\n") < 3 {
		t.Errorf("sacct -A Physics:\n%s\nwant\n%s", mixed, lower)
	}
}

// TestSacctUnstartedRecords: a job that ended without starting (failed
// at submission, cancelled while pending) has Start None, and one not
// started that gave no --time has Timelimit Partition_Limit, as Slurm
// 24.11's sacct prints them.
func TestSacctUnstartedRecords(t *testing.T) {
	sub := acctAt.Add(-time.Minute)
	failed := api.AcctRecord{JobID: 8, ArrayTaskID: -1, Name: "wrap", User: "alice", UID: 1001, Account: "research",
		Submit: sub, Eligible: sub, End: sub, State: "FAILED", ExitCode: "1:0", TimeLimitSec: api.TimePartitionLimit}
	pending := api.AcctRecord{JobID: 9, ArrayTaskID: -1, Name: "wrap", User: "alice", UID: 1001, Account: "research",
		Submit: sub, Eligible: sub, State: "PENDING", ExitCode: "0:0", TimeLimitSec: 300}
	o, err := parseSacct(strings.Fields("-X -o jobid,state,start,timelimit,timelimitraw,elapsed"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := RenderSacct(api.AcctResponse{Now: acctAt, Records: []api.AcctRecord{failed, pending}}, o, 0, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	want := `JobID             State               Start  Timelimit TimelimitR    Elapsed 
------------ ---------- ------------------- ---------- ---------- ---------- 
8                FAILED                None Partition+ Partition+   00:00:00 
9               PENDING             Unknown   00:05:00          5   00:00:00 
`
	if out != want {
		t.Errorf("sacct:\n%s\nwant\n%s", out, want)
	}
}
