package resv

import (
	"strings"
	"testing"
	"time"
)

// TestUtilization: a 2-hour, 8-CPU reservation with one 4-CPU job for
// the first hour and one running past the end: allocated CPU time counts
// only inside the window, the rest is idle.
func TestUtilization(t *testing.T) {
	r := &Reservation{Name: "team", Start: now, Duration: 2 * time.Hour, Nodes: []string{"n1", "n2"}}
	r.End = r.Start.Add(r.Duration)
	recs := Records(r, "c", 8, now.Add(-time.Hour), now.Add(24*time.Hour))
	jobs := []JobRun{
		{Reservation: "team", Start: now, End: now.Add(time.Hour), CPUs: 4},
		{Reservation: "team", Start: now.Add(90 * time.Minute), End: now.Add(3 * time.Hour), CPUs: 2},
		{Reservation: "other", Start: now, End: now.Add(time.Hour), CPUs: 8},
	}
	rows := Utilization(recs, jobs, now.Add(-time.Hour), now.Add(24*time.Hour))
	if len(rows) != 1 {
		t.Fatalf("rows %v", rows)
	}
	wantAlloc := int64(4*3600 + 2*1800)
	if rows[0].Allocated != wantAlloc || rows[0].Idle != 8*7200-wantAlloc {
		t.Fatalf("allocated %d idle %d", rows[0].Allocated, rows[0].Idle)
	}
	out := FormatUtilization(rows, now, now.Add(24*time.Hour), true, nil)
	want := "Cluster|Name|Start|End|TRES Name|Allocated|Idle|\nc|team|2026-01-05T09:00:00|2026-01-05T11:00:00|cpu|300|660|\n"
	if out != want {
		t.Fatalf("parsable:\n%s\nwant:\n%s", out, want)
	}
	t.Logf("\n%s", FormatUtilization(rows, now, now.Add(24*time.Hour), false, nil))
	// a daily reservation has one record per occurrence
	r.Flags = FlagDaily
	if n := len(Records(r, "c", 8, now, now.Add(72*time.Hour))); n != 3 {
		t.Fatalf("%d daily records", n)
	}
}

func TestParseScript(t *testing.T) {
	cmds, err := ParseScript(`# maintenance windows
scontrol create reservation ReservationName=maint StartTime=now+2hours Duration=2:00:00 Nodes=ALL Users=root Flags=MAINT,IGNORE_JOBS

create reservation ReservationName=lab StartTime=now+1hour Duration=60 NodeCnt=2 Users=alice Flags=DAILY
`)
	if err != nil || len(cmds) != 2 || cmds[0].Line != 2 || cmds[1].Cmd.Name != "lab" {
		t.Fatalf("%v %+v", err, cmds)
	}
	_, err = ParseScript("create reservation StartTime=now\nshow reservation\n")
	if err == nil || !strings.HasPrefix(err.Error(), "line 2:") {
		t.Fatalf("error %v", err)
	}
}

func FuzzParseScript(f *testing.F) {
	f.Add("scontrol create reservation ReservationName=m StartTime=now Duration=1 Nodes=ALL Users=root\n# c\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseScript(s)
	})
}
