package tres

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Vector is a set of TRES counts keyed by canonical name (see CanonicalName); mem, vmem,
// fs/disk and bb/ counts are megabytes. A missing name counts as zero in arithmetic and
// as "no limit" when the Vector is a limit.
type Vector map[string]int64

// Clear is the value sacctmgr uses to remove a limit (`GrpTRES=gres/gpu=-1`); only
// ParseLimitUpdate accepts it.
const Clear int64 = -1

// Parse reads a TRES string such as `cpu=2,mem=4G,gres/gpu=16,node=1` or the sacctmgr
// short forms `gpu=32`, `gpu:a100=2`, `cpu=256,mem=1000G`. Names are case-insensitive;
// mem takes K/M/G/T/P suffixes (a bare number is megabytes); counts are non-negative
// integers. An empty string is an empty Vector. A name given twice keeps the last value.
func Parse(s string) (Vector, error) {
	return parse(s, false)
}

// ParseLimitUpdate reads a TRES string like Parse but also accepts -1 (Clear), which
// sacctmgr takes as "remove this limit".
func ParseLimitUpdate(s string) (Vector, error) {
	return parse(s, true)
}

func parse(s string, allowClear bool) (Vector, error) {
	v := Vector{}
	for item := range strings.SplitSeq(s, ",") {
		item = trimAll(item)
		if item == "" {
			continue
		}
		raw, count, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("TRES string %q: %q is not NAME=COUNT", s, item)
		}
		name, err := CanonicalName(raw, true)
		if err != nil {
			return nil, fmt.Errorf("TRES string %q: %w", s, err)
		}
		count = trimAll(count)
		if allowClear && count == "-1" {
			v[name] = Clear
			continue
		}
		if v[name], err = parseCount(name, count); err != nil {
			return nil, fmt.Errorf("TRES string %q: %w", s, err)
		}
	}
	return v, nil
}

// MustParse is Parse for constants in tests and tables; it panics on a bad string.
func MustParse(s string) Vector {
	v, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Names returns the names present in v in Slurm's printing order.
func (v Vector) Names() []string {
	names := slices.Collect(maps.Keys(v))
	SortNames(names)
	return names
}

// String prints v as Slurm prints TRES strings: `cpu=2,mem=4G,node=1,billing=2,
// gres/gpu=16`, built-ins in TRES id order then gres/, license/ and bb/ sorted, sizes
// in the largest exact unit (`mem=4000M`, `mem=1000G`). Zero counts are printed: a
// zero limit is a real limit. The empty Vector prints as "".
func (v Vector) String() string {
	var b strings.Builder
	for i, name := range v.Names() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(formatCount(name, v[name]))
	}
	return b.String()
}

// Clone returns a copy of v (nil stays nil).
func (v Vector) Clone() Vector { return maps.Clone(v) }

// Add adds o to v in place; v must be non-nil unless o is empty.
func (v Vector) Add(o Vector) {
	for k, n := range o {
		v[k] += n
	}
}

// Sub subtracts o from v in place; v must be non-nil unless o is empty. Counts may go
// negative: callers that release usage decide whether that is a bug.
func (v Vector) Sub(o Vector) {
	for k, n := range o {
		v[k] -= n
	}
}

// Scaled returns a new Vector with every count multiplied by n (a per-node request times
// the node count, for instance).
func (v Vector) Scaled(n int64) Vector {
	out := make(Vector, len(v))
	for k, c := range v {
		out[k] = c * n
	}
	return out
}

// Sum returns a new Vector holding a+b.
func Sum(a, b Vector) Vector {
	out := make(Vector, len(a)+len(b))
	out.Add(a)
	out.Add(b)
	return out
}

// Min returns the element-wise minimum of a and b, a missing name counting as zero (so
// only names present in both survive).
func Min(a, b Vector) Vector {
	out := Vector{}
	for k, n := range a {
		if m, ok := b[k]; ok {
			out[k] = min(n, m)
		}
	}
	return out
}

// Max returns the element-wise maximum of a and b over the names of either.
func Max(a, b Vector) Vector {
	out := a.Clone()
	if out == nil {
		out = Vector{}
	}
	for k, n := range b {
		if m, ok := out[k]; !ok || n > m {
			out[k] = n
		}
	}
	return out
}

// Count returns v's count for name; for an untyped GRES (`gres/gpu`) that is at least
// the sum of its typed counts (`gres/gpu:a100` + `gres/gpu:h100`), since a typed GRES
// counts toward its untyped total in Slurm.
func (v Vector) Count(name string) int64 {
	n := v[name]
	kind, gres, typ := Split(name)
	if kind != "gres" || typ != "" {
		return n
	}
	prefix := "gres/" + gres + ":"
	typed := int64(0)
	for k, c := range v {
		if strings.HasPrefix(k, prefix) {
			typed += c
		}
	}
	return max(n, typed)
}

// FillUntyped makes every untyped GRES total at least the sum of its typed counts, in
// place: a request of gres/gpu:a100=2 also becomes gres/gpu=2, so limits and weights on
// gres/gpu see it. v must be non-nil if it has typed GRES.
func (v Vector) FillUntyped() {
	for k := range v {
		if u, ok := Untyped(k); ok {
			v[u] = v.Count(u)
		}
	}
}

// LessOrEqual reports whether every count in v is at most the same count in o, a missing
// name counting as zero (does a request fit in free capacity o?).
func (v Vector) LessOrEqual(o Vector) bool {
	for k, n := range v {
		if n > o[k] {
			return false
		}
	}
	return true
}

// IsZero reports whether every count in v is zero (an empty Vector is zero).
func (v Vector) IsZero() bool {
	for _, n := range v {
		if n != 0 {
			return false
		}
	}
	return true
}

// Exceeded returns, in Slurm's TRES order, the names whose count in v is above limit; a
// name missing from limit is unlimited. Untyped GRES counts include their typed counts
// (see Count), so gres/gpu:a100=8 exceeds a gres/gpu=4 limit.
func (v Vector) Exceeded(limit Vector) []string {
	var over []string
	for _, name := range limit.Names() {
		if v.Count(name) > limit[name] {
			over = append(over, name)
		}
	}
	return over
}

// WithinLimit reports whether v fits limit (see Exceeded) and, when it does not, the first
// TRES over it in Slurm's order, which names the limit in a pending reason
// (cpu => QOSGrpCpuLimit, gres/gpu => QOSGrpGRES).
func (v Vector) WithinLimit(limit Vector) (exceeded string, ok bool) {
	// One pass without sorting or allocating: the scheduler calls this for every
	// pending job against several limits.
	for name, lim := range limit {
		if v.Count(name) > lim && (exceeded == "" || Compare(name, exceeded) < 0) {
			exceeded = name
		}
	}
	return exceeded, exceeded == ""
}

// ParseNames reads a comma-separated list of TRES names without counts, such as
// AccountingStorageTRES=gres/gpu,gres/gpu:a100,license/matlab, into canonical names in
// Slurm's order, without duplicates; an empty string is an empty list. Short GRES forms
// are not accepted here.
func ParseNames(s string) ([]string, error) {
	var names []string
	for item := range strings.SplitSeq(s, ",") {
		if trimAll(item) == "" {
			continue
		}
		name, err := CanonicalName(item, false)
		if err != nil {
			return nil, fmt.Errorf("TRES list %q: %w", s, err)
		}
		names = append(names, name)
	}
	SortNames(names)
	return slices.Compact(names), nil
}
