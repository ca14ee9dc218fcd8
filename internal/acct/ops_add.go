package acct

import (
	"strings"
)

func execAdd(st *State, cmd *Command, env ExecEnv, r *Result) error {
	if len(cmd.Names) == 0 {
		return errorf("No name given to add %s", cmd.Entity)
	}
	switch cmd.Entity {
	case EntCluster:
		return addClusters(st, cmd, r)
	case EntAccount:
		return addAccounts(st, cmd, env, r)
	case EntUser:
		return addUsers(st, cmd, env, r)
	case EntQOS:
		return addQOS(st, cmd, r)
	}
	return errorf("add %s is not supported", cmd.Entity)
}

func addClusters(st *State, cmd *Command, r *Result) error {
	if err := checkKeys(cmd.Set, true); err != nil {
		return err
	}
	added := 0
	for _, n := range lowerNames(cmd.Names) {
		if !validName(n, "-_.") {
			return errorf("Invalid cluster name '%s'", n)
		}
		if st.Clusters[n] != nil {
			r.printf(" This cluster %s already exists.  Not adding.\n", n)
			continue
		}
		root := st.AddCluster(n)
		if err := applyAssocSpecs(st, root, cmd.Set); err != nil {
			return err
		}
		r.printf(" Adding Cluster(s)\n  Name           = %s\n", n)
		added++
	}
	return nothingNew(added, r)
}

// nothingNew is sacctmgr's outcome when an add added nothing.
func nothingNew(added int, r *Result) error {
	if added == 0 {
		return errorf("Nothing new added.")
	}
	r.Changed = true
	return nil
}

func addAccounts(st *State, cmd *Command, env ExecEnv, r *Result) error {
	if err := checkKeys(cmd.Set, true, "Parent", "Cluster", "Description", "Organization"); err != nil {
		return err
	}
	clusters, err := clustersFor(st, cmd.Set, env)
	if err != nil {
		return err
	}
	added := 0
	for _, n := range lowerNames(cmd.Names) {
		acct, isNew, err := ensureAccount(st, n, cmd.Set)
		if err != nil {
			return err
		}
		if isNew {
			added++
		}
		r.printf(" Adding Account(s)\n  %s\n Settings\n  Description     = %s\n  Organization    = %s\n", n, acct.Description, acct.Organization)
		for _, c := range clusters {
			ok, err := addAccountAssoc(st, c, n, acct.Parent, cmd.Set)
			if err != nil {
				return err
			}
			if ok {
				r.printf(" Associations\n  A = %-10s C = %-10s\n", n, c)
				added++
			}
		}
	}
	return nothingNew(added, r)
}

// ensureAccount returns the account record for name, creating it with
// the Parent, Description and Organization of specs. As in sacctmgr the
// description defaults to the name and the organization to the parent
// (or the name under root).
func ensureAccount(st *State, name string, specs []Spec) (*Account, bool, error) {
	if !validName(name, "-_.") {
		return nil, false, errorf("Invalid account name '%s'", name)
	}
	if name == RootAccount {
		return nil, false, errorf("The root account always exists")
	}
	parent, parentGiven := specValue(specs, "Parent")
	parent = strings.ToLower(parent)
	if !parentGiven {
		parent = RootAccount
	}
	if acct := st.Accounts[name]; acct != nil {
		if parentGiven && acct.Parent != parent {
			return nil, false, errorf("Account %s already exists under parent %s; use 'modify account %s set parent=%s' to move it", name, acct.Parent, name, parent)
		}
		return acct, false, nil
	}
	if parent == name {
		return nil, false, errorf("Account %s can not be its own parent", name)
	}
	acct := &Account{Name: name, Parent: parent, Description: name, Organization: name}
	if parent != RootAccount {
		acct.Organization = parent
	}
	if v, ok := specValue(specs, "Description"); ok {
		acct.Description = v
	}
	if v, ok := specValue(specs, "Organization"); ok {
		acct.Organization = v
	}
	st.Accounts[name] = acct
	return acct, true, nil
}

// addAccountAssoc creates account's association on cluster under parent;
// false when it already exists.
func addAccountAssoc(st *State, cluster, account, parent string, set []Spec) (bool, error) {
	if findAssoc(st, cluster, account, "", "") != nil {
		return false, nil
	}
	p := findAssoc(st, cluster, parent, "", "")
	if p == nil {
		return false, errorf("Parent account '%s' doesn't exist on cluster %s", parent, cluster)
	}
	a := newAssoc(cluster, account, "", "", p.ID)
	st.AddAssoc(a)
	return true, applyAssocSpecs(st, a, set)
}

// parseAdminLevel reads AdminLevel=None|Operator|Administrator (any
// unambiguous prefix, as sacctmgr).
func parseAdminLevel(v string) (AdminLevel, error) {
	l := strings.ToLower(strings.TrimSpace(v))
	switch {
	case l != "" && strings.HasPrefix("none", l):
		return AdminNone, nil
	case l != "" && strings.HasPrefix("operator", l):
		return AdminOperator, nil
	case len(l) >= 1 && (strings.HasPrefix("administrator", l) || l == "admin"):
		return AdminAdministrator, nil
	}
	return AdminNone, errorf("Invalid AdminLevel '%s': use None, Operator or Administrator", v)
}

func addUsers(st *State, cmd *Command, env ExecEnv, r *Result) error {
	if err := checkKeys(cmd.Set, true, "Account", "DefaultAccount", "Cluster", "Partition", "AdminLevel"); err != nil {
		return err
	}
	accounts, def, err := userAccounts(cmd.Set)
	if err != nil {
		return err
	}
	level, hasLevel := AdminNone, false
	if v, ok := specValue(cmd.Set, "AdminLevel"); ok {
		if level, err = parseAdminLevel(v); err != nil {
			return err
		}
		hasLevel = true
	}
	clusters, err := clustersFor(st, cmd.Set, env)
	if err != nil {
		return err
	}
	parts := specValues(cmd.Set, "Partition", false)
	if len(parts) == 0 {
		parts = []string{""}
	}
	added := 0
	for _, n := range cmd.Names {
		if !validName(n, "-_.@$") {
			return errorf("Invalid user name '%s'", n)
		}
		u := st.Users[n]
		switch {
		case u == nil:
			st.Users[n] = &User{Name: n, DefaultAccount: def, AdminLevel: level}
			added++
			r.printf(" Adding User(s)\n  %s\n Settings =\n  Default Account = %s\n", n, def)
		case hasLevel && u.AdminLevel != level:
			u.AdminLevel = level
			added++
		}
		for _, c := range clusters {
			for _, acct := range accounts {
				for _, p := range parts {
					ok, err := addUserAssoc(st, c, acct, n, p, cmd.Set)
					if err != nil {
						return err
					}
					if ok {
						r.printf(" Associations =\n  U = %-9s A = %-10s C = %-10s\n", n, acct, c)
						added++
					}
				}
			}
		}
	}
	return nothingNew(added, r)
}

// userAccounts returns the accounts a user is added to (Account= plus
// DefaultAccount=) and the default account (DefaultAccount=, else the
// first of Account=).
func userAccounts(set []Spec) ([]string, string, error) {
	accounts := specValues(set, "Account", true)
	def, hasDef := specValue(set, "DefaultAccount")
	def = strings.ToLower(def)
	if hasDef && !contains(accounts, def) {
		accounts = append(accounts, def)
	}
	if len(accounts) == 0 {
		return nil, "", errorf("Need a default account for these users to add.")
	}
	if !hasDef {
		def = accounts[0]
	}
	return accounts, def, nil
}

// addUserAssoc creates the user association under account's association.
func addUserAssoc(st *State, cluster, account, user, partition string, set []Spec) (bool, error) {
	if st.Accounts[account] == nil {
		return false, errorf("Account '%s' doesn't exist", account)
	}
	if findAssoc(st, cluster, account, user, partition) != nil {
		return false, nil
	}
	p := findAssoc(st, cluster, account, "", "")
	if p == nil {
		return false, errorf("Account '%s' doesn't exist on cluster %s", account, cluster)
	}
	a := newAssoc(cluster, account, user, partition, p.ID)
	st.AddAssoc(a)
	return true, applyAssocSpecs(st, a, set)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// addQOS creates QOS. Adding a QOS that already exists updates it with
// the given settings (Slurm refuses; see docs/differences.md): scripts
// written for a fresh database redefine `normal` this way.
func addQOS(st *State, cmd *Command, r *Result) error {
	for _, n := range lowerNames(cmd.Names) {
		if !validName(n, "-_.") {
			return errorf("Invalid QOS name '%s'", n)
		}
		q := st.QOS[n]
		if q != nil {
			r.printf(" QOS %s already exists, updating its settings\n", n)
		} else {
			q = NewQOS(n)
			q.Description = n
			st.AddQOS(q)
			r.printf(" Adding QOS(s)\n  %s\n", n)
		}
		if err := applyQOSSpecs(st, q, cmd.Set, r); err != nil {
			return err
		}
	}
	r.Changed = true
	return nil
}
