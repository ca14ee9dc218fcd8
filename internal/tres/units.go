package tres

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// unitPower() is the power of 1024 each size suffix stands for (Slurm's K/M/G/T/P are
// binary multiples).
var unitPower = sync.OnceValue(func() map[byte]int {
	return map[byte]int{'K': 1, 'M': 2, 'G': 3, 'T': 4, 'P': 5}
})

// isSized reports whether a TRES is counted in megabytes and so takes size suffixes:
// memory and burst buffers (slurm.conf(5): "the base unit for memory and burst buffers is
// megabytes"), and the other size TRES, fs/disk and vmem.
func isSized(name string) bool {
	kind, _, _ := Split(name)
	return name == Mem || name == VMem || name == FSDisk || kind == "bb"
}

// parseCount reads a non-negative count; for sized TRES it may end in K, M, G, T or P
// (any case) and is converted to megabytes, kilobytes rounding up (`4G` = 4096, `1000G`
// = 1024000, `4T` = 4194304, `512K` = 1). A bare number of a sized TRES is megabytes.
func parseCount(name, s string) (int64, error) {
	digits, power := s, 2
	if n := len(s); n > 0 {
		if p, ok := unitPower()[upper(s[n-1])]; ok {
			if !isSized(name) {
				return 0, fmt.Errorf("%s=%s: unit suffix on a count", name, s)
			}
			digits, power = s[:n-1], p
		}
	}
	v, err := parseDigits(digits)
	if err != nil {
		return 0, fmt.Errorf("%s=%s: %w", name, s, err)
	}
	if power == 1 {
		return (v + 1023) / 1024, nil
	}
	for range power - 2 {
		if v > math.MaxInt64/1024 {
			return 0, fmt.Errorf("%s=%s: value too large", name, s)
		}
		v *= 1024
	}
	return v, nil
}

// parseDigits reads decimal digits only (no sign, no blanks) into an int64.
func parseDigits(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("missing count")
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a count", s)
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errors.New("value too large")
	}
	return v, nil
}

// formatCount prints a count; sized TRES in the largest unit that divides them exactly,
// as Slurm prints TRES strings (`mem=4000M`, `mem=4G`, `mem=1000G`).
func formatCount(name string, v int64) string {
	if !isSized(name) || v <= 0 {
		return strconv.FormatInt(v, 10)
	}
	unit := 0
	for v%1024 == 0 && unit < 3 {
		v /= 1024
		unit++
	}
	return strconv.FormatInt(v, 10) + string("MGTP"[unit])
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// trimAll removes blanks around s; Slurm strings never carry meaningful spaces.
func trimAll(s string) string { return strings.TrimSpace(s) }
