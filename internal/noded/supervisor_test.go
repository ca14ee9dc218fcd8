package noded

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestOneSupervisorPerNode checks that jobs of one agent share one
// resident supervisor (no process exec'd per job) and that it reaps them.
func TestOneSupervisorPerNode(t *testing.T) {
	a := newAgent(t)
	var sup int
	for id := uint32(2200); id < 2205; id++ {
		launch(t, a, batch(t, id, "exit 3"))
		a.mu.Lock()
		pid := a.jobs[id].rec.ShimPID
		a.mu.Unlock()
		if sup == 0 {
			sup = pid
		}
		if pid != sup || pid == 0 {
			t.Fatalf("job %d supervised by pid %d, earlier jobs by %d", id, pid, sup)
		}
	}
	for id := uint32(2200); id < 2205; id++ {
		if st := waitFinal(t, a, id, 3*time.Second); st.State != api.StateFailed || st.ExitCode != "3:0" {
			t.Errorf("job %d: %s %s, want FAILED 3:0", id, st.State, st.ExitCode)
		}
	}
	if n := len(childrenOf(sup)); n != 0 {
		t.Errorf("supervisor %d still has %d children after the jobs ended", sup, n)
	}
}

// TestSupervisorDeath kills the node's supervisor while a job runs. The
// job keeps running (it is in its own process group) and the agent keeps
// tracking it through /proc; its exit status can no longer be known, so
// it ends FAILED with a reason, as a batch step whose slurmstepd died. The
// next launch gets a new supervisor.
func TestSupervisorDeath(t *testing.T) {
	a := newAgent(t)
	st := launch(t, a, batch(t, 2300, "sleep 1; exit 0"))
	a.mu.Lock()
	sup, tick := a.jobs[2300].rec.ShimPID, a.jobs[2300].rec.PIDTick
	a.mu.Unlock()
	killProcess(t, sup)
	if !sameProcess(st.PID, tick) {
		t.Fatalf("the job died with its supervisor")
	}
	final := waitFinal(t, a, 2300, 5*time.Second)
	if final.State != api.StateFailed || final.ExitCode != "1:0" || !strings.Contains(final.Reason, "supervisor died") {
		t.Fatalf("job of a dead supervisor: %+v", final)
	}
	launch(t, a, batch(t, 2301, "true"))
	if st := waitFinal(t, a, 2301, 3*time.Second); st.State != api.StateCompleted {
		t.Fatalf("launch after the supervisor died: %+v", st)
	}
	a.mu.Lock()
	next := a.jobs[2301].rec.ShimPID
	a.mu.Unlock()
	if next == sup || next == 0 {
		t.Fatalf("new job supervised by %d (dead one %d)", next, sup)
	}
}

// childrenOf lists the live (not zombie) children of pid.
func childrenOf(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if err != nil || i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) >= 2 && f[1] == strconv.Itoa(pid) && f[0] != "Z" {
			out = append(out, p)
		}
	}
	return out
}
