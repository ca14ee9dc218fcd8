package tres

import (
	"maps"
	"math"
	"strings"
	"testing"
)

func TestParseWeights(t *testing.T) {
	cases := []struct {
		in   string
		want Weights
	}{
		{"", Weights{}},
		{"CPU=1.0,Mem=0.25G,GRES/gpu=2.0", Weights{CPU: 1, Mem: 0.25 / 1024, "gres/gpu": 2}},
		{"CPU=1000,Mem=2000,GRES/gpu=4000", Weights{CPU: 1000, Mem: 2000, "gres/gpu": 4000}}, // PriorityWeightTRES in ohpc-priority.conf
		{"mem=.25", Weights{Mem: 0.25}},
		{"Mem=2M", Weights{Mem: 2}},
		{"Mem=1K", Weights{Mem: 1024}},
		{"Mem=1T", Weights{Mem: 1.0 / (1 << 20)}},
		{"cpu=1K", Weights{CPU: 1.0 / 1024}},
		{"cpu=-0.5,node=3", Weights{CPU: -0.5, Node: 3}},
		{"license/matlab=10,gres/gpu:a100=4,billing=1e1", Weights{"license/matlab": 10, "gres/gpu:a100": 4, BillingTRES: 10}},
	}
	for _, c := range cases {
		got, err := ParseWeights(c.in)
		if err != nil || !maps.EqualFunc(got, c.want, close) {
			t.Errorf("ParseWeights(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestParseWeightsErrors(t *testing.T) {
	cases := []struct{ in, msg string }{
		{"gpu=2", "TRES weight 'gpu=2' is not a configured TRES type"},
		{"cpus=1", "is not a configured TRES type"},
		{"foo/bar=1", "is not a configured TRES type"},
		{"cpu", "is not NAME=WEIGHT"},
		{"cpu=", "is not a number"},
		{"cpu=G", "is not a number"},
		{"cpu=abc", "is not a number"},
		{"cpu=NaN", "is not a number"},
		{"cpu=Inf", "is not a number"},
		{"cpu=1e999", "is not a number"},
		{"cpu=0x10", "is not a number"},
	}
	for _, c := range cases {
		got, err := ParseWeights(c.in)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseWeights(%q) = %v, %v; want error %q", c.in, got, err, c.msg)
		}
	}
}

func TestBilling(t *testing.T) {
	docWeights := "CPU=1.0,Mem=0.25G,GRES/gpu=2.0"
	cases := []struct {
		name, alloc, weights string
		flags                BillingFlags
		want                 float64
	}{
		// slurm.conf(5) TRESBillingWeights: 1 CPU and 8 GB bill 3.0, or 2.0 with MAX_TRES.
		{"man page sum", "cpu=1,mem=8G,node=1", docWeights, 0, 3},
		{"man page MAX_TRES", "cpu=1,mem=8G,node=1", docWeights, MaxTRES, 2},
		{"no weights bills CPUs", "cpu=48,mem=100G,gres/gpu=4", "", 0, 48},
		{"no weights ignores flags", "cpu=48", "", MaxTRES, 48},
		{"sum with gpus", "cpu=4,mem=16G,gres/gpu=2", docWeights, 0, 12},
		{"MAX_TRES takes gpus into the max", "cpu=4,mem=16G,gres/gpu=3", docWeights, MaxTRES, 6},
		{"MAX_TRES_GRES adds gpus", "cpu=4,mem=16G,gres/gpu=3", docWeights, MaxTRESGres, 10},
		{"typed gpus count for GRES/gpu", "cpu=1,gres/gpu:a100=2", "GRES/gpu=2.0", 0, 4},
		{"licenses are global under MAX_TRES", "cpu=8,license/matlab=2", "CPU=1,license/matlab=5", MaxTRES, 18},
		{"negative weight", "cpu=8,node=2", "CPU=1,Node=-1", 0, 6},
		{"unweighted TRES bill nothing", "cpu=8,node=2", "Node=1.5", 0, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := ParseWeights(c.weights)
			if err != nil {
				t.Fatal(err)
			}
			if got := Billing(v(c.alloc), w, c.flags); !close(got, c.want) {
				t.Fatalf("Billing(%s; %s) = %v, want %v", c.alloc, c.weights, got, c.want)
			}
		})
	}
}

func FuzzParseWeights(f *testing.F) {
	for _, s := range []string{"CPU=1.0,Mem=0.25G,GRES/gpu=2.0", "cpu=-1e3", "license/x=.5K", "mem=1P", "x=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWeights(s)
		if err != nil {
			return
		}
		for name, x := range w {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("%q: weight %s = %v", s, name, x)
			}
		}
		_ = Billing(Vector{CPU: 4, Mem: 1024, "gres/gpu": 1}, w, MaxTRES)
	})
}
