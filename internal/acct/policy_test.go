package acct

import (
	"reflect"
	"testing"
)

// tree is a small fixture builder: a cluster with accounts and users.
type tree struct{ st *State }

func newTree(cluster string) *tree {
	st := NewState()
	st.AddCluster(cluster)
	return &tree{st: st}
}

func (t *tree) account(cluster, name, parent string) *Association {
	p := NewPolicy(t.st.Clone())
	par := p.AccountAssoc(cluster, parent)
	t.st.Accounts[name] = &Account{Name: name, Parent: parent}
	a := &Association{Cluster: cluster, Account: name, ParentID: par.ID, Shares: DefaultShares,
		Priority: Unset, AssocLimits: NoAssocLimits()}
	t.st.AddAssoc(a)
	return a
}

func (t *tree) user(cluster, name, account string) *Association {
	p := NewPolicy(t.st.Clone())
	par := p.AccountAssoc(cluster, account)
	if t.st.Users[name] == nil {
		t.st.Users[name] = &User{Name: name, DefaultAccount: account}
	}
	a := &Association{Cluster: cluster, Account: account, User: name, ParentID: par.ID, Shares: DefaultShares,
		Priority: Unset, AssocLimits: NoAssocLimits()}
	t.st.AddAssoc(a)
	return a
}

func TestNewStateHasNormalQOS(t *testing.T) {
	p := NewPolicy(NewState())
	q := p.QOS("normal")
	if q == nil || q.Priority != 0 || q.ID != 1 || q.UsageFactor != 1 {
		t.Fatalf("normal QOS = %+v, want priority 0, id 1, usage factor 1", q)
	}
	if u := p.User("root"); u == nil || u.AdminLevel != AdminAdministrator {
		t.Fatalf("root user = %+v, want Administrator", u)
	}
}

func TestEffectiveInheritsMaxLimitsQOSAndDefaultQOS(t *testing.T) {
	tr := newTree("c1")
	phys := tr.account("c1", "physics", "root")
	phys.MaxJobs = 20
	phys.GrpJobs = 7
	phys.MaxTRES = map[string]int64{"gres/gpu": 64, "cpu": 128}
	phys.QOS = []string{"high", "normal"}
	phys.DefaultQOS = "high"
	theory := tr.account("c1", "theory", "physics")
	alice := tr.user("c1", "alice", "theory")
	alice.MaxTRES = map[string]int64{"gres/gpu": 16}
	bob := tr.user("c1", "bob", "physics")
	bob.MaxJobs = 3
	bob.QOS = []string{"normal"}
	bob.DefaultQOS = ""

	p := NewPolicy(tr.st)
	ea := p.Effective(p.UserAssoc("c1", "alice", "theory", ""))
	if ea.MaxJobs != 20 {
		t.Errorf("alice MaxJobs = %d, want 20 inherited from physics", ea.MaxJobs)
	}
	if !reflect.DeepEqual(map[string]int64(ea.MaxTRES), map[string]int64{"gres/gpu": 16, "cpu": 128}) {
		t.Errorf("alice MaxTRES = %v, want own gpu=16 plus inherited cpu=128", ea.MaxTRES)
	}
	if ea.GrpJobs.IsSet() {
		t.Errorf("alice GrpJobs = %d, want unset: Grp limits are not inherited", ea.GrpJobs)
	}
	if !reflect.DeepEqual(ea.QOS, []string{"high", "normal"}) || p.DefaultQOS(ea) != "high" {
		t.Errorf("alice QOS = %v default %q, want [high normal] default high", ea.QOS, p.DefaultQOS(ea))
	}
	eb := p.Effective(p.UserAssoc("c1", "bob", "physics", "gpu"))
	if eb.MaxJobs != 3 || !reflect.DeepEqual(eb.QOS, []string{"normal"}) {
		t.Errorf("bob = MaxJobs %d QOS %v, want own values 3 and [normal]", eb.MaxJobs, eb.QOS)
	}
	chain := p.Chain(p.UserAssoc("c1", "alice", "theory", ""))
	var names []string
	for _, a := range chain {
		names = append(names, a.Account+"/"+a.User)
	}
	if want := []string{"theory/alice", "theory/", "physics/", "root/"}; !reflect.DeepEqual(names, want) {
		t.Errorf("chain = %v, want %v", names, want)
	}
	_ = theory
}

func TestTreeOrderListsUsersBeforeSubAccounts(t *testing.T) {
	tr := newTree("c1")
	tr.account("c1", "zeta", "root")
	tr.account("c1", "alpha", "root")
	tr.user("c1", "bob", "alpha")
	tr.user("c1", "alice", "alpha")
	tr.account("c1", "sub", "alpha")
	p := NewPolicy(tr.st)
	var got []string
	for _, a := range p.Associations() {
		got = append(got, a.Account+"/"+a.User)
	}
	want := []string{"root/", "root/root", "alpha/", "alpha/alice", "alpha/bob", "sub/", "zeta/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestDefaultQOSFallsBackToOnlyAllowedThenNormal(t *testing.T) {
	tr := newTree("c1")
	a := tr.account("c1", "a", "root")
	a.QOS = []string{"only"}
	b := tr.account("c1", "b", "root")
	b.QOS = []string{"x", "y"}
	p := NewPolicy(tr.st)
	if got := p.DefaultQOS(a); got != "only" {
		t.Errorf("DefaultQOS(a) = %q, want only", got)
	}
	if got := p.DefaultQOS(b); got != "normal" {
		t.Errorf("DefaultQOS(b) = %q, want normal", got)
	}
}
