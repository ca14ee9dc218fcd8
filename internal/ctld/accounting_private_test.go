package ctld

import (
	"testing"
	"time"
)

// TestAccountingPrivateData: an ordinary user reads every user's job
// accounting (slurmdbd's rule, checked on Slurm 24.11: alice's sacct -a
// and /slurmdb/jobs list bob's job), except with PrivateData=jobs.
func TestAccountingPrivateData(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		extra    string
		wantSeen bool
	}{{"", true}, {"PrivateData=jobs\n", false}} {
		c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: tc.extra})
		id := c.submit(c.wrap("true"))
		c.waitState(id, "COMPLETED", 10*time.Second)
		res, err := c.ctl.accounting(c.ctx(), Who{UID: 4242, GID: 4242, User: "nobodyelse", Via: "token"})
		if err != nil {
			t.Fatal(err)
		}
		seen := false
		for _, r := range res.Records {
			seen = seen || r.JobID == id
		}
		if seen != tc.wantSeen || res.Admin {
			t.Errorf("%q: another user's job seen=%v (want %v), admin=%v", tc.extra, seen, tc.wantSeen, res.Admin)
		}
	}
}
