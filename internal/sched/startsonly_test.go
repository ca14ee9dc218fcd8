package sched

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestPropertyStartsOnlyChangesNoStart: over random clusters (one
// partition oversubscribing CPUs), random jobs with limits, GPUs,
// exclusive nodes and random run times, a backfill cycle that stops
// planning once nothing left can start (Backfill.StartsOnly, set by the
// simulator) starts exactly the same jobs, on the same nodes, with the
// same limits, and gives every pending job the same reason as a cycle
// that plans the whole queue.
func TestPropertyStartsOnlyChangesNoStart(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		conf, _ := propCluster(rt)
		h := newHarness(rt, conf)
		h.sacctmgr(propAcct)
		h.st.Config.Backfill.Enabled = true
		jobs := rapid.IntRange(3, 18).Draw(rt, "jobs")
		for i := 0; i < jobs; i++ {
			user := fmt.Sprintf("u%d", rapid.IntRange(1, 3).Draw(rt, fmt.Sprintf("user%d", i)))
			prio := uint32(rapid.IntRange(1, 1000).Draw(rt, fmt.Sprintf("prio%d", i)))
			if j, err := h.submit(user, propJob(rt, i)+" --hold"); err == nil {
				j.Priority = prio
				_ = h.st.Release(j.ID, true)
			}
			compareStartsOnly(rt, h)
			for k := rapid.IntRange(0, 3).Draw(rt, fmt.Sprintf("gap%d", i)); k > 0; k-- {
				h.advance(10 * time.Minute)
				compareStartsOnly(rt, h)
			}
		}
		for k := 0; k < 30; k++ {
			h.advance(10 * time.Minute)
			compareStartsOnly(rt, h)
		}
	})
}

// compareStartsOnly plans the cycle at the harness's now both ways,
// compares them, and applies the full plan.
func compareStartsOnly(rt *rapid.T, h *harness) {
	cfg := h.st.Config
	cfg.Backfill.StartsOnly = true
	short := Schedule(h.st, h.now, cfg)
	full := h.schedule()
	if d := cmp.Diff(full.Starts, short.Starts); d != "" {
		rt.Fatalf("StartsOnly changed the starts (-full +startsOnly):\n%s", d)
	}
	reasons := func(p *Plan) map[JobID]Reason {
		m := map[JobID]Reason{}
		for _, x := range p.Pending {
			m[x.Job] = x.Reason
		}
		return m
	}
	if d := cmp.Diff(reasons(&full), reasons(&short)); d != "" {
		rt.Fatalf("StartsOnly changed pending reasons (-full +startsOnly):\n%s", d)
	}
}
