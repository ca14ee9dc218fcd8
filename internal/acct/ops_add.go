package acct

import (
	"errors"
	"fmt"
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
		return unknownOption(err, false)
	}
	clusters, err := clustersFor(st, cmd.Set, env)
	if err != nil {
		return err
	}
	var newNames []string
	var assocs strings.Builder
	var first *Association
	for _, n := range lowerNames(cmd.Names) {
		acct, isNew, err := ensureAccount(st, n, cmd.Set)
		if err != nil {
			return err
		}
		if isNew {
			newNames = append(newNames, n)
		}
		for _, c := range clusters {
			a, err := addAccountAssoc(st, c, n, acct.Parent, cmd.Set)
			if err != nil {
				return err
			}
			first = printAccountAssoc(&assocs, a, first, n, c)
		}
	}
	if first == nil {
		// sacctmgr prints its list of existing accounts after one space.
		return outErr(" " + assocs.String())
	}
	printNewAccounts(r, newNames, cmd.Set)
	r.Out.WriteString(assocs.String())
	if settingsGiven(cmd.Set) {
		parent, _ := specValue(cmd.Set, "Parent")
		r.printf(" Settings\n")
		printSettings(r, assocSettingLines, cmd.Set, assocSettingValue(st, first, cmd.Set, strings.ToLower(parent)))
	}
	r.Changed = true
	return nil
}

// printAccountAssoc adds one account association to the add summary as
// sacctmgr does: a new one under " Associations =" (a header only printed
// when nothing came before it), an existing one as "Already existing".
// It returns the first new association.
func printAccountAssoc(b *strings.Builder, a, first *Association, account, cluster string) *Association {
	if a == nil {
		fmt.Fprintf(b, "Already existing account %s on cluster %s\n", account, cluster)
		return first
	}
	if b.Len() == 0 {
		b.WriteString(" Associations =\n")
	}
	fmt.Fprintf(b, "  C = %-10s A = %-20s\n", cluster, account)
	if first == nil {
		return a
	}
	return first
}

// printNewAccounts prints the accounts created and their description and
// organization; sacctmgr shows placeholders for the ones not given.
func printNewAccounts(r *Result, names []string, set []Spec) {
	if len(names) == 0 {
		return
	}
	r.printf(" Adding Account(s)\n")
	for _, n := range names {
		r.printf("  %s\n", n)
	}
	desc, ok := specValue(set, "Description")
	if !ok {
		desc = "Account Name"
	}
	org, ok := specValue(set, "Organization")
	if !ok {
		org = "Parent/Account Name"
	}
	r.printf(" Settings\n  Description     = %s\n  Organization    = %s\n", desc, org)
}

// settingsGiven reports whether an add named anything but its clusters:
// sacctmgr then prints a second " Settings" block, empty when only
// Description or Organization were given.
func settingsGiven(set []Spec) bool {
	for _, s := range set {
		if s.Key != "Cluster" {
			return true
		}
	}
	return false
}

// unknownOption prints checkKeys' refusal as sacctmgr does: the unknown
// option and a hint, on stdout (add/modify qos) or on stderr.
func unknownOption(err error, stdout bool) error {
	msg := " " + err.Error() + "\n Use keyword 'where' to modify condition"
	if stdout {
		return outErr(msg)
	}
	return plainErr("%s", msg)
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
		// Slurm reports it as already existing, whatever Parent= says;
		// moving it takes `modify account X set parent=Y`.
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
// nil when it already exists.
func addAccountAssoc(st *State, cluster, account, parent string, set []Spec) (*Association, error) {
	if findAssoc(st, cluster, account, "", "") != nil {
		return nil, nil
	}
	p := findAssoc(st, cluster, parent, "", "")
	if p == nil {
		return nil, plainErr(" error: No parent account '%s' on cluster '%s'", parent, cluster)
	}
	a := newAssoc(cluster, account, "", "", p.ID)
	st.AddAssoc(a)
	return a, applyAssocSpecs(st, a, set)
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
		return plainErr(" %v", err)
	}
	accounts, def, err := userAccounts(cmd.Set)
	if err != nil {
		return err
	}
	level := AdminNone
	if v, ok := specValue(cmd.Set, "AdminLevel"); ok {
		if level, err = parseAdminLevel(v); err != nil {
			return err
		}
	}
	clusters, err := clustersFor(st, cmd.Set, env)
	if err != nil {
		return err
	}
	for _, n := range cmd.Names {
		if !validName(n, "-_.@$") {
			return errorf("Invalid user name '%s'", n)
		}
	}
	var skipped, assocs strings.Builder
	added, err := addUserAssocs(st, cmd, accounts, clusters, &skipped, &assocs)
	if err != nil {
		return err
	}
	changed := len(added) > 0
	var newUsers []string
	for _, n := range cmd.Names {
		u := st.Users[n]
		switch {
		case u == nil && userHasAssoc(st, n):
			st.Users[n] = &User{Name: n, DefaultAccount: def, AdminLevel: level}
			newUsers = append(newUsers, n)
		case u != nil && changed && hasDefault(cmd.Set) && len(selectAssocs(st, assocFilter{accounts: []string{def}, users: []string{n}})) > 0:
			// Slurm sets an existing user's default account along with
			// new associations, and ignores AdminLevel= (modify sets it).
			u.DefaultAccount = def
		}
	}
	if !changed && len(newUsers) == 0 {
		if skipped.Len() == 0 {
			skipped.WriteString("Request didn't affect anything\n")
		}
		return outErr(skipped.String() + nothingAddedHint)
	}
	printNewUsers(r, newUsers, cmd.Set, level)
	r.Out.WriteString(assocs.String())
	r.Out.WriteString(skipped.String())
	if hasAssocSettings(cmd.Set) && len(added) > 0 {
		r.printf(" Non Default Settings\n")
		printSettings(r, assocSettingLines, cmd.Set, assocSettingValue(st, added[0], cmd.Set, ""))
	}
	r.Changed = true
	return nil
}

// nothingAddedHint ends sacctmgr's answer to an add user that added nothing.
const nothingAddedHint = "Nothing added.\nMake sure the accounts requested here have been added to the system/cluster. (sacctmgr add account...)"

func hasDefault(set []Spec) bool {
	_, ok := specValue(set, "DefaultAccount")
	return ok
}

func userHasAssoc(st *State, user string) bool {
	for _, a := range st.Assocs {
		if a.User == user {
			return true
		}
	}
	return false
}

// addUserAssocs creates the users' associations, account by account, and
// prints them as sacctmgr does (accounts that do not exist are skipped
// with a line of their own); it returns those it created.
func addUserAssocs(st *State, cmd *Command, accounts, clusters []string, skipped, out *strings.Builder) ([]*Association, error) {
	parts := specValues(cmd.Set, "Partition", false)
	if len(parts) == 0 {
		parts = []string{""}
	}
	var added []*Association
	for _, acct := range accounts {
		for _, c := range clusters {
			if findAssoc(st, c, acct, "", "") == nil {
				fmt.Fprintf(skipped, "No account %s on cluster %s, skipping.\n", acct, c)
				continue
			}
			for _, p := range parts {
				for _, u := range cmd.Names {
					a, err := addUserAssoc(st, c, acct, u, p, cmd.Set)
					if err != nil {
						return nil, err
					}
					if a == nil {
						continue
					}
					if len(added) == 0 {
						out.WriteString(" Associations =\n")
					}
					added = append(added, a)
					fmt.Fprintf(out, "  C = %-10s A = %-20s U = %-9s", c, acct, u)
					if p != "" {
						fmt.Fprintf(out, " P = %s", p)
					}
					out.WriteString("\n")
				}
			}
		}
	}
	return added, nil
}

// printNewUsers prints the users created and the user settings given.
func printNewUsers(r *Result, names []string, set []Spec, level AdminLevel) {
	if len(names) == 0 {
		return
	}
	r.printf(" Adding User(s)\n")
	for _, n := range names {
		r.printf("  %s\n", n)
	}
	r.printf(" Settings\n")
	if v, ok := specValue(set, "DefaultAccount"); ok {
		r.printf("  Default Account = %s\n", strings.ToLower(v))
	}
	if _, ok := specValue(set, "AdminLevel"); ok {
		r.printf("  Admin Level     = %s\n", level)
	}
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
		return nil, "", plainErr(" Need name of account or wckey to add.")
	}
	if !hasDef {
		def = accounts[0]
	}
	return accounts, def, nil
}

// addUserAssoc creates the user association under account's association
// on cluster (which must exist); nil when it already exists.
func addUserAssoc(st *State, cluster, account, user, partition string, set []Spec) (*Association, error) {
	if findAssoc(st, cluster, account, user, partition) != nil {
		return nil, nil
	}
	p := findAssoc(st, cluster, account, "", "")
	a := newAssoc(cluster, account, user, partition, p.ID)
	st.AddAssoc(a)
	return a, applyAssocSpecs(st, a, set)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// addQOS creates QOS and prints them with the settings given, as
// sacctmgr does. Adding a QOS that already exists with settings updates
// it (Slurm refuses; see docs/differences.md): scripts written for a
// fresh database redefine `normal` this way.
func addQOS(st *State, cmd *Command, r *Result) error {
	var newQOS []*QOS
	updated := false
	for _, n := range lowerNames(cmd.Names) {
		if !validName(n, "-_.") {
			return errorf("Invalid QOS name '%s'", n)
		}
		q := st.QOS[n]
		switch {
		case q == nil:
			q = NewQOS(n)
			q.Description = n
			newQOS = append(newQOS, q)
		case len(cmd.Set) == 0:
			continue
		default:
			r.printf(" QOS %s already exists, updating its settings\n", n)
			updated = true
		}
		// A new QOS is not known yet to its own settings (Preempt=itself
		// is a bad qos, as in Slurm).
		if err := applyQOSSpecs(st, q, cmd.Set, r); err != nil {
			var ae *Error
			if errors.As(err, &ae) && strings.HasPrefix(ae.Msg, "Unknown option") {
				return unknownOption(err, true)
			}
			return err
		}
		if st.QOS[n] == nil {
			st.AddQOS(q)
		}
	}
	if len(newQOS) == 0 && !updated {
		return outErr(" Nothing new added.")
	}
	printNewQOS(st, r, newQOS, cmd.Set)
	r.Changed = true
	return nil
}

// printNewQOS prints the QOS created and the settings given; sacctmgr
// shows the last one's description.
func printNewQOS(st *State, r *Result, qs []*QOS, set []Spec) {
	if len(qs) == 0 {
		return
	}
	r.printf(" Adding QOS(s)\n")
	for _, q := range qs {
		r.printf("  %s\n", q.Name)
	}
	last := qs[len(qs)-1]
	r.printf(" Settings\n  %-15s= %s\n", "Description", last.Description)
	printSettings(r, qosSettingLines[1:], set, qosAddValue(st, last))
}
