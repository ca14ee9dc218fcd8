package oracle

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSluiceAgainstGolden plays every scenario on `sluice up` and compares
// each point with what real Slurm printed (golden/*.golden). A point that
// differs fails the test unless differences.txt lists it with its reason.
// SLUICE_DIFF_ONLY=a,b plays only the named scenarios.
func TestSluiceAgainstGolden(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the differential suite needs root: it starts clusters and runs commands as alice, bob, charlie and dave (CI runs as root)")
	}
	if testing.Short() {
		t.Skip("-short: the differential suite plays real clusters for minutes")
	}
	var only []string
	if v := os.Getenv("SLUICE_DIFF_ONLY"); v != "" {
		only = strings.Split(v, ",")
	}
	suite, err := LoadSuite(".", only)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureUsers(); err != nil {
		t.Fatal(err)
	}
	// The binary must be reachable by the scenario users: t.TempDir's
	// directories are closed to them.
	binDir, err := os.MkdirTemp("", "sluice-diff-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(binDir) })
	if err := os.Chmod(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "sluice")
	build := exec.Command("go", "build", "-o", bin, "github.com/sluice-hpc/sluice/cmd/sluice")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	var log strings.Builder
	outs := suite.CheckGolden(ctx, func() Target { return &SluiceTarget{Binary: bin, BaseConf: suite.BaseConf} }, 4, &log)
	var report strings.Builder
	total, unexpected, stale := Report(&report, outs, suite.Known)
	t.Log("\n" + report.String())
	for _, o := range outs {
		if o.Err != nil {
			t.Errorf("%s: %v", o.Scenario.Name, o.Err)
		}
	}
	for _, d := range unexpected {
		t.Errorf("%s step %d (%s): %s differs from Slurm and is not in differences.txt", d.Scenario, d.Step, d.What, d.Point)
	}
	for _, s := range stale {
		t.Logf("now equal to Slurm, remove from differences.txt: %s", s)
	}
	// The summary line, also when the test passes (go test -v shows it).
	t.Log(total.String())
}
