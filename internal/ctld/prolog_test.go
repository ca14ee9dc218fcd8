package ctld

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// scriptFile writes an executable shell script into dir.
func scriptFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// scriptCluster starts a one-node cluster whose slurm.conf names the
// scripts of lines (KEY=body: the body becomes a script in dir).
func scriptCluster(t *testing.T, dir string, lines map[string]string) *cluster {
	t.Helper()
	var extra strings.Builder
	for key, body := range lines {
		extra.WriteString(key + "=" + scriptFile(t, dir, strings.ToLower(key), body) + "\n")
	}
	return newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: extra.String() + "PrologEpilogTimeout=5\n"})
}

// node returns the controller's record of a node.
func (c *cluster) node(name string) api.NodeRecord {
	c.t.Helper()
	res, err := c.client.Nodes(c.ctx())
	if err != nil {
		c.t.Fatalf("nodes: %v", err)
	}
	for _, n := range res.Nodes {
		if n.Name == name {
			return n
		}
	}
	c.t.Fatalf("no node %s", name)
	return api.NodeRecord{}
}

// TestPrologFailureRequeuesHeld checks slurmctld's handling of a failed
// Prolog (oracle 24.11: sinfo -R "Prolog error" by root; squeue "PD
// (launch failed requeued held)", priority 0, Restarts=1, the user may
// release it); EpilogSlurmctld runs for the failed run.
func TestPrologFailureRequeuesHeld(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t, 0o755)
	c := scriptCluster(t, dir, map[string]string{
		"Prolog":          "exit 3",
		"EpilogSlurmctld": "env > " + dir + "/ectld.tmp; mv " + dir + "/ectld.tmp " + dir + "/ectld.env",
	})
	id := c.submit(c.wrap("touch " + dir + "/ran"))
	c.eventually(10*time.Second, "job requeued", func() bool {
		j, ok := c.jobByID(id)
		return ok && j.RestartCount == 1
	})
	j := c.job(id)
	if j.State != "PENDING" || j.StateDesc != "launch failed requeued held" || j.Priority != 0 || j.Reason != "JobHeldUser" {
		t.Errorf("job: %s reason %q desc %q priority %d", j.State, j.Reason, j.StateDesc, j.Priority)
	}
	n := c.node("n1")
	if !strings.Contains(n.State, "DRAIN") || n.Reason != "Prolog error" || n.ReasonUser != "root" {
		t.Errorf("node: %s reason %q by %q", n.State, n.Reason, n.ReasonUser)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Errorf("the batch script ran")
	}
	c.eventually(5*time.Second, "EpilogSlurmctld", func() bool {
		_, err := os.Stat(filepath.Join(dir, "ectld.env"))
		return err == nil
	})
	env := readEnv(t, filepath.Join(dir, "ectld.env"))
	if env["SLURM_SCRIPT_CONTEXT"] != "epilog_slurmctld" || env["SLURM_JOB_NODELIST"] != "n1" || env["SLURM_JOB_RESTART_COUNT"] != "1" {
		t.Errorf("EpilogSlurmctld env: %v", env)
	}
}

// TestEpilogFailureDrains checks that a failed Epilog drains the node
// ("Epilog error") and leaves the job's state alone (oracle: COMPLETED).
func TestEpilogFailureDrains(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t, 0o755)
	c := scriptCluster(t, dir, map[string]string{"Epilog": "exit 4"})
	id := c.submit(c.wrap("true"))
	c.waitState(id, "COMPLETED", 10*time.Second)
	c.eventually(5*time.Second, "node drained", func() bool { return c.node("n1").Reason == "Epilog error" })
}

// TestPrologSlurmctld checks that the batch script starts only after
// PrologSlurmctld exited 0, with slurmctld's environment; a failing one
// requeues the job (not held: oracle "PD (BeginTime)", Restarts=1), or
// cancels a --no-requeue job (oracle: CANCELLED 0:0).
func TestPrologSlurmctld(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t, 0o755)
	c := scriptCluster(t, dir, map[string]string{"PrologSlurmctld": `env > ` + dir + `/pctld.$SLURM_JOB_ID
test -e ` + dir + `/fail && exit 5
sleep 0.3; echo done >> ` + dir + `/pctld.$SLURM_JOB_ID`})
	id := c.submit(c.wrap("cat " + dir + "/pctld.$SLURM_JOB_ID > out.$SLURM_JOB_ID"))
	c.waitState(id, "COMPLETED", 10*time.Second)
	out := c.readOut("out." + itoa32(id))
	if !strings.Contains(out, "done") {
		t.Errorf("the job started before PrologSlurmctld ended: it saw %q", out)
	}
	env := readEnv(t, filepath.Join(dir, "pctld."+itoa32(id)))
	if env["SLURM_SCRIPT_CONTEXT"] != "prolog_slurmctld" || env["SLURM_JOB_ID"] != itoa32(id) || env["SLURM_JOB_NODELIST"] != "n1" {
		t.Errorf("PrologSlurmctld env: %v", env)
	}

	os.WriteFile(filepath.Join(dir, "fail"), nil, 0o644)
	id = c.submit(c.wrap("true"))
	c.eventually(10*time.Second, "job requeued", func() bool {
		j, ok := c.jobByID(id)
		return ok && j.RestartCount == 1
	})
	if j := c.job(id); j.State != "PENDING" || j.Reason != "BeginTime" || j.Priority == 0 {
		t.Errorf("after a failed PrologSlurmctld: %s (%s) priority %d", j.State, j.Reason, j.Priority)
	}
	no := false
	id = c.submit(c.wrap("true", func(s *api.JobSpec) { s.Requeue = &no }))
	c.waitState(id, "CANCELLED", 10*time.Second)
}

func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}

func itoa32(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

// TestMissingCtldScriptRefused checks that the controller refuses to start
// with a PrologSlurmctld it cannot run, as slurmctld 24.11 (oracle: "error:
// Invalid PrologSlurmctld(`/tmp/x`): No such file or directory", fatal).
func TestMissingCtldScriptRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := testConf(t, dir, 1, "PrologSlurmctld="+dir+"/missing\n")
	_, err := New(context.Background(), Options{Conf: cfg, StateDir: dir, Store: openTestSQLite(t), Listen: "none"})
	want := "Invalid PrologSlurmctld(`" + dir + "/missing`): No such file or directory"
	if err == nil || err.Error() != want {
		t.Fatalf("New: %v; want %q", err, want)
	}
}

// TestPrologWait checks how long a launch waits for an agent still running
// the job's Prolog: PrologEpilogTimeout (Slurm's 65534 s when unset) plus
// the kill grace, nothing without a Prolog.
func TestPrologWait(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		extra string
		want  time.Duration
	}{
		{"", 0},
		{"Prolog=/bin/true\nPrologEpilogTimeout=30\n", 35 * time.Second},
		{"Prolog=/bin/true\n", 65539 * time.Second},
	} {
		c := &Controller{cfg: testConf(t, t.TempDir(), 1, tc.extra)}
		if got := c.prologWait(); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.extra, got, tc.want)
		}
	}
}

// TestEpilogOnEveryNode checks that a multi-node job's Epilog runs on each
// of its nodes, not only the batch host (oracle 24.11: an -N2 job without
// steps runs its Epilog on both nodes), and that the node whose Epilog
// failed, and only it, is drained.
func TestEpilogOnEveryNode(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t, 0o755)
	epilog := scriptFile(t, dir, "epilog", `env > `+dir+`/epilog.$SLURMD_NODENAME
[ "$SLURMD_NODENAME" = n2 ] && exit 1
exit 0`)
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2, extra: "Epilog=" + epilog + "\n"})
	id := c.submit(c.wrap("true", func(s *api.JobSpec) { s.MinNodes = 2 }))
	c.waitState(id, "COMPLETED", 10*time.Second)
	c.eventually(10*time.Second, "n2 drained", func() bool { return c.node("n2").Reason == "Epilog error" })
	for _, n := range []string{"n1", "n2"} {
		env := readEnv(t, filepath.Join(dir, "epilog."+n))
		if env["SLURM_SCRIPT_CONTEXT"] != "epilog_slurmd" || env["SLURM_JOB_NODELIST"] != "n[1-2]" || env["SLURM_JOB_ID"] != itoa32(id) {
			t.Errorf("%s epilog env: %v", n, env)
		}
	}
	if r := c.node("n1").Reason; r != "" {
		t.Errorf("n1 reason %q; its epilog succeeded", r)
	}
}

// TestPrologAtFirstStep checks that a node of a multi-node job other than
// its batch host runs the Prolog when the job's first step reaches it, once
// per run (oracle 24.11 without PrologFlags=Alloc), and that a failure
// there refuses the step, drains that node and requeues the job held.
func TestPrologAtFirstStep(t *testing.T) {
	t.Parallel()
	dir := sharedDir(t, 0o755)
	prolog := scriptFile(t, dir, "prolog", `echo $SLURM_SCRIPT_CONTEXT >> `+dir+`/prolog.$SLURMD_NODENAME.$SLURM_JOB_ID
[ "$SLURMD_NODENAME" = n2 ] && [ -e `+dir+`/fail ] && exit 1
exit 0`)
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2, extra: "Prolog=" + prolog + "\n"})
	step := func(id uint32) error {
		_, err := c.client.StepLaunch(c.ctx(), api.StepLaunchRequest{JobID: id, Argv: []string{"true"}, NNodes: 2})
		return err
	}
	id := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.MinNodes = 2 }))
	c.waitState(id, "RUNNING", 10*time.Second)
	if _, err := os.Stat(filepath.Join(dir, "prolog.n2."+itoa32(id))); err == nil {
		t.Errorf("n2 ran the Prolog before any step reached it")
	}
	for k := 0; k < 2; k++ {
		if err := step(id); err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
	}
	if got := readFile(t, filepath.Join(dir, "prolog.n2."+itoa32(id))); got != "prolog_slurmd\n" {
		t.Errorf("n2 ran the Prolog %q; want once", got)
	}

	os.WriteFile(filepath.Join(dir, "fail"), nil, 0o644)
	id = c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.MinNodes = 2 }))
	c.waitState(id, "RUNNING", 10*time.Second)
	if err := step(id); err == nil || !strings.Contains(err.Error(), "Prolog failed") {
		t.Fatalf("step on a node whose Prolog fails: %v", err)
	}
	c.eventually(10*time.Second, "job requeued held", func() bool {
		j, ok := c.jobByID(id)
		return ok && j.State == "PENDING" && j.StateDesc == "launch failed requeued held"
	})
	if n := c.node("n2"); n.Reason != "Prolog error" {
		t.Errorf("n2 reason %q", n.Reason)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
