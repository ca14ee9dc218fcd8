package duration

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Infinite is the sentinel for a limit of UNLIMITED or INFINITE (Slurm's INFINITE).
const Infinite = time.Duration(math.MaxInt64)

// maxSeconds bounds any parsed duration so that it fits a time.Duration with room to spare
// (about 290 years).
const maxSeconds = int64(Infinite/time.Second) - 1

// ErrSyntax is wrapped by every parse error of this package.
var ErrSyntax = errors.New("invalid time specification")

// Parse reads a Slurm time limit. A bare number is minutes (`30` = 30 minutes), as for
// sbatch --time, MaxTime, DefaultTime and MaxWall; `UNLIMITED`, `INFINITE` and `-1` (any
// case) give Infinite, as Slurm's time_str2mins does. `0` parses as 0: whether zero means
// "no limit" (sbatch --time=0) is for the caller to decide. The result has second
// resolution; Slurm rounds a job's limit up to whole minutes (see RoundUpMinute).
func Parse(s string) (time.Duration, error) {
	return parse(s, time.Minute)
}

// ParseSeconds reads a time string whose bare number means seconds (`300` = 5 minutes);
// the colon and dash forms and UNLIMITED are read as in Parse. Note that slurm.conf(5)
// documents PreemptExemptTime's bare number as minutes; use this only where a key's
// documented unit is seconds.
func ParseSeconds(s string) (time.Duration, error) {
	return parse(s, time.Second)
}

// parse implements Parse and ParseSeconds; bare is the unit of a lone number.
func parse(s string, bare time.Duration) (time.Duration, error) {
	t := strings.TrimSpace(s)
	switch strings.ToUpper(t) {
	case "UNLIMITED", "INFINITE", "-1":
		return Infinite, nil
	}
	secs, err := parseFields(t, int64(bare/time.Second))
	if err != nil {
		return 0, fmt.Errorf("%w %q: %v", ErrSyntax, s, err)
	}
	return time.Duration(secs) * time.Second, nil
}

// parseFields splits `[days-]a[:b[:c]]` and returns seconds. Without a day part one field
// is bare units, two are minutes:seconds, three hours:minutes:seconds; with a day part
// the fields are hours[:minutes[:seconds]] (Slurm's documented forms).
func parseFields(t string, bareSecs int64) (int64, error) {
	days, rest, hasDays := strings.Cut(t, "-")
	fields := strings.Split(rest, ":")
	if !hasDays {
		fields = strings.Split(t, ":")
	}
	if len(fields) > 3 {
		return 0, errors.New("too many ':' fields")
	}
	nums := make([]int64, len(fields))
	for i, f := range fields {
		n, err := number(f)
		if err != nil {
			return 0, err
		}
		nums[i] = n
	}
	var units []int64
	switch {
	case hasDays:
		units = []int64{3600, 60, 1}
	case len(nums) == 1:
		units = []int64{bareSecs}
	case len(nums) == 2:
		units = []int64{60, 1}
	default:
		units = []int64{3600, 60, 1}
	}
	total := int64(0)
	if hasDays {
		d, err := number(days)
		if err != nil {
			return 0, err
		}
		if total, err = addMul(0, d, 86400); err != nil {
			return 0, err
		}
	}
	for i, n := range nums {
		var err error
		if total, err = addMul(total, n, units[i]); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// number reads a field of decimal digits.
func number(f string) (int64, error) {
	if f == "" {
		return 0, errors.New("empty field")
	}
	for i := 0; i < len(f); i++ {
		if f[i] < '0' || f[i] > '9' {
			return 0, fmt.Errorf("%q is not a number", f)
		}
	}
	if len(f) > 12 {
		return 0, errors.New("value too large")
	}
	return strconv.ParseInt(f, 10, 64)
}

// addMul returns total + n*unit, failing when the result leaves the supported range.
func addMul(total, n, unit int64) (int64, error) {
	if unit != 0 && n > (maxSeconds-total)/unit {
		return 0, errors.New("value too large")
	}
	return total + n*unit, nil
}

// RoundUpMinute rounds d up to a whole minute, as Slurm does with a job time limit given
// in seconds ("second values are rounded up to the next minute", sbatch(1)).
func RoundUpMinute(d time.Duration) time.Duration {
	if d == Infinite || d <= 0 {
		return d
	}
	if r := d % time.Minute; r != 0 {
		d += time.Minute - r
	}
	return d
}

// Format prints d as Slurm prints limits and times: `HH:MM:SS`, or `D-HH:MM:SS` from one
// day up (`01:00:00`, `3-00:00:00`), and `UNLIMITED` for Infinite. Fractions of a second
// are dropped; a negative duration prints `INVALID`.
func Format(d time.Duration) string {
	if d == Infinite {
		return "UNLIMITED"
	}
	if d < 0 {
		return "INVALID"
	}
	days, h, m, s := split(d)
	if days > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// FormatElapsed prints d the way squeue prints its TIME and TIME_LEFT columns: `M:SS`
// under an hour (`0:00`, `1:23`), `H:MM:SS` under a day (`1:02:03`), else `D-HH:MM:SS`
// (`1-02:03:04`); `UNLIMITED` for Infinite and `INVALID` when negative.
func FormatElapsed(d time.Duration) string {
	if d == Infinite {
		return "UNLIMITED"
	}
	if d < 0 {
		return "INVALID"
	}
	days, h, m, s := split(d)
	switch {
	case days > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", days, h, m, s)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

// split cuts a non-negative duration into days, hours, minutes and seconds.
func split(d time.Duration) (days, h, m, s int64) {
	secs := int64(d / time.Second)
	return secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60
}
