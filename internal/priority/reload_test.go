package priority

import (
	"strings"
	"testing"
)

// sshareRows renders `sshare -a -o <fair-share columns> -P -n`.
func sshareRows(t *testing.T, tr *Tree, cfg *Config) string {
	t.Helper()
	out, err := FormatSshare(tr, cfg, SshareOptions{All: true, Parsable2: true, NoHeader: true,
		Format: []string{"Account", "User", "RawShares", "NormShares", "NormUsage", "EffectvUsage", "FairShare", "LevelFS"}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestContinueFromKeepsFactorsUntilThePass: after `sacctmgr add user`,
// Slurm renormalises the shares at once but the fair-share factors are
// those of the last PriorityCalcPeriod pass; the new association shows
// FairShare 0, LevelFS 0 and an empty NormUsage until the next pass.
// The numbers are the oracle's (Slurm 24.11): research(10){alice 2, bob 1},
// physics(30){dave}, alice charged, then charlie (1) added to research.
func TestContinueFromKeepsFactorsUntilThePass(t *testing.T) {
	cfg := DefaultConfig()
	build := func(withCharlie bool) *Tree {
		kids := []node{user("alice", 2), user("bob", 1)}
		if withCharlie {
			kids = append(kids, user("charlie", 1))
		}
		return buildTree(t, user("root", 1), account("physics", 30, user("dave", 1)), account("research", 10, kids...))
	}
	old := build(false)
	alice, _ := old.Lookup("research", "alice")
	addUsage(old, alice, 1695)
	old.Recompute(&cfg)

	tr := build(true)
	tr.ContinueFrom(old, &cfg)
	checkRows(t, "after sacctmgr add user", sshareRows(t, tr, &cfg), []string{
		"  research|alice|2|0.500000|1.000000|1.000000|0.250000|0.666667",
		"  research|bob|1|0.250000|0.000000|0.000000|0.500000|inf",
		"  research|charlie|1|0.250000||0.000000|0.000000|0.000000",
	})
	if c, _ := tr.Lookup("research", "charlie"); tr.hot[c].fairShare != 0 {
		t.Errorf("charlie's job fair-share factor %v before the pass, want 0", tr.hot[c].fairShare)
	}
	if u := assocOf(t, tr, "research", "alice").UsageRaw; u != 1695 {
		t.Errorf("alice's usage %v after the reload, want 1695 carried over", u)
	}

	tr.Recompute(&cfg) // the next PriorityCalcPeriod pass
	checkRows(t, "after the pass", sshareRows(t, tr, &cfg), []string{
		"  research|alice|2|0.500000|1.000000|1.000000|0.200000|0.500000",
		"  research|bob|1|0.250000|0.000000|0.000000|0.600000|inf",
		"  research|charlie|1|0.250000|0.000000|0.000000|0.600000|inf",
	})
}

func checkRows(t *testing.T, when, out string, rows []string) {
	t.Helper()
	for _, row := range rows {
		if !strings.Contains(out, row+"\n") {
			t.Errorf("%s: sshare lacks %q:\n%s", when, row, out)
		}
	}
}
