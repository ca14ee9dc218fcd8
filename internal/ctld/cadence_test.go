package ctld

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// prioCalcConf: multifactor priority with fair-share only, recomputed
// every minute (PriorityCalcPeriod=1, as on the oracle). The test clock
// jumps a minute: SlurmdTimeout=0 keeps the node up.
const prioCalcConf = `SlurmdTimeout=0
PriorityType=priority/multifactor
PriorityWeightAge=0
PriorityWeightJobSize=0
PriorityWeightFairshare=100000
PriorityCalcPeriod=1`

// sprioText runs sprio with a format on the loop.
func (c *cluster) sprioText(format string) string {
	c.t.Helper()
	res, err := c.ctl.do(context.Background(), func(ls *loopState) (any, error) {
		return ls.sprio(api.SprioRequest{Format: format, NoHeader: true})
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return res.(api.TextResponse).Text
}

// sshareText runs `sshare -a -P -n -o format` on the loop.
func (c *cluster) sshareText(format ...string) string {
	c.t.Helper()
	res, err := c.ctl.do(context.Background(), func(ls *loopState) (any, error) {
		return ls.sshare(root, api.SshareRequest{All: true, Parsable2: true, NoHeader: true, Format: format})
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return res.(api.TextResponse).Text
}

// TestFairShareWaitsForCalcPeriod: a user added with sacctmgr has no
// fair-share factor until the next PriorityCalcPeriod pass, as in Slurm
// 24.11 (oracle: sshare shows FairShare 0.000000 with an empty NormUsage
// and sprio FAIRSHARE 0 for the new association, and the values appear
// at the pass a minute later). The shares themselves apply at once.
func TestFairShareWaitsForCalcPeriod(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Now().Truncate(time.Minute)}
	store := acctStore(t, "test", `
add account research Fairshare=10
add user root account=research`)
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: prioCalcConf, acct: store, now: clock.now})
	if _, err := c.client.Sacctmgr(c.ctx(), api.SacctmgrRequest{Args: []string{"-i", "add", "user", "alice",
		"account=research", "Fairshare=3"}}); err != nil {
		t.Fatal(err)
	}
	full := c.submit(c.wrap("sleep 300", func(s *api.JobSpec) { s.Account, s.CPUsPerTask = "research", 2 }))
	c.waitState(full, "RUNNING", 10*time.Second)
	id := c.submitAs(alice, c.wrap("true", func(s *api.JobSpec) { s.Account = "research" }))
	c.eventually(5*time.Second, "job eligible", func() bool { return c.sprioText("%i") != "" })
	cols := []string{"Account", "User", "NormShares", "NormUsage", "FairShare"}
	if got, want := c.sprioText("%i %u %F"), " alice 0\n"; !strings.HasSuffix(got, want) {
		t.Errorf("sprio before the pass: %q, want FAIRSHARE 0 for job %d", got, id)
	}
	if got := c.sshareText(cols...); !strings.Contains(got, " research|alice|0.750000||0.000000\n") {
		t.Errorf("sshare before the pass: alice must show her new shares and no factors:\n%s", got)
	}
	clock.advance(61 * time.Second)
	c.eventually(5*time.Second, "the PriorityCalcPeriod pass", func() bool {
		return strings.Contains(c.sshareText(cols...), " research|alice|0.750000|0.000000|0.666667\n")
	})
	if got, want := c.sprioText("%i %u %F"), " alice 66667\n"; !strings.HasSuffix(got, want) {
		t.Errorf("sprio after the pass: %q, want FAIRSHARE 66667", got)
	}
}

// TestBackfillRunsEveryInterval: the main scheduler cannot start a small
// job queued behind a blocked big one; backfill starts it at its next
// pass, bf_interval after the last one (the controller's start for the
// first), and before that pass neither job has an expected start
// (squeue --start: N/A). Oracle (Slurm 24.11, one node): the small job
// stayed PD (Priority) with START_TIME N/A until the first backfill
// pass, 30 s after slurmctld started, then ran; the big job then expected
// the running job's exact end.
func TestBackfillRunsEveryInterval(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Now().Truncate(time.Minute)}
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, now: clock.now,
		extra: "SlurmdTimeout=0\nSchedulerParameters=bf_interval=30"})
	limit := func(sec int64, cpus int) func(*api.JobSpec) {
		return func(s *api.JobSpec) { s.TimeLimitSec, s.NTasks = sec, cpus }
	}
	run := c.submit(c.wrap("sleep 300", limit(300, 1)))
	c.waitState(run, "RUNNING", 10*time.Second)
	big := c.submit(c.wrap("true", limit(300, 2)))
	small := c.submit(c.wrap("sleep 300", limit(60, 1)))
	c.eventually(5*time.Second, "the main scheduler's verdict", func() bool {
		return c.job(small).Reason == "Priority" && c.job(big).Reason == "Resources"
	})
	clock.advance(29 * time.Second)
	time.Sleep(200 * time.Millisecond) // a few timer ticks: no backfill pass yet
	for _, id := range []uint32{big, small} {
		if j := c.job(id); j.State != "PENDING" || !j.ExpectedStart.IsZero() {
			t.Fatalf("job %d before the first backfill pass: %s, expected start %v; want PENDING, none", id, j.State, j.ExpectedStart)
		}
	}
	clock.advance(2 * time.Second)
	c.waitState(small, "RUNNING", 5*time.Second)
	want := c.job(run).StartTime.Add(300 * time.Second)
	if got := c.job(big).ExpectedStart; !got.Equal(want) {
		t.Errorf("big job's expected start %v, want the running job's end %v", got, want)
	}
}

// TestBackfillMark: the next backfill pass is due bf_interval after the
// last one was due, not after the tick that ran it.
func TestBackfillMark(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 26, 16, 38, 27, 0, time.UTC)
	iv := 15 * time.Second
	for _, tc := range []struct {
		name      string
		now, want time.Duration // after start
	}{
		{"on time", 15 * time.Second, 15 * time.Second},
		{"a tick late", 15*time.Second + 900*time.Millisecond, 15 * time.Second},
		{"an interval late", 31 * time.Second, 31 * time.Second},
	} {
		if got := backfillMark(start, start.Add(tc.now), iv); !got.Equal(start.Add(tc.want)) {
			t.Errorf("%s: mark %v, want %v", tc.name, got.Sub(start), tc.want)
		}
	}
}

// TestBatchPassAt: with Options.BatchCadence a submission waits for
// slurmctld's next once-a-second tick, batch_sched_delay whole seconds
// after the previous submission pass (oracle, slurmctld.log: jobs
// submitted at :44.285, :45.028 and :47.291 are allocated at :45.005,
// :48.005 and :48.007; one at :48.065 at :51.005; the first after a
// start at :43.27 at :44.005).
func TestBatchPassAt(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02T15:04:05.000", "2026-11-26T17:34:"+s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct{ now, last, want string }{
		{"43.270", "", "44.000"},
		{"44.285", "00.005", "45.000"},
		{"45.028", "45.005", "48.000"},
		{"47.291", "45.005", "48.000"},
		{"48.065", "48.005", "51.000"},
		{"52.000", "48.005", "52.000"},
	} {
		var last time.Time
		if c.last != "" {
			last = at(c.last)
		}
		if got := batchPassAt(at(c.now), last, 3*time.Second); !got.Equal(at(c.want)) {
			t.Errorf("submitted at %s, last pass %s: pass at %s, want %s", c.now, c.last, got.Format("05.000"), c.want)
		}
	}
}

// TestSubmitWaitsForBatchPass: with Slurm's batch cadence (Options.
// BatchCadence), a job submitted right after an array gets the next
// id, before the array's tasks start and take theirs (oracle,
// array-throttle: arr is 1, arr2 is 2, arr's tasks 3 and 4).
func TestSubmitWaitsForBatchPass(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, batchCadence: true})
	// Submit just after a whole second, so that the pass on the next one
	// finds both jobs queued (a burst straddling a second is judged in two
	// passes, as in slurmctld).
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 50*time.Millisecond).Sub(now))
	arr := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.Array = "0-1" }))
	next := c.submit(c.wrap("sleep 30"))
	if next != arr+1 {
		t.Fatalf("second submission got %d, want %d", next, arr+1)
	}
	if j, _ := c.jobByID(next); j.State != "PENDING" {
		t.Fatalf("job %d is %s before the delay", next, j.State)
	}
	c.eventually(10*time.Second, "array task split off with the next id", func() bool {
		j, ok := c.jobByID(next + 1)
		return ok && j.ArrayJobID == arr && j.State == "RUNNING"
	})
	c.control("cancel", idStr(arr), idStr(next))
}
