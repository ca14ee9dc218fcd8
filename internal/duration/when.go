package duration

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ParseTime reads a point in time as sbatch --begin and sacct -S/-E accept it, relative
// to now and in loc (nil means now's location):
//
//   - `now`, `now+30minutes`, `now-1hours`, `now+60` (a bare count is seconds); units
//     s/sec/second(s), min/minute(s), h/hour(s), d/day(s), w/week(s), any case;
//   - `today` (00:00 today), `tomorrow` (00:00 tomorrow), `midnight` (the coming 00:00),
//     `noon` (12:00), `elevenses` (11:00), `fika` (15:00), `teatime` (16:00);
//   - `HH:MM[:SS][AM|PM]`;
//   - `YYYY-MM-DD[THH:MM[:SS]]`, `MMDD[YY][-HH:MM[:SS]]`, `MM/DD[/YY][-HH:MM[:SS]]`,
//     `MM.DD[.YY][-HH:MM[:SS]]` (a two-digit year is 20YY; a date alone is 00:00).
//
// As sbatch(1) documents for --begin, a time of day that has already passed today means
// tomorrow, and a date without a year that has already passed this year means next year.
func ParseTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	return parseTime(s, now, loc, false)
}

// ParseTimePast reads the same forms as ParseTime but never rolls a time of day or a
// yearless date forward: `10:00` is today at 10:00 even when that is past. Slurm's own
// parser does this for sacct's --starttime/--endtime, which look back in time.
func ParseTimePast(s string, now time.Time, loc *time.Location) (time.Time, error) {
	return parseTime(s, now, loc, true)
}

func parseTime(s string, now time.Time, loc *time.Location, past bool) (time.Time, error) {
	if loc == nil {
		loc = now.Location()
	}
	now = now.In(loc)
	t, err := parseWhen(strings.TrimSpace(s), now, loc, past)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w %q: %v", ErrSyntax, s, err)
	}
	return t, nil
}

// namedTimes() are Slurm's words for times of day (sbatch(1) --begin).
var namedTimes = sync.OnceValue(func() map[string]int {
	return map[string]int{"noon": 12, "elevenses": 11, "fika": 15, "teatime": 16}
})

func parseWhen(s string, now time.Time, loc *time.Location, past bool) (time.Time, error) {
	lower := strings.ToLower(s)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	switch {
	case strings.HasPrefix(lower, "now"):
		return parseNow(lower[3:], now)
	case lower == "today":
		return today, nil
	case lower == "tomorrow":
		return today.AddDate(0, 0, 1), nil
	case lower == "midnight":
		return today.AddDate(0, 0, 1), nil
	}
	if h, ok := namedTimes()[lower]; ok {
		return rollDay(today.Add(time.Duration(h)*time.Hour), now, past), nil
	}
	if y, mo, d, clock, ok, err := parseDate(lower, now); ok || err != nil {
		if err != nil {
			return time.Time{}, err
		}
		return dateAt(y, mo, d, clock, now, loc, past)
	}
	h, m, sec, err := parseClock(lower, true)
	if err != nil {
		return time.Time{}, err
	}
	return rollDay(today.Add(time.Duration(h*3600+m*60+sec)*time.Second), now, past), nil
}

// rollDay moves a time of day that has already passed to the next day, unless past.
func rollDay(t, now time.Time, past bool) time.Time {
	if !past && t.Before(now) {
		return t.AddDate(0, 0, 1)
	}
	return t
}

// parseNow reads the part after `now`: empty, or [+-]count[unit].
func parseNow(rest string, now time.Time) (time.Time, error) {
	rest = strings.Join(strings.Fields(rest), "")
	if rest == "" {
		return now, nil
	}
	sign := int64(1)
	switch rest[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return time.Time{}, errors.New("expected now+COUNT or now-COUNT")
	}
	i := 1
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	n, err := number(rest[1:i])
	if err != nil {
		return time.Time{}, err
	}
	unit, ok := relUnits()[rest[i:]]
	if !ok {
		return time.Time{}, fmt.Errorf("unknown time unit %q", rest[i:])
	}
	secs, err := addMul(0, n, unit)
	if err != nil {
		return time.Time{}, err
	}
	return now.Add(time.Duration(sign*secs) * time.Second), nil
}

// relUnits() are the unit words accepted after now+COUNT, in seconds; none means seconds.
var relUnits = sync.OnceValue(func() map[string]int64 {
	return map[string]int64{
		"": 1, "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
		"m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
		"h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
		"d": 86400, "day": 86400, "days": 86400,
		"w": 604800, "week": 604800, "weeks": 604800,
	}
})

// parseClock reads HH:MM[:SS], with an optional am/pm suffix when ampm is set.
func parseClock(s string, ampm bool) (h, m, sec int64, err error) {
	suffix := ""
	if ampm && (strings.HasSuffix(s, "am") || strings.HasSuffix(s, "pm")) {
		s, suffix = s[:len(s)-2], s[len(s)-2:]
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, 0, 0, errors.New("expected HH:MM[:SS]")
	}
	vals := [3]int64{}
	for i, p := range parts {
		if len(p) > 2 {
			return 0, 0, 0, fmt.Errorf("%q is not a clock field", p)
		}
		if vals[i], err = number(p); err != nil {
			return 0, 0, 0, err
		}
	}
	h, m, sec = vals[0], vals[1], vals[2]
	if suffix != "" {
		if h < 1 || h > 12 {
			return 0, 0, 0, fmt.Errorf("hour %d with %s", h, suffix)
		}
		h %= 12
		if suffix == "pm" {
			h += 12
		}
	}
	if h > 23 || m > 59 || sec > 59 {
		return 0, 0, 0, errors.New("time of day out of range")
	}
	return h, m, sec, nil
}
