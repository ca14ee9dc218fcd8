package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

func init() {
	RegisterBench("list", BenchSub{Summary: "controller memory per pending job, squeue (full and -j) and sbatch latency under concurrent listings, at --jobs pending",
		Run: runBenchList})
}

// benchListResult is what `sluice bench list` prints.
type benchListResult struct {
	Jobs int `json:"pending_jobs"`
	// RSSBytesPerJob is the growth of this process's resident set (the
	// controller: no agents run here) from before the first submission to
	// after the last, after a collection that returns freed memory to the
	// system; HeapBytesPerJob the growth of the live heap.
	RSSBytesPerJob  int64   `json:"controller_rss_bytes_per_pending_job"`
	HeapBytesPerJob int64   `json:"controller_heap_bytes_per_pending_job"`
	SubmitS         float64 `json:"submit_s"`
	// SqueueMS is the median wall time of a `squeue` process listing
	// every job (output discarded), SqueueBytes its output; SqueueCtlCPUMS
	// the controller's CPU per listing, SqueueCPUMS the client's.
	SqueueMS       float64 `json:"squeue_ms"`
	SqueueCtlCPUMS float64 `json:"squeue_controller_cpu_ms"`
	SqueueCPUMS    float64 `json:"squeue_client_cpu_ms"`
	SqueueBytes    int     `json:"squeue_output_bytes"`
	SqueueJMS      float64 `json:"squeue_j_ms"`
	SqueueJCtlMS   float64 `json:"squeue_j_controller_cpu_ms"`
	// SbatchIdleMS and SbatchBusyMS are the median wall times of `sbatch
	// -H --wrap true` processes on the idle controller and while
	// Listers processes run full listings back to back.
	SbatchIdleMS  float64 `json:"sbatch_idle_ms"`
	SbatchBusyMS  float64 `json:"sbatch_under_listings_ms"`
	SbatchBusyMax float64 `json:"sbatch_under_listings_max_ms"`
	// SubmitIdleMS and SubmitBusyMS are the same for submissions through
	// the API from this process (no process start): the controller's own
	// answer time.
	SubmitIdleMS   float64 `json:"api_submit_idle_ms"`
	SubmitBusyMS   float64 `json:"api_submit_under_listings_ms"`
	Listers        int     `json:"concurrent_listings"`
	ListingsDuring int     `json:"listings_completed_during"`
	GOMAXPROCS     int     `json:"gomaxprocs"`
	NumCPU         int     `json:"num_cpu"`
}

// runBenchList fills the controller with --jobs held jobs (individual
// submissions, each with the submitter's environment, as sbatch sends
// it), then times squeue and sbatch processes against it.
func runBenchList(ctx context.Context, env *Env, args []string) int {
	fs := flag.NewFlagSet("bench list", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	jobs := fs.Int("jobs", 10000, "pending jobs")
	reps := fs.Int("reps", 5, "squeue runs per figure (median)")
	listers := fs.Int("listers", 4, "concurrent full listings during the busy sbatch phase (0 skips both sbatch phases)")
	sbatchN := fs.Int("sbatch", 10, "sbatch processes per phase")
	prof := fs.String("cpuprofile", "", "write a CPU profile of the listing phases (after the fill) to this file")
	memprof := fs.String("memprofile", "", "write a heap profile after the fill to this file")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	b, err := startBenchCluster(ctx, 4, 2)
	if err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	defer b.close()
	res := benchListResult{Jobs: *jobs, Listers: *listers, GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU()}
	rss0, heap0 := settledRSS(), heapInUse()
	d, err := b.submitAPI(*jobs, 4)
	if err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	res.SubmitS = d.Seconds()
	res.RSSBytesPerJob = (settledRSS() - rss0) / int64(*jobs)
	res.HeapBytesPerJob = (heapInUse() - heap0) / int64(*jobs)
	if *memprof != "" {
		if err := writeHeapProfile(*memprof); err != nil {
			return Errorf(env, "bench", "%v", err)
		}
	}
	if stop := benchProfile(*prof); stop != nil {
		defer stop()
	}
	if err := b.timeSqueue(&res, *reps); err != nil {
		return Errorf(env, "bench", "%v", err)
	}
	if *listers > 0 && *sbatchN > 0 {
		if err := b.timeSbatch(&res, *sbatchN, *listers); err != nil {
			return Errorf(env, "bench", "%v", err)
		}
	}
	out, _ := json.Marshal(res)
	fmt.Fprintln(env.Stdout, string(out))
	return 0
}

// settledRSS is the resident set after a collection that hands freed
// pages back to the system.
func settledRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// command runs this binary as a Slurm command against the bench cluster.
func (b *benchCluster) command(args ...string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, args...)
	cmd.Env, cmd.Dir = append(os.Environ(), "SLURM_CONF="+filepath.Join(b.dir, "slurm.conf")), b.dir
	return cmd, nil
}

// countWriter counts what a listing prints.
type countWriter struct{ n atomic.Int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n.Add(int64(len(p))); return len(p), nil }

// runTimed runs one command and returns its wall time, its own CPU and
// this process's (the controller's) CPU meanwhile.
func (b *benchCluster) runTimed(out io.Writer, args ...string) (wall, cpu, ctl time.Duration, err error) {
	cmd, err := b.command(args...)
	if err != nil {
		return
	}
	cmd.Stdout = out
	c0, t0 := cpuTime(), time.Now()
	if err = cmd.Run(); err != nil {
		err = fmt.Errorf("%s: %v", strings.Join(args, " "), err)
		return
	}
	wall, ctl = time.Since(t0), cpuTime()-c0
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return
}

func median(ds []time.Duration) float64 {
	slices.Sort(ds)
	return ms(ds[len(ds)/2])
}

// timeSqueue times full listings and `squeue -j` of one job.
func (b *benchCluster) timeSqueue(res *benchListResult, reps int) error {
	var walls, cpus, ctls, jwalls, jctls []time.Duration
	for i := 0; i < reps; i++ {
		w := &countWriter{}
		wall, cpu, ctl, err := b.runTimed(w, "squeue")
		if err != nil {
			return err
		}
		walls, cpus, ctls = append(walls, wall), append(cpus, cpu), append(ctls, ctl)
		res.SqueueBytes = int(w.n.Load())
		id := strconv.Itoa(1 + i*res.Jobs/max(reps, 1))
		if wall, _, ctl, err = b.runTimed(io.Discard, "squeue", "-j", id); err != nil {
			return err
		}
		jwalls, jctls = append(jwalls, wall), append(jctls, ctl)
	}
	res.SqueueMS, res.SqueueCPUMS, res.SqueueCtlCPUMS = median(walls), median(cpus), median(ctls)
	res.SqueueJMS, res.SqueueJCtlMS = median(jwalls), median(jctls)
	return nil
}

// timeSbatch times n sequential sbatch processes on the idle controller,
// then n more while listers processes list every job back to back.
func (b *benchCluster) timeSbatch(res *benchListResult, n, listers int) error {
	idle, err := b.sbatchTimes(n)
	if err != nil {
		return err
	}
	res.SbatchIdleMS = median(idle)
	api0, err := b.apiSubmitTimes(n)
	if err != nil {
		return err
	}
	res.SubmitIdleMS = median(api0)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var done atomic.Int64
	for i := 0; i < listers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, _, err := b.runTimed(io.Discard, "squeue"); err == nil {
					done.Add(1)
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // the listings under way
	busy, err := b.sbatchTimes(n)
	var api1 []time.Duration
	if err == nil {
		api1, err = b.apiSubmitTimes(n)
	}
	close(stop)
	wg.Wait()
	if err != nil {
		return err
	}
	res.SbatchBusyMS, res.SbatchBusyMax = median(busy), ms(slices.Max(busy))
	res.SubmitBusyMS = median(api1)
	res.ListingsDuring = int(done.Load())
	return nil
}

func (b *benchCluster) sbatchTimes(n int) ([]time.Duration, error) {
	var out []time.Duration
	for i := 0; i < n; i++ {
		wall, _, _, err := b.runTimed(io.Discard, "sbatch", "-H", "-o", "/dev/null", "--wrap", "true")
		if err != nil {
			return nil, err
		}
		out = append(out, wall)
	}
	return out, nil
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	runtime.GC()
	return pprof.WriteHeapProfile(f)
}

// apiSubmitTimes submits n held jobs through the API one at a time.
func (b *benchCluster) apiSubmitTimes(n int) ([]time.Duration, error) {
	cl := api.NewUnixClient(b.sock)
	var out []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		if _, err := cl.Submit(b.ctx, api.SubmitRequest{Spec: b.spec(true)}); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}
