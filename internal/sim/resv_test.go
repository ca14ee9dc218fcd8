package sim_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sim"
)

// resvConf is two 4-CPU nodes with backfill and 2 matlab licenses.
const resvConf = `ClusterName=resv
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=bf_interval=30,bf_resolution=60
Licenses=matlab:2
NodeName=n[1-2] CPUs=4 RealMemory=4000 State=IDLE
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`

// maintWindow is a maintenance window of every node two hours into the
// trace, for one hour.
const maintWindow = `# maintenance, two hours in
scontrol create reservation ReservationName=maint StartTime=now+2hours Duration=1:00:00 Nodes=ALL Flags=MAINT Users=root
`

// resvJob is a trace job: id, submit, runtime, CPUs, time limit (s).
func resvJob(id, submit, runtime int64, cpus int, limit int64, mods ...func(*api.JobSpec)) sim.Job {
	j := sim.Job{ID: id, Submit: submit, Runtime: runtime, JobSpec: &api.JobSpec{NTasks: cpus, TimeLimitSec: limit, User: "u", Account: "acct"}}
	for _, m := range mods {
		m(j.JobSpec)
	}
	return j
}

// simulate replays jobs on resvConf with the reservations text ("" =
// none) and returns the run and each job's result by id.
func simulate(t *testing.T, reservations string, jobs ...sim.Job) (sim.Run, map[int64]sim.JobResult) {
	t.Helper()
	dir := t.TempDir()
	setup := sim.Setup{Conf: filepath.Join(dir, "resv.conf")}
	if err := os.WriteFile(setup.Conf, []byte(resvConf), 0o644); err != nil {
		t.Fatal(err)
	}
	if reservations != "" {
		setup.Reservations = filepath.Join(dir, "resv.txt")
		if err := os.WriteFile(setup.Reservations, []byte(reservations), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run, err := sim.Simulate(setup, sim.Options{Trace: &sim.Trace{Format: "jsonl", Jobs: jobs}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]sim.JobResult{}
	for _, r := range run.Jobs {
		out[r.ID] = r
	}
	return run, out
}

// TestSimMaintenanceWindow: with a MAINT window of the whole cluster from
// 2 h to 3 h, a job whose 3 h limit would run into it waits until the
// window ends, a job whose 1 h limit ends before it is backfilled right
// after the first job, and the report shows the window: 8 CPUs for an hour,
// all of it idle. Without the window the long job starts at 30 min.
func TestSimMaintenanceWindow(t *testing.T) {
	jobs := []sim.Job{
		resvJob(1, 0, 1800, 8, 3600),
		resvJob(2, 60, 7200, 4, 3*3600),
		resvJob(3, 60, 1800, 4, 3600),
	}
	_, free := simulate(t, "", jobs...)
	if free[2].Start != 1800 || free[3].Start != 1800 {
		t.Fatalf("without a window: starts %d and %d, want 1800 and 1800", free[2].Start, free[3].Start)
	}
	run, res := simulate(t, maintWindow, jobs...)
	t.Logf("with the window: job 2 starts at %d s, job 3 at %d s", res[2].Start, res[3].Start)
	if res[2].Start != 3*3600 {
		t.Errorf("long job starts at %d, want 10800 (the end of the window)", res[2].Start)
	}
	// The main pass stops at the blocked long job; the next backfill pass
	// (bf_interval=30) starts the short one.
	if res[3].Start != 1830 || !res[3].Backfill {
		t.Errorf("short job starts at %d (backfill %v), want 1830 by backfill", res[3].Start, res[3].Backfill)
	}
	rr := run.Reservations
	if rr == nil || len(rr.Windows) != 1 {
		t.Fatalf("report reservations: %+v", rr)
	}
	w := rr.Windows[0]
	if w.Name != "maint" || w.Start != 7200 || w.End != 10800 || w.CPUs != 8 || w.Flags != "MAINT,SPEC_NODES,ALL_NODES" ||
		w.Allocated != 0 || w.Idle != 8*3600 || rr.IdleShare != 1 {
		t.Errorf("window %+v, idle share %.2f; want maint 7200..10800, 8 CPUs, MAINT,SPEC_NODES,ALL_NODES (Nodes=ALL, as slurmctld prints it), all idle", w, rr.IdleShare)
	}
	summary := sim.ReservationSummary(run)
	t.Logf("%s", summary)
	if !strings.Contains(summary, "1 windows, 8.0 CPU-hours reserved") || !strings.Contains(summary, "100.0% of it idle") {
		t.Errorf("summary:\n%s", summary)
	}
	var html bytes.Buffer
	if err := sim.WriteReport(&html, sim.ReportInput{Runs: []sim.Run{run}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "<h2>Reservations</h2>") || !strings.Contains(html.String(), "<td>maint</td>") {
		t.Errorf("HTML report lacks the reservations table")
	}
}

// TestSimUserReservationAndLicenses: jobs asking for a reservation of
// one node run there and are counted as its allocated time; jobs with
// -L matlab:2 run one at a time on a cluster with Licenses=matlab:2.
func TestSimUserReservationAndLicenses(t *testing.T) {
	book := "scontrol create reservation ReservationName=team StartTime=now Duration=2:00:00 Nodes=n1 Users=u\n"
	inResv := func(s *api.JobSpec) { s.Reservation = "team" }
	matlab := func(s *api.JobSpec) { s.Licenses = "matlab:2" }
	run, res := simulate(t, book,
		resvJob(1, 0, 3600, 4, 3600, inResv),
		resvJob(2, 0, 600, 1, 3600, matlab),
		resvJob(3, 0, 600, 1, 3600, matlab),
	)
	if res[1].Start != 0 || res[2].Start != 0 || res[3].Start != 600 {
		t.Errorf("starts %d %d %d, want 0 0 600 (the second matlab:2 job waits for the licenses)", res[1].Start, res[2].Start, res[3].Start)
	}
	rr := run.Reservations
	if rr == nil || len(rr.Windows) != 1 || rr.Windows[0].Allocated != 4*3600 || rr.Windows[0].Idle != 4*3600 {
		t.Fatalf("team window: %+v", rr)
	}
}

// TestSimReservationsJSONL: the reservations file may hold JSON objects
// (StartTime in seconds from the trace's start): the same maintenance
// window as the scontrol line gives the same replay; a bad line is named.
func TestSimReservationsJSONL(t *testing.T) {
	jobs := []sim.Job{resvJob(1, 0, 1800, 8, 3600), resvJob(2, 60, 7200, 4, 3*3600)}
	text := `{"ReservationName":"maint","StartTime":7200,"Duration":"1:00:00","Nodes":"ALL","Flags":"MAINT","Users":"root"}` + "\n"
	run, res := simulate(t, text, jobs...)
	if res[2].Start != 3*3600 || run.Reservations == nil || run.Reservations.Windows[0].Start != 7200 {
		t.Errorf("JSONL window: job 2 starts at %d, reservations %+v", res[2].Start, run.Reservations)
	}
	dir := t.TempDir()
	conf, bad := filepath.Join(dir, "c.conf"), filepath.Join(dir, "r.jsonl")
	os.WriteFile(conf, []byte(resvConf), 0o644)
	os.WriteFile(bad, []byte("# ok\n{\"ReservationName\":[1]}\n"), 0o644)
	_, err := sim.Simulate(sim.Setup{Conf: conf, Reservations: bad}, sim.Options{Trace: &sim.Trace{Jobs: jobs}})
	if err == nil || !strings.Contains(err.Error(), "line 2: ReservationName: a string or a number is needed") {
		t.Errorf("bad JSON line: %v", err)
	}
}
