package acct

import (
	"sort"
)

// TRESRecord is one trackable resource known to accounting (`sacctmgr
// show tres`): Type is cpu, mem, energy, node, billing, fs, vmem, pages,
// gres, license or bb; Name the part after the slash ("gpu", "gpu:a100").
type TRESRecord struct {
	ID   int64
	Type string
	Name string
}

// Key is the canonical tresVec key ("cpu", "gres/gpu").
func (t TRESRecord) Key() string {
	if t.Name == "" {
		return t.Type
	}
	return t.Type + "/" + t.Name
}

// baseTRES are the TRES every Slurm database has, with Slurm's ids.
var baseTRES = []TRESRecord{
	{1, "cpu", ""}, {2, "mem", ""}, {3, "energy", ""}, {4, "node", ""},
	{5, "billing", ""}, {6, "fs", "disk"}, {7, "vmem", ""}, {8, "pages", ""},
}

// firstDynamicTRESID is where ids of gres/license/bb TRES start, as in Slurm.
const firstDynamicTRESID = 1001

// State is the whole accounting database in memory: what a Store loads
// and saves and what sacctmgr commands edit. It is plain mutable data;
// build a Policy from it for lookups.
type State struct {
	Clusters map[string]*Cluster
	Accounts map[string]*Account
	Users    map[string]*User
	// Assocs is keyed by association id.
	Assocs map[int64]*Association
	// QOS is keyed by name.
	QOS map[string]*QOS
	// TRES is keyed by the canonical TRES name.
	TRES map[string]*TRESRecord
	// LastAssocID and LastQOSID are the highest ids ever handed out, so
	// deleted ids are never reused.
	LastAssocID int64
	LastQOSID   int64

	// index maps association keys to ids; built on first lookup and kept
	// by AddAssoc (keys never change). Entries of deleted associations
	// are detected on use.
	index map[assocKey]int64
}

// NewState returns an empty database as Slurm starts with: the root
// account, the root user (an Administrator), the base TRES and the
// `normal` QOS with priority 0 and id 1.
func NewState() *State {
	s := &State{
		Clusters: map[string]*Cluster{}, Accounts: map[string]*Account{},
		Users: map[string]*User{}, Assocs: map[int64]*Association{},
		QOS: map[string]*QOS{}, TRES: map[string]*TRESRecord{},
	}
	s.Accounts[RootAccount] = &Account{Name: RootAccount, Description: "default root account", Organization: "root"}
	s.Users["root"] = &User{Name: "root", DefaultAccount: RootAccount, AdminLevel: AdminAdministrator}
	for _, t := range baseTRES {
		t := t
		s.TRES[t.Key()] = &t
	}
	q := NewQOS(NormalQOS)
	q.Description = "Normal QOS default"
	s.AddQOS(q)
	return s
}

// AddQOS gives q the next QOS id and stores it.
func (s *State) AddQOS(q *QOS) {
	s.LastQOSID++
	q.ID = s.LastQOSID
	s.QOS[q.Name] = q
}

// AddAssoc gives a the next association id and stores it.
func (s *State) AddAssoc(a *Association) {
	s.LastAssocID++
	a.ID = s.LastAssocID
	s.Assocs[a.ID] = a
	if s.index != nil {
		s.index[assocKey{a.Cluster, a.Account, a.User, a.Partition}] = a.ID
	}
}

// FindAssoc returns the association with that cluster, account, user
// ("" for the account's own) and partition, or nil.
func (s *State) FindAssoc(cluster, account, user, partition string) *Association {
	k := assocKey{cluster, account, user, partition}
	if s.index == nil || len(s.index) < len(s.Assocs) {
		s.index = make(map[assocKey]int64, len(s.Assocs))
		for id, a := range s.Assocs {
			s.index[assocKey{a.Cluster, a.Account, a.User, a.Partition}] = id
		}
	}
	if a := s.Assocs[s.index[k]]; a != nil && a.Cluster == cluster && a.Account == account && a.User == user && a.Partition == partition {
		return a
	}
	return nil
}

// EnsureTRES registers a TRES name (e.g. "gres/gpu:h100") if it is new,
// as slurmctld does for AccountingStorageTRES, and returns its record.
func (s *State) EnsureTRES(key string) *TRESRecord {
	if t, ok := s.TRES[key]; ok {
		return t
	}
	typ, name := key, ""
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			typ, name = key[:i], key[i+1:]
			break
		}
	}
	id := int64(firstDynamicTRESID)
	for _, t := range s.TRES {
		if t.ID >= id {
			id = t.ID + 1
		}
	}
	t := &TRESRecord{ID: id, Type: typ, Name: name}
	s.TRES[key] = t
	return t
}

// AddCluster creates a cluster with its root association (account root)
// and the root user's association under it, as `sacctmgr add cluster`
// does. The root association allows QOS normal by default.
func (s *State) AddCluster(name string) *Association {
	s.Clusters[name] = &Cluster{Name: name}
	root := &Association{Cluster: name, Account: RootAccount, Shares: DefaultShares,
		QOS: []string{NormalQOS}, Priority: Unset, AssocLimits: NoAssocLimits()}
	s.AddAssoc(root)
	user := &Association{Cluster: name, Account: RootAccount, User: "root", ParentID: root.ID,
		Shares: DefaultShares, Priority: Unset, AssocLimits: NoAssocLimits()}
	s.AddAssoc(user)
	return root
}

// SortedAssocIDs returns every association id in increasing order.
func (s *State) SortedAssocIDs() []int64 {
	ids := make([]int64, 0, len(s.Assocs))
	for id := range s.Assocs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Clone returns a deep copy; commands run against a clone so that a
// failed command leaves the original untouched.
func (s *State) Clone() *State {
	c := &State{
		Clusters: make(map[string]*Cluster, len(s.Clusters)), Accounts: make(map[string]*Account, len(s.Accounts)),
		Users: make(map[string]*User, len(s.Users)), Assocs: make(map[int64]*Association, len(s.Assocs)),
		QOS: make(map[string]*QOS, len(s.QOS)), TRES: make(map[string]*TRESRecord, len(s.TRES)),
		LastAssocID: s.LastAssocID, LastQOSID: s.LastQOSID,
	}
	for k, v := range s.Clusters {
		v2 := *v
		c.Clusters[k] = &v2
	}
	for k, v := range s.Accounts {
		v2 := *v
		c.Accounts[k] = &v2
	}
	for k, v := range s.Users {
		v2 := *v
		c.Users[k] = &v2
	}
	for k, v := range s.Assocs {
		c.Assocs[k] = v.Clone()
	}
	for k, v := range s.QOS {
		c.QOS[k] = v.Clone()
	}
	for k, v := range s.TRES {
		v2 := *v
		c.TRES[k] = &v2
	}
	return c
}

// Clone returns a deep copy of the association.
func (a *Association) Clone() *Association {
	c := *a
	if a.QOS != nil {
		c.QOS = append([]string{}, a.QOS...)
	}
	c.AssocLimits = a.AssocLimits.Clone()
	return &c
}

// Clone returns a deep copy of the limits.
func (l AssocLimits) Clone() AssocLimits {
	c := l
	for _, p := range []*tresVec{&c.GrpTRES, &c.GrpTRESMins, &c.GrpTRESRunMins, &c.MaxTRES,
		&c.MaxTRESPerNode, &c.MaxTRESMins, &c.MaxTRESRunMins} {
		*p = cloneVec(*p)
	}
	return c
}

// Clone returns a deep copy of the QOS.
func (q *QOS) Clone() *QOS {
	c := *q
	if q.Preempt != nil {
		c.Preempt = append([]string{}, q.Preempt...)
	}
	for _, p := range c.tresFields() {
		*p = cloneVec(*p)
	}
	return &c
}

// tresFields lists pointers to every TRES limit of q.
func (q *QOS) tresFields() []*tresVec {
	return []*tresVec{&q.GrpTRES, &q.GrpTRESMins, &q.GrpTRESRunMins, &q.MaxTRESPerJob,
		&q.MaxTRESPerNode, &q.MaxTRESPerUser, &q.MaxTRESPerAccount, &q.MaxTRESMinsPerJob,
		&q.MaxTRESRunMinsPerUser, &q.MaxTRESRunMinsPerAccount, &q.MinTRESPerJob}
}

func cloneVec(v tresVec) tresVec {
	if v == nil {
		return nil
	}
	c := make(tresVec, len(v))
	for k, n := range v {
		c[k] = n
	}
	return c
}

// sortUsage orders usage records by kind then id.
func sortUsage(us []Usage) {
	sort.Slice(us, func(i, j int) bool {
		if us[i].Kind != us[j].Kind {
			return us[i].Kind < us[j].Kind
		}
		return us[i].ID < us[j].ID
	})
}
