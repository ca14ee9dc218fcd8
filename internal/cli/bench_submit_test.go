package cli

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// TestBenchSubmitDrainSmall runs `sluice bench submit` and `sluice bench
// drain` on small numbers through the built binary (the agents' job shim
// is the binary itself) and checks their invariants: every acknowledged
// job is recovered from the store, every drained job completes.
func TestBenchSubmitDrainSmall(t *testing.T) {
	bin := sluiceBinary(t)
	out, err := exec.Command(bin, "bench", "submit", "--jobs", "200", "--clients", "4", "--sbatch", "3",
		"--sbatch-clients", "2", "--latency", "3").Output()
	if err != nil {
		t.Fatalf("bench submit: %v\n%s", err, out)
	}
	var sub benchSubmitResult
	if err := json.Unmarshal(out, &sub); err != nil {
		t.Fatalf("bench submit output %q: %v", out, err)
	}
	if want := 2*200 + 2*3 + 3; sub.Submitted != want || sub.StoredAfterRestart != want {
		t.Errorf("submitted %d, recovered %d, want %d of each", sub.Submitted, sub.StoredAfterRestart, want)
	}
	if sub.APISeqPerSec <= 0 || sub.APIParPerSec <= 0 || sub.SbatchSeqPerSec <= 0 || sub.SubmitToStartMedMS <= 0 {
		t.Errorf("missing figures: %+v", sub)
	}
	out, err = exec.Command(bin, "bench", "drain", "--jobs", "40").Output()
	if err != nil {
		t.Fatalf("bench drain: %v\n%s", err, out)
	}
	var dr benchDrainResult
	if err := json.Unmarshal(out, &dr); err != nil {
		t.Fatalf("bench drain output %q: %v", out, err)
	}
	if dr.Completed != 40 || dr.DrainS <= 0 || dr.BytesPerPendingJob <= 0 {
		t.Errorf("bench drain: %+v", dr)
	}
}
