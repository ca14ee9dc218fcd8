package restd

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// BenchmarkRESTJobs10k measures GET /slurm/v0.0.42/jobs with 10,000
// pending jobs: the controller's listing, the data_parser rendering and
// the HTTP answer, as a slurmrestd client sees them.
func BenchmarkRESTJobs10k(b *testing.B) {
	rc := newRestCluster(b)
	const n = 10000
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			spec := api.JobSpec{Name: "bench", Script: "#!/bin/sh\nsleep 300", WorkDir: "/tmp", Hold: true}
			if _, err := rc.root.Submit(context.Background(), api.SubmitRequest{Spec: spec}); err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	root := rc.as("root")
	req, _ := http.NewRequest("GET", rc.http.URL+"/slurm/v0.0.42/jobs", nil)
	req.Header.Set("X-SLURM-USER-NAME", root.name)
	req.Header.Set("X-SLURM-USER-TOKEN", root.token)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		size, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("HTTP %d", resp.StatusCode)
		}
		b.SetBytes(size)
	}
}
