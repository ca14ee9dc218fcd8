package sched

import (
	"fmt"
	"strings"
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
	rapid.Check(t, func(rt *rapid.T) { checkStartsOnly(rt, false) })
}

// TestPropertyStartsOnlyOnePartition is the same check on the batch
// partition alone (jobs for the shared one are rejected): no record then
// starts with zero CPUs, so the pass stops planning early (lastCandidate)
// far more often.
func TestPropertyStartsOnlyOnePartition(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) { checkStartsOnly(rt, true) })
}

func checkStartsOnly(rt *rapid.T, batchOnly bool) {
	conf, _ := propCluster(rt)
	if batchOnly {
		conf = conf[:strings.Index(conf, "PartitionName=shared")]
	}
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
	if d := cmp.Diff(pendingReasons(&full), pendingReasons(&short)); d != "" {
		rt.Fatalf("StartsOnly changed pending reasons (-full +startsOnly):\n%s", d)
	}
}

// TestStartsOnlyStopsAtLastCandidate: with Backfill.StartsOnly a backfill
// pass stops planning once no record left can start on its own: here,
// after the 4-node job J reserves every node from the running job's end,
// X (one node, but for 2 hours) could only use the free nodes J reserves
// within its span, and Y (3 nodes, 10 minutes) needs more nodes than are
// free. The suffix bound alone (fewest CPUs of the rest, 1, against the
// free CPUs for the shortest duration, 10 minutes: 2) would plan both;
// the per-record bound plans neither, and the starts and reasons are those
// of the full plan.
func TestStartsOnlyStopsAtLastCandidate(t *testing.T) {
	h := newHarness(t, `ClusterName=c
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
NodeName=n[1-4] CPUs=1 RealMemory=1000
PartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`)
	h.st.Config.Backfill.Enabled = true
	h.mustSubmit("u", "-N 2 -t 60 --run=60")
	ids := map[string]JobID{}
	for i, o := range []struct{ name, opts string }{{"J", "-N 4 -t 60"}, {"X", "-N 1 -t 120"}, {"Y", "-N 3 -t 10"}} {
		j := h.queue("u", o.opts)
		j.Priority = uint32(300 - i)
		ids[o.name] = j.ID
	}
	h.st.OrderChanged()
	cfg := h.st.Config
	cfg.Backfill.StartsOnly = true
	short := Schedule(h.st, h.now, cfg)
	full := Schedule(h.st, h.now, h.st.Config)
	if len(short.Starts) != 0 || len(full.Starts) != 0 {
		t.Fatalf("starts: StartsOnly %v, full %v; want none", short.Starts, full.Starts)
	}
	planned := func(p *Plan) map[JobID]bool {
		m := map[JobID]bool{}
		for _, x := range p.Pending {
			m[x.Job] = !x.ExpectedStart.IsZero()
		}
		return m
	}
	want := map[JobID]bool{ids["J"]: true, ids["X"]: false, ids["Y"]: false}
	if d := cmp.Diff(want, planned(&short)); d != "" {
		t.Errorf("records planned with StartsOnly (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[JobID]bool{ids["J"]: true, ids["X"]: true, ids["Y"]: true}, planned(&full)); d != "" {
		t.Errorf("records planned by the full pass (-want +got):\n%s", d)
	}
	if d := cmp.Diff(pendingReasons(&full), pendingReasons(&short)); d != "" {
		t.Errorf("StartsOnly changed pending reasons (-full +startsOnly):\n%s", d)
	}
}

// pendingReasons maps a plan's pending jobs to their reasons.
func pendingReasons(p *Plan) map[JobID]Reason {
	m := map[JobID]Reason{}
	for _, x := range p.Pending {
		m[x.Job] = x.Reason
	}
	return m
}
