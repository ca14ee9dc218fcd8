package noded

import (
	"io"
	"log/slog"
	"os"
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

func benchLaunch(b *testing.B, clients int) {
	a, err := New(Config{Name: "bench", Spool: b.TempDir(), PollInterval: 5 * time.Millisecond, CgroupBase: "none", CPUs: 1, MemoryMB: 1,
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
}

func benchReq(id uint32, dir string) api.LaunchRequest {
	return api.LaunchRequest{JobID: id, User: "u", UID: uint32(os.Getuid()), GID: uint32(os.Getgid()),
		Script: "#!/bin/sh\ntrue\n", SubmitDir: dir, StdOut: "/dev/null", KillWaitSec: 1}
}
