package ctld

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// BenchmarkSubmitParallel measures durable submissions through the API:
// 16 clients on the Unix socket, every job stored (SQLite WAL,
// synchronous=FULL, group commit) before its id is returned. Nodes have
// no agents, so the jobs stay queued and the scheduler runs on a growing
// queue as it would under a submission storm.
//
//	go test ./internal/ctld -run - -bench SubmitParallel -benchtime 5000x
func BenchmarkSubmitParallel(b *testing.B) {
	dir := b.TempDir()
	store, err := OpenSQLite(context.Background(), dir+"/ctld.db")
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	cfg := testConf(b, dir, 4, "")
	ctl, err := New(context.Background(), Options{Conf: cfg, StateDir: dir, Store: store, Socket: shortSocket(b),
		Listen: "none", Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		b.Fatal(err)
	}
	defer ctl.Close()
	spec := api.JobSpec{Name: "bench", Wrap: "true", Script: "#!/bin/sh\ntrue\n", WorkDir: dir,
		Environment: []string{"PATH=/usr/bin:/bin", "HOME=/root", "USER=root", "LANG=C.UTF-8"}}
	const clients = 16
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := api.NewUnixClient(ctl.Socket())
			for next.Add(1) <= int64(b.N) {
				if _, err := cl.Submit(context.Background(), api.SubmitRequest{Spec: spec}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "jobs/s")
}
