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
	rc.fillPending(10000)
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

// fillPending submits n held jobs as root, 8 at a time.
func (rc *restCluster) fillPending(n int) {
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
				rc.t.Error(err)
			}
		}()
	}
	wg.Wait()
}

// TestRESTJobsMany: the benchmark's listing, small: every pending job
// submitted is listed once, in job id order.
func TestRESTJobsMany(t *testing.T) {
	rc := newRestCluster(t)
	rc.fillPending(50)
	code, m, raw := rc.do(rc.as("root"), "GET", "/slurm/v0.0.42/jobs", nil)
	if code != 200 {
		t.Fatalf("jobs: %d %s", code, raw)
	}
	jobs := m["jobs"].([]any)
	if len(jobs) != 50 {
		t.Fatalf("%d jobs, want 50", len(jobs))
	}
	for i, j := range jobs {
		if id := j.(map[string]any)["job_id"].(float64); int(id) != i+1 {
			t.Fatalf("jobs[%d] is job %v, want %d", i, id, i+1)
		}
	}
}
