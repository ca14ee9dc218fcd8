package duration

import (
	"errors"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// dhms builds a duration from days, hours, minutes and seconds, like Slurm writes them.
func dhms(d, h, m, s int64) time.Duration {
	return time.Duration(((d*24+h)*60+m)*60+s) * time.Second
}

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
	}{
		{"30", dhms(0, 0, 30, 0)},                  // minutes
		{"0", 0},                                   // zero: caller decides it means "no limit"
		{"90", dhms(0, 1, 30, 0)},                  // minutes beyond an hour
		{"30:15", dhms(0, 0, 30, 15)},              // minutes:seconds
		{"4:00:00", dhms(0, 4, 0, 0)},              // hours:minutes:seconds
		{"00:30:00", dhms(0, 0, 30, 0)},            //
		{"168:00:00", dhms(7, 0, 0, 0)},            // hours beyond a day
		{"7-0", dhms(7, 0, 0, 0)},                  // days-hours
		{"1-12", dhms(1, 12, 0, 0)},                //
		{"1-2:30", dhms(1, 2, 30, 0)},              // days-hours:minutes
		{"1-00:00:00", dhms(1, 0, 0, 0)},           // days-hours:minutes:seconds
		{"3-04:05:06", dhms(3, 4, 5, 6)},           //
		{" 2:00:00 ", dhms(0, 2, 0, 0)},            // surrounding blanks
		{"UNLIMITED", Infinite},                    //
		{"unlimited", Infinite},                    // Slurm compares case-insensitively
		{"INFINITE", Infinite},                     //
		{"Infinite", Infinite},                     //
		{"-1", Infinite},                           // time_str2mins treats -1 as INFINITE
		{"100000-00:00:00", dhms(100000, 0, 0, 0)}, // large but representable
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseSeconds(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
	}{
		{"300", 300 * time.Second},
		{"0", 0},
		{"5:00", 5 * time.Minute},
		{"1-0", 24 * time.Hour},
		{"INFINITE", Infinite},
	}
	for _, c := range cases {
		got, err := ParseSeconds(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSeconds(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"", " ", "abc", "1:2:3:4", "1-2:3:4:5", "-5", "1-", "-", "1--2", "1-2-3",
		"1.5", "+5", "1h", "1:", ":30", "1::2", "99999999999999999", "9999999999-0",
		"UNLIMITEDX", "１", // full-width digit
	} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want error", in, got)
		} else if !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) error %v does not wrap ErrSyntax", in, err)
		}
	}
}

func TestFormat(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "00:00:00"},
		{dhms(0, 1, 0, 0), "01:00:00"},
		{dhms(0, 0, 30, 0), "00:30:00"},
		{dhms(0, 23, 59, 59), "23:59:59"},
		{dhms(3, 0, 0, 0), "3-00:00:00"},
		{dhms(7, 0, 0, 0), "7-00:00:00"},
		{dhms(1, 2, 3, 4), "1-02:03:04"},
		{dhms(0, 0, 0, 5) + 999*time.Millisecond, "00:00:05"},
		{Infinite, "UNLIMITED"},
		{-time.Second, "INVALID"},
	}
	for _, c := range cases {
		if got := Format(c.d); got != c.want {
			t.Errorf("Format(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestFormatElapsed(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{0, "0:00"},
		{dhms(0, 0, 1, 23), "1:23"},
		{dhms(0, 0, 59, 59), "59:59"},
		{dhms(0, 1, 2, 3), "1:02:03"},
		{dhms(0, 12, 0, 0), "12:00:00"},
		{dhms(1, 2, 3, 4), "1-02:03:04"},
		{Infinite, "UNLIMITED"},
		{-time.Minute, "INVALID"},
	}
	for _, c := range cases {
		if got := FormatElapsed(c.d); got != c.want {
			t.Errorf("FormatElapsed(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestRoundUpMinute(t *testing.T) {
	cases := []struct{ in, want time.Duration }{
		{0, 0},
		{time.Second, time.Minute},
		{time.Minute, time.Minute},
		{61 * time.Second, 2 * time.Minute},
		{Infinite, Infinite},
	}
	for _, c := range cases {
		if got := RoundUpMinute(c.in); got != c.want {
			t.Errorf("RoundUpMinute(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// seconds draws whole-second durations up to about 30 years.
func seconds() *rapid.Generator[time.Duration] {
	return rapid.Custom(func(t *rapid.T) time.Duration {
		return time.Duration(rapid.Int64Range(0, 1_000_000_000).Draw(t, "secs")) * time.Second
	})
}

func TestPropertyFormatParseRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := seconds().Draw(t, "d")
		for name, s := range map[string]string{"Format": Format(d), "FormatElapsed": FormatElapsed(d)} {
			got, err := Parse(s)
			if err != nil || got != d {
				t.Fatalf("Parse(%s(%v) = %q) = %v, %v", name, d, s, got, err)
			}
		}
	})
}

func TestPropertyParseFormatCanonical(t *testing.T) {
	// Any accepted limit prints to a canonical form that parses back to the same value.
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringMatching(`[0-9]{1,4}(-[0-9]{1,2})?(:[0-9]{1,2}){0,2}`).Draw(t, "s")
		d, err := Parse(s)
		if err != nil {
			return
		}
		if again, err := Parse(Format(d)); err != nil || again != d {
			t.Fatalf("Parse(Format(Parse(%q))) = %v, %v; want %v", s, again, err, d)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"7-0", "4:00:00", "168:00:00", "1-00:00:00", "30", "00:30:00", "UNLIMITED", "1-2-3", "::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []func(string) (time.Duration, error){Parse, ParseSeconds} {
			d, err := p(s)
			if err != nil || d == Infinite {
				continue
			}
			if d < 0 {
				t.Fatalf("%q parsed to negative %v", s, d)
			}
			if again, err := Parse(Format(d)); err != nil || again != d {
				t.Fatalf("%q: Parse(Format(%v)) = %v, %v", s, d, again, err)
			}
		}
	})
}
