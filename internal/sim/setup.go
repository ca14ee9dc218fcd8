package sim

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/priority"
)

// generatedCluster is the ClusterName of a cluster synthesised from a
// trace.
const generatedCluster = "sim"

// loadConf reads the setup's slurm.conf, or synthesises one from the
// trace: an SWF header's MaxProcs CPUs on MaxNodes nodes (one node per
// processor when they are equal, as on the SP2 traces), one partition
// with no time limit, sched/backfill and multifactor priority with
// fair-share and age weights.
func loadConf(setup Setup, tr *Trace) (*conf.Config, error) {
	if setup.Conf != "" {
		c, _, err := conf.Load(setup.Conf)
		return c, err
	}
	text, err := SyntheticConf(tr, "sched/backfill")
	if err != nil {
		return nil, err
	}
	c, _, err := conf.Parse("generated.conf", []byte(text))
	return c, err
}

// SyntheticConf returns a slurm.conf for a trace without one: nodes from
// the SWF header (MaxNodes x MaxProcs/MaxNodes CPUs), one partition,
// SchedulerType scheduler. The validation runs ship the same text under
// examples/traces/.
func SyntheticConf(tr *Trace, scheduler string) (string, error) {
	procs, nodes := tr.MaxProcs, tr.MaxNodes
	if procs <= 0 {
		procs = nodes
	}
	if procs <= 0 {
		for _, j := range tr.Jobs {
			procs = max(procs, j.CPUCount())
		}
	}
	if procs <= 0 {
		return "", fmt.Errorf("the trace gives no machine size: pass --conf")
	}
	if nodes <= 0 || procs%nodes != 0 {
		nodes = procs
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ClusterName=%s\nSchedulerType=%s\nSelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n", generatedCluster, scheduler)
	b.WriteString("PriorityType=priority/multifactor\nPriorityWeightAge=1000\nPriorityWeightFairshare=10000\nPriorityWeightJobSize=0\n")
	b.WriteString("AccountingStorageEnforce=associations\n")
	fmt.Fprintf(&b, "NodeName=n[1-%d] CPUs=%d RealMemory=1000 State=IDLE\n", nodes, procs/nodes)
	b.WriteString("PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n")
	return b.String(), nil
}

// loadAccounts builds the accounting policy: the setup's sacctmgr script,
// or one account per trace account (SWF group) holding its users, with
// equal shares.
func loadAccounts(setup Setup, tr *Trace, cluster string) (*acct.Policy, error) {
	script := ""
	if setup.Accounts != "" {
		b, err := os.ReadFile(setup.Accounts)
		if err != nil {
			return nil, err
		}
		script = string(b)
	} else {
		script = GeneratedAccounts(tr, cluster)
	}
	st := acct.NewState()
	env := acct.ExecEnv{Actor: acct.Actor{Name: "root", UID: 0}, DefaultCluster: cluster}
	if err := acct.ApplyScript(st, script, env); err != nil {
		return nil, fmt.Errorf("accounts %s: %w", setup.Accounts, err)
	}
	if cluster != "" && st.Clusters[cluster] == nil {
		if err := acct.ApplyScript(st, "add cluster "+cluster, env); err != nil {
			return nil, err
		}
	}
	return acct.NewPolicy(st), nil
}

// GeneratedAccounts returns the sacctmgr script used when none is given:
// every account of the trace with Fairshare=1 and its users under it.
func GeneratedAccounts(tr *Trace, cluster string) string {
	accounts := map[string]map[string]bool{}
	for i := range tr.Jobs {
		j := &tr.Jobs[i]
		a := j.Account
		if a == "" {
			a = "default"
		}
		if accounts[a] == nil {
			accounts[a] = map[string]bool{}
		}
		if j.User != "" {
			accounts[a][j.User] = true
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "add cluster %s\n", cluster)
	names := sortedKeys(accounts)
	for _, a := range names {
		fmt.Fprintf(&b, "add account %s Fairshare=1 Cluster=%s\n", a, cluster)
	}
	for _, a := range names {
		users := sortedKeys(accounts[a])
		for _, u := range users {
			fmt.Fprintf(&b, "add user %s Account=%s Cluster=%s\n", u, a, cluster)
		}
	}
	return b.String()
}

// globalShares returns each account association's share of the whole
// cluster: the product of shares/level_shares along its path (FS=parent
// accounts inherit their parent's), for the report's target column.
func globalShares(t *priority.Tree) map[string]float64 {
	out := map[string]float64{}
	for _, i := range t.Order() {
		a := &t.Assocs[i]
		if a.IsUser() || a.Parent < 0 {
			continue
		}
		s := 1.0
		for k := i; k >= 0 && t.Assocs[k].Parent >= 0; k = t.Assocs[k].Parent {
			x := &t.Assocs[k]
			if x.SharesFromParent() || x.LevelShares == 0 {
				continue
			}
			s *= float64(x.RawShares) / float64(x.LevelShares)
		}
		out[a.Account] = s
	}
	return out
}

// sortedIDs returns map keys in order (deterministic iteration).
func sortedIDs[V any](m map[int64]V) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
