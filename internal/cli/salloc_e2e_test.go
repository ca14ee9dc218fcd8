package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ESallocNoShell: salloc --no-shell prints the grant, exits 0 at
// once without running its command, and the allocation (named
// "no-shell") stays RUNNING past the silence that ends a salloc's
// allocation whose holder died (InactiveLimit=1 here) until scancel.
func TestE2ESallocNoShell(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 1, "InactiveLimit=1\n")
	marker := filepath.Join(c.state, "ran")
	rc, out, errs := c.run("salloc", "--no-shell", "-N1", "touch", marker)
	if rc != 0 || out != "" || !strings.Contains(errs, "salloc: Granted job allocation 1\nsalloc: Nodes node1 are ready for job\n") ||
		strings.Contains(errs, "Relinquishing") {
		t.Fatalf("salloc --no-shell: exit %d, stdout %q, stderr %q", rc, out, errs)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("salloc --no-shell ran its command")
	}
	time.Sleep(4 * time.Second)
	if j := c.waitState("1", "RUNNING"); j.Name != "no-shell" {
		t.Errorf("allocation's name %q, want no-shell", j.Name)
	}
	if rc, _, errs := c.run("scancel", "1"); rc != 0 {
		t.Fatalf("scancel: %d %s", rc, errs)
	}
	c.waitState("1", "CANCELLED")
}
