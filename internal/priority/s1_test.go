package priority

import (
	"testing"
	"time"
)

// stream is one saturating submitter: it always has exactly one pending job.
type stream struct {
	user, account string
	assoc         int
	next          uint32 // id of its pending job
	delivered     time.Duration
}

// S1 (SCENARIOS.md): ml-research (Share=40) and ml-platform (Share=30)
// both saturate a single resource with equal 1-hour jobs; the scheduler
// always starts the pending job of higher multifactor priority (fair-share
// only, refreshed every PriorityCalcPeriod as Slurm does). Over 10
// half-lives the delivered share converges to 40/70 = 57% within 3 points.
func TestS1SharesAreRelativeWeights(t *testing.T) {
	tr := buildTree(t,
		account("data-science", 20),
		account("executives", 10),
		account("ml-platform", 30, user("bob", 1)),
		account("ml-research", 40, user("alice", 1)),
	)
	cfg := DefaultConfig()
	cfg.WeightFairshare = 10000
	cl := &Cluster{Nodes: 1, CPUs: 1, Partitions: map[string]*Partition{"dev": {JobFactor: 1}}}
	streams := []*stream{{user: "alice", account: "ml-research"}, {user: "bob", account: "ml-platform"}}
	var id uint32
	for _, s := range streams {
		s.assoc, _ = tr.Lookup(s.account, s.user)
		id++
		s.next = id
	}
	const jobLen = time.Hour
	horizon := 10 * cfg.DecayHalfLife
	var running *RunningJob
	var owner *stream
	var last time.Time
	for now := t0; now.Before(t0.Add(horizon)); now = now.Add(cfg.CalcPeriod) {
		var jobs []RunningJob
		if running != nil {
			jobs = append(jobs, *running)
		}
		tr.Pass(&cfg, jobs, last, now, time.UTC)
		last = now
		if running != nil && !running.End.After(now) {
			running = nil
		}
		if running != nil {
			continue
		}
		calc := NewCalculator(&cfg, cl, tr)
		var best *stream
		var bestPrio uint32
		for _, s := range streams {
			j := Job{ID: s.next, Partition: "dev", Assoc: s.assoc, Nodes: 1, CPUs: 1}
			p := calc.Priority(&j, now)
			if best == nil || p > bestPrio || p == bestPrio && s.next < best.next {
				best, bestPrio = s, p
			}
		}
		running = &RunningJob{Assoc: best.assoc, Start: now, End: now.Add(jobLen), Billing: 1}
		owner = best
		owner.delivered += jobLen
		id++
		best.next = id
	}
	total := streams[0].delivered + streams[1].delivered
	share := float64(streams[0].delivered) / float64(total) * 100
	a := assocOf(t, tr, "ml-research", "")
	b := assocOf(t, tr, "ml-platform", "")
	t.Logf("after %v (10 half-lives): ml-research %.1f%%, ml-platform %.1f%% (target 57.1/42.9); LevelFS %.4f / %.4f",
		horizon, share, 100-share, a.LevelFS, b.LevelFS)
	if share < 57.14-3 || share > 57.14+3 {
		t.Errorf("ml-research got %.1f%%, want 57.1%% ± 3", share)
	}
}
