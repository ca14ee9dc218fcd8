package noded

import (
	"os"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// BenchmarkLaunchTrivialJob measures launching a `true` batch job and
// seeing it COMPLETED: shim start, fork/exec as the user, output file, exit
// record, poll. It bounds how fast an agent drains a queue of tiny jobs.
func BenchmarkLaunchTrivialJob(b *testing.B) {
	a, err := New(Config{Name: "bench", Spool: b.TempDir(), PollInterval: 5 * time.Millisecond, CgroupBase: "none", CPUs: 1, MemoryMB: 1,
		GPUs: GPUDiscovery{LookPath: noNvidiaSMI, Root: b.TempDir()}})
	if err != nil {
		b.Fatal(err)
	}
	a.Start(b.Context())
	defer a.Close()
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := uint32(i + 1)
		req := benchReq(id, dir)
		if _, err := a.Launch(req); err != nil {
			b.Fatal(err)
		}
	}
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
