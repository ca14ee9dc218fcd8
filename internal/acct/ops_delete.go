package acct

import (
	"fmt"
	"sort"
	"strconv"
)

func execDelete(st *State, cmd *Command, r *Result) error {
	switch cmd.Entity {
	case EntQOS:
		return deleteQOS(st, cmd, r)
	case EntAccount:
		return deleteAccounts(st, cmd, r)
	case EntUser:
		return deleteUsers(st, cmd, r)
	case EntCluster:
		return deleteClusters(st, cmd, r)
	case EntAssoc:
		if err := checkKeys(cmd.Where, false, "Cluster", "Account", "User", "Partition", "ID"); err != nil {
			return err
		}
		f, err := filterFrom(cmd.Where)
		if err != nil {
			return err
		}
		return deleteAssocs(st, selectAssocs(st, f), r)
	}
	return errorf("delete %s is not supported", cmd.Entity)
}

// nothingDeleted is sacctmgr's outcome when no record matched.
func nothingDeleted() error { return errorf("Nothing deleted") }

func deleteQOS(st *State, cmd *Command, r *Result) error {
	if err := checkKeys(cmd.Where, false, "ID"); err != nil {
		return err
	}
	names := lowerNames(cmd.Names)
	ids := specValues(cmd.Where, "ID", false)
	var del []*QOS
	for _, q := range st.QOS {
		if (len(names) > 0 || len(ids) > 0) && matchAny(names, q.Name) && matchAny(ids, strconv.FormatInt(q.ID, 10)) {
			del = append(del, q)
		}
	}
	if len(del) == 0 {
		return nothingDeleted()
	}
	sort.Slice(del, func(i, j int) bool { return del[i].ID < del[j].ID })
	r.printf(" Deleting QOS(s)...\n")
	for _, q := range del {
		r.printf("  %s\n", q.Name)
		delete(st.QOS, q.Name)
		scrubQOS(st, q.Name)
	}
	r.Changed = true
	return nil
}

// scrubQOS removes every reference to a deleted QOS, as slurmdbd does.
func scrubQOS(st *State, name string) {
	for _, a := range st.Assocs {
		if a.QOS != nil && contains(a.QOS, name) {
			a.QOS = editList(a.QOS, []string{name}, '-')
		}
		if a.DefaultQOS == name {
			a.DefaultQOS = ""
		}
	}
	for _, q := range st.QOS {
		if contains(q.Preempt, name) {
			q.Preempt = editList(q.Preempt, []string{name}, '-')
			if len(q.Preempt) == 0 {
				q.Preempt = nil
			}
		}
	}
}

func deleteAccounts(st *State, cmd *Command, r *Result) error {
	if err := checkKeys(cmd.Where, false, "Cluster", "Account", "Description", "Organization", "Parent"); err != nil {
		return err
	}
	if len(cmd.Names) == 0 && len(specValues(cmd.Where, "Account", true)) == 0 {
		return errorf("You need to name the account(s) to delete")
	}
	accts := matchAccounts(st, cmd.Names, cmd.Where)
	f := assocFilter{clusters: specValues(cmd.Where, "Cluster", true), onlyAccounts: true}
	var as []*Association
	for _, a := range accts {
		if a.Name == RootAccount {
			return errorf("The root account can not be deleted")
		}
		f.accounts = []string{a.Name}
		as = append(as, selectAssocs(st, f)...)
	}
	return deleteAssocs(st, as, r)
}

func deleteUsers(st *State, cmd *Command, r *Result) error {
	if err := checkKeys(cmd.Where, false, "Cluster", "Account", "Partition", "DefaultAccount", "AdminLevel", "User"); err != nil {
		return err
	}
	if len(cmd.Names) == 0 && len(specValues(cmd.Where, "User", false)) == 0 {
		return errorf("You need to name the user(s) to delete")
	}
	users, err := matchUsers(st, cmd.Names, cmd.Where)
	if err != nil {
		return err
	}
	f, _ := filterFrom(cmd.Where)
	f.onlyUsers = true
	var as []*Association
	for _, u := range users {
		if u.Name == "root" {
			return errorf("The root user can not be deleted")
		}
		f.users = []string{u.Name}
		as = append(as, selectAssocs(st, f)...)
	}
	return deleteAssocs(st, as, r)
}

func deleteClusters(st *State, cmd *Command, r *Result) error {
	if err := checkKeys(cmd.Where, false, "Cluster"); err != nil {
		return err
	}
	names := append(lowerNames(cmd.Names), specValues(cmd.Where, "Cluster", true)...)
	n := 0
	for _, c := range names {
		if st.Clusters[c] == nil {
			continue
		}
		r.printf(" Deleting clusters...\n  %s\n", c)
		for id, a := range st.Assocs {
			if a.Cluster == c {
				delete(st.Assocs, id)
			}
		}
		delete(st.Clusters, c)
		n++
	}
	if n == 0 {
		return nothingDeleted()
	}
	dropOrphans(st)
	r.Changed = true
	return nil
}

// deleteAssocs removes associations that have no children left (an
// account with users or sub-accounts can not be deleted), then the users
// and accounts that no longer have any association.
func deleteAssocs(st *State, as []*Association, r *Result) error {
	if len(as) == 0 {
		return nothingDeleted()
	}
	gone := map[int64]bool{}
	for _, a := range as {
		gone[a.ID] = true
	}
	for _, id := range st.SortedAssocIDs() {
		c := st.Assocs[id]
		if p := c.ParentID; p != 0 && gone[p] && !gone[c.ID] {
			pa := st.Assocs[p]
			return errorf("Can't delete account %s on cluster %s: it still has %s; delete them first", pa.Account, pa.Cluster, childWord(c))
		}
		if c.ParentID == 0 && gone[c.ID] {
			return errorf("The root association of cluster %s can only be deleted with the cluster", c.Cluster)
		}
	}
	r.printf(" Deleting associations...\n")
	for _, a := range as {
		r.printf("  %s\n", assocName(a))
		delete(st.Assocs, a.ID)
	}
	if err := fixDefaultAccounts(st); err != nil {
		return err
	}
	dropOrphans(st)
	r.Changed = true
	return nil
}

func childWord(c *Association) string {
	if c.IsUser() {
		return fmt.Sprintf("user %s", c.User)
	}
	return fmt.Sprintf("sub-account %s", c.Account)
}

// fixDefaultAccounts refuses to leave a user who still has associations
// without one in its default account.
func fixDefaultAccounts(st *State) error {
	has := map[string]bool{}
	any := map[string]bool{}
	for _, a := range st.Assocs {
		if a.IsUser() {
			any[a.User] = true
			if st.Users[a.User] != nil && st.Users[a.User].DefaultAccount == a.Account {
				has[a.User] = true
			}
		}
	}
	for _, name := range sortedKeys(any) {
		if !has[name] {
			return errorf("Can't delete the association of user %s with its default account %s; change DefaultAccount first", name, st.Users[name].DefaultAccount)
		}
	}
	return nil
}

// dropOrphans deletes users and accounts left without any association
// (root and the root user always stay).
func dropOrphans(st *State) {
	usedUser := map[string]bool{"root": true}
	usedAcct := map[string]bool{RootAccount: true}
	for _, a := range st.Assocs {
		usedUser[a.User] = true
		usedAcct[a.Account] = true
	}
	for n := range st.Users {
		if !usedUser[n] {
			delete(st.Users, n)
		}
	}
	for n := range st.Accounts {
		if !usedAcct[n] {
			delete(st.Accounts, n)
		}
	}
}
