package ctld

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// billingConf has a partition billed by CPUs (no weights) and one whose
// TRESBillingWeights make a CPU cost 3 and a GB of memory 1 (%s =
// StateSaveLocation). Usage does not decay, so a run's charge is exact.
const billingConf = `ClusterName=test
SlurmctldHost=localhost
StateSaveLocation=%s
SlurmUser=root
SelectTypeParameters=CR_CPU_Memory
KillWait=1
SlurmdTimeout=2
ReturnToService=1
MinJobAge=300
PriorityType=priority/multifactor
PriorityDecayHalfLife=0
PriorityWeightFairshare=1000
NodeName=n[1-2] CPUs=2 RealMemory=2048 State=UNKNOWN
PartitionName=plain Nodes=n[1-2] Default=YES State=UP
PartitionName=dear Nodes=n[1-2] State=UP TRESBillingWeights=CPU=3.0,Mem=1G
`

// assocUsage reads an association's raw fair-share usage on the loop.
func (c *cluster) assocUsage(account, user string) float64 {
	c.t.Helper()
	res, err := c.ctl.do(context.Background(), func(ls *loopState) (any, error) {
		for _, a := range ls.prio.tree.Assocs {
			if a.Account == account && a.User == user {
				return a.UsageRaw, nil
			}
		}
		return -1.0, nil
	})
	if err != nil {
		c.t.Fatal(err)
	}
	return res.(float64)
}

// TestFairShareChargedWithBillingWeights: fair-share usage is charged in
// billing-seconds, the partition's TRESBillingWeights applied to the
// allocation, as Slurm's billable TRES: 2 CPUs and 1 GB in "dear" bill
// 2*3 + 1 = 7 per second, the same job in "plain" bills its 2 CPUs. The
// weights set with scontrol update apply to later runs. The job's TRES
// (scontrol) and its accounting record's AllocTRES (sacct) show the same
// billing count.
func TestFairShareChargedWithBillingWeights(t *testing.T) {
	t.Parallel()
	store := acctStore(t, "test", `
add account plainacct,dearacct,newacct
add user root account=plainacct,dearacct,newacct`)
	c := newCluster(t, openTestSQLite(t), clusterOpts{conf: billingConf, acct: store})
	c.mustPart(api.PartitionCreate, "PartitionName=fresh", "Nodes=n1")
	c.mustPart(api.PartitionUpdate, "PartitionName=fresh", "TRESBillingWeights=CPU=0.5")
	cases := []struct {
		part, account string
		perSecond     float64
	}{
		{"plain", "plainacct", 2},
		{"dear", "dearacct", 7},
		{"fresh", "newacct", 1},
	}
	for _, tc := range cases {
		id := c.submit(c.wrap("sleep 2", func(s *api.JobSpec) {
			s.Partitions, s.Account, s.CPUsPerTask, s.MemPerNodeMB, s.MemPerNodeSet = []string{tc.part}, tc.account, 2, 1024, true
		}))
		j := c.waitState(id, "COMPLETED", 20*time.Second)
		elapsed := j.EndTime.Sub(j.StartTime).Seconds()
		got := c.assocUsage(tc.account, "root")
		want := tc.perSecond * elapsed
		t.Logf("%s: ran %.0fs, usage %.1f billing-seconds (want %.1f)", tc.part, elapsed, got, want)
		if math.Abs(got-want) > tc.perSecond*1.01 {
			t.Errorf("%s: usage %.1f, want %.1f (%.1f per second for %.0fs)", tc.part, got, want, tc.perSecond, elapsed)
		}
		billing := fmt.Sprintf("billing=%d", int(tc.perSecond))
		if !strings.Contains(j.AllocTRES, billing) {
			t.Errorf("%s: job TRES %q, want %s", tc.part, j.AllocTRES, billing)
		}
		if rec := c.jobRecord(id); !strings.Contains(rec.AllocTRES, billing) {
			t.Errorf("%s: accounting AllocTRES %q, want %s", tc.part, rec.AllocTRES, billing)
		}
	}
}

// jobRecord returns job id's own accounting record (not a step's).
func (c *cluster) jobRecord(id uint32) api.AcctRecord {
	c.t.Helper()
	res, err := c.client.Accounting(c.ctx())
	if err != nil {
		c.t.Fatal(err)
	}
	for _, r := range res.Records {
		if r.JobID == id && r.Step == "" {
			return r
		}
	}
	c.t.Fatalf("no accounting record of job %d", id)
	return api.AcctRecord{}
}
