package sched

import (
	"fmt"
	"testing"
)

// TestTop replays the oracle's scontrol-top scenario on the core: alice's
// pending jobs 2-5 (priorities 39, 78, 39, 156) and bob's job 6 (39), each
// step's scontrol top list and the priorities and nice values squeue
// showed after it.
func TestTop(t *testing.T) {
	h := newHarness(t, resvConf)
	h.queue("alice", "-N 4 --exclusive --time=10") // job 1: fills the cluster
	h.schedule()
	for i, prio := range []uint32{39, 78, 39, 156} {
		j := h.queue("alice", "-n 1 --time=10")
		if want := JobID(i + 2); j.ID != want {
			t.Fatalf("job id %d, want %d", j.ID, want)
		}
		j.Priority, j.UID = prio, 1001
	}
	bob := h.queue("bob", "-n 1 --time=10")
	bob.Priority, bob.UID = 39, 1002
	h.schedule()
	for _, step := range []struct {
		top  []JobID
		want string // job:priority:nice for jobs 2-6
	}{
		{[]JobID{4}, "2:0:39 3:39:39 4:156:-117 5:117:39 6:39:0"},
		{[]JobID{2, 3}, "2:0:39 3:156:-78 4:98:-59 5:58:98 6:39:0"}, // job 2 at 0 counts as held
		{[]JobID{6}, "2:0:39 3:156:-78 4:98:-59 5:58:98 6:39:0"},    // alone in bob's queue
		{[]JobID{2, 6}, "2:0:39 3:156:-78 4:98:-59 5:58:98 6:39:0"},
		{[]JobID{5, 4}, "2:0:39 3:58:20 4:98:-59 5:156:0 6:39:0"},
		{[]JobID{3}, "2:0:39 3:156:-78 4:49:-10 5:107:49 6:39:0"},
	} {
		h.st.Top(step.top)
		got := ""
		for id := JobID(2); id <= 6; id++ {
			j := h.job(id)
			got += fmt.Sprintf(" %d:%d:%d", id, j.Priority, j.Req.Nice)
		}
		if got[1:] != step.want {
			t.Errorf("top %v: %s, want %s", step.top, got[1:], step.want)
		}
	}
}
