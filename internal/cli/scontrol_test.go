package cli

import (
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

func TestScontrolShowGolden(t *testing.T) {
	q := queueFixture()
	big := q.Jobs[1]
	big.PriorityTerms = []api.PriorityTerm{{Name: "age", Factor: 0.25, Weight: 1000, Contribution: 250},
		{Name: "jobsize", Factor: 0.5, Weight: 500, Contribution: 250}}
	big.PrioritySummary = "age and jobsize contribute equally (250 each)"
	big.WhyPending = "The job is next in line but the resources it needs are in use by job(s) 101, 104_1. Expected start: 2026-01-02T11:00:00 on n3."
	big.StdOut, big.StdErr, big.StdIn, big.Command = "/home/bob/slurm-102.out", "/home/bob/slurm-102.out", "/dev/null", "/home/bob/big.sh"
	nodes, parts := nodeFixture()
	cases := map[string][]string{
		"job-pending": JobRecordLines(&big, q.Now),
		"job-running": JobRecordLines(&q.Jobs[0], q.Now),
		"job-array":   JobRecordLines(&q.Jobs[3], q.Now),
		"node-drain":  NodeRecordLines(&nodes.Nodes[4]),
		"partition":   PartitionRecordLines(&parts.Partitions[0]),
	}
	for name, lines := range cases {
		t.Run(name, func(t *testing.T) {
			ctlGolden(t, "scontrol", name, strings.Join(lines, "\n   ")+"\n")
		})
	}
}

func TestScontrolArgErrors(t *testing.T) {
	if _, err := kvArgs([]string{"JobId=5", "TimeLimit"}); err == nil {
		t.Error("a word without '=' accepted")
	}
	env, _, errb := testEnv()
	if code := runScontrol(t.Context(), env, []string{"--bogus"}); code != 1 || !strings.Contains(errb.String(), "unrecognized option") {
		t.Errorf("scontrol --bogus: %d %q", code, errb.String())
	}
}
