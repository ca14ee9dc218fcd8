package ctld

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestNodeUsageHistory: the controller records when nodes are DOWN or
// fully drained (sreport's Down) and in a MAINT reservation (PlannedDown),
// stores the spans, and keeps counting a span a restart left open.
func TestNodeUsageHistory(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b backend) {
		c := newCluster(t, b.open(t), clusterOpts{nodes: 2})
		start := time.Now().Truncate(time.Second)
		if err := c.client.UpdateNode(c.ctx(), api.NodeUpdateRequest{Nodes: "n1", State: "DRAIN", Reason: "disk"}); err != nil {
			t.Fatal(err)
		}
		c.mustResv("create", "reservation", "ReservationName=m", "StartTime=now", "Duration=10", "Nodes=n2",
			"Users=root", "Flags=MAINT")
		time.Sleep(1500 * time.Millisecond)
		c.ctl.Close()
		c.startController() // the drain span stays open across the restart
		time.Sleep(1500 * time.Millisecond)
		if err := c.client.UpdateNode(c.ctx(), api.NodeUpdateRequest{Nodes: "n1", State: "RESUME"}); err != nil {
			t.Fatal(err)
		}
		c.mustResv("delete", "ReservationName=m")
		time.Sleep(200 * time.Millisecond)
		end := time.Now().Add(time.Hour)
		got, err := c.client.NodeUsage(c.ctx(), start, end)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("down %d CPU-s, planned down %d CPU-s", got.DownCPUSeconds, got.PlannedDownCPUSeconds)
		// 2 CPUs for about 3 s each (whole seconds, sampled every tick).
		for name, v := range map[string]int64{"down": got.DownCPUSeconds, "planned down": got.PlannedDownCPUSeconds} {
			if v < 2*2 || v > 2*8 {
				t.Errorf("%s: %d CPU-seconds, want about 6", name, v)
			}
		}
		// Nothing before the window: an hour-old window is empty.
		old, err := c.client.NodeUsage(c.ctx(), start.Add(-2*time.Hour), start.Add(-time.Hour))
		if err != nil || old.DownCPUSeconds != 0 || old.PlannedDownCPUSeconds != 0 {
			t.Errorf("window before the changes: %+v %v", old, err)
		}
	})
}
