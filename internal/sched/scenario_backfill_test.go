package sched

import (
	"testing"
	"time"
)

// Backfill scenarios: SCENARIOS.md S8 and the shape of Slurm's expect
// test7.22.

// s8Conf: four 4-CPU nodes; partition batch has DefaultTime=20 minutes,
// partition long has no DefaultTime and MaxTime=4 hours.
const s8Conf = `ClusterName=s8
SlurmctldHost=ctl
SelectTypeParameters=CR_CPU
NodeName=node[1-4] CPUs=4 RealMemory=16000
PartitionName=batch Nodes=ALL Default=YES DefaultTime=00:20:00 MaxTime=INFINITE State=UP
PartitionName=long Nodes=ALL MaxTime=04:00:00 State=UP
`

func planned(h *harness, id JobID) (time.Time, []string) {
	j := h.job(id)
	return j.ExpectedStart, h.st.Cluster.NodeNames(j.PlannedNodes)
}

func backfilled(p Plan, id JobID) bool {
	for _, s := range p.Starts {
		if s.Job == id {
			return s.Backfill
		}
	}
	return false
}

// TestS8Backfill: with a big high-priority job waiting for the running
// job to end, a short job that ends before the big job's planned start
// starts at once; one whose --time would delay it does not; a job without
// --time gets its partition's DefaultTime (or MaxTime) and is backfilled
// only where that fits.
func TestS8Backfill(t *testing.T) {
	h := newHarness(t, s8Conf)
	run := h.mustSubmit("u", "-N 3 --exclusive --time=1:00:00")
	h.expectState(run.ID, JobRunning, "")
	big := h.submitWithPriority("u", "-N 4 --exclusive --time=1:00:00", 1000)
	h.schedule()
	h.expectState(big.ID, JobPending, ReasonResources)
	bigStart, bigNodes := planned(h, big.ID)
	if !bigStart.Equal(t0.Add(time.Hour)) || len(bigNodes) != 4 {
		t.Fatalf("big job planned at %v on %v, want %v on all 4 nodes", bigStart, bigNodes, t0.Add(time.Hour))
	}
	t.Logf("big job %d: expected start %s on %v", big.ID, bigStart.Format(time.TimeOnly), bigNodes)

	cases := []struct {
		name  string
		opts  string
		start bool
	}{
		{"short job ends before the big job's start", "-N 1 --time=00:30:00", true},
		{"long job would delay the big job", "-N 1 --time=02:00:00", false},
		{"no --time: DefaultTime 20 min fits", "-N 1", true},
		{"no --time in long: MaxTime 4 h does not fit", "-p long -N 1", false},
	}
	for _, tc := range cases {
		j := h.submitWithPriority("u", tc.opts, 10)
		h.schedule()
		got := j.State.Base() == JobRunning
		if got != tc.start {
			t.Fatalf("%s: running=%v, want %v (reason %s)", tc.name, got, tc.start, j.Reason)
		}
		if got && !backfilled(h.lastPlan, j.ID) && j.StartTime.Equal(h.now) {
			// started in an earlier cycle of this submission: check the flag there
			t.Logf("%s: job %d started at %s", tc.name, j.ID, j.StartTime.Format(time.TimeOnly))
		}
		if !got {
			s, n := planned(h, j.ID)
			if s.Before(bigStart.Add(time.Hour)) {
				t.Fatalf("%s: planned at %v, must come after the big job ends %v", tc.name, s, bigStart.Add(time.Hour))
			}
			t.Logf("%s: job %d pending (%s), expected start %s on %v", tc.name, j.ID, j.Reason, s.Format(time.TimeOnly), n)
		} else {
			t.Logf("%s: job %d backfilled, limit %v", tc.name, j.ID, j.TimeLimit)
		}
		if s, _ := planned(h, big.ID); !s.Equal(bigStart) {
			t.Fatalf("%s: the big job's planned start moved from %v to %v", tc.name, bigStart, s)
		}
	}
	h.advance(time.Hour)
	h.expectState(big.ID, JobRunning, "")
}

// TestTest7_22Shape is expect test7.22's shape: with N nodes, job A holds
// N-1 nodes for 3 bf_interval; B wants all N nodes at higher priority; C
// wants one node at lower priority (nice). C is backfilled before B if its
// limit ends before A's, and not if it would delay B.
func TestTest7_22Shape(t *testing.T) {
	const bfInterval = 30 * time.Second
	for _, tc := range []struct {
		name  string
		limit time.Duration
		start bool
	}{
		{"C limit = bf_interval starts before B", bfInterval, true},
		{"C limit = 5 bf_interval waits for B", 5 * bfInterval, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, cpuConf(4, 4, "SchedulerParameters=bf_interval=30,bf_resolution=1"))
			h.st.Config.Backfill.Resolution = time.Second
			a := h.mustSubmit("u", "-N 3 --exclusive --time=00:01:30")
			b := h.submitWithPriority("u", "-N 4 --exclusive --time=00:01:00", 100)
			c := h.submitWithPriority("u", "-N 1 --exclusive --time="+durSpec(tc.limit), 1)
			h.schedule()
			h.expectState(a.ID, JobRunning, "")
			h.expectState(b.ID, JobPending, ReasonResources)
			if got := c.State.Base() == JobRunning; got != tc.start {
				t.Fatalf("C running=%v, want %v", got, tc.start)
			}
			h.advance(90 * time.Second)
			h.expectState(b.ID, JobRunning, "")
			if !b.StartTime.Equal(t0.Add(90 * time.Second)) {
				t.Fatalf("B started at %v, want when A ends", b.StartTime)
			}
			if tc.start && !c.StartTime.Before(b.StartTime) || !tc.start && c.StartTime.Before(b.StartTime) && !c.StartTime.IsZero() {
				t.Fatalf("C started %v, B started %v", c.StartTime, b.StartTime)
			}
			t.Logf("A end %s, B start %s, C start %v", a.EndTime.Format(time.TimeOnly), b.StartTime.Format(time.TimeOnly), c.StartTime.Format(time.TimeOnly))
		})
	}
}

func durSpec(d time.Duration) string {
	s := int(d / time.Second)
	return twoDigits(s/3600) + ":" + twoDigits(s/60%60) + ":" + twoDigits(s%60)
}

func twoDigits(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }

// TestBackfillResolutionAndWindow: reservations are rounded outward to
// bf_resolution (the expected start after running jobs is their exact
// end, as Slurm reports it), and a job that cannot start within
// bf_window gets no expected start.
func TestBackfillResolutionAndWindow(t *testing.T) {
	h := newHarness(t, cpuConf(2, 4, ""))
	h.now = t0.Add(10 * time.Second)
	r := h.mustSubmit("u", "-N 2 --exclusive --time=00:10:00")
	h.expectState(r.ID, JobRunning, "")
	// Running job ends at 09:10:10: the first job expects that; its
	// reservation ends at 09:15:10, rounded up to 09:16:00 (bf_resolution
	// 60 s), where the next one is planned.
	j := h.mustSubmit("u", "-N 2 --exclusive --time=00:05:00")
	if s, _ := planned(h, j.ID); !s.Equal(t0.Add(10*time.Minute + 10*time.Second)) {
		t.Fatalf("expected start %v, want the running job's end %v", s, t0.Add(10*time.Minute+10*time.Second))
	}
	next := h.mustSubmit("u", "-N 1 --time=00:05:00")
	if s, _ := planned(h, next.ID); !s.Equal(t0.Add(16 * time.Minute)) {
		t.Fatalf("expected start %v, want the reservation's end rounded up to %v", s, t0.Add(16*time.Minute))
	}
	h.st.Config.Backfill.Window = 5 * time.Minute
	h.schedule()
	if s, _ := planned(h, j.ID); !s.IsZero() {
		t.Fatalf("outside bf_window: expected start %v, want none", s)
	}
}

// TestBackfillCaps: bf_max_job_test, bf_max_job_user and bf_max_job_part
// bound how many jobs a cycle plans.
func TestBackfillCaps(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*BackfillParams)
		want int
	}{
		{"whole queue", func(*BackfillParams) {}, 6},
		{"bf_max_job_test=2", func(b *BackfillParams) { b.MaxJobTest = 2 }, 2},
		{"bf_max_job_user=3", func(b *BackfillParams) { b.MaxJobUser = 3 }, 3},
		{"bf_max_job_part=4", func(b *BackfillParams) { b.MaxJobPart = 4 }, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, cpuConf(1, 4, ""))
			h.mustSubmit("u", "-n 4 --time=1:00:00")
			tc.set(&h.st.Config.Backfill)
			var ids []JobID
			for i := 0; i < 6; i++ {
				ids = append(ids, h.mustSubmit("u", "-n 4 --time=1:00:00").ID)
			}
			n := 0
			for _, id := range ids {
				if !h.job(id).ExpectedStart.IsZero() {
					n++
				}
			}
			if n != tc.want {
				t.Fatalf("%d jobs planned, want %d", n, tc.want)
			}
		})
	}
}

// TestBackfillNoReserve: a QOS NoReserve job is tested for an immediate
// start with a one-minute plan and never reserves: a lower-priority job
// may still start on the nodes it waits for.
func TestBackfillNoReserve(t *testing.T) {
	h := newHarness(t, cpuConf(2, 4, "AccountingStorageEnforce=associations,qos"))
	h.sacctmgr(`sacctmgr -i add account a
sacctmgr -i add qos standby Flags=NoReserve
sacctmgr -i add user u DefaultAccount=a
sacctmgr -i modify account a set qos+=normal,standby
`)
	run := h.mustSubmit("u", "-N 1 --exclusive --time=1:00:00")
	h.expectState(run.ID, JobRunning, "")
	sb := h.submitWithPriority("u", "--qos=standby -N 2 --exclusive --time=1:00:00", 100)
	low := h.submitWithPriority("u", "-N 1 --exclusive --time=2:00:00", 1)
	h.schedule()
	h.expectState(sb.ID, JobPending, ReasonResources)
	h.expectState(low.ID, JobRunning, "")
}

// TestBackfillTimeMin: a job with --time-min that cannot run for its
// whole --time before a reservation starts now with the largest limit
// that ends before it (at least its --time-min).
func TestBackfillTimeMin(t *testing.T) {
	h := newHarness(t, cpuConf(2, 4, ""))
	run := h.mustSubmit("u", "-N 1 --exclusive --time=1:00:00")
	big := h.submitWithPriority("u", "-N 2 --exclusive --time=1:00:00", 100)
	x := h.submitWithPriority("u", "-N 1 --exclusive --time=3:00:00 --time-min=30", 1)
	y := h.submitWithPriority("u", "-N 1 --exclusive --time=3:00:00 --time-min=90", 1)
	h.schedule()
	h.expectState(run.ID, JobRunning, "")
	h.expectState(big.ID, JobPending, ReasonResources)
	h.expectState(x.ID, JobRunning, "")
	if x.TimeLimit != time.Hour {
		t.Fatalf("time-min job started with limit %v, want 1h (the reservation's start)", x.TimeLimit)
	}
	h.expectState(y.ID, JobPending, ReasonPriority)
	t.Logf("job %d started with limit %v (--time=3:00:00 --time-min=30)", x.ID, x.TimeLimit)
}

// TestBackfillPlannedStartsOracle replays the oracle's bf_resolution
// scenario (Slurm 24.11, one 8-CPU node, bf_resolution 60 s, a job of 8
// CPUs running from 16:38:35 for 5 minutes): the job waiting for it
// expects its exact end (16:43:35), the jobs after it the ends of the
// reservations before them rounded up to the minute (16:47:00, 16:52:00,
// whole-node reservations). A main-scheduler cycle leaves those plans as
// they are and gives a job submitted since none (squeue --start: N/A)
// until the next backfill pass plans it (it then moves ahead of the
// -n6 job: 16:47:00, 16:49:00, 16:54:00).
func TestBackfillPlannedStartsOracle(t *testing.T) {
	h := newHarness(t, cpuConf(1, 8, ""))
	h.now = t0.Add(35 * time.Second)
	at := func(d string) time.Time {
		dur, err := time.ParseDuration(d)
		if err != nil {
			t.Fatal(err)
		}
		return h.now.Add(dur)
	}
	run := h.mustSubmit("u", "-n 8 --time=5:00")
	h.expectState(run.ID, JobRunning, "")
	n8t3 := h.submitWithPriority("u", "-n 8 --time=3:00", 1000)
	n6t5 := h.submitWithPriority("u", "-n 6 --time=5:00", 900)
	n2t1 := h.submitWithPriority("u", "-n 2 --time=1:00", 100)
	h.schedule()
	expectPlans := func(when string, want map[*Job]time.Time) {
		t.Helper()
		for j, w := range want {
			if !j.ExpectedStart.Equal(w) {
				t.Errorf("%s: job %d expected start %s, want %s", when, j.ID,
					j.ExpectedStart.Format(time.TimeOnly), w.Format(time.TimeOnly))
			}
		}
	}
	expectPlans("backfill pass", map[*Job]time.Time{n8t3: at("5m"), n6t5: at("8m25s"), n2t1: at("13m25s")})

	n8t2 := h.queue("u", "-n 8 --time=2:00")
	n8t2.Priority = 950
	mainOnly := h.st.Config
	mainOnly.Backfill.Enabled = false
	p := Schedule(h.st, h.now, mainOnly)
	h.st.Apply(&p)
	expectPlans("main pass", map[*Job]time.Time{n8t3: at("5m"), n6t5: at("8m25s"), n2t1: at("13m25s"), n8t2: {}})
	h.expectState(n8t2.ID, JobPending, ReasonPriority)

	h.schedule()
	expectPlans("next backfill pass", map[*Job]time.Time{n8t3: at("5m"), n8t2: at("8m25s"), n6t5: at("10m25s"), n2t1: at("15m25s")})
}

// TestBackfillPartCountReserve: bf_job_part_count_reserve=1 reserves
// resources for the first blocked job of the partition only (EASY
// backfilling). Node 1 is busy for 1 h, node 2 for 3 h; A (all four
// nodes) is planned at +3 h; B (three nodes) at +1 h on nodes 1, 3, 4;
// C (two nodes, 2 h) fits now on nodes 3 and 4 and ends before A's
// start but after B's. By default (every job reserves) C would delay B
// and waits; with the count at 1 only A is protected and C starts, and B
// has no expected start. Oracle (Slurm 24.11, same jobs on n1..n4): by
// default C pends and B expects n1's end; with bf_job_part_count_reserve=1
// C runs on n[3-4] and B shows START_TIME N/A.
func TestBackfillPartCountReserve(t *testing.T) {
	for _, tc := range []struct {
		extra string
		start bool
	}{
		{"", false},
		{",bf_job_part_count_reserve=1", true},
		{",bf_job_part_count_reserve=2", false},
	} {
		t.Run("SchedulerParameters=bf_resolution=60"+tc.extra, func(t *testing.T) {
			h := newHarness(t, cpuConf(4, 4, "SchedulerParameters=bf_resolution=60"+tc.extra+"\n"))
			h.mustSubmit("u", "-w node1 --exclusive --time=1:00:00")
			h.mustSubmit("u", "-w node2 --exclusive --time=3:00:00")
			a := h.submitWithPriority("u", "-N 4 --exclusive --time=1:00:00", 1000)
			b := h.submitWithPriority("u", "-N 3 --exclusive --time=1:00:00", 900)
			c := h.submitWithPriority("u", "-N 2 --exclusive --time=2:00:00", 10)
			h.schedule()
			h.expectState(a.ID, JobPending, ReasonResources)
			if s, _ := planned(h, b.ID); !s.Equal(t0.Add(time.Hour)) && !tc.start {
				t.Fatalf("B planned at %v, want %v", s, t0.Add(time.Hour))
			}
			if got := c.State.Base() == JobRunning; got != tc.start {
				t.Fatalf("C running=%v, want %v (reason %s)", got, tc.start, c.Reason)
			}
			if s, _ := planned(h, b.ID); s.IsZero() != tc.start {
				t.Errorf("B expected start %v; want none exactly when only A is reserved", s)
			}
		})
	}
}
