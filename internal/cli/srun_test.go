package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestParseSrun: srun's own options (-l, -u, -i/--input, --jobid, --pty)
// are taken before sbatch's, and the command starts at the first word
// that is not an option or an option's value.
func TestParseSrun(t *testing.T) {
	cases := []struct {
		args    []string
		label   bool
		input   string
		job     string
		ntasks  int
		command string
	}{
		{[]string{"-n", "2", "-l", "hostname"}, true, "", "", 2, "hostname"},
		{[]string{"--input=none", "-N1", "cat", "-n"}, false, "none", "", 0, "cat -n"},
		{[]string{"-i", "0", "--jobid", "12", "sh", "-c", "read x"}, false, "0", "12", 0, "sh -c read x"},
		{[]string{"-iall", "--ntasks=3", "--", "-weird"}, false, "all", "", 3, "-weird"},
	}
	for _, c := range cases {
		o, err := parseSrun(c.args)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if o.label != c.label || o.input != c.input || o.jobID != c.job || o.req.Spec.NTasks != c.ntasks || strings.Join(o.command, " ") != c.command {
			t.Errorf("%v: label %v input %q job %q ntasks %d command %q", c.args, o.label, o.input, o.jobID, o.req.Spec.NTasks, o.command)
		}
	}
}

// TestSrunOutput: -l prefixes every whole line with the task id padded to
// the widest id, partial lines wait for their end (or the task's), and a
// node's own messages (task -1) pass unlabelled.
func TestSrunOutput(t *testing.T) {
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb}
	s := newSrunSession(env, &srunOpts{label: true}, api.StepLaunchResponse{NTasks: 12})
	s.output(3, false, []byte("a\nb"))
	s.output(11, false, []byte("x\n"))
	s.output(3, false, []byte("c\n"))
	s.output(-1, true, []byte("slurmstepd: error: *** STEP 1.0 ON n1 CANCELLED AT now ***\n"))
	s.output(4, true, []byte("tail without newline"))
	s.flushPartial()
	if want := " 3: a\n11: x\n 3: bc\n"; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if want := "slurmstepd: error: *** STEP 1.0 ON n1 CANCELLED AT now ***\n 4: tail without newline"; errb.String() != want {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
}

// TestSrunReport: srun's exit status is the highest of its tasks' (128 +
// signal for a killed task) and failed tasks are reported per node in
// ranges, as srun does.
func TestSrunReport(t *testing.T) {
	var errb bytes.Buffer
	s := newSrunSession(&Env{Stderr: &errb}, &srunOpts{}, api.StepLaunchResponse{NTasks: 5})
	s.conns = []*srunConn{{node: api.StepNodeIO{Node: "n1", Tasks: []int{0, 1, 2}}}, {node: api.StepNodeIO{Node: "n2", Tasks: []int{3, 4}}}}
	s.exits = map[int]string{0: "3:0", 1: "3:0", 2: "0:0", 3: "0:9", 4: "1:0"}
	if rc := s.report(); rc != 137 {
		t.Errorf("exit status %d, want 137", rc)
	}
	want := "srun: error: n1: tasks 0-1: Exited with exit code 3\nsrun: error: n2: task 3: Killed\nsrun: error: n2: task 4: Exited with exit code 1\n"
	if errb.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", errb.String(), want)
	}
}

// TestSrunFewerTasksWarning: a step of fewer tasks than the allocation's
// nodes, without -N, gets srun's warning (oracle, in a -N2 batch job:
// `srun -n1 ...` prints "srun: warning: can't run 1 processes on 2 nodes,
// setting nnodes to 1"); with -N, or as many tasks as nodes, none.
func TestSrunFewerTasksWarning(t *testing.T) {
	cases := []struct {
		spec api.JobSpec
		want string
	}{
		{api.JobSpec{NTasks: 1}, "srun: warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"},
		{api.JobSpec{NTasks: 1, MinNodes: 1}, ""},
		{api.JobSpec{NTasks: 2}, ""},
		{api.JobSpec{}, ""},
	}
	for _, c := range cases {
		env, _, errb := testEnv()
		env.Getenv = func(k string) string {
			if k == "SLURM_NNODES" {
				return "2"
			}
			return ""
		}
		srunFewerTasks(env, &c.spec)
		if errb.String() != c.want {
			t.Errorf("%+v: %q, want %q", c.spec, errb, c.want)
		}
	}
}
