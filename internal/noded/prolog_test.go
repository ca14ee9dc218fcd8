package noded

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// script writes an executable shell script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// envLines parses an `env` dump into a map.
func envLines(s string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m
}

// waitStatus polls the job until cond holds.
func waitStatus(t *testing.T, a *Agent, id uint32, within time.Duration, cond func(api.JobStatus) bool) api.JobStatus {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st, err := a.Job(id)
		if err == nil && cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d: condition not reached in %v (last %+v, %v)", id, within, st, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPrologEpilogEnvironment checks that Prolog and Epilog run around the
// batch script with the environment slurmd 24.11 gives them (oracle: env
// dumped by the scripts): the job's identity and allocation, the script
// context, no PATH; the Epilog also gets the job's exit code.
func TestPrologEpilogEnvironment(t *testing.T) {
	a := newAgent(t, withoutCgroups())
	dir := t.TempDir()
	req := batch(t, 11, "echo ran > "+filepath.Join(dir, "ran")+"; exit 3")
	req.Scripts = &api.NodeScripts{
		Prolog: script(t, dir, "prolog", "env > "+dir+"/prolog.env; test -e "+dir+"/ran && echo early >> "+dir+"/prolog.env; exit 0"),
		Epilog: script(t, dir, "epilog", "env > "+dir+"/epilog.tmp; mv "+dir+"/epilog.tmp "+dir+"/epilog.env"),
	}
	launch(t, a, req)
	epi := envLines(waitFile(t, filepath.Join(dir, "epilog.env"), "SLURM_SCRIPT_CONTEXT", 10*time.Second))
	pro := envLines(readFile(t, filepath.Join(dir, "prolog.env")))
	if _, early := pro["early"]; early {
		t.Errorf("the prolog ran after the batch script")
	}
	want := map[string]string{
		"SLURM_SCRIPT_CONTEXT": "prolog_slurmd", "SLURM_JOB_ID": "11", "SLURM_JOBID": "11",
		"SLURM_JOB_USER": req.User, "SLURMD_NODENAME": "node01", "SLURM_JOB_NODELIST": "node01",
		"SLURM_JOB_PARTITION": "batch", "SLURM_JOB_ACCOUNT": "research", "SLURM_JOB_NUM_NODES": "1",
	}
	for k, v := range want {
		if pro[k] != v {
			t.Errorf("prolog %s = %q, want %q", k, pro[k], v)
		}
	}
	if p, ok := pro["PATH"]; ok {
		t.Errorf("prolog has PATH=%q; slurmd gives none", p)
	}
	if epi["SLURM_SCRIPT_CONTEXT"] != "epilog_slurmd" || epi["SLURM_JOB_EXIT_CODE2"] != "3:0" || epi["SLURM_JOB_EXIT_CODE"] != "768" {
		t.Errorf("epilog env: context %q exit2 %q exit %q", epi["SLURM_SCRIPT_CONTEXT"], epi["SLURM_JOB_EXIT_CODE2"], epi["SLURM_JOB_EXIT_CODE"])
	}
	if !strings.HasSuffix(epi["SLURM_JOB_STDOUT"], "slurm-11.out") {
		t.Errorf("epilog SLURM_JOB_STDOUT = %q", epi["SLURM_JOB_STDOUT"])
	}
}

// TestTaskPrologOutput checks slurmstepd's handling of a TaskProlog's
// output (oracle 24.11): "export NAME=value" and "unset NAME" change the
// task's environment, "print TEXT" goes to the task's stdout, other lines
// are ignored; the TaskEpilog sees the changed environment.
func TestTaskPrologOutput(t *testing.T) {
	a := newAgent(t, withoutCgroups())
	dir := t.TempDir()
	req := batch(t, 12, `echo "FOO=$FOO HOME=${HOME-unset}"`)
	req.Scripts = &api.NodeScripts{
		TaskProlog: script(t, dir, "tp", `echo "export FOO=bar baz"; echo "print hello from taskprolog"; echo "unset HOME"; echo garbage`),
		TaskEpilog: script(t, dir, "te", "env > "+dir+"/te.tmp; mv "+dir+"/te.tmp "+dir+"/te.env"),
	}
	launch(t, a, req)
	te := envLines(waitFile(t, filepath.Join(dir, "te.env"), "SLURM_SCRIPT_CONTEXT", 10*time.Second))
	out := readFile(t, filepath.Join(req.SubmitDir, "slurm-12.out"))
	if out != "hello from taskprolog\nFOO=bar baz HOME=unset\n" {
		t.Errorf("job output %q", out)
	}
	if te["SLURM_SCRIPT_CONTEXT"] != "epilog_task" || te["FOO"] != "bar baz" {
		t.Errorf("task epilog env: context %q FOO %q", te["SLURM_SCRIPT_CONTEXT"], te["FOO"])
	}
	if _, ok := te["HOME"]; ok {
		t.Errorf("task epilog still has HOME")
	}
}

// TestPrologFailure checks that a failing or timed-out Prolog keeps the
// batch script from running, ends the run with the failure marked for the
// controller (which drains the node and requeues the job), and that the
// Epilog still runs, as slurmd does.
func TestPrologFailure(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		timeout    int64
	}{
		{"exit status", "exit 3", 0},
		{"timeout", "sleep 30", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t, withoutCgroups())
			dir := t.TempDir()
			req := batch(t, 13, "touch "+dir+"/ran")
			req.Scripts = &api.NodeScripts{Prolog: script(t, dir, "prolog", tc.body),
				Epilog: script(t, dir, "epilog", "touch "+dir+"/epilog"), TimeoutSec: tc.timeout}
			began := time.Now()
			launch(t, a, req)
			st := waitFinal(t, a, 13, 10*time.Second)
			if st.ScriptFailure != "prolog" || st.State != api.StateFailed {
				t.Errorf("status %s, script failure %q; want FAILED, prolog", st.State, st.ScriptFailure)
			}
			waitFile(t, filepath.Join(dir, "epilog"), "", 5*time.Second)
			if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
				t.Errorf("the batch script ran after a failed prolog")
			}
			if d := time.Since(began); d > 8*time.Second {
				t.Errorf("prolog not killed at its timeout (%v)", d)
			}
		})
	}
}

// TestEpilogFailure checks that a failed Epilog is reported with the job's
// end (the controller drains the node, the job keeps its state), and that
// the end is held back from the controller until the Epilog ran.
func TestEpilogFailure(t *testing.T) {
	a := newAgent(t, withoutCgroups())
	dir := t.TempDir()
	req := batch(t, 14, "true")
	req.Scripts = &api.NodeScripts{Epilog: script(t, dir, "epilog", "sleep 0.5; exit 1")}
	launch(t, a, req)
	waitFinal(t, a, 14, 5*time.Second)
	if js := a.Jobs(); len(js) != 1 || js[0].State != api.StateRunning {
		t.Errorf("while the epilog runs the controller is told %+v; want the job still RUNNING", js)
	}
	st := waitStatus(t, a, 14, 5*time.Second, func(s api.JobStatus) bool { return s.ScriptFailure != "" })
	if st.ScriptFailure != "epilog" || st.State != api.StateCompleted {
		t.Errorf("status %s, script failure %q; want COMPLETED, epilog", st.State, st.ScriptFailure)
	}
}
