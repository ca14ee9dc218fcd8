package cli

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/ctld"
)

// The end-to-end tests of sacct, sreport, sdiag, sprio, sshare, srun,
// salloc and sacctmgr-through-the-controller run a real cluster: the
// sluice binary built from this tree, `sluice up` (controller, SQLite
// store, node agents running real processes) in a temporary state
// directory, and the commands run in-process against it.

var (
	extBinOnce sync.Once
	extBin     string
	extBinErr  error
)

// sluiceBinary builds ./cmd/sluice once per test run.
func sluiceBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test (builds the binary, starts a cluster)")
	}
	extBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sluice-e2e-bin")
		if err != nil {
			extBinErr = err
			return
		}
		extBin = filepath.Join(dir, "sluice")
		out, err := exec.Command("go", "build", "-o", extBin, "../../cmd/sluice").CombinedOutput()
		if err != nil {
			extBinErr = &buildError{out: string(out), err: err}
		}
	})
	if extBinErr != nil {
		t.Fatal(extBinErr)
	}
	return extBin
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.out }

// extCluster is a running `sluice up`.
type extCluster struct {
	t     *testing.T
	bin   string
	state string
	conf  string
	cmd   *exec.Cmd
	log   *bytes.Buffer
}

// upCluster starts `sluice up --nodes N` in a fresh state directory and
// waits for its socket; extra lines are appended to the generated
// slurm.conf before the start.
func upCluster(t *testing.T, nodes int, extra string) *extCluster {
	t.Helper()
	return upClusterFiles(t, nodes, extra, nil)
}

// upClusterFiles is upCluster with more files (cgroup.conf, ...) written
// into the state directory beside slurm.conf before the start, and more
// arguments of sluice up.
func upClusterFiles(t *testing.T, nodes int, extra string, files map[string]string, upArgs ...string) *extCluster {
	t.Helper()
	bin := sluiceBinary(t)
	state := t.TempDir()
	os.Chmod(state, 0o711)
	c := &extCluster{t: t, bin: bin, state: state, conf: filepath.Join(state, "slurm.conf"), log: &bytes.Buffer{}}
	{
		text := GenerateConf(GenConf{State: state, Nodes: nodes, CPUs: 2 * nodes, MemoryMB: 4096 * int64(nodes),
			Port: mustFreePort(t), User: "root"})
		if err := os.WriteFile(c.conf, []byte(text+extra), 0o644); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(state, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.cmd = exec.Command(bin, append([]string{"up", "--state", state, "--nodes", strconv.Itoa(nodes)}, upArgs...)...)
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	c.cmd.Env = append(os.Environ(), "HOME="+state)
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stop)
	sock := filepath.Join(state, api.SocketFile)
	deadline := time.Now().Add(90 * time.Second)
	for {
		if _, err := os.Stat(sock); err == nil {
			cl := api.NewUnixClient(sock)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			nodesUp := 0
			if res, err := cl.Nodes(ctx); err == nil {
				for _, n := range res.Nodes {
					if strings.HasPrefix(strings.ToLower(n.State), "idle") {
						nodesUp++
					}
				}
			}
			cancel()
			if nodesUp == nodes {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster did not come up:\n%s", c.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustFreePort(t *testing.T) int {
	p, err := api.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stop interrupts `sluice up` (the process this test started) and waits.
func (c *extCluster) stop() {
	if c.cmd.Process == nil {
		return
	}
	c.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// env is the environment of a command run by uid against the cluster.
func (c *extCluster) env(uid int, vars ...string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	out, errb := &bytes.Buffer{}, &bytes.Buffer{}
	m := map[string]string{"SLURM_CONF": c.conf, "HOME": c.state}
	for i := 0; i+1 < len(vars); i += 2 {
		m[vars[i]] = vars[i+1]
	}
	return &Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: errb, Getenv: func(k string) string { return m[k] },
		UID: uid, GID: uid, Cwd: c.state}, out, errb
}

// run runs a registered command as root and returns status and output.
func (c *extCluster) run(name string, args ...string) (int, string, string) {
	return c.runEnv(nil, name, args...)
}

func (c *extCluster) runEnv(vars []string, name string, args ...string) (int, string, string) {
	c.t.Helper()
	cmd, ok := Lookup(name)
	if !ok {
		c.t.Fatalf("command %s not registered", name)
	}
	env, out, errb := c.env(0, vars...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rc := cmd.Run(ctx, env, args)
	return rc, out.String(), errb.String()
}

// client is an API client as root (peer credentials).
func (c *extCluster) client() *api.Client {
	return api.NewUnixClient(filepath.Join(c.state, api.SocketFile))
}

// waitState waits until job id is in one of the states.
func (c *extCluster) waitState(id string, states ...string) api.JobInfo {
	c.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := c.client().Jobs(ctx, api.JobQuery{IDs: []string{id}})
		cancel()
		if err == nil && len(res.Jobs) > 0 {
			for _, s := range states {
				if res.Jobs[0].State == s {
					return res.Jobs[0]
				}
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("job %s never reached %v (last: %+v, err %v)\n%s", id, states, res.Jobs, err, c.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// submit runs sbatch --parsable and returns the job id.
func (c *extCluster) submit(args ...string) string {
	c.t.Helper()
	rc, out, errs := c.run("sbatch", append([]string{"--parsable"}, args...)...)
	if rc != 0 {
		c.t.Fatalf("sbatch %v: exit %d: %s", args, rc, errs)
	}
	return strings.TrimSpace(out)
}

// TestE2EAccounting runs jobs on a real cluster and checks what sacct,
// sdiag, sprio and sshare report: a completed job, a failed one, a job
// requeued while running (two records with -D, the first REQUEUED), a
// pending held job, and the scheduler counters.
func TestE2EAccounting(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 2, "")
	ok := c.submit("-J", "ok", "--wrap", "true")
	bad := c.submit("-J", "bad", "--wrap", "exit 3")
	long := c.submit("-J", "long", "--wrap", "sleep 60")
	held := c.submit("-J", "held", "-H", "--wrap", "true")
	c.waitState(ok, "COMPLETED")
	c.waitState(bad, "FAILED")
	c.waitState(long, "RUNNING")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.client().Control(ctx, api.JobControlRequest{Op: api.OpRequeue, Jobs: []string{long}}); err != nil {
		t.Fatal(err)
	}
	c.waitState(long, "PENDING")

	rc, out, errs := c.run("sacct", "-X", "-P", "--format=JobID,JobName,State,ExitCode")
	if rc != 0 {
		t.Fatalf("sacct: %d %s", rc, errs)
	}
	t.Logf("sacct -X -P:\n%s", out)
	// One record per job: the requeued job's PENDING record is eligible
	// only after the requeue delay, so its REQUEUED run is shown (as on
	// the oracle); -j (no time window) shows the PENDING one, -D all.
	for _, want := range []string{
		ok + "|ok|COMPLETED|0:0", bad + "|bad|FAILED|3:0", long + "|long|REQUEUED|",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("sacct output lacks %q", want)
		}
	}
	// A held job was never eligible: it is in no time window, only in
	// -j (oracle: sacct left out a held PENDING job, sacct -j listed it).
	if strings.Contains(out, held+"|held|") {
		t.Errorf("sacct lists the held job, never eligible:\n%s", out)
	}
	if rc, out, _ = c.run("sacct", "-X", "-P", "-n", "-j", held, "--format=JobID,JobName,State,ExitCode"); rc != 0 ||
		out != held+"|held|PENDING|0:0\n" {
		t.Errorf("sacct -j %s: %d %q", held, rc, out)
	}
	if strings.Contains(out, long+"|long|PENDING") {
		t.Errorf("sacct shows the requeued job's PENDING record before it is eligible")
	}
	rc, out, _ = c.run("sacct", "-j", long, "-n", "-b")
	if rc != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "PENDING") {
		t.Errorf("sacct -j %s: want its PENDING record only, got %d:\n%s", long, rc, out)
	}
	rc, out, _ = c.run("sacct", "-D", "-j", long, "-n", "-b")
	if rc != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, long+".batch") {
		t.Errorf("sacct -D -j %s: want 3 records (one per run, the batch step of the first), got %d:\n%s", long, rc, out)
	}
	// Without -X each batch job has its JOBID.batch step line: the
	// script's state and exit code; the requeued run's was killed.
	rc, out, _ = c.run("sacct", "-P", "-n", "--format=JobID,JobName,State,ExitCode,AllocCPUS,NodeList")
	t.Logf("sacct -P:\n%s", out)
	for _, want := range []string{ok + ".batch|batch|COMPLETED|0:0|1|", bad + ".batch|batch|FAILED|3:0|1|",
		long + ".batch|batch|CANCELLED|0:15|"} {
		if rc != 0 || !strings.Contains(out, want) {
			t.Errorf("sacct output lacks %q", want)
		}
	}
	if strings.Contains(out, held+".batch") {
		t.Errorf("a job that never started has a batch step:\n%s", out)
	}

	rc, out, errs = c.run("sdiag")
	if rc != 0 {
		t.Fatalf("sdiag: %d %s", rc, errs)
	}
	t.Logf("sdiag:\n%s", out)
	for _, want := range []string{"Jobs submitted: 4", "Jobs completed: 1", "Jobs failed:    1", "Jobs pending:   2",
		"Main schedule statistics (microseconds):", "Backfilling stats"} {
		if !strings.Contains(out, want) {
			t.Errorf("sdiag output lacks %q", want)
		}
	}
	// The call tables: four sbatch calls, one requeue, the agents'
	// registrations, and the caller's row among the users.
	me := userName(os.Getuid())
	for _, want := range []string{`\tREQUEST_SUBMIT_BATCH_JOB +\( 4003\) count:4 +ave_time:\d+ +total_time:\d+\n`,
		`\tREQUEST_JOB_REQUEUE +\( 5023\) count:1 `, `\tMESSAGE_NODE_REGISTRATION_STATUS +\( 1002\) count:[1-9]`,
		`\tREQUEST_JOB_INFO +\( 2003\) count:[1-9]`, `\t` + regexp.QuoteMeta(me) + ` +\( *` + strconv.Itoa(os.Getuid()) + `\) count:[1-9]`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("sdiag call tables lack %s", want)
		}
	}
	if rc, _, _ := c.run("sdiag", "-r"); rc != 0 {
		t.Errorf("sdiag -r as root: exit %d", rc)
	}
	_, out, _ = c.run("sdiag")
	if !strings.Contains(out, "Jobs submitted: 0") || !strings.Contains(out, "Total cycles: 0") {
		t.Errorf("sdiag after -r: counters not reset:\n%s", out)
	}
	if strings.Contains(out, "REQUEST_SUBMIT_BATCH_JOB") || !regexp.MustCompile(`\tREQUEST_STATS_INFO +\( 2035\) count:1 `).MatchString(out) {
		t.Errorf("sdiag after -r: want only the reset call counted:\n%s", out)
	}

	rc, out, errs = c.run("sprio", "-l")
	if rc != 0 {
		t.Fatalf("sprio -l: %d %s", rc, errs)
	}
	t.Logf("sprio -l:\n%s", out)
	if !strings.Contains(out, "JOBID") || strings.Contains(out, " "+held+" ") {
		t.Errorf("sprio -l: want a header and no held job:\n%s", out)
	}
	rc, out, _ = c.run("sprio", "-j", held)
	if rc != 1 || !strings.Contains(out, "Unable to find jobs matching user/id(s) specified") {
		t.Errorf("sprio -j held: exit %d:\n%s", rc, out)
	}
	rc, out, errs = c.run("sshare", "-a")
	if rc != 0 || !strings.Contains(out, "Account") || !strings.Contains(out, "FairShare") {
		t.Errorf("sshare -a: %d %s\n%s", rc, errs, out)
	}
	t.Logf("sshare -a:\n%s", out)
}

// TestE2ESrunSalloc runs srun as a job (output streamed, exit code
// returned), salloc with a command that runs two srun steps inside the
// allocation (SLURM_JOB_ID set, steps numbered 0 and 1), and checks
// sacct's records of all of them.
func TestE2ESrunSalloc(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 2, "")
	// The tasks' stderr comes back on srun's stderr, as Slurm's I/O forwarding does.
	rc, out, errs := c.run("srun", "-J", "hello", "sh", "-c", "echo hello from $SLURM_JOB_ID; echo to-stderr >&2")
	if rc != 0 || !strings.Contains(out, "hello from ") || !strings.Contains(errs, "to-stderr") {
		t.Fatalf("srun: exit %d, out %q, err %q", rc, out, errs)
	}
	rc, _, errs = c.run("srun", "sh", "-c", "exit 3")
	if rc != 3 || !strings.Contains(errs, "Exited with exit code 3") {
		t.Errorf("srun exit 3: got %d, %q", rc, errs)
	}
	inner := c.bin + " srun -n 2 -l sh -c 'echo step $SLURM_STEP_ID task $SLURM_PROCID'; " + c.bin + " srun true"
	// -n 2: a step of two tasks needs two CPUs of the allocation ("More
	// processors requested than permitted" otherwise, as in Slurm).
	rc, out, errs = c.run("salloc", "-N", "1", "-n", "2", "-J", "alloc", "sh", "-c", inner)
	if rc != 0 {
		t.Fatalf("salloc: exit %d: %s\n%s", rc, errs, out)
	}
	for _, want := range []string{"0: step 0 task 0", "1: step 0 task 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("salloc output lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"salloc: Granted job allocation", "salloc: Nodes node1 are ready for job", "salloc: Relinquishing job allocation"} {
		if !strings.Contains(errs, want) {
			t.Errorf("salloc stderr lacks %q:\n%s", want, errs)
		}
	}
	wants := []string{"|hello|COMPLETED|0:0", "|sh|FAILED|3:0", "|alloc|COMPLETED|0:0", ".0|sh|COMPLETED|0:0", ".1|true|COMPLETED|0:0"}
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, out, _ = c.run("sacct", "-P", "-n", "--format=JobID,JobName,State,ExitCode")
		missing := ""
		for _, want := range wants {
			if !strings.Contains(out, want) {
				missing = want
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sacct lacks %q:\n%s", missing, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("sacct:\n%s", out)
	if strings.Contains(out, "batch|") {
		t.Errorf("srun and salloc allocations have no batch step:\n%s", out)
	}
	// A step needs a running job the caller owns.
	rc, _, errs = c.runEnv([]string{"SLURM_JOB_ID", "999"}, "srun", "true")
	if rc == 0 || !strings.Contains(errs, "Unable to create step for job 999") {
		t.Errorf("srun in a missing job: exit %d %q", rc, errs)
	}
}

// TestE2ESacctmgrThroughController adds an account and a user through a
// running controller and sees the live fair-share tree change at once
// (sshare), then checks the security rules with a token for another
// user: no sacctmgr change, no scancel/update of root's job, no
// `scontrol update node`, no sdiag -r, and sacct shows only own jobs.
func TestE2ESacctmgrThroughController(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 1, "")
	rc, out, errs := c.run("sacctmgr", "-i", "add", "account", "physics", "fairshare=10")
	if rc != 0 {
		t.Fatalf("sacctmgr add account: %d %s %s", rc, out, errs)
	}
	if rc, out, errs = c.run("sacctmgr", "-i", "add", "user", "nobody", "account=physics"); rc != 0 {
		t.Fatalf("sacctmgr add user: %d %s %s", rc, out, errs)
	}
	cmd, _ := Lookup("sacctmgr")
	env, _, errb := c.env(0)
	env.Stdin = strings.NewReader("add qos fast priority=10\n\nmodify user nobody set qos+=fast\nexit\nadd qos never\n")
	if rc := cmd.Run(context.Background(), env, []string{"-i"}); rc != 0 {
		t.Fatalf("sacctmgr -i < script through the controller: %d %s", rc, errb.String())
	}
	_, out, _ = c.run("sacctmgr", "-n", "-P", "show", "qos", "format=name")
	if !strings.Contains(out, "fast") || strings.Contains(out, "never") {
		t.Errorf("interactive sacctmgr: qos list %q (want fast, not never)", out)
	}
	_, out, _ = c.run("sshare", "-a")
	if !strings.Contains(out, "physics") || !strings.Contains(out, "nobody") {
		t.Errorf("sshare -a does not show the account added through the controller:\n%s", out)
	}
	_, out, _ = c.run("sacctmgr", "-n", "-P", "show", "account", "format=account")
	if !strings.Contains(out, "physics") {
		t.Errorf("sacctmgr show account through the controller:\n%s", out)
	}
	if rc, _, errs = c.run("sacctmgr", "dump", "sluice", "file=acct.cfg"); rc != 0 {
		t.Fatalf("sacctmgr dump through the controller: %d %s", rc, errs)
	}
	if data, err := os.ReadFile(filepath.Join(c.state, "acct.cfg")); err != nil || !strings.Contains(string(data), "physics") {
		t.Errorf("dump file written by the client: %v\n%s", err, data)
	}
	if rc, _, errs = c.run("sacctmgr", "-i", "load", "missing.cfg"); rc == 0 || !strings.Contains(errs, "missing.cfg") {
		t.Errorf("load of a missing file: %d %q", rc, errs)
	}
	job := c.submit("-J", "rootjob", "--wrap", "sleep 30")
	c.waitState(job, "RUNNING", "PENDING")

	tok := c.token(t, "nobody")
	as := []string{"SLURM_JWT", tok}
	checks := []struct {
		name string
		args []string
		want string
	}{
		{"sacctmgr", []string{"-i", "add", "account", "evil"}, ""},
		{"sacctmgr", []string{"-i", "modify", "account", "physics", "set", "fairshare=1000"}, ""},
		{"sdiag", []string{"-r"}, "Access/permission denied"},
		{"srun", []string{"--jobid", job, "true"}, "Access/permission denied"},
	}
	for _, ch := range checks {
		rc, _, errs := c.runEnv(as, ch.name, ch.args...)
		if rc == 0 || !strings.Contains(errs, ch.want) {
			t.Errorf("%s %v as nobody: exit %d, %q", ch.name, ch.args, rc, errs)
		}
	}
	cl := api.NewTCPClient(c.addr(t), tok)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cl.Control(ctx, api.JobControlRequest{Op: api.OpCancel, Jobs: []string{job}})
	if err == nil && (len(res.Results) == 0 || res.Results[0].Error == "") {
		t.Errorf("nobody cancelled root's job %s: %+v", job, res)
	}
	if err := cl.UpdateNode(ctx, api.NodeUpdateRequest{Nodes: "node1", State: "DRAIN", Reason: "x"}); err == nil {
		t.Errorf("nobody drained a node")
	}
	// Without PrivateData=jobs the controller gives an ordinary user every
	// user's records, so sacct -a lists root's job (slurmdbd, checked on
	// Slurm 24.11); without -a sacct keeps the user's own (sacct_test.go).
	// The job is listed once a pass has made it eligible (a job never
	// eligible is in no window), which a loaded machine may delay.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		rc, out, _ := c.runEnv(as, "sacct", "-a", "-n", "-X")
		if rc == 0 && strings.Contains(out, "rootjob") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("sacct -a as nobody does not show root's job: %d\n%s", rc, out)
			break
		}
	}
	_, out, _ = c.run("sacctmgr", "-n", "-P", "show", "account", "format=account,fairshare")
	if strings.Contains(out, "evil") {
		t.Errorf("nobody's sacctmgr add went through:\n%s", out)
	}
}

// token signs a token for user with the cluster's key.
func (c *extCluster) token(t *testing.T, user string) string {
	data, err := os.ReadFile(filepath.Join(c.state, ctld.JWTKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := ctld.IssueToken(key, user, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// addr is the controller's TCP address (SlurmctldPort on localhost).
func (c *extCluster) addr(t *testing.T) string {
	cfg, _, err := conf.Load(c.conf)
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(cfg.SlurmctldPort)
}

// TestE2ESacctPreemptedRun is S3's accounting check on a small
// partition-priority cluster: a job running in the low tier is preempted
// (PreemptMode=REQUEUE) by a job of the high tier; it keeps its id, goes
// back to PENDING, and sacct shows its first run PREEMPTED and the
// preemptor running.
func TestE2ESacctPreemptedRun(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 1, "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n"+
		"PartitionName=high Nodes=node1 PriorityTier=2 MaxTime=INFINITE State=UP\n")
	low := c.submit("-J", "charlie", "-p", "debug", "-n", "2", "--requeue", "--wrap", "sleep 60")
	c.waitState(low, "RUNNING")
	high := c.submit("-J", "alice", "-p", "high", "-n", "2", "--wrap", "sleep 60")
	c.waitState(high, "RUNNING")
	j := c.waitState(low, "PENDING")
	if j.RestartCount != 1 {
		t.Errorf("preempted job restart count %d, want 1", j.RestartCount)
	}
	// Plain sacct shows the latest run eligible by now: the PENDING record
	// of the requeued job is eligible only after the requeue delay, so
	// its PREEMPTED run is shown (as on the oracle); -D shows both.
	_, out, _ := c.run("sacct", "-X", "-P", "-n", "--format=JobID,JobName,Partition,State")
	t.Logf("sacct:\n%s", out)
	for _, want := range []string{low + "|charlie|debug|PREEMPTED", high + "|alice|high|RUNNING"} {
		if !strings.Contains(out, want) {
			t.Errorf("sacct lacks %q", want)
		}
	}
	if strings.Contains(out, low+"|charlie|debug|PENDING") {
		t.Errorf("plain sacct shows the PENDING record of the requeued job before it is eligible")
	}
	_, out, _ = c.run("sacct", "-D", "-X", "-P", "-n", "-j", low, "--format=JobID,JobName,Partition,State")
	if want := low + "|charlie|debug|PREEMPTED\n" + low + "|charlie|debug|PENDING\n"; out != want {
		t.Errorf("sacct -D -j %s:\n%s\nwant:\n%s", low, out, want)
	}
}
