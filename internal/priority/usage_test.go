package priority

import (
	"fmt"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

const day = 24 * time.Hour

// Decay acceptance: 100 units become 50.007 after one 7-day half-life and
// 25.007 after two, whatever PriorityCalcPeriod is. Slurm decays by
// D^(seconds since last pass) with D = 1-0.693/HL; D^a·D^b = D^(a+b), so
// the product over passes is D^(total seconds) however the span is cut
// (only floating rounding differs, far below 1e-6). It is not exactly 50:
// D^HL = (1-0.693/HL)^HL ≈ e^-0.693 = 0.500073.
func TestDecayIndependentOfCalcPeriod(t *testing.T) {
	periods := []time.Duration{7 * time.Second, time.Minute, 5 * time.Minute, 13 * time.Minute, time.Hour, 86399 * time.Second, 7 * day}
	var ref [2]float64
	for k, p := range periods {
		cfg := DefaultConfig()
		cfg.CalcPeriod = p
		tr := buildTree(t, account("a", 1, user("u", 1)))
		u, _ := tr.Lookup("a", "u")
		addUsage(tr, u, 100)
		var got [2]float64
		last := t0
		for w := 1; w <= 2; w++ {
			end := t0.Add(time.Duration(w) * 7 * day)
			for now := last.Add(p); ; now = now.Add(p) {
				if now.After(end) {
					now = end // the last pass lands exactly on the half-life
				}
				tr.Pass(&cfg, nil, last, now, time.UTC)
				last = now
				if !now.Before(end) {
					break
				}
			}
			got[w-1] = tr.Assocs[u].UsageRaw
		}
		t.Logf("PriorityCalcPeriod %-9v: after 7 days %.6f (%.3f), after 14 days %.6f (%.3f)", p, got[0], got[0], got[1], got[1])
		if s := fmt.Sprintf("%.3f/%.3f", got[0], got[1]); s != "50.007/25.007" {
			t.Errorf("period %v: %s, want 50.007/25.007", p, s)
		}
		if k == 0 {
			ref = got
		} else if math.Abs(got[0]-ref[0]) > 1e-6 || math.Abs(got[1]-ref[1]) > 1e-6 {
			t.Errorf("period %v: %v differs from %v by more than 1e-6", p, got, ref)
		}
		if tr.Assocs[0].UsageRaw != tr.Assocs[u].UsageRaw {
			t.Errorf("root usage %v != user usage %v", tr.Assocs[0].UsageRaw, tr.Assocs[u].UsageRaw)
		}
	}
}

// New usage is itself decayed within its interval: run × D^run × billing ×
// UsageFactor, charged to the association chain, the QOS and the partition
// QOS (the latter without UsageFactor); a NoDecay QOS gets run × billing
// and is never decayed.
func TestChargeDecaysWithinInterval(t *testing.T) {
	cfg := DefaultConfig()
	tr := buildTree(t, account("a", 1, user("u", 1)))
	tr.AddQOS("half", 10, 0.5, false)
	nd := tr.AddQOS("nodecay", 0, 1, true)
	u, _ := tr.Lookup("a", "u")
	job := RunningJob{Assoc: u, QOS: "half", PartitionQOS: "nodecay", Start: t0, Billing: 4,
		Alloc: map[string]int64{"cpu": 4, "gres/gpu": 1}}
	tr.Charge(&cfg, &job, t0.Add(-time.Hour), t0.Add(300*time.Second))
	d := 1 - 0.693/604800
	runDecay := 300 * math.Pow(d, 300)
	want := runDecay * 4 * 0.5
	for _, i := range []int{u, tr.Assocs[u].Parent, 0} {
		if got := tr.Assocs[i].UsageRaw; !near(got, want) {
			t.Errorf("assoc %d usage %v, want %v", i, got, want)
		}
	}
	if got := tr.Assocs[u].UsedWall; !near(got, runDecay) {
		t.Errorf("used wall %v, want %v", got, runDecay)
	}
	if got := tr.Assocs[u].UsageTRES["gres/gpu"]; !near(got, runDecay*0.5) {
		t.Errorf("gpu usage %v, want %v", got, runDecay*0.5)
	}
	if got := tr.QOS["half"].UsageRaw; !near(got, want) {
		t.Errorf("job QOS usage %v, want %v", got, want)
	}
	if got := nd.UsageRaw; got != 300*4 {
		t.Errorf("NoDecay partition QOS usage %v, want %v (undecayed, no UsageFactor)", got, 300*4)
	}
	t.Logf("300 s × 4 billing × UsageFactor 0.5 → assoc %.6f (run×D^run = %.6f), NoDecay QOS %.0f", want, runDecay, nd.UsageRaw)
	tr.Decay(&cfg, 604800)
	if nd.UsageRaw != 1200 {
		t.Errorf("NoDecay QOS decayed to %v", nd.UsageRaw)
	}
	if got := tr.QOS["half"].UsageRaw; !near(got, want*math.Pow(d, 604800)) {
		t.Errorf("QOS half not decayed: %v", got)
	}
	// An ended job is charged only up to its end; a short one not at all.
	before := tr.Assocs[u].UsageRaw
	short := RunningJob{Assoc: u, Start: t0, End: t0.Add(500 * time.Millisecond), Billing: 1}
	tr.Charge(&cfg, &short, t0, t0.Add(time.Minute))
	if tr.Assocs[u].UsageRaw != before {
		t.Errorf("sub-second job charged")
	}
}

// No decay at all when PriorityDecayHalfLife=0.
func TestNoHalfLifeNoDecay(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DecayHalfLife = 0
	tr := buildTree(t, user("u", 1))
	u, _ := tr.Lookup("root", "u")
	job := RunningJob{Assoc: u, Start: t0, Billing: 2}
	tr.Pass(&cfg, []RunningJob{job}, time.Time{}, t0, time.UTC)
	tr.Pass(&cfg, []RunningJob{job}, t0, t0.Add(time.Hour), time.UTC)
	tr.Pass(&cfg, []RunningJob{job}, t0.Add(time.Hour), t0.Add(2*time.Hour), time.UTC)
	if got := tr.Assocs[u].UsageRaw; got != 2*7200 {
		t.Errorf("usage %v, want 14400", got)
	}
}

// TestBillingTRESUsageIsBillable: the per-TRES usage (GrpTRESRaw,
// checked against GrpTRESMins=billing=...) accrues the billable TRES for
// billing, weights applied and unrounded, and the counts for the other
// TRES: 2 CPUs billed 7.5 for an hour without decay.
func TestBillingTRESUsageIsBillable(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DecayHalfLife = 0
	tr := buildTree(t, user("u", 1))
	u, _ := tr.Lookup("root", "u")
	job := RunningJob{Assoc: u, Start: t0, Billing: 7.5, Alloc: map[string]int64{"cpu": 2, "billing": 2}}
	tr.Charge(&cfg, &job, t0, t0.Add(time.Hour))
	got := tr.Assocs[u].UsageTRES
	if got["billing"] != 7.5*3600 || got["cpu"] != 2*3600 {
		t.Errorf("per-TRES usage %v, want billing=%v cpu=%v", got, 7.5*3600, 2*3600)
	}
	if tr.Assocs[u].UsageRaw != 7.5*3600 {
		t.Errorf("RawUsage %v, want %v", tr.Assocs[u].UsageRaw, 7.5*3600)
	}
}

// PriorityUsageResetPeriod boundaries, in local time.
func TestResetBoundaries(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		ny = time.FixedZone("EST", -5*3600)
	}
	now := time.Date(2026, 5, 14, 15, 30, 0, 0, ny) // a Thursday
	cases := []struct {
		p    ResetPeriod
		want time.Time
	}{
		{ResetDaily, time.Date(2026, 5, 14, 0, 0, 0, 0, ny)},
		{ResetWeekly, time.Date(2026, 5, 10, 0, 0, 0, 0, ny)},
		{ResetMonthly, time.Date(2026, 5, 1, 0, 0, 0, 0, ny)},
		{ResetQuarterly, time.Date(2026, 4, 1, 0, 0, 0, 0, ny)},
		{ResetYearly, time.Date(2026, 1, 1, 0, 0, 0, 0, ny)},
		{ResetNone, time.Time{}},
	}
	for _, c := range cases {
		got := LastResetBoundary(c.p, now.UTC(), ny)
		t.Logf("%-9s last boundary before %v: %v", c.p, now, got)
		if !got.Equal(c.want) {
			t.Errorf("%v: %v, want %v", c.p, got, c.want)
		}
	}
	// Quarterly (ohpc-priority.conf): usage is zeroed by the first pass after
	// July 1st 00:00 local, not before.
	cfg := DefaultConfig()
	cfg.UsageResetPeriod = ResetQuarterly
	tr := buildTree(t, user("u", 1))
	u, _ := tr.Lookup("root", "u")
	addUsage(tr, u, 1000)
	last := time.Date(2026, 6, 30, 23, 57, 0, 0, ny)
	tr.Pass(&cfg, nil, last, last.Add(2*time.Minute), ny)
	if tr.Assocs[u].UsageRaw == 0 {
		t.Fatal("reset before the boundary")
	}
	tr.Pass(&cfg, nil, last.Add(2*time.Minute), last.Add(7*time.Minute), ny)
	if tr.Assocs[u].UsageRaw != 0 || tr.Assocs[0].UsageRaw != 0 {
		t.Errorf("usage %v not reset after the quarterly boundary", tr.Assocs[u].UsageRaw)
	}
	// NOW resets at the first pass only.
	cfg.UsageResetPeriod = ResetNow
	addUsage(tr, u, 5)
	tr.Pass(&cfg, nil, time.Time{}, now, ny)
	addUsage(tr, u, 5)
	tr.Pass(&cfg, nil, now, now.Add(time.Minute), ny)
	if tr.Assocs[u].UsageRaw == 0 {
		t.Errorf("NOW reset again on a later pass")
	}
}

func TestBillable(t *testing.T) {
	alloc := map[string]int64{"cpu": 8, "mem": 16384, "gres/gpu": 2, "license/matlab": 1}
	w, err := ParseTRESWeights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0,license/matlab=5")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		flags Flags
		want  float64
	}{
		{0, 8 + 4 + 4 + 5},
		{FlagMaxTRES, 8 + 5},
		{FlagMaxTRESGRES, 8 + 4 + 5},
	}
	for _, c := range cases {
		if got := Billable(alloc, w, c.flags); !near(got, c.want) {
			t.Errorf("flags %b: billable %v, want %v", c.flags, got, c.want)
		}
	}
	if got := Billable(alloc, nil, 0); got != 8 {
		t.Errorf("no weights: %v, want cpu count 8", got)
	}
}

// floorSeconds must equal math.Floor(a.Sub(b).Seconds()) for any pair of
// times, whole-second apart or not, either order, near and far.
func TestPropertyFloorSecondsMatchesSub(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		base := time.Unix(rapid.Int64Range(-1<<40, 1<<40).Draw(rt, "base"), rapid.Int64Range(0, 999999999).Draw(rt, "ns"))
		d := time.Duration(rapid.Int64Range(-1<<62, 1<<62).Draw(rt, "d"))
		if rapid.Bool().Draw(rt, "whole") {
			d = d.Truncate(time.Second)
		}
		for _, b := range []time.Time{base.Add(d), time.Unix(base.Unix()+rapid.Int64Range(-1e10, 1e10).Draw(rt, "s"), int64(base.Nanosecond()))} {
			if got, want := floorSeconds(base, b), math.Floor(base.Sub(b).Seconds()); got != want {
				rt.Fatalf("floorSeconds(%v, %v) = %v, want %v", base, b, got, want)
			}
		}
	})
}
