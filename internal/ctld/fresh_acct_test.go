package ctld

import (
	"net/url"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/api"
)

// TestFreshAccountingRootSubmits: on an empty accounting database the
// controller registers its cluster, as slurmctld does with slurmdbd, so
// root submits at once (account root, QOS normal) under
// AccountingStorageEnforce=associations, and sacctmgr shows the cluster's
// root association and root's (checked on a fresh Slurm 24.11).
func TestFreshAccountingRootSubmits(t *testing.T) {
	t.Parallel()
	store := acct.NewMemStore()
	c := newCluster(t, openTestSQLite(t), clusterOpts{extra: "AccountingStorageEnforce=associations,limits,qos", acct: store})
	id := c.submit(c.wrap("true"))
	j := c.waitState(id, "COMPLETED", 10*time.Second)
	if j.Account != "root" || j.QOS != "normal" {
		t.Fatalf("root's job: account %q qos %q", j.Account, j.QOS)
	}
	res, err := c.client.Sacctmgr(c.ctx(), api.SacctmgrRequest{Args: []string{"show", "assoc", "format=cluster,account,user,share,qos", "-P"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "Cluster|Account|User|Share|QOS\ntest|root||1|normal\ntest|root|root|1|normal\n"
	if res.Out != want {
		t.Errorf("show assoc:\n%s\nwant\n%s", res.Out, want)
	}
	// show cluster names the running controller: address, port and the
	// RPC version of Slurm 24.11 (the oracle: "oracle|127.0.0.1|8117|10752").
	res, err = c.client.Sacctmgr(c.ctx(), api.SacctmgrRequest{Args: []string{"show", "cluster", "format=cluster,controlhost,controlport,rpc", "-P"}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(c.ctl.URL())
	want = "Cluster|ControlHost|ControlPort|RPC\ntest|127.0.0.1|" + u.Port() + "|10752\n"
	if res.Out != want {
		t.Errorf("show cluster:\n%s\nwant\n%s", res.Out, want)
	}
	// A second start finds the cluster and adds nothing.
	c.ctl.Close()
	c.startController()
	st, err := store.Load(c.ctx())
	if err != nil || len(st.Clusters) != 1 || len(st.Assocs) != 2 {
		t.Fatalf("after a restart: %d clusters, %d associations (%v)", len(st.Clusters), len(st.Assocs), err)
	}
}
