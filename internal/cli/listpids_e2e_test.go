package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestE2EListPids: scontrol listpids on a running cluster lists the real
// processes of a batch script (its leader as task 0, its child sleep as
// "-") and of an srun step inside a batch job (two tasks, ranks 0 and 1),
// and prints Slurm's messages for a job, a step or a node without steps.
func TestE2EListPids(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 3, "")
	one := c.submit("-w", "node1", "-o", "/dev/null", "--wrap", "sleep 300")
	script := filepath.Join(c.state, "step.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"+c.bin+" srun -n2 sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	two := c.submit("-w", "node2", "-n2", "-o", "/dev/null", "--export=ALL,SLURM_CONF="+c.conf, script)
	c.waitState(one, "RUNNING")
	c.waitState(two, "RUNNING")
	var out string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var rc int
		rc, out, _ = c.run("scontrol", "listpids", two+".0", "node2")
		if rc == 0 && strings.Count(out, "\n") == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("step %s.0 never listed its two tasks:\n%s", two, out)
		}
	}
	checkListPids(t, out, []string{two + " 0 0 0", two + " 0 1 1"}, "sleep")

	// RUNNING in the controller may come before the agent has started
	// the script (the launch is in flight on a loaded machine).
	var rc int
	var errs string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		rc, out, errs = c.run("scontrol", "listpids", one, "node1")
		if rc == 0 && strings.Count(out, "\n") >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listpids %s: exit %d: %s%s", one, rc, out, errs)
		}
	}
	checkListPids(t, out, []string{one + " batch 0 0", one + " batch - -"}, "")

	rc, out, _ = c.run("scontrol", "listpids", "*", "node2")
	if rc != 0 || strings.Count(out, " batch ") < 2 || !strings.Contains(out, " 0        1       1") {
		t.Errorf("listpids '*' node2: exit %d:\n%s", rc, out)
	}

	cases := []struct {
		args []string
		err  string
	}{
		{[]string{"7", "node1"}, "There are no steps for job 7 on node node1.\n"},
		{[]string{two + ".3", "node2"}, "StepId=" + two + ".3 does not exist on node node2.\n"},
		{[]string{one, "node3"}, "JobId=" + one + " does not exist on node node3.\n"},
		{[]string{"*", "node3"}, "No job steps exist on this node.\n"},
		{[]string{"1", "node9"}, "JobId=1 does not exist on node node9.\n"},
		{[]string{"abc"}, "\"abc\" does not look like a jobid\n"},
		{[]string{"1", "2", "3"}, "too many arguments for keyword:listpids\n"},
	}
	for _, tc := range cases {
		rc, out, errs := c.run("scontrol", append([]string{"listpids"}, tc.args...)...)
		if rc != 1 || out != "" || errs != tc.err {
			t.Errorf("listpids %v: exit %d, stdout %q, stderr %q; want exit 1, stderr %q", tc.args, rc, out, errs, tc.err)
		}
	}
}

// checkListPids checks listpids output: Slurm's header, then one line per
// wanted "JOB STEP LOCAL GLOBAL" whose pid is a live process (whose
// command line contains cmd, for the task lines).
func checkListPids(t *testing.T, out string, want []string, cmd string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want)+1 || lines[0] != "PID      JOBID    STEPID   LOCALID GLOBALID" {
		t.Fatalf("listpids output:\n%s\nwant the header and %d lines", out, len(want))
	}
	row := regexp.MustCompile(`^(\d+) +(\S+) +(\S+) +(\S+) +(\S+) +$`)
	for i, l := range lines[1:] {
		m := row.FindStringSubmatch(l)
		if m == nil || strings.Join(m[2:], " ") != want[i] || fmt.Sprintf("%-8s %-8s %-8s %-7s %-8s ", m[1], m[2], m[3], m[4], m[5]) != l {
			t.Errorf("line %q, want pid and %q", l, want[i])
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil || m[4] != "-" && !strings.Contains(string(data), cmd) {
			t.Errorf("pid %d of %q: cmdline %q, %v", pid, l, data, err)
		}
	}
}
