package priority

import (
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// DeferFairShare's factors, computed on demand from the levels on a
// user's path, must be bit for bit those of a full pass over the same
// usage: across decays, charges, usage resets and eager passes, with the
// users asked in any order, ties and NaN levels included (those go to the
// full pass), and the records written afterwards must be a full pass's.
func TestPropertyDeferredFairShareMatchesFullPass(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		got, want, cfg, both := packedPair(rt)
		for step := rapid.IntRange(1, 40).Draw(rt, "steps"); step > 0; step-- {
			switch k := rapid.IntRange(0, 99).Draw(rt, "event"); {
			case k < 40:
				secs := float64(rapid.IntRange(1, 100000).Draw(rt, "decay"))
				both(func(tr *Tree) { tr.Decay(&cfg, secs) })
			case k < 80:
				j := RunningJob{Assoc: rapid.IntRange(0, len(got.Assocs)-1).Draw(rt, "job"), Start: t0,
					Billing: float64(rapid.IntRange(1, 64).Draw(rt, "billing"))}
				hours := time.Duration(rapid.IntRange(1, 48).Draw(rt, "hours"))
				both(func(tr *Tree) { tr.Charge(&cfg, &j, t0, t0.Add(hours*time.Hour)) })
			case k < 83:
				both(func(tr *Tree) { tr.ResetUsage() })
			case k < 88:
				got.RecomputeFairShare(&cfg)
			}
			got.DeferFairShare(&cfg)
			want.Recompute(&cfg)
			for _, i := range rapid.Permutation(userIndexes(want)).Draw(rt, "asked") {
				if g, w := got.fairShareOf(i), want.Assocs[i].FairShare; math.Float64bits(g) != math.Float64bits(w) {
					rt.Fatalf("%s/%s: deferred FairShare %v, a full pass gives %v", want.Assocs[i].Account, want.Assocs[i].User, g, w)
				}
			}
		}
		got.syncRecords()
		for i := range want.Assocs {
			g, w := &got.Assocs[i], &want.Assocs[i]
			if math.Float64bits(g.FairShare) != math.Float64bits(w.FairShare) || !sameFloat(g.LevelFS, w.LevelFS) ||
				!sameFloat(g.EffectvUsage, w.EffectvUsage) || !sameFloat(g.NormUsage, w.NormUsage) {
				rt.Fatalf("%s/%s: records %v %v %v %v, want %v %v %v %v", w.Account, w.User, g.FairShare, g.LevelFS,
					g.EffectvUsage, g.NormUsage, w.FairShare, w.LevelFS, w.EffectvUsage, w.NormUsage)
			}
		}
	})
}

func userIndexes(t *Tree) []int {
	var out []int
	for i := range t.Assocs {
		if t.Assocs[i].IsUser() {
			out = append(out, i)
		}
	}
	return out
}

// sameFloat is bit equality, any NaN equal to any NaN.
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b
}

// While frozen, a deferred factor reads as last computed although the
// usage changed; thawed, it is the full pass's again.
func TestFreezeFairShareReadsLastComputed(t *testing.T) {
	tr := NewTree()
	cfg := DefaultConfig()
	for _, a := range []string{"a", "b"} {
		if _, err := tr.AddAccount(a, "root", 1); err != nil {
			t.Fatal(err)
		}
	}
	ua, _ := tr.AddUser("ua", "a", 1)
	ub, _ := tr.AddUser("ub", "b", 1)
	tr.PackUsage()
	tr.Recompute(&cfg)
	charge := func(i int) {
		j := RunningJob{Assoc: i, Start: t0, Billing: 1}
		tr.Charge(&cfg, &j, t0, t0.Add(time.Hour))
	}
	charge(ua) // ua used more: ub ranks first
	tr.DeferFairShare(&cfg)
	before := tr.fairShareOf(ua)
	charge(ub)
	charge(ub) // now ub used more
	tr.FreezeFairShare(true)
	if got := tr.fairShareOf(ua); got != before {
		t.Fatalf("frozen: ua's factor %v, want the last computed %v", got, before)
	}
	tr.FreezeFairShare(false)
	after := tr.fairShareOf(ua)
	tr.SyncUsage()
	want := cloneTree(tr)
	want.Recompute(&cfg)
	if after != want.Assocs[ua].FairShare || after == before {
		t.Fatalf("thawed: ua's factor %v, want the full pass's %v (and not %v)", after, want.Assocs[ua].FairShare, before)
	}
}

// packedPair draws a random tree and returns it packed (got) and a copy
// on the records (want), both recomputed, with a function that applies a
// change to both.
func packedPair(rt *rapid.T) (got, want *Tree, cfg Config, both func(func(*Tree))) {
	got = randomTree(rt)
	want = cloneTree(got)
	cfg = DefaultConfig()
	got.PackUsage()
	got.Recompute(&cfg)
	want.Recompute(&cfg)
	return got, want, cfg, func(f func(*Tree)) { f(got); f(want) }
}
