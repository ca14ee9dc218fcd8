package duration

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// parseDate recognises the date forms. ok is false when s is not a date at all (so the
// caller can try a plain clock time); y is 0 when the year was left out.
func parseDate(s string, now time.Time) (y, mo, d int64, clock string, ok bool, err error) {
	if date, rest, iso := strings.Cut(s, "t"); iso || isISODate(s) {
		if !isISODate(date) {
			return 0, 0, 0, "", true, fmt.Errorf("%q is not YYYY-MM-DD", date)
		}
		y, _ = number(date[0:4])
		mo, _ = number(date[5:7])
		d, _ = number(date[8:10])
		if iso && rest == "" {
			return 0, 0, 0, "", true, errors.New("missing time after T")
		}
		return y, mo, d, rest, true, nil
	}
	date, clock, _ := strings.Cut(s, "-")
	if strings.Contains(date, ":") {
		return 0, 0, 0, "", false, nil
	}
	fields, err := dateFields(date)
	if err != nil {
		return 0, 0, 0, "", true, err
	}
	mo, d = fields[0], fields[1]
	if len(fields) == 3 {
		y = 2000 + fields[2]
	}
	return y, mo, d, clock, true, nil
}

// isISODate reports whether s is exactly YYYY-MM-DD.
func isISODate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i, c := range []byte(s) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// dateFields reads MMDD[YY], MM/DD[/YY] or MM.DD[.YY] into month, day[, two-digit year].
func dateFields(date string) ([]int64, error) {
	var parts []string
	switch {
	case strings.Contains(date, "/"):
		parts = strings.Split(date, "/")
	case strings.Contains(date, "."):
		parts = strings.Split(date, ".")
	case len(date) == 4 || len(date) == 6:
		for i := 0; i < len(date); i += 2 {
			parts = append(parts, date[i:i+2])
		}
	default:
		return nil, fmt.Errorf("%q is not a date or time", date)
	}
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("%q is not a date", date)
	}
	out := make([]int64, len(parts))
	for i, p := range parts {
		if len(p) > 2 {
			return nil, fmt.Errorf("%q is not a date field", p)
		}
		n, err := number(p)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

// dateAt builds the time for a parsed date and optional clock, checking the calendar.
// A missing year is this year, or next year when the moment has passed (unless past).
func dateAt(y, mo, d int64, clock string, now time.Time, loc *time.Location, past bool) (time.Time, error) {
	var h, m, sec int64
	if clock != "" {
		var err error
		if h, m, sec, err = parseClock(clock, false); err != nil {
			return time.Time{}, err
		}
	}
	year := y
	if year == 0 {
		year = int64(now.Year())
	}
	if year < 1970 || year > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, errors.New("date out of range")
	}
	t := time.Date(int(year), time.Month(mo), int(d), int(h), int(m), int(sec), 0, loc)
	if t.Day() != int(d) {
		return time.Time{}, fmt.Errorf("day %d does not exist in month %d", d, mo)
	}
	if y == 0 && !past && t.Before(now) {
		t = t.AddDate(1, 0, 0)
	}
	return t, nil
}
