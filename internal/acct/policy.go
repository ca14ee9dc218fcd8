package acct

import (
	"sort"
)

// Policy is a read-only snapshot of the accounting database with the
// lookups the scheduler and the priority code need. Build it with
// NewPolicy; never mutate what its methods return.
type Policy struct {
	st       *State
	byKey    map[assocKey]*Association
	children map[int64][]*Association
	eff      map[int64]*Association
	order    []*Association
	qosByID  map[int64]*QOS
}

type assocKey struct{ cluster, account, user, partition string }

// NewPolicy indexes st. st is owned by the Policy afterwards: callers
// must not modify it (Clone first if they need to).
func NewPolicy(st *State) *Policy {
	p := &Policy{st: st, byKey: map[assocKey]*Association{}, children: map[int64][]*Association{},
		eff: map[int64]*Association{}, qosByID: map[int64]*QOS{}}
	for _, q := range st.QOS {
		p.qosByID[q.ID] = q
	}
	var roots []*Association
	for _, id := range st.SortedAssocIDs() {
		a := st.Assocs[id]
		p.byKey[assocKey{a.Cluster, a.Account, a.User, a.Partition}] = a
		if a.ParentID == 0 {
			roots = append(roots, a)
		} else {
			p.children[a.ParentID] = append(p.children[a.ParentID], a)
		}
	}
	for id := range p.children {
		sortChildren(p.children[id])
	}
	sortChildren(roots)
	for _, r := range roots {
		p.walk(r, nil)
	}
	return p
}

// sortChildren orders siblings as sacctmgr lists them: user associations
// before sub-accounts, then by name and partition.
func sortChildren(as []*Association) {
	sort.Slice(as, func(i, j int) bool {
		a, b := as[i], as[j]
		if a.Cluster != b.Cluster {
			return a.Cluster < b.Cluster
		}
		if a.IsUser() != b.IsUser() {
			return a.IsUser()
		}
		if a.User != b.User {
			return a.User < b.User
		}
		if a.Account != b.Account {
			return a.Account < b.Account
		}
		return a.Partition < b.Partition
	})
}

// walk records the tree order and computes effective values top-down.
func (p *Policy) walk(a *Association, parentEff *Association) {
	p.order = append(p.order, a)
	p.eff[a.ID] = inherit(a, parentEff)
	for _, c := range p.children[a.ID] {
		p.walk(c, p.eff[a.ID])
	}
}

// inherit fills the unset values of a from its parent's effective values
// the way slurmdbd propagates them: Max* limits, Priority, the QOS set and
// DefaultQOS are inherited; Grp* limits are not (they are enforced at each
// level of the chain instead).
func inherit(a, parent *Association) *Association {
	e := a.Clone()
	if parent == nil {
		return e
	}
	if e.QOS == nil {
		e.QOS = append([]string{}, parent.QOS...)
	}
	if e.DefaultQOS == "" {
		e.DefaultQOS = parent.DefaultQOS
	}
	e.Priority = e.Priority.Or(parent.Priority)
	l, pl := &e.AssocLimits, &parent.AssocLimits
	l.MaxJobs = l.MaxJobs.Or(pl.MaxJobs)
	l.MaxJobsAccrue = l.MaxJobsAccrue.Or(pl.MaxJobsAccrue)
	l.MaxSubmitJobs = l.MaxSubmitJobs.Or(pl.MaxSubmitJobs)
	l.MaxWall = l.MaxWall.Or(pl.MaxWall)
	l.MinPrioThreshold = l.MinPrioThreshold.Or(pl.MinPrioThreshold)
	l.MaxTRES = mergeVec(l.MaxTRES, pl.MaxTRES)
	l.MaxTRESPerNode = mergeVec(l.MaxTRESPerNode, pl.MaxTRESPerNode)
	l.MaxTRESMins = mergeVec(l.MaxTRESMins, pl.MaxTRESMins)
	l.MaxTRESRunMins = mergeVec(l.MaxTRESRunMins, pl.MaxTRESRunMins)
	return e
}

// mergeVec returns own with the TRES it does not set taken from parent.
func mergeVec(own, parent tresVec) tresVec {
	if len(parent) == 0 {
		return own
	}
	out := cloneVec(own)
	if out == nil {
		out = tresVec{}
	}
	for k, v := range parent {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}

// State returns the snapshot's data (read-only).
func (p *Policy) State() *State { return p.st }

// QOS returns the QOS with that name, or nil.
func (p *Policy) QOS(name string) *QOS { return p.st.QOS[name] }

// QOSByID returns the QOS with that id, or nil.
func (p *Policy) QOSByID(id int64) *QOS { return p.qosByID[id] }

// QOSNames returns every QOS name, sorted by id (creation order).
func (p *Policy) QOSNames() []string {
	qs := make([]*QOS, 0, len(p.st.QOS))
	for _, q := range p.st.QOS {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].ID < qs[j].ID })
	names := make([]string, len(qs))
	for i, q := range qs {
		names[i] = q.Name
	}
	return names
}

// User returns the user with that name, or nil.
func (p *Policy) User(name string) *User { return p.st.Users[name] }

// Account returns the account with that name, or nil.
func (p *Policy) Account(name string) *Account { return p.st.Accounts[name] }

// Cluster returns the cluster with that name, or nil.
func (p *Policy) Cluster(name string) *Cluster { return p.st.Clusters[name] }

// Assoc returns the association with that id, or nil.
func (p *Policy) Assoc(id int64) *Association { return p.st.Assocs[id] }

// Root returns the root association of a cluster, or nil.
func (p *Policy) Root(cluster string) *Association {
	return p.byKey[assocKey{cluster, RootAccount, "", ""}]
}

// AccountAssoc returns the association of an account on a cluster, or nil.
func (p *Policy) AccountAssoc(cluster, account string) *Association {
	return p.byKey[assocKey{cluster, account, "", ""}]
}

// UserAssoc returns the association a job of user in account on
// partition bills against: the partition-specific one if it exists,
// else the user's association without partition, else nil.
func (p *Policy) UserAssoc(cluster, user, account, partition string) *Association {
	if partition != "" {
		if a := p.byKey[assocKey{cluster, account, user, partition}]; a != nil {
			return a
		}
	}
	return p.byKey[assocKey{cluster, account, user, ""}]
}

// UserAssocs returns every association of user on cluster, in tree order.
func (p *Policy) UserAssocs(cluster, user string) []*Association {
	var out []*Association
	for _, a := range p.order {
		if a.Cluster == cluster && a.User == user {
			out = append(out, a)
		}
	}
	return out
}

// Parent returns a's parent association, or nil for a root.
func (p *Policy) Parent(a *Association) *Association { return p.st.Assocs[a.ParentID] }

// Children returns a's direct children, users first (sacctmgr's order).
func (p *Policy) Children(a *Association) []*Association { return p.children[a.ID] }

// Chain returns the associations from a up to its cluster's root,
// a first: the order in which association limits are checked.
func (p *Policy) Chain(a *Association) []*Association {
	var out []*Association
	for cur := a; cur != nil; cur = p.st.Assocs[cur.ParentID] {
		out = append(out, cur)
		if len(out) > len(p.st.Assocs) {
			break // defensive: a cycle never comes from a valid State
		}
	}
	return out
}

// Associations returns every association in tree order (per cluster, a
// pre-order walk with users before sub-accounts).
func (p *Policy) Associations() []*Association { return p.order }

// Depth returns how many ancestors a has (0 for a root).
func (p *Policy) Depth(a *Association) int { return len(p.Chain(a)) - 1 }

// Effective returns a copy-on-read view of the association with the
// values Slurm inherits filled in from its ancestors (Max* limits,
// Priority, QOS set, DefaultQOS). Grp* limits are the association's own.
func (p *Policy) Effective(a *Association) *Association {
	if e, ok := p.eff[a.ID]; ok {
		return e
	}
	return a
}

// AllowsQOS reports whether jobs of association a may use QOS name.
func (p *Policy) AllowsQOS(a *Association, name string) bool {
	for _, q := range p.Effective(a).QOS {
		if q == name {
			return true
		}
	}
	return false
}

// DefaultQOS returns the QOS a job of association a gets when it names
// none: the (inherited) DefaultQOS; else the only allowed QOS when there
// is exactly one; else normal. This is Slurm's fallback order.
func (p *Policy) DefaultQOS(a *Association) string {
	e := p.Effective(a)
	if e.DefaultQOS != "" {
		return e.DefaultQOS
	}
	if len(e.QOS) == 1 {
		return e.QOS[0]
	}
	return NormalQOS
}

// DefaultAccount returns the user's default account, or "".
func (p *Policy) DefaultAccount(user string) string {
	if u := p.st.Users[user]; u != nil {
		return u.DefaultAccount
	}
	return ""
}
