package cli

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// answerEater is a Unix socket in front of the controller's that passes
// every request on and drops every answer: the request is stored, the
// client hears nothing back (a controller killed just after its commit,
// a connection cut on the way back).
func answerEater(t *testing.T, upstream string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "eat.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("unix", upstream)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(io.Discard, up) // the answer, never passed back
			}()
		}
	}()
	return path
}

// TestSbatchLostAnswer is issue 17's finding 8: an answer lost after the
// request reached the controller is told apart from a connect failure
// (Slurm's "(receive failure)", with what it means), and sbatch's
// retries carry one SubmitKey, so they never make a second job.
func TestSbatchLostAnswer(t *testing.T) {
	saved := submitRetries
	submitRetries = []time.Duration{10 * time.Millisecond, 10 * time.Millisecond}
	t.Cleanup(func() { submitRetries = saved })
	h := newCtlHarness(t, qosDemo)
	real := h.sock
	h.sock = answerEater(t, real)
	code, out, errb := h.run(runSbatch, "--wrap", "true")
	if code != 1 || out != "" || strings.Count(errb, "; retrying\n") != 2 ||
		!strings.HasSuffix(errb, "sbatch: error: Batch job submission failed: Unable to contact slurm controller (receive failure): "+
			"the request was sent but no answer came back; the job may have been stored, check with squeue\n") {
		t.Fatalf("sbatch with lost answers: %d %q %q", code, out, errb)
	}
	res, err := api.NewUnixClient(real).Jobs(context.Background(), api.JobQuery{})
	if err != nil || len(res.Jobs) != 1 {
		t.Fatalf("jobs after 3 tries with lost answers: %d, %v; want 1", len(res.Jobs), err)
	}
	// A socket nobody listens on: nothing was sent.
	h.sock = filepath.Join(t.TempDir(), "none.sock")
	ln, _ := net.Listen("unix", h.sock)
	ln.Close()
	code, _, errb = h.run(runSbatch, "--wrap", "true")
	if code != 1 || errb != "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n" {
		t.Fatalf("sbatch with no controller: %d %q", code, errb)
	}
}
