package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPrologEpilogUp runs slurm.conf's Prolog, Epilog and TaskProlog on
// `sluice up`: a job gets its TaskProlog's exported variable and printed
// line (the batch script and each srun task), Prolog and Epilog see slurmd's SLURM_SCRIPT_CONTEXT; a Prolog that
// fails on node2 drains it ("Prolog error" in sinfo -R) and requeues the job
// held (squeue "(launch failed requeued held)"), as Slurm 24.11 does.
func TestPrologEpilogUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	extra := "Prolog=" + write("prolog", `env > `+dir+`/prolog.$SLURM_JOB_ID; [ "$SLURMD_NODENAME" = node2 ] && exit 1; exit 0`) + "\n" +
		"Epilog=" + write("epilog", `env > `+dir+`/epilog.$SLURM_JOB_ID`) + "\n" +
		"TaskProlog=" + write("taskprolog", `echo "export FROM_TP=yes"; echo "export TP_STEP=${SLURM_STEP_ID:-batch}"; echo "print task prolog says hi"`) + "\n"
	c := upCluster(t, 2, extra)
	out := filepath.Join(dir, "job.out")
	id := c.submit("-w", "node1", "-o", out, "--export=ALL,SLURM_CONF="+c.conf, "--wrap",
		"echo FROM_TP=$FROM_TP TP_STEP=$TP_STEP; "+c.bin+" srun sh -c 'echo step TP_STEP=$TP_STEP'")
	if j := c.waitState(id, "COMPLETED", "FAILED", "CANCELLED"); j.State != "COMPLETED" {
		t.Fatalf("job %s ended %s", id, j.State)
	}
	if data, _ := os.ReadFile(out); string(data) != "task prolog says hi\nFROM_TP=yes TP_STEP=batch\ntask prolog says hi\nstep TP_STEP=0\n" {
		t.Errorf("job output %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "prolog."+id)); !strings.Contains(string(data), "SLURM_SCRIPT_CONTEXT=prolog_slurmd") {
		t.Errorf("prolog env:\n%s", data)
	}
	c.eventuallyFile(filepath.Join(dir, "epilog."+id), "SLURM_SCRIPT_CONTEXT=epilog_slurmd")

	id = c.submit("-w", "node2", "-o", out, "--wrap", "true")
	c.eventuallyRun("sinfo", []string{"-R", "-h", "-o", "%E|%N"}, "Prolog error|node2")
	c.eventuallyRun("squeue", []string{"-h", "-j", id, "-o", "%t %R"}, "PD (launch failed requeued held)")
}

// eventuallyFile waits until path holds want.
func (c *extCluster) eventuallyFile(path, want string) {
	c.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if data, _ := os.ReadFile(path); strings.Contains(string(data), want) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s never held %q", path, want)
		}
	}
}

// eventuallyRun waits until a command's output holds want.
func (c *extCluster) eventuallyRun(name string, args []string, want string) {
	c.t.Helper()
	var out string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, out, _ = c.run(name, args...)
		if strings.Contains(out, want) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s %v never printed %q; last:\n%s", name, args, want, out)
		}
	}
}
