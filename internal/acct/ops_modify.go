package acct

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// assocFilter selects associations by the usual sacctmgr conditions;
// an empty list matches everything.
type assocFilter struct {
	ids                                     []int64
	clusters, accounts, users, partitions   []string
	onlyUsers, onlyAccounts, userPartitions bool
}

func (f assocFilter) match(a *Association) bool {
	if f.onlyUsers && !a.IsUser() || f.onlyAccounts && a.IsUser() {
		return false
	}
	if len(f.ids) > 0 {
		found := false
		for _, id := range f.ids {
			found = found || id == a.ID
		}
		if !found {
			return false
		}
	}
	return matchAny(f.clusters, a.Cluster) && matchAny(f.accounts, a.Account) &&
		matchAny(f.users, a.User) && matchAny(f.partitions, a.Partition)
}

func matchAny(list []string, v string) bool { return len(list) == 0 || contains(list, v) }

// selectAssocs returns the matching associations in id order.
func selectAssocs(st *State, f assocFilter) []*Association {
	var out []*Association
	for _, id := range st.SortedAssocIDs() {
		if a := st.Assocs[id]; f.match(a) {
			out = append(out, a)
		}
	}
	return out
}

// filterFrom builds an association filter from where-specs.
func filterFrom(where []Spec) (assocFilter, error) {
	f := assocFilter{
		clusters: specValues(where, "Cluster", true), accounts: specValues(where, "Account", true),
		users: specValues(where, "User", false), partitions: specValues(where, "Partition", false),
	}
	for _, v := range specValues(where, "ID", false) {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return f, errorf("Invalid association id '%s'", v)
		}
		f.ids = append(f.ids, id)
	}
	return f, nil
}

// errNoChange is slurmdbd's answer to a modify of associations, accounts
// or users that matched nothing.
var errNoChange = errorf("Request didn't affect anything\n Error with request: Data has not changed since time specified")

// clusterOfUser is the cluster of the user's first association.
func clusterOfUser(st *State, user string) string {
	for _, id := range st.SortedAssocIDs() {
		if a := st.Assocs[id]; a.User == user {
			return a.Cluster
		}
	}
	return ""
}

func execModify(st *State, cmd *Command, env ExecEnv, r *Result) error {
	switch cmd.Entity {
	case EntQOS:
		return modifyQOS(st, cmd, r)
	case EntAccount:
		return modifyAccounts(st, cmd, r)
	case EntUser:
		return modifyUsers(st, cmd, r)
	case EntCluster:
		if err := checkKeys(cmd.Where, false, "Cluster"); err != nil {
			return err
		}
		f := assocFilter{clusters: append(lowerNames(cmd.Names), specValues(cmd.Where, "Cluster", true)...),
			accounts: []string{RootAccount}, onlyAccounts: true}
		return modifyAssocs(st, f, cmd.Set, "cluster", r)
	case EntAssoc:
		if err := checkKeys(cmd.Where, false, "Cluster", "Account", "User", "Partition", "ID"); err != nil {
			return err
		}
		f, err := filterFrom(cmd.Where)
		if err != nil {
			return err
		}
		return modifyAssocs(st, f, cmd.Set, "association", r)
	}
	return errorf("modify %s is not supported", cmd.Entity)
}

// modifyAssocs applies association attributes to every match.
func modifyAssocs(st *State, f assocFilter, set []Spec, what string, r *Result) error {
	if err := checkKeys(set, true); err != nil {
		return err
	}
	as := selectAssocs(st, f)
	if len(as) == 0 {
		return errNoChange
	}
	r.printf(" Modified %s associations...\n", what)
	for _, a := range as {
		if err := applyAssocSpecs(st, a, set); err != nil {
			return err
		}
		r.printf("  %s\n", assocName(a))
	}
	r.Changed = true
	return checkAllDefaultQOS(st)
}

// checkAllDefaultQOS re-checks DefaultQOS everywhere: narrowing a
// parent's QOS list can make an inherited default invalid below it.
func checkAllDefaultQOS(st *State) error {
	for _, id := range st.SortedAssocIDs() {
		if err := checkDefaultQOS(st, st.Assocs[id]); err != nil {
			return err
		}
	}
	return nil
}

func modifyQOS(st *State, cmd *Command, r *Result) error {
	if err := checkKeys(cmd.Where, false, "ID"); err != nil {
		return err
	}
	names := lowerNames(cmd.Names)
	ids := specValues(cmd.Where, "ID", false)
	var qs []*QOS
	for _, q := range st.QOS {
		if (len(names) == 0 || contains(names, q.Name)) && (len(ids) == 0 || contains(ids, strconv.FormatInt(q.ID, 10))) {
			qs = append(qs, q)
		}
	}
	if len(qs) == 0 {
		return outErr(" Nothing modified")
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].ID < qs[j].ID })
	r.printf(" Modified qos...\n")
	for _, q := range qs {
		for _, s := range cmd.Set {
			if s.Key == "Name" {
				return errorf("Renaming a QOS is not supported")
			}
		}
		if err := applyQOSSpecs(st, q, cmd.Set, r); err != nil {
			return err
		}
		r.printf("  %s\n", q.Name)
	}
	r.Changed = true
	return nil
}

// matchAccounts returns the accounts selected by names and where-specs.
func matchAccounts(st *State, names []string, where []Spec) []*Account {
	names = append(lowerNames(names), specValues(where, "Account", true)...)
	descs := specValues(where, "Description", false)
	orgs := specValues(where, "Organization", false)
	parents := specValues(where, "Parent", true)
	var out []*Account
	for _, a := range st.Accounts {
		if matchAny(names, a.Name) && matchAny(descs, a.Description) && matchAny(orgs, a.Organization) && matchAny(parents, a.Parent) {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func modifyAccounts(st *State, cmd *Command, r *Result) error {
	if err := checkKeys(cmd.Where, false, "Cluster", "Account", "Description", "Organization", "Parent"); err != nil {
		return err
	}
	if err := checkKeys(cmd.Set, true, "Description", "Organization", "Parent"); err != nil {
		return err
	}
	accts := matchAccounts(st, cmd.Names, cmd.Where)
	if len(accts) == 0 {
		return errNoChange
	}
	clusters := specValues(cmd.Where, "Cluster", true)
	assocSet, fields := splitSet(cmd.Set, "Parent")
	_, moved := specValue(cmd.Set, "Parent")
	var names, lines, children strings.Builder
	for _, a := range accts {
		oldParent := a.Parent
		if err := setAccountFields(st, a, cmd.Set); err != nil {
			return err
		}
		if fields {
			fmt.Fprintf(&names, "  %s\n", a.Name)
		}
		if len(assocSet) == 0 && !moved {
			continue
		}
		for _, as := range selectAssocs(st, assocFilter{clusters: clusters, accounts: []string{a.Name}, onlyAccounts: true}) {
			if err := applyAssocSpecs(st, as, assocSet); err != nil {
				return err
			}
			fmt.Fprintf(&lines, "  C = %-10s A = %s of %s\n", as.Cluster, a.Name, oldParent)
			for _, c := range touchedChildren(st, as, assocSet, moved) {
				children.WriteString(userAssocLine(c))
			}
		}
	}
	if names.Len() > 0 {
		r.printf(" Modified accounts...\n%s", names.String())
	}
	if lines.Len() > 0 {
		r.printf(" Modified account associations...\n%s%s", lines.String(), children.String())
	}
	r.Changed = true
	return checkAllDefaultQOS(st)
}

// splitSet returns the association attributes among set and whether it
// also sets a record field other than those in skip.
func splitSet(set []Spec, skip ...string) ([]Spec, bool) {
	var assocSet []Spec
	fields := false
	for _, s := range set {
		switch {
		case isAssocKey(s.Key):
			assocSet = append(assocSet, s)
		case !contains(skip, s.Key):
			fields = true
		}
	}
	return assocSet, fields
}

// touchedChildren are the user associations below a that slurmdbd
// reports as modified with it: all of them when the account moved,
// otherwise those that inherit one of the limits set.
func touchedChildren(st *State, a *Association, set []Spec, moved bool) []*Association {
	var out []*Association
	for _, id := range st.SortedAssocIDs() {
		c := st.Assocs[id]
		if c.ParentID != a.ID || !c.IsUser() {
			continue
		}
		if moved || inheritsAny(c, set) {
			out = append(out, c)
		}
	}
	// in tree order: a user's partition associations right after its
	// plain one (oracle, sacctmgr-modify-more)
	sortChildren(out)
	return out
}

// inheritsAny reports whether c leaves one of the inherited attributes
// of set (Max* limits, QOS, DefaultQOS, Priority) to its parent.
func inheritsAny(c *Association, set []Spec) bool {
	for _, s := range set {
		if f, ok := assocCountFields()[s.Key]; ok && strings.HasPrefix(s.Key, "Max") && !f(&c.AssocLimits).IsSet() {
			return true
		}
		if f, ok := assocWallFields()[s.Key]; ok && s.Key == "MaxWall" && !f(&c.AssocLimits).IsSet() {
			return true
		}
		if f, ok := assocTRESFields()[s.Key]; ok && strings.HasPrefix(s.Key, "Max") && len(*f(&c.AssocLimits)) == 0 {
			return true
		}
		switch {
		case s.Key == "QOS" && c.QOS == nil, s.Key == "DefaultQOS" && c.DefaultQOS == "",
			s.Key == "Priority" && !c.Priority.IsSet():
			return true
		}
	}
	return false
}

// userAssocLine prints a user association as sacctmgr's summaries do.
func userAssocLine(a *Association) string {
	s := fmt.Sprintf("  C = %-10s A = %-20s U = %-9s", a.Cluster, a.Account, a.User)
	if a.Partition != "" {
		s += " P = " + a.Partition
	}
	return s + "\n"
}

// setAccountFields writes Description, Organization and Parent; a new
// parent moves the account's associations in every cluster.
func setAccountFields(st *State, a *Account, set []Spec) error {
	for _, s := range set {
		switch s.Key {
		case "Description":
			a.Description = s.Value
		case "Organization":
			a.Organization = s.Value
		case "Parent":
			if err := moveAccount(st, a, strings.ToLower(s.Value)); err != nil {
				return err
			}
		}
	}
	return nil
}

func moveAccount(st *State, a *Account, parent string) error {
	if a.Name == RootAccount {
		return errorf("The root account can not be moved")
	}
	if st.Accounts[parent] == nil {
		return errorf("Parent account '%s' doesn't exist", parent)
	}
	for p := parent; p != ""; p = st.Accounts[p].Parent {
		if p == a.Name {
			return errorf("Account %s can not be moved under its own sub-account %s", a.Name, parent)
		}
		if st.Accounts[p] == nil {
			break
		}
	}
	for _, as := range selectAssocs(st, assocFilter{accounts: []string{a.Name}, onlyAccounts: true}) {
		p := findAssoc(st, as.Cluster, parent, "", "")
		if p == nil {
			return errorf("Parent account '%s' doesn't exist on cluster %s", parent, as.Cluster)
		}
		as.ParentID = p.ID
	}
	a.Parent = parent
	return nil
}

func modifyUsers(st *State, cmd *Command, r *Result) error {
	if err := checkKeys(cmd.Where, false, "Cluster", "Account", "Partition", "DefaultAccount", "AdminLevel", "User"); err != nil {
		return err
	}
	if err := checkKeys(cmd.Set, true, "DefaultAccount", "AdminLevel"); err != nil {
		return err
	}
	users, err := matchUsers(st, cmd.Names, cmd.Where)
	if err != nil {
		return err
	}
	if len(users) == 0 {
		return errNoChange
	}
	f, _ := filterFrom(cmd.Where)
	f.onlyUsers = true
	assocSet, fields := splitSet(cmd.Set)
	var names, lines strings.Builder
	for _, u := range users {
		if err := setUserFields(st, u, cmd.Set); err != nil {
			return err
		}
		if fields {
			fmt.Fprintf(&names, "  %s\n", u.Name)
		}
		if len(assocSet) == 0 {
			continue
		}
		f.users = []string{u.Name}
		as := selectAssocs(st, f)
		for _, a := range as {
			if err := applyAssocSpecs(st, a, assocSet); err != nil {
				return err
			}
			lines.WriteString(userAssocLine(a))
		}
	}
	if names.Len() == 0 && lines.Len() == 0 {
		return errNoChange
	}
	if names.Len() > 0 {
		r.printf(" Modified users...\n%s", names.String())
	}
	if lines.Len() > 0 {
		r.printf(" Modified user associations...\n%s", lines.String())
	}
	r.Changed = true
	return nil
}

// matchUsers returns the users selected by names and where-specs.
func matchUsers(st *State, names []string, where []Spec) ([]*User, error) {
	names = append(append([]string{}, names...), specValues(where, "User", false)...)
	defs := specValues(where, "DefaultAccount", true)
	var levels []string
	for _, v := range specValues(where, "AdminLevel", false) {
		l, err := parseAdminLevel(v)
		if err != nil {
			return nil, err
		}
		levels = append(levels, l.String())
	}
	var out []*User
	for _, u := range st.Users {
		if matchAny(names, u.Name) && matchAny(defs, u.DefaultAccount) && matchAny(levels, u.AdminLevel.String()) {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// setUserFields writes DefaultAccount (which must be one of the user's
// accounts) and AdminLevel.
func setUserFields(st *State, u *User, set []Spec) error {
	for _, s := range set {
		switch s.Key {
		case "DefaultAccount":
			acct := strings.ToLower(s.Value)
			if len(selectAssocs(st, assocFilter{accounts: []string{acct}, users: []string{u.Name}})) == 0 {
				return outErr(fmt.Sprintf(" Can't modify because these users aren't associated with new default account '%s'...\n  U = %s C = %s", acct, u.Name, clusterOfUser(st, u.Name)))
			}
			u.DefaultAccount = acct
		case "AdminLevel":
			l, err := parseAdminLevel(s.Value)
			if err != nil {
				return err
			}
			u.AdminLevel = l
		}
	}
	return nil
}
