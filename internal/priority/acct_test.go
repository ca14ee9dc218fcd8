package priority

import (
	"testing"

	"github.com/sluice-hpc/sluice/internal/acct"
)

// qosDemoScript is fixtures/qos-demo.sacctmgr's tree part plus the
// pcdefault account of SCENARIOS S2.
const qosDemoScript = `
sacctmgr -i add account research Description="Research team" Organization=acme
sacctmgr -i add account batch Description="Batch jobs" Organization=acme
sacctmgr -i add account pcdefault
sacctmgr -i add user alice DefaultAccount=research
sacctmgr -i add user bob DefaultAccount=research
sacctmgr -i add user charlie DefaultAccount=batch
sacctmgr -i add user slurm DefaultAccount=pcdefault
sacctmgr -i add user ubuntu DefaultAccount=pcdefault
sacctmgr -i add qos research Priority=10000 Flags=DenyOnLimit
sacctmgr -i add qos scavenger Priority=10 UsageFactor=0.5 Flags=NoDecay
sacctmgr -i modify account research set FairShare=500
sacctmgr -i modify account batch set FairShare=100
`

// FromPolicy on the qos-demo accounting gives S2's NormShares and the
// QOS settings the usage code needs.
func TestFromPolicyQOSDemo(t *testing.T) {
	st := acct.NewState()
	if err := acct.ApplyScript(st, qosDemoScript, acct.ExecEnv{Actor: acct.Actor{Name: "root"}, DefaultCluster: "slurm-qos-demo"}); err != nil {
		t.Fatal(err)
	}
	tr, err := FromPolicy(acct.NewPolicy(st), "slurm-qos-demo")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	tr.Recompute(&cfg)
	for _, c := range []struct{ acc, usr, want string }{
		{"batch", "", "0.166113"}, {"research", "", "0.830565"}, {"root", "root", "0.001661"},
		{"research", "alice", "0.500000"}, {"batch", "charlie", "1.000000"},
	} {
		a := assocOf(t, tr, c.acc, c.usr)
		if got := f6(a.NormShares); got != c.want {
			t.Errorf("%s/%s NormShares %s, want %s", c.acc, c.usr, got, c.want)
		}
	}
	if tr.UserCount() != 6 {
		t.Errorf("user associations %d, want 6", tr.UserCount())
	}
	q := tr.QOS["scavenger"]
	if q == nil || q.Priority != 10 || q.UsageFactor != 0.5 || !q.NoDecay {
		t.Errorf("scavenger QOS %+v", q)
	}
	if _, err := FromPolicy(acct.NewPolicy(st), "nope"); err == nil {
		t.Errorf("unknown cluster accepted")
	}
	out, _ := FormatSshare(tr, &cfg, SshareOptions{All: true, Format: []string{"Account", "User", "ID", "RawShares"}})
	t.Logf("\n%s", out)
}
