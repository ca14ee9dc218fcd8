package sched

import (
	"testing"

	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/priority"
)

// TestLicenseTRESPriority: PriorityWeightTRES=license/matlab=1000 with
// Licenses=matlab:4 gives a job holding -L matlab:2 a TRES term of 500
// (its share of the system count, as Slurm normalises global TRES), and
// a job without licenses none.
func TestLicenseTRESPriority(t *testing.T) {
	text := resvConf + "PriorityType=priority/multifactor\nAccountingStorageTRES=license/matlab\nPriorityWeightTRES=license/matlab=1000\n"
	h := newHarness(t, text)
	c, _, err := conf.Parse("slurm.conf", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	pcfg, err := priority.ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	cl := priority.ClusterFrom(c)
	if got := cl.Partitions["batch"].TRES["license/matlab"]; got != 4 {
		t.Fatalf("partition license/matlab TRES %d, want 4", got)
	}
	calc := priority.NewCalculator(&pcfg, cl, nil)
	for _, tc := range []struct {
		opts string
		want float64
	}{{"-L matlab:2 -t 10", 500}, {"-t 10", 0}} {
		j := h.mustSubmitRL("alice", tc.opts)
		var pj priority.Job
		h.st.PriorityJob(j, j.Partitions[0], nil, &pj)
		got := 0.0
		for _, term := range calc.Explain(&pj, h.now).Terms {
			if term.Name == "tres/license/matlab" {
				got += term.Contribution
			}
		}
		t.Logf("%s: TRES %v, license contribution %.0f", tc.opts, pj.TRES, got)
		if got != tc.want {
			t.Errorf("%s: license TRES contribution %.0f, want %.0f", tc.opts, got, tc.want)
		}
	}
}
