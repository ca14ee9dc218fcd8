package ctld

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/noded"
)

// TestSupervisorUnreachableDrains is issue 17's finding 4: when the
// node's job supervisor socket is held by something that is not a
// supervisor, the launch fails and the agent has the controller drain
// the node with the reason, instead of the node failing every job while
// it shows idle; once resumed (and the socket free) jobs run again.
func TestSupervisorUnreachableDrains(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	addr, err := noded.SupervisorAddr(filepath.Join(c.dir, "spool", "n1"))
	if err != nil {
		t.Fatal(err)
	}
	squat, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatalf("bind the supervisor's name: %v", err)
	}
	go func() {
		for {
			conn, err := squat.Accept()
			if err != nil {
				return
			}
			conn.Close() // no greeting: not a supervisor
		}
	}()
	c.submit(c.wrap("true"))
	c.eventually(10*time.Second, "node drained", func() bool {
		res, err := c.client.Nodes(c.ctx())
		return err == nil && strings.Contains(res.Nodes[0].State, "DRAIN") &&
			strings.Contains(res.Nodes[0].Reason, "Job supervisor unreachable")
	})
	squat.Close()
	if err := c.client.UpdateNode(c.ctx(), api.NodeUpdateRequest{Nodes: "n1", State: "RESUME"}); err != nil {
		t.Fatal(err)
	}
	id := c.submit(c.wrap("true"))
	c.waitState(id, "COMPLETED", 15*time.Second)
}
