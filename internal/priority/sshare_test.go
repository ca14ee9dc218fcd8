package priority

import (
	"strings"
	"testing"
)

// s2Tree is the qos-demo tree after bob alone consumed 47 units.
func s2Tree(t *testing.T, cfg *Config) *Tree {
	tr := qosDemo(t)
	bob, _ := tr.Lookup("research", "bob")
	addUsage(tr, bob, 47)
	tr.Recompute(cfg)
	return tr
}

// S2: `sshare -alP` header and rows, plus every other sshare mode as
// golden files.
func TestS2Sshare(t *testing.T) {
	cfg := DefaultConfig()
	fresh := qosDemo(t)
	fresh.Recompute(&cfg)
	before, err := FormatSshare(fresh, &cfg, SshareOptions{All: true, Long: true, Parsable2: true, NoHeader: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "sshare_s2_before.golden", before)
	for _, line := range strings.Split(strings.TrimSpace(before), "\n")[1:] {
		if f := strings.Split(line, "|"); f[8] != "inf" {
			t.Errorf("before usage LevelFS %q, want inf: %s", f[8], line)
		}
	}
	tr := s2Tree(t, &cfg)
	alP, err := FormatSshare(tr, &cfg, SshareOptions{All: true, Long: true, Parsable2: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "sshare_s2_alP.golden", alP)
	header := strings.SplitN(alP, "\n", 2)[0]
	if want := "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|GrpTRESMins|TRESRunMins"; header != want {
		t.Errorf("header %q, want %q", header, want)
	}
	for _, row := range []string{
		" research||500|0.830565|47|1.000000|1.000000||0.830565|",
		"  research|bob|1|0.500000|47|1.000000|1.000000|0.166667|0.500000|",
		"  research|alice|1|0.500000|0|0.000000|0.000000|0.333333|inf|",
	} {
		if !strings.Contains(alP, "\n"+row) {
			t.Errorf("sshare -alP lacks %q", row)
		}
	}
	for _, tc := range []struct {
		name string
		opt  SshareOptions
	}{
		{"sshare_s2_default.golden", SshareOptions{InvokingUser: "alice"}},
		{"sshare_s2_a.golden", SshareOptions{All: true}},
		{"sshare_s2_l.golden", SshareOptions{All: true, Long: true}},
		{"sshare_s2_p.golden", SshareOptions{All: true, Parsable: true}},
		{"sshare_s2_U.golden", SshareOptions{All: true, UsersOnly: true}},
		{"sshare_s2_A.golden", SshareOptions{All: true, Accounts: []string{"research"}}},
		{"sshare_s2_u.golden", SshareOptions{Users: []string{"bob", "charlie"}, NoHeader: true}},
		{"sshare_s2_o.golden", SshareOptions{All: true, Format: []string{"acc", "User%4", "ID", "LevelFS%-12", "GrpTRESRaw"}}},
	} {
		got, err := FormatSshare(tr, &cfg, tc.opt)
		if err != nil {
			t.Fatal(tc.name, err)
		}
		golden(t, tc.name, got)
	}
}

// Classic (NO_FAIR_TREE) long output has no LevelFS column and FS=parent
// prints "parent".
func TestSshareClassicAndParent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Flags = FlagNoFairTree
	tr := buildTree(t, account("top", 10, account("sub", SharesParent, user("u1", 1)), user("verylongusername", 1)))
	u1, _ := tr.Lookup("sub", "u1")
	addUsage(tr, u1, 3600)
	tr.Recompute(&cfg)
	got, err := FormatSshare(tr, &cfg, SshareOptions{All: true, Long: true})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "sshare_classic_l.golden", got)
	if strings.Contains(got, "LevelFS") || !strings.Contains(got, "parent") || !strings.Contains(got, "verylongu+") {
		t.Errorf("classic long output wrong:\n%s", got)
	}
	if _, err := FormatSshare(tr, &cfg, SshareOptions{Format: []string{"Bogus"}}); err == nil {
		t.Errorf("unknown field accepted")
	}
}

// TestSshareClassicAccountRows: under classic fair share (NO_FAIR_TREE)
// Slurm prints a FairShare for the root and account rows too,
// 2^(-EffectvUsage/NormShares), and the root row's NormUsage is blank
// (oracle, fairshare-classic: all usage is alice's).
func TestSshareClassicAccountRows(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Flags = FlagNoFairTree
	tr := buildTree(t, user("root", 1), account("batch", 1, user("charlie", 1)),
		account("research", 3, user("alice", 1), user("bob", 1)))
	alice, _ := tr.Lookup("research", "alice")
	addUsage(tr, alice, 3600)
	tr.Recompute(&cfg)
	got, err := FormatSshare(tr, &cfg, SshareOptions{All: true, Parsable2: true,
		Format: []string{"Account", "User", "RawShares", "NormShares", "EffectvUsage", "FairShare"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `Account|User|RawShares|NormShares|EffectvUsage|FairShare
root|||1.000000|1.000000|0.500000
 root|root|1|0.200000|0.000000|1.000000
 batch||1|0.200000|0.000000|1.000000
  batch|charlie|1|0.200000|0.000000|1.000000
 research||3|0.600000|1.000000|0.314980
  research|alice|1|0.300000|1.000000|0.099213
  research|bob|1|0.300000|0.500000|0.314980
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	long, err := FormatSshare(tr, &cfg, SshareOptions{All: true, Parsable2: true, Long: true})
	if err != nil {
		t.Fatal(err)
	}
	if root := strings.Split(long, "\n")[1]; !strings.HasPrefix(root, "root|||1.000000|3600||1.000000|0.500000|") {
		t.Errorf("root row of sshare -l: %q", root)
	}
}
