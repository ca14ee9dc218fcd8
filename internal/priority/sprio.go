package priority

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrSprioNoJobs is what sprio prints when --jobs or --users match nothing.
var ErrSprioNoJobs = errors.New("Unable to find jobs matching user/id(s) specified")

// ErrSprioUnsupported is sprio's refusal under priority/basic.
var ErrSprioUnsupported = errors.New("You are not running a supported priority plugin\n(priority/basic).\nOnly 'priority/multifactor' is supported.")

// SprioRow is one job (or one partition/QOS pair of a multi-partition job)
// as sprio shows it.
type SprioRow struct {
	Job     *Job
	Factors Factors
}

// SprioOptions are sprio's command-line options.
type SprioOptions struct {
	// Long is -l, Norm is -n, Weights is -w, NoHeader is -h.
	Long, Norm, Weights, NoHeader bool
	// Format is -o (overrides the built-in formats).
	Format string
	// Jobs (-j), Users (-u) and Partitions (-p) filter rows.
	Jobs       []uint32
	Users      []string
	Partitions []string
	// Sort is -S: format letters separated by commas, each ascending or,
	// after '-', descending ("u,r,-y"); the default is by job id.
	Sort string
}

// SprioRows computes the rows sprio lists: pending jobs (running ones too
// with CALCULATE_RUNNING) that are not held and whose eligible time is set
// and not in the future, sorted by job id.
func SprioRows(c *Calculator, jobs []*Job, now time.Time) []SprioRow {
	var rows []SprioRow
	for _, j := range jobs {
		if j.Held || j.Running && c.cfg.Flags&FlagCalculateRunning == 0 {
			continue
		}
		if j.EligibleTime.IsZero() || j.EligibleTime.After(now) {
			continue
		}
		r := SprioRow{Job: j}
		c.Factors(j, now, &r.Factors)
		rows = append(rows, r)
	}
	slices.SortStableFunc(rows, func(a, b SprioRow) int { return int(int64(a.Job.ID) - int64(b.Job.ID)) })
	return rows
}

// SprioFormat returns the format sprio uses for the options: the default
// and -n formats list only factors whose weight is non-zero, in the order
// age, assoc, fair-share, job size, partition, QOS, TRES.
func SprioFormat(cfg *Config, opt SprioOptions) string {
	if opt.Format != "" {
		return opt.Format
	}
	switch {
	case opt.Long && opt.Norm:
		return "%.15i %9r %.8u %.8o %10y %10a %10b %10f %10j %10p %10n %10q %20t"
	case opt.Long:
		return "%.15i %9r %.8u %.8o %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10n %.10Q %.11N %.20T"
	}
	f := []string{"%.15i", "%9r"}
	if len(opt.Users) > 0 {
		f = append(f, "%.8u")
	}
	codes := "ABFJPQ"
	ws := []uint32{cfg.WeightAge, cfg.WeightAssoc, cfg.WeightFairshare, cfg.WeightJobSize, cfg.WeightPartition, cfg.WeightQOS}
	if opt.Norm {
		f = append(f, "%10y")
		codes = "abfjpq"
	} else {
		f = append(f, "%.10Y", "%.10S")
	}
	for i, w := range ws {
		if w == 0 {
			continue
		}
		if opt.Norm {
			f = append(f, "%10"+codes[i:i+1])
		} else {
			f = append(f, "%.10"+codes[i:i+1])
		}
	}
	if hasTRESWeight(cfg) {
		if opt.Norm {
			f = append(f, "%20t")
		} else {
			f = append(f, "%.20T")
		}
	}
	return strings.Join(f, " ")
}

func hasTRESWeight(cfg *Config) bool {
	for _, w := range cfg.WeightTRES {
		if w.Weight != 0 {
			return true
		}
	}
	return false
}

// sprioFieldCodes are the format (and -S) letters sprio knows.
const sprioFieldCodes = "iruoYySAaBbFfJjPpnQqNTtc"

// maxFieldWidth bounds format widths so a typo cannot ask for gigabytes.
const maxFieldWidth = 4096

// sprioField is one parsed `%[.][size]type` with the literal text before it.
type sprioField struct {
	prefix string
	right  bool
	width  int
	code   byte
}

// parseSprioFormat splits an sprio format. A `.` right-justifies (the
// parser does so, although the man page says left).
func parseSprioFormat(f string) ([]sprioField, string, error) {
	var out []sprioField
	var lit strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			lit.WriteByte(f[i])
			continue
		}
		fd := sprioField{prefix: lit.String()}
		lit.Reset()
		i++
		if i < len(f) && f[i] == '.' {
			fd.right = true
			i++
		}
		start := i
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			i++
		}
		if i > start {
			w, err := strconv.Atoi(f[start:i])
			if err != nil || w > maxFieldWidth {
				return nil, "", fmt.Errorf("invalid sprio format %q: field width %s too large", f, f[start:i])
			}
			fd.width = w
		}
		if i >= len(f) {
			return nil, "", fmt.Errorf("invalid sprio format %q: missing field type", f)
		}
		fd.code = f[i]
		if !strings.ContainsRune(sprioFieldCodes, rune(fd.code)) {
			return nil, "", fmt.Errorf("Invalid job format specification: %c", fd.code)
		}
		out = append(out, fd)
	}
	return out, lit.String(), nil
}

var sprioHeaders = map[byte]string{
	'i': "JOBID", 'r': "PARTITION", 'u': "USER", 'o': "ACCOUNT", 'Y': "PRIORITY", 'y': "PRIORITY",
	'S': "SITE", 'A': "AGE", 'a': "AGE", 'B': "ASSOC", 'b': "ASSOC", 'F': "FAIRSHARE", 'f': "FAIRSHARE",
	'J': "JOBSIZE", 'j': "JOBSIZE", 'P': "PARTITION", 'p': "PARTITION", 'n': "QOSNAME", 'Q': "QOS",
	'q': "QOS", 'N': "NICE", 'T': "TRES", 't': "TRES", 'c': "CLUSTER",
}

// FormatSprio renders sprio output for the rows (from SprioRows) with the
// options: header, then one line per row after the -j/-u/-p filters, or
// the single "Weights" row with -w.
func FormatSprio(cfg *Config, rows []SprioRow, opt SprioOptions) (string, error) {
	if cfg.Type == Basic {
		return "", ErrSprioUnsupported
	}
	fields, tail, err := parseSprioFormat(SprioFormat(cfg, opt))
	if err != nil {
		return "", err
	}
	if err := sortSprioRows(cfg, rows, opt.Sort); err != nil {
		return "", err
	}
	var b strings.Builder
	if !opt.NoHeader {
		writeSprioLine(&b, fields, tail, func(fd sprioField) string { return sprioHeaders[fd.code] })
	}
	if opt.Weights {
		writeSprioLine(&b, fields, tail, func(fd sprioField) string { return weightCell(cfg, fd.code) })
		return b.String(), nil
	}
	n := 0
	for i := range rows {
		r := &rows[i]
		if !sprioKeep(r.Job, opt) {
			continue
		}
		n++
		writeSprioLine(&b, fields, tail, func(fd sprioField) string { return jobCell(cfg, r, fd.code) })
	}
	if n == 0 && (len(opt.Jobs) > 0 || len(opt.Users) > 0) {
		return b.String(), ErrSprioNoJobs
	}
	return b.String(), nil
}

// sprioKey is one field of an -S sort list.
type sprioKey struct {
	code byte
	desc bool
}

// sortSprioRows orders the rows by sprio's -S list: the format letters,
// compared as numbers for the priority, factors, site and nice columns and
// as text for the others; '+' (the default) ascends, '-' descends. Ties
// keep the job id order SprioRows gives.
func sortSprioRows(cfg *Config, rows []SprioRow, spec string) error {
	var keys []sprioKey
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		k := sprioKey{}
		switch f[0] {
		case '-':
			k.desc, f = true, f[1:]
		case '+':
			f = f[1:]
		}
		if len(f) != 1 || !strings.Contains(sprioFieldCodes, f) {
			return fmt.Errorf("Invalid sort specification: %s", f)
		}
		k.code = f[0]
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil
	}
	slices.SortStableFunc(rows, func(a, b SprioRow) int {
		for _, k := range keys {
			c := compareSprioCell(cfg, &a, &b, k.code)
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return nil
}

// compareSprioCell compares two rows on one column.
func compareSprioCell(cfg *Config, a, b *SprioRow, code byte) int {
	switch code {
	case 'i':
		return cmp.Compare(a.Job.ID, b.Job.ID)
	case 'Y', 'y':
		return cmp.Compare(a.Factors.Priority, b.Factors.Priority)
	case 'S':
		return cmp.Compare(a.Factors.Site, b.Factors.Site)
	case 'N':
		return cmp.Compare(a.Factors.Nice, b.Factors.Nice)
	case 'A', 'a', 'B', 'b', 'F', 'f', 'J', 'j', 'P', 'p', 'Q', 'q':
		va, wa := factorOf(cfg, &a.Factors, code)
		vb, _ := factorOf(cfg, &b.Factors, code)
		if code < 'a' { // weighted columns: the same order unless the weight is 0
			va, vb = va*wa, vb*wa
		}
		return cmp.Compare(va, vb)
	}
	return strings.Compare(jobCell(cfg, a, code), jobCell(cfg, b, code))
}

func sprioKeep(j *Job, opt SprioOptions) bool {
	if len(opt.Jobs) > 0 && !slices.Contains(opt.Jobs, j.ID) {
		return false
	}
	if len(opt.Users) > 0 && !slices.Contains(opt.Users, j.User) {
		return false
	}
	return len(opt.Partitions) == 0 || slices.Contains(opt.Partitions, j.Partition)
}

func writeSprioLine(b *strings.Builder, fields []sprioField, tail string, cell func(sprioField) string) {
	for _, fd := range fields {
		b.WriteString(fd.prefix)
		b.WriteString(justify(cell(fd), fd.width, fd.right))
	}
	b.WriteString(tail)
	b.WriteByte('\n')
}

// justify pads s to width (right or left) and truncates longer strings.
func justify(s string, width int, right bool) string {
	if width <= 0 {
		return s
	}
	if len(s) > width {
		return s[:width]
	}
	pad := strings.Repeat(" ", width-len(s))
	if right {
		return pad + s
	}
	return s + pad
}

// weightCell is the -w row: each factor column shows its weight, SITE 1,
// TRES the configured PriorityWeightTRES string.
func weightCell(cfg *Config, code byte) string {
	switch code {
	case 'i':
		return "Weights"
	case 'S':
		return "1"
	case 'A', 'a':
		return strconv.FormatUint(uint64(cfg.WeightAge), 10)
	case 'B', 'b':
		return strconv.FormatUint(uint64(cfg.WeightAssoc), 10)
	case 'F', 'f':
		return strconv.FormatUint(uint64(cfg.WeightFairshare), 10)
	case 'J', 'j':
		return strconv.FormatUint(uint64(cfg.WeightJobSize), 10)
	case 'P', 'p':
		return strconv.FormatUint(uint64(cfg.WeightPartition), 10)
	case 'Q', 'q':
		return strconv.FormatUint(uint64(cfg.WeightQOS), 10)
	case 'T', 't':
		return cfg.WeightTRESString
	}
	return ""
}

// jobCell renders one column of a job row. Weighted values print %.0f of
// factor×weight (rounded, so columns need not add up to the truncated
// PRIORITY); normalised ones %.7f.
func jobCell(cfg *Config, r *SprioRow, code byte) string {
	j, f := r.Job, &r.Factors
	switch code {
	case 'i':
		return strconv.FormatUint(uint64(j.ID), 10)
	case 'r':
		return j.Partition
	case 'u':
		return j.User
	case 'o':
		return j.Account
	case 'n':
		return j.QOS
	case 'c':
		return ""
	case 'Y':
		return strconv.FormatUint(uint64(f.Priority), 10)
	case 'y':
		return fmt.Sprintf("%16.14f", float64(f.Priority)/MaxPriority)
	case 'S':
		return strconv.FormatInt(f.Site, 10)
	case 'N':
		return strconv.FormatInt(f.Nice, 10)
	case 'T':
		return tresCell(cfg, f, true)
	case 't':
		return tresCell(cfg, f, false)
	}
	v, w := factorOf(cfg, f, code)
	if code >= 'a' && code <= 'z' {
		return fmt.Sprintf("%.7f", v)
	}
	return fmt.Sprintf("%.0f", v*w)
}

// factorOf maps a column code to the factor and its weight.
func factorOf(cfg *Config, f *Factors, code byte) (float64, float64) {
	switch code | 0x20 {
	case 'a':
		return f.Age, float64(cfg.WeightAge)
	case 'b':
		return f.Assoc, float64(cfg.WeightAssoc)
	case 'f':
		return f.FairShare, float64(cfg.WeightFairshare)
	case 'j':
		return f.JobSize, float64(cfg.WeightJobSize)
	case 'p':
		return f.Partition, float64(cfg.WeightPartition)
	case 'q':
		return f.QOS, float64(cfg.WeightQOS)
	}
	return 0, 0
}

// tresCell prints `name=value` for every non-zero TRES factor: weighted
// %.0f or normalised %.2f.
func tresCell(cfg *Config, f *Factors, weighted bool) string {
	var parts []string
	for k, w := range cfg.WeightTRES {
		if k >= len(f.TRES) || f.TRES[k] == 0 {
			continue
		}
		if weighted {
			parts = append(parts, fmt.Sprintf("%s=%.0f", w.Name, f.TRES[k]*w.Weight))
		} else {
			parts = append(parts, fmt.Sprintf("%s=%.2f", w.Name, f.TRES[k]))
		}
	}
	return strings.Join(parts, ",")
}
