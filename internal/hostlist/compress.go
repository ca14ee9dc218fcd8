package hostlist

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// host is a name split the way Slurm's hostlist splits it: a prefix and the run of
// decimal digits that ends the name (Slurm only folds that last number: `rack1-n01` is
// prefix `rack1-n`, number `01`). A name without a trailing number has digits == "".
type host struct {
	name, prefix, digits string
	value                int64
}

// splitHost splits name into prefix and trailing number. Numbers longer than maxDigits
// are kept as text so they never overflow.
func splitHost(name string) host {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	h := host{name: name, prefix: name[:i], digits: name[i:]}
	if h.digits == "" || len(h.digits) > maxDigits || strings.ContainsAny(h.prefix, "[],") {
		return host{name: name, prefix: name}
	}
	h.value, _ = strconv.ParseInt(h.digits, 10, 64)
	return h
}

// compareHosts orders names as Slurm's hostlist_sort does for the common cases: by
// prefix, names without a number first, then by numeric value (node2 before node10),
// then by how many digits were written (node1 before node01).
func compareHosts(a, b host) int {
	if c := strings.Compare(a.prefix, b.prefix); c != 0 {
		return c
	}
	if (a.digits == "") != (b.digits == "") {
		if a.digits == "" {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(a.value, b.value); c != 0 {
		return c
	}
	return cmp.Compare(len(a.digits), len(b.digits))
}

// sortedUnique splits, sorts and de-duplicates names.
func sortedUnique(names []string) []host {
	hosts := make([]host, 0, len(names))
	for _, n := range names {
		if n != "" {
			hosts = append(hosts, splitHost(n))
		}
	}
	slices.SortFunc(hosts, compareHosts)
	return slices.CompactFunc(hosts, func(a, b host) bool { return a.name == b.name })
}

// Sort sorts names in place in host list order (the order Compress lists them):
// by prefix, then by trailing number numerically, so node2 comes before node10.
func Sort(names []string) {
	slices.SortFunc(names, func(a, b string) int { return compareHosts(splitHost(a), splitHost(b)) })
}

// Compress folds names into the shortest Slurm host list expression, as
// `scontrol show hostlist` does: sorted, without duplicates, names sharing a prefix in
// one bracket group, consecutive numbers as ranges, zero padding kept
// (node01,node02,node03,node07 => `node[01-03,07]`). A group of one name is printed
// without brackets (`node5`). Empty names are ignored.
func Compress(names []string) string {
	hosts := sortedUnique(names)
	unique := make([]string, len(hosts))
	for i, h := range hosts {
		unique[i] = h.name
	}
	return Join(unique)
}

// writeGroup writes hosts that share a prefix: `prefix[ranges]`, or the bare name when
// there is only one.
func writeGroup(b *strings.Builder, hosts []host) {
	if len(hosts) == 1 {
		b.WriteString(hosts[0].name)
		return
	}
	b.WriteString(hosts[0].prefix)
	b.WriteByte('[')
	for i, r := range ranges(hosts) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(r.first.digits)
		if r.last.value != r.first.value {
			b.WriteByte('-')
			b.WriteString(pad(r.last.value, len(r.first.digits)))
		}
	}
	b.WriteByte(']')
}

// hostRange is a run of consecutive numbers printed with the padding of its first.
type hostRange struct{ first, last host }

// ranges cuts sorted hosts of one prefix into runs. A name extends a run when its number
// is the next one and printing it with the run's width gives exactly its digits (so
// node09,node10 join as [09-10] but node1,node02 do not).
func ranges(hosts []host) []hostRange {
	var out []hostRange
	for _, h := range hosts {
		if n := len(out); n > 0 {
			r := &out[n-1]
			if h.value == r.last.value+1 && printsAs(h.digits, len(r.first.digits)) {
				r.last = h
				continue
			}
		}
		out = append(out, hostRange{first: h, last: h})
	}
	return out
}

// printsAs reports whether a number written as digits is what pad prints for its value at
// width w: either exactly w digits, or more digits without a leading zero.
func printsAs(digits string, w int) bool {
	return len(digits) == w || (len(digits) > w && digits[0] != '0')
}

// Join folds names into a host list expression keeping their order and
// duplicates, as `scontrol show hostlist` does: consecutive names of one
// prefix share a bracket group, ascending runs become ranges (oracle:
// n3,n1,n2 => `n[3,1-2]`, n1,n1,n2 => `n[1,1-2]`, a1,b2,a2 => `a1,b2,a2`).
func Join(names []string) string {
	hosts := make([]host, 0, len(names))
	for _, n := range names {
		if n != "" {
			hosts = append(hosts, splitHost(n))
		}
	}
	var b strings.Builder
	for i := 0; i < len(hosts); {
		j := i + 1
		for j < len(hosts) && hosts[j].digits != "" && hosts[i].digits != "" && hosts[j].prefix == hosts[i].prefix {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		writeGroup(&b, hosts[i:j])
		i = j
	}
	return b.String()
}

// JoinSorted is Join of the names sorted, duplicates kept, as `scontrol
// show hostlistsorted` does (oracle: n3,n1,n2,n1 => `n[1,1-3]`).
func JoinSorted(names []string) string {
	sorted := slices.Clone(names)
	Sort(sorted)
	return Join(sorted)
}
