package ctld

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// resvCmd runs one scontrol reservation command through the API.
func (c *cluster) resvCmd(words ...string) (string, error) {
	res, err := c.client.ReservationCommand(c.ctx(), api.ResvCommandRequest{Words: words})
	return res.Text, err
}

// mustResv runs a reservation command that must succeed.
func (c *cluster) mustResv(words ...string) string {
	c.t.Helper()
	out, err := c.resvCmd(words...)
	if err != nil {
		c.t.Fatalf("%s: %v", strings.Join(words, " "), err)
	}
	return out
}

// TestReservationsSurviveRestart: reservations are stored before
// scontrol is answered and restored before the jobs on recovery, so a
// job waiting for one keeps waiting for it after a restart, and a job
// held by a deletion stays held (ReservationDeleted).
func TestReservationsSurviveRestart(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b backend) {
		c := newCluster(t, b.open(t), clusterOpts{nodes: 2})
		if out := c.mustResv("create", "reservation", "ReservationName=r", "StartTime=now+1hour", "Duration=1:00:00",
			"Nodes=n1", "Users=root"); out != "Reservation created: r\n" {
			t.Fatalf("create: %q", out)
		}
		c.mustResv("create", "reservation", "ReservationName=gone", "StartTime=now+1hour", "Duration=1:00:00",
			"Nodes=n2", "Users=root")
		waiting := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Reservation = "r" }))
		held := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Reservation = "gone" }))
		c.eventually(5*time.Second, "jobs pending (Reservation)", func() bool {
			a, _ := c.jobByID(waiting)
			b, _ := c.jobByID(held)
			return a.Reason == "Reservation" && b.Reason == "Reservation"
		})
		c.mustResv("delete", "ReservationName=gone")
		show := c.mustResv("show", "reservation")

		c.ctl.Close()
		c.startController()
		if got := c.mustResv("show", "reservation"); got != show {
			t.Errorf("reservations after restart:\n%s\nwant:\n%s", got, show)
		}
		c.eventually(5*time.Second, "waiting job still waits for r", func() bool {
			j, ok := c.jobByID(waiting)
			return ok && j.State == "PENDING" && j.Reason == "Reservation" && j.Reservation == "r"
		})
		if j, _ := c.jobByID(held); j.Reason != "ReservationDeleted" || j.Hold != "user" {
			t.Errorf("held job after restart: reason %q hold %q", j.Reason, j.Hold)
		}
		if _, err := c.resvCmd("create", "reservation", "ReservationName=r", "StartTime=now+3hours", "Duration=10",
			"Nodes=n2", "Users=root"); err == nil || err.Error() != "Duplicate reservation name" {
			t.Errorf("duplicate after restart: %v", err)
		}
	})
}

// TestReservationPurgedAtEnd: a reservation ends, the controller's timer
// purges it, and accounting keeps it: the job that ran in it carries its
// name (sacct --reservation) and sreport reservation utilization still
// lists it with the CPU time the job used.
func TestReservationPurgedAtEnd(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2})
	start := time.Now()
	c.mustResv("create", "reservation", "ReservationName=short", "StartTime=now", "EndTime=now+3seconds",
		"Nodes=n1", "Users=root")
	id := c.submit(c.wrap("sleep 1", func(s *api.JobSpec) { s.Reservation = "short"; s.TimeLimitSec = 60 }))
	c.waitState(id, "COMPLETED", 10*time.Second)
	c.eventually(10*time.Second, "reservation purged", func() bool {
		out, err := c.resvCmd("show", "reservation")
		return err == nil && out == "No reservations in the system\n"
	})
	acct, err := c.client.Accounting(c.ctx())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range acct.Records {
		if r.JobID == id && r.Step == "" {
			found = r.Reservation == "short"
		}
	}
	if !found {
		t.Errorf("job %d's accounting record lacks reservation short: %+v", id, acct.Records)
	}
	util, err := c.client.ReservationUtilization(c.ctx(), start.Add(-time.Minute), time.Now().Add(time.Minute), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sreport reservation utilization:\n%s", util.Text)
	if !strings.Contains(util.Text, "|short|") {
		t.Errorf("utilization lacks the purged reservation:\n%s", util.Text)
	}
}

// TestReservedNodeStates: inside an active window an idle node of a MAINT
// reservation shows as MAINT (sinfo maint), of another reservation as
// RESERVED (resv), and a busy node in a MAINT reservation gets sinfo's
// '$' suffix; scontrol show job names the reservation and the licenses.
func TestReservedNodeStates(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 3, extra: "Licenses=matlab:4\n"})
	c.mustResv("create", "reservation", "ReservationName=m", "StartTime=now", "Duration=1:00:00", "Nodes=n1",
		"Flags=MAINT", "Users=root")
	c.mustResv("create", "reservation", "ReservationName=u", "StartTime=now", "Duration=1:00:00", "Nodes=n2", "Users=root")
	states := func() map[string]string {
		res, err := c.client.Nodes(c.ctx())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, n := range res.Nodes {
			out[n.Name] = n.State + " " + n.StateShort + " " + n.StateLong
		}
		return out
	}
	want := map[string]string{"n1": "MAINT maint maintenance", "n2": "RESERVED resv reserved", "n3": "IDLE idle idle"}
	for n, w := range want {
		if got := states()[n]; got != w {
			t.Errorf("%s: %q, want %q", n, got, w)
		}
	}
	id := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.Reservation = "m"; s.Licenses = "matlab:1"; s.TimeLimitSec = 600 }))
	j := c.waitState(id, "RUNNING", 10*time.Second)
	if j.Reservation != "m" || j.Licenses != "matlab:1" || j.NodeList != "n1" {
		t.Errorf("job in m: reservation %q licenses %q on %s", j.Reservation, j.Licenses, j.NodeList)
	}
	if got := states()["n1"]; got != "MIXED+MAINT mix$ mixed$" {
		t.Errorf("busy MAINT node: %q, want MIXED+MAINT mix$ mixed$", got)
	}
	c.control("cancel", idStr(id))
}

// TestReservationWindowStartWakesScheduler: a job waiting for its
// reservation starts as soon as the window opens, not at the next
// periodic cycle (30 s here).
func TestReservationWindowStartWakesScheduler(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2})
	c.mustResv("create", "reservation", "ReservationName=soon", "StartTime=now+2seconds", "Duration=10",
		"Nodes=n1", "Users=root")
	start := time.Now()
	id := c.submit(c.wrap("sleep 5", func(s *api.JobSpec) { s.Reservation = "soon"; s.TimeLimitSec = 60 }))
	c.eventually(2*time.Second, "job pending (Reservation)", func() bool {
		j, _ := c.jobByID(id)
		return j.Reason == "Reservation"
	})
	j := c.waitState(id, "RUNNING", 10*time.Second)
	if wait := time.Since(start); wait > 6*time.Second || j.NodeList != "n1" {
		t.Errorf("job started after %v on %s, want within seconds of the window on n1", wait, j.NodeList)
	}
	c.control("cancel", idStr(id))
}

// TestLicenseTRESTracked: with AccountingStorageTRES=license/matlab a
// job's requested and allocated TRES, in squeue/scontrol and in its
// accounting record, carry license/matlab as Slurm's do.
func TestLicenseTRESTracked(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: "Licenses=matlab:4\nAccountingStorageTRES=license/matlab\n"})
	id := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.Licenses = "matlab:2" }))
	j := c.waitState(id, "RUNNING", 10*time.Second)
	if !strings.Contains(j.ReqTRES, "license/matlab=2") || !strings.Contains(j.AllocTRES, "license/matlab=2") {
		t.Errorf("job TRES: req %q alloc %q, want license/matlab=2 in both", j.ReqTRES, j.AllocTRES)
	}
	acct, err := c.client.Accounting(c.ctx())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range acct.Records {
		if r.JobID == id && r.Step == "" && !strings.Contains(r.AllocTRES, "license/matlab=2") {
			t.Errorf("accounting AllocTRES %q lacks license/matlab=2", r.AllocTRES)
		}
	}
	c.control("cancel", idStr(id))
}
