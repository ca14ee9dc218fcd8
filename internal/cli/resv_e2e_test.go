package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// End-to-end tests of advanced reservations and licenses (issue 8): a
// real cluster (`sluice up`, SQLite store, node agents running real
// processes) driven only through the commands: scontrol, sbatch, squeue,
// sinfo, scancel, sacct, sreport, sacctmgr.

// resvCluster wraps an extCluster with the checks these tests repeat.
type resvCluster struct{ *extCluster }

// ok runs a command that must succeed and returns its stdout.
func (c resvCluster) ok(name string, args ...string) string {
	c.t.Helper()
	rc, out, errs := c.run(name, args...)
	if rc != 0 {
		c.t.Fatalf("%s %s: exit %d\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), rc, out, errs)
	}
	return out
}

// fails runs a command that must exit 1 printing want on stderr.
func (c resvCluster) fails(want string, name string, args ...string) {
	c.t.Helper()
	rc, out, errs := c.run(name, args...)
	if rc != 1 || strings.TrimSpace(errs) != want {
		c.t.Errorf("%s %s: exit %d, stderr %q (stdout %q), want exit 1 and %q", name, strings.Join(args, " "), rc, errs, out, want)
	}
}

// squeueLine is `squeue -h -j ID -o "%T|%R|%v"` for one job.
func (c resvCluster) squeueLine(id string) string {
	c.t.Helper()
	return strings.TrimSpace(c.ok("squeue", "-h", "-j", id, "-o", "%T|%R|%v"))
}

// waitSqueue waits until squeue shows job id as want ("*" at its end
// matches any rest).
func (c resvCluster) waitSqueue(id, want string) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := c.squeueLine(id)
		if got == want || strings.HasSuffix(want, "*") && strings.HasPrefix(got, strings.TrimSuffix(want, "*")) {
			c.t.Logf("squeue job %s: %s", id, got)
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("squeue job %s: %q, want %q\n%s", id, got, want, c.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestE2EReservationMaint: a MAINT reservation of every node starting in
// two hours makes a job whose time limit runs into it wait with
// "(ReqNodeNotAvail, Reserved for maintenance)" while a short job runs;
// scontrol show reservation and sinfo -T show it; deleting it lets the
// long job start.
func TestE2EReservationMaint(t *testing.T) {
	t.Parallel()
	c := resvCluster{upCluster(t, 2, "")}
	out := c.ok("scontrol", "create", "reservation", "ReservationName=maint", "StartTime=now+2hours",
		"Duration=1:00:00", "Nodes=ALL", "Flags=MAINT", "Users=root")
	if out != "Reservation created: maint\n" {
		t.Fatalf("create: %q", out)
	}
	long := c.submit("-J", "long", "-t", "3:00:00", "--wrap", "sleep 60")
	short := c.submit("-J", "short", "-t", "30", "--wrap", "sleep 60")
	c.waitSqueue(short, "RUNNING|node1|(null)")
	c.waitSqueue(long, "PENDING|(ReqNodeNotAvail, Reserved for maintenance)|(null)")

	show := c.ok("scontrol", "show", "reservation", "maint")
	t.Logf("scontrol show reservation maint:\n%s", show)
	for _, want := range []string{"ReservationName=maint ", "Duration=01:00:00", "Nodes=node[1-2] NodeCnt=2",
		"Flags=MAINT", "Users=root", "State=INACTIVE"} {
		if !strings.Contains(show, want) {
			t.Errorf("show reservation lacks %q", want)
		}
	}
	sinfo := c.ok("sinfo", "-T")
	t.Logf("sinfo -T:\n%s", sinfo)
	if !strings.HasPrefix(sinfo, "RESV_NAME") || !strings.Contains(sinfo, "maint") || !strings.Contains(sinfo, "node[1-2]") {
		t.Errorf("sinfo -T:\n%s", sinfo)
	}
	if rc, out, _ := c.run("scontrol", "show", "reservation", "nosuch"); rc != 1 || out != "Reservation nosuch not found\n" {
		t.Errorf("show unknown reservation: exit %d %q", rc, out)
	}

	if out := c.ok("scontrol", "delete", "ReservationName=maint"); out != "" {
		t.Errorf("delete prints %q", out)
	}
	c.waitSqueue(long, "RUNNING|node*")
	if out := c.ok("scontrol", "show", "reservations"); out != "No reservations in the system\n" {
		t.Errorf("after delete: %q", out)
	}
	c.ok("scancel", long, short)
}

// TestE2EReservationUsers: a reservation of 2 of 4 nodes for user nobody
// keeps root's jobs off those nodes (a 3-node job pends), admits
// nobody's job on them, refuses root's --reservation with Slurm's
// message, shows the nodes as RESERVED in sinfo, and accounts the job to
// the reservation in sacct --reservation and sreport reservation
// utilization.
func TestE2EReservationUsers(t *testing.T) {
	t.Parallel()
	c := resvCluster{upCluster(t, 4, "")}
	c.ok("sacctmgr", "-i", "add", "account", "team")
	c.ok("sacctmgr", "-i", "add", "user", "nobody", "account=team")
	c.ok("scontrol", "create", "reservation", "ReservationName=team", "StartTime=now", "Duration=2:00:00",
		"Nodes=node[1-2]", "Users=nobody")
	sinfo := c.ok("sinfo", "-h", "-N", "-o", "%N %t")
	t.Logf("sinfo -N:\n%s", sinfo)
	for _, want := range []string{"node1 resv", "node2 resv", "node3 idle", "node4 idle"} {
		if !strings.Contains(sinfo, want) {
			t.Errorf("sinfo -N lacks %q", want)
		}
	}

	wide := c.submit("-J", "wide", "-N", "3", "-t", "10", "--wrap", "sleep 60")
	// Slurm 24.11 (oracle, reservations scenario): too few nodes outside
	// the reservation for it even when idle.
	c.waitSqueue(wide, "PENDING|(ReqNodeNotAvail, May be reserved for other job)|(null)")
	c.fails("sbatch: error: Batch job submission failed: Access denied to requested reservation",
		"sbatch", "--reservation=team", "-t", "10", "--wrap", "true")

	tok := c.token(t, "nobody")
	rc, out, errs := c.runEnv([]string{"SLURM_JWT", tok}, "sbatch", "--parsable",
		"--reservation=team", "-N", "2", "-t", "10", "-o", "/dev/null", "-D", "/tmp", "--wrap", "sleep 2")
	if rc != 0 {
		t.Fatalf("sbatch as nobody: %d %s", rc, errs)
	}
	mine := strings.TrimSpace(out)
	// nobody's script may not be readable in the test's private spool
	// (FAILED): where and in which reservation it started is the point.
	if j := c.waitState(mine, "COMPLETED", "FAILED"); j.Reservation != "team" || j.NodeList != "node[1-2]" {
		t.Errorf("job %s: reservation %q on %s, want team on node[1-2]", mine, j.Reservation, j.NodeList)
	}
	c.ok("scancel", wide)

	acct := c.ok("sacct", "-a", "-X", "-n", "-P", "--reservation=team", "--format=JobID,User,Reservation,NodeList")
	t.Logf("sacct --reservation=team:\n%s", acct)
	if strings.TrimSpace(acct) != mine+"|nobody|team|node[1-2]" {
		t.Errorf("sacct --reservation=team: %q", acct)
	}
	// sreport works in whole seconds: a reservation that began in the
	// current second has no time inside [start, now) yet. Jobs start and
	// end fast enough now for the whole scenario to fit in one second.
	time.Sleep(1100 * time.Millisecond)
	rep := c.ok("sreport", "-P", "-n", "reservation", "utilization", "start=now-1hours", "end=now")
	t.Logf("sreport reservation utilization:\n%s", rep)
	if !strings.Contains(rep, "|team|") || !strings.Contains(rep, "|cpu|") {
		t.Errorf("sreport reservation utilization lacks team:\n%s", rep)
	}
}

// TestE2EReservationDeleteAndBadInput: a job waiting for a reservation
// that has not begun pends (Reservation); deleting the reservation
// releases that reason (held ReservationDeleted, or free to run with
// NO_HOLD_JOBS_AFTER_END). Bad requests are refused with Slurm's
// messages and change nothing; only admins manage reservations.
func TestE2EReservationDeleteAndBadInput(t *testing.T) {
	t.Parallel()
	c := resvCluster{upCluster(t, 2, "Licenses=matlab:4\n")}
	c.ok("scontrol", "create", "reservation", "ReservationName=later", "StartTime=now+1hour", "Duration=1:00:00",
		"Nodes=node1", "Users=root")
	c.ok("scontrol", "create", "reservation", "ReservationName=free", "StartTime=now+1hour", "Duration=1:00:00",
		"Nodes=node2", "Users=root", "Flags=NO_HOLD_JOBS_AFTER_END")
	held := c.submit("--reservation=later", "-t", "10", "--wrap", "sleep 30")
	runs := c.submit("--reservation=free", "-t", "10", "--wrap", "sleep 30")
	c.waitSqueue(held, "PENDING|(Reservation)|later")
	c.waitSqueue(runs, "PENDING|(Reservation)|free")
	before := c.ok("scontrol", "show", "reservation")

	bad := []struct {
		name string
		args []string
		want string
	}{
		{"overlap", []string{"ReservationName=x", "StartTime=now+90minutes", "Duration=10", "Nodes=node1", "Users=root"},
			"Reservation request overlaps with existing reservation"},
		{"unknown user", []string{"ReservationName=x", "StartTime=now+3hours", "Duration=10", "Nodes=node1", "Users=ghost"},
			"Invalid user id"},
		{"unknown node", []string{"ReservationName=x", "StartTime=now+3hours", "Duration=10", "Nodes=node9", "Users=root"},
			"Invalid node name specified"},
		{"end before start", []string{"ReservationName=x", "StartTime=now+3hours", "EndTime=now+2hours", "Nodes=node1", "Users=root"},
			"Invalid time specified"},
		{"licenses over count", []string{"ReservationName=x", "StartTime=now+3hours", "Duration=10", "Licenses=matlab:5", "Users=root", "Flags=ANY_NODES"},
			"Invalid license specification"},
		{"duplicate name", []string{"ReservationName=later", "StartTime=now+3hours", "Duration=10", "Nodes=node1", "Users=root"},
			"Duplicate reservation name"},
	}
	for _, b := range bad {
		c.fails("Error creating the reservation: "+b.want, "scontrol", append([]string{"create", "reservation"}, b.args...)...)
	}
	c.fails("StartTime must be specified.  No reservation created.", "scontrol", "create", "reservation", "Nodes=node1", "Users=root")
	c.fails("Either Users/Groups and/or Accounts must be specified.  No reservation created.", "scontrol", "create",
		"reservation", "StartTime=now", "Duration=10", "Nodes=node1")
	c.fails("invalid keyword: Colour=red", "scontrol", "create", "reservation", "Colour=red")
	c.fails("slurm_update error: Invalid time specified", "scontrol", "update", "ReservationName=later", "EndTime=now")
	c.fails("delete_reservation ReservationName=nosuch: Requested reservation is invalid", "scontrol", "delete", "ReservationName=nosuch")
	tok := c.token(t, "nobody")
	rc, _, errs := c.runEnv([]string{"SLURM_JWT", tok}, "scontrol", "delete", "ReservationName=later")
	if rc != 1 || strings.TrimSpace(errs) != "delete_reservation ReservationName=later: Invalid user id" {
		t.Errorf("delete as nobody: exit %d %q", rc, errs)
	}
	if after := c.ok("scontrol", "show", "reservation"); after != before {
		t.Errorf("rejected commands changed the reservations:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	c.ok("scontrol", "delete", "reservation", "later")
	c.waitSqueue(held, "PENDING|(Reservation later was deleted)|(null)")
	if j := c.waitState(held, "PENDING"); j.Reason != "ReservationDeleted" {
		t.Errorf("job %s reason %q, want ReservationDeleted", held, j.Reason)
	}
	c.ok("scontrol", "delete", "ReservationName=free")
	c.waitSqueue(runs, "RUNNING|node*")
	c.ok("scancel", held, runs)
}

// TestE2ELicenses: with Licenses=matlab:4, three jobs each needing
// matlab:2 run two at a time; the third pends (Licenses) in squeue;
// scontrol show licenses and show job report the use.
func TestE2ELicenses(t *testing.T) {
	t.Parallel()
	c := resvCluster{upCluster(t, 2, "Licenses=matlab:4\n")}
	a := c.submit("-L", "matlab:2", "-t", "10", "--wrap", "sleep 60")
	b := c.submit("-L", "matlab:2", "-t", "10", "--wrap", "sleep 60")
	third := c.submit("-L", "matlab:2", "-t", "10", "--wrap", "sleep 60")
	c.waitState(a, "RUNNING")
	c.waitState(b, "RUNNING")
	c.waitSqueue(third, "PENDING|(Licenses)|(null)")
	lic := c.ok("scontrol", "show", "licenses")
	if lic != "LicenseName=matlab\n    Total=4 Used=4 Free=0 Reserved=0 Remote=no\n" {
		t.Errorf("scontrol show licenses:\n%s", lic)
	}
	if job := c.ok("scontrol", "show", "job", third); !strings.Contains(job, " Licenses=matlab:2 ") {
		t.Errorf("scontrol show job lacks Licenses=matlab:2:\n%s", job)
	}
	c.fails("sbatch: error: Batch job submission failed: Invalid license specification", "sbatch", "-L", "matlab:5", "--wrap", "true")
	c.ok("scancel", a)
	c.waitState(third, "RUNNING")
	c.ok("scancel", b, third)
}

// TestSimReservationsOption: `sluice sim --reservations FILE` replays a
// trace under a policy with a maintenance window: the summary shows the
// window's reserved capacity and its idle share, and the HTML report
// its table; a bad line is an error naming it.
func TestSimReservationsOption(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("c.conf", "ClusterName=c\nSchedulerType=sched/backfill\nSelectTypeParameters=CR_CPU\n"+
		"NodeName=n[1-2] CPUs=4 RealMemory=4000 State=IDLE\nPartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n")
	write("t.jsonl", `{"id":1,"submit":0,"runtime":1800,"user":"u","ntasks":8,"time_limit_s":3600}
{"id":2,"submit":60,"runtime":7200,"user":"u","ntasks":4,"time_limit_s":10800}
`)
	write("maint.txt", "scontrol create reservation ReservationName=maint StartTime=now+2hours Duration=1:00:00 Nodes=ALL Flags=MAINT Users=root\n")
	write("bad.txt", "\ncreate reservation ReservationName=x StartTime=now Duration=10 Nodes=n9 Users=root\n")
	env, out, errb := testEnv()
	env.Cwd = dir
	args := []string{"--trace", "t.jsonl", "--conf", "c.conf", "--reservations", "maint.txt", "--report", "r.html", "--jobs-out", "jobs.jsonl"}
	if code := runSim(context.Background(), env, args); code != 0 {
		t.Fatalf("sim: exit %d: %s", code, errb.String())
	}
	t.Logf("%s", out.String())
	if !strings.Contains(out.String(), "Reservations (c): 1 windows, 8.0 CPU-hours reserved") ||
		!strings.Contains(out.String(), "100.0% of it idle") {
		t.Errorf("summary lacks the maintenance window:\n%s", out.String())
	}
	jobs, _ := os.ReadFile(filepath.Join(dir, "jobs.jsonl"))
	if !strings.Contains(string(jobs), `"id":2,"submit":60,"start":10800`) {
		t.Errorf("job 2 should start when the window ends (10800 s):\n%s", jobs)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "r.html"))
	if !strings.Contains(string(html), "<h2>Reservations</h2>") {
		t.Errorf("report lacks the reservations table")
	}
	env, _, errb = testEnv()
	env.Cwd = dir
	args[5] = "bad.txt"
	if code := runSim(context.Background(), env, args); code != 1 || !strings.Contains(errb.String(), "line 2: Invalid node name specified") {
		t.Errorf("bad reservations file: exit %d, %q", code, errb.String())
	}
}

// TestE2EReservationMagneticFlex: a MAGNETIC reservation attracts a job
// that did not name it (squeue %v shows it), a FLEX job spills outside
// its one-node reservation, and scontrol update changes a reservation.
func TestE2EReservationMagneticFlex(t *testing.T) {
	t.Parallel()
	c := resvCluster{upCluster(t, 3, "")}
	c.ok("scontrol", "create", "reservation", "ReservationName=mag", "StartTime=now", "Duration=1:00:00",
		"Nodes=node3", "Users=root", "Flags=MAGNETIC")
	c.ok("scontrol", "create", "reservation", "ReservationName=flex", "StartTime=now", "Duration=1:00:00",
		"Nodes=node1", "Users=root", "Flags=FLEX")
	if out := c.ok("scontrol", "update", "ReservationName=mag", "Duration=2:00:00"); out != "Reservation updated.\n" {
		t.Errorf("update: %q", out)
	}
	if show := c.ok("scontrol", "-o", "show", "reservation", "mag"); !strings.Contains(show, "Duration=02:00:00") ||
		!strings.Contains(show, "MAGNETIC") || strings.Count(show, "\n") != 1 {
		t.Errorf("show -o after update: %q", show)
	}
	attracted := c.submit("-t", "10", "--wrap", "sleep 30")
	c.waitSqueue(attracted, "RUNNING|node3|mag")
	spill := c.submit("--reservation=flex", "-N", "2", "-t", "10", "--exclusive", "--wrap", "sleep 30")
	c.waitSqueue(spill, "RUNNING|node[1-2]|flex")
	if out := c.ok("squeue", "-h", "-R", "flex", "-o", "%i"); strings.TrimSpace(out) != spill {
		t.Errorf("squeue -R flex: %q, want %s", out, spill)
	}
	if job := c.ok("scontrol", "show", "job", spill); !strings.Contains(job, "\n   Reservation=flex\n") {
		t.Errorf("scontrol show job lacks Reservation=flex:\n%s", job)
	}
	c.ok("scancel", attracted, spill)
}
