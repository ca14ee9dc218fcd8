package cli

import (
	"strings"
	"testing"
)

// TestJobNamePrintedSafely is issue 17's finding 10: a job name with a
// newline, tab or NUL (accepted, as by Slurm) is printed escaped by
// squeue and scontrol, one line per job.
func TestJobNamePrintedSafely(t *testing.T) {
	h := newCtlHarness(t, qosDemo)
	for _, name := range []string{"a\nb", "c\x00d\te"} {
		if code, _, errb := h.run(runSbatch, "-H", "--job-name="+name, "--wrap", "true"); code != 0 {
			t.Fatalf("sbatch -J %q: %s", name, errb)
		}
	}
	_, out, _ := h.run(runSqueue, "-h", "-o", "%i|%j|")
	if strings.Count(out, "\n") != 2 || !strings.Contains(out, "1|a\\nb|\n") || !strings.Contains(out, "2|c\\x00d\\te|\n") {
		t.Fatalf("squeue: %q", out)
	}
	_, out, _ = h.run(runScontrol, "show", "job", "1")
	if !strings.Contains(out, "JobName=a\\nb\n") {
		t.Fatalf("scontrol show job: %q", out)
	}
	if got := printable("plain"); got != "plain" {
		t.Fatalf("printable(plain) = %q", got)
	}
}
