package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// easyStarts is an independent EASY backfilling loop (Lifka's EASY, as
// in Mu'alem and Feitelson 2001): one pool of processors, the queue in
// submit order; at each event time (ends before submissions) the first
// jobs start while they fit; the first that does not gets a reservation
// at the shadow time (when enough running jobs have reached their time
// limits) and any later job starts now if it fits and either ends (by
// its limit) before the shadow time or uses only the processors the
// first job leaves spare then. Runs are capped at the time limit.
func easyStarts(jobs []swfJob, procs int64) map[int64]int64 {
	type running = struct{ end, limitEnd, procs int64 }
	starts := map[int64]int64{}
	var run []running
	var queue []swfJob
	free, next := procs, 0
	for next < len(jobs) || len(queue) > 0 {
		t := int64(1) << 62
		for _, r := range run {
			t = min(t, r.end)
		}
		if next < len(jobs) {
			t = min(t, jobs[next].submit)
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
		for next < len(jobs) && jobs[next].submit == t {
			if jobs[next].procs <= procs {
				queue = append(queue, jobs[next])
			}
			next++
		}
		start := func(j swfJob) {
			free -= j.procs
			starts[j.id] = t
			run = append(run, running{end: t + min(j.run, j.limit), limitEnd: t + j.limit, procs: j.procs})
		}
		for len(queue) > 0 && queue[0].procs <= free {
			start(queue[0])
			queue = queue[1:]
		}
		if len(queue) < 2 {
			continue
		}
		shadow, extra := easyShadow(run, free, queue[0].procs)
		var rest []swfJob
		for _, j := range queue[1:] {
			switch {
			case j.procs <= free && t+j.limit <= shadow:
				start(j)
			case j.procs <= free && j.procs <= extra:
				start(j)
				extra -= j.procs
			default:
				rest = append(rest, j)
			}
		}
		queue = append(queue[:1], rest...)
	}
	return starts
}

// easyShadow returns when the first job can start if the running jobs
// end at their limits, and how many processors it leaves spare then.
func easyShadow(run []struct{ end, limitEnd, procs int64 }, free, need int64) (int64, int64) {
	byEnd := slices.Clone(run)
	slices.SortFunc(byEnd, func(a, b struct{ end, limitEnd, procs int64 }) int {
		return int(a.limitEnd - b.limitEnd)
	})
	avail := free
	for _, r := range byEnd {
		avail += r.procs
		if avail >= need {
			return r.limitEnd, avail - need
		}
	}
	return 1 << 62, 0
}

// TestSimBackfillAgainstEASY compares sluice sim's backfill with the
// independent EASY loop on the first 5,000 SDSC-SP2 jobs, as recorded and
// with arrivals 1.5 times denser (a deep queue), with Slurm's limits
// lifted (bf_max_job_test, bf_window, bf_resolution=1, bf_interval=1).
// With bf_job_part_count_reserve=1 (a reservation for the first blocked
// job only, as EASY makes) the mean wait must be within 5% of EASY's;
// the gap that remains is Slurm's cadence: backfill runs on bf_interval
// ticks, so a job EASY backfills at an event starts a tick later, and
// from then on the two schedules drift apart job by job (the per-job
// counts are logged). With Slurm's default (a reservation for every job
// tested, conservative backfilling) the gap is logged too: it is the
// difference between the two algorithms, not an error.
func TestSimBackfillAgainstEASY(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("four replays (skipped with -short)")
	}
	trace := examples + "sdsc-sp2-5k.swf.gz"
	raw, procs := readSWFForTest(t, trace)
	for _, reserve := range []string{"1", "0"} {
		conf := filepath.Join(t.TempDir(), "easy.conf")
		text := "ClusterName=sp2\nSchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n" +
			"PriorityType=priority/basic\n" +
			"SchedulerParameters=bf_interval=1,bf_resolution=1,bf_window=43200,bf_max_job_test=100000,bf_job_part_count_reserve=" + reserve + "\n" +
			"NodeName=n[1-128] CPUs=1 RealMemory=1000 State=IDLE\nPartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n"
		if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, scale := range []float64{1, 1.5} {
			out := filepath.Join(t.TempDir(), "jobs.jsonl")
			simRun(t, "--trace", trace, "--conf", conf, "--time-scale", strconv.FormatFloat(scale, 'g', -1, 64), "--jobs-out", out, "-q")
			got := readJobLines(t, out)
			jobs := deepQueueJobs(raw, 1, scale, 1)
			want := easyStarts(jobs, procs)
			submit := map[int64]int64{}
			for _, j := range jobs {
				submit[j.id] = j.submit
			}
			same, tick, later := 0, 0, 0
			var waitSim, waitEASY float64
			for _, j := range got {
				w := want[j.ID]
				switch d := j.Start - w; {
				case d == 0:
					same++
				case d == 1:
					tick++
				case d > 1:
					later++
				}
				waitSim += float64(j.Start - submit[j.ID])
				waitEASY += float64(w - submit[j.ID])
			}
			n := float64(len(got))
			gap := waitSim/waitEASY - 1
			t.Logf("bf_job_part_count_reserve=%s, time scale %g: %d jobs; starts equal to EASY's %d, one tick later %d, later %d, earlier %d; mean wait %.0f s vs EASY %.0f s (%+.1f%%)",
				reserve, scale, len(got), same, tick, later, len(got)-same-tick-later, waitSim/n, waitEASY/n, 100*gap)
			if reserve == "1" && (gap > 0.05 || gap < -0.05) {
				t.Errorf("EASY settings, time scale %g: mean wait %.0f s, EASY %.0f s (%.1f%% apart)", scale, waitSim/n, waitEASY/n, 100*gap)
			}
		}
	}
}

// TestSimInterrupted: a replay whose context ends (SIGINT or SIGTERM in
// cmd/sluice) stops with a message and a failure status, writing nothing.
func TestSimInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Cwd: "."}
	report := filepath.Join(t.TempDir(), "r.html")
	code := runSim(ctx, env, []string{"--trace", examples + "sdsc-sp2-5k.swf.gz", "--conf", examples + "sp2-128-fcfs.conf", "--report", report})
	if code == 0 || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("exit %d, stderr %q: want a failure that says interrupted", code, errb.String())
	}
	if _, err := os.Stat(report); err == nil {
		t.Error("an interrupted replay wrote its report")
	}
}

// TestSimProgressLine: the progress line stays silent during the first
// seconds of a replay, then shows the share done, the jobs and the time.
func TestSimProgressLine(t *testing.T) {
	var out bytes.Buffer
	clock := time.Unix(1000, 0)
	b := &progressBar{w: &out, total: 200, last: -1, start: clock, now: func() time.Time { return clock }}
	report := b.reporter(0)
	report(50, 200)
	if out.Len() != 0 {
		t.Fatalf("printed %q within the first seconds", out.String())
	}
	clock = clock.Add(3 * time.Second)
	report(100, 200)
	if got := out.String(); !strings.Contains(got, " 50%  100/200 jobs  3 s") {
		t.Errorf("progress line %q", got)
	}
}
