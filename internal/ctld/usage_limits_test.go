package ctld

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/priority"
	"github.com/sluice-hpc/sluice/internal/tres"
)

// TestGrpTRESMinsEndsAndHolds: an account with GrpTRESMins=cpu=2 whose
// decayed usage reaches 2 CPU-minutes. On the oracle (base slurm.conf:
// multifactor, PriorityCalcPeriod=1, AccountingStorageEnforce=
// associations,limits,qos) alice's 4-CPU job under it ended TIMEOUT after
// 76 s (Reason=TimeLimit; slurmctld: "the job is at or exceeds assoc
// 3(budget/(null)/(null)) group max tres(cpu) minutes of 2 with 3"), and
// her next job pended with AssocGrpCPUMinutesLimit. With safe added, a
// running job whose account's limit was lowered below its usage ran on.
//
// The usage is charged here as the priority pass would after 4 CPUs ran
// for a minute (a real minute per test is too long), and the next pass is
// made due; the pass then ends the running job (not with safe) and the
// cycle holds the new one.
func TestGrpTRESMinsEndsAndHolds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		enforce string
		ends    bool
	}{
		{"associations,limits,qos", true},
		{"associations,limits,qos,safe", false},
	} {
		t.Run(c.enforce, func(t *testing.T) { grpTRESMinsScenario(t, c.enforce, c.ends) })
	}
}

func grpTRESMinsScenario(t *testing.T, enforce string, ends bool) {
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: "PriorityType=priority/multifactor\n" +
		"AccountingStorageEnforce=" + enforce,
		acct: acctStore(t, "test", "add account budget GrpTRESMins=cpu=2\nadd user alice Account=budget")})
	as := Who{UID: 0, GID: 0, User: "alice", Group: "root", Via: "socket"}
	// one minute of one CPU: within the limit, which safe requires to start
	first := c.submitAs(as, c.wrap("sleep 60", func(s *api.JobSpec) { s.TimeLimitSec = 60 }))
	c.waitState(first, "RUNNING", 5*time.Second)

	if _, err := c.ctl.do(c.ctx(), func(ls *loopState) (any, error) {
		p := &ls.prio
		i, ok := p.tree.Lookup("budget", "alice")
		if !ok {
			t.Fatal("no association budget/alice in the fair-share tree")
		}
		now := ls.c.now()
		rj := priority.RunningJob{Assoc: i, QOS: "normal", Start: now.Add(-time.Minute), End: now,
			Billing: 4, Alloc: tres.Vector{"cpu": 4}}
		p.tree.Charge(&p.cfg, &rj, now.Add(-time.Minute), now)
		ls.lastPrio = time.Time{} // the next cycle runs the priority pass
		ls.wantSched = true
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if ends {
		if j := c.waitState(first, "TIMEOUT", 10*time.Second); j.Reason != "TimeLimit" {
			t.Errorf("job ended over GrpTRESMins: reason %q, want TimeLimit", j.Reason)
		}
	}

	second := c.submitAs(as, c.wrap("true", func(s *api.JobSpec) { s.TimeLimitSec = 60 }))
	deadline := time.Now().Add(5 * time.Second)
	var j api.JobInfo
	for time.Now().Before(deadline) {
		if j = c.job(second); j.Reason == "AssocGrpCPUMinutesLimit" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if j.State != "PENDING" || j.Reason != "AssocGrpCPUMinutesLimit" {
		t.Errorf("next job under the spent account: %s (%s), want PENDING (AssocGrpCPUMinutesLimit)", j.State, j.Reason)
	}
	if !ends {
		if j := c.job(first); j.State != "RUNNING" {
			t.Errorf("with safe the running job over the limit is %s, want RUNNING (Slurm lets it run on)", j.State)
		}
	}
}
