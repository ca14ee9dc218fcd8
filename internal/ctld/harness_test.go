package ctld

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/noded"
	"github.com/sluice-hpc/sluice/internal/pgtest"
	"github.com/sluice-hpc/sluice/internal/testusers"
)

// TestMain lets the test binary act as the node agents' job shim, as the
// sluice binary does with `sluice noded-shim`.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == noded.ShimCommandName {
		os.Exit(noded.ShimMain(os.Args[2:]))
	}
	testusers.EnsureAsRoot() // tokens name alice and bob (tokens_test.go, reqlimits_test.go)
	os.Exit(m.Run())
}

// backend opens a fresh controller store.
type backend struct {
	name string
	open func(t *testing.T) Store
}

// forEachStore runs f against SQLite and, when SLUICE_TEST_PG_DSN names a
// reachable server, PostgreSQL (SLUICE_REQUIRE_PG=1 makes its absence a
// failure).
func forEachStore(t *testing.T, f func(t *testing.T, b backend)) {
	for _, b := range []backend{{"sqlite", openTestSQLite}, {"postgres", openTestPostgres}} {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

func openTestSQLite(t *testing.T) Store {
	t.Helper()
	s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "ctld.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// pgSchemaDSN returns a DSN with a schema of the test's own
// (pgtest.Schema), dropped at cleanup.
func pgSchemaDSN(t *testing.T) string {
	t.Helper()
	dsn, _ := pgtest.Schema(t, "ctld_test")
	return dsn
}

func openTestPostgres(t *testing.T) Store {
	t.Helper()
	s, err := OpenPostgres(context.Background(), pgSchemaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// testConf is a small cluster: n nodes of 2 CPUs, one partition, quick
// kill and failure detection.
func testConf(t testing.TB, dir string, nodes int, extra string) *conf.Config {
	t.Helper()
	text := fmt.Sprintf(`ClusterName=test
SlurmctldHost=localhost
StateSaveLocation=%s
SlurmUser=root
SelectTypeParameters=CR_CPU
KillWait=1
SlurmdTimeout=2
ReturnToService=1
MinJobAge=300
PriorityWeightAge=1000
PriorityWeightJobSize=100
%s
NodeName=n[1-%d] CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=n[1-%d] Default=YES MaxTime=INFINITE State=UP
`, dir, extra, nodes, nodes)
	cfg, _, err := conf.Parse(filepath.Join(dir, "slurm.conf"), []byte(text))
	if err != nil {
		t.Fatalf("conf: %v", err)
	}
	return cfg
}

// cluster is a controller with real agents running real processes.
type cluster struct {
	t      *testing.T
	dir    string
	cfg    *conf.Config
	store  Store
	ctl    *Controller
	agents map[string]*noded.Agent
	client *api.Client
	work   string
	gpus   int
	acct   acct.Store
	// lastReason is the reason name of the last refusal seen by as().
	lastReason string
	// now is the controller's clock (nil: real time).
	now func() time.Time
	// batchCadence is Options.BatchCadence.
	batchCadence bool
}

type clusterOpts struct {
	nodes int
	extra string
	// gpus is the number of GPUs each agent reports (static gres.conf).
	gpus int
	// conf, when set, is the whole slurm.conf (%s = StateSaveLocation).
	conf string
	// acct is the accounting database (nil: none).
	acct acct.Store
	// cpus and memory, when set, are what every agent offers.
	cpus   int
	memory int64
	// now, when set, is the controller's clock (agents keep real time).
	now func() time.Time
	// batchCadence is Options.BatchCadence.
	batchCadence bool
}

// newCluster starts a controller on store and one agent per node, and
// waits until every node is up.
func newCluster(t *testing.T, store Store, o clusterOpts) *cluster {
	t.Helper()
	if o.nodes == 0 {
		o.nodes = 2
	}
	dir := sharedDir(t, 0o711) // the agents' spool: jobs of real users exec their scripts from it
	cfg := testConf(t, dir, o.nodes, o.extra)
	if o.conf != "" {
		var err error
		if cfg, _, err = conf.Parse(filepath.Join(dir, "slurm.conf"), []byte(fmt.Sprintf(o.conf, dir))); err != nil {
			t.Fatalf("conf: %v", err)
		}
		o.nodes = len(cfg.Nodes)
	}
	c := &cluster{t: t, dir: dir, cfg: cfg, store: store, agents: map[string]*noded.Agent{}, work: sharedDir(t, 0o1777), acct: o.acct, now: o.now,
		batchCadence: o.batchCadence}
	c.startController()
	c.gpus = o.gpus
	for _, n := range c.cfg.Nodes {
		c.startAgent(n.Name)
	}
	c.waitNodes("idle", o.nodes)
	// Registered after the temporary directories, so it runs before they are
	// removed: job processes outlive their agents by design (re-attach), and
	// one still writing its output would make the removal fail.
	t.Cleanup(c.killLeftoverJobs)
	return c
}

// killLeftoverJobs cancels every job still running on the test's agents and
// waits (briefly) until each has ended.
func (c *cluster) killLeftoverJobs() {
	deadline := time.Now().Add(5 * time.Second)
	for _, a := range c.agents {
		for _, j := range a.Jobs() {
			if !api.AgentJobFinal(j.State) {
				_, _ = a.Terminate(j.JobID, api.TerminateRequest{KillWaitSec: 1})
			}
		}
	}
	for _, a := range c.agents {
		for _, j := range a.Jobs() {
			for !api.AgentJobFinal(j.State) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				if cur, err := a.Job(j.JobID); err == nil {
					j = cur
				} else {
					break
				}
			}
		}
	}
}

func quietLogger() *slog.Logger {
	if os.Getenv("SLUICE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func shortSocket(t testing.TB) string {
	d, err := os.MkdirTemp("", "ctl")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(d, 0o755)
	t.Cleanup(func() { os.RemoveAll(d) })
	return filepath.Join(d, "s.sock")
}

// startController starts a controller on the cluster's store. A restart
// listens where the stopped controller did, as slurmctld comes back at
// SlurmctldHost: the agents keep running, see the new boot id on their
// watch stream and register again. Only when that port was taken
// meanwhile are the agents restarted against a new address.
func (c *cluster) startController() {
	t := c.t
	listen, moved := "127.0.0.1:0", true
	if c.ctl != nil {
		if u := c.ctl.URL(); u != "" {
			listen, moved = strings.TrimPrefix(u, "http://"), false
		}
	}
	ctl, err := c.newController(listen)
	if err != nil && !moved {
		ctl, err = c.newController("127.0.0.1:0")
		moved = true
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	c.ctl = ctl
	c.client = api.NewUnixClient(ctl.Socket())
	if moved {
		for name, a := range c.agents {
			a.Close()
			c.startAgent(name)
		}
	}
}

func (c *cluster) newController(listen string) (*Controller, error) {
	ctl, err := New(context.Background(), Options{Conf: c.cfg, StateDir: c.dir, Store: c.store, Accounting: c.acct,
		Socket: shortSocket(c.t), Listen: listen, Logger: quietLogger(), TickInterval: 50 * time.Millisecond,
		SchedDelay: 5 * time.Millisecond, RequeueDelay: 500 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond,
		Now: c.now, BatchCadence: c.batchCadence})
	if err != nil {
		return nil, fmt.Errorf("controller: %w", err)
	}
	if err := ctl.Start(); err != nil {
		ctl.Close()
		return nil, fmt.Errorf("controller start: %w", err)
	}
	return ctl, nil
}

func (c *cluster) startAgent(name string) {
	t := c.t
	a, err := noded.New(noded.Config{Name: name, ControllerURL: c.ctl.URL(), Spool: filepath.Join(c.dir, "spool", name),
		Key: c.ctl.ClusterKey(), Listen: "127.0.0.1:0", CPUs: c.cfg.Node(name).CPUs, MemoryMB: c.cfg.Node(name).RealMemory,
		PollInterval:      30 * time.Millisecond,
		HeartbeatInterval: 200 * time.Millisecond, CgroupBase: "none", Logger: quietLogger(),
		GPUs: noded.GPUDiscovery{LookPath: func(string) (string, error) { return "", os.ErrNotExist }, Root: t.TempDir(),
			Static: staticGPUs(c.gpus)}})
	if err != nil {
		t.Fatalf("agent %s: %v", name, err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatalf("agent %s: %v", name, err)
	}
	c.agents[name] = a
	t.Cleanup(func() { a.Close() })
}

// ctx returns a context bounded by a few seconds.
func (c *cluster) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	c.t.Cleanup(cancel)
	return ctx
}

// waitNodes waits until n nodes have the compact state.
func (c *cluster) waitNodes(state string, n int) {
	c.t.Helper()
	c.eventually(10*time.Second, fmt.Sprintf("%d nodes %s", n, state), func() bool {
		res, err := c.client.Nodes(c.ctx())
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

func (c *cluster) eventually(d time.Duration, what string, f func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for !f() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wrap builds a --wrap job spec running cmd in the test's work directory.
func (c *cluster) wrap(cmd string, mods ...func(*api.JobSpec)) api.JobSpec {
	s := api.JobSpec{Name: "wrap", Wrap: cmd, Script: "#!/bin/sh\n" + cmd + "\n", WorkDir: c.work,
		Environment: []string{"PATH=" + os.Getenv("PATH")}}
	for _, m := range mods {
		m(&s)
	}
	return s
}

// submit submits a job and returns its id.
func (c *cluster) submit(s api.JobSpec) uint32 {
	c.t.Helper()
	res, err := c.client.Submit(c.ctx(), api.SubmitRequest{Spec: s})
	if err != nil {
		c.t.Fatalf("submit: %v", err)
	}
	return res.JobID
}

// job returns one job record (or every record of an array).
func (c *cluster) job(id uint32) api.JobInfo {
	c.t.Helper()
	res, err := c.client.Jobs(c.ctx(), api.JobQuery{IDs: []string{strconv.FormatUint(uint64(id), 10)}, Detail: true})
	if err != nil || len(res.Jobs) == 0 {
		c.t.Fatalf("job %d: %v", id, err)
	}
	return res.Jobs[0]
}

// jobByID returns the record with exactly that id from the full list.
func (c *cluster) jobByID(id uint32) (api.JobInfo, bool) {
	res, err := c.client.Jobs(c.ctx(), api.JobQuery{})
	if err != nil {
		return api.JobInfo{}, false
	}
	for _, j := range res.Jobs {
		if j.JobID == id {
			return j, true
		}
	}
	return api.JobInfo{}, false
}

// waitState waits until job id is in state.
func (c *cluster) waitState(id uint32, state string, d time.Duration) api.JobInfo {
	c.t.Helper()
	var last api.JobInfo
	defer func() {
		if c.t.Failed() {
			c.t.Logf("job %d last seen %s (%s) %s", id, last.State, last.Reason, last.StateDesc)
		}
	}()
	c.eventually(d, fmt.Sprintf("job %d in %s", id, state), func() bool {
		j, ok := c.jobByID(id)
		last = j
		return ok && j.State == state
	})
	return last
}

// runs returns the stored accounting rows of job id.
func (c *cluster) runs(id uint32) []RunRow {
	c.t.Helper()
	all, err := c.store.Runs(context.Background())
	if err != nil {
		c.t.Fatal(err)
	}
	var out []RunRow
	for _, r := range all {
		if r.JobID == id {
			out = append(out, r)
		}
	}
	return out
}

func (c *cluster) readOut(name string) string {
	data, _ := os.ReadFile(filepath.Join(c.work, name))
	return strings.TrimSpace(string(data))
}

func (c *cluster) control(op string, jobs ...string) api.JobControlResponse {
	c.t.Helper()
	res, err := c.client.Control(c.ctx(), api.JobControlRequest{Op: op, Jobs: jobs})
	if err != nil {
		c.t.Fatalf("%s %v: %v", op, jobs, err)
	}
	for _, r := range res.Results {
		if r.Error != "" {
			c.t.Fatalf("%s %s: %s", op, r.Job, r.Error)
		}
	}
	return res
}

func idStr(id uint32) string { return strconv.FormatUint(uint64(id), 10) }

// staticGPUs is a gres.conf line declaring n GPUs ("" for none).
func staticGPUs(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("Name=gpu Count=%d\n", n)
}

// acctStore returns an in-memory accounting database for cluster with the
// sacctmgr lines applied (as root).
func acctStore(t *testing.T, cluster, script string) acct.Store {
	t.Helper()
	store := acct.NewMemStore()
	env := acct.RunEnv{ExecEnv: acct.ExecEnv{Actor: acct.Actor{Name: "root"}, DefaultCluster: cluster, ReadFile: os.ReadFile}}
	lines := append([]string{"add cluster " + cluster}, strings.Split(script, "\n")...)
	for _, line := range lines {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "sacctmgr"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words, err := splitWords(line)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := acct.Run(context.Background(), store, append([]string{"-i"}, words...), env); err != nil {
			t.Fatalf("sacctmgr %s: %v", line, err)
		}
	}
	return store
}

// splitWords splits a sacctmgr line on blanks, keeping "quoted words".
func splitWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, in = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}

// sharedDir is a temporary directory with the given mode. A job that runs
// as a real user of this machine (the tests' alice is uid 1001, which may
// exist) must reach its script and write its output: t.TempDir's
// directories are root's and closed to others. The jobs' working directory
// is world-writable and sticky like /tmp.
func sharedDir(t *testing.T, mode os.FileMode) string {
	dir, err := os.MkdirTemp("", "sluice-ctld-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
