package priority

import (
	"math"
	"testing"
)

// S2 (SCENARIOS.md): NormShares and Fair Tree on the qos-demo tree.
func TestS2NormSharesAndFairTree(t *testing.T) {
	tr := qosDemo(t)
	cfg := DefaultConfig()
	tr.Recompute(&cfg)
	before := []struct {
		account, user string
		norm          string
	}{
		{"batch", "", "0.166113"},
		{"research", "", "0.830565"},
		{"root", "root", "0.001661"},
		{"pcdefault", "", "0.001661"},
		{"research", "alice", "0.500000"},
		{"research", "bob", "0.500000"},
		{"batch", "charlie", "1.000000"},
	}
	for _, c := range before {
		a := assocOf(t, tr, c.account, c.user)
		t.Logf("before usage: %-10s %-8s NormShares %s LevelFS %v", c.account, c.user, f6(a.NormShares), a.LevelFS)
		if got := f6(a.NormShares); got != c.norm {
			t.Errorf("%s/%s NormShares = %s, want %s", c.account, c.user, got, c.norm)
		}
	}
	for _, i := range tr.Order()[1:] {
		if a := &tr.Assocs[i]; !math.IsInf(a.LevelFS, 1) {
			t.Errorf("%s/%s LevelFS = %v before any usage, want inf", a.Account, a.User, a.LevelFS)
		}
	}

	bob, _ := tr.Lookup("research", "bob")
	addUsage(tr, bob, 47)
	tr.Recompute(&cfg)
	after := []struct {
		account, user                  string
		raw                            float64
		norm, normUse, effUse, levelFS string
		fairShare                      string
	}{
		{"research", "", 47, "0.830565", "1.000000", "1.000000", "0.830565", ""},
		{"research", "bob", 47, "0.500000", "1.000000", "1.000000", "0.500000", "0.166667"},
		{"research", "alice", 0, "0.500000", "0.000000", "0.000000", "+Inf", "0.333333"},
		{"root", "root", 0, "0.001661", "0.000000", "0.000000", "+Inf", "1.000000"},
		{"batch", "charlie", 0, "1.000000", "0.000000", "0.000000", "+Inf", "1.000000"},
	}
	for _, c := range after {
		a := assocOf(t, tr, c.account, c.user)
		lfs := f6(a.LevelFS)
		if math.IsInf(a.LevelFS, 1) {
			lfs = "+Inf"
		}
		t.Logf("after bob's 47: %-9s %-6s RawUsage %v NormShares %s NormUsage %s EffectvUsage %s LevelFS %s FairShare %s",
			c.account, c.user, a.UsageRaw, f6(a.NormShares), f6(a.NormUsage), f6(a.EffectvUsage), lfs, f6(a.FairShare))
		if a.UsageRaw != c.raw || f6(a.NormShares) != c.norm || f6(a.NormUsage) != c.normUse ||
			f6(a.EffectvUsage) != c.effUse || lfs != c.levelFS {
			t.Errorf("%s/%s: got raw %v norm %s normUse %s eff %s lfs %s", c.account, c.user,
				a.UsageRaw, f6(a.NormShares), f6(a.NormUsage), f6(a.EffectvUsage), lfs)
		}
		if c.fairShare != "" && f6(a.FairShare) != c.fairShare {
			t.Errorf("%s/%s FairShare = %s, want %s", c.account, c.user, f6(a.FairShare), c.fairShare)
		}
	}
}

// Fair Tree ranks every user of a higher-LevelFS account above every user
// of a lower sibling account, whatever the users' own LevelFS.
func TestFairTreeAccountsOutrankWholesale(t *testing.T) {
	tr := buildTree(t,
		account("a", 1, user("a1", 1), user("a2", 1)),
		account("b", 1, user("b1", 1), user("b2", 1)),
	)
	ia1, _ := tr.Lookup("a", "a1")
	ib1, _ := tr.Lookup("b", "b1")
	ib2, _ := tr.Lookup("b", "b2")
	addUsage(tr, ia1, 100) // a used 100: a1 alone
	addUsage(tr, ib1, 10)  // b used 20, split evenly
	addUsage(tr, ib2, 10)
	cfg := DefaultConfig()
	tr.Recompute(&cfg)
	want := map[string]float64{"b/b1": 1, "b/b2": 1, "a/a2": 0.5, "a/a1": 0.25}
	for k, w := range want {
		acc, usr, _ := cut(k)
		a := assocOf(t, tr, acc, usr)
		t.Logf("%s LevelFS %v FairShare %f", k, a.LevelFS, a.FairShare)
		if a.FairShare != w {
			t.Errorf("%s FairShare = %v, want %v", k, a.FairShare, w)
		}
	}
}

func cut(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// Users with zero shares get LevelFS 0 and rank last; FS=parent users get
// LevelFS inf.
func TestFairTreeZeroSharesAndParent(t *testing.T) {
	tr := buildTree(t, account("a", 1, user("zero", 0), user("par", SharesParent), user("one", 1)))
	one, _ := tr.Lookup("a", "one")
	addUsage(tr, one, 5)
	cfg := DefaultConfig()
	tr.Recompute(&cfg)
	for _, c := range []struct {
		user string
		lfs  float64
		fs   float64
	}{{"par", math.Inf(1), 1}, {"one", 1, 2.0 / 3}, {"zero", 0, 1.0 / 3}} {
		a := assocOf(t, tr, "a", c.user)
		t.Logf("%s LevelFS %v FairShare %f", c.user, a.LevelFS, a.FairShare)
		if a.LevelFS != c.lfs || a.FairShare != c.fs {
			t.Errorf("%s: LevelFS %v FairShare %v, want %v %v", c.user, a.LevelFS, a.FairShare, c.lfs, c.fs)
		}
	}
}

// FS=parent accounts dissolve into their parent's level: their children
// are normalised against the grandparent's other children, their usage
// is relative to the grandparent, and they are ranked among its children.
func TestFairTreeParentAccount(t *testing.T) {
	tr := buildTree(t,
		account("top", 1,
			account("pass", SharesParent, user("u1", 3)),
			user("u2", 1)))
	u1, _ := tr.Lookup("pass", "u1")
	addUsage(tr, u1, 30)
	u2, _ := tr.Lookup("top", "u2")
	addUsage(tr, u2, 10)
	cfg := DefaultConfig()
	tr.Recompute(&cfg)
	a1 := assocOf(t, tr, "pass", "u1")
	a2 := assocOf(t, tr, "top", "u2")
	t.Logf("u1 S %f U %f LevelFS %f; u2 S %f U %f LevelFS %f", a1.NormShares, a1.EffectvUsage, a1.LevelFS,
		a2.NormShares, a2.EffectvUsage, a2.LevelFS)
	if a1.NormShares != 0.75 || a1.EffectvUsage != 0.75 || a1.LevelFS != 1 {
		t.Errorf("u1: S %v U %v LevelFS %v, want 0.75 0.75 1", a1.NormShares, a1.EffectvUsage, a1.LevelFS)
	}
	if a2.NormShares != 0.25 || a2.EffectvUsage != 0.25 {
		t.Errorf("u2: S %v U %v, want 0.25 0.25", a2.NormShares, a2.EffectvUsage)
	}
	// u1 is ranked in top's level, beside u2: equal LevelFS, a tie
	// (Slurm 24.11; see TestFairTreeParentAccountOracle).
	if a1.FairShare != 1 || a2.FairShare != 1 {
		t.Errorf("FairShare u1 %v u2 %v, want 1 1", a1.FairShare, a2.FairShare)
	}
}

// Classic fair-share (NO_FAIR_TREE): S is the product of shares along the
// path, UE mixes own and parent usage, F = 2^(-UE/S).
func TestClassicFairShare(t *testing.T) {
	tr := qosDemo(t)
	bob, _ := tr.Lookup("research", "bob")
	charlie, _ := tr.Lookup("batch", "charlie")
	addUsage(tr, bob, 60)
	addUsage(tr, charlie, 40)
	cfg := DefaultConfig()
	cfg.Flags = FlagNoFairTree
	tr.Recompute(&cfg)
	// research: S = 500/602, UE = NormUsage = 0.6.
	// bob: S = 500/602*0.5, UA = 0.6, UE = 0.6 + (0.6-0.6)*0.5 = 0.6.
	// alice: UA = 0, UE = 0 + 0.6*0.5 = 0.3.
	// charlie: S = 100/602, UE = 0.4 + (0.4-0.4)*1 = 0.4.
	sRes := 500.0 / 602
	cases := []struct {
		acc, usr string
		s, ue    float64
	}{
		{"research", "bob", sRes * 0.5, 0.6},
		{"research", "alice", sRes * 0.5, 0.3},
		{"batch", "charlie", 100.0 / 602, 0.4},
		{"research", "", sRes, 0.6},
	}
	for _, c := range cases {
		a := assocOf(t, tr, c.acc, c.usr)
		wantF := math.Exp2(-c.ue / c.s)
		t.Logf("classic %s/%s S %f UE %f F %f", c.acc, c.usr, a.NormShares, a.EffectvUsage, a.FairShare)
		if !near(a.NormShares, c.s) || !near(a.EffectvUsage, c.ue) || !near(a.FairShare, wantF) {
			t.Errorf("%s/%s: S %v UE %v F %v, want %v %v %v", c.acc, c.usr, a.NormShares, a.EffectvUsage, a.FairShare, c.s, c.ue, wantF)
		}
	}
}

// DEPTH_OBLIVIOUS: an account at its fair usage passes ratio 1 down, so a
// user at its fair usage within it gets F = 2^-1 at any depth.
func TestDepthOblivious(t *testing.T) {
	tr := buildTree(t,
		account("a", 1, account("deep", 1, user("u", 1))),
		account("b", 1, user("v", 1)),
	)
	u, _ := tr.Lookup("deep", "u")
	v, _ := tr.Lookup("b", "v")
	addUsage(tr, u, 50)
	addUsage(tr, v, 50)
	cfg := DefaultConfig()
	cfg.Flags = FlagDepthOblivious
	tr.Recompute(&cfg)
	for _, k := range []string{"deep/u", "b/v"} {
		acc, usr, _ := cut(k)
		a := assocOf(t, tr, acc, usr)
		t.Logf("depth-oblivious %s S %f UE %f F %f", k, a.NormShares, a.EffectvUsage, a.FairShare)
		if !near(a.FairShare, 0.5) {
			t.Errorf("%s FairShare = %v, want 0.5", k, a.FairShare)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Ties are exact floating equality, as in Slurm: in expect test24.4 uD2
// (40/170 ÷ 20/110) and uD3 (50/170 ÷ 25/110) are equal on paper but not
// in floating point, so they get different ranks.
func TestFairTreeTiesAreExact(t *testing.T) {
	tr := buildTree(t, account("D", 1, user("uD1", 80), user("uD2", 40), user("uD3", 50)))
	for u, use := range map[string]float64{"uD1": 65, "uD2": 20, "uD3": 25} {
		i, _ := tr.Lookup("D", u)
		addUsage(tr, i, use)
	}
	cfg := DefaultConfig()
	tr.Recompute(&cfg)
	d2, d3 := assocOf(t, tr, "D", "uD2"), assocOf(t, tr, "D", "uD3")
	t.Logf("uD2 LevelFS %.17g FairShare %f; uD3 LevelFS %.17g FairShare %f", d2.LevelFS, d2.FairShare, d3.LevelFS, d3.FairShare)
	if d2.LevelFS == d3.LevelFS || d2.FairShare == d3.FairShare {
		t.Errorf("uD2 and uD3 tied; Slurm ranks them apart")
	}
}

// TestFairTreeParentAccountOracle: under Fair Tree the users of a
// Fairshare=parent account are ranked among the users of its parent's
// level (Slurm's test24.4), not as a block. The tree, the usage ratios
// (CPUs of each user's job, run for the same time) and every expected
// value are the oracle's (Slurm 24.11, two runs): with charlie (in sub)
// busier than alice, bob (no usage) ties with sub/dave at the top of
// research's level, then alice, then charlie; with bob and charlie at
// the same LevelFS they tie, whatever the account.
func TestFairTreeParentAccountOracle(t *testing.T) {
	cols := []string{"Account", "User", "RawShares", "NormShares", "NormUsage", "EffectvUsage", "LevelFS", "FairShare"}
	for _, tc := range []struct {
		name                             string
		physicsDave, alice, bob, charlie float64
		want                             string
	}{
		{"charlie busiest", 1, 4, 0, 8, `root|||0.000000||1.000000|||
 root|root|1|0.047619|0.000000|0.000000|inf|1.000000|
 physics||10|0.476190|0.076923|0.076923|6.190476||
  physics|dave|1|1.000000|0.076923|1.000000|1.000000|0.833333|
 research||10|0.476190|0.923077|0.923077|0.515873||
  research|alice|1|0.142857|0.307692|0.333333|0.428571|0.333333|
  research|bob|2|0.285714|0.000000|0.000000|inf|0.666667|
  sub||parent|0.476190|0.615385|0.666667|||
   sub|charlie|1|0.142857|0.615385|0.666667|0.214286|0.166667|
   sub|dave|3|0.428571|0.000000|0.000000|inf|0.666667|
`},
		{"bob and charlie tie", 1, 8, 4, 2, `root|||0.000000||1.000000|||
 root|root|1|0.047619|0.000000|0.000000|inf|1.000000|
 physics||10|0.476190|0.066667|0.066667|7.142857||
  physics|dave|1|1.000000|0.066667|1.000000|1.000000|0.833333|
 research||10|0.476190|0.933333|0.933333|0.510204||
  research|alice|1|0.142857|0.533333|0.571429|0.250000|0.166667|
  research|bob|2|0.285714|0.266667|0.285714|1.000000|0.500000|
  sub||parent|0.476190|0.133333|0.142857|||
   sub|charlie|1|0.142857|0.133333|0.142857|1.000000|0.500000|
   sub|dave|3|0.428571|0.000000|0.000000|inf|0.666667|
`},
	} {
		tr := buildTree(t,
			user("root", 1),
			account("physics", 10, user("dave", 1)),
			account("research", 10, user("alice", 1), user("bob", 2),
				account("sub", SharesParent, user("charlie", 1), user("dave", 3))))
		for _, u := range []struct {
			account, user string
			cpus          float64
		}{{"physics", "dave", tc.physicsDave}, {"research", "alice", tc.alice}, {"research", "bob", tc.bob}, {"sub", "charlie", tc.charlie}} {
			i, _ := tr.Lookup(u.account, u.user)
			addUsage(tr, i, 60*u.cpus)
		}
		cfg := DefaultConfig()
		tr.Recompute(&cfg)
		out, err := FormatSshare(tr, &cfg, SshareOptions{All: true, Parsable: true, NoHeader: true, Format: cols})
		if err != nil {
			t.Fatal(err)
		}
		if out != tc.want {
			t.Errorf("%s: sshare:\n%s\nwant (oracle):\n%s", tc.name, out, tc.want)
		}
	}
}
