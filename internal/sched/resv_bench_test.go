package sched

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/resv"
)

// withReservations adds to a generated workload a MAINT window over 5% of
// the nodes starting in two hours, a DAILY team reservation of 2% of the
// nodes (jobs of user00 and user01 ask for it, one in ten), and a
// MAGNETIC one of 1% for user02.
func withReservations(tb testing.TB, w *BenchWorkload) {
	st := w.State
	n := len(st.Cluster.Nodes)
	lines := []string{
		fmt.Sprintf("create reservation ReservationName=maint StartTime=now+2hours Duration=4:00:00 Nodes=%s Users=root Flags=MAINT,IGNORE_JOBS",
			nodeRange(st, 0, n/20)),
		fmt.Sprintf("create reservation ReservationName=team StartTime=now+30minutes Duration=8:00:00 Nodes=%s Users=user00,user01 Flags=DAILY,IGNORE_JOBS",
			nodeRange(st, n/20, n/20+n/50)),
		fmt.Sprintf("create reservation ReservationName=mag StartTime=now Duration=1-00:00:00 Nodes=%s Users=user02 Flags=MAGNETIC,IGNORE_JOBS",
			nodeRange(st, n/20+n/50, n/20+n/50+n/100)),
	}
	for _, l := range lines {
		if _, err := st.ReservationCommand(resv.SplitLine(l), true, w.Now, time.UTC); err != nil {
			tb.Fatalf("%s: %v", l, err)
		}
	}
	k := 0
	for _, j := range w.pending {
		if j.User == "user00" || j.User == "user01" {
			if k++; k%10 == 0 {
				j.Req.Reservation = "team"
			}
		}
	}
}

func nodeRange(st *State, lo, hi int) string {
	idx := make([]int32, 0, hi-lo)
	for i := lo; i < max(hi, lo+1); i++ {
		idx = append(idx, int32(i))
	}
	return joinNames(st.Cluster.NodeNames(idx))
}

func joinNames(ns []string) string {
	out := ""
	for i, n := range ns {
		if i > 0 {
			out += ","
		}
		out += n
	}
	return out
}

// BenchmarkCycleWithReservations is BenchmarkCycle's workload (5,000
// nodes, 50,000 pending jobs) with three reservations (MAINT, DAILY team,
// MAGNETIC) and a share of the jobs asking for one; compare with
// BenchmarkCycle for the cost of reservations.
//
//	go test ./internal/sched -run '^$' -bench 'BenchmarkCycle' -benchtime 3x
func BenchmarkCycleWithReservations(b *testing.B) {
	w, err := NewBenchWorkload(BenchSpec{Nodes: 5000, Jobs: 50000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	withReservations(b, w)
	b.ResetTimer()
	var plan Plan
	for i := 0; i < b.N; i++ {
		plan = w.Cycle()
	}
	b.StopTimer()
	b.ReportMetric(float64(w.Planned(&plan)), "planned")
	b.ReportMetric(float64(len(plan.Starts)), "starts")
}

// TestBenchWorkloadWithReservations: on a small generated workload with
// reservations every pending job is started, planned or has a reason, and
// no job is started on reserved nodes it may not use.
func TestBenchWorkloadWithReservations(t *testing.T) {
	w, err := NewBenchWorkload(BenchSpec{Nodes: 200, Jobs: 2000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	withReservations(t, w)
	plan := w.Cycle()
	st := w.State
	for _, s := range plan.Starts {
		j := st.Job(s.Job)
		end := w.Now.Add(s.TimeLimit)
		for _, e := range st.resvs.list {
			if mayUse(j, e) || !nodesMeet(s.Alloc.Nodes, e.nodes) {
				continue
			}
			if len(e.R.Occurrences(w.Now, end, 1)) > 0 {
				t.Fatalf("job %d (%s) started on %s's nodes", j.ID, j.User, e.R.Name)
			}
		}
	}
	inTeam := 0
	for _, s := range plan.Starts {
		if st.Job(s.Job).Req.Reservation == "team" {
			inTeam++
		}
	}
	unexplained := 0
	for _, p := range plan.Pending {
		if p.ExpectedStart.IsZero() && (p.Reason == ReasonNone || p.Reason == "") {
			unexplained++
		}
	}
	t.Logf("started %d (backfilled %d), planned %d, %d started in reservation team (not active yet), %d pending without plan or reason",
		len(plan.Starts), plan.Stats.Backfilled, w.Planned(&plan), inTeam, unexplained)
	if unexplained != 0 {
		t.Fatalf("%d pending jobs have neither an expected start nor a reason", unexplained)
	}
	if inTeam != 0 {
		t.Fatal("jobs started in a reservation before its window")
	}
}
