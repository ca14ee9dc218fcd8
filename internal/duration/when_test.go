package duration

import (
	"testing"
	"time"
)

// clock is the fixed "now" of these tests: Wednesday 2026-03-11 14:30:15 UTC.
var clock = time.Date(2026, 3, 11, 14, 30, 15, 0, time.UTC)

func at(y int, mo time.Month, d, h, m, s int) time.Time {
	return time.Date(y, mo, d, h, m, s, 0, time.UTC)
}

func TestParseTime(t *testing.T) {
	cases := []struct {
		in   string
		want time.Time
	}{
		{"now", clock},
		{"NOW", clock},
		{"now+60", clock.Add(time.Minute)}, // bare count = seconds (sbatch --begin=now+60)
		{"now+1hour", clock.Add(time.Hour)},
		{"now-1hours", clock.Add(-time.Hour)},
		{"now+30minutes", clock.Add(30 * time.Minute)},
		{"now+30min", clock.Add(30 * time.Minute)},
		{"now-2days", clock.AddDate(0, 0, -2)},
		{"now+1week", clock.AddDate(0, 0, 7)},
		{"now-3weeks", clock.AddDate(0, 0, -21)},
		{"now+10seconds", clock.Add(10 * time.Second)},
		{"now + 1 hour", clock.Add(time.Hour)},
		{"today", at(2026, 3, 11, 0, 0, 0)},
		{"Tomorrow", at(2026, 3, 12, 0, 0, 0)},
		{"midnight", at(2026, 3, 12, 0, 0, 0)},
		{"noon", at(2026, 3, 12, 12, 0, 0)},    // 12:00 already passed today
		{"teatime", at(2026, 3, 11, 16, 0, 0)}, // 16:00 still ahead
		{"fika", at(2026, 3, 11, 15, 0, 0)},
		{"16:00", at(2026, 3, 11, 16, 0, 0)},
		{"10:00", at(2026, 3, 12, 10, 0, 0)}, // passed: next day, as sbatch --begin
		{"10:00:30", at(2026, 3, 12, 10, 0, 30)},
		{"4:45PM", at(2026, 3, 11, 16, 45, 0)},
		{"12:00am", at(2026, 3, 12, 0, 0, 0)},
		{"2026-01-01", at(2026, 1, 1, 0, 0, 0)},
		{"2026-01-01T10:00", at(2026, 1, 1, 10, 0, 0)},
		{"2026-01-01T10:00:05", at(2026, 1, 1, 10, 0, 5)},
		{"2010-01-20T12:34:00", at(2010, 1, 20, 12, 34, 0)},
		{"0401", at(2026, 4, 1, 0, 0, 0)},
		{"0101", at(2027, 1, 1, 0, 0, 0)}, // passed this year: next year
		{"010127", at(2027, 1, 1, 0, 0, 0)},
		{"04/01", at(2026, 4, 1, 0, 0, 0)},
		{"04/01/27-08:00", at(2027, 4, 1, 8, 0, 0)},
		{"12.24-18:30:00", at(2026, 12, 24, 18, 30, 0)},
	}
	for _, c := range cases {
		got, err := ParseTime(c.in, clock, time.UTC)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseTimePast(t *testing.T) {
	cases := []struct {
		in   string
		want time.Time
	}{
		{"10:00", at(2026, 3, 11, 10, 0, 0)},
		{"0101", at(2026, 1, 1, 0, 0, 0)},
		{"noon", at(2026, 3, 11, 12, 0, 0)},
		{"now-1hours", clock.Add(-time.Hour)},
	}
	for _, c := range cases {
		got, err := ParseTimePast(c.in, clock, time.UTC)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ParseTimePast(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseTimeLocation(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	got, err := ParseTime("today", clock, loc) // 15:30 CET on the same day
	want := time.Date(2026, 3, 11, 0, 0, 0, 0, loc)
	if err != nil || !got.Equal(want) {
		t.Fatalf("ParseTime(today, CET) = %v, %v; want %v", got, err, want)
	}
}

func TestParseTimeErrors(t *testing.T) {
	for _, in := range []string{
		"", "yesterday", "now+", "now*3", "now+3fortnights", "now+1.5hours",
		"25:00", "10:60", "13:00pm", "0:30am", "2026-13-01", "2026-02-30", "2026-01-01T",
		"2026-01-01T25:00", "1301", "0230", "04/01/2027", "1/2/3/4", "12345", "10:00:00:00",
		"now+99999999999weeks",
	} {
		if got, err := ParseTime(in, clock, time.UTC); err == nil {
			t.Errorf("ParseTime(%q) = %v, want error", in, got)
		}
	}
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"now-1hours", "now+30minutes", "today", "midnight", "2026-01-01T10:00", "10:00pm", "04/01/27-08:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := ParseTime(s, clock, time.UTC); err != nil {
			return
		}
		if _, err := ParseTimePast(s, clock, time.UTC); err != nil {
			t.Fatalf("%q: accepted by ParseTime but not ParseTimePast: %v", s, err)
		}
	})
}
