package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluice-hpc/sluice/internal/api"
)

// scripts is a tiny in-memory file system for sbatch parser tests.
type scripts map[string]string

func (s scripts) load(name string) (string, error) {
	if t, ok := s[name]; ok {
		return t, nil
	}
	return "", errors.New("unable to open file " + name)
}

func intp(n int) *int      { return &n }
func u32(n uint32) *uint32 { return &n }
func boolp(b bool) *bool   { return &b }
func sbatch(t *testing.T, fs scripts, args ...string) *SbatchRequest {
	t.Helper()
	r, err := ParseSbatch(args, fs.load)
	if err != nil {
		t.Fatalf("ParseSbatch(%q): %v", args, err)
	}
	return r
}

func TestSbatchOptions(t *testing.T) {
	job := scripts{"job.sh": "#!/bin/bash\nsrun hostname\n"}
	cases := []struct {
		name string
		args []string
		want api.JobSpec
	}{
		{"short options with separate values",
			[]string{"-J", "train", "-p", "gpu,cpu", "-A", "ml", "-q", "high", "-N", "2-4", "-n", "8", "-c", "4", "-t", "1-02:00:00", "job.sh"},
			api.JobSpec{Name: "train", Partitions: []string{"gpu", "cpu"}, Account: "ml", QOS: "high", MinNodes: 2, MaxNodes: 4, NTasks: 8, CPUsPerTask: 4, TimeLimitSec: 93600}},
		{"attached short values and long = forms",
			[]string{"-N1", "-t30", "--mem=500G", "--gres=gpu:a100:2", "--ntasks-per-node=4", "--gpus-per-node=2", "job.sh"},
			api.JobSpec{Name: "job.sh", MinNodes: 1, MaxNodes: 1, TimeLimitSec: 1800, MemPerNodeMB: 512000, MemPerNodeSet: true, Gres: "gpu:a100:2", NTasksPerNode: 4, GPUsPerNode: "2"}},
		{"optional values take their default when bare",
			[]string{"--nice", "--exclusive", "--hold", "--requeue", "job.sh"},
			api.JobSpec{Name: "job.sh", Nice: intp(100), Exclusive: "node", Hold: true, Requeue: boolp(true)}},
		{"optional values given with =",
			[]string{"--nice=-5", "--exclusive=user", "--no-requeue", "job.sh"},
			api.JobSpec{Name: "job.sh", Nice: intp(-5), Exclusive: "user", Requeue: boolp(false)}},
		{"uid as a name and gid as a number",
			[]string{"--uid=user001", "--gid=100", "--mem-per-cpu=2800", "-G", "v100:2", "job.sh"},
			api.JobSpec{Name: "job.sh", User: "user001", GID: u32(100), MemPerCPUMB: 2800, GPUs: "v100:2"}},
		{"placement, dependency, array, io",
			[]string{"-C", "IB&V100", "-w", "n[01-04]", "-x", "n05", "-d", "afterok:1:2", "--kill-on-invalid-dep=YES", "-a", "0-15%4", "-b", "now+1hour",
				"-o", "out-%j.txt", "-e", "err-%j.txt", "-D", "/scratch", "--export=NONE", "-L", "matlab:2", "--reservation=maint", "--time-min=10", "job.sh"},
			api.JobSpec{Name: "job.sh", Constraint: "IB&V100", NodeList: "n[01-04]", Exclude: "n05", Dependency: "afterok:1:2", KillOnInvalidDep: "yes", Array: "0-15%4", Begin: "now+1hour",
				Output: "out-%j.txt", Error: "err-%j.txt", WorkDir: "/scratch", Export: "NONE", Licenses: "matlab:2", Reservation: "maint", TimeMinSec: 600}},
		{"--extra is stored, even empty",
			[]string{"--extra=a=1 b", "job.sh"}, api.JobSpec{Name: "job.sh", Extra: ptr("a=1 b")}},
		{"--extra given empty",
			[]string{"--extra=", "job.sh"}, api.JobSpec{Name: "job.sh", Extra: ptr("")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := sbatch(t, job, c.args...).Spec
			got.Script, got.ScriptName = "", ""
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("spec mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSbatchStopsAtScriptName(t *testing.T) {
	fs := scripts{"run.sh": "#!/bin/sh\necho\n"}
	r := sbatch(t, fs, "-n", "2", "run.sh", "-n", "5", "--mem=1G")
	if r.Spec.NTasks != 2 || r.Spec.MemPerNodeSet {
		t.Errorf("options after the script name must go to the script: ntasks=%d mem=%v", r.Spec.NTasks, r.Spec.MemPerNodeSet)
	}
	if diff := cmp.Diff([]string{"-n", "5", "--mem=1G"}, r.Spec.ScriptArgs); diff != "" {
		t.Errorf("script args (-want +got):\n%s", diff)
	}
}

func TestSbatchDirectivesAndOverride(t *testing.T) {
	fs := scripts{"job.sh": `#!/bin/bash
# a comment
#SBATCH --job-name="my job"   # trailing comment
#SBATCH -N 2 --time=02:00:00
#SBATCH --partition=debug
#SBATCHX --qos=ignored-not-a-directive

srun app
#SBATCH --account=too-late
`}
	r := sbatch(t, fs, "-t", "30", "job.sh")
	s := r.Spec
	if s.Name != "my job" || s.MinNodes != 2 || len(s.Partitions) != 1 || s.Partitions[0] != "debug" {
		t.Errorf("directives not applied: %+v", s)
	}
	if s.TimeLimitSec != 1800 {
		t.Errorf("command line --time must override the directive: got %d s, want 1800", s.TimeLimitSec)
	}
	if s.Account != "" || s.QOS != "" {
		t.Errorf("directives after the first command / malformed must be ignored: account=%q qos=%q", s.Account, s.QOS)
	}
}

func TestSbatchWrapAndErrors(t *testing.T) {
	r := sbatch(t, scripts{}, "--wrap", "hostname", "-n", "1")
	if r.Spec.Name != "wrap" || !strings.HasPrefix(r.Spec.Script, "#!/bin/sh\n") || !strings.Contains(r.Spec.Script, "hostname") {
		t.Errorf("wrap script: name=%q script=%q", r.Spec.Name, r.Spec.Script)
	}
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus", "job.sh"}, "unknown flag"},
		{[]string{"-N", "x", "job.sh"}, "invalid node count"},
		{[]string{"-t", "1:2:3:4", "job.sh"}, "Invalid --time specification"},
		{[]string{"--mem=lots", "job.sh"}, "invalid --mem specification"},
		{[]string{"--exclusive=maybe", "job.sh"}, "invalid exclusive option"},
		{[]string{"--kill-on-invalid-dep=maybe", "job.sh"}, "Invalid --kill-on-invalid-dep specification"},
		{[]string{"nosuch.sh"}, "unable to open file"},
		// Issue 17: Slurm 24.11's refusals (oracle), exit 255 before submitting.
		{[]string{"--signal=SIGFOO@-5", "job.sh"}, "Invalid --signal specification"},
		{[]string{"--signal=USR1@-5", "job.sh"}, "Invalid --signal specification"},
		{[]string{"--signal=USR1@70000", "job.sh"}, "Invalid --signal specification"},
		{[]string{"--signal=0", "job.sh"}, "Invalid --signal specification"},
		{[]string{"--begin=garbage", "job.sh"}, "Invalid time specification (pos=0): garbage\nInvalid --begin specification"},
		{[]string{"--begin=now+garbage", "job.sh"}, "(pos=3): now+garbage"},
		{[]string{"--begin=16:00x", "job.sh"}, "(pos=5): 16:00x"},
		{[]string{"--begin=2026-13-01", "job.sh"}, "(pos=5): 2026-13-01"},
		{[]string{"--begin=tomorrowx", "job.sh"}, "(pos=8): tomorrowx"},
		{[]string{"plain.txt"}, "does not look like a batch script"},
	}
	fs := scripts{"job.sh": "#!/bin/sh\n", "plain.txt": "echo hi\n"}
	// Accepted by Slurm 24.11 (oracle): a signal spec with R:/B:, a number
	// above 64, an empty time.
	for _, sig := range []string{"R:USR1@10", "B:65", "USR1@", "SIGUSR2@60"} {
		if _, err := ParseSbatch([]string{"--signal=" + sig, "job.sh"}, fs.load); err != nil {
			t.Errorf("--signal=%s: %v, want it accepted", sig, err)
		}
	}
	for _, b := range bad {
		if _, err := ParseSbatch(b.args, fs.load); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ParseSbatch(%q) error = %v, want it to mention %q", b.args, err, b.want)
		}
	}
}

func TestParseTimeLimit(t *testing.T) {
	for in, want := range map[string]int64{
		"30": 1800, "5:30": 330, "1:00:00": 3600, "2-0": 172800, "1-12": 129600,
		"1-2:30": 95400, "3-00:00:00": 259200, "UNLIMITED": api.TimeInfinite, "infinite": api.TimeInfinite,
		"0-0:0:1": 1,
	} {
		if got, err := ParseTimeLimit(in); err != nil || got != want {
			t.Errorf("ParseTimeLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "a", "1:2:3:4", "-1-2", "1-a"} {
		if _, err := ParseTimeLimit(in); err == nil {
			t.Errorf("ParseTimeLimit(%q) accepted", in)
		}
	}
}

func TestParseMemMB(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "187000M": 187000, "500G": 512000, "1T": 1048576, "1536K": 2, "0": 0} {
		if got, err := ParseMemMB(in); err != nil || got != want {
			t.Errorf("ParseMemMB(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func FuzzParseSbatch(f *testing.F) {
	f.Add("-N 2 -t 1:00:00 --mem=4G job.sh", "#!/bin/sh\n#SBATCH -n 4 --qos='x y'\n")
	f.Add("--nice --exclusive=user job.sh a b", "#!/bin/sh\n#SBATCH \"unterminated\n")
	f.Fuzz(func(t *testing.T, cmdline, script string) {
		fs := scripts{"job.sh": script}
		_, _ = ParseSbatch(strings.Fields(cmdline), fs.load)
		_, _ = SbatchDirectives(script)
	})
}

// environ is a fake environment for sbatch's input variables.
type environ map[string]string

func (e environ) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

func TestSbatchInputEnvironment(t *testing.T) {
	job := scripts{
		"job.sh": "#!/bin/sh\nhostname\n",
		"dir.sh": "#!/bin/sh\n#SBATCH -p fromscript -A scriptacct -t 10 --requeue\n#SBATCH --exclusive=user\nhostname\n",
	}
	cases := []struct {
		name string
		env  environ
		args []string
		want api.JobSpec
	}{
		{"value variables set the options",
			environ{"SBATCH_ACCOUNT": "ml", "SBATCH_PARTITION": "gpu,cpu", "SBATCH_QOS": "high", "SBATCH_TIMELIMIT": "1-0",
				"SBATCH_JOB_NAME": "train", "SBATCH_GRES": "gpu:2", "SBATCH_GPUS": "4", "SBATCH_GPUS_PER_NODE": "2",
				"SBATCH_MEM_PER_NODE": "4G", "SBATCH_OUTPUT": "o-%j", "SBATCH_ERROR": "e-%j", "SBATCH_EXPORT": "NONE",
				"SBATCH_ARRAY_INX": "1-3", "SBATCH_CONSTRAINT": "a100", "SBATCH_RESERVATION": "maint", "SBATCH_WCKEY": "w"},
			[]string{"job.sh"},
			api.JobSpec{Name: "train", Account: "ml", Partitions: []string{"gpu", "cpu"}, QOS: "high", TimeLimitSec: 86400,
				Gres: "gpu:2", GPUs: "4", GPUsPerNode: "2", MemPerNodeMB: 4096, MemPerNodeSet: true, Output: "o-%j",
				Error: "e-%j", Export: "NONE", Array: "1-3", Constraint: "a100", Reservation: "maint", WCKey: "w"}},
		{"command line overrides the environment",
			environ{"SBATCH_ACCOUNT": "envacct", "SBATCH_PARTITION": "envpart", "SBATCH_TIMELIMIT": "5"},
			[]string{"-A", "cliacct", "-t", "30", "job.sh"},
			api.JobSpec{Name: "job.sh", Account: "cliacct", Partitions: []string{"envpart"}, TimeLimitSec: 1800}},
		{"environment overrides #SBATCH directives",
			environ{"SBATCH_PARTITION": "envpart", "SBATCH_NO_REQUEUE": "", "SBATCH_EXCLUSIVE": ""},
			[]string{"dir.sh"},
			api.JobSpec{Name: "dir.sh", Partitions: []string{"envpart"}, Account: "scriptacct", TimeLimitSec: 600,
				Requeue: boolp(false), Exclusive: "node"}},
		{"all three layers: command line > environment > directive",
			environ{"SBATCH_ACCOUNT": "envacct", "SBATCH_TIMELIMIT": "20"},
			[]string{"-t", "40", "dir.sh"},
			api.JobSpec{Name: "dir.sh", Partitions: []string{"fromscript"}, Account: "envacct", TimeLimitSec: 2400,
				Requeue: boolp(true), Exclusive: "user"}},
		{"flag variables: empty, yes and non-zero numbers enable",
			environ{"SBATCH_REQUEUE": "yes", "SBATCH_EXCLUSIVE": "user"},
			[]string{"job.sh"},
			api.JobSpec{Name: "job.sh", Requeue: boolp(true), Exclusive: "user"}},
		{"flag variables: other values leave the option unset",
			environ{"SBATCH_REQUEUE": "no", "SBATCH_NO_REQUEUE": "0"},
			[]string{"job.sh"},
			api.JobSpec{Name: "job.sh"}},
		{"empty value variables set nothing",
			environ{"SBATCH_ACCOUNT": "", "SBATCH_JOB_NAME": ""},
			[]string{"job.sh"},
			api.JobSpec{Name: "job.sh"}},
		{"SBATCH_JOB_NAME names a --wrap job",
			environ{"SBATCH_JOB_NAME": "named"},
			[]string{"--wrap", "true"},
			api.JobSpec{Name: "named", Wrap: "true"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseSbatchEnv(c.args, c.env.lookup, job.load)
			if err != nil {
				t.Fatalf("ParseSbatchEnv: %v", err)
			}
			got := r.Spec
			got.Script, got.ScriptName = "", ""
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("spec mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSbatchInputEnvironmentClientOptions(t *testing.T) {
	cases := []struct {
		name     string
		env      environ
		args     []string
		wait     bool
		verbose  int
		clusters string
	}{
		{"SBATCH_WAIT=1 waits", environ{"SBATCH_WAIT": "1"}, nil, true, 0, ""},
		{"SBATCH_DEBUG=1 is -v, 0 is not", environ{"SBATCH_DEBUG": "1"}, []string{"-v"}, false, 2, ""},
		{"SBATCH_DEBUG=0", environ{"SBATCH_DEBUG": "0"}, nil, false, 0, ""},
		{"SBATCH_CLUSTERS before SLURM_CLUSTERS", environ{"SBATCH_CLUSTERS": "a", "SLURM_CLUSTERS": "b"}, nil, false, 0, "a"},
		{"SLURM_CLUSTERS alone", environ{"SLURM_CLUSTERS": "b"}, nil, false, 0, "b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := ParseSbatchEnv(append(c.args, "--wrap", "true"), c.env.lookup, scripts{}.load)
			if err != nil {
				t.Fatal(err)
			}
			if r.Wait != c.wait || r.Verbose != c.verbose || r.Clusters != c.clusters {
				t.Errorf("wait=%v verbose=%d clusters=%q; want %v %d %q", r.Wait, r.Verbose, r.Clusters, c.wait, c.verbose, c.clusters)
			}
		})
	}
}

func TestSbatchInputEnvironmentErrors(t *testing.T) {
	for _, c := range []struct {
		env       environ
		variable  string
		complaint string
	}{
		{environ{"SBATCH_TIMELIMIT": "1:2:3:4"}, "SBATCH_TIMELIMIT: ", "Invalid --time specification"},
		{environ{"SBATCH_MEM_PER_NODE": "lots"}, "SBATCH_MEM_PER_NODE: ", "invalid --mem specification"},
		{environ{"SBATCH_EXCLUSIVE": "maybe"}, "SBATCH_EXCLUSIVE: ", "invalid exclusive option"},
	} {
		_, err := ParseSbatchEnv([]string{"--wrap", "true"}, c.env.lookup, scripts{}.load)
		if err == nil || !strings.HasPrefix(err.Error(), c.variable) || !strings.Contains(err.Error(), c.complaint) {
			t.Errorf("env %v: error %v, want %q naming the variable and %q", c.env, err, c.variable, c.complaint)
		}
	}
	// Every listed variable maps to an option the parser knows.
	for _, o := range sbatchEnvOptions {
		if newSbatchFlagSet(&SbatchRequest{}).Lookup(o.Long) == nil {
			t.Errorf("%s maps to unknown option --%s", o.Vars[0], o.Long)
		}
	}
}
