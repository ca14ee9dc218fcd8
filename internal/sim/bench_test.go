package sim_test

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/sluice-hpc/sluice/internal/sim"
)

// BenchmarkSimSDSC replays the first 10k, 30k and all SDSC-SP2 jobs with
// multifactor priority and backfill (examples/traces/sp2-128-backfill.conf)
// through the real core, to check that the cost grows linearly with the
// trace. Needs ../shared/traces (or SLUICE_TRACES, a path relative to
// internal/sim or absolute); run from the repository root with
//
//	go test -run XXX -bench SimSDSC -benchtime 1x ./internal/sim
//
// It reports cpu-s/op (process CPU time per replay) besides the wall
// time: on a loaded machine the CPU time is the stable figure.
func BenchmarkSimSDSC(b *testing.B) {
	tr, err := sim.ReadFile(sharedTraces(b)+"/SDSC-SP2-1998-4.2-cln.swf.gz", sim.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	all := tr.Jobs
	for _, n := range []int{10000, 30000, len(all)} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			t := *tr
			t.Jobs = all[:n]
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				if _, err := sim.Simulate(sim.Setup{Conf: "../../examples/traces/sp2-128-backfill.conf"}, sim.Options{Trace: &t}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			// CPU time (user+system, GC included) is the figure to compare
			// on a shared machine, where wall time depends on the load.
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkSimSDSCRepeated replays the first 10,000 SDSC-SP2 jobs once,
// three times and five times in a row (each copy submitted after the
// previous one's last submit plus a day, ids renumbered), under the same
// policy as BenchmarkSimSDSC. The copies load the machine alike, so this
// separates the cost of trace length from that of congestion: the full
// trace's later months keep a longer queue than its first 10,000 jobs,
// and each pass costs more with a longer queue. Linear cost in the trace
// length means cpu-s/op grows 1 : 3 : 5 here.
func BenchmarkSimSDSCRepeated(b *testing.B) {
	tr, err := sim.ReadFile(sharedTraces(b)+"/SDSC-SP2-1998-4.2-cln.swf.gz", sim.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	base := tr.Jobs[:10000]
	span := base[len(base)-1].Submit - base[0].Submit + 86400
	for _, copies := range []int{1, 3, 5} {
		b.Run(fmt.Sprintf("copies=%d", copies), func(b *testing.B) {
			t := *tr
			t.Jobs = make([]sim.Job, 0, copies*len(base))
			for k := range copies {
				for _, j := range base {
					j.ID += int64(k * 1_000_000)
					j.Submit += int64(k) * span
					t.Jobs = append(t.Jobs, j)
				}
			}
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				if _, err := sim.Simulate(sim.Setup{Conf: "../../examples/traces/sp2-128-backfill.conf"}, sim.Options{Trace: &t}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(t.Jobs))*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
		})
	}
}

// cpuSeconds is the CPU time the process has used so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
