package sim

import (
	"testing"
)

// TestBackfillBlockedStartsNothing replays the 5,000 SDSC and KTH jobs
// of examples/traces running every pass, and asks before each backfill
// pass whether Core.BackfillBlocked proves it idle: every pass it proves
// must start and preempt nothing. The exact reservations of the first
// jobs (plannedBlocked) must prove passes the bounds alone do not, and
// those of the second and later jobs passes the first one's alone does
// not.
func TestBackfillBlockedStartsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 10,000 jobs")
	}
	for _, c := range []struct{ trace, conf string }{
		{"sdsc-sp2-5k.swf.gz", "sp2-128-backfill.conf"},
		{"kth-sp2-5k.swf.gz", "sp2-100-backfill.conf"},
	} {
		tr, err := ReadFile("../../examples/traces/"+c.trace, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		core, err := NewCore(Setup{Conf: "../../examples/traces/" + c.conf}, tr)
		if err != nil {
			t.Fatal(err)
		}
		chk := &blockedCheck{t: t, core: core, name: c.trace}
		cfg := core.EngineConfig()
		cfg.NoSkip = true
		if _, _, err := NewEngine(cfg, chk, tr.Jobs).Run(); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d backfill passes, %d idle, %d proved idle (%d by the first job's exact reservation, %d by later jobs' too)",
			c.trace, chk.passes, chk.idle, chk.proved, chk.first, chk.later)
		if chk.first == 0 || chk.later == 0 {
			t.Errorf("%s: the exact reservations proved too few passes idle", c.trace)
		}
	}
}

// blockedCheck is the core as a Policy that checks BackfillBlocked's
// claims against the passes it runs.
type blockedCheck struct {
	t                                  *testing.T
	core                               *Core
	name                               string
	passes, idle, proved, first, later int
}

func (b *blockedCheck) Submit(now int64, j *Job) error        { return b.core.Submit(now, j) }
func (b *blockedCheck) End(now int64, id int64, timeout bool) { b.core.End(now, id, timeout) }
func (b *blockedCheck) Recalc(now int64) bool                 { return b.core.Recalc(now) }
func (b *blockedCheck) Blocked(now int64) bool                { return b.core.Blocked(now) }
func (b *blockedCheck) MayStart(now int64, id int64) bool     { return b.core.MayStart(now, id) }

func (b *blockedCheck) Schedule(now int64, backfill bool) Decisions {
	var blocked bool
	var modelled int
	if backfill {
		b.passes++
		blocked, modelled = b.core.backfillBlocked(now)
	}
	d := b.core.Schedule(now, backfill)
	if backfill && len(d.Starts) == 0 && len(d.Preempted) == 0 {
		b.idle++
	}
	if blocked {
		b.proved++
		switch {
		case modelled == 1:
			b.first++
		case modelled > 1:
			b.later++
		}
		if len(d.Starts) > 0 || len(d.Preempted) > 0 {
			b.t.Errorf("%s at %d: backfill pass proved idle (%d jobs modelled) started %d jobs, preempted %d",
				b.name, now, modelled, len(d.Starts), len(d.Preempted))
		}
	}
	return d
}
