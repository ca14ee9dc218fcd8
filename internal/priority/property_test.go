package priority

import (
	"fmt"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// randomTree draws a tree of up to 3 levels of accounts with users, random
// shares (some FS=parent, some 0) and random usage charged through Charge.
func randomTree(t *rapid.T) *Tree {
	tr := NewTree()
	cfg := DefaultConfig()
	nAcc := rapid.IntRange(1, 6).Draw(t, "accounts")
	accounts := []string{"root"}
	for a := 0; a < nAcc; a++ {
		parent := rapid.SampledFrom(accounts).Draw(t, "parent")
		name := fmt.Sprintf("acc%d", a)
		shares := rapid.SampledFrom([]uint32{0, 1, 2, 5, 40, SharesParent}).Draw(t, "ashares")
		if _, err := tr.AddAccount(name, parent, shares); err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, name)
	}
	nUsers := rapid.IntRange(1, 12).Draw(t, "users")
	for u := 0; u < nUsers; u++ {
		acc := rapid.SampledFrom(accounts).Draw(t, "account")
		i, err := tr.AddUser(fmt.Sprintf("u%d", u), acc, rapid.SampledFrom([]uint32{0, 1, 3, SharesParent}).Draw(t, "ushares"))
		if err != nil {
			t.Fatal(err)
		}
		if secs := rapid.IntRange(0, 3).Draw(t, "hours"); secs > 0 {
			j := RunningJob{Assoc: i, Start: t0, Billing: float64(rapid.IntRange(1, 64).Draw(t, "cpus"))}
			tr.Charge(&cfg, &j, t0, t0.Add(time.Duration(secs)*time.Hour))
		}
	}
	return tr
}

// Fair Tree invariants: every user's FairShare is k/n for a whole k in
// [1, n]; some user has 1.0; the root's usage is the sum of its users'.
func TestPropertyFairTree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := randomTree(t)
		cfg := DefaultConfig()
		tr.Recompute(&cfg)
		n := float64(tr.UserCount())
		top, sum := 0.0, 0.0
		for i := range tr.Assocs {
			a := &tr.Assocs[i]
			if !a.IsUser() {
				if a.FairShare != 0 {
					t.Fatalf("account %s has FairShare %v", a.Account, a.FairShare)
				}
				continue
			}
			sum += a.UsageRaw
			k := a.FairShare * n
			if math.Abs(k-math.Round(k)) > 1e-9 || k < 1-1e-9 || k > n+1e-9 {
				t.Fatalf("user %s FairShare %v is not k/%v", a.User, a.FairShare, n)
			}
			top = math.Max(top, a.FairShare)
		}
		if top != 1 {
			t.Fatalf("no user has FairShare 1 (max %v)", top)
		}
		if math.Abs(sum-tr.Assocs[0].UsageRaw) > 1e-6*math.Max(1, sum) {
			t.Fatalf("root usage %v != users' %v", tr.Assocs[0].UsageRaw, sum)
		}
	})
}

// Classic and depth-oblivious factors stay in [0, 1] and never NaN.
func TestPropertyClassicBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tr := randomTree(t)
		cfg := DefaultConfig()
		cfg.Flags = rapid.SampledFrom([]Flags{FlagNoFairTree, FlagDepthOblivious}).Draw(t, "algo")
		tr.Recompute(&cfg)
		for i := range tr.Assocs {
			a := &tr.Assocs[i]
			if math.IsNaN(a.FairShare) || a.FairShare < 0 || a.FairShare > 1 || math.IsNaN(a.EffectvUsage) {
				t.Fatalf("%s/%s FairShare %v UE %v", a.Account, a.User, a.FairShare, a.EffectvUsage)
			}
		}
	})
}
