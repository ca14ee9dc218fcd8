package sim_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/sluice-hpc/sluice/internal/sim"
)

// TestSimFCFSExactDeepQueueLarge is the deep-queue exactness check at the
// benchmark's scale: the first SLUICE_DEEP_EXACT jobs (e.g. 400000) of
// SDSC-SP2 x64 on 8,192 nodes, 1.2 times denser, eight copies
// (BenchmarkSimDeepQueue's workload), replayed FCFS through the core
// (with its incremental queue) and through an independent FCFS loop on
// the same transformed records: every start time must be equal. It takes
// a minute of CPU, so it runs only when the variable is set:
//
//	SLUICE_DEEP_EXACT=400000 go test -run TestSimFCFSExactDeepQueueLarge -v ./internal/sim
//
// (internal/cli's TestSimFCFSExactDeepQueue checks the transformation
// too, on 10,000 jobs, in every run.)
func TestSimFCFSExactDeepQueueLarge(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SLUICE_DEEP_EXACT"))
	if n <= 0 {
		t.Skip("set SLUICE_DEEP_EXACT to a job count to run it")
	}
	tr, err := sim.ReadFile(sharedTraces(t)+"/SDSC-SP2-1998-4.2-cln.swf.gz", sim.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deep := sim.Transform{TimeScale: 1.2, ScaleCluster: 64, Repeat: 8}.Apply(tr)
	deep.Jobs = deep.Jobs[:min(n, len(deep.Jobs))]
	run, err := sim.Simulate(sim.Setup{Conf: "../../examples/traces/sp2-8192-fcfs.conf"}, sim.Options{Trace: deep})
	if err != nil {
		t.Fatal(err)
	}
	want := fcfsLoop(deep.Jobs, 8192)
	diff := 0
	for _, j := range run.Jobs {
		if w, ok := want[j.ID]; !ok || w != j.Start {
			if diff < 5 {
				t.Errorf("job %d: core start %d, independent FCFS %d (known %v)", j.ID, j.Start, w, ok)
			}
			diff++
		}
	}
	if diff > 0 || len(run.Jobs) != len(want) {
		t.Fatalf("%d of %d jobs start at a different time (loop started %d)", diff, len(run.Jobs), len(want))
	}
	t.Logf("%d jobs, peak queue %d: identical start times", len(run.Jobs), run.Metrics.PeakPending)
}

// fcfsLoop is first come, first served on procs processors, written
// apart from the core: at each event time, ends first, then arrivals in
// trace order, then starts from the head of the queue while it fits.
func fcfsLoop(jobs []sim.Job, procs int64) map[int64]int64 {
	starts := map[int64]int64{}
	type running struct{ end, procs int64 }
	var run []running
	var queue []sim.Job
	free, next := procs, 0
	for next < len(jobs) || len(queue) > 0 {
		t := int64(1) << 62
		for _, r := range run {
			t = min(t, r.end)
		}
		if next < len(jobs) {
			t = min(t, jobs[next].Submit)
		}
		kept := run[:0]
		for _, r := range run {
			if r.end == t {
				free += r.procs
			} else {
				kept = append(kept, r)
			}
		}
		run = kept
		for next < len(jobs) && jobs[next].Submit == t {
			if int64(jobs[next].NTasks) <= procs {
				queue = append(queue, jobs[next])
			}
			next++
		}
		for len(queue) > 0 && int64(queue[0].NTasks) <= free {
			j := queue[0]
			queue = queue[1:]
			free -= int64(j.NTasks)
			starts[j.ID] = t
			run = append(run, running{end: t + min(j.Runtime, j.TimeLimitSec), procs: int64(j.NTasks)})
		}
	}
	return starts
}
