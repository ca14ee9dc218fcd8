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

// deepQueueSizes are the replay lengths of BenchmarkSimDeepQueue.
var deepQueueSizes = []int{10000, 50000, 100000, 200000, 400000}

// BenchmarkSimDeepQueue replays a deep-queue workload on a large machine:
// SDSC-SP2 on 8,192 nodes (every job 64 times wider, --scale-cluster 64),
// arrivals 1.2 times denser (--time-scale 1.2, an offered load of about
// 0.99) and eight copies one after another (--repeat 8, 432,352 jobs), cut
// to the first 10k ... 400k jobs, FCFS (sp2-8192-fcfs.conf) and EASY
// backfill with multifactor priority (sp2-8192-backfill.conf), both with
// MaxJobCount raised so that no job is rejected. It reports µs of CPU per
// job (flat cost means equal figures for every length) and the peak
// queue. Run one size at a time, e.g.
//
//	go test -run XXX -bench 'SimDeepQueue/fcfs/jobs=10000$' -benchtime 1x ./internal/sim
func BenchmarkSimDeepQueue(b *testing.B) {
	tr, err := sim.ReadFile(sharedTraces(b)+"/SDSC-SP2-1998-4.2-cln.swf.gz", sim.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	deep := sim.Transform{TimeScale: 1.2, ScaleCluster: 64, Repeat: 8}.Apply(tr)
	for _, policy := range []string{"fcfs", "backfill"} {
		for _, n := range deepQueueSizes {
			b.Run(fmt.Sprintf("%s/jobs=%d", policy, n), func(b *testing.B) {
				t := *deep
				t.Jobs = deep.Jobs[:min(n, len(deep.Jobs))]
				setup := sim.Setup{Conf: "../../examples/traces/sp2-8192-" + policy + ".conf"}
				cpu0 := cpuSeconds()
				var run sim.Run
				for i := 0; i < b.N; i++ {
					if run, err = sim.Simulate(setup, sim.Options{Trace: &t}); err != nil {
						b.Fatal(err)
					}
				}
				if run.Metrics.Rejected > 0 {
					b.Fatalf("%d jobs rejected: %s", run.Metrics.Rejected, run.Metrics.RejectSummary())
				}
				cpu := (cpuSeconds() - cpu0) / float64(b.N)
				b.ReportMetric(cpu, "cpu-s/op")
				b.ReportMetric(cpu/float64(len(t.Jobs))*1e6, "cpu-µs/job")
				b.ReportMetric(float64(run.Metrics.PeakPending), "peak-queue")
			})
		}
	}
}
