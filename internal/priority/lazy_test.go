package priority

import (
	"fmt"
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
	defer keepEveryLevel()()
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

// keepEveryLevel lowers keptMin so that every level with two siblings is
// kept (kept.go); the returned function restores it.
func keepEveryLevel() func() {
	old := keptMin
	keptMin = 2
	return func() { keptMin = old }
}

// A wide level, as SDSC-SP2's 158 accounts under root: across many decays
// and a few charges at a time, the kept levels (kept.go) give every user
// the full pass's FairShare bit for bit, and the kept path does run.
func TestPropertyKeptLevelMatchesFullPass(t *testing.T) {
	kept := 0
	rapid.Check(t, func(rt *rapid.T) {
		got, want, cfg, both := widePair(rt)
		users := userIndexes(want)
		for step := rapid.IntRange(1, 60).Draw(rt, "steps"); step > 0; step-- {
			secs := float64(rapid.IntRange(1, 3000).Draw(rt, "decay"))
			both(func(tr *Tree) { tr.Decay(&cfg, secs) })
			for n := rapid.IntRange(0, 4).Draw(rt, "charges"); n > 0; n-- {
				j := RunningJob{Assoc: rapid.SampledFrom(users).Draw(rt, "job"), Start: t0, Billing: nearBilling(rt)}
				secs := time.Duration(rapid.IntRange(1, 600).Draw(rt, "secs"))
				both(func(tr *Tree) { tr.Charge(&cfg, &j, t0, t0.Add(secs*time.Second)) })
			}
			got.DeferFairShare(&cfg)
			want.Recompute(&cfg)
			before := keptPreps(got)
			for _, i := range rapid.Permutation(users).Draw(rt, "asked") {
				if g, w := got.fairShareOf(i), want.Assocs[i].FairShare; math.Float64bits(g) != math.Float64bits(w) {
					rt.Fatalf("%s/%s: deferred FairShare %v, a full pass gives %v", want.Assocs[i].Account, want.Assocs[i].User, g, w)
				}
			}
			kept += keptPreps(got) - before
		}
	})
	t.Logf("kept preps %d", kept)
	if kept == 0 {
		t.Fatal("no level was prepared from its certificate: the test does not reach kept.go")
	}
}

// keptPreps counts the levels prepared by prepKept at the current
// generation.
func keptPreps(tr *Tree) int {
	n := 0
	for p, s := range tr.flat.staleKeys {
		if s && tr.flat.levelGen[p] == tr.flat.gen {
			n++
		}
	}
	return n
}

// nearBilling draws a billing from a few values and their neighbours a
// few units in the last place apart, so that two accounts' LevelFS come within the rounding
// of many decays of each other (ties and near ties, which kept levels
// must leave to the full computation).
func nearBilling(rt *rapid.T) float64 {
	b := float64(rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(rt, "billing"))
	return b * (1 + float64(rapid.IntRange(0, 3).Draw(rt, "nudge"))*0x1p-51)
}

// widePair is packedPair on a tree of 40 accounts under root, one or two
// users each, with distinct usages.
func widePair(rt *rapid.T) (got, want *Tree, cfg Config, both func(func(*Tree))) {
	got = NewTree()
	cfg = DefaultConfig()
	for a := 0; a < 40; a++ {
		name := fmt.Sprintf("acc%d", a)
		if _, err := got.AddAccount(name, "root", rapid.SampledFrom([]uint32{1, 2, 3, 5, 7}).Draw(rt, "shares")); err != nil {
			rt.Fatal(err)
		}
		for u := rapid.IntRange(1, 2).Draw(rt, "users"); u > 0; u-- {
			i, err := got.AddUser(fmt.Sprintf("u%d_%d", a, u), name, 1)
			if err != nil {
				rt.Fatal(err)
			}
			if h := rapid.IntRange(0, 200).Draw(rt, "minutes"); h > 0 {
				j := RunningJob{Assoc: i, Start: t0, Billing: nearBilling(rt)}
				got.Charge(&cfg, &j, t0, t0.Add(time.Duration(h)*time.Minute))
			}
		}
	}
	want = cloneTree(got)
	got.PackUsage()
	got.Recompute(&cfg)
	want.Recompute(&cfg)
	return got, want, cfg, func(f func(*Tree)) { f(got); f(want) }
}
