package cli

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// sinfoSortKey is one field of sinfo -S: "+P" ascending (the default
// direction), "-m" descending, "#P" partitions in slurm.conf's order.
type sinfoSortKey struct {
	field       byte
	desc, order bool
}

// parseSinfoSort reads a -S list. Slurm's sinfo ignores what it does not
// know (an unknown letter sorts nothing), so this never fails.
func parseSinfoSort(spec string) []sinfoSortKey {
	var keys []sinfoSortKey
	for _, f := range strings.Split(spec, ",") {
		var k sinfoSortKey
		for len(f) > 0 && strings.ContainsRune("+-#", rune(f[0])) {
			switch f[0] {
			case '-':
				k.desc = true
			case '#':
				k.order = true
			}
			f = f[1:]
		}
		if len(f) == 1 {
			k.field = f[0]
			keys = append(keys, k)
		}
	}
	return keys
}

// sortSinfoBy orders rows by a -S list, stably over sinfo's default
// order: numbers as numbers, node states by Slurm's node_state value,
// node names as hostlists order them (n2 before n10), the rest as text.
func sortSinfoBy(rows []sinfoRow, spec string) {
	keys := parseSinfoSort(spec)
	slices.SortStableFunc(rows, func(a, b sinfoRow) int {
		for _, k := range keys {
			c := cmpSinfoField(&a, &b, k)
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

func cmpSinfoField(a, b *sinfoRow, k sinfoSortKey) int {
	switch {
	case (k.field == 'P' || k.field == 'R') && k.order:
		return a.pi - b.pi
	case k.field == 't' || k.field == 'T':
		return int(nodeStateValue(a.n)) - int(nodeStateValue(b.n))
	case k.field == 'N' || k.field == 'n' || k.field == 'o':
		return cmpNodeOrder(a.n.Name, b.n.Name)
	}
	x, y := sinfoField(a, k.field), sinfoField(b, k.field)
	nx, ex := strconv.ParseFloat(strings.TrimSuffix(x, "+"), 64)
	ny, ey := strconv.ParseFloat(strings.TrimSuffix(y, "+"), 64)
	if ex == nil && ey == nil {
		switch {
		case nx < ny:
			return -1
		case nx > ny:
			return 1
		}
		return 0
	}
	return strings.Compare(x, y)
}

// leastPlus is a grouped number as sinfo prints it without -e: the
// group's least, with a "+" when some node has more ("8+").
func leastPlus(members []*api.NodeRecord, v func(*api.NodeRecord) int64) string {
	least, more := v(members[0]), false
	for _, n := range members[1:] {
		x := v(n)
		more = more || x != least
		least = min(least, x)
	}
	s := strconv.FormatInt(least, 10)
	if more {
		s += "+"
	}
	return s
}
