package acct

import "fmt"

// Check verifies the invariants of the accounting tree: every
// association belongs to an existing cluster, account (and user) and
// hangs under its parent account's association on the same cluster; keys
// are unique; every referenced QOS exists; every user with associations
// has one in its default account. Exec refuses any command that would
// break them, so a store never holds an inconsistent tree.
func (s *State) Check() error {
	if s.check(false) == nil {
		return nil
	}
	return s.check(true) // again in id order, to report the first problem
}

// check runs the checks, visiting associations in id order when sorted
// (deterministic messages) or in map order (fast, for the common case).
func (s *State) check(sorted bool) error {
	seen := make(map[assocKey]int64, len(s.Assocs))
	ids := make([]int64, 0, len(s.Assocs))
	for id := range s.Assocs {
		ids = append(ids, id)
	}
	if sorted {
		ids = s.SortedAssocIDs()
	}
	for _, id := range ids {
		a := s.Assocs[id]
		if err := s.checkAssoc(a); err != nil {
			return fmt.Errorf("association %d (%s): %w", id, assocName(a), err)
		}
		k := assocKey{a.Cluster, a.Account, a.User, a.Partition}
		if other, dup := seen[k]; dup {
			return fmt.Errorf("associations %d and %d have the same key %s", other, id, assocName(a))
		}
		seen[k] = id
		if id > s.LastAssocID {
			return fmt.Errorf("association id %d above last id %d", id, s.LastAssocID)
		}
	}
	for c := range s.Clusters {
		if _, ok := seen[assocKey{c, RootAccount, "", ""}]; !ok {
			return fmt.Errorf("cluster %s has no root association", c)
		}
	}
	for _, name := range sortedKeys(s.QOS) {
		q := s.QOS[name]
		if q.Name != name || q.ID > s.LastQOSID {
			return fmt.Errorf("QOS %s: bad name or id", name)
		}
		for _, p := range q.Preempt {
			if s.QOS[p] == nil || p == name {
				return fmt.Errorf("QOS %s preempts unknown or itself: %s", name, p)
			}
		}
	}
	return s.checkDefaults(seen)
}

func (s *State) checkAssoc(a *Association) error {
	if s.Clusters[a.Cluster] == nil {
		return fmt.Errorf("unknown cluster")
	}
	if s.Accounts[a.Account] == nil {
		return fmt.Errorf("unknown account")
	}
	if a.IsUser() && s.Users[a.User] == nil {
		return fmt.Errorf("unknown user")
	}
	for _, q := range a.QOS {
		if s.QOS[q] == nil {
			return fmt.Errorf("unknown QOS %s", q)
		}
	}
	if a.DefaultQOS != "" && s.QOS[a.DefaultQOS] == nil {
		return fmt.Errorf("unknown default QOS %s", a.DefaultQOS)
	}
	if a.ParentID == 0 {
		if a.Account != RootAccount || a.IsUser() || a.Partition != "" {
			return fmt.Errorf("only the root account association may have no parent")
		}
		return nil
	}
	p := s.Assocs[a.ParentID]
	switch {
	case p == nil:
		return fmt.Errorf("parent %d missing", a.ParentID)
	case p.Cluster != a.Cluster || p.IsUser() || p.Partition != "":
		return fmt.Errorf("parent %d is not an account association of the same cluster", p.ID)
	case a.IsUser() && p.Account != a.Account:
		return fmt.Errorf("user association's parent is account %s", p.Account)
	case !a.IsUser() && p.Account != s.Accounts[a.Account].Parent:
		return fmt.Errorf("parent is %s but account's parent is %s", p.Account, s.Accounts[a.Account].Parent)
	}
	return nil
}

func (s *State) checkDefaults(seen map[assocKey]int64) error {
	hasAny := map[string]bool{}
	hasDef := map[string]bool{}
	for k := range seen {
		if k.user == "" {
			continue
		}
		hasAny[k.user] = true
		if u := s.Users[k.user]; u != nil && u.DefaultAccount == k.account {
			hasDef[k.user] = true
		}
	}
	for u := range hasAny {
		if !hasDef[u] {
			return fmt.Errorf("user %s has no association in its default account %s", u, s.Users[u].DefaultAccount)
		}
	}
	return nil
}
