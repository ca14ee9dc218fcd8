package cli

import (
	"strings"
	"testing"
	"time"
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
