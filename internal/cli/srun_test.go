package cli

import (
	"bytes"
	"os"
	"path/filepath"
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

// TestParseSrunStepOptions: srun's step options with the values and the
// words Slurm 24.11's srun has for them (checked on the oracle).
func TestParseSrunStepOptions(t *testing.T) {
	cases := []struct {
		args            []string
		bindEnv         string // SLURM_CPU_BIND
		dist            string
		plane           int
		kill, exact, mp bool
		mpi, command    string
		err             string
	}{
		{args: []string{"-n1", "--cpu-bind=q", "true"}, command: "true"},
		{args: []string{"--cpu-bind=none", "true"}, bindEnv: "quiet,none", command: "true"},
		{args: []string{"--cpu-bind", "verbose,map_cpu:0,1", "true"}, bindEnv: "verbose,map_cpu:0,1", command: "true"},
		{args: []string{"--cpu-bind=mask_cpu:0x1,0x2", "true"}, bindEnv: "quiet,mask_cpu:1,2", command: "true"},
		{args: []string{"--cpu-bind=none,cores", "true"}, bindEnv: "quiet,cores,none", command: "true"},
		{args: []string{"--cpu-bind=v", "true"}, bindEnv: "verbose", command: "true"},
		{args: []string{"--cpu-bind=bogus", "true"}, err: "srun: error: unrecognized --cpu-bind argument \"bogus\"\nsrun: fatal: Failed to parse --cpu-bind= values."},
		{args: []string{"-m", "cyclic", "true"}, dist: "cyclic", command: "true"},
		{args: []string{"--distribution=plane=2", "true"}, dist: "plane", plane: 2, command: "true"},
		{args: []string{"-mblock:cyclic,Pack", "true"}, dist: "block:cyclic,pack", command: "true"},
		{args: []string{"-m", "bogus", "true"}, err: "srun: error: Invalid --distribution specification"},
		{args: []string{"-m", "arbitrary", "-n2", "true"}, err: "srun: error: You asked for 2 tasks but hostlist specified 0 nodes"},
		{args: []string{"-K", "-n2", "true"}, kill: true, command: "true"},
		{args: []string{"--kill-on-bad-exit=0", "true"}, command: "true"},
		{args: []string{"-K1", "--exact", "--overlap", "true"}, kill: true, exact: true, command: "true"},
		{args: []string{"--multi-prog", "-n4", "mp.conf", "x"}, mp: true, command: "mp.conf x"},
		{args: []string{"--mpi=none", "true"}, mpi: "none", command: "true"},
		{args: []string{"--mpi", "list"}, mpi: "list"},
		{args: []string{"--het-group=0", "true"}, err: "srun: error: No directives to start application on any available hetjob components"},
		{args: []string{"--het-group=1", "true"}, err: "srun: error: Requested het-group offset exceeds highest hetjob index (1 > 0)"},
	}
	for _, c := range cases {
		o, err := parseSrun(c.args)
		if c.err != "" || err != nil {
			if err == nil || err.Error() != c.err {
				t.Errorf("%v: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if got := o.cpuBind.Env()["SLURM_CPU_BIND"]; got != c.bindEnv {
			t.Errorf("%v: SLURM_CPU_BIND %q, want %q", c.args, got, c.bindEnv)
		}
		if o.distribution != c.dist || o.planeSize != c.plane || o.killBadExit != c.kill || o.exact != c.exact ||
			o.multiProg != c.mp || o.mpi != c.mpi || strings.Join(o.command, " ") != c.command {
			t.Errorf("%v: dist %q plane %d kill %v exact %v multi-prog %v mpi %q command %q", c.args, o.distribution,
				o.planeSize, o.killBadExit, o.exact, o.multiProg, o.mpi, o.command)
		}
	}
}

// TestReadMultiProg: --multi-prog's file as srun reads it (comments in
// column one, ranks, ranges, "*", single quotes, %t and %o, the command
// line's extra words) and its check against the step's task count.
func TestReadMultiProg(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "mp.conf"), []byte("# comment\n0 echo zero %t %o\n1-2 echo 'a  b' %t %o\n* echo rest %t\n"), 0o644)
	m, err := readMultiProg(dir, "mp.conf", []string{"extra"})
	if err != nil {
		t.Fatal(err)
	}
	for task, want := range map[int]string{0: "echo|zero|0|0|extra", 2: "echo|a  b|2|1|extra", 3: "echo|rest|3|extra"} {
		if a, _ := m.Argv(task); strings.Join(a, "|") != want {
			t.Errorf("task %d: %q, want %q", task, a, want)
		}
	}
	if errs := m.Check(1); strings.Join(errs, "\n") != "Invalid task id, 2 >= ntasks\nLine 3 of configuration file mp.conf invalid" {
		t.Errorf("check 1 task: %q", errs)
	}
	os.WriteFile(filepath.Join(dir, "only0.conf"), []byte("0 echo only zero\n"), 0o644)
	m, _ = readMultiProg(dir, "only0.conf", nil)
	if errs := m.Check(1); errs != nil {
		t.Errorf("check: %q", errs)
	}
	if errs := m.Check(0 + 1 + 1); strings.Join(errs, "") != "Configuration file only0.conf invalid, no record for task id 1" {
		t.Errorf("check 2 tasks: %q", errs)
	}
	if _, err := readMultiProg(dir, "nonexist.conf", nil); err == nil || err.Error() != "srun: error: Could not open multi_prog config file nonexist.conf" {
		t.Errorf("missing file: %v", err)
	}
}

// TestSallocEnv: the variables salloc gives its command are Slurm 24.11's
// (compared on the oracle with `salloc -N2 env`): CPUs and tasks per node
// compressed, the cluster and submit host, SLURM_NTASKS only under -n.
func TestSallocEnv(t *testing.T) {
	env := &Env{Cwd: "/home/alice", Getenv: func(string) string { return "" }}
	j := &api.JobInfo{JobID: 6, Name: "interactive", NodeList: "n[1-2]", NumNodes: 2, NumCPUs: 2, CPUsPerNode: "1(x2)",
		Partition: "main", Account: "research", QOS: "normal"}
	got := strings.Join(sallocEnv(env, j, "oracle", 0), " ")
	for _, want := range []string{"SLURM_JOB_CPUS_PER_NODE=1(x2)", "SLURM_TASKS_PER_NODE=1(x2)", "SLURM_CLUSTER_NAME=oracle",
		"SLURM_JOB_NAME=interactive", "SLURM_SUBMIT_DIR=/home/alice", "SLURM_SUBMIT_HOST="} {
		if !strings.Contains(got, want) {
			t.Errorf("salloc env lacks %s: %s", want, got)
		}
	}
	if strings.Contains(got, "SLURM_NTASKS") {
		t.Errorf("salloc without -n sets SLURM_NTASKS: %s", got)
	}
	got = strings.Join(sallocEnv(env, j, "oracle", 3), " ")
	if !strings.Contains(got, "SLURM_NTASKS=3") || !strings.Contains(got, "SLURM_TASKS_PER_NODE=2,1") {
		t.Errorf("salloc -n3 env: %s", got)
	}
}

// TestSrunConfDefaults: -K defaults to slurm.conf's KillOnBadExit (the
// environment's SLURM_KILL_BAD_EXIT first) and --mpi to MpiDefault (the
// environment's SLURM_MPI_TYPE first), as srun chooses them.
func TestSrunConfDefaults(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "slurm.conf")
	text := GenerateConf(GenConf{State: dir, Nodes: 1, CPUs: 1, MemoryMB: 1000, Port: 7000, User: "root"})
	os.WriteFile(path, []byte(text+"KillOnBadExit=1\nMpiDefault=pmi2\n"), 0o644)
	vars := map[string]string{"SLURM_CONF": path}
	env := &Env{Getenv: func(k string) string { return vars[k] }}
	if !confKillOnBadExit(env) || srunMPIType(env, "") != "pmi2" || srunMPIType(env, "none") != "none" {
		t.Errorf("from slurm.conf: kill %v, mpi %q", confKillOnBadExit(env), srunMPIType(env, ""))
	}
	vars["SLURM_KILL_BAD_EXIT"], vars["SLURM_MPI_TYPE"] = "0", "none"
	if confKillOnBadExit(env) || srunMPIType(env, "") != "none" {
		t.Errorf("from the environment: kill %v, mpi %q", confKillOnBadExit(env), srunMPIType(env, ""))
	}
}
