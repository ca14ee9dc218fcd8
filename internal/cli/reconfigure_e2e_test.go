package cli

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestReconfigure: scontrol reconfigure rereads slurm.conf without
// stopping jobs (a running job keeps running, a new partition appears,
// a changed limit applies); a configuration the controller cannot start
// on is refused with Slurm's "slurm_reconfigure error: Unspecified error"
// and the cluster goes on with the previous one; a key only a restart
// can change is named; and scontrol accepts Slurm's abbreviation.
func TestReconfigure(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a cluster")
	}
	c := upCluster(t, 2, "")
	if rc, out, errs := c.run("sbatch", "-o", "/dev/null", "--wrap", "sleep 60"); rc != 0 {
		t.Fatalf("sbatch: %d %s %s", rc, out, errs)
	}
	c.waitState("1", "RUNNING")
	base, err := os.ReadFile(c.conf)
	if err != nil {
		t.Fatal(err)
	}
	write := func(extra string) {
		if err := os.WriteFile(c.conf, append(append([]byte{}, base...), extra...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	partitions := func() string {
		_, out, _ := c.run("sinfo", "-h", "-o", "%P %l")
		return out
	}
	steps := []struct {
		name, extra string
		args        []string
		rc          int
		stderr      string
		partitions  string // a line sinfo must show afterwards ("" none)
	}{
		{"new partition", "PartitionName=extra Nodes=node1 MaxTime=10\n", []string{"reconfigure"}, 0, "", "extra 10:00"},
		{"changed limit, abbreviated", "PartitionName=extra Nodes=node1 MaxTime=20\n", []string{"reconfig"}, 0, "", "extra 20:00"},
		{"restart-only key", "PartitionName=extra Nodes=node1 MaxTime=20\nClusterName=other\n", []string{"reconfigure"}, 0,
			"scontrol: warning: ClusterName changed: it takes effect when the controller is restarted\n", "extra 20:00"},
	}
	for _, st := range steps {
		write(st.extra)
		rc, _, errs := c.run("scontrol", st.args...)
		if rc != st.rc || errs != st.stderr {
			t.Errorf("%s: rc %d stderr %q, want %d %q", st.name, rc, errs, st.rc, st.stderr)
		}
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(partitions(), st.partitions) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if got := partitions(); !strings.Contains(got, st.partitions) {
			t.Errorf("%s: sinfo shows %q, want a line %q", st.name, got, st.partitions)
		}
		if j := c.waitState("1", "RUNNING"); j.State != "RUNNING" {
			t.Errorf("%s: job 1 is %s", st.name, j.State)
		}
	}
	// A configuration the controller cannot start on: scontrol itself
	// names the file and line (Slurm's scontrol leaves it to the
	// controller, which answers "Unspecified error"); asked directly, the
	// controller refuses as slurmctld does and keeps its configuration.
	write("PartitionName=extra Nodes=node1 MaxTime=20\nPartitionName=bad Nodes=node99\n")
	if rc, _, errs := c.run("scontrol", "reconfigure"); rc != 1 || !strings.Contains(errs, "slurm.conf:") || !strings.Contains(errs, `unknown node "node99"`) {
		t.Errorf("bad configuration: rc %d stderr %q", rc, errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err = c.client().Reconfigure(ctx)
	cancel()
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Message != "Unspecified error" {
		t.Errorf("controller asked to start on a bad configuration: %v", err)
	}
	write("PartitionName=extra Nodes=node1 MaxTime=20\n")
	if got := partitions(); !strings.Contains(got, "extra 20:00") || strings.Contains(got, "bad") {
		t.Errorf("after a refused reconfigure sinfo shows %q", got)
	}
	// Nodes stay usable: a job submitted after the reconfigures runs.
	if rc, out, errs := c.run("sbatch", "-p", "extra", "-o", "/dev/null", "--wrap", "true"); rc != 0 {
		t.Fatalf("sbatch after reconfigure: %d %s %s", rc, out, errs)
	}
	c.waitState("2", "COMPLETED")
}
