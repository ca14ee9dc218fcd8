package sim_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-hpc/sluice/internal/sim"
)

// TestSkippedPassesChangeNoDecision replays the 5,000 SDSC and KTH jobs
// of examples/traces through the real core twice, skipping provably
// useless passes and running every pass, and requires identical results
// for every job. The skipping covers passes after submissions of jobs
// that cannot start, passes while no pending job fits, main passes after
// job ends that the last pass's certificate (sched.Plan.Stuck) proves
// start nothing, main passes whose first job fails the only partition
// (Core.TopBlocked) and backfill passes in which nothing can start before
// that job's reservation (Core.BackfillBlocked).
func TestSkippedPassesChangeNoDecision(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("two replays per trace (skipped with -short and -race)")
	}
	for _, c := range []struct{ trace, conf string }{
		{"sdsc-sp2-5k.swf.gz", "sp2-128-backfill.conf"},
		{"kth-sp2-5k.swf.gz", "sp2-100-backfill.conf"},
		// FCFS: main passes only, where the certified main pass
		// (sched.Plan.Stuck) skips most passes after job ends
		{"sdsc-sp2-5k.swf.gz", "sp2-128-fcfs.conf"},
	} {
		tr, err := sim.ReadFile("../../examples/traces/"+c.trace, sim.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tr.Jobs = tr.Jobs[:min(len(tr.Jobs), 5000)]
		compareSkipping(t, c.trace+" "+c.conf, sim.Setup{Conf: "../../examples/traces/" + c.conf}, tr)
	}
}

// compareSkipping replays tr under setup skipping provably useless passes
// and running every pass, and requires identical results for every job.
func compareSkipping(t *testing.T, name string, setup sim.Setup, tr *sim.Trace) {
	t.Helper()
	fast, err := sim.Simulate(setup, sim.Options{Trace: tr})
	if err != nil {
		t.Fatal(err)
	}
	full, err := sim.Simulate(setup, sim.Options{Trace: tr, NoSkip: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(full.Jobs, fast.Jobs, cmp.AllowUnexported(sim.JobResult{})); diff != "" {
		t.Errorf("%s: skipping passes changed decisions (-all passes +skipping):\n%.2000s", name, diff)
	}
	t.Logf("%s: %d passes run, %d skipped; without skipping %d passes", name, fast.Engine.Passes, fast.Engine.SkippedPasses, full.Engine.Passes)
}

// TestSkippedPassesChangeNoDecisionWithLimits is the same check on the
// SDSC subset with limits enforced (MaxJobsPerUser and a GrpTRES cpu cap
// on the QOS): a limit may stop holding a job back when another ends, so
// the main pass must not certify itself there, and skipping may only use
// the other rules.
func TestSkippedPassesChangeNoDecisionWithLimits(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("two replays (skipped with -short and -race)")
	}
	tr, err := sim.ReadFile("../../examples/traces/sdsc-sp2-5k.swf.gz", sim.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr.Jobs = tr.Jobs[:min(len(tr.Jobs), 5000)]
	base, err := os.ReadFile("../../examples/traces/sp2-128-backfill.conf")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []struct{ name, text string }{
		{"limits.conf", string(base) + "AccountingStorageEnforce=associations,limits,qos\n"},
		{"limits.sacctmgr", sim.GeneratedAccounts(tr, "sp2") + "modify qos normal set MaxJobsPerUser=2 GrpTRES=cpu=96\n"},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	compareSkipping(t, "sdsc-sp2-5k.swf.gz with limits", sim.Setup{Conf: filepath.Join(dir, "limits.conf"), Accounts: filepath.Join(dir, "limits.sacctmgr")}, tr)
}
