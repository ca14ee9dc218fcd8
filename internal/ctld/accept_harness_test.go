package ctld

// Harness of the acceptance tests of issue 7 (accept_*_test.go): a real
// cluster made of separate processes, `sluice ctld` and one `sluice noded`
// per node, built from this tree, each with its own log file, talking over
// the real Unix socket and TCP. Jobs are real shell scripts; the ones that
// must stay running wait on gate files the test creates when it wants
// them to end (bounded, so a failed test never leaves them behind).

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/noded"
)

var acceptBin struct {
	once sync.Once
	path string
	err  error
}

// acceptSluice returns the sluice binary built from this tree, once per
// test binary. The package's TestMain (harness_test.go) belongs to the
// in-process harness, so the build is memoised here instead; it goes into
// os.TempDir()/sluice-accept/PID (mode 0755, so that a client run as
// nobody can execute it), and directories of test processes that no
// longer exist are removed, so repeated runs leave one binary at most.
func acceptSluice(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("acceptance test: builds ./cmd/sluice and runs a cluster of processes")
	}
	acceptBin.once.Do(func() {
		base := filepath.Join(os.TempDir(), "sluice-accept")
		os.MkdirAll(base, 0o755)
		os.Chmod(base, 0o755)
		if old, _ := os.ReadDir(base); old != nil {
			for _, e := range old {
				if pid, err := strconv.Atoi(e.Name()); err == nil && !processAlive(pid) {
					os.RemoveAll(filepath.Join(base, e.Name()))
				}
			}
		}
		dir := filepath.Join(base, strconv.Itoa(os.Getpid()))
		os.MkdirAll(dir, 0o755)
		os.Chmod(dir, 0o755)
		acceptBin.path = filepath.Join(dir, "sluice")
		out, err := exec.Command("go", "build", "-o", acceptBin.path, "github.com/sluice-hpc/sluice/cmd/sluice").CombinedOutput()
		if err != nil {
			acceptBin.err = fmt.Errorf("build sluice: %v\n%s", err, out)
		}
	})
	if acceptBin.err != nil {
		t.Fatal(acceptBin.err)
	}
	return acceptBin.path
}

func processAlive(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return err == nil
}

// daemon is one sluice process the test started.
type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// kill9 sends SIGKILL to the daemon's own pid (not its process group:
// the jobs' shims must survive, as they do when a real daemon crashes)
// and reaps it.
func (d *daemon) kill9(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9 %s: %v", d.name, err)
	}
	<-d.done
}

// stop interrupts the daemon (a clean stop) and waits a while for it.
func (d *daemon) stop() {
	select {
	case <-d.done:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-d.done:
	case <-time.After(15 * time.Second):
		d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
	}
}

// acceptCluster is a controller process and its node agent processes.
type acceptCluster struct {
	t      *testing.T
	bin    string
	dir    string // 0755 root of everything below
	state  string // StateSaveLocation
	conf   string // slurm.conf
	work   string // jobs' working directory (0777)
	port   int
	cpus   int
	ctld   *daemon
	agents map[string]*daemon
	order  []string
	client *api.Client
	// gates are the gate files the jobs may wait on, opened at cleanup.
	gates []string
	// stateMount is state when it is a tmpfs of its own (acceptOpts.stateTmpfs).
	stateMount string
}

type acceptOpts struct {
	nodes, cpus int
	// extra lines go into slurm.conf (the store's lines, for instance).
	extra string
	// stateTmpfs, when set, is the size of a tmpfs mounted on the state
	// directory (as root only: TestChaos fills it).
	stateTmpfs string
}

// in returns the cluster as seen from subtest t (failures go to t).
func (c *acceptCluster) in(t *testing.T) *acceptCluster {
	cc := *c
	cc.t = t
	return &cc
}

// startAcceptCluster writes a slurm.conf (nodes a1..aN of cpus CPUs, one
// partition), starts `sluice ctld` and the agents, and waits until every
// node is idle.
func startAcceptCluster(t *testing.T, bin string, o acceptOpts) *acceptCluster {
	t.Helper()
	// Not t.TempDir(): its parents are 0700, and the security test's
	// clients run as nobody must reach the socket and slurm.conf.
	dir, err := os.MkdirTemp("", "sluice-accept-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	c := &acceptCluster{t: t, bin: bin, dir: dir, state: filepath.Join(dir, "state"), conf: filepath.Join(dir, "slurm.conf"),
		work: filepath.Join(dir, "work"), cpus: o.cpus, agents: map[string]*daemon{}}
	t.Cleanup(func() {
		if !t.Failed() {
			os.RemoveAll(dir)
		} else {
			t.Logf("cluster files kept in %s", dir)
		}
	})
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	os.MkdirAll(c.work, 0o777)
	os.Chmod(c.work, 0o777)
	os.WriteFile(filepath.Join(dir, "gres.conf"), nil, 0o644)
	c.port = acceptFreePort(t)
	text := fmt.Sprintf(`ClusterName=accept
SlurmctldHost=localhost
SlurmctldPort=%d
StateSaveLocation=%s
SlurmUser=root
SelectTypeParameters=CR_CPU
KillWait=1
SlurmdTimeout=30
MinJobAge=3600
%s
NodeName=a[1-%d] CPUs=%d RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=a[1-%d] Default=YES MaxTime=INFINITE State=UP
`, c.port, c.state, o.extra, o.nodes, o.cpus, o.nodes)
	if err := os.WriteFile(c.conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if o.stateTmpfs != "" {
		c.stateMount = mountStateTmpfs(t, c.state, o.stateTmpfs)
	}
	// Cleanups run last-registered first: open the gates (jobs end by
	// themselves), then stop the agents and the controller (then unmount).
	t.Cleanup(c.stopAll)
	t.Cleanup(c.openGates)
	c.startCtld()
	for i := 1; i <= o.nodes; i++ {
		c.order = append(c.order, "a"+strconv.Itoa(i))
	}
	for _, n := range c.order {
		c.startAgent(n)
	}
	c.waitNodes("idle", o.nodes)
	return c
}

func acceptFreePort(t *testing.T) int {
	p, err := api.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// spawn starts `sluice args...` with its output appended to logs/NAME.log.
func (c *acceptCluster) spawn(name string, args ...string) *daemon {
	c.t.Helper()
	logPath := filepath.Join(c.dir, "logs", name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	fmt.Fprintf(f, "=== %s start %s\n", time.Now().Format(time.RFC3339Nano), strings.Join(args, " "))
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.conf)
	if err := cmd.Start(); err != nil {
		f.Close()
		c.t.Fatalf("start %s: %v", name, err)
	}
	d := &daemon{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { cmd.Wait(); f.Close(); close(d.done) }()
	return d
}

// startCtld starts (or restarts) the controller and waits for its socket.
func (c *acceptCluster) startCtld() {
	c.t.Helper()
	c.ctld = c.spawn("ctld", "ctld", "--conf", c.conf, "--listen", "127.0.0.1:"+strconv.Itoa(c.port))
	c.client = api.NewUnixClient(filepath.Join(c.state, api.SocketFile))
	c.wait(30*time.Second, "controller answering on its socket", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := c.client.Ping(ctx)
		return err == nil
	})
}

// spool is node's agent spool directory (kept across agent restarts).
func (c *acceptCluster) spool(node string) string { return filepath.Join(c.dir, "spool", node) }

// startAgent starts (or restarts, on the same spool) node's agent.
func (c *acceptCluster) startAgent(node string) {
	c.t.Helper()
	c.agents[node] = c.spawn(node, "noded", "--name", node, "--controller", "http://127.0.0.1:"+strconv.Itoa(c.port),
		"--spool", c.spool(node), "--key", filepath.Join(c.state, api.ClusterKeyFile), "--listen", "127.0.0.1:0",
		"--cpus", strconv.Itoa(c.cpus), "--memory", "1000", "--gres-conf", filepath.Join(c.dir, "gres.conf"), "--cgroup", "none")
}

func (c *acceptCluster) stopAll() {
	for _, n := range c.order {
		if d := c.agents[n]; d != nil {
			d.stop()
		}
	}
	if c.ctld != nil {
		c.ctld.stop()
	}
}

// gate returns the path of a gate file jobs can wait on.
func (c *acceptCluster) gate(name string) string {
	p := filepath.Join(c.work, "gate-"+name)
	c.gates = append(c.gates, p)
	return p
}

func (c *acceptCluster) open(gate string) {
	c.t.Helper()
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		c.t.Fatal(err)
	}
}

// openGates opens every gate and waits (bounded) for the jobs started so
// far to end, so that no job outlives its test or loses its gate file to
// the directory's removal.
func (c *acceptCluster) openGates() {
	for _, g := range c.gates {
		os.WriteFile(g, nil, 0o644)
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		spools, _ := filepath.Glob(filepath.Join(c.dir, "spool", "*"))
		running := 0
		for _, sp := range spools {
			for _, id := range noded.SpoolJobs(sp) {
				if !noded.SpoolExited(sp, id) {
					running++
				}
			}
		}
		if running == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ranFile is the shared file every job appends its id to when it starts.
func (c *acceptCluster) ranFile() string { return filepath.Join(c.work, "ran") }

// script is a batch script that appends its job id to the shared file and
// then, when gate is not "", waits for the gate (at most about 2 minutes).
func (c *acceptCluster) script(gate string) string {
	s := "#!/bin/sh\necho $SLURM_JOB_ID >> " + c.ranFile() + "\n"
	if gate != "" {
		s += "i=0\nwhile [ ! -e " + gate + " ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done\n"
	}
	return s
}

// submit queues a job running script(gate) (on node when not "") through
// the API client, as the test's own user.
func (c *acceptCluster) submit(gate, node string) uint32 {
	c.t.Helper()
	spec := api.JobSpec{Name: "accept", Script: c.script(gate), WorkDir: c.work,
		Environment: []string{"PATH=" + os.Getenv("PATH")}, NodeList: node}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.client.Submit(ctx, api.SubmitRequest{Spec: spec})
	if err != nil {
		c.t.Fatalf("submit: %v", err)
	}
	return res.JobID
}

// jobs returns every job the controller knows, by id (nil on error).
func (c *acceptCluster) jobs() map[uint32]api.JobInfo {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.client.Jobs(ctx, api.JobQuery{})
	if err != nil {
		return nil
	}
	m := make(map[uint32]api.JobInfo, len(res.Jobs))
	for _, j := range res.Jobs {
		m[j.JobID] = j
	}
	return m
}

// countIn counts the jobs of ids in state.
func countIn(jobs map[uint32]api.JobInfo, ids []uint32, state string) int {
	n := 0
	for _, id := range ids {
		if j, ok := jobs[id]; ok && j.State == state {
			n++
		}
	}
	return n
}

// waitJobs waits until f holds for the controller's job list.
func (c *acceptCluster) waitJobs(d time.Duration, what string, f func(map[uint32]api.JobInfo) bool) map[uint32]api.JobInfo {
	c.t.Helper()
	var last map[uint32]api.JobInfo
	c.wait(d, what, func() bool {
		last = c.jobs()
		return last != nil && f(last)
	})
	return last
}

// waitNodes waits until n nodes are in the compact state.
func (c *acceptCluster) waitNodes(state string, n int) {
	c.t.Helper()
	c.wait(30*time.Second, fmt.Sprintf("%d nodes %s", n, state), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := c.client.Nodes(ctx)
		if err != nil {
			return false
		}
		k := 0
		for _, node := range res.Nodes {
			if node.StateShort == state {
				k++
			}
		}
		return k == n
	})
}

// node returns the controller's record of a node.
func (c *acceptCluster) node(name string) api.NodeRecord {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.client.Nodes(ctx)
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

// wait polls f every 50 ms for up to d; on timeout it fails the test with
// the tail of every daemon's log.
func (c *acceptCluster) wait(d time.Duration, what string, f func() bool) {
	c.t.Helper()
	start := time.Now()
	for !f() {
		if time.Since(start) > d {
			c.t.Fatalf("timed out after %v waiting for %s\n%s", d, what, c.logTails())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *acceptCluster) logTails() string {
	var b strings.Builder
	names, _ := filepath.Glob(filepath.Join(c.dir, "logs", "*.log"))
	for _, n := range names {
		data, _ := os.ReadFile(n)
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", filepath.Base(n), data)
	}
	return b.String()
}

// ranCounts reads the shared file: how many times each job id was written.
func (c *acceptCluster) ranCounts() map[uint32]int {
	c.t.Helper()
	f, err := os.Open(c.ranFile())
	if err != nil {
		return map[uint32]int{}
	}
	defer f.Close()
	m := map[uint32]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id, err := strconv.ParseUint(strings.TrimSpace(sc.Text()), 10, 32)
		if err != nil {
			c.t.Errorf("ran file: bad line %q", sc.Text())
			continue
		}
		m[uint32(id)]++
	}
	return m
}

// checkRanOnce asserts that exactly the jobs ids wrote their id, once each.
func (c *acceptCluster) checkRanOnce(ids []uint32) {
	c.t.Helper()
	counts := c.ranCounts()
	for _, id := range ids {
		if counts[id] != 1 {
			c.t.Errorf("job %d ran %d times, want exactly once", id, counts[id])
		}
		delete(counts, id)
	}
	for id, n := range counts {
		c.t.Errorf("unexpected job %d ran %d times", id, n)
	}
}

// exited reports whether node's agent spool holds the exit status of job
// id (recorded by the node's job supervisor, which outlives its agent).
func (c *acceptCluster) exited(node string, id uint32) bool {
	return noded.SpoolExited(c.spool(node), id)
}

// endedOrForgotten reports whether job id (launched on node) has ended:
// its exit status is in the spool, or the agent already delivered it and
// dropped the job's record.
func (c *acceptCluster) endedOrForgotten(node string, id uint32) bool {
	return !slices.Contains(noded.SpoolJobs(c.spool(node)), id) || c.exited(node, id)
}

// checkAccounted asserts that every job of ids has exactly one
// accounting record (the job's own, not its steps), COMPLETED with exit
// code 0:0 and a start and end; starts gives, for the jobs that were
// running before a crash, the start time the record must keep.
func (c *acceptCluster) checkAccounted(ids []uint32, starts map[uint32]time.Time) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.client.Accounting(ctx)
	if err != nil {
		c.t.Fatalf("accounting: %v", err)
	}
	recs := map[uint32][]api.AcctRecord{}
	for _, r := range res.Records {
		if r.Step == "" {
			recs[r.JobID] = append(recs[r.JobID], r)
		}
	}
	for _, id := range ids {
		rs := recs[id]
		if len(rs) != 1 {
			c.t.Errorf("job %d: %d accounting records, want 1: %+v", id, len(rs), rs)
			continue
		}
		r := rs[0]
		if r.State != "COMPLETED" || r.ExitCode != "0:0" || r.Start.IsZero() || r.End.Before(r.Start) {
			c.t.Errorf("job %d accounted as %s exit %s start %v end %v", id, r.State, r.ExitCode, r.Start, r.End)
		}
		if want, ok := starts[id]; ok && !r.Start.Truncate(time.Second).Equal(want.Truncate(time.Second)) {
			c.t.Errorf("job %d accounted with start %v, it started at %v (before the crash)", id, r.Start, want)
		}
	}
}

// sluice runs the real CLI as the test's user and returns exit code,
// stdout and stderr.
func (c *acceptCluster) sluice(env []string, args ...string) (int, string, string) {
	c.t.Helper()
	return c.runCLI(nil, env, args...)
}

// runCLI runs `sluice args...` with SLURM_CONF set, as cred when not nil.
func (c *acceptCluster) runCLI(cred *syscall.Credential, env []string, args ...string) (int, string, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Dir = c.work
	cmd.Env = append([]string{"SLURM_CONF=" + c.conf, "PATH=" + os.Getenv("PATH"), "HOME=" + c.work}, env...)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	rc := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			c.t.Fatalf("sluice %v: %v", args, err)
		}
		rc = ee.ExitCode()
	}
	return rc, out.String(), errb.String()
}

func idList(ids []uint32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(s, ",")
}
