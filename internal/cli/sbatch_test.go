package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/ctld"
)

// testEnv returns an Env with buffers, run as root in a temp directory.
func testEnv() (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" },
		Cwd: os.TempDir()}, &out, &errb
}

// ctlHarness is an in-process controller without agents (jobs stay
// pending or are planned): enough for the commands' messages and exit
// codes. Commands reach it through SLUICE_SOCKET.
type ctlHarness struct {
	t    *testing.T
	sock string
	dir  string
}

// qosDemo is the accounting of the S3-style limit tests: QOS "limited"
// allows one submitted job per user and denies beyond its limits.
const qosDemo = `add qos limited MaxSubmitJobsPerUser=1 Flags=DenyOnLimit
add account research
add user alice account=research
modify user alice set qos=normal,limited
add user root account=research
modify user root set qos=normal,limited`

func newCtlHarness(t *testing.T, sacctmgr string) *ctlHarness {
	t.Helper()
	dir := t.TempDir()
	text := fmt.Sprintf(`ClusterName=clitest
SlurmctldHost=localhost
StateSaveLocation=%s
SelectTypeParameters=CR_CPU
AccountingStorageEnforce=associations,limits,qos
NodeName=c[1-2] CPUs=4 RealMemory=4000 State=IDLE
PartitionName=debug Nodes=c[1-2] Default=YES MaxTime=1:00:00 State=UP
PartitionName=long Nodes=c[1-2] MaxTime=INFINITE State=UP
`, dir)
	cfg, _, err := conf.Parse(filepath.Join(dir, "slurm.conf"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	store := acct.NewMemStore()
	ctx := context.Background()
	env := acct.RunEnv{ExecEnv: acct.ExecEnv{Actor: acct.Actor{Name: "root"}, DefaultCluster: "clitest", ReadFile: os.ReadFile}}
	if _, _, err := acct.Run(ctx, store, []string{"-i", "add", "cluster", "clitest"}, env); err != nil {
		t.Fatalf("sacctmgr add cluster: %v", err)
	}
	for _, line := range strings.Split(sacctmgr, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if _, _, err := acct.Run(ctx, store, append([]string{"-i"}, strings.Fields(line)...), env); err != nil {
			t.Fatalf("sacctmgr %s: %v", line, err)
		}
	}
	sd, _ := os.MkdirTemp("", "clictl")
	t.Cleanup(func() { os.RemoveAll(sd) })
	sock := filepath.Join(sd, "s.sock")
	c, err := ctld.New(ctx, ctld.Options{Conf: cfg, StateDir: dir, Accounting: store, Socket: sock, Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// Register the nodes (agents that cannot be reached: jobs that start
	// fail to launch, which these tests do not look at).
	for _, n := range cfg.Nodes {
		// Each joins the cluster's TLS with the cluster key, as agents do.
		key, _ := api.NewAgentKey()
		caPEM, certPEM, err := api.Enroll(ctx, c.URL(), c.ClusterKey(), n.Name, key, nil)
		if err != nil {
			t.Fatalf("enroll %s: %v", n.Name, err)
		}
		id, err := api.NewAgentTLS(caPEM, certPEM, key)
		if err != nil {
			t.Fatal(err)
		}
		cc := api.NewControllerClient("https://"+strings.TrimPrefix(c.URL(), "http://"), c.ClusterKey(), n.Name,
			id.HTTPClient(api.ControllerCertName, 10*time.Second))
		if _, err := cc.Register(ctx, api.RegisterRequest{Node: api.NodeInfo{Name: n.Name, Addr: "http://127.0.0.1:1",
			Resources: api.NodeResources{CPUs: n.CPUs, RealMemoryMB: n.RealMemory}}}); err != nil {
			t.Fatalf("register %s: %v", n.Name, err)
		}
	}
	return &ctlHarness{t: t, sock: sock, dir: dir}
}

// run runs a command against the harness as root and returns exit code,
// stdout and stderr.
func (h *ctlHarness) run(run func(context.Context, *Env, []string) int, args ...string) (int, string, string) {
	env, out, errb := testEnv()
	env.Cwd = h.dir
	env.Getenv = func(k string) string {
		if k == "SLUICE_SOCKET" {
			return h.sock
		}
		return ""
	}
	code := run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func TestSbatchMessages(t *testing.T) {
	h := newCtlHarness(t, qosDemo)
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"submitted", []string{"--wrap", "true"}, 0, "Submitted batch job 1\n", ""},
		{"parsable", []string{"--parsable", "-J", "p", "--wrap", "true"}, 0, "2\n", ""},
		{"held", []string{"-H", "--wrap", "true"}, 0, "Submitted batch job 3\n", ""},
		{"bad-partition", []string{"-p", "nope", "--wrap", "true"}, 1, "",
			"sbatch: error: invalid partition specified: nope\nsbatch: error: Batch job submission failed: Invalid partition name specified\n"},
		{"bad-qos", []string{"-q", "nope", "--wrap", "true"}, 1, "",
			"sbatch: error: Batch job submission failed: Invalid qos specification\n"},
		// Slurm 24.11: a request no node can satisfy uses up a job id
		// (4, 5, 6 here: the job is kept FAILED), and so does a bad
		// dependency (7); the other rejections use none.
		{"too-big", []string{"-n", "64", "--wrap", "true"}, 1, "",
			"sbatch: error: Batch job submission failed: Requested node configuration is not available\n"},
		{"too-many-cpus-per-node", []string{"-c", "5", "--wrap", "true"}, 1, "",
			"sbatch: error: CPU count per node can not be satisfied\nsbatch: error: Batch job submission failed: Requested node configuration is not available\n"},
		{"too-much-memory", []string{"--mem", "5000", "--wrap", "true"}, 1, "",
			"sbatch: error: Memory specification can not be satisfied\nsbatch: error: Batch job submission failed: Requested node configuration is not available\n"},
		{"bad-feature", []string{"-C", "nofeat", "--wrap", "true"}, 1, "",
			"sbatch: error: Batch job submission failed: Invalid feature specification\n"},
		{"gres-not-in-grestypes", []string{"--gres", "foo:1", "--wrap", "true"}, 1, "",
			"sbatch: error: Invalid generic resource (gres) specification\n"},
		{"gpus-below-nodes", []string{"--gpus", "1", "-N", "2", "--wrap", "true"}, 1, "",
			"sbatch: error: Failed to validate job spec, --gpus < -N\nsbatch: error: Invalid generic resource (gres) specification\n"},
		{"bad-array", []string{"--array", "5-1", "--wrap", "true"}, 1, "",
			"sbatch: error: Batch job submission failed: Invalid job array specification\n"},
		{"bad-dependency", []string{"-d", "afterok:999", "--wrap", "true"}, 1, "",
			"sbatch: error: Batch job submission failed: Job dependency problem\n"},
		{"limit-first-ok", []string{"-q", "limited", "--wrap", "true"}, 0, "Submitted batch job 8\n", ""},
		{"limit-reason-line", []string{"-q", "limited", "--wrap", "true"}, 1, "",
			"sbatch: error: QOSMaxSubmitJobPerUserLimit\nsbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)\n"},
		{"no-script", []string{"-J", "x"}, 1, "", "sbatch: error: script is not specified and stdin is a terminal\n"},
		// Oracle: `sbatch </dev/null` and a script of blanks.
		{"empty-stdin", []string{"-J", "x"}, 1, "", "sbatch: error: Batch script is empty!\n"},
		// Oracle: -N 0 is refused by slurmctld once it has an id (the
		// next job gets the one after).
		{"zero-nodes", []string{"-N", "0", "--wrap", "true"}, 1, "",
			"sbatch: error: Batch job submission failed: Node count specification invalid\n"},
		{"after-zero-nodes", []string{"-H", "--wrap", "true"}, 0, "Submitted batch job 10\n", ""},
		// Issue 17 (finding 10), each as Slurm 24.11 answers it (oracle).
		{"bad-signal", []string{"--signal=SIGFOO@-5", "--wrap", "true"}, 255, "",
			"sbatch: error: Invalid --signal specification\n"},
		{"bad-begin", []string{"--begin=garbage", "--wrap", "true"}, 255, "",
			"Invalid time specification (pos=0): garbage\nsbatch: error: Invalid --begin specification\n"},
		{"dos-line-breaks", []string{"dos.sh"}, 1, "",
			"sbatch: error: Batch script contains DOS line breaks (\\r\\n)\nsbatch: error: instead of expected UNIX line breaks (\\n).\n"},
		{"array-limit-zero", []string{"-H", "--array=1-3%0", "--wrap", "true"}, 0, "Submitted batch job 11\n", ""},
		{"huge-time", []string{"-H", "--time=99999999999", "--wrap", "true"}, 0, "Submitted batch job 12\n", ""},
		{"newline-in-name", []string{"-H", "--job-name=a\nb", "--wrap", "true"}, 0, "Submitted batch job 13\n", ""},
	}
	os.WriteFile(filepath.Join(h.dir, "dos.sh"), []byte("#!/bin/bash\r\necho hi\r\n"), 0o644)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := runSbatch
			if c.name == "no-script" {
				run = func(ctx context.Context, env *Env, args []string) int {
					env.IsTerminal = true
					return runSbatch(ctx, env, args)
				}
			}
			code, out, errs := h.run(run, c.args...)
			if code != c.code || out != c.stdout || errs != c.stderr {
				t.Errorf("sbatch %v:\n exit %d, want %d\n stdout %q, want %q\n stderr %q, want %q", c.args, code, c.code, out, c.stdout, errs, c.stderr)
			}
		})
	}
}

func TestSbatchScriptAndTestOnly(t *testing.T) {
	h := newCtlHarness(t, qosDemo)
	script := filepath.Join(h.dir, "job.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n#SBATCH -J fromscript\n#SBATCH -t 10\necho hi\n"), 0o644)
	if code, out, errs := h.run(runSbatch, "-t", "5", script); code != 0 || out != "Submitted batch job 1\n" {
		t.Fatalf("sbatch script: %d %q %q", code, out, errs)
	}
	code, out, _ := h.run(runScontrol, "show", "job", "1")
	if code != 0 || !strings.Contains(out, "JobName=fromscript") || !strings.Contains(out, "TimeLimit=00:05:00") ||
		!strings.Contains(out, "Command="+script+"\n") {
		t.Errorf("scontrol show job 1 (command line wins over #SBATCH):\n%s", out)
	}
	code, out, errs := h.run(runSbatch, "--test-only", "--wrap", "true")
	if code != 0 || out != "" || !strings.HasPrefix(errs, "sbatch: Job 2 to start at ") ||
		!strings.Contains(errs, "using 1 processors on nodes c") || !strings.HasSuffix(errs, "in partition debug\n") {
		t.Errorf("--test-only: %d %q %q", code, out, errs)
	}
	// Slurm 24.11: --test-only uses up a job id, accepted or not, and a
	// request no node can run is "allocation failure: ...".
	if code, out, _ := h.run(runSbatch, "--wrap", "true"); code != 0 || out != "Submitted batch job 3\n" {
		t.Errorf("after --test-only the next id is %q, want 3", out)
	}
	if code, out, errs := h.run(runSbatch, "--test-only", "-n", "64", "--wrap", "true"); code != 1 || out != "" ||
		errs != "allocation failure: Requested node configuration is not available\n" {
		t.Errorf("--test-only -n 64: %d %q %q", code, out, errs)
	}
	if code, out, _ := h.run(runSbatch, "--wrap", "true"); code != 0 || out != "Submitted batch job 5\n" {
		t.Errorf("after a refused --test-only the next id is %q, want 5", out)
	}
	env, _, errb := testEnv()
	env.UID = 1000
	if code := runSbatch(context.Background(), env, []string{"--uid", "0", "--wrap", "true"}); code != 1 ||
		errb.String() != "sbatch: error: --uid only permitted by root user\n" {
		t.Errorf("--uid as a user: %d %q", code, errb.String())
	}
}

func TestScancelAndScontrolAgainstController(t *testing.T) {
	h := newCtlHarness(t, qosDemo)
	// --begin keeps a released job pending, so the scheduler cannot start job 2
	// between the release and the uhold below.
	for i := 0; i < 3; i++ {
		h.run(runSbatch, "-H", "--begin", "now+1hour", "--wrap", "true")
	}
	steps := []struct {
		name   string
		run    func(context.Context, *Env, []string) int
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"scancel-none", runScancel, nil, 1, "", "scancel: error: No job identification provided\n"},
		// Slurm 24.11 is silent about an unknown job (oracle, scancel-options)
		{"scancel-unknown", runScancel, []string{"99"}, 0, "", ""},
		{"scancel-unknown-tasks", runScancel, []string{"8_[5-6]"}, 0, "", ""},
		{"scancel-one", runScancel, []string{"1"}, 0, "", ""},
		{"scancel-again", runScancel, []string{"1"}, 0, "", ""},
		// scancel's own words, no "scancel: error:" (oracle: scancel-more)
		{"scancel-bad-state", runScancel, []string{"-t", "COMPLETED"}, 1, "", "Invalid job state specified: COMPLETED\nValid job states are PENDING, RUNNING, and SUSPENDED\n"},
		{"release", runScontrol, []string{"release", "2"}, 0, "", ""},
		{"uhold", runScontrol, []string{"uhold", "2"}, 0, "", ""},
		{"update-limit", runScontrol, []string{"update", "JobId=2", "TimeLimit=30", "Nice=5"}, 0, "", ""},
		// Slurm 24.11's scontrol names the job after slurmctld's refusal;
		// it refuses a bad value itself.
		{"update-bad", runScontrol, []string{"update", "JobId=2", "Partition=nope"}, 1, "", "Invalid partition name specified for job 2\n"},
		{"update-unknown-job", runScontrol, []string{"update", "JobId=77", "Nice=1"}, 1, "", "Invalid job id specified for job 77\n"},
		{"update-bad-value", runScontrol, []string{"update", "JobId=2", "TimeLimit=xx"}, 1, "", "scontrol: error: Invalid TimeLimit value\n"},
		{"update-throttle-plain", runScontrol, []string{"update", "JobId=2", "ArrayTaskThrottle=3"}, 1, "",
			"scontrol: error: Update of ArrayTaskThrottle is only allowed on ArrayJobId\nRequested operation not supported on this system for job 2\n"},
		{"update-throttle-negative", runScontrol, []string{"update", "JobId=2", "ArrayTaskThrottle=-1"}, 1, "", "scontrol: error: Invalid ArrayTaskThrottle value\n"},
		{"suspend-pending", runScontrol, []string{"suspend", "2"}, 1, "", "scontrol: error: Requested operation not supported on this job state for job 2\n"},
		// Slurm 24.11's scontrol update node refusals (oracle, node-states).
		{"drain-no-reason", runScontrol, []string{"update", "NodeName=c1", "State=DRAIN"}, 1, "",
			"You must specify a reason when DOWNING or DRAINING a node. Request denied\n"},
		{"node-unknown", runScontrol, []string{"update", "nodename=n9", "state=resume"}, 1, "",
			"slurm_update error: Invalid node name specified\n"},
		{"node-bad-state", runScontrol, []string{"update", "nodename=c1", "state=banana"}, 1, "",
			"Invalid input: state=banana\nRequest aborted\n" +
				"Valid states are: NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN\n" +
				"Not all states are valid given a node's prior state\n"},
		{"node-unsupported-state", runScontrol, []string{"update", "nodename=c1", "state=mix"}, 1, "",
			"slurm_update error: Invalid node state specified\n"},
		{"node-bad-key", runScontrol, []string{"update", "nodename=c1", "foo=bar"}, 1, "",
			"Update of this parameter is not supported: foo=bar\nRequest aborted\n"},
		{"drain-abbreviated", runScontrol, []string{"update", "NodeName=c1", "State=drai", "Reason=disk"}, 0, "", ""},
		{"drain", runScontrol, []string{"update", "NodeName=c1", "State=DRAIN", "Reason=disk"}, 0, "", ""},
		{"show-unknown", runScontrol, []string{"show", "job", "77"}, 1, "", "slurm_load_jobs error: Invalid job id specified\n"},
		{"scancel-user", runScancel, []string{"-u", "root"}, 0, "", ""},
	}
	for _, s := range steps {
		code, out, errs := h.run(s.run, s.args...)
		if code != s.code || out != s.stdout || errs != s.stderr {
			t.Errorf("%s %v:\n exit %d, want %d\n stdout %q, want %q\n stderr %q, want %q", s.name, s.args, code, s.code, out, s.stdout, errs, s.stderr)
		}
	}
	_, out, _ := h.run(runSinfo, "-R")
	if !strings.Contains(out, "disk") || !strings.Contains(out, "root") {
		t.Errorf("sinfo -R after drain:\n%s", out)
	}
	_, out, _ = h.run(runSqueue, "-t", "all", "-h", "-o", "%i %T %r")
	// held jobs cancelled while pending keep their reason (oracle,
	// end-states: "4 held CANCELLED JobHeldUser"); ties: newest first
	if out != "3 CANCELLED JobHeldUser\n2 CANCELLED JobHeldUser\n1 CANCELLED JobHeldUser\n" {
		t.Errorf("squeue after scancel -u root:\n%s", out)
	}
	code, out, _ := h.run(runScontrol, "token", "lifespan=60")
	if code != 0 || !strings.HasPrefix(out, "SLURM_JWT=") || strings.Count(out, ".") != 2 {
		t.Errorf("scontrol token: %d %q", code, out)
	}
}

// TestScanStateSaveLocation checks sbatch's quick look into slurm.conf
// against the full parser: where the scan answers, it answers what
// conf.Parse reads; where the file is not plain, it defers to the parser.
func TestScanStateSaveLocation(t *testing.T) {
	cases := []struct {
		name, text string
		ok         bool
	}{
		{"plain", "ClusterName=c\nStateSaveLocation=/var/spool/x\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n", true},
		{"case-insensitive key, several pairs on a line, comment", "ClusterName=c stateSAVElocation=/a/b # note\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n", true},
		{"last setting wins", "ClusterName=c\nStateSaveLocation=/first\nStateSaveLocation=/second\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n", true},
		{"commented out", "ClusterName=c\n#StateSaveLocation=/nope\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n", false},
		{"include defers to the parser", "ClusterName=c\nInclude /etc/slurm/other.conf\nStateSaveLocation=/x\n", false},
		{"quoted value defers to the parser", "StateSaveLocation=\"/x y\"\n", false},
		{"escaped # defers to the parser", "StateSaveLocation=/x\\#y\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "slurm.conf")
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			dir, ok := scanStateSaveLocation(path)
			if ok != c.ok {
				t.Fatalf("scan ok = %v (dir %q), want %v", ok, dir, c.ok)
			}
			if !ok {
				return
			}
			cfg, _, err := conf.Parse(path, []byte(c.text))
			if err != nil {
				t.Fatalf("conf.Parse: %v", err)
			}
			if dir != cfg.StateSaveLocation {
				t.Errorf("scan found %q, the parser %q", dir, cfg.StateSaveLocation)
			}
		})
	}
	if _, ok := scanStateSaveLocation(filepath.Join(t.TempDir(), "missing.conf")); ok {
		t.Error("a missing file must defer to the parser (and its error)")
	}
}

// TestSbatchPrioProcess: sbatch exports its nice value to the job as
// SLURM_PRIO_PROCESS, as Slurm's does (oracle: SLURM_PRIO_PROCESS=0 in a
// job submitted from an ordinary shell); a value in sbatch's own
// environment is replaced.
func TestSbatchPrioProcess(t *testing.T) {
	t.Setenv("SLURM_PRIO_PROCESS", "7")
	env, _, _ := testEnv()
	var s api.JobSpec
	fillSubmitContext(env, &s)
	var got []string
	for _, kv := range s.Environment {
		if strings.HasPrefix(kv, "SLURM_PRIO_PROCESS=") {
			got = append(got, kv)
		}
	}
	if want := fmt.Sprintf("SLURM_PRIO_PROCESS=%d", prioProcess()); len(got) != 1 || got[0] != want {
		t.Errorf("environment has %q, want only %q", got, want)
	}
}
