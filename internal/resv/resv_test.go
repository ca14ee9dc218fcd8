package resv

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// now is a Monday morning.
var now = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

func build(t *testing.T, line string) (*Reservation, error) {
	t.Helper()
	cmd, err := ParseCommand(SplitLine(line))
	if err != nil {
		return nil, err
	}
	r, _, err := Build(cmd, nil, now, time.UTC)
	return r, err
}

func TestParseCommandForms(t *testing.T) {
	cases := []struct {
		line string
		verb Verb
		name string
		n    int
	}{
		{"create reservation ReservationName=R StartTime=now Duration=60 Users=a Nodes=n1", VerbCreate, "R", 4},
		{"create res starttime=now duration=1 user=a nodecnt=2", VerbCreate, "", 4},
		{"create reservationname=test start=now duration=1 user=u partition=gpu tres=cpu=24,node=4", VerbCreate, "test", 5},
		{"update ReservationName=R Duration=150 Users+=bob", VerbUpdate, "R", 2},
		{"update reservation ReservationName=R Flags-=DAILY", VerbUpdate, "R", 1},
		{"delete ReservationName=R", VerbDelete, "R", 0},
		{"delete reservation R", VerbDelete, "R", 0},
		{"show reservation", VerbShow, "", 0},
		{"show res R", VerbShow, "R", 0},
		{`create reservation ReservationName="a b" StartTime=now Duration=1 Users=a Nodes=n1`, VerbCreate, "a b", 4},
	}
	for _, c := range cases {
		cmd, err := ParseCommand(SplitLine(c.line))
		if err != nil {
			t.Fatalf("%q: %v", c.line, err)
		}
		if cmd.Verb != c.verb || cmd.Name != c.name || len(cmd.Fields) != c.n {
			t.Errorf("%q: got %s %q %d fields, want %s %q %d", c.line, cmd.Verb, cmd.Name, len(cmd.Fields), c.verb, c.name, c.n)
		}
	}
}

func TestBuildRejects(t *testing.T) {
	cases := []struct {
		line string
		want string
	}{
		{"create reservation StartTime=now Duration=60 Nodes=n1", "Either Users/Groups and/or Accounts must be specified.  No reservation created."},
		{"create reservation Duration=60 Users=a Nodes=n1", "StartTime must be specified.  No reservation created."},
		{"create reservation StartTime=now Users=a Nodes=n1", "Duration or EndTime must be specified.  No reservation created."},
		{"create reservation StartTime=now+2hours EndTime=now+1hour Users=a Nodes=n1", "Invalid time specified"},
		{"create reservation StartTime=yesterdayish Duration=1 Users=a Nodes=n1", "Invalid time specified"},
		{"create reservation StartTime=now Duration=1 Users=a,-b Nodes=n1", "Requested reservation is invalid"},
		{"create reservation StartTime=now Duration=1 Users=a Flags=BOGUS Nodes=n1", "Invalid Flags value: BOGUS"},
		{"create reservation StartTime=now Duration=1 Users=a Licenses=m:x", "Invalid license specification"},
		{"create reservation StartTime=now Duration=1 Users=a Licenses=m:2", "Licenses or BurstBuffer without nodes requires Flags=LICENSE_ONLY (ANY_NODES).  No reservation created."},
		{"create reservation StartTime=now Duration=1 Users=a", "Nodes, NodeCnt, CoreCnt, TRES, BurstBuffer, Licenses or PartitionName must be specified.  No reservation created."},
		{"create reservation StartTime=now Duration=1 Users=a Nodes=n[1-", "Invalid node name specified"},
		{"create reservation StartTime=now Duration=1 Users=a Bogus=1", "invalid keyword: Bogus=1"},
		{"create reservation StartTime=now Duration=1 Users=a NodeCnt=1 Flags=DAILY,TIME_FLOAT", "Requested reservation is invalid"},
		{"update Duration=5", "ReservationName must be specified."},
	}
	for _, c := range cases {
		_, err := build(t, c.line)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: error %v, want %q", c.line, err, c.want)
		}
	}
}

func TestBuildFields(t *testing.T) {
	r, err := build(t, "create reservation ReservationName=maint StartTime=now+2hours Duration=2:00:00 Nodes=node[1-4] "+
		"Users=root Flags=MAINT,IGNORE_JOBS Licenses=matlab:2,ansys")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Start.Equal(now.Add(2*time.Hour)) || !r.End.Equal(now.Add(4*time.Hour)) || r.Duration != 2*time.Hour {
		t.Fatalf("times %v %v %v", r.Start, r.End, r.Duration)
	}
	if strings.Join(r.Nodes, ",") != "node1,node2,node3,node4" || r.Flags != FlagMaint|FlagIgnoreJobs|FlagSpecNodes {
		t.Fatalf("nodes %v flags %s", r.Nodes, r.Flags)
	}
	if len(r.Licenses) != 2 || r.Licenses[0] != (License{"matlab", 2}) || r.Licenses[1] != (License{"ansys", 1}) {
		t.Fatalf("licenses %v", r.Licenses)
	}
	r2, _ := build(t, "create res StartTime=now EndTime=now+90minutes Accounts=-phys Users=-alan NodeCnt=2k")
	if r2.Duration != 90*time.Minute || !r2.AccountsDenied || !r2.UsersDenied || r2.NodeCnt != 2048 {
		t.Fatalf("got %+v", r2)
	}
	r3, _ := build(t, "create res StartTime=now Duration=UNLIMITED Users=a Nodes=ALL")
	if r3.Duration != Infinite || !r3.End.Equal(now.Add(365*24*time.Hour)) || r3.Nodes[0] != AllNodes {
		t.Fatalf("unlimited: %+v", r3)
	}
	// Nodes=ALL prints SPEC_NODES,ALL_NODES (oracle, json-reservations).
	if got := r3.Flags.String(); got != "SPEC_NODES,ALL_NODES" {
		t.Errorf("Nodes=ALL flags %q, want SPEC_NODES,ALL_NODES", got)
	}
}

func TestUpdateOps(t *testing.T) {
	base, _ := build(t, "create res ReservationName=R StartTime=now+1hour Duration=60 Users=alan,brenda Nodes=n[1-2] Flags=DAILY")
	cmd, _ := ParseCommand(SplitLine("update ReservationName=R Users-=alan Nodes+=n3 Flags+=MAGNETIC Duration=150"))
	r, given, err := Build(cmd, base, now, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.Users, ",") != "brenda" || len(r.Nodes) != 3 || r.Flags&FlagMagnetic == 0 || r.Flags&FlagDaily == 0 {
		t.Fatalf("got users %v nodes %v flags %s", r.Users, r.Nodes, r.Flags)
	}
	if r.Duration != 150*time.Minute || !r.End.Equal(base.Start.Add(150*time.Minute)) || !given["Users"] || given["StartTime"] {
		t.Fatalf("duration %v end %v given %v", r.Duration, r.End, given)
	}
	if len(base.Users) != 2 {
		t.Fatal("base modified")
	}
	// the StartTime of an active reservation cannot change
	act, _ := build(t, "create res ReservationName=A StartTime=now Duration=60 Users=a Nodes=n1")
	cmd, _ = ParseCommand(SplitLine("update ReservationName=A StartTime=now+5minutes"))
	if _, _, err := Build(cmd, act, now.Add(time.Minute), time.UTC); !errors.Is(err, ErrInvalidTime) {
		t.Fatalf("active start update: %v", err)
	}
}

// TestRecurrence: DAILY, WEEKDAY, WEEKEND and WEEKLY reservations roll
// forward as a pure function of now; a one-off reservation expires.
func TestRecurrence(t *testing.T) {
	// Monday 2026-01-05 12:00, one hour
	base := &Reservation{Name: "r", Start: now.Add(3 * time.Hour), Duration: time.Hour}
	base.End = base.Start.Add(time.Hour)
	day := 24 * time.Hour
	cases := []struct {
		flags Flags
		at    time.Time
		start time.Time
	}{
		{FlagDaily, now, now.Add(3 * time.Hour)},
		{FlagDaily, now.Add(3*time.Hour + 30*time.Minute), now.Add(3 * time.Hour)},
		{FlagDaily, now.Add(4 * time.Hour), now.Add(day + 3*time.Hour)},
		{FlagDaily, now.Add(10*day + 5*time.Hour), now.Add(11*day + 3*time.Hour)},
		{FlagWeekly, now.Add(4 * time.Hour), now.Add(7*day + 3*time.Hour)},
		{FlagWeekday, now.Add(4*day + 4*time.Hour), now.Add(7*day + 3*time.Hour)}, // Friday after -> Monday
		{FlagWeekend, now.Add(4 * time.Hour), now.Add(5*day + 3*time.Hour)},       // Monday -> Saturday
		{FlagWeekend, now.Add(5*day + 4*time.Hour), now.Add(6*day + 3*time.Hour)}, // Saturday -> Sunday
		{FlagHourly, now.Add(4*time.Hour + time.Minute), now.Add(4 * time.Hour)},
	}
	for _, c := range cases {
		r := base.Clone()
		r.Flags = c.flags
		w := r.Window(c.at)
		if !w.Start.Equal(c.start) || w.End.Sub(w.Start) != time.Hour {
			t.Errorf("%s at %v: window %v-%v, want start %v", c.flags, c.at, w.Start, w.End, c.start)
		}
		if r.Expired(c.at.Add(100 * day)) {
			t.Errorf("%s expired", c.flags)
		}
	}
	if !base.Expired(now.Add(4*time.Hour)) || base.Expired(now.Add(3*time.Hour)) {
		t.Fatal("one-off expiry")
	}
	r := base.Clone()
	r.Flags = FlagDaily
	occ := r.Occurrences(now, now.Add(3*day), 10)
	if len(occ) != 3 || !occ[2].Start.Equal(now.Add(2*day+3*time.Hour)) {
		t.Fatalf("occurrences %v", occ)
	}
	// TIME_FLOAT stays ahead of now
	f := &Reservation{Flags: FlagTimeFloat, FloatOffset: time.Hour, Duration: 100 * time.Minute}
	if w := f.Window(now.Add(5 * time.Hour)); !w.Start.Equal(now.Add(6 * time.Hour)) {
		t.Fatalf("float window %v", w)
	}
}

func TestAccess(t *testing.T) {
	cases := []struct {
		r       Reservation
		user    string
		account string
		want    bool
	}{
		{Reservation{Users: []string{"a", "b"}}, "a", "x", true},
		{Reservation{Users: []string{"a", "b"}}, "c", "x", false},
		{Reservation{Users: []string{"c"}, UsersDenied: true}, "a", "x", true},
		{Reservation{Users: []string{"c"}, UsersDenied: true}, "c", "x", false},
		{Reservation{Accounts: []string{"foo"}, Users: []string{"alan"}, UsersDenied: true}, "alan", "foo", false},
		{Reservation{Accounts: []string{"foo"}, Users: []string{"alan"}, UsersDenied: true}, "bob", "foo", true},
		{Reservation{Accounts: []string{"foo"}, Users: []string{"alan"}, UsersDenied: true}, "bob", "bar", false},
		{Reservation{Accounts: []string{"foo"}, Users: []string{"a"}}, "a", "bar", false},
		{Reservation{Groups: []string{"g"}}, "x", "y", true},
		{Reservation{}, "x", "y", false},
	}
	for i, c := range cases {
		if got := c.r.Allows(c.user, c.account, []string{"g"}); got != c.want {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
}

func TestShowLayout(t *testing.T) {
	r, err := build(t, "create reservation ReservationName=test StartTime=now Duration=1 Users=user1 Nodes=node[01-04] "+
		"PartitionName=gpu Licenses=matlab:2")
	if err != nil {
		t.Fatal(err)
	}
	want := "ReservationName=test StartTime=2026-01-05T09:00:00 EndTime=2026-01-05T09:01:00 Duration=00:01:00\n" +
		"   Nodes=node[01-04] NodeCnt=4 CoreCnt=0 Features=(null) PartitionName=gpu Flags=SPEC_NODES\n" +
		"   TRES=license/matlab=2\n" +
		"   Users=user1 Groups=(null) Accounts=(null) Licenses=matlab:2 State=ACTIVE BurstBuffer=(null)\n" +
		"   MaxStartDelay=(null)\n\n"
	if got := Show(r, now, ShowOptions{}); got != want {
		t.Fatalf("show:\n%s\nwant:\n%s", got, want)
	}
	if got := Show(r, now.Add(time.Hour), ShowOptions{OneLiner: true}); !strings.Contains(got, "State=INACTIVE") || strings.Count(got, "\n") != 1 {
		t.Fatalf("one-liner: %q", got)
	}
	if ShowAll(nil, now, ShowOptions{}) != "No reservations in the system\n" {
		t.Fatal("empty show")
	}
	tab := SinfoT([]*Reservation{r}, now, nil)
	wantT := "RESV_NAME         STATE          START_TIME            END_TIME    DURATION NODELIST\n" +
		"test             ACTIVE 2026-01-05T09:00:00 2026-01-05T09:01:00    00:01:00 node[01-04]\n"
	if tab != wantT {
		t.Fatalf("sinfo -T:\n%s\nwant:\n%s", tab, wantT)
	}
}

// FuzzParseCommand: no input makes the parser or the builder panic, and
// a built record always ends after it starts.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		"create reservation ReservationName=R StartTime=now Duration=60 Users=a Nodes=n[1-4] Flags=MAINT,DAILY",
		"update ReservationName=R Users-=a Flags+=MAGNETIC NodeCnt=2k,2k",
		"create res start=now+1hour end=now+2hours accounts=-x licenses=m:2 flags=license_only",
		"delete reservation R", "show res", "create res tres=cpu=2,license/a=3,bb/c=4 start=noon duration=UNLIMITED user=a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmd, err := ParseCommand(SplitLine(line))
		if err != nil {
			return
		}
		r, _, err := Build(cmd, nil, now, time.UTC)
		if err != nil {
			return
		}
		if cmd.Verb == VerbCreate && !r.End.After(r.Start) && r.Flags&FlagTimeFloat == 0 {
			t.Fatalf("%q: end %v not after start %v", line, r.End, r.Start)
		}
		_ = Show(r, now, ShowOptions{})
		_ = r.Occurrences(now, now.Add(48*time.Hour), 5)
	})
}

func TestClientMessage(t *testing.T) {
	cases := []struct {
		v    Verb
		arg  string
		err  error
		want string
	}{
		{VerbCreate, "reservation", ErrOverlap, "Error creating the reservation: Reservation request overlaps with existing reservation"},
		// oracle (24.11): update and delete errors, a user's command
		{VerbUpdate, "ReservationName=nosuch", ErrInvalid, "slurm_update error: Requested reservation is invalid"},
		{VerbDelete, "reservation=nosuch", ErrInvalid, "delete_reservation reservation=nosuch: Requested reservation is invalid"},
		{VerbDelete, "ReservationName=maint", ErrNotPermitted, "delete_reservation ReservationName=maint: Invalid user id"},
		{VerbCreate, "reservation", &UsageError{"StartTime must be specified.  No reservation created."}, "StartTime must be specified.  No reservation created."},
	}
	for _, c := range cases {
		if got := ClientMessage(c.v, c.arg, c.err); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// TestRecurrenceOldReservation: a recurring reservation created long ago
// finds its current window directly (no walk over every occurrence).
func TestRecurrenceOldReservation(t *testing.T) {
	for _, f := range []Flags{FlagHourly, FlagDaily, FlagWeekly, FlagWeekday, FlagWeekend} {
		r := &Reservation{Start: now, Duration: 30 * time.Minute, Flags: f}
		at := now.Add(3*365*24*time.Hour + 10*time.Minute)
		w := r.Window(at)
		if !w.End.After(at) || w.Start.Sub(at) > 7*24*time.Hour || w.Start.Minute() != 0 {
			t.Errorf("%s: window %v at %v", f, w, at)
		}
		if wd := w.Start.Weekday(); f == FlagWeekday && (wd == time.Saturday || wd == time.Sunday) ||
			f == FlagWeekend && wd != time.Saturday && wd != time.Sunday {
			t.Errorf("%s: window on %s", f, wd)
		}
	}
}

// TestTimeFloatEndTime: a TIME_FLOAT reservation with an EndTime floats
// its start towards that end and expires when it is reached.
func TestTimeFloatEndTime(t *testing.T) {
	r, err := build(t, "create res StartTime=now+60minutes EndTime=now+5hours Users=op Nodes=tux8 Flags=TIME_FLOAT")
	if err != nil {
		t.Fatal(err)
	}
	w := r.Window(now.Add(2 * time.Hour))
	if !w.Start.Equal(now.Add(3*time.Hour)) || !w.End.Equal(now.Add(5*time.Hour)) {
		t.Fatalf("window %v", w)
	}
	if r.Expired(now.Add(3*time.Hour)) || !r.Expired(now.Add(4*time.Hour)) {
		t.Fatal("expiry")
	}
}
