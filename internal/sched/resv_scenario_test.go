package sched

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/resv"
)

// Reservation and license scenarios (issue 8), driven like the controller:
// scontrol reservation commands and sbatch-like submissions at a fake
// clock, a scheduling cycle after each event.

// resvConf: four 4-CPU nodes in one partition, 4 matlab and 2 ansys
// licenses.
const resvConf = `ClusterName=r
SlurmctldHost=ctl
SelectTypeParameters=CR_CPU
Licenses=matlab:4,ansys:2
NodeName=node[1-4] CPUs=4 RealMemory=16000
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`

// scontrol runs an admin scontrol reservation command, then a cycle.
func (h *harness) scontrol(line string) (string, error) {
	h.t.Helper()
	out, err := h.st.ReservationCommand(resv.SplitLine(line), true, h.now, time.UTC)
	if err == nil {
		h.schedule()
	}
	return out, err
}

func (h *harness) mustScontrol(line string) string {
	h.t.Helper()
	out, err := h.scontrol(line)
	if err != nil {
		h.t.Fatalf("scontrol %s: %v", line, err)
	}
	h.t.Logf("scontrol %s: %s", line, strings.TrimSpace(out))
	return out
}

// submitRL submits with the harness options plus -L/--licenses and
// --reservation (which the shared harness does not read).
func (h *harness) submitRL(user, opts string) (*Job, error) {
	h.t.Helper()
	var lic, res, acct string
	var rest []string
	fields := strings.Fields(opts)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case f == "-L" && i+1 < len(fields):
			i++
			lic = fields[i]
		case strings.HasPrefix(f, "--licenses="):
			lic = strings.TrimPrefix(f, "--licenses=")
		case strings.HasPrefix(f, "--reservation="):
			res = strings.TrimPrefix(f, "--reservation=")
		case strings.HasPrefix(f, "--account="):
			acct = strings.TrimPrefix(f, "--account=")
		default:
			rest = append(rest, f)
		}
	}
	spec, run := h.parseOpts(strings.Join(rest, " "))
	spec.User, spec.Licenses, spec.Reservation, spec.Account = user, lic, res, acct
	req, err := RequestFromSpec(&spec, h.now, time.UTC, &h.st.Config)
	if err != nil {
		return nil, err
	}
	j, err := h.st.Submit(req, Submitter{User: user, Group: user}, h.now)
	if err != nil {
		return nil, err
	}
	h.specs[j.ID] = run
	h.schedule()
	return j, nil
}

func (h *harness) mustSubmitRL(user, opts string) *Job {
	h.t.Helper()
	j, err := h.submitRL(user, opts)
	if err != nil {
		h.t.Fatalf("submit %q: %v", opts, err)
	}
	return j
}

// TestLicensesTwoAtATime: with Licenses=matlab:4 three jobs needing
// matlab:2 run two at a time, the third pending (Licenses); the shortage
// does not block the partition (a later job without licenses starts);
// the third starts when a license holder ends; a suspended job keeps its
// licenses.
func TestLicensesTwoAtATime(t *testing.T) {
	h := newHarness(t, resvConf)
	a := h.mustSubmitRL("u", "-n 1 -L matlab:2 --time=1:00:00 --run=30:00")
	b := h.mustSubmitRL("u", "-n 1 -L matlab:2 --time=1:00:00 --run=45:00")
	c := h.mustSubmitRL("u", "-n 1 -L matlab:2 --time=1:00:00 --run=10:00")
	h.expectState(a.ID, JobRunning, "")
	h.expectState(b.ID, JobRunning, "")
	h.expectState(c.ID, JobPending, ReasonLicenses)
	// -L as written is what squeue %W and scontrol show job print
	// (oracle: "-L zeta:1,matlab" shows Licenses=zeta:1,matlab)
	if got := h.job(c.ID).Req.LicenseSpec; got != "matlab:2" {
		t.Fatalf("LicenseSpec %q, want matlab:2", got)
	}
	d := h.mustSubmitRL("u", "-n 1 --time=1:00:00")
	h.expectState(d.ID, JobRunning, "")
	// sorted by name whatever the configuration order (oracle, 24.11)
	show := FormatLicenses(h.st.Licenses(h.now), "", false)
	want := "LicenseName=ansys\n    Total=2 Used=0 Free=2 Reserved=0 Remote=no\n" +
		"LicenseName=matlab\n    Total=4 Used=4 Free=0 Reserved=0 Remote=no\n"
	if show != want {
		t.Fatalf("scontrol show licenses:\n%s\nwant:\n%s", show, want)
	}
	t.Logf("scontrol show licenses:\n%s", show)
	h.advance(31 * time.Minute)
	h.expectState(a.ID, JobCompleted, "")
	h.expectState(c.ID, JobRunning, "")
	t.Logf("job %d started at +%v once job %d ended", c.ID, h.job(c.ID).StartTime.Sub(t0), a.ID)
	// suspension keeps licenses
	if err := h.st.Suspend(b.ID, h.now); err != nil {
		t.Fatal(err)
	}
	e := h.mustSubmitRL("u", "-n 1 -L matlab:1 --time=10")
	h.expectState(e.ID, JobPending, ReasonLicenses)
}

func TestLicenseSubmitRejections(t *testing.T) {
	h := newHarness(t, resvConf)
	for _, opts := range []string{"-L matlab:5", "-L comsol", "-L matlab:x", "-L ansys:1|matlab:1"} {
		_, err := h.submitRL("u", opts)
		if err == nil || !strings.Contains(err.Error(), "Invalid license specification") {
			t.Errorf("%s: %v, want Invalid license specification", opts, err)
		}
	}
	if len(h.st.Jobs()) != 0 {
		t.Fatal("a rejected job was stored")
	}
}

// TestLicenseTRESLimit: a job's licenses count as TRES license/NAME in
// association limits (GrpTRES=license/matlab=2).
func TestLicenseTRESLimit(t *testing.T) {
	h := newHarness(t, strings.Replace(resvConf, "Licenses=", "AccountingStorageEnforce=limits\nAccountingStorageTRES=license/matlab\nLicenses=", 1))
	h.sacctmgr(`sacctmgr -i add account a GrpTRES=license/matlab=2
sacctmgr -i add user u DefaultAccount=a`)
	j1 := h.mustSubmitRL("u", "-n 1 -L matlab:2 --time=10")
	j2 := h.mustSubmitRL("u", "-n 1 -L matlab:1 --time=10")
	h.expectState(j1.ID, JobRunning, "")
	h.expectState(j2.ID, JobPending, "AssocGrpLicense")
}

// TestMaintBackfill: a MAINT reservation of every node starting in two
// hours; jobs whose limit ends before it start (the later ones by
// backfill), a job that would run into it pends with Slurm's
// "ReqNodeNotAvail, Reserved for maintenance" and starts after it; no job
// runs on a node during the window.
func TestMaintBackfill(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=maint StartTime=now+2hours Duration=1:00:00 Nodes=ALL Users=root Flags=MAINT")
	long := h.mustSubmitRL("u", "-N 1 --exclusive --time=3:00:00 --run=3:00:00")
	h.expectState(long.ID, JobPending, ReasonReqNodeNotAvail)
	if got := h.job(long.ID).StateDesc; got != StateDescReservedMaint {
		t.Fatalf("state desc %q", got)
	}
	short := h.mustSubmitRL("u", "-N 1 --exclusive --time=1:59:00 --run=1:59:00")
	h.expectState(short.ID, JobRunning, "")
	if !backfilled(h.lastPlan, short.ID) {
		t.Fatalf("job %d was not backfilled", short.ID)
	}
	exact := h.mustSubmitRL("u", "-N 1 --exclusive --time=2:00:00 --run=2:00:00")
	h.expectState(exact.ID, JobRunning, "")
	over := h.mustSubmitRL("u", "-N 1 --exclusive --time=2:01:00")
	h.expectState(over.ID, JobPending, ReasonPriority)
	if es := h.job(long.ID).ExpectedStart; !es.Equal(t0.Add(3 * time.Hour)) {
		t.Fatalf("long job expected start %v, want the end of maintenance %v", es, t0.Add(3*time.Hour))
	}
	t.Logf("long job %d: expected start +%v", long.ID, h.job(long.ID).ExpectedStart.Sub(t0))
	for step := 0; step < 8; step++ {
		h.advance(30 * time.Minute)
		for _, j := range h.st.Jobs() {
			if isActive(j) && h.now.After(t0.Add(2*time.Hour)) && h.now.Before(t0.Add(3*time.Hour)) {
				t.Fatalf("job %d runs at +%v inside the maintenance window", j.ID, h.now.Sub(t0))
			}
		}
	}
	for _, id := range []JobID{long.ID, over.ID} {
		j := h.job(id)
		if j.StartTime.IsZero() || j.StartTime.Before(t0.Add(3*time.Hour)) {
			t.Fatalf("job %d started at %v, want after the window", id, j.StartTime)
		}
		t.Logf("job %d started at +%v", id, j.StartTime.Sub(t0))
	}
}

// TestUserReservationTwoOfFour: a reservation of two of four nodes for
// alice: bob's jobs only get the two other nodes and the rest pend;
// alice's jobs in the reservation run on its nodes; bob may not submit to
// it.
func TestUserReservationTwoOfFour(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=team StartTime=now Duration=1-00:00:00 Nodes=node[1-2] Users=alice")
	var bob []*Job
	for i := 0; i < 4; i++ {
		bob = append(bob, h.mustSubmitRL("bob", "-N 1 --exclusive --time=1:00:00"))
	}
	running := 0
	for _, j := range bob {
		if j := h.job(j.ID); j.State.Base() == JobRunning {
			running++
			if n := h.nodes(j.ID); n[0] == "node1" || n[0] == "node2" {
				t.Fatalf("bob's job %d runs on reserved %v", j.ID, n)
			}
		}
	}
	if running != 2 {
		t.Fatalf("%d of bob's jobs run, want 2", running)
	}
	h.expectState(bob[2].ID, JobPending, ReasonResources)
	h.expectState(bob[3].ID, JobPending, ReasonPriority)
	for i := 0; i < 2; i++ {
		j := h.mustSubmitRL("alice", "-N 1 --exclusive --time=1:00:00 --reservation=team")
		h.expectState(j.ID, JobRunning, "")
		if n := h.nodes(j.ID); n[0] != "node1" && n[0] != "node2" {
			t.Fatalf("alice's job on %v", n)
		}
		if h.st.JobReservation(h.job(j.ID)) != "team" {
			t.Fatal("JobReservation")
		}
	}
	third := h.mustSubmitRL("alice", "-N 1 --exclusive --time=1:00:00 --reservation=team")
	h.expectState(third.ID, JobPending, ReasonResources)
	if _, err := h.submitRL("bob", "-N 1 --reservation=team"); !errors.Is(err, resv.ErrAccess) {
		t.Fatalf("bob into team: %v, want %v", err, resv.ErrAccess)
	}
	if _, err := h.submitRL("bob", "-N 1 --reservation=nosuch"); !errors.Is(err, resv.ErrInvalid) {
		t.Fatalf("unknown reservation: %v", err)
	}
	if err := h.st.DeleteReservation("team", h.now); !errors.Is(err, resv.ErrBusy) {
		t.Fatalf("delete with running jobs: %v", err)
	}
}

// TestReservationDeniedUsers: Users=-bob admits everyone but bob.
func TestReservationDeniedUsers(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=r StartTime=now Duration=60 Nodes=node1 Users=-bob")
	if _, err := h.submitRL("bob", "-N 1 --reservation=r"); !errors.Is(err, resv.ErrAccess) {
		t.Fatalf("bob: %v", err)
	}
	j := h.mustSubmitRL("carol", "-N 1 --reservation=r --time=10")
	h.expectState(j.ID, JobRunning, "")
}

// TestMagneticAttracts: a MAGNETIC reservation takes a job of its user
// that did not ask for it, ahead of free nodes elsewhere; other users'
// jobs are not attracted.
func TestMagneticAttracts(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=mag StartTime=now Duration=1:00:00 Nodes=node4 Users=alice Flags=MAGNETIC")
	j := h.mustSubmitRL("alice", "-N 1 --exclusive --time=10")
	h.expectState(j.ID, JobRunning, "")
	if n := h.nodes(j.ID); n[0] != "node4" {
		t.Fatalf("alice's job on %v, want the magnetic reservation's node4", n)
	}
	b := h.mustSubmitRL("bob", "-N 1 --exclusive --time=10")
	if n := h.nodes(b.ID); n[0] == "node4" {
		t.Fatal("bob attracted")
	}
	t.Logf("alice's job %d ran in reservation %q on %v", j.ID, h.st.JobReservation(h.job(j.ID)), h.nodes(j.ID))
	// a second alice job spills out of the busy magnetic reservation
	j2 := h.mustSubmitRL("alice", "-N 1 --exclusive --time=10")
	h.expectState(j2.ID, JobRunning, "")
}

// TestFlexSpills: a FLEX reservation's job may use nodes outside it; a
// non-FLEX one of the same size cannot run.
func TestFlexSpills(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=flex StartTime=now+10minutes Duration=10 Nodes=node1 Users=alice Flags=FLEX")
	h.mustScontrol("create reservation ReservationName=tight StartTime=now Duration=60 Nodes=node4 Users=alice")
	j := h.mustSubmitRL("alice", "-N 2 --exclusive --time=30:00 --reservation=flex")
	h.expectState(j.ID, JobRunning, "")
	nodes := h.nodes(j.ID)
	if len(nodes) != 2 || slices.Contains(nodes, "node4") {
		t.Fatalf("flex job on %v", nodes)
	}
	t.Logf("FLEX job %d started before its reservation, on %v", j.ID, nodes)
	k := h.mustSubmitRL("alice", "-N 2 --exclusive --time=30:00 --reservation=tight")
	h.expectState(k.ID, JobPending, ReasonResources)
}

// TestDailyReservationRecurs: a DAILY reservation is active in its hour
// every day; a job asking for it outside the hour waits (Reservation),
// is planned for the next occurrence and starts then, keeping its time
// limit, and ends TIMEOUT with the occurrence (ResvOverRun=0).
func TestDailyReservationRecurs(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=lab StartTime=now+1hour Duration=1:00:00 Nodes=node1 Users=alice Flags=DAILY")
	r := h.st.Reservation("lab")
	for _, c := range []struct {
		at    time.Duration
		state string
	}{{0, "INACTIVE"}, {90 * time.Minute, "ACTIVE"}, {3 * time.Hour, "INACTIVE"}, {25*time.Hour + 30*time.Minute, "ACTIVE"}, {49 * time.Hour, "ACTIVE"}} {
		if got := r.State(t0.Add(c.at)); got != c.state {
			t.Fatalf("at +%v: %s, want %s", c.at, got, c.state)
		}
	}
	h.advance(3 * time.Hour)
	j := h.mustSubmitRL("alice", "-N 1 --time=3:00:00 --reservation=lab")
	h.expectState(j.ID, JobPending, ReasonReservation)
	if es := h.job(j.ID).ExpectedStart; !es.Equal(t0.Add(25 * time.Hour)) {
		t.Fatalf("expected start %v, want the next occurrence %v", es, t0.Add(25*time.Hour))
	}
	out := resv.Show(r, h.now, resv.ShowOptions{})
	if !strings.Contains(out, "StartTime=2026-01-06T10:00:00 EndTime=2026-01-06T11:00:00") || !strings.Contains(out, "Flags=DAILY,SPEC_NODES") {
		t.Fatalf("show after the first occurrence:\n%s", out)
	}
	t.Logf("%s", out)
	h.advance(22 * time.Hour)
	h.expectState(j.ID, JobRunning, "")
	if got := h.job(j.ID); !got.StartTime.Equal(t0.Add(25*time.Hour)) || got.TimeLimit != 3*time.Hour ||
		!got.ResvEnd.Equal(t0.Add(26*time.Hour)) {
		t.Fatalf("started %v with limit %v ending by %v, want %v with its 3 hours, ended at the occurrence's end %v",
			got.StartTime, got.TimeLimit, got.ResvEnd, t0.Add(25*time.Hour), t0.Add(26*time.Hour))
	}
	h.advance(2 * time.Hour)
	h.expectState(j.ID, JobTimeout, "")
	if end := h.job(j.ID).EndTime; !end.Equal(t0.Add(26 * time.Hour)) {
		t.Fatalf("ended %v, want the occurrence's end %v", end, t0.Add(26*time.Hour))
	}
}

// TestDeleteReservationReleasesJobs: deleting a reservation takes it off
// its waiting jobs: held with reason ReservationDeleted by default, free
// to run elsewhere with NO_HOLD_JOBS_AFTER.
func TestDeleteReservationReleasesJobs(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=later StartTime=now+1hour Duration=60 Nodes=node1 Users=alice")
	h.mustScontrol("create reservation ReservationName=free StartTime=now+1hour Duration=60 Nodes=node2 Users=alice Flags=NO_HOLD_JOBS_AFTER")
	held := h.mustSubmitRL("alice", "-N 1 --time=10 --reservation=later")
	freed := h.mustSubmitRL("alice", "-N 1 --time=10 --reservation=free")
	h.expectState(held.ID, JobPending, ReasonReservation)
	h.expectState(freed.ID, JobPending, ReasonReservation)
	h.mustScontrol("delete ReservationName=later")
	h.mustScontrol("delete reservation free")
	h.expectState(held.ID, JobPending, ReasonReservationDeleted)
	if d := h.job(held.ID).StateDesc; d != "Reservation later was deleted" {
		t.Fatalf("state desc %q", d)
	}
	h.expectState(freed.ID, JobRunning, "")
	if err := h.st.Release(held.ID, false); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	h.expectState(held.ID, JobRunning, "")
	if _, err := h.scontrol("delete ReservationName=later"); !errors.Is(err, resv.ErrInvalid) {
		t.Fatalf("second delete: %v", err)
	}
}

// TestReservationRejections: bad requests get Slurm's messages and
// change nothing.
func TestReservationRejections(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=a StartTime=now+1hour Duration=60 Nodes=node[1-2] Users=alice")
	running := h.mustSubmitRL("bob", "-w node3 -N 1 --exclusive --time=2:00:00")
	h.expectState(running.ID, JobRunning, "")
	cases := []struct {
		line string
		want error
	}{
		{"create reservation ReservationName=b StartTime=now+30minutes Duration=60 Nodes=node2 Users=bob", resv.ErrOverlap},
		{"create reservation ReservationName=a StartTime=now+5hours Duration=60 Nodes=node4 Users=bob", resv.ErrNameDup},
		{"create reservation ReservationName=c StartTime=now Duration=60 Nodes=node3 Users=bob", resv.ErrNodesBusy},
		{"create reservation ReservationName=c StartTime=now Duration=60 NodeCnt=4 Users=bob", resv.ErrNodesBusy},
		{"create reservation ReservationName=c StartTime=now Duration=60 Nodes=node9 Users=bob", resv.ErrInvalidNode},
		{"create reservation ReservationName=c StartTime=now+2hours EndTime=now+1hour Nodes=node4 Users=bob", resv.ErrInvalidTime},
		{"create reservation ReservationName=c StartTime=now Duration=60 Nodes=node4 Users=bob Licenses=matlab:5", resv.ErrInvalidLicenses},
		{"create reservation ReservationName=c StartTime=now Duration=60 Nodes=node4 Users=bob Licenses=comsol:1", resv.ErrInvalidLicenses},
		{"create reservation ReservationName=c StartTime=now Duration=60 Nodes=node4 Users=bob PartitionName=nope", resv.ErrInvalidPartition},
		{"update ReservationName=nope Duration=5", resv.ErrInvalid},
		{"update ReservationName=a Nodes=node3", resv.ErrNodesBusy},
	}
	before := resv.ShowAll(h.st.Reservations(), h.now, resv.ShowOptions{})
	for _, c := range cases {
		_, err := h.scontrol(c.line)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.line, err, c.want)
		}
		t.Logf("scontrol %s => Error: %v", c.line, err)
	}
	if after := resv.ShowAll(h.st.Reservations(), h.now, resv.ShowOptions{}); after != before {
		t.Fatalf("rejections changed the reservations:\n%s\nwas:\n%s", after, before)
	}
	// MAINT may overlap; IGNORE_JOBS may take busy nodes; a count picks idle nodes
	h.mustScontrol("create reservation ReservationName=m StartTime=now+30minutes Duration=60 Nodes=node2 Users=root Flags=MAINT")
	h.mustScontrol("create reservation ReservationName=i StartTime=now Duration=60 Nodes=node3 Users=root Flags=IGNORE_JOBS,OVERLAP")
	out := h.mustScontrol("create reservation StartTime=now+3hours Duration=60 NodeCnt=2 Users=carol")
	if out != "Reservation created: carol_4\n" {
		t.Fatalf("generated name: %q", out)
	}
	if got := h.st.Reservation("carol_4").Nodes; strings.Join(got, ",") != "node1,node2" {
		t.Fatalf("NodeCnt=2 chose %v", got)
	}
	// licenses: a reservation of 3 matlab leaves 1 for another overlapping one
	h.mustScontrol("create reservation ReservationName=l1 StartTime=now Duration=60 Users=x Licenses=matlab:3 Flags=LICENSE_ONLY")
	if _, err := h.scontrol("create reservation ReservationName=l2 StartTime=now Duration=60 Users=x Licenses=matlab:2 Flags=LICENSE_ONLY"); !errors.Is(err, resv.ErrInvalidLicenses) {
		t.Fatalf("licenses over count with l1: %v", err)
	}
	if _, err := h.st.ReservationCommand(resv.SplitLine("delete ReservationName=l1"), false, h.now, time.UTC); !errors.Is(err, resv.ErrNotPermitted) {
		t.Fatalf("non-admin delete: %v", err)
	}
}

// TestReservationUsersAccountsKnown: with accounting, unknown users and
// accounts are rejected.
func TestReservationUsersAccountsKnown(t *testing.T) {
	h := newHarness(t, strings.Replace(resvConf, "Licenses=", "AccountingStorageEnforce=associations\nLicenses=", 1))
	h.sacctmgr(`sacctmgr -i add account phys
sacctmgr -i add user alice DefaultAccount=phys`)
	if _, err := h.scontrol("create reservation StartTime=now Duration=60 Nodes=node1 Users=mallory"); !errors.Is(err, resv.ErrInvalidUser) {
		t.Fatalf("unknown user: %v", err)
	}
	if _, err := h.scontrol("create reservation StartTime=now Duration=60 Nodes=node1 Accounts=chem"); !errors.Is(err, resv.ErrInvalidAccount) {
		t.Fatalf("unknown account: %v", err)
	}
	h.mustScontrol("create reservation ReservationName=p StartTime=now Duration=60 Nodes=node1 Accounts=phys")
	j := h.mustSubmitRL("alice", "-N 1 --exclusive --time=10 --reservation=p")
	h.expectState(j.ID, JobRunning, "")
}

// TestReservedLicenses: licenses held by an active reservation are only
// for its jobs.
func TestReservedLicenses(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=lic StartTime=now Duration=60 Users=alice Licenses=matlab:3 Flags=LICENSE_ONLY")
	b := h.mustSubmitRL("bob", "-n 1 -L matlab:2 --time=10")
	h.expectState(b.ID, JobPending, ReasonLicenses)
	a := h.mustSubmitRL("alice", "-n 1 -L matlab:3 --time=10 --reservation=lic")
	h.expectState(a.ID, JobRunning, "")
	info := h.st.Licenses(h.now)
	if info[1].Name != "matlab" || info[1].Reserved != 3 || info[1].Used != 3 {
		t.Fatalf("licenses %+v", info)
	}
}

// TestReservationQueueOrder: SEMANTICS §4.1 rule 3, a record in a
// reservation sorts before one without, whatever the priority.
func TestReservationQueueOrder(t *testing.T) {
	lo := QueueRec{Job: &Job{ID: 1}, Priority: 1, Resv: 1}
	hi := QueueRec{Job: &Job{ID: 2}, Priority: 1000}
	if compareRecs(lo, hi) >= 0 || compareRecs(hi, lo) <= 0 {
		t.Fatal("a record in a reservation must sort first")
	}
	pre := QueueRec{Job: &Job{ID: 3}, Rank: 1}
	if compareRecs(pre, lo) >= 0 {
		t.Fatal("the preemptor rule comes before the reservation rule")
	}
}

// TestReservationScriptAndUtilization: a script of scontrol lines (the
// simulator's reservations) is applied, jobs run in the reservation and
// sreport's reservation utilization splits its CPU time into allocated
// and idle.
func TestReservationScriptAndUtilization(t *testing.T) {
	h := newHarness(t, resvConf)
	lines, err := resv.ParseScript(`# lab hours
scontrol create reservation ReservationName=lab StartTime=now Duration=2:00:00 Nodes=node[1-2] Users=alice
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.st.ApplyReservationScript(lines, h.now, time.UTC); err != nil {
		t.Fatal(err)
	}
	bad, _ := resv.ParseScript("create reservation ReservationName=x StartTime=now Duration=10 Nodes=node1 Users=bob\n")
	if err := h.st.ApplyReservationScript(bad, h.now, time.UTC); err == nil || err.Error() != "line 1: "+resv.ErrOverlap.Error() {
		t.Fatalf("overlapping script line: %v", err)
	}
	j := h.mustSubmitRL("alice", "-N 1 --exclusive --time=1:00:00 --reservation=lab --run=30:00")
	h.advance(3 * time.Hour)
	jj := h.job(j.ID)
	runs := []resv.JobRun{{Reservation: h.st.JobReservation(jj), Start: jj.StartTime, End: jj.EndTime, CPUs: 4}}
	rows := resv.Utilization(h.st.ReservationRecords(t0, t0.Add(24*time.Hour)), runs, t0, t0.Add(24*time.Hour))
	if len(rows) != 1 || rows[0].Allocated != 4*1800 || rows[0].Idle != 8*7200-4*1800 {
		t.Fatalf("utilization %+v", rows)
	}
	t.Logf("\n%s", resv.FormatUtilization(rows, t0, t0.Add(24*time.Hour), false, nil))
}

func TestReservedNodes(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=m StartTime=now Duration=60 Nodes=node1 Users=root Flags=MAINT")
	h.mustScontrol("create reservation ReservationName=u StartTime=now Duration=60 Nodes=node2 Users=alice")
	h.mustScontrol("create reservation ReservationName=f StartTime=now+2hours Duration=60 Nodes=node3 Users=alice")
	r, m := h.st.ReservedNodes(h.now)
	if got := h.st.Cluster.NodeNames(r.Indices(nil)); strings.Join(got, ",") != "node1,node2" {
		t.Fatalf("reserved %v", got)
	}
	if got := h.st.Cluster.NodeNames(m.Indices(nil)); strings.Join(got, ",") != "node1" {
		t.Fatalf("maint %v", got)
	}
	out := resv.SinfoT(h.st.Reservations(), h.now, nil)
	if !strings.Contains(out, "f              INACTIVE 2026-01-05T11:00:00") {
		t.Fatalf("sinfo -T:\n%s", out)
	}
	t.Logf("sinfo -T:\n%s", out)
}

// TestEndedReservationFreesNodes: once a one-off reservation has ended,
// its nodes are free for everyone even before it is purged; purging holds
// the jobs still waiting for it (ReservationDeleted).
func TestEndedReservationFreesNodes(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=gone StartTime=now Duration=30 Nodes=node[1-4] Users=alice")
	h.mustScontrol("create reservation ReservationName=later StartTime=now+2hours Duration=30 Nodes=node4 Users=alice")
	j := h.mustSubmitRL("bob", "-N 1 --time=10")
	// every node reserved: "ReqNodeNotAvail, Reserved for maintenance" (oracle)
	h.expectState(j.ID, JobPending, ReasonReqNodeNotAvail)
	if d := h.job(j.ID).StateDesc; d != StateDescReservedMaint {
		t.Fatalf("state description %q", d)
	}
	w := h.mustSubmitRL("alice", "-N 1 --time=10 --begin=now+1hour --reservation=gone")
	h.advance(31 * time.Minute)
	h.expectState(j.ID, JobRunning, "")
	h.expectState(w.ID, JobPending, ReasonReservationInvalid)
	if purged := h.st.PurgeReservations(h.now); len(purged) != 1 || purged[0].Name != "gone" {
		t.Fatalf("purged %v", purged)
	}
	h.schedule()
	h.expectState(w.ID, JobPending, ReasonReservationDeleted)
}

// TestReservationDeletedHoldSurvivesRestart: a job held because its
// reservation was deleted keeps reason ReservationDeleted in a state
// rebuilt from the stored job (hold and state description).
func TestReservationDeletedHoldSurvivesRestart(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=x StartTime=now+1hour Duration=60 Nodes=node1 Users=alice")
	j := h.mustSubmitRL("alice", "-N 1 --time=10 --reservation=x")
	h.mustScontrol("delete ReservationName=x")
	h.expectState(j.ID, JobPending, ReasonReservationDeleted)
	delete(h.st.resvs.deleted, j.ID) // what a restarted controller does not have
	h.schedule()
	h.expectState(j.ID, JobPending, ReasonReservationDeleted)
}

// TestQOSRequiresReservation: a QOS with Flags=RequiresReservation
// rejects jobs without a reservation (Slurm's "Invalid qos
// specification") and accepts them in one.
func TestQOSRequiresReservation(t *testing.T) {
	h := newHarness(t, strings.Replace(resvConf, "Licenses=", "AccountingStorageEnforce=limits,qos\nLicenses=", 1))
	h.sacctmgr(`sacctmgr -i add account a
sacctmgr -i add user alice DefaultAccount=a
sacctmgr -i modify qos normal set Flags=RequiresReservation`)
	h.mustScontrol("create reservation ReservationName=r StartTime=now Duration=60 Nodes=node1 Users=alice")
	if _, err := h.submitRL("alice", "-N 1 --time=10"); err == nil || !strings.Contains(err.Error(), "Invalid qos specification") {
		t.Fatalf("without reservation: %v", err)
	}
	j := h.mustSubmitRL("alice", "-N 1 --time=10 --reservation=r")
	h.expectState(j.ID, JobRunning, "")
}

// TestUpdateReservationAccess: scontrol update Users+= lets a new user
// in; Duration= moves the end; CoreCnt= reserves whole nodes covering the
// cores.
func TestUpdateReservationAccess(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=r StartTime=now Duration=60 CoreCnt=6 Users=alice")
	if got := h.st.Reservation("r").Nodes; strings.Join(got, ",") != "node1,node2" {
		t.Fatalf("CoreCnt=6 on 4-core nodes chose %v", got)
	}
	if _, err := h.submitRL("bob", "-N 1 --reservation=r"); !errors.Is(err, resv.ErrAccess) {
		t.Fatalf("bob before update: %v", err)
	}
	h.mustScontrol("update ReservationName=r Users+=bob Duration=2:00:00")
	if r := h.st.Reservation("r"); !r.End.Equal(t0.Add(2*time.Hour)) || strings.Join(r.Users, ",") != "alice,bob" {
		t.Fatalf("after update: end %v users %v", r.End, r.Users)
	}
	j := h.mustSubmitRL("bob", "-N 1 --time=3:00:00 --reservation=r")
	h.expectState(j.ID, JobRunning, "")
	if got := h.job(j.ID); got.TimeLimit != 3*time.Hour || !got.ResvEnd.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("limit %v ending by %v, want its 3 hours, ended with the reservation at %v", got.TimeLimit, got.ResvEnd, t0.Add(2*time.Hour))
	}
	// moving the end of a reservation moves the end of its running jobs
	h.mustScontrol("update ReservationName=r Duration=2:30:00")
	if got := h.job(j.ID).ResvEnd; !got.Equal(t0.Add(150 * time.Minute)) {
		t.Fatalf("after the update the job ends by %v, want %v", got, t0.Add(150*time.Minute))
	}
}

// TestPurgeComp: a PURGE_COMP reservation is purged once active and idle
// for its purge time.
func TestPurgeComp(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=p StartTime=now Duration=1:00:00 Nodes=node1 Users=alice Flags=PURGE_COMP=00:10:00")
	j := h.mustSubmitRL("alice", "-N 1 --time=5 --reservation=p --run=5:00")
	h.expectState(j.ID, JobRunning, "")
	h.advance(8 * time.Minute)
	if got := h.st.PurgeReservations(h.now); len(got) != 0 {
		t.Fatalf("purged while a job ended 3 minutes ago: %v", got)
	}
	h.advance(10 * time.Minute)
	if got := h.st.PurgeReservations(h.now); len(got) != 1 {
		t.Fatalf("not purged after 10 idle minutes")
	}
}
