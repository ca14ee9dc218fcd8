package cli

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// TestBenchListSmall runs `sluice bench list` on a small queue through
// the built binary and checks its figures: squeue printed a header and
// one line per job, every phase was timed, memory per job was measured.
func TestBenchListSmall(t *testing.T) {
	bin := sluiceBinary(t)
	out, err := exec.Command(bin, "bench", "list", "--jobs", "60", "--reps", "1", "--listers", "2",
		"--sbatch", "2").Output()
	if err != nil {
		t.Fatalf("bench list: %v\n%s", err, out)
	}
	var r benchListResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("bench list output %q: %v", out, err)
	}
	// The default layout: the header (85 bytes, NODELIST(REASON) its
	// widest column) and 82 bytes per held job, "(JobHeldUser)" its
	// last; the sbatch phases come after the listings.
	if want := 85 + 82*60; r.SqueueBytes != want {
		t.Errorf("squeue printed %d bytes, want %d", r.SqueueBytes, want)
	}
	if r.SqueueMS <= 0 || r.SqueueJMS <= 0 || r.SbatchIdleMS <= 0 || r.SbatchBusyMS <= 0 || r.SubmitBusyMS <= 0 ||
		r.HeapBytesPerJob <= 0 || r.ListingsDuring == 0 {
		t.Errorf("missing figures: %+v", r)
	}
}
