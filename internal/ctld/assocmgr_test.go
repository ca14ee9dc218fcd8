package ctld

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestAssocMgrCountsJobs: scontrol show assoc_mgr counts what the live
// jobs hold as slurmctld does: a job counts in its association and every
// ancestor (Grp figures), a held job is submitted but not accruing, the
// node TRES counts distinct nodes (three jobs on two nodes hold node=2),
// a limit prints LIMIT(USED), and a QOS lists its users and accounts in
// the order of their first job.
func TestAssocMgrCountsJobs(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2, extra: "PriorityType=priority/multifactor\nDefMemPerCPU=100",
		acct: acctStore(t, "test", `add account research GrpJobs=3
add account physics
add user alice Account=research MaxJobs=5 GrpTRES=cpu=8
add user bob Account=physics`)})
	sleep := func(s *api.JobSpec) { s.TimeLimitSec = 600 }
	a1 := c.submitAs(alice, c.wrap("sleep 300", sleep))
	b1 := c.submitAs(bob, c.wrap("sleep 300", sleep))
	a2 := c.submitAs(alice, c.wrap("sleep 300", sleep))
	c.submitAs(alice, c.wrap("sleep 300", sleep, func(s *api.JobSpec) { s.Hold = true }))
	for _, id := range []uint32{a1, b1, a2} {
		c.waitState(id, "RUNNING", 10*time.Second)
	}
	var res api.TextResponse
	if code, msg := c.as(alice, "POST", api.PathAssocMgr, api.AssocMgrRequest{Flags: []string{"assoc", "qos"}}, &res); code != 200 {
		t.Fatalf("assoc_mgr: %d %s", code, msg)
	}
	records := assocMgrRecords(res.Text)
	for _, tc := range []struct{ record, want string }{
		{"Account=root UserName= ", "GrpJobs=N(3) GrpJobsAccrue=N(0)"},
		{"Account=root UserName= ", "GrpSubmitJobs=N(4) "},
		{"Account=root UserName= ", "GrpTRES=cpu=N(3),mem="},
		{"Account=root UserName= ", ",node=N(2),"},
		{"Account=research UserName= ", "GrpJobs=3(2) "},
		{"Account=research UserName= ", "ParentAccount=root(1) Lineage=/research/ DefAssoc=No"},
		{"Account=research UserName=alice", "MaxJobs=5(2) MaxJobsAccrue= MaxSubmitJobs= MaxWallPJ="},
		{"Account=research UserName=alice", "GrpTRES=cpu=8(2),"},
		{"Account=research UserName=alice", "Lineage=/research/0-alice/ DefAssoc=Yes"},
		{"Account=physics UserName=bob", "GrpJobs=N(1) "},
		{"QOS=normal(1)", "GrpJobs=N(3) GrpJobsAccrue=N(0) GrpSubmitJobs=N(4)"},
		{"QOS=normal(1)", "    Account Limits\n      research\n        MaxJobsPA=N(2) MaxJobsAccruePA=N(0) MaxSubmitJobsPA=N(3)\n"},
		{"QOS=normal(1)", "    User Limits\n      alice("},
		{"QOS=normal(1)", "      bob("},
	} {
		rec, ok := records[tc.record]
		if !ok {
			t.Errorf("no record starting %q in:\n%s", tc.record, res.Text)
			continue
		}
		if !strings.Contains(rec, tc.want) {
			t.Errorf("record %q lacks %q:\n%s", tc.record, tc.want, rec)
		}
	}
	if qos := records["QOS=normal(1)"]; strings.Index(qos, "alice(") > strings.Index(qos, "bob(") {
		t.Errorf("QOS user limits not in the order of the users' first jobs (alice's job %d came first):\n%s", a1, qos)
	}
}

// assocMgrRecords splits assoc_mgr text into records keyed by the start
// of their first line (up to the association's user name, or the QOS).
func assocMgrRecords(text string) map[string]string {
	out := map[string]string{}
	var key string
	for _, line := range strings.SplitAfter(text, "\n") {
		switch {
		case strings.HasPrefix(line, "ClusterName="):
			f := strings.Fields(line)
			key = f[1] + " " + strings.SplitN(f[2], "(", 2)[0]
			if !strings.HasSuffix(key, "=") {
				key = strings.TrimSuffix(key, " ")
			} else {
				key += " "
			}
		case strings.HasPrefix(line, "QOS="):
			key = strings.TrimSpace(line)
		case !strings.HasPrefix(line, " "):
			key = ""
		}
		if key != "" {
			out[key] += line
		}
	}
	return out
}

// TestAssocMgrPrivateData: under PrivateData=users,accounts,usage a user
// reads only their own user record and user associations (no account
// association), as slurmctld answers; root reads every record.
func TestAssocMgrPrivateData(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: "PrivateData=users,accounts,usage",
		acct: acctStore(t, "test", "add account research\nadd user alice Account=research\nadd user bob Account=research")})
	for _, tc := range []struct {
		who          Who
		want, hidden []string
	}{
		{alice, []string{"UserName=alice(", "Account=research UserName=alice("},
			[]string{"UserName=bob(", "UserName=root(", "Account=research UserName= "}},
		{root, []string{"UserName=alice(", "UserName=bob(", "Account=research UserName= ", "Account=research UserName=bob("}, nil},
	} {
		var res api.TextResponse
		if code, msg := c.as(tc.who, "POST", api.PathAssocMgr, api.AssocMgrRequest{Flags: []string{"users", "assoc"}}, &res); code != 200 {
			t.Fatalf("assoc_mgr as %s: %d %s", tc.who.User, code, msg)
		}
		for _, w := range tc.want {
			if !strings.Contains(res.Text, w) {
				t.Errorf("%s does not see %q:\n%s", tc.who.User, w, res.Text)
			}
		}
		for _, h := range tc.hidden {
			if strings.Contains(res.Text, h) {
				t.Errorf("%s sees %q:\n%s", tc.who.User, h, res.Text)
			}
		}
	}
}
