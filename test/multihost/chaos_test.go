package multihost

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMultiHostChaosNetCut is the cut-network part of issue 17's chaos
// test: under a bounded load of batch jobs submitted from the login host,
// each round cuts a node host's link (seeded choice) for longer than
// SlurmdTimeout (10 s here) and restores it; the node goes DOWN, its jobs
// are requeued (requeue_delay=2) and run elsewhere, and the node returns
// (ReturnToService=1). After each round: every acknowledged job is known,
// no job ran twice at once (each job holds a lock on a file of the shared
// directory while it runs), none ran more often than it was requeued + 1;
// at the end every acknowledged job is COMPLETED and no job process is
// left. The jobs run 0.5 s or 6 s, shorter than SlurmdTimeout: an agent cut
// off from the controller is not fenced, so a job outliving a cut longer
// than SlurmdTimeout still runs twice at once (docs/differences.md,
// Fencing), which this test does not exercise.
func TestMultiHostChaosNetCut(t *testing.T) {
	t.Parallel()
	b := NewBed(t, "SchedulerParameters=requeue_delay=2\n")
	work := filepath.Join(b.dir, "shared", "chaos")
	must(t, os.MkdirAll(filepath.Join(work, "locks"), 0o777))
	for name, sleep := range map[string]string{"short.sh": "0.5", "long.sh": "6"} {
		script := fmt.Sprintf("#!/bin/sh\nexec 9>>%[1]s/locks/$SLURM_JOB_ID\nflock -n 9 || echo $SLURM_JOB_ID >> %[1]s/twice\n"+
			"echo $SLURM_JOB_ID >> %[1]s/ran\nsleep %[2]s\n", work, sleep)
		must(t, os.WriteFile(filepath.Join(work, name), []byte(script), 0o755))
	}
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	var mu sync.Mutex
	var acked []string
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			script := "short.sh"
			if i%3 == 0 {
				script = "long.sh"
			}
			r := b.Login(10*time.Second, "sbatch --parsable -o /dev/null "+filepath.Join(work, script))
			if id := strings.Split(strings.TrimSpace(r.Out), ";")[0]; r.Code == 0 && id != "" {
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
			}
			time.Sleep(300 * time.Millisecond)
		}
	}()
	ids := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), acked...) }
	const rounds = 3
	for i := 1; i <= rounds; i++ {
		time.Sleep(time.Duration(2000+rng.Intn(2000)) * time.Millisecond)
		node := []string{"n1", "n2", "n3"}[rng.Intn(3)]
		b.LinkDown(node)
		time.Sleep(13 * time.Second)
		b.LinkUp(node)
		b.waitNodesUp(60 * time.Second)
		jobs := b.chaosInvariants(work, ids(), false)
		t.Logf("net-cut round %d: %s cut for 13 s, %d jobs acknowledged so far, %d requeues so far", i, node, len(ids()), requeues(jobs))
	}
	stop()
	wg.Wait()
	// The backlog (a third of the jobs run 6 s) drains in about a minute
	// on a quiet machine; make test runs this beside other packages, so
	// the bound is generous, and a failure names the jobs left behind.
	var jobs map[string]chaosJob
	drain := time.Now()
	for deadline := drain.Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		jobs = b.chaosJobs()
		var left []string
		for _, id := range ids() {
			if jobs[id].state != "COMPLETED" {
				left = append(left, id+"="+jobs[id].state)
			}
		}
		if len(left) == 0 {
			t.Logf("every acknowledged job COMPLETED %.1f s after the last round", time.Since(drain).Seconds())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 3 minutes, %d acknowledged jobs are not COMPLETED: %s", len(left), strings.Join(left[:min(len(left), 20)], " "))
		}
	}
	b.chaosInvariants(work, ids(), true)
	t.Logf("chaos (net cut): %d rounds (seed %d), %d acknowledged jobs, %d requeues, invariants: every acknowledged job present, "+
		"no job running twice at once, no job run more often than requeued+1, at the end every acknowledged job COMPLETED "+
		"having run, no job process left", rounds, seed, len(ids()), requeues(jobs))
}

// chaosJob is what `scontrol -o show job` says of a job.
type chaosJob struct {
	state    string
	restarts int
}

// chaosJobs are the controller's jobs, by id, as seen from the login host.
func (b *Bed) chaosJobs() map[string]chaosJob {
	r := b.Login(20*time.Second, "scontrol -o show job")
	if r.Code != 0 {
		return nil
	}
	m := map[string]chaosJob{}
	for _, line := range strings.Split(r.Out, "\n") {
		f := map[string]string{}
		for _, w := range strings.Fields(line) {
			if k, v, ok := strings.Cut(w, "="); ok {
				f[k] = v
			}
		}
		if f["JobId"] != "" {
			n, _ := strconv.Atoi(f["Restarts"])
			m[f["JobId"]] = chaosJob{state: f["JobState"], restarts: n}
		}
	}
	return m
}

func requeues(jobs map[string]chaosJob) int {
	n := 0
	for _, j := range jobs {
		n += j.restarts
	}
	return n
}

// chaosInvariants checks the invariants once (final: at the end) and
// returns the jobs it looked at.
func (b *Bed) chaosInvariants(work string, acked []string, final bool) map[string]chaosJob {
	b.t.Helper()
	// Runs counted before the listing: a job run again after it was
	// requeued after it too.
	data, _ := os.ReadFile(filepath.Join(work, "ran"))
	ran := map[string]int{}
	for _, id := range strings.Fields(string(data)) {
		ran[id]++
	}
	var jobs map[string]chaosJob
	b.waitFor(30*time.Second, "scontrol show job", func() bool { jobs = b.chaosJobs(); return jobs != nil })
	for _, id := range acked {
		if _, ok := jobs[id]; !ok {
			b.t.Errorf("acknowledged job %s is missing", id)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(work, "twice")); len(data) > 0 {
		b.t.Errorf("jobs started while an earlier run of theirs still ran: %s", strings.Fields(string(data)))
	}
	for id, k := range ran {
		if j, ok := jobs[id]; ok && k > j.restarts+1 {
			b.t.Errorf("job %s ran %d times, requeued %d times", id, k, j.restarts)
		}
	}
	if final {
		for _, id := range acked {
			if ran[id] < 1 {
				b.t.Errorf("job %s is %s but never ran", id, jobs[id].state)
			}
		}
		for _, n := range []string{"n1", "n2", "n3"} {
			for _, c := range b.Host(n).Processes() {
				if c == "sleep 6" || c == "sleep 0.5" {
					b.t.Errorf("a job's process is left on %s at the end: %s", n, c)
				}
			}
		}
	}
	return jobs
}

// waitNodesUp waits until sinfo shows every node host back in service.
func (b *Bed) waitNodesUp(limit time.Duration) {
	b.t.Helper()
	b.waitFor(limit, "every node back in service", func() bool {
		r := b.Login(10*time.Second, "sinfo -h -N -o '%N %t'")
		if r.Code != 0 {
			return false
		}
		up := 0
		for _, line := range strings.Split(strings.TrimSpace(r.Out), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && (f[1] == "idle" || f[1] == "mix" || f[1] == "alloc") {
				up++
			}
		}
		return up == 3
	})
}
