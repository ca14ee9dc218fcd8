package priority

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// simWorld is the fair-share state of a trace replay such as SDSC-SP2
// under `sluice sim`: one account per group (Fairshare=1), a few users
// (Fairshare=1) under each, and a few dozen running jobs charged between
// passes. The simulator decays, charges and recomputes at every
// PriorityCalcPeriod, so this is its hottest use of the package.
type simWorld struct {
	cfg   Config
	tree  *Tree
	users []int
	runs  []RunningJob
	rng   *rand.Rand
	now   time.Time
	// fast passes use PackUsage and RecomputeFairShare, as the
	// simulator can.
	fast bool
}

func newSimWorld(tb testing.TB, accounts, usersPer, running int) *simWorld {
	w := &simWorld{cfg: DefaultConfig(), tree: NewTree(), rng: rand.New(rand.NewSource(7)), now: t0}
	for a := 0; a < accounts; a++ {
		acc := fmt.Sprintf("g%03d", a)
		if _, err := w.tree.AddAccount(acc, "root", 1); err != nil {
			tb.Fatal(err)
		}
		for u := 0; u < 1+w.rng.Intn(2*usersPer-1); u++ {
			i, err := w.tree.AddUser(fmt.Sprintf("u%04d", len(w.users)), acc, 1)
			if err != nil {
				tb.Fatal(err)
			}
			w.users = append(w.users, i)
		}
	}
	for k := 0; k < running; k++ {
		w.runs = append(w.runs, w.newJob())
	}
	w.tree.Recompute(&w.cfg)
	for k := 0; k < 200; k++ { // some history: usage on many users
		w.step()
	}
	return w
}

func (w *simWorld) newJob() RunningJob {
	return RunningJob{Assoc: w.users[w.rng.Intn(len(w.users))], Start: w.now, Billing: float64(1 + w.rng.Intn(128))}
}

// step is one pass: two jobs end and two start, usage decays over the
// elapsed seconds, the running jobs are charged, fair-share recomputed.
func (w *simWorld) step() {
	last := w.now
	w.now = w.now.Add(time.Duration(30+w.rng.Intn(300)) * time.Second)
	for k := 0; k < 2; k++ {
		w.runs[w.rng.Intn(len(w.runs))] = w.newJob()
	}
	w.tree.Decay(&w.cfg, w.now.Sub(last).Seconds())
	for k := range w.runs {
		w.tree.Charge(&w.cfg, &w.runs[k], last, w.now)
	}
	if w.fast {
		w.tree.RecomputeFairShare(&w.cfg)
		return
	}
	w.tree.Recompute(&w.cfg)
}

// BenchmarkSimPass is one simulator pass over a tree shaped like the
// SDSC-SP2 replay's (~100 accounts, ~6 users each, 30 running jobs):
// Decay, Charge and Fair Tree Recompute.
func BenchmarkSimPass(b *testing.B) {
	w := newSimWorld(b, 100, 6, 30)
	b.ReportAllocs()
	for b.Loop() {
		w.step()
	}
}

// BenchmarkSimPassFairShare is BenchmarkSimPass with RecomputeFairShare.
func BenchmarkSimPassFairShare(b *testing.B) {
	w := newSimWorld(b, 100, 6, 30)
	w.fast = true
	w.tree.PackUsage()
	w.tree.Recompute(&w.cfg)
	b.ReportAllocs()
	for b.Loop() {
		w.step()
	}
}

// BenchmarkSimPassDeferred is the simulator's own pass over a tree shaped
// like SDSC-SP2's (158 accounts under root, 1-3 users each): Decay,
// ChargeAll, DeferFairShare, then the FairShare of 8 users (those with
// pending jobs), with 5 running jobs (few accounts charged, as in that
// replay) and 30 (many), with the wide levels kept between passes
// (kept.go) and, for comparison in the same run, computed in full.
func BenchmarkSimPassDeferred(b *testing.B) {
	for _, running := range []int{5, 30} {
		for _, mode := range []struct {
			name string
			min  int
		}{{"kept", keptMin}, {"full", 1 << 30}} {
			b.Run(fmt.Sprintf("running=%d/%s", running, mode.name), func(b *testing.B) {
				defer func(old int) { keptMin = old }(keptMin)
				keptMin = mode.min
				w := newSimWorld(b, 158, 2, running)
				w.tree.PackUsage()
				w.tree.Recompute(&w.cfg)
				b.ReportAllocs()
				for b.Loop() {
					w.deferredStep()
				}
			})
		}
	}
}

// deferredStep is step as the simulator does it: ChargeAll, then
// DeferFairShare and the FairShare of 8 users.
func (w *simWorld) deferredStep() {
	last := w.now
	w.now = w.now.Add(300 * time.Second)
	for k := 0; k < 2; k++ {
		w.runs[w.rng.Intn(len(w.runs))] = w.newJob()
	}
	jobs := make([]*RunningJob, 0, 32)
	for k := range w.runs {
		jobs = append(jobs, &w.runs[k])
	}
	w.tree.Decay(&w.cfg, 300)
	w.tree.ChargeAll(&w.cfg, jobs, last, w.now)
	w.tree.DeferFairShare(&w.cfg)
	for k := 0; k < 8; k++ {
		w.tree.fairShareOf(w.users[w.rng.Intn(len(w.users))])
	}
}

// BenchmarkSimRecomputeFairShare is RecomputeFairShare alone.
func BenchmarkSimRecomputeFairShare(b *testing.B) {
	w := newSimWorld(b, 100, 6, 30)
	w.tree.Recompute(&w.cfg)
	b.ReportAllocs()
	for b.Loop() {
		w.tree.RecomputeFairShare(&w.cfg)
	}
}

// BenchmarkSimRecompute is the Recompute of that pass alone.
func BenchmarkSimRecompute(b *testing.B) {
	w := newSimWorld(b, 100, 6, 30)
	b.ReportAllocs()
	for b.Loop() {
		w.tree.Recompute(&w.cfg)
	}
}

// BenchmarkSimDecayPacked is Decay on packed usage.
func BenchmarkSimDecayPacked(b *testing.B) {
	w := newSimWorld(b, 100, 6, 30)
	w.tree.PackUsage()
	w.tree.Recompute(&w.cfg)
	b.ReportAllocs()
	for b.Loop() {
		w.tree.Decay(&w.cfg, 1)
	}
}

// BenchmarkSimDecay is the Decay of that pass alone.
func BenchmarkSimDecay(b *testing.B) {
	w := newSimWorld(b, 100, 6, 30)
	b.ReportAllocs()
	for b.Loop() {
		w.tree.Decay(&w.cfg, 1)
	}
}

// A replay that packs its usage and recomputes with RecomputeFairShare
// prints the same sshare -al (RawUsage, NormUsage, EffectvUsage,
// FairShare, LevelFS to the last digit, GrpTRESRaw) and gives every user
// the same fair-share factor as one that recomputes with Recompute, pass
// after pass.
func TestRecomputeFairShareReplaysLikeRecompute(t *testing.T) {
	full, fast := newSimWorld(t, 30, 4, 12), newSimWorld(t, 30, 4, 12)
	fast.fast = true
	fast.tree.PackUsage()
	opt := SshareOptions{All: true, Long: true, Parsable2: true, Format: []string{"Account", "User", "RawShares",
		"NormShares", "RawUsage", "NormUsage", "EffectvUsage", "FairShare", "LevelFS", "GrpTRESRaw"}}
	var cf, cq Calculator // as the simulator: Reset once, read as passes go
	cf.Reset(&full.cfg, &Cluster{}, full.tree)
	cq.Reset(&fast.cfg, &Cluster{}, fast.tree)
	for pass := 0; pass < 300; pass++ {
		full.step()
		fast.step()
		for _, u := range full.users {
			if a, b := cf.fairShare(&Job{Assoc: u}), cq.fairShare(&Job{Assoc: u}); a != b {
				t.Fatalf("pass %d: %s FairShare %v, want %v", pass, full.tree.Assocs[u].User, b, a)
			}
		}
		if pass%50 != 49 {
			continue
		}
		want, err := FormatSshare(full.tree, &full.cfg, opt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := FormatSshare(fast.tree, &fast.cfg, opt)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("pass %d: sshare differs:\n%s\nwant:\n%s", pass, got, want)
		}
	}
}
