package hostlist

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// seq builds prefix+number names for lo..hi padded to width, the expected side of tables.
func seq(prefix string, lo, hi, width int) []string {
	var out []string
	for i := lo; i <= hi; i++ {
		out = append(out, fmt.Sprintf("%s%0*d", prefix, width, i))
	}
	return out
}

func cat(lists ...[]string) []string { return slices.Concat(lists...) }

func TestExpand(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{"", nil},
		{"node1", []string{"node1"}},
		{"node[01-32]", seq("node", 1, 32, 2)},
		{"gpu[01-08],bigmem[1-4]", cat(seq("gpu", 1, 8, 2), seq("bigmem", 1, 4, 1))},
		{"a100-node[01-16]", seq("a100-node", 1, 16, 2)},
		{"gpu-st-g6-48xl-[1-2]", []string{"gpu-st-g6-48xl-1", "gpu-st-g6-48xl-2"}},
		{"rack[1-2]-n[01-04]", cat(seq("rack1-n", 1, 4, 2), seq("rack2-n", 1, 4, 2))},
		{"node[01-03,07]", []string{"node01", "node02", "node03", "node07"}},
		{"node[8-10]", []string{"node8", "node9", "node10"}},
		{"node[08-10]", []string{"node08", "node09", "node10"}},
		{"node[098-101]", []string{"node098", "node099", "node100", "node101"}},
		{"n[1-2]x", []string{"n1x", "n2x"}},
		{"[1-3]", []string{"1", "2", "3"}},
		{"a,b c\td\n", []string{"a", "b", "c", "d"}},
		{",,node1,,", []string{"node1"}},
		{"n[1,1]", []string{"n1", "n1"}}, // duplicates kept, like Slurm's hostlist
		{"n[3],m", []string{"n3", "m"}},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			got, err := Expand(c.expr)
			if err != nil {
				t.Fatalf("Expand(%q): %v", c.expr, err)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("Expand(%q) = %v, want %v", c.expr, got, c.want)
			}
		})
	}
}

func TestExpandErrors(t *testing.T) {
	cases := []struct{ expr, msg string }{
		{"node[1-3", "unclosed '['"},
		{"node1-3]", "unmatched ']'"},
		{"node[[1-3]]", "nested '['"},
		{"node[]", "empty brackets"},
		{"node[3-1]", "end is before start"},
		{"node[a-b]", "not a number"},
		{"node[1-]", "missing number"},
		{"node[-1]", "missing number"},
		{"node[1,,2]", "missing number"},
		{"node[1 2]", "not a number"},
		{"node[1-2-3]", "not a number"},
		{"node[0-9999999999999999999]", "number too long"},
		{"node[0-999999999999]", "too large"},
		{"a[0-999]b[0-9999]", "too large"},
		{"a[0-999999],b[0-999999]", "too large"},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			got, err := Expand(c.expr)
			if err == nil {
				t.Fatalf("Expand(%q) = %d names, want error %q", c.expr, len(got), c.msg)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("Expand(%q) error %q, want it to mention %q", c.expr, err, c.msg)
			}
		})
	}
	if _, err := Expand("x[0-1000000]"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("1,000,001 names: error %v, want ErrTooLarge", err)
	}
	if names, err := Expand("x[1-1000000]"); err != nil || len(names) != MaxNames {
		t.Fatalf("exactly MaxNames names: %d, %v", len(names), err)
	}
}

func TestCompress(t *testing.T) {
	cases := []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"node5"}, "node5"},
		{[]string{"node01", "node02", "node03", "node07"}, "node[01-03,07]"},
		{[]string{"node07", "node02", "node01", "node03", "node02"}, "node[01-03,07]"},
		{seq("node", 1, 32, 2), "node[01-32]"},
		{cat(seq("bigmem", 1, 4, 1), seq("gpu", 1, 8, 2)), "bigmem[1-4],gpu[01-08]"},
		{cat(seq("rack2-n", 1, 4, 2), seq("rack1-n", 1, 4, 2)), "rack1-n[01-04],rack2-n[01-04]"},
		{[]string{"node10", "node9", "node8"}, "node[8-10]"},
		{[]string{"node10", "node09", "node08"}, "node[08-10]"},
		{[]string{"node1", "node02"}, "node[1,02]"},
		{[]string{"node2", "node10", "node1"}, "node[1-2,10]"},
		{[]string{"login", "node1", "node2", "node"}, "login,node,node[1-2]"},
		{[]string{"n1x", "n2x"}, "n1x,n2x"},
		{[]string{"gpu-st-g6-48xl-2", "gpu-st-g6-48xl-1"}, "gpu-st-g6-48xl-[1-2]"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := Compress(c.names); got != c.want {
				t.Fatalf("Compress(%v) = %q, want %q", c.names, got, c.want)
			}
		})
	}
}

func TestSort(t *testing.T) {
	names := []string{"node10", "gpu2", "node2", "node01", "node1", "gpu"}
	Sort(names)
	want := []string{"gpu", "gpu2", "node1", "node01", "node2", "node10"}
	if !slices.Equal(names, want) {
		t.Fatalf("Sort = %v, want %v", names, want)
	}
}

// genName draws host names from a few realistic prefixes with mixed padding.
func genName() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		prefix := rapid.SampledFrom([]string{"node", "gpu", "rack1-n", "a100-node", "gpu-st-g6-48xl-", "", "login"}).Draw(t, "prefix")
		if rapid.IntRange(0, 9).Draw(t, "literal") == 0 {
			return prefix
		}
		n := rapid.IntRange(0, 120).Draw(t, "n")
		width := rapid.IntRange(0, 4).Draw(t, "width")
		return fmt.Sprintf("%s%0*d", prefix, width, n)
	})
}

// genExpr draws host list expressions with one or two bracket groups per item.
func genExpr() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		items := rapid.IntRange(1, 3).Draw(t, "items")
		var parts []string
		for range items {
			var b strings.Builder
			for g := range rapid.IntRange(1, 2).Draw(t, "groups") {
				b.WriteString(rapid.SampledFrom([]string{"node", "gpu", "-n", "x"}).Draw(t, fmt.Sprint("p", g)))
				var spans []string
				for range rapid.IntRange(1, 3).Draw(t, "spans") {
					lo := rapid.IntRange(0, 30).Draw(t, "lo")
					hi := lo + rapid.IntRange(0, 12).Draw(t, "len")
					w := rapid.IntRange(1, 3).Draw(t, "w")
					spans = append(spans, fmt.Sprintf("%0*d-%d", w, lo, hi))
				}
				b.WriteString("[" + strings.Join(spans, ",") + "]")
			}
			parts = append(parts, b.String())
		}
		return strings.Join(parts, ",")
	})
}

func sortedUniqueNames(names []string) []string {
	out := slices.Clone(names)
	Sort(out)
	return slices.Compact(out)
}

func TestPropertyExpandCompressIsSortedUnique(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		names := rapid.SliceOf(genName()).Draw(t, "names")
		want := sortedUniqueNames(slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == "" }))
		got, err := Expand(Compress(names))
		if err != nil {
			t.Fatalf("Expand(Compress(%v)) = %q: %v", names, Compress(names), err)
		}
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("Expand(Compress(%v)) = %v, want %v (compressed %q)", names, got, want, Compress(names))
		}
	})
}

func TestPropertyCompressExpandSameSet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		expr := genExpr().Draw(t, "expr")
		first, err := Expand(expr)
		if err != nil {
			t.Fatalf("Expand(%q): %v", expr, err)
		}
		again, err := Expand(Compress(first))
		if err != nil {
			t.Fatalf("Expand(Compress(Expand(%q))): %v", expr, err)
		}
		if !slices.Equal(again, sortedUniqueNames(first)) {
			t.Fatalf("%q: set changed: %v vs %v", expr, again, first)
		}
	})
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"node[01-32]", "gpu[01-08],bigmem[1-4]", "rack[1-2]-n[01-04]", "node[1-3", "n[3-1]", "a[0-999999]", "x y,z[1,3-5]w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		names, err := Expand(expr)
		if err != nil {
			return
		}
		if len(names) > MaxNames {
			t.Fatalf("%q expanded to %d names, cap is %d", expr, len(names), MaxNames)
		}
		if len(names) > 10000 {
			return // keep each fuzz iteration fast
		}
		for _, n := range names {
			if strings.ContainsAny(n, ",[] \t\r\n") {
				return // not a valid host name; Compress need not round-trip it
			}
		}
		again, err := Expand(Compress(names))
		if err != nil {
			t.Fatalf("Expand(Compress(Expand(%q))): %v", expr, err)
		}
		if !slices.Equal(again, sortedUniqueNames(names)) {
			t.Fatalf("%q: round trip changed the set", expr)
		}
	})
}

func BenchmarkExpandCompress10k(b *testing.B) {
	for b.Loop() {
		names, _ := Expand("node[00001-10000]")
		_ = Compress(names)
	}
}

func BenchmarkCompress10k(b *testing.B) {
	names, _ := Expand("node[00001-10000]")
	for b.Loop() {
		_ = Compress(names)
	}
}

// TestJoin: scontrol show hostlist keeps order and duplicates,
// hostlistsorted sorts them and keeps duplicates (oracle, Slurm 24.11).
func TestJoin(t *testing.T) {
	for _, c := range []struct {
		in           string
		join, sorted string
	}{
		{"n3,n1,n2", "n[3,1-2]", "n[1-3]"},
		{"n1,n2,n3,n5", "n[1-3,5]", "n[1-3,5]"},
		{"n1,n1,n2", "n[1,1-2]", "n[1,1-2]"},
		{"n3,n1,n2,n1", "n[3,1-2,1]", "n[1,1-3]"},
		{"a1,b2,a2", "a1,b2,a2", "a[1-2],b2"},
		{"n09,n10,n11", "n[09-11]", "n[09-11]"},
	} {
		names := strings.Split(c.in, ",")
		if got := Join(names); got != c.join {
			t.Errorf("Join(%s) = %s, want %s", c.in, got, c.join)
		}
		if got := JoinSorted(names); got != c.sorted {
			t.Errorf("JoinSorted(%s) = %s, want %s", c.in, got, c.sorted)
		}
	}
}
