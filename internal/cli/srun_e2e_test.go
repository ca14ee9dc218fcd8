package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The srun end-to-end tests run `sluice up` (controller, SQLite store, two
// node agents) and srun in-process against it: steps whose tasks the node
// agents start, with their I/O streamed back to srun.

// srunWith runs srun with stdin and extra environment; ctx ends it early
// (Ctrl-C) when cancelled.
func (c *extCluster) srunWith(ctx context.Context, stdin string, vars []string, args ...string) (int, string, string) {
	c.t.Helper()
	env, out, errb := c.env(0, vars...)
	env.Stdin = strings.NewReader(stdin)
	cmd, _ := Lookup("srun")
	rc := cmd.Run(ctx, env, args)
	return rc, out.String(), errb.String()
}

// TestE2ESrunStdin: srun outside an allocation forwards its stdin to the
// tasks (all of them by default, one with --input=TASKID, none with
// --input=none) and returns the highest task exit code.
func TestE2ESrunStdin(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 2, "")
	cases := []struct {
		args []string
		want []string
		rc   int
	}{
		{[]string{"-n", "2", "-l", "sh", "-c", "read a; read b; echo $SLURM_PROCID:$a:$b"}, []string{"0: 0:one:two", "1: 1:one:two"}, 0},
		{[]string{"-n", "2", "-l", "--input=1", "sh", "-c", "read a; echo got[$a]; exit $SLURM_PROCID"}, []string{"0: got[]", "1: got[one]"}, 1},
		{[]string{"--input", "none", "cat"}, nil, 0},
		{[]string{"-N", "2", "-l", "sh", "-c", "cat >/dev/null; echo $SLURMD_NODENAME"}, []string{"0: node1", "1: node2"}, 0},
	}
	for _, tc := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		rc, out, errs := c.srunWith(ctx, "one\ntwo\n", nil, tc.args...)
		cancel()
		got := strings.Join(sortedCopy(strings.Split(strings.TrimSpace(out), "\n")), "\n")
		if rc != tc.rc || got != strings.Join(tc.want, "\n") {
			t.Errorf("srun %v: exit %d, output:\n%s\nwant exit %d, output:\n%s\nstderr: %s", tc.args, rc, out, tc.rc,
				strings.Join(tc.want, "\n"), errs)
		}
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestE2ESrunInBatchScript: srun inside a batch script runs its step on
// the job's two nodes (block distribution: tasks 0-1 on node1, 2-3 on
// node2), its output lands in the job's output file, and sacct records
// the step.
func TestE2ESrunInBatchScript(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 2, "")
	out := filepath.Join(c.state, "batch.out")
	script := "#!/bin/sh\n" + c.bin + " srun -l sh -c 'echo $SLURMD_NODENAME $SLURM_STEP_NODELIST'\n"
	path := filepath.Join(c.state, "job.sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	id := c.submit("-N", "2", "-n", "4", "-o", out, "--export=ALL,SLURM_CONF="+c.conf, path)
	c.waitState(id, "COMPLETED", "FAILED")
	data, _ := os.ReadFile(out)
	lines := sortedCopy(strings.Split(strings.TrimSpace(string(data)), "\n"))
	want := []string{"0: node1 node[1-2]", "1: node1 node[1-2]", "2: node2 node[1-2]", "3: node2 node[1-2]"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("batch output:\n%s\nwant:\n%s", data, strings.Join(want, "\n"))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, acct, _ := c.run("sacct", "-j", id, "-P", "-n", "--format=JobID,JobName,State,ExitCode")
		if strings.Contains(acct, id+".0|sh|COMPLETED|0:0") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sacct lacks step %s.0:\n%s", id, acct)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestE2ESrunInterruptAndLimits: Ctrl-C reaches the tasks (their SIGINT
// trap runs; srun exits with their code), -o sends the step's output to a
// file, and a step asking for more nodes than the allocation has gets
// srun's error.
func TestE2ESrunInterruptAndLimits(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 2, "")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(1500 * time.Millisecond)
		cancel()
	}()
	rc, out, errs := c.srunWith(ctx, "", nil, "sh", "-c", "trap 'echo caught INT; exit 3' INT; echo ready; while :; do sleep 0.1; done")
	if rc != 3 || !strings.Contains(out, "ready") || !strings.Contains(out, "caught INT") || !strings.Contains(errs, "srun: sending Ctrl-C to StepId=") {
		t.Errorf("interrupted srun: exit %d, out %q, err %q", rc, out, errs)
	}

	// -o: the step's output goes to a file on srun's host.
	outFile := filepath.Join(c.state, "step-%s.out")
	if rc, out, errs := c.srunWith(context.Background(), "", nil, "-o", outFile, "-n", "2", "-l", "echo", "hi"); rc != 0 || out != "" {
		t.Errorf("srun -o: exit %d, stdout %q, stderr %q", rc, out, errs)
	}
	data, _ := os.ReadFile(filepath.Join(c.state, "step-0.out"))
	if got := strings.Join(sortedCopy(strings.Split(strings.TrimSpace(string(data)), "\n")), "|"); got != "0: hi|1: hi" {
		t.Errorf("srun -o file: %q", data)
	}

	inner := c.bin + " srun -N 2 true"
	rc, _, errs = c.run("salloc", "-N", "1", "sh", "-c", inner)
	if rc == 0 || !strings.Contains(errs, "srun: error: Only allocated 1 nodes asked for 2") {
		t.Errorf("srun -N 2 in a one-node allocation: exit %d, %q", rc, errs)
	}
}

// TestE2ESrunPty: srun --pty runs its command as a real step (JOB.0 in
// sacct) on a pseudo-terminal of the first node: tty names a /dev/pts
// device there, keystrokes reach it, srun exits with its code. Without a
// terminal on stdin srun says so as Slurm does and runs the step without
// one.
func TestE2ESrunPty(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 2, "")
	master, slave := testPty(t)
	env, out, errb := c.env(0)
	env.Stdin, env.IsTerminal = slave, true
	go func() {
		time.Sleep(500 * time.Millisecond)
		master.Write([]byte("echo node=$SLURMD_NODENAME step=$SLURM_STEP_ID; tty; exit 3\n"))
	}()
	go io.Copy(io.Discard, master)
	cmd, _ := Lookup("srun")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rc := cmd.Run(ctx, env, []string{"--pty", "sh"})
	if rc != 3 || !strings.Contains(out.String(), "node=node1 step=0") || !strings.Contains(out.String(), "/dev/pts/") {
		t.Errorf("srun --pty sh: exit %d, out %q, err %q", rc, out.String(), errb.String())
	}
	rc, o, e := c.run("srun", "--pty", "tty")
	if rc != 1 || strings.TrimSpace(o) != "not a tty" || !strings.Contains(e, "srun: error: Not using a pseudo-terminal, disregarding --pty option") {
		t.Errorf("srun --pty without a terminal: exit %d, out %q, err %q", rc, o, e)
	}
	_, acct, _ := c.run("sacct", "-n", "-P", "-o", "JobID,JobName")
	if !strings.Contains(acct, "1.0|sh") {
		t.Errorf("sacct lacks the --pty step 1.0:\n%s", acct)
	}
}

// testPty opens a pseudo-terminal pair for srun's stdin.
func testPty(t *testing.T) (*os.File, *os.File) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80})
	return m, s
}
