package conf

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/duration"
)

// parseInt reads a decimal integer within [lo, hi].
func parseInt(v string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid number %s", quote(v))
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("value %d out of range [%d, %d]", n, lo, hi)
	}
	return n, nil
}

// parseLimit reads an integer that may also be UNLIMITED/INFINITE (or -1),
// giving Unlimited.
func parseLimit(v string, lo, hi int64) (int64, error) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "UNLIMITED", "INFINITE", "-1":
		return Unlimited, nil
	}
	return parseInt(v, lo, hi)
}

// parseBool reads YES/NO as Slurm's boolean keys do (also TRUE/FALSE,
// 1/0, UP/DOWN, ON/OFF).
func parseBool(v string) (bool, error) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "YES", "TRUE", "1", "UP", "ON", "Y":
		return true, nil
	case "NO", "FALSE", "0", "DOWN", "OFF", "N":
		return false, nil
	}
	return false, fmt.Errorf("invalid boolean %s (expected YES or NO)", quote(v))
}

// parseTime reads a Slurm time string whose bare number is minutes
// (MaxTime, PriorityDecayHalfLife, PreemptExemptTime, ...).
func parseTime(v string) (time.Duration, error) {
	d, err := duration.Parse(v)
	if err != nil {
		return 0, fmt.Errorf("invalid time %s", quote(v))
	}
	return d, nil
}

// parseSeconds reads a plain integer count of seconds within [lo, hi]
// (KillWait, MinJobAge, SlurmdTimeout, GraceTime, ...).
func parseSeconds(v string, lo, hi int64) (time.Duration, error) {
	n, err := parseInt(v, lo, hi)
	return time.Duration(n) * time.Second, err
}

// parseCount reads a count with an optional K, M, G, T or P suffix
// multiplying by powers of 1024, as node Gres counts allow.
func parseCount(v string) (int64, error) {
	s := strings.TrimSpace(v)
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		case 'p', 'P':
			mult = 1 << 50
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid count %s", quote(v))
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("count %s too large", quote(v))
	}
	return n * mult, nil
}

// parseNameList reads a comma separated list of names; "ALL" (or an empty
// value) gives nil, meaning no restriction.
func parseNameList(v string) []string {
	l := splitList(v)
	if len(l) == 1 && strings.EqualFold(l[0], "ALL") {
		return nil
	}
	return l
}
