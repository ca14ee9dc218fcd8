package sim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sim"
)

// fcfs is a trivial strict-FCFS policy on one pool of CPUs, used only to
// test the engine independently of the scheduler core: jobs start in submit
// order while the oldest waiting job fits.
type fcfs struct {
	free    int64
	queue   []*sim.Job
	running map[int64]int64 // id -> CPUs
	jobs    map[int64]*sim.Job
	passes  int
	// preemptAt scripts one requeue: at that time the job preemptID (if
	// running) is requeued.
	preemptAt, preemptID int64
}

func newFCFS(cpus int64) *fcfs {
	return &fcfs{free: cpus, running: map[int64]int64{}, jobs: map[int64]*sim.Job{}}
}

func (p *fcfs) Submit(now int64, j *sim.Job) error {
	if j.NTasks > 1<<20 {
		return fmt.Errorf("too big")
	}
	p.queue = append(p.queue, j)
	p.jobs[j.ID] = j
	return nil
}

func (p *fcfs) End(now int64, id int64, timeout bool) {
	p.free += p.running[id]
	delete(p.running, id)
}

func (p *fcfs) Schedule(now int64, backfill bool) sim.Decisions {
	p.passes++
	var d sim.Decisions
	if p.preemptAt != 0 && now >= p.preemptAt {
		if cpus, ok := p.running[p.preemptID]; ok {
			d.Preempted = append(d.Preempted, sim.Preempted{ID: p.preemptID, Requeue: true})
			p.free += cpus
			delete(p.running, p.preemptID)
			p.queue = append(p.queue, p.jobs[p.preemptID])
			p.preemptAt = 0
		}
	}
	for len(p.queue) > 0 {
		j := p.queue[0]
		cpus := int64(j.CPUCount())
		if cpus > p.free {
			break
		}
		p.queue = p.queue[1:]
		p.free -= cpus
		p.running[j.ID] = cpus
		d.Starts = append(d.Starts, sim.Started{ID: j.ID, TimeLimit: j.TimeLimitSec, CPUs: cpus, Account: j.Account, User: j.User})
	}
	return d
}

func (p *fcfs) Recalc(now int64) bool { return false }

func (p *fcfs) Blocked(now int64) bool {
	return p.preemptAt == 0 && len(p.queue) > 0 && int64(p.queue[0].CPUCount()) > p.free
}

func (p *fcfs) MayStart(now int64, id int64) bool {
	j := p.jobs[id]
	return p.preemptAt != 0 || j != nil && int64(j.CPUCount()) <= p.free
}

// job builds a trace job: id, submit, runtime, CPUs, time limit.
func job(id, submit, runtime int64, cpus int, limit int64) sim.Job {
	return sim.Job{ID: id, Submit: submit, Runtime: runtime, JobSpec: &api.JobSpec{NTasks: cpus, TimeLimitSec: limit, Account: "acct", User: "u"}}
}

func runEngine(t *testing.T, cfg sim.EngineConfig, p sim.Policy, jobs ...sim.Job) map[int64]sim.JobResult {
	t.Helper()
	res, _, err := sim.NewEngine(cfg, p, jobs).Run()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]sim.JobResult{}
	for _, r := range res {
		out[r.ID] = r
	}
	return out
}

func TestEngineFCFSAndTimeout(t *testing.T) {
	got := runEngine(t, sim.EngineConfig{}, newFCFS(4),
		job(1, 0, 100, 3, 1000),
		job(2, 1, 50, 2, 1000),
		job(3, 2, 10, 1, 1000),   // fits at 2 but waits behind job 2 (strict FCFS)
		job(4, 3, 500, 1, 120),   // runs past its limit: TIMEOUT at start+120
		job(5, 4, -1, 1, 30),     // runs until its limit
		job(6, 5, 9999, 64, 100), // never fits: stays pending, the run still ends
	)
	want := map[int64][3]int64{1: {0, 100}, 2: {100, 150}, 3: {100, 110}, 4: {100, 220}, 5: {110, 140}}
	for id, w := range want {
		r := got[id]
		if r.Start != w[0] || r.End != w[1] {
			t.Errorf("job %d ran [%d, %d], want [%d, %d]", id, r.Start, r.End, w[0], w[1])
		}
	}
	if got[4].State != "TIMEOUT" || got[5].State != "TIMEOUT" || got[1].State != "COMPLETED" {
		t.Errorf("states: 1 %s, 4 %s, 5 %s", got[1].State, got[4].State, got[5].State)
	}
	if got[6].State != "PENDING" || got[6].Start != -1 {
		t.Errorf("job 6 = %+v, want never started", got[6])
	}
}

func TestEngineRequeueRerunsFullRuntime(t *testing.T) {
	p := newFCFS(2)
	p.preemptAt, p.preemptID = 40, 1
	got := runEngine(t, sim.EngineConfig{}, p,
		job(1, 0, 100, 2, 1000),
		job(2, 40, 10, 2, 1000),
	)
	// at 40 job 1 is requeued (behind job 2 in this FCFS): job 2 runs
	// [40, 50], job 1 re-runs its full 100 s from 50.
	if r := got[1]; r.Start != 50 || r.End != 150 || r.Requeues != 1 || r.State != "COMPLETED" {
		t.Errorf("requeued job = %+v, want start 50 end 150 requeues 1", r)
	}
	if r := got[2]; r.Start != 40 {
		t.Errorf("preemptor started at %d, want 40", r.Start)
	}
}

func TestEngineSkipsPassesThatCannotChangeAnything(t *testing.T) {
	// One long job fills the machine; many later submits cannot start
	// before it ends: those passes are provably useless.
	jobs := []sim.Job{job(1, 0, 10000, 4, 10000)}
	for i := int64(2); i <= 101; i++ {
		jobs = append(jobs, job(i, i, 10, 4, 10))
	}
	p := newFCFS(4)
	e := sim.NewEngine(sim.EngineConfig{BackfillInterval: 30, CalcPeriod: 300}, p, jobs)
	if _, _, err := e.Run(); err != nil {
		t.Fatal(err)
	}
	st := e.Stats()
	if p.passes > 110 || st.SkippedPasses < 100 {
		t.Errorf("passes run %d, skipped %d: want about one per job end and >= 100 skipped", p.passes, st.SkippedPasses)
	}
	t.Logf("events %d passes %d skipped %d recalcs %d", st.Events, st.Passes, st.SkippedPasses, st.Recalcs)
}

func TestEngineDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var jobs []sim.Job
	for i := int64(1); i <= 2000; i++ {
		jobs = append(jobs, job(i, i*int64(rng.Intn(40)), int64(rng.Intn(3000)), 1+rng.Intn(16), int64(500+rng.Intn(3000))))
	}
	sortJobs(jobs)
	encode := func() []byte {
		res, samples, err := sim.NewEngine(sim.EngineConfig{BackfillInterval: 30, CalcPeriod: 300}, newFCFS(32), jobs).Run()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(struct {
			R []sim.JobResult
			S []sim.Sample
		}{res, samples})
		return b
	}
	if a, b := encode(), encode(); !bytes.Equal(a, b) {
		t.Error("two runs of the same inputs differ")
	}
}

func sortJobs(jobs []sim.Job) {
	for i := 1; i < len(jobs); i++ {
		for k := i; k > 0 && (jobs[k].Submit < jobs[k-1].Submit || jobs[k].Submit == jobs[k-1].Submit && jobs[k].ID < jobs[k-1].ID); k-- {
			jobs[k], jobs[k-1] = jobs[k-1], jobs[k]
		}
	}
}

// TestEngineSubmitsInTimeOrderWhateverTheTraceOrder checks that a trace
// not sorted by submit time is submitted in time order (ties in trace
// order), with the results reported in trace order.
func TestEngineSubmitsInTimeOrderWhateverTheTraceOrder(t *testing.T) {
	sorted := []sim.Job{job(1, 0, 100, 4, 1000), job(2, 10, 50, 4, 1000), job(3, 10, 20, 4, 1000), job(4, 20, 30, 4, 1000)}
	shuffled := []sim.Job{sorted[3], sorted[1], sorted[0], sorted[2]}
	want := runEngine(t, sim.EngineConfig{}, newFCFS(4), sorted...)
	res, _, err := sim.NewEngine(sim.EngineConfig{}, newFCFS(4), shuffled).Run()
	if err != nil {
		t.Fatal(err)
	}
	for k, r := range res {
		if r.ID != shuffled[k].ID {
			t.Fatalf("result %d is job %d, want job %d (trace order)", k, r.ID, shuffled[k].ID)
		}
		if w := want[r.ID]; r.Start != w.Start || r.End != w.End {
			t.Errorf("job %d ran [%d, %d], want [%d, %d] as from the sorted trace", r.ID, r.Start, r.End, w.Start, w.End)
		}
	}
	// FCFS on 4 CPUs: 1 [0,100], 2 [100,150], 3 [150,170], 4 [170,200]
	if w := want[3]; w.Start != 150 || w.End != 170 {
		t.Errorf("sorted run: job 3 ran [%d, %d], want [150, 170]", w.Start, w.End)
	}
}
