package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/ctld"
	"github.com/sluice-hpc/sluice/internal/noded"
)

func init() {
	RegisterBench("submit", BenchSub{Summary: "submission throughput (API sequential/parallel, sbatch processes) and submit-to-start latency",
		Run: runBenchSubmit})
	RegisterBench("drain", BenchSub{Summary: "2,000 `--wrap true` jobs queued on unavailable nodes, then released on 4 agents: time to complete all",
		Run: runBenchDrain})
}

// benchCluster is a throwaway cluster in a temporary state directory:
// the controller (SQLite store, synchronous=FULL), and node agents in
// this process running real processes through the job shim (the sluice
// binary itself).
type benchCluster struct {
	dir    string
	cfg    *conf.Config
	ctl    *ctld.Controller
	stop   func()
	agents []*noded.Agent
	sock   string
	ctx    context.Context
}

// startBenchCluster writes a slurm.conf of nodes x cpus and starts the
// controller; agents are started by startAgents.
func startBenchCluster(ctx context.Context, nodes, cpus int) (*benchCluster, error) {
	dir, err := os.MkdirTemp("", "sluice-bench-")
	if err != nil {
		return nil, err
	}
	os.Chmod(dir, 0o711) // the state directory: private but traversable (ctld.StateDirMode)
	port, err := api.FreePort()
	if err != nil {
		return nil, err
	}
	text := GenerateConf(GenConf{State: dir, Nodes: nodes, CPUs: cpus * nodes, MemoryMB: 1024 * int64(nodes) * 10 / 9,
		Port: port, User: userName(os.Getuid())})
	// Room for every benchmark job (Slurm's default MaxJobCount is 10,000).
	text += "MaxJobCount=1000000\n"
	path := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return nil, err
	}
	cfg, _, err := conf.Load(path)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c, stop, err := startController(ctx, cfg, ctld.Options{Listen: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Logger: log})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &benchCluster{dir: dir, cfg: cfg, ctl: c, stop: stop, sock: c.Socket(), ctx: ctx}, nil
}

// startAgents starts one agent per node and waits until every node is
// idle.
func (b *benchCluster) startAgents() error {
	agents, err := startLocalAgents(b.ctx, b.cfg, b.ctl, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	b.agents = agents
	return b.waitNodes(func(n api.NodeRecord) bool { return strings.HasPrefix(n.State, "IDLE") })
}

func (b *benchCluster) waitNodes(ok func(api.NodeRecord) bool) error {
	cl := api.NewUnixClient(b.sock)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		res, err := cl.Nodes(b.ctx)
		if err == nil {
			n := 0
			for _, r := range res.Nodes {
				if ok(r) {
					n++
				}
			}
			if n == len(res.Nodes) {
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("nodes did not reach the expected state")
}

func (b *benchCluster) close() {
	for _, a := range b.agents {
		a.Close()
	}
	b.stop()
	os.RemoveAll(b.dir)
}

// spec is the job of the benchmarks: `--wrap true` with the submitter's
// environment, as sbatch sends it.
func (b *benchCluster) spec(hold bool) api.JobSpec {
	s := api.JobSpec{Name: "bench", Wrap: "true", Hold: hold, WorkDir: b.dir, Output: "/dev/null"}
	s.Environment = os.Environ()
	return s
}

// benchSubmitResult is what `sluice bench submit` prints.
type benchSubmitResult struct {
	APISeqJobs         int     `json:"api_sequential_jobs"`
	APISeqPerSec       float64 `json:"api_sequential_jobs_per_s"`
	APIParJobs         int     `json:"api_parallel_jobs"`
	APIParClients      int     `json:"api_parallel_clients"`
	APIParPerSec       float64 `json:"api_parallel_jobs_per_s"`
	APICPUMSPerJob     float64 `json:"api_cpu_ms_per_job"`
	SbatchSeqJobs      int     `json:"sbatch_sequential_jobs"`
	SbatchSeqPerSec    float64 `json:"sbatch_sequential_jobs_per_s"`
	SbatchParJobs      int     `json:"sbatch_parallel_jobs"`
	SbatchParClients   int     `json:"sbatch_parallel_clients"`
	SbatchParPerSec    float64 `json:"sbatch_parallel_jobs_per_s"`
	LatencyJobs        int     `json:"latency_jobs"`
	SubmitToStartMedMS float64 `json:"submit_to_start_median_ms"`
	SubmitToStartMaxMS float64 `json:"submit_to_start_max_ms"`
	SubmitToStartCtlMS float64 `json:"submit_to_start_controller_median_ms"`
	Submitted          int     `json:"submitted"`
	StoredAfterRestart int     `json:"stored_after_restart"`
	BytesPerPendingJob int64   `json:"controller_heap_bytes_per_pending_job"`
	Store              string  `json:"store"`
	GOMAXPROCS         int     `json:"gomaxprocs"`
	NumCPU             int     `json:"num_cpu"`
}

// runBenchSubmit measures submission throughput of held jobs (so that
// launching does not compete with submitting): through the API with one
// client and with --clients parallel clients, and through real sbatch
// processes; then, with the jobs cancelled, the submit-to-start latency
// of single jobs on the idle cluster. Finally the controller is closed
// and a fresh one recovers the store: every acknowledged job must be
// there.
func runBenchSubmit(ctx context.Context, env *Env, args []string) int {
	fs := flag.NewFlagSet("bench submit", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	jobs := fs.Int("jobs", 20000, "jobs per API phase")
	clients := fs.Int("clients", 32, "parallel API clients")
	sbatchJobs := fs.Int("sbatch", 1000, "jobs submitted by sequential sbatch processes (0 skips)")
	sbatchClients := fs.Int("sbatch-clients", 4, "parallel sbatch submitters")
	latency := fs.Int("latency", 50, "jobs for the submit-to-start latency")
	prof := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if stop := benchProfile(*prof); stop != nil {
		defer stop()
	}
	b, err := startBenchCluster(ctx, 4, 2)
	if err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	defer b.close()
	if err := b.startAgents(); err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	res := benchSubmitResult{Store: "sqlite (WAL, synchronous=FULL)", GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU()}
	heap0 := heapInUse()
	cpu0 := cpuTime()
	// API, one client.
	d, err := b.submitAPI(*jobs, 1)
	if err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	res.APISeqJobs, res.APISeqPerSec = *jobs, perSec(*jobs, d)
	res.BytesPerPendingJob = (heapInUse() - heap0) / int64(*jobs)
	// API, parallel clients.
	if d, err = b.submitAPI(*jobs, *clients); err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	res.APIParJobs, res.APIParClients, res.APIParPerSec = *jobs, *clients, perSec(*jobs, d)
	// CPU of the whole process (controller, store, HTTP and the clients)
	// per job: the figure the load on a shared machine does not change.
	res.APICPUMSPerJob = ms(cpuTime()-cpu0) / float64(2**jobs)
	res.Submitted = 2 * *jobs
	// sbatch processes.
	if *sbatchJobs > 0 {
		if d, err = b.submitSbatch(*sbatchJobs, 1); err != nil {
			return Errorf(env, "bench", "%v", err)
		}
		res.SbatchSeqJobs, res.SbatchSeqPerSec = *sbatchJobs, perSec(*sbatchJobs, d)
		if d, err = b.submitSbatch(*sbatchJobs, *sbatchClients); err != nil {
			return Errorf(env, "bench", "%v", err)
		}
		res.SbatchParJobs, res.SbatchParClients, res.SbatchParPerSec = *sbatchJobs, *sbatchClients, perSec(*sbatchJobs, d)
		res.Submitted += 2 * *sbatchJobs
	}
	// Latency on an idle cluster: cancel the held jobs first.
	cl := api.NewUnixClient(b.sock)
	if _, err := cl.Control(ctx, api.JobControlRequest{Op: api.OpCancel, Filter: api.JobFilter{States: []string{"PENDING"}}}); err != nil {
		return Errorf(env, "bench", "cancel held jobs: %v", err)
	}
	if *latency > 0 {
		med, mx, ctlMed, err := b.latency(*latency)
		if err != nil {
			return Errorf(env, "bench", "%v", err)
		}
		res.LatencyJobs, res.SubmitToStartMedMS, res.SubmitToStartMaxMS, res.SubmitToStartCtlMS = *latency, med, mx, ctlMed
		res.Submitted += *latency
	}
	n, err := b.storedJobs()
	if err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	res.StoredAfterRestart = n
	out, _ := json.Marshal(res)
	fmt.Fprintln(env.Stdout, string(out))
	if n < res.Submitted {
		return Errorf(env, "bench", "only %d of %d acknowledged jobs were recovered from the store", n, res.Submitted)
	}
	return 0
}

func perSec(n int, d time.Duration) float64 {
	return float64(int(float64(n)/d.Seconds()*10)) / 10
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// submitAPI submits n held jobs through the API with k clients (each its
// own connection) and returns the wall time.
func (b *benchCluster) submitAPI(n, k int) (time.Duration, error) {
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	t0 := time.Now()
	for c := 0; c < k; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := api.NewUnixClient(b.sock)
			req := api.SubmitRequest{Spec: b.spec(true)}
			for next.Add(1) <= int64(n) {
				if _, err := cl.Submit(b.ctx, req); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(t0), firstErr
}

// submitSbatch runs n `sbatch -H --wrap true` processes, k at a time.
func (b *benchCluster) submitSbatch(n, k int) (time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	env := append(os.Environ(), "SLURM_CONF="+filepath.Join(b.dir, "slurm.conf"))
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	t0 := time.Now()
	for c := 0; c < k; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				cmd := exec.Command(self, "sbatch", "-H", "-o", "/dev/null", "--parsable", "--wrap", "true")
				cmd.Env, cmd.Dir = env, b.dir
				if out, err := cmd.CombinedOutput(); err != nil {
					mu.Lock()
					firstErr = fmt.Errorf("sbatch: %v: %s", err, out)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(t0), firstErr
}

// latency submits jobs one at a time on the idle cluster and measures
// how long each takes to be seen RUNNING (or already finished) by a
// polling client, and the controller's own StartTime - SubmitTime.
func (b *benchCluster) latency(n int) (med, mx, ctlMed float64, err error) {
	cl := api.NewUnixClient(b.sock)
	var seen, ctl []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		r, err := cl.Submit(b.ctx, api.SubmitRequest{Spec: b.spec(false)})
		if err != nil {
			return 0, 0, 0, err
		}
		id := strconv.FormatUint(uint64(r.JobID), 10)
		for {
			res, err := cl.Jobs(b.ctx, api.JobQuery{IDs: []string{id}})
			if err != nil {
				return 0, 0, 0, err
			}
			j := res.Jobs[0]
			if j.State != "PENDING" {
				seen = append(seen, time.Since(t0))
				if !j.StartTime.IsZero() {
					ctl = append(ctl, j.StartTime.Sub(j.SubmitTime))
				}
				break
			}
			time.Sleep(200 * time.Microsecond)
		}
		// Let the job finish so that the cluster is idle again.
		for {
			res, err := cl.Jobs(b.ctx, api.JobQuery{IDs: []string{id}})
			if err != nil || len(res.Jobs) == 0 || res.Jobs[0].State != "RUNNING" && res.Jobs[0].State != "PENDING" {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	slices.Sort(seen)
	slices.Sort(ctl)
	if len(ctl) > 0 {
		ctlMed = ms(ctl[len(ctl)/2])
	}
	return ms(seen[len(seen)/2]), ms(seen[len(seen)-1]), ctlMed, nil
}

// storedJobs closes the controller and agents, opens a fresh controller
// on the same state directory (no listeners) and counts what it
// recovered: the acknowledged jobs must all be there.
func (b *benchCluster) storedJobs() (int, error) {
	for _, a := range b.agents {
		a.Close()
	}
	b.agents = nil
	b.stop()
	b.stop = func() {}
	c, stop, err := startController(b.ctx, b.cfg, ctld.Options{Listen: "none",
		Socket: filepath.Join(b.dir, "recover.sock"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return 0, err
	}
	defer stop()
	res, err := api.NewUnixClient(c.Socket()).Accounting(b.ctx)
	if err != nil {
		return 0, err
	}
	ids := map[uint32]bool{}
	for _, r := range res.Records {
		ids[r.JobID] = true
	}
	return len(ids), nil
}

// benchDrainResult is what `sluice bench drain` prints.
type benchDrainResult struct {
	Jobs               int     `json:"jobs"`
	Nodes              int     `json:"nodes"`
	CPUsPerNode        int     `json:"cpus_per_node"`
	SubmitS            float64 `json:"submit_s"`
	DrainS             float64 `json:"drain_s"`
	JobsPerSec         float64 `json:"jobs_per_s"`
	Completed          int     `json:"completed"`
	BytesPerPendingJob int64   `json:"controller_heap_bytes_per_pending_job"`
	MaxRSSMB           float64 `json:"max_rss_mb"`
	// SelfCPUMSPerJob is the CPU of this process (controller, store and
	// agents) per job; SupervisorCPUMSPerJob that of the node supervisors
	// (`noded-shim serve`, started by the agents) and JobCPUMSPerJob that
	// of the job processes they reaped: together, the whole cost of a job.
	SelfCPUMSPerJob       float64 `json:"self_cpu_ms_per_job"`
	SupervisorCPUMSPerJob float64 `json:"supervisor_cpu_ms_per_job"`
	JobCPUMSPerJob        float64 `json:"job_cpu_ms_per_job"`
	// SchedCycles and SchedMS are the controller's scheduling cycles
	// (sdiag) over the whole run and the time they took in total.
	SchedCycles int     `json:"sched_cycles"`
	SchedMS     float64 `json:"sched_ms"`
	GOMAXPROCS  int     `json:"gomaxprocs"`
	NumCPU      int     `json:"num_cpu"`
}

// runBenchDrain queues --jobs `--wrap true` jobs while every node is
// drained (nothing can start: Slurm's partition-down situation), measures
// the controller's heap per pending job, then resumes the nodes and
// times until every job has completed on the real agents.
func runBenchDrain(ctx context.Context, env *Env, args []string) int {
	fs := flag.NewFlagSet("bench drain", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	jobs := fs.Int("jobs", 2000, "jobs to queue")
	nodes := fs.Int("nodes", 4, "node agents")
	cpus := fs.Int("cpus", 16, "CPUs per node (job slots; the jobs are trivial, so more slots than cores)")
	prof := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if stop := benchProfile(*prof); stop != nil {
		defer stop()
	}
	b, err := startBenchCluster(ctx, *nodes, *cpus)
	if err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	defer b.close()
	if err := b.startAgents(); err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	cl := api.NewUnixClient(b.sock)
	all := strings.Join(b.cfg.NodeNames(), ",")
	if err := cl.UpdateNode(ctx, api.NodeUpdateRequest{Nodes: all, State: "DRAIN", Reason: "bench drain"}); err != nil {
		return Errorf(env, "bench", "drain nodes: %v", err)
	}
	res := benchDrainResult{Jobs: *jobs, Nodes: *nodes, CPUsPerNode: *cpus, GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU()}
	heap0 := heapInUse()
	t0 := time.Now()
	if err := b.submitJobs(*jobs, 4); err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	res.SubmitS = time.Since(t0).Seconds()
	res.BytesPerPendingJob = (heapInUse() - heap0) / int64(*jobs)
	t1, self0 := time.Now(), cpuTime()
	if err := cl.UpdateNode(ctx, api.NodeUpdateRequest{Nodes: all, State: "RESUME"}); err != nil {
		return Errorf(env, "bench", "resume nodes: %v", err)
	}
	done, err := b.waitAllDone(*jobs, 5*time.Minute)
	res.DrainS = time.Since(t1).Seconds()
	res.Completed = done
	res.JobsPerSec = perSec(done, time.Since(t1))
	res.MaxRSSMB = maxRSSMB()
	if done > 0 {
		res.SelfCPUMSPerJob = ms(cpuTime()-self0) / float64(done)
	}
	if done > 0 {
		sup, jobs := b.supervisorCPU()
		res.SupervisorCPUMSPerJob, res.JobCPUMSPerJob = ms(sup)/float64(done), ms(jobs)/float64(done)
	}
	if d, err := cl.Sdiag(ctx); err == nil {
		res.SchedCycles, res.SchedMS = d.Cycles, float64(d.TotalCycleUS)/1000
	}
	out, _ := json.Marshal(res)
	fmt.Fprintln(env.Stdout, string(out))
	if err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	return 0
}

// supervisorCPU sums the CPU time of this cluster's node supervisors
// (their own, and their reaped children's: the jobs), from /proc.
func (b *benchCluster) supervisorCPU() (self, children time.Duration) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if !strings.Contains(string(cmd), noded.ShimCommandName+"\x00serve\x00"+b.dir) {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 15 {
			continue
		}
		tick := func(i int) time.Duration {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			return time.Duration(v) * 10 * time.Millisecond // USER_HZ = 100
		}
		self += tick(11) + tick(12)
		children += tick(13) + tick(14)
	}
	return self, children
}

// submitJobs submits n runnable `--wrap true` jobs with k API clients.
func (b *benchCluster) submitJobs(n, k int) error {
	var next atomic.Int64
	errs := make(chan error, k)
	var wg sync.WaitGroup
	for c := 0; c < k; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := api.NewUnixClient(b.sock)
			req := api.SubmitRequest{Spec: b.spec(false)}
			for next.Add(1) <= int64(n) {
				if _, err := cl.Submit(b.ctx, req); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// waitAllDone waits until n jobs have finished (any final state), polling
// the controller's counters (listing 2,000 jobs every poll would cost the
// controller more than the drain itself), then checks every job's state
// once.
func (b *benchCluster) waitAllDone(n int, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		_, _, finished, err := b.ctl.JobCounts(b.ctx)
		if err != nil {
			return 0, err
		}
		if finished >= n {
			break
		}
		if time.Now().After(deadline) {
			return finished, fmt.Errorf("only %d of %d jobs finished in %v", finished, n, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	res, err := api.NewUnixClient(b.sock).Jobs(b.ctx, api.JobQuery{})
	if err != nil {
		return 0, err
	}
	done, bad := 0, 0
	for _, j := range res.Jobs {
		switch j.State {
		case "PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED":
		case "COMPLETED":
			done++
		default:
			done++
			bad++
		}
	}
	if bad > 0 {
		return done, fmt.Errorf("%d of %d jobs did not complete successfully", bad, n)
	}
	return done, nil
}

// benchProfile starts a CPU profile into path ("" = none) and returns
// its stop function.
func benchProfile(path string) func() {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil
	}
	if pprof.StartCPUProfile(f) != nil {
		f.Close()
		return nil
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
