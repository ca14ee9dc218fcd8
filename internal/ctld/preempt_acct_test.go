package ctld

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// preemptQOSExtra is preempt/qos with REQUEUE and fair-share priorities,
// as on the oracle (README's base slurm.conf).
const preemptQOSExtra = `PriorityType=priority/multifactor
PriorityWeightFairshare=100000
PreemptType=preempt/qos
PreemptMode=REQUEUE
AccountingStorageEnforce=associations,limits,qos`

const preemptQOSAccounts = `add qos low
add qos high Preempt=low Priority=100
add account research
add user alice,bob Account=research QOS=normal,low,high`

// rawUsage is the user's RawUsage in sshare.
func (c *cluster) rawUsage(user string) float64 {
	c.t.Helper()
	res, err := c.ctl.do(c.ctx(), func(ls *loopState) (any, error) {
		return ls.sshare(Who{User: "root"}, api.SshareRequest{All: true, Parsable2: true, NoHeader: true,
			Users: []string{user}, Format: []string{"User", "RawUsage"}})
	})
	if err != nil {
		c.t.Fatal(err)
	}
	for _, line := range strings.Split(res.(api.TextResponse).Text, "\n") {
		if u, v, ok := strings.Cut(line, "|"); ok && u == user {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	c.t.Fatalf("sshare has no row for %s:\n%s", user, res.(api.TextResponse).Text)
	return 0
}

// TestPreemptedRunChargedAndRecorded: a job requeued by preemption
// (oracle: preempt/qos, PreemptMode=REQUEUE) is charged to fair-share for
// the time it ran, like any run (Slurm's sshare RawUsage of the preempted
// user grew by CPUs × elapsed of the preempted run), and its accounting
// record is the run's: sacct -D showed
//
//	1  a1  PREEMPTED  0:0  4  billing=4,cpu=4,mem=4000M,node=1  <submit> <submit> <start> <end>
//	1  a1  PENDING    0:0  0                                    <requeue> <requeue+delay> Unknown Unknown
//
// i.e. the original submit and eligible times, the run's allocation, exit
// code 0:0, and a PENDING record submitted at the requeue and eligible at
// its begin time.
func TestPreemptedRunChargedAndRecorded(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: preemptQOSExtra,
		acct: acctStore(t, "test", preemptQOSAccounts)})
	as := func(name string) Who { return Who{UID: 0, GID: 0, User: name, Group: "root", Via: "socket"} }
	job := func(qos string) api.JobSpec {
		return c.wrap("sleep 60", func(s *api.JobSpec) { s.QOS, s.NTasks = qos, 2 })
	}
	low := c.submitAs(as("alice"), job("low"))
	c.waitState(low, "RUNNING", 5*time.Second)
	submitted := c.job(low).SubmitTime
	time.Sleep(2200 * time.Millisecond)
	high := c.submitAs(as("bob"), job("high"))
	c.waitState(high, "RUNNING", 5*time.Second)
	pend := c.waitState(low, "PENDING", 5*time.Second)
	// scontrol: EligibleTime of the requeued job is its begin time (oracle:
	// SubmitTime=16:33:11 EligibleTime=16:35:12 while PENDING BeginTime).
	// StartTime (the expected start) is the begin time too.
	if p := c.job(low); !p.EligibleTime.Equal(p.BeginTime) || !p.BeginTime.After(p.SubmitTime) ||
		!p.ExpectedStart.Equal(p.BeginTime) {
		t.Errorf("requeued job: EligibleTime %v ExpectedStart %v BeginTime %v SubmitTime %v, want eligible and "+
			"expected to start at the begin time", p.EligibleTime, p.ExpectedStart, p.BeginTime, p.SubmitTime)
	}

	// Charged in whole seconds (2 s × 2 CPUs, decayed) and shown truncated.
	if u := c.rawUsage("alice"); u < 3 {
		t.Errorf("alice's RawUsage %v after a 2-CPU run of 2.2 s was preempted, want >= 3", u)
	}
	runs := c.runs(low)
	if len(runs) != 1 {
		t.Fatalf("stored runs %+v, want the PREEMPTED one", runs)
	}
	r := runs[0]
	if r.State != "PREEMPTED" || r.ExitCode != "0:0" || !r.Submit.Equal(submitted) || r.Eligible.IsZero() ||
		r.Eligible.After(r.Start) || !strings.Contains(r.AllocTRES, "cpu=2") || !r.Start.Before(r.End) {
		t.Errorf("preempted run %+v, want PREEMPTED 0:0 submitted %v, eligible before its start, cpu=2", r, submitted)
	}
	acct, err := c.client.Accounting(c.ctx())
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range acct.Records {
		if rec.JobID != low || rec.Step != "" || rec.State != "PENDING" {
			continue
		}
		if !rec.Submit.Equal(pend.SubmitTime) || !rec.Eligible.After(rec.Submit) || rec.AllocTRES != "" {
			t.Errorf("pending record %+v, want submitted at the requeue %v and eligible at its begin time",
				rec, pend.SubmitTime)
		}
	}
}

// TestSuspendedJobChargedToFairShare: a job suspended by preemption is
// still charged to fair-share by the priority passes, for its wall time
// (oracle, partition_prio SUSPEND,GANG: alice's RawUsage after 174 s was
// 16 × 174 for her 16 CPUs of jobs started at once, two of which had been
// suspended 60 s and 150 s of it).
func TestSuspendedJobChargedToFairShare(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{t: time.Now().Truncate(time.Second)}
	c := newCluster(t, openTestSQLite(t), clusterOpts{conf: s5Conf + "PriorityCalcPeriod=1\n", now: clock.now,
		acct: acctStore(t, "ack", "add account research\nadd user alice,bob Account=research")})
	as := func(name string) Who { return Who{UID: 0, GID: 0, User: name, Group: "root", Via: "socket"} }
	low := c.submitAs(as("alice"), c.wrap("sleep 60", func(s *api.JobSpec) { s.NTasks = 4 }))
	c.waitState(low, "RUNNING", 5*time.Second)
	hi := c.submitAs(as("bob"), c.wrap("sleep 60", func(s *api.JobSpec) { s.NTasks = 4; s.Partitions = []string{"hipri"} }))
	c.waitState(hi, "RUNNING", 5*time.Second)
	c.waitState(low, "SUSPENDED", 5*time.Second)
	// Past PriorityCalcPeriod (1 min), 10 s at a time so that the agents'
	// heartbeats keep the nodes up: a pass charges.
	for i := 0; i < 9; i++ {
		clock.advance(10 * time.Second)
		time.Sleep(100 * time.Millisecond)
	}
	c.eventually(5*time.Second, "bob's job charged by a pass", func() bool { return c.rawUsage("bob") > 0 })
	if j := c.job(low); j.State != "SUSPENDED" {
		t.Fatalf("alice's job %s, want SUSPENDED", j.State)
	}
	acct, err := c.client.Accounting(c.ctx())
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range acct.Records {
		if rec.JobID == low && rec.Step == "" && rec.SuspendedSec != 90 {
			t.Errorf("suspended job's record: Suspended %d s, want 90 (the ongoing suspension)", rec.SuspendedSec)
		}
	}
	// The pass at +60 s charged bob's running job and alice's suspended
	// one alike (4 CPUs × 60 s).
	if a, b := c.rawUsage("alice"), c.rawUsage("bob"); a < 4*55 || a != b {
		t.Errorf("RawUsage alice %v (suspended job), bob %v (its preemptor), want both 4 CPUs × 60 s", a, b)
	}
}

// TestNodeFailRunCharged: a run ended by a node failure (NODE_FAIL, or
// requeued) is charged to fair-share up to the failure, like any run.
func TestNodeFailRunCharged(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: preemptQOSExtra,
		acct: acctStore(t, "test", preemptQOSAccounts)})
	as := func(name string) Who { return Who{UID: 0, GID: 0, User: name, Group: "root", Via: "socket"} }
	id := c.submitAs(as("alice"), c.wrap("sleep 30", func(s *api.JobSpec) { s.NTasks = 2 }))
	c.waitState(id, "RUNNING", 5*time.Second)
	c.agents["n1"].Close()
	c.waitNodes("down*", 1)
	// Charged at all (it was 0 before): how long it ran until the failure
	// was noticed depends on the machine's load, so no exact figure.
	if u := c.rawUsage("alice"); u <= 0 {
		t.Errorf("alice's RawUsage %v after her 2-CPU job ran until the node failed, want > 0", u)
	}
}
