package tres

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// v is the tables' shorthand for a TRES vector written as Slurm prints it.
func v(s string) Vector { return MustParse(s) }

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Vector
	}{
		{"", Vector{}},
		{"cpu=2,mem=4G,gres/gpu=16,node=1", Vector{CPU: 2, Mem: 4096, "gres/gpu": 16, Node: 1}},
		{"gpu=32", Vector{"gres/gpu": 32}},                                              // sacctmgr short form
		{"gpu:a100=2", Vector{"gres/gpu:a100": 2}},                                      // typed short form
		{"cpu=256,mem=1000G", Vector{CPU: 256, Mem: 1024000}},                           // MaxTRESPerUser in the fixtures
		{"gres/gpu:h100=8", Vector{"gres/gpu:h100": 8}},                                 //
		{"CPU=4,Mem=100,GRES/GPU:A100=1", Vector{CPU: 4, Mem: 100, "gres/gpu:a100": 1}}, // case-insensitive
		{"mem=4T", Vector{Mem: 4 * 1024 * 1024}},                                        //
		{"mem=1P", Vector{Mem: 1 << 30}},                                                //
		{"mem=4000M", Vector{Mem: 4000}},                                                //
		{"mem=512K", Vector{Mem: 1}},                                                    // rounds up to a whole MB
		{"mem=1536k", Vector{Mem: 2}},                                                   //
		{"mem=4g", Vector{Mem: 4096}},                                                   //
		{"license/matlab=3,bb/cray=1G", Vector{"license/matlab": 3, "bb/cray": 1024}},
		{"energy=10,billing=7,fs/disk=2G,vmem=1M,pages=9", Vector{Energy: 10, BillingTRES: 7, FSDisk: 2048, VMem: 1, Pages: 9}},
		{"1=2,2=4000,4=1,5=2", Vector{CPU: 2, Mem: 4000, Node: 1, BillingTRES: 2}}, // Slurm TRES ids
		{" cpu = 2 , node=1 ,", Vector{CPU: 2, Node: 1}},
		{"cpu=1,cpu=3", Vector{CPU: 3}},
		{"gres/gpu=0", Vector{"gres/gpu": 0}}, // a zero limit is kept
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if err != nil || !maps.Equal(got, c.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ in, msg string }{
		{"cpu", "not NAME=COUNT"},
		{"cpu=", "missing count"},
		{"cpu=-1", "not a count"},
		{"cpu=1.5", "not a count"},
		{"cpu=4G", "unit suffix on a count"},
		{"gpu=2K", "unit suffix on a count"},
		{"mem=G", "missing count"},
		{"mem=99999999999999P", "too large"},
		{"cpu=99999999999999999999", "too large"},
		{"foo/bar=1", "unknown TRES"},
		{"gres/=1", "bad GRES name"},
		{"gres/gpu:=1", "bad GRES name"},
		{"gres/gpu:a:b=1", "bad GRES name"},
		{"license/=1", "bad name"},
		{"=3", "empty name"},
		{"9=1", "unknown TRES"},
		{"g pu=1", "unknown TRES"},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want error %q", c.in, got, c.msg)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Parse(%q) error %q, want it to mention %q", c.in, err, c.msg)
		}
	}
	if _, err := Parse("foo/bar=1"); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown type error %v does not wrap ErrUnknown", err)
	}
}

func TestParseLimitUpdate(t *testing.T) {
	got, err := ParseLimitUpdate("gres/gpu=-1,cpu=8")
	if err != nil || !maps.Equal(got, Vector{"gres/gpu": Clear, CPU: 8}) {
		t.Fatalf("ParseLimitUpdate = %v, %v", got, err)
	}
	if _, err := ParseLimitUpdate("cpu=-2"); err == nil {
		t.Fatal("ParseLimitUpdate accepted -2")
	}
}

func TestString(t *testing.T) {
	cases := []struct {
		in   Vector
		want string
	}{
		{nil, ""},
		{Vector{"gres/gpu": 16, Node: 1, Mem: 4096, CPU: 2}, "cpu=2,mem=4G,node=1,gres/gpu=16"},
		{Vector{Mem: 4000}, "mem=4000M"},
		{Vector{Mem: 1024000}, "mem=1000G"},
		{Vector{Mem: 4 << 20}, "mem=4T"},
		{Vector{Mem: 1 << 30}, "mem=1P"},
		{Vector{Mem: 1 << 40}, "mem=1024P"},
		{Vector{Mem: 0}, "mem=0"},
		{Vector{BillingTRES: 3, Pages: 1, VMem: 2, FSDisk: 1024, Energy: 5, Node: 2, CPU: 1},
			"cpu=1,energy=5,node=2,billing=3,fs/disk=1G,vmem=2M,pages=1"},
		{Vector{"bb/cray": 2048, "license/matlab": 1, "gres/gpu:a100": 148, "gres/gpu": 212, "gres/gpu:h100": 64},
			"gres/gpu=212,gres/gpu:a100=148,gres/gpu:h100=64,license/matlab=1,bb/cray=2G"},
	}
	for _, c := range cases {
		if got := c.in.String(); got != c.want {
			t.Errorf("String(%v) = %q, want %q", map[string]int64(c.in), got, c.want)
		}
	}
}

func TestNamesHelpers(t *testing.T) {
	splits := []struct{ in, kind, gres, typ string }{
		{"gres/gpu:a100", "gres", "gpu", "a100"},
		{"gres/gpu", "gres", "gpu", ""},
		{"license/matlab", "license", "matlab", ""},
		{"cpu", "cpu", "", ""},
	}
	for _, c := range splits {
		k, g, ty := Split(c.in)
		if k != c.kind || g != c.gres || ty != c.typ {
			t.Errorf("Split(%q) = %q,%q,%q", c.in, k, g, ty)
		}
	}
	if GresName("GPU", "A100") != "gres/gpu:a100" || GresName("gpu", "") != "gres/gpu" {
		t.Error("GresName")
	}
	if u, ok := Untyped("gres/gpu:a100"); !ok || u != "gres/gpu" {
		t.Errorf("Untyped(gres/gpu:a100) = %q, %v", u, ok)
	}
	if _, ok := Untyped("gres/gpu"); ok {
		t.Error("Untyped(gres/gpu) should be false")
	}
	for name, want := range map[string]bool{CPU: true, Mem: true, Node: true, "gres/gpu:a100": true, "license/x": false, BillingTRES: false, Energy: false} {
		if IsNodeTRES(name) != want {
			t.Errorf("IsNodeTRES(%q) != %v", name, want)
		}
	}
	names, err := ParseNames("gres/gpu:h100, GRES/gpu,license/matlab,gres/gpu:a100,gres/gpu,cpu")
	want := []string{CPU, "gres/gpu", "gres/gpu:a100", "gres/gpu:h100", "license/matlab"}
	if err != nil || !slices.Equal(names, want) {
		t.Errorf("ParseNames = %v, %v; want %v", names, err, want)
	}
	if _, err := ParseNames("gpu"); err == nil {
		t.Error("ParseNames accepted the short form gpu")
	}
}

func TestArithmetic(t *testing.T) {
	a := v("cpu=4,mem=8G,gres/gpu=2")
	b := v("cpu=2,node=1")
	if got := Sum(a, b); !maps.Equal(got, v("cpu=6,mem=8G,gres/gpu=2,node=1")) {
		t.Errorf("Sum = %v", got)
	}
	c := a.Clone()
	c.Sub(b)
	if !maps.Equal(c, Vector{CPU: 2, Mem: 8192, "gres/gpu": 2, Node: -1}) {
		t.Errorf("Sub = %v", c)
	}
	if !maps.Equal(a, v("cpu=4,mem=8G,gres/gpu=2")) {
		t.Errorf("Clone shares storage: a = %v", a)
	}
	if got := Min(a, b); !maps.Equal(got, Vector{CPU: 2}) {
		t.Errorf("Min = %v", got)
	}
	if got := Max(a, b); !maps.Equal(got, v("cpu=4,mem=8G,gres/gpu=2,node=1")) {
		t.Errorf("Max = %v", got)
	}
	if got := b.Scaled(3); !maps.Equal(got, v("cpu=6,node=3")) {
		t.Errorf("Scaled = %v", got)
	}
	if !b.LessOrEqual(Sum(a, b)) || a.LessOrEqual(b) || !Vector(nil).LessOrEqual(nil) {
		t.Error("LessOrEqual")
	}
	if !v("cpu=0").IsZero() || a.IsZero() {
		t.Error("IsZero")
	}
}

func TestLimits(t *testing.T) {
	cases := []struct {
		name, req, limit string
		over             []string
	}{
		{"no limit", "cpu=100", "", nil},
		{"within", "cpu=4,gres/gpu=2", "cpu=256,gres/gpu=4", nil},
		{"at the limit", "gres/gpu=4", "gres/gpu=4", nil},
		{"gpu over", "cpu=4,gres/gpu=8", "cpu=256,gres/gpu=4", []string{"gres/gpu"}},
		{"typed counts toward untyped", "gres/gpu:a100=8", "gres/gpu=4", []string{"gres/gpu"}},
		{"typed limit", "gres/gpu:h100=9,gres/gpu=9", "gres/gpu:h100=8", []string{"gres/gpu:h100"}},
		{"zero limit", "gres/gpu=1", "gres/gpu=0", []string{"gres/gpu"}},
		{"several, Slurm order", "cpu=300,mem=2000G,node=3", "node=2,mem=1000G,cpu=256", []string{CPU, Mem, Node}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, limit := v(c.req), v(c.limit)
			if got := req.Exceeded(limit); !slices.Equal(got, c.over) {
				t.Fatalf("Exceeded = %v, want %v", got, c.over)
			}
			first, ok := req.WithinLimit(limit)
			if ok != (len(c.over) == 0) || (!ok && first != c.over[0]) {
				t.Fatalf("WithinLimit = %q, %v; want first of %v", first, ok, c.over)
			}
		})
	}
}

func TestFillUntyped(t *testing.T) {
	cases := []struct{ in, want string }{
		{"gres/gpu:a100=2", "gres/gpu=2,gres/gpu:a100=2"},
		{"gres/gpu:a100=2,gres/gpu:h100=3", "gres/gpu=5,gres/gpu:a100=2,gres/gpu:h100=3"},
		{"gres/gpu=4,gres/gpu:a100=2", "gres/gpu=4,gres/gpu:a100=2"}, // explicit total kept
		{"cpu=1,gres/mps:big=10", "cpu=1,gres/mps=10,gres/mps:big=10"},
		{"cpu=1", "cpu=1"},
	}
	for _, c := range cases {
		got := v(c.in)
		got.FillUntyped()
		if got.String() != c.want {
			t.Errorf("FillUntyped(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// genVector draws vectors over built-in, GRES, license and burst buffer names, with mem
// values both in whole gigabytes and odd megabytes.
func genVector() *rapid.Generator[Vector] {
	names := []string{CPU, Mem, Energy, Node, BillingTRES, FSDisk, VMem, Pages,
		"gres/gpu", "gres/gpu:a100", "gres/gpu:h100", "gres/mps", "license/matlab", "license/Ansys", "bb/cray"}
	return rapid.Custom(func(t *rapid.T) Vector {
		out := Vector{}
		for _, n := range rapid.SliceOfDistinct(rapid.SampledFrom(names), rapid.ID).Draw(t, "names") {
			val := rapid.Int64Range(0, 1<<40).Draw(t, n)
			if rapid.Bool().Draw(t, "round") {
				val = val % 4096 * 1024
			}
			out[n] = val
		}
		return out
	})
}

func TestPropertyStringParseRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genVector().Draw(t, "v")
		got, err := Parse(in.String())
		if err != nil || !maps.Equal(got, in) {
			t.Fatalf("Parse(%q) = %v, %v; want %v", in.String(), got, err, map[string]int64(in))
		}
	})
}

func TestPropertyAddSubInverse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := genVector().Draw(t, "a"), genVector().Draw(t, "b")
		c := Sum(a, b)
		if !a.LessOrEqual(c) || !b.LessOrEqual(c) {
			t.Fatalf("a, b not <= a+b")
		}
		c.Sub(b)
		for k, n := range c {
			if n != a[k] {
				t.Fatalf("(a+b)-b differs at %s: %d vs %d", k, n, a[k])
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"cpu=2,mem=4G,gres/gpu=16,node=1", "gpu=32", "gpu:a100=2", "mem=1000G", "1=2,2=4000", "license/x=1,bb/y=2T", "a=b=c", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		vec, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(vec.String())
		if err != nil || !maps.Equal(again, vec) {
			t.Fatalf("%q: Parse(String()) = %v, %v; want %v", s, again, err, map[string]int64(vec))
		}
	})
}

func BenchmarkWithinLimit(b *testing.B) {
	req := v("cpu=64,mem=256G,node=2,gres/gpu:a100=8")
	limit := v("cpu=256,mem=1000G,node=4,gres/gpu=16,gres/gpu:a100=8,license/matlab=2")
	for b.Loop() {
		if _, ok := req.WithinLimit(limit); !ok {
			b.Fatal("over")
		}
	}
}

func BenchmarkBilling(b *testing.B) {
	alloc := v("cpu=64,mem=256G,node=2,gres/gpu:a100=8,gres/gpu=8")
	w, _ := ParseWeights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0")
	for b.Loop() {
		_ = Billing(alloc, w, MaxTRES)
	}
}
