package ctld

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
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
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/noded"
)

// chaosDuration is how long TestChaos injects faults: SLUICE_CHAOS_DURATION
// (a Go duration; `make chaos DURATION=20m`), else 40 s (make test; every
// kind of round runs at least once whatever the duration).
func chaosDuration(t *testing.T) time.Duration {
	if s := os.Getenv("SLUICE_CHAOS_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("SLUICE_CHAOS_DURATION: %v", err)
		}
		return d
	}
	return 40 * time.Second
}

// chaosSlurmdTimeout is TestChaos's SlurmdTimeout: long enough for the
// supervisor to fence a silent (stopped) agent's jobs before the
// controller requeues them (the fence comes after max(half of it, 10 s)
// of silence, the requeue at most a heartbeat, a third of it, earlier
// than SlurmdTimeout after the stop), short enough for make test.
const chaosSlurmdTimeout = 24 * time.Second

// chaosLoad submits short jobs at a bounded rate and records the ids the
// controller acknowledged and the names of the submissions it refused.
type chaosLoad struct {
	c       *acceptCluster
	mu      sync.Mutex
	seq     int
	acked   []uint32
	refused map[string]error // by job name: answered with an error, so never stored
	lost    int              // submissions with no answer (may or may not be stored)
}

// chaosScript appends the job's id to the ran file and holds an exclusive
// lock on a file of its own while it runs (its sleep inherits the lock):
// a second copy of the job starting while the first still runs finds the
// lock taken and writes its id to the twice file.
func (c *acceptCluster) chaosScript(sleep string, pad int) string {
	lock := filepath.Join(c.work, "locks", "$SLURM_JOB_ID")
	s := "#!/bin/sh\nexec 9>>" + lock + "\nflock -n 9 || echo $SLURM_JOB_ID >> " + c.twiceFile() + "\n" +
		"echo $SLURM_JOB_ID >> " + c.ranFile() + "\nsleep " + sleep + "\n"
	if pad > 0 {
		s += "#" + strings.Repeat("x", pad) + "\n"
	}
	return s
}

func (c *acceptCluster) twiceFile() string { return filepath.Join(c.work, "twice") }

// submit sends one job (its script padded by pad bytes) and records the
// outcome; it returns the submission's error.
func (l *chaosLoad) submit(ctx context.Context, pad int) error {
	l.mu.Lock()
	l.seq++
	name := "chaos-" + strconv.Itoa(l.seq)
	// Every 20th job runs 15 s, longer than the fencing delay, so that
	// agents are stopped while their jobs run; the others under a second.
	sleep := "0.$(($$ % 9 + 1))"
	if l.seq%20 == 0 {
		sleep = "15"
	}
	l.mu.Unlock()
	spec := api.JobSpec{Name: name, WorkDir: l.c.work, Environment: []string{"PATH=" + os.Getenv("PATH")},
		Script: l.c.chaosScript(sleep, pad)}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	res, err := api.NewUnixClient(filepath.Join(l.c.state, api.SocketFile)).Submit(cctx, api.SubmitRequest{Spec: spec})
	cancel()
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err == nil:
		l.acked = append(l.acked, res.JobID)
	case errors.Is(err, api.ErrNoAnswer) || ctx.Err() != nil:
		l.lost++
	default:
		l.refused[name] = err
	}
	return err
}

func (l *chaosLoad) run(ctx context.Context) {
	for ctx.Err() == nil {
		// The load stays bounded whatever the machine's pace: no new
		// job while chaosBacklog acknowledged jobs have not started yet
		// (a slow or loaded machine would otherwise build a queue the
		// final drain cannot empty).
		if l.notStarted() < chaosBacklog {
			l.submit(ctx, 0)
		}
		select {
		case <-ctx.Done():
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// chaosBacklog bounds the acknowledged jobs that have not started.
const chaosBacklog = 200

// notStarted is how many acknowledged jobs have not written to the ran
// file yet (a requeued job writes again, so this errs low).
func (l *chaosLoad) notStarted() int {
	data, _ := os.ReadFile(l.c.ranFile())
	return len(l.ids()) - bytes.Count(data, []byte("\n"))
}

func (l *chaosLoad) ids() []uint32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.acked)
}

func (l *chaosLoad) refusedNames() map[string]error {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(map[string]error, len(l.refused))
	for k, v := range l.refused {
		m[k] = v
	}
	return m
}

// chaos is one TestChaos run: the cluster, its load and the seeded RNG
// that picks the rounds.
type chaos struct {
	t    *testing.T
	c    *acceptCluster
	rng  *rand.Rand
	load *chaosLoad
	// disk is the tmpfs holding the controller's state directory ("" when
	// it could not be mounted: no full-disk rounds then).
	disk string
}

// chaosKind is one kind of round: a fault, injected and then repaired.
type chaosKind struct {
	name string
	run  func(*chaos)
}

var chaosKinds = []chaosKind{
	{"kill-ctld", (*chaos).killCtld},
	{"kill-agent", (*chaos).killAgent},
	{"stop-agent", (*chaos).stopAgent},
	{"stop-ctld", (*chaos).stopCtld},
	{"full-disk", (*chaos).fullDisk},
}

// chaosInvariantNames are the invariants checked after every round (the
// last two at the end only), for the summary line.
const chaosInvariantNames = "every acknowledged job present, refused submissions absent, " +
	"no job running twice at once, no job run more often than requeued+1, " +
	"no job process alive that the controller thinks ended or elsewhere, " +
	"at the end every acknowledged job COMPLETED having run, no job process left"

// TestChaos is issue 17's chaos test: under a bounded load (a job every
// 150 ms while fewer than chaosBacklog wait to start, each running under
// a second, one in 20 for 15 s, on 2 nodes of 4 CPUs), round after round it picks a fault at random (seeded;
// SLUICE_CHAOS_SEED replays one) and repairs it: SIGKILL of the
// controller or of an agent (restarted at once), SIGSTOP of an agent or
// of the controller for longer than SlurmdTimeout (then SIGCONT: the
// stopped agent's node goes DOWN and its jobs are requeued, fenced by its
// supervisor first), and a full disk under the controller's state
// directory (a tmpfs, filled until submissions are refused, then freed).
// After each round it checks the invariants (chaosInvariantNames). Not
// covered here: a cut network (test/multihost TestMultiHostChaosNetCut).
func TestChaos(t *testing.T) {
	// Beside the other tests: the rounds are meant to run under load.
	t.Parallel()
	bin := acceptSluice(t)
	extra := fmt.Sprintf("SlurmdTimeout=%d\nReturnToService=1\nSchedulerParameters=requeue_delay=2\n", int(chaosSlurmdTimeout/time.Second))
	c := startAcceptCluster(t, bin, acceptOpts{nodes: 2, cpus: 4, extra: extra, stateTmpfs: "512m"})
	os.MkdirAll(filepath.Join(c.work, "locks"), 0o777)
	seed := time.Now().UnixNano()
	if s := os.Getenv("SLUICE_CHAOS_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	ch := &chaos{t: t, c: c, rng: rand.New(rand.NewSource(seed)), load: &chaosLoad{c: c, refused: map[string]error{}},
		disk: c.stateMount}
	t.Logf("seed %d, duration %v, SlurmdTimeout %v, state on tmpfs: %v", seed, chaosDuration(t), chaosSlurmdTimeout, ch.disk != "")
	ctx, stopLoad := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); ch.load.run(ctx) }()
	// Every kind once first (in a seeded order), then at random.
	kinds := ch.kinds()
	first := ch.rng.Perm(len(kinds))
	start := time.Now()
	end := start.Add(chaosDuration(t))
	rounds, checks, counts := 0, 0, map[string]int{}
	for rounds < len(kinds) || time.Now().Before(end) {
		time.Sleep(time.Duration(1000+ch.rng.Intn(2000)) * time.Millisecond)
		k := kinds[ch.rng.Intn(len(kinds))]
		if rounds < len(kinds) {
			k = kinds[first[rounds]]
		}
		began := time.Now()
		k.run(ch)
		ran := time.Since(began)
		rounds++
		counts[k.name]++
		checks += c.chaosInvariants(ch.load, false)
		t.Logf("chaos round %d: %s (%v, checks %v), %d jobs acknowledged so far, %d requeues so far", rounds, k.name,
			ran.Round(100*time.Millisecond), time.Since(began.Add(ran)).Round(100*time.Millisecond), len(ch.load.ids()), c.requeues())
		if t.Failed() {
			break
		}
	}
	stopLoad()
	wg.Wait()
	ids := ch.load.ids()
	t.Logf("rounds done after %v; waiting for the jobs to end", time.Since(start).Round(time.Second))
	c.chaosWaitEnd(ids)
	checks += c.chaosInvariants(ch.load, true)
	t.Logf("chaos: %d rounds (kinds: %s), %d acknowledged jobs (%d submissions refused, %d lost their answer, "+
		"%d requeues, %d jobs fenced), invariants: %s (%d checks passed)", rounds, kindCounts(counts), len(ids),
		len(ch.load.refusedNames()), ch.load.lost, c.requeues(), c.fenced(), chaosInvariantNames, checks)
}

// chaosWaitEnd waits until every acknowledged job is COMPLETED and every
// other job has ended; if that does not come it names the jobs that are
// not there.
func (c *acceptCluster) chaosWaitEnd(ids []uint32) {
	c.t.Helper()
	// The faults leave a backlog (a stopped node holds no jobs for
	// SlurmdTimeout while the load goes on): it drains at the cluster's pace.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var left []string
		m := c.jobs()
		for id, j := range m {
			if !chaosEnded(j.State) || slices.Contains(ids, id) && j.State != "COMPLETED" {
				left = append(left, fmt.Sprintf("%d %s %s on %q restarts %d", id, j.State, j.Reason, j.NodeList, j.RestartCount))
			}
		}
		if m != nil && len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("after 5 minutes, jobs not ended (or acknowledged and not COMPLETED): %v\n%s", left, c.logTails())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// fenced is how many jobs the nodes' supervisors fenced (supervisor.log).
func (c *acceptCluster) fenced() int {
	n := 0
	for _, node := range c.order {
		data, _ := os.ReadFile(filepath.Join(c.spool(node), "supervisor.log"))
		n += strings.Count(string(data), "fencing:")
	}
	return n
}

// requeues is how many times the controller's jobs were requeued.
func (c *acceptCluster) requeues() int {
	n := 0
	for _, j := range c.jobs() {
		n += j.RestartCount
	}
	return n
}

// kinds are the rounds this run can do (no full disk without the tmpfs).
func (ch *chaos) kinds() []chaosKind {
	var ks []chaosKind
	for _, k := range chaosKinds {
		if k.name == "full-disk" && ch.disk == "" {
			ch.t.Logf("no full-disk rounds: the state directory is not on a tmpfs of its own (needs root)")
			continue
		}
		ks = append(ks, k)
	}
	return ks
}

func kindCounts(m map[string]int) string {
	var s []string
	for _, k := range chaosKinds {
		if m[k.name] > 0 {
			s = append(s, fmt.Sprintf("%s %d", k.name, m[k.name]))
		}
	}
	return strings.Join(s, ", ")
}

func (ch *chaos) node() string { return ch.c.order[ch.rng.Intn(len(ch.c.order))] }

func (ch *chaos) killCtld() {
	ch.c.ctld.kill9(ch.t)
	ch.c.startCtld()
}

func (ch *chaos) killAgent() {
	n := ch.node()
	ch.c.agents[n].kill9(ch.t)
	ch.c.startAgent(n)
}

// stopAgent stops an agent for longer than SlurmdTimeout: its supervisor
// fences (kills) the node's jobs, the controller marks the node DOWN and
// requeues them; after SIGCONT the agent registers again and the node
// returns to service (ReturnToService=1).
func (ch *chaos) stopAgent() {
	n := ch.node()
	ch.stopFor(ch.c.agents[n], chaosSlurmdTimeout+3*time.Second)
	ch.c.waitNodesUp(90 * time.Second)
}

// stopCtld stops the controller for longer than SlurmdTimeout: when it
// continues, it must not take its own silence for its nodes'.
func (ch *chaos) stopCtld() {
	ch.stopFor(ch.c.ctld, chaosSlurmdTimeout+3*time.Second)
	ch.c.waitNodesUp(90 * time.Second)
}

func (ch *chaos) stopFor(d *daemon, dur time.Duration) {
	if err := d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		ch.t.Fatalf("kill -STOP %s: %v", d.name, err)
	}
	defer d.cmd.Process.Signal(syscall.SIGCONT)
	time.Sleep(dur)
}

// fullDisk fills the state directory's file system: a submission that no
// longer fits is refused (a big script makes sure one does), reads keep
// working, and once the filler is removed submissions are acknowledged
// again.
func (ch *chaos) fullDisk() {
	c := ch.c
	fill := filepath.Join(ch.disk, "chaos-filler")
	defer os.Remove(fill)
	if err := fillFile(fill); err != nil {
		ch.t.Fatalf("fill the state directory's tmpfs: %v", err)
	}
	// SQLite reuses the room its files already hold (free pages, a WAL
	// grown earlier): big scripts until one no longer fits.
	var refused error
	for stop := time.Now().Add(60 * time.Second); refused == nil && time.Now().Before(stop); {
		if err := ch.load.submit(context.Background(), 256<<10); err != nil && !errors.Is(err, api.ErrNoAnswer) {
			refused = err
		}
	}
	if refused == nil || !strings.Contains(refused.Error(), "Unable to save state") {
		ch.t.Errorf("full disk: no submission refused with \"Unable to save state\": %v", refused)
	}
	if c.jobs() == nil {
		ch.t.Errorf("full disk: the job list cannot be read")
	}
	os.Remove(fill)
	c.wait(30*time.Second, "state save resumed after the disk was freed", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		w, err := c.client.Ping(ctx)
		return err == nil && w.StateSave == ""
	})
	c.wait(30*time.Second, "a submission acknowledged after the disk was freed", func() bool {
		return ch.load.submit(context.Background(), 0) == nil
	})
}

// fillFile writes path until its file system is full.
func fillFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return nil
			}
			return err
		}
	}
}

// waitNodesUp waits until no node is DOWN, drained or not responding.
func (c *acceptCluster) waitNodesUp(d time.Duration) {
	c.t.Helper()
	c.wait(d, "every node back in service", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := c.client.Nodes(ctx)
		if err != nil {
			return false
		}
		for _, n := range res.Nodes {
			if strings.ContainsAny(n.StateShort, "*~#") || strings.HasPrefix(n.StateShort, "down") ||
				strings.HasPrefix(n.StateShort, "drain") {
				return false
			}
		}
		return true
	})
}

// chaosEnded reports whether a job state is final.
func chaosEnded(state string) bool {
	switch state {
	case "PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT":
		return false
	}
	return true
}

// chaosInvariants checks the invariants once (final: every job has ended
// and ran) and returns how many checks it made.
func (c *acceptCluster) chaosInvariants(load *chaosLoad, final bool) int {
	c.t.Helper()
	// What the test saw before the listing: a job acknowledged or run
	// again after it is not in it yet.
	acked, ran := load.ids(), c.ranCounts()
	var jobs map[uint32]api.JobInfo
	c.wait(30*time.Second, "controller answering", func() bool { jobs = c.jobs(); return jobs != nil })
	n := 0
	for _, id := range acked {
		if _, ok := jobs[id]; !ok {
			c.t.Errorf("acknowledged job %d is missing", id)
		}
		n++
	}
	refused := load.refusedNames()
	for id, j := range jobs {
		if err, ok := refused[j.Name]; ok {
			c.t.Errorf("job %d (%s) is stored, but its submission was refused: %v", id, j.Name, err)
		}
		n++
	}
	if data, _ := os.ReadFile(c.twiceFile()); len(data) > 0 {
		c.t.Errorf("jobs started while an earlier run of theirs still ran: %s", strings.Fields(string(data)))
	}
	n++
	for id, k := range ran {
		if j, ok := jobs[id]; ok && k > j.RestartCount+1 {
			c.t.Errorf("job %d ran %d times, requeued %d times", id, k, j.RestartCount)
		}
		n++
	}
	n += c.chaosLiveJobs(jobs)
	if final {
		for _, id := range acked {
			if ran[id] < 1 || jobs[id].State != "COMPLETED" {
				c.t.Errorf("job %d is %s and ran %d times, want COMPLETED having run", id, jobs[id].State, ran[id])
			}
			n++
		}
		for _, node := range c.order {
			for _, id := range c.spoolJobs(node) {
				if !c.exited(node, id) {
					c.t.Errorf("job %d still has processes on %s at the end", id, node)
				}
				n++
			}
		}
	}
	return n
}

// chaosLiveJobs checks that every job process alive on a node belongs to a
// job the controller thinks is running there (looked at again after a
// while: the node may not have delivered an end yet, or not yet carried
// out the controller's kill).
func (c *acceptCluster) chaosLiveJobs(jobs map[uint32]api.JobInfo) int {
	c.t.Helper()
	n := 0
	for _, node := range c.order {
		for _, id := range c.spoolJobs(node) {
			n++
			if c.exited(node, id) || c.runsOn(jobs[id], node) {
				continue
			}
			deadline := time.Now().Add(5 * time.Second)
			for !c.endedOrForgotten(node, id) && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
			}
			if c.endedOrForgotten(node, id) {
				continue
			}
			if now := c.jobs(); now != nil && c.runsOn(now[id], node) {
				continue
			}
			j := jobs[id]
			c.t.Errorf("job %d is %s on %q for the controller but still runs on %s", id, j.State, j.NodeList, node)
		}
	}
	return n
}

// runsOn reports whether the controller has job j active on node.
func (c *acceptCluster) runsOn(j api.JobInfo, node string) bool {
	if j.JobID == 0 || chaosEnded(j.State) || j.State == "PENDING" || j.NodeList == "" {
		return false
	}
	nodes, _ := hostlist.Expand(j.NodeList)
	return slices.Contains(nodes, node)
}

func (c *acceptCluster) spoolJobs(node string) []uint32 { return noded.SpoolJobs(c.spool(node)) }

// mountStateTmpfs puts the state directory on a tmpfs of its own (size
// as mount(8) takes it), unmounted at cleanup; "" when it cannot (not
// root).
func mountStateTmpfs(t *testing.T, dir, size string) string {
	if os.Geteuid() != 0 {
		return ""
	}
	if err := os.MkdirAll(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0711", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Logf("mount tmpfs on %s: %v %s", dir, err, out)
		return ""
	}
	t.Cleanup(func() {
		if t.Failed() { // keep the state for a look
			exec.Command("cp", "-a", dir, dir+"-kept").Run()
		}
		exec.Command("umount", "-l", dir).Run()
	})
	return dir
}
