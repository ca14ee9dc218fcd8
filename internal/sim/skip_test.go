package sim_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-hpc/sluice/internal/sim"
)

// TestSkippedPassesChangeNoDecision replays the first 5,000 SDSC and KTH
// jobs through the real core twice, skipping provably useless passes and
// running every pass, and requires identical results for every job.
func TestSkippedPassesChangeNoDecision(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("two replays per trace (skipped with -short and -race)")
	}
	for _, c := range []struct{ trace, conf string }{
		{"sdsc-sp2-5k.swf.gz", "sp2-128-backfill.conf"},
		{"kth-sp2-5k.swf.gz", "sp2-100-backfill.conf"},
	} {
		tr, err := sim.ReadFile("../../examples/traces/"+c.trace, sim.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tr.Jobs = tr.Jobs[:2500]
		setup := sim.Setup{Conf: "../../examples/traces/" + c.conf}
		fast, err := sim.Simulate(setup, sim.Options{Trace: tr})
		if err != nil {
			t.Fatal(err)
		}
		full, err := sim.Simulate(setup, sim.Options{Trace: tr, NoSkip: true})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(full.Jobs, fast.Jobs, cmp.AllowUnexported(sim.JobResult{})); diff != "" {
			t.Errorf("%s: skipping passes changed decisions (-all passes +skipping):\n%.2000s", c.trace, diff)
		}
		t.Logf("%s: %d passes run, %d skipped; without skipping %d passes", c.trace, fast.Engine.Passes, fast.Engine.SkippedPasses, full.Engine.Passes)
	}
}
