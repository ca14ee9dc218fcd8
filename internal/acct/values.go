package acct

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// parseCount parses a job-count limit; "-1" clears it.
func parseCount(key, s string) (Limit, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < -1 {
		return Unset, fmt.Errorf("Invalid value for %s: '%s'", key, s)
	}
	if n == -1 {
		return Unset, nil
	}
	return Limit(n), nil
}

// parseWallMinutes parses a Slurm time limit (minutes, MM:SS, HH:MM:SS,
// D-HH, D-HH:MM, D-HH:MM:SS) into whole minutes, rounding seconds up as
// Slurm's time_str2mins does. "-1", UNLIMITED and INFINITE clear it.
func parseWallMinutes(key, s string) (Limit, error) {
	secs, err := parseTimeSeconds(s, true)
	if err != nil {
		return Unset, fmt.Errorf("Invalid value for %s: '%s'", key, s)
	}
	if secs < 0 {
		return Unset, nil
	}
	return Limit((secs + 59) / 60), nil
}

// parseTimeSeconds parses a time string into seconds; bareMinutes says a
// bare number counts minutes (time limits) rather than seconds
// (GraceTime, PreemptExemptTime). It returns -1 for "-1"/UNLIMITED.
func parseTimeSeconds(s string, bareMinutes bool) (int64, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "-1", "unlimited", "infinite":
		return -1, nil
	case "":
		return 0, fmt.Errorf("empty time")
	}
	days := int64(0)
	rest := s
	if i := strings.IndexByte(s, '-'); i >= 0 {
		d, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("bad days in %q", s)
		}
		days, rest = d, s[i+1:]
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("too many fields in %q", s)
	}
	nums := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return 0, fmt.Errorf("bad number in %q", s)
		}
		nums[i] = n
	}
	var secs int64
	switch {
	case rest != s: // D-H, D-H:M, D-H:M:S
		h, m, sec := nums[0], int64(0), int64(0)
		if len(nums) > 1 {
			m = nums[1]
		}
		if len(nums) > 2 {
			sec = nums[2]
		}
		secs = ((days*24+h)*60+m)*60 + sec
	case len(nums) == 3:
		secs = (nums[0]*60+nums[1])*60 + nums[2]
	case len(nums) == 2: // MM:SS
		secs = nums[0]*60 + nums[1]
	case bareMinutes:
		secs = nums[0] * 60
	default:
		secs = nums[0]
	}
	if days > 1<<20 {
		return 0, fmt.Errorf("time too large")
	}
	return secs, nil
}

// formatMinutes prints a wall limit as sacctmgr does: [D-]HH:MM:SS, and
// "" when unset.
func formatMinutes(l Limit) string {
	if !l.IsSet() {
		return ""
	}
	return formatSeconds(int64(l) * 60)
}

// formatSeconds prints seconds as [D-]HH:MM:SS (Slurm's secs2time_str).
func formatSeconds(s int64) string {
	if s < 0 {
		return ""
	}
	d, h, m, sec := s/86400, s/3600%24, s/60%60, s%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, sec)
}

// formatDuration prints a duration in whole seconds as [D-]HH:MM:SS.
func formatDuration(d time.Duration) string {
	if d < 0 {
		return ""
	}
	return formatSeconds(int64(d / time.Second))
}

// formatLimit prints a count limit, "" when unset.
func formatLimit(l Limit) string {
	if !l.IsSet() {
		return ""
	}
	return strconv.FormatInt(int64(l), 10)
}

// tresUpdate is a parsed TRES list as typed on the command line: values
// to set, and keys to clear (written `cpu=-1`).
type tresUpdate struct {
	set   map[string]int64
	clear []string
}

// tresBaseNames() are the TRES types that have no sub-name.
var tresBaseNames = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"cpu": true, "mem": true, "energy": true, "node": true,
		"billing": true, "vmem": true, "pages": true, "fs/disk": true}
})

// canonicalTRES maps a typed TRES name to its canonical key: `gpu` and
// `gpu:a100` are sacctmgr short forms of gres/gpu and gres/gpu:a100.
func canonicalTRES(name string) (string, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch {
	case tresBaseNames()[n]:
		return n, nil
	case n == "cpus":
		return "cpu", nil
	case n == "nodes":
		return "node", nil
	case n == "memory":
		return "mem", nil
	case n == "gpu" || strings.HasPrefix(n, "gpu:"):
		return "gres/" + n, nil
	}
	for _, p := range []string{"gres/", "license/", "bb/"} {
		if strings.HasPrefix(n, p) && len(n) > len(p) && validName(n[len(p):], ":-_.") {
			return n, nil
		}
	}
	return "", fmt.Errorf("Invalid TRES name '%s'", name)
}

// parseTRES parses `cpu=2,mem=4G,gres/gpu=16`; `-1` clears that TRES.
// Memory takes K/M/G/T/P suffixes and is kept in MB, as in Slurm.
func parseTRES(key, s string) (tresUpdate, error) {
	up := tresUpdate{set: map[string]int64{}}
	if strings.TrimSpace(s) == "" {
		return up, fmt.Errorf("Invalid TRES specification for %s: empty", key)
	}
	for _, item := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return up, fmt.Errorf("Invalid TRES specification for %s: '%s'", key, item)
		}
		name, err := canonicalTRES(k)
		if err != nil {
			return up, err
		}
		if strings.TrimSpace(v) == "-1" {
			up.clear = append(up.clear, name)
			continue
		}
		n, err := parseTRESCount(name, v)
		if err != nil {
			return up, fmt.Errorf("Invalid TRES value for %s: '%s'", key, item)
		}
		up.set[name] = n
	}
	return up, nil
}

// parseTRESCount parses one TRES amount; memory accepts unit suffixes.
func parseTRESCount(name, v string) (int64, error) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	if name == "mem" && v != "" {
		units := map[byte]int64{'K': -1024, 'M': 1, 'G': 1024, 'T': 1024 * 1024, 'P': 1024 * 1024 * 1024}
		if m, ok := units[strings.ToUpper(v[len(v)-1:])[0]]; ok {
			mult, v = m, v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/(1<<30) {
		return 0, fmt.Errorf("bad number %q", v)
	}
	if mult < 0 {
		return (n + 1023) / 1024, nil
	}
	return n * mult, nil
}

// apply applies the update to v and returns the result (nil when empty).
func (u tresUpdate) apply(v tresVec) tresVec {
	out := cloneVec(v)
	if out == nil {
		out = tresVec{}
	}
	for k, n := range u.set {
		out[k] = n
	}
	for _, k := range u.clear {
		delete(out, k)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// formatTRES prints a TRES vector as sacctmgr does: ordered by TRES id,
// memory with a unit suffix (`cpu=256,mem=1000G,gres/gpu=4`).
func formatTRES(st *State, v tresVec) string {
	if len(v) == 0 {
		return ""
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	id := func(k string) int64 {
		if t := st.TRES[k]; t != nil {
			return t.ID
		}
		return math.MaxInt64
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := id(keys[i]), id(keys[j])
		if a != b {
			return a < b
		}
		return keys[i] < keys[j]
	})
	return joinTRES(keys, v)
}

// joinTRES prints v's entries in the order of keys, memory with a unit
// (cpu=2,mem=1G).
func joinTRES(keys []string, v tresVec) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		if k == "mem" {
			parts[i] = k + "=" + formatMB(v[k])
		} else {
			parts[i] = fmt.Sprintf("%s=%d", k, v[k])
		}
	}
	return strings.Join(parts, ",")
}

// formatMB prints megabytes with the largest unit that divides exactly.
func formatMB(mb int64) string {
	units := []string{"M", "G", "T", "P"}
	i := 0
	for mb != 0 && mb%1024 == 0 && i < len(units)-1 {
		mb /= 1024
		i++
	}
	return strconv.FormatInt(mb, 10) + units[i]
}

// validName reports whether s is a usable entity name: letters, digits
// and the extra characters allowed.
func validName(s, extra string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune(extra, r):
		default:
			return false
		}
	}
	return true
}

// parseFloat parses a factor such as UsageFactor; -1 clears it.
func parseFloat(key, s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || (f < 0 && f != -1) {
		return 0, fmt.Errorf("Invalid value for %s: '%s'", key, s)
	}
	return f, nil
}

// formatFloat prints a factor as sacctmgr does (%f), "" when unset.
func formatFloat(f float64) string {
	if f < 0 {
		return ""
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// secondsDuration converts seconds to a duration; negative means unset (-1).
func secondsDuration(secs int64) time.Duration {
	if secs < 0 {
		return -1
	}
	return time.Duration(secs) * time.Second
}
