package noded

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// BenchmarkLaunchTrivialJob measures launching a `true` batch job and
// seeing it COMPLETED: shim start, fork/exec as the user, output file, exit
// record, poll. It bounds how fast an agent drains a queue of tiny jobs.
func BenchmarkLaunchTrivialJob(b *testing.B) { benchLaunch(b, 1) }

// BenchmarkLaunchTrivialJobParallel launches from 8 goroutines, as a
// controller starting many jobs on one node does.
func BenchmarkLaunchTrivialJobParallel(b *testing.B) { benchLaunch(b, 8) }

// BenchmarkLaunchTrivialJobCgroup is the parallel case with a cgroup v2
// directory per job, as a root agent runs them (skipped elsewhere).
func BenchmarkLaunchTrivialJobCgroup(b *testing.B) {
	if os.Geteuid() != 0 || cgroup2Mount() == "" {
		b.Skip("needs root and cgroup v2")
	}
	benchLaunchIn(b, 8, filepath.Join(cgroup2Mount(), "sluice-test", fmt.Sprintf("bench-%d", os.Getpid())))
}

func benchLaunch(b *testing.B, clients int) { benchLaunchIn(b, clients, "none") }

func benchLaunchIn(b *testing.B, clients int, cgroups string) {
	a, err := New(Config{Name: "bench", Spool: b.TempDir(), PollInterval: 5 * time.Millisecond, CgroupBase: cgroups, CPUs: 1, MemoryMB: 1,
		GPUs: GPUDiscovery{LookPath: noNvidiaSMI, Root: b.TempDir()}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	a.Start(b.Context())
	defer a.Close()
	dir := b.TempDir()
	b.ResetTimer()
	ids := make(chan uint32, b.N)
	for i := 0; i < b.N; i++ {
		ids <- uint32(i + 1)
	}
	close(ids)
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				if _, err := a.Launch(benchReq(id, dir)); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for i := 0; i < b.N; i++ {
		for {
			st, _ := a.Job(uint32(i + 1))
			if st.State == "COMPLETED" {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	a.mu.Lock()
	sup := a.supPID
	a.mu.Unlock()
	if ms, ok := procCPUMillis(sup); ok {
		b.ReportMetric(ms/float64(b.N), "supervisor-cpu-ms/job")
	}
}

// procCPUMillis is the user+system CPU time of pid so far (clock ticks of
// 10 ms, fields 14 and 15 of /proc/PID/stat).
func procCPUMillis(pid int) (float64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) * 10, true
}

func benchReq(id uint32, dir string) api.LaunchRequest {
	return api.LaunchRequest{JobID: id, User: "u", UID: uint32(os.Getuid()), GID: uint32(os.Getgid()),
		Script: "#!/bin/sh\ntrue\n", SubmitDir: dir, StdOut: "/dev/null", KillWaitSec: 1}
}
