package priority

import (
	"math"
	"testing"
)

// Parsers never panic and accept what they print.
func FuzzParseTRESWeights(f *testing.F) {
	for _, s := range []string{"CPU=1000,Mem=2000,GRES/gpu=4000", "mem=0.25G", "cpu=1K", "=", "a=b", "gres/gpu:a100=1.5T", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ws, err := ParseTRESWeights(s)
		if err != nil {
			return
		}
		for _, w := range ws {
			if w.Name == "" || math.IsNaN(w.Weight) || math.IsInf(w.Weight, 0) {
				t.Fatalf("%q gave %+v", s, w)
			}
		}
	})
}

func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{"NO_NORMAL_ALL,MAX_TRES", "fair_tree", "bogus", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseFlags(s)
		_, _ = ParseResetPeriod(s)
	})
}

// The sprio format parser and the renderer never panic on any format.
func FuzzSprioFormat(f *testing.F) {
	sorts := []string{"", "-y", "u,-Y,r", "+", "-", ",,", "-Z", "i,T"}
	for i, s := range []string{"%.15i %9r %.10Y", "%", "%.", "%99999999999999999999i", "x%10T|%y", "%.0A"} {
		f.Add(s, sorts[i%len(sorts)])
	}
	cfg, cl, tr := ohpc(f)
	rows := s7Rows(f, cfg, cl, tr)
	f.Fuzz(func(t *testing.T, s, sort string) {
		_, _ = FormatSprio(cfg, rows, SprioOptions{Format: s, Sort: sort})
	})
}

func FuzzSshareFormat(f *testing.F) {
	for _, s := range []string{"Account", "User%4", "acc", "LevelFS%-12", "%", "ID%x", "n"} {
		f.Add(s)
	}
	cfg := DefaultConfig()
	tr := qosDemo(f)
	tr.Recompute(&cfg)
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = FormatSshare(tr, &cfg, SshareOptions{All: true, Format: []string{s}})
	})
}
