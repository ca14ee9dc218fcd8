package cli

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestE2ESrunInterruptOptions: on Ctrl-C, srun -X only forwards SIGINT
// and waits for the tasks however long they take (here 2 s: no forced
// termination after a second), and srun --quit-on-interrupt ends the
// step at once without forwarding SIGINT.
func TestE2ESrunInterruptOptions(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 1, "")
	slow := "trap 'echo caught INT; sleep 2; exit 3' INT; echo ready; while :; do sleep 0.1; done"
	interrupted := func(args ...string) (int, string, string) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(1500 * time.Millisecond)
			cancel()
		}()
		return c.srunWith(ctx, "", nil, args...)
	}
	rc, out, errs := interrupted("-X", "sh", "-c", slow)
	if rc != 3 || !strings.Contains(out, "caught INT") || !strings.Contains(errs, "srun: sending Ctrl-C to StepId=") ||
		strings.Contains(errs, "forcing job termination") {
		t.Errorf("srun -X: exit %d, out %q, err %q", rc, out, errs)
	}
	rc, out, errs = interrupted("--quit-on-interrupt", "sh", "-c", slow)
	if rc == 0 || rc == 3 || strings.Contains(out, "caught INT") || strings.Contains(errs, "sending Ctrl-C") ||
		!strings.Contains(errs, "srun: forcing job termination") {
		t.Errorf("srun --quit-on-interrupt: exit %d, out %q, err %q", rc, out, errs)
	}
}
