package cli

import (
	"strings"
	"testing"
	"time"
)

// TestSattachUp attaches to a running two-node step on `sluice up`: the
// output so far is replayed and the rest follows until the step ends
// (slurmstepd replays its buffered output to sattach the same way), -l
// labels lines, --output-filter keeps one task's stdout; an unknown step
// and a malformed id fail as Slurm 24.11's sattach does, an ended step
// reports its nodes with no tasks running.
func TestSattachUp(t *testing.T) {
	c := upCluster(t, 2, "")
	id := c.submit("-N2", "-o", "/dev/null", "--export=ALL,SLURM_CONF="+c.conf, "--wrap",
		c.bin+` srun sh -c 'for i in 1 2 3 4; do echo out$i; echo err$i >&2; sleep 0.5; done'`)
	var rc int
	var out, errs string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		rc, out, errs = c.run("sattach", "-l", "--output-filter=1", id+".0")
		if !strings.Contains(errs, "Invalid job id") || time.Now().After(deadline) {
			break
		}
	}
	if rc != 0 || out != "1: out1\n1: out2\n1: out3\n1: out4\n" {
		t.Errorf("sattach -l --output-filter=1: exit %d stdout %q stderr %q", rc, out, errs)
	}
	for _, want := range []string{"0: err1\n", "1: err4\n"} {
		if !strings.Contains(errs, want) {
			t.Errorf("sattach stderr lacks %q: %q", want, errs)
		}
	}
	if rc, _, errs := c.run("sattach", id+".7"); rc != 1 || errs != "sattach: error: Could not get job step info: Invalid job id specified\n" {
		t.Errorf("unknown step: exit %d stderr %q", rc, errs)
	}
	if rc, _, errs := c.run("sattach", id); rc != 1 || !strings.HasPrefix(errs, "sattach: error: Failed to parse stepid from command line options\nUsage: sattach") {
		t.Errorf("malformed id: exit %d stderr %q", rc, errs)
	}
	c.waitState(id, "COMPLETED", "FAILED", "CANCELLED")
	if rc, _, errs := c.run("sattach", id+".0"); rc != 0 || !strings.Contains(errs, "no tasks running") {
		t.Errorf("ended step: exit %d stderr %q", rc, errs)
	}
}
