package acct

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

func execDelete(st *State, cmd *Command, env ExecEnv, r *Result) error {
	switch cmd.Entity {
	case EntQOS:
		return deleteQOS(st, cmd, r)
	case EntAccount:
		return deleteAccounts(st, cmd, env, r)
	case EntUser:
		return deleteUsers(st, cmd, env, r)
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
		as := selectAssocs(st, f)
		if err := deleteAssocs(st, as, env, r, accountHint); err != nil {
			return err
		}
		r.printf(" Deleting associations...\n")
		for _, a := range as {
			r.printf("  %s\n", assocName(a))
		}
		return nil
	}
	return errorf("delete %s is not supported", cmd.Entity)
}

// nothingDeleted is sacctmgr's outcome when no record matched.
func nothingDeleted() error { return outErr(" Nothing deleted") }

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

func deleteAccounts(st *State, cmd *Command, env ExecEnv, r *Result) error {
	if err := checkKeys(cmd.Where, false, "Cluster", "Account", "Description", "Organization", "Parent"); err != nil {
		return err
	}
	if len(cmd.Names) == 0 && len(specValues(cmd.Where, "Account", true)) == 0 {
		return errorf("You need to name the account(s) to delete")
	}
	accts := matchAccounts(st, cmd.Names, cmd.Where)
	f := assocFilter{clusters: specValues(cmd.Where, "Cluster", true), onlyAccounts: true}
	var as []*Association
	var names []string
	for _, a := range accts {
		if a.Name == RootAccount {
			return plainErr(" You are not allowed to remove the root account.\n Use remove cluster instead.")
		}
		f.accounts = []string{a.Name}
		if sel := selectAssocs(st, f); len(sel) > 0 {
			as = append(as, sel...)
			names = append(names, a.Name)
		}
	}
	if len(as) == 0 {
		return nothingDeleted()
	}
	// Slurm deletes an account with everything below it: its
	// sub-accounts and the users' associations.
	as = withDescendants(st, as)
	if err := deleteAssocs(st, as, env, r, accountHint); err != nil {
		return err
	}
	r.printf(" Deleting accounts...\n")
	for _, n := range names {
		r.printf("  %s\n", n)
	}
	return nil
}

// withDescendants adds every association below those of as.
func withDescendants(st *State, as []*Association) []*Association {
	in := map[int64]bool{}
	for _, a := range as {
		in[a.ID] = true
	}
	for grew := true; grew; {
		grew = false
		for _, id := range st.SortedAssocIDs() {
			a := st.Assocs[id]
			if !in[id] && in[a.ParentID] {
				in[id], grew = true, true
				as = append(as, a)
			}
		}
	}
	return as
}

func deleteUsers(st *State, cmd *Command, env ExecEnv, r *Result) error {
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
	var names []string
	for _, u := range users {
		if u.Name == "root" {
			return errorf("The root user can not be deleted")
		}
		f.users = []string{u.Name}
		if sel := selectAssocs(st, f); len(sel) > 0 {
			as = append(as, sel...)
			names = append(names, u.Name)
		}
	}
	if err := deleteAssocs(st, as, env, r, userHint); err != nil {
		return err
	}
	// With conditions on the associations sacctmgr lists those it
	// deleted; otherwise the users.
	if len(f.clusters) > 0 || len(f.accounts) > 0 || len(f.partitions) > 0 {
		r.printf(" Deleting user associations...\n")
		for _, a := range as {
			r.printf("  C = %-10s A = %-10s U = %-9s\n", a.Cluster, a.Account, a.User)
		}
		return nil
	}
	r.printf(" Deleting users...\n")
	for _, n := range names {
		r.printf("  %s\n", n)
	}
	return nil
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
// and accounts that no longer have any association. Callers print what
// they deleted.
func deleteAssocs(st *State, as []*Association, env ExecEnv, r *Result, hint string) error {
	if len(as) == 0 {
		return nothingDeleted()
	}
	gone := map[int64]bool{}
	for _, a := range as {
		gone[a.ID] = true
	}
	if err := jobsActive(st, gone, env.ActiveJobs); err != nil {
		return err
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
	for _, a := range as {
		delete(st.Assocs, a.ID)
	}
	if err := fixDefaultAccounts(st, as, hint); err != nil {
		return err
	}
	dropOrphans(st)
	r.Changed = true
	return nil
}

// jobsActive refuses to delete associations that pending or running
// jobs bill, with slurmdbd's message listing those jobs (oracle:
// sacctmgr-modify-more).
func jobsActive(st *State, gone map[int64]bool, jobs []ActiveJob) error {
	var b strings.Builder
	for _, j := range jobs {
		a := st.assocOfJob(j)
		if a == nil || !gone[a.ID] {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(" Error with request: Job(s) active, cancel job(s) before remove")
		}
		fmt.Fprintf(&b, "\n  JobID = %-10d C = %-10s A = %-10s U = %-9s P = %s", j.ID, j.Cluster, j.Account, j.User, j.Partition)
	}
	if b.Len() == 0 {
		return nil
	}
	return plainErr("%s", b.String())
}

// assocOfJob is the association job j bills: its partition's, else its
// account's for its user.
func (st *State) assocOfJob(j ActiveJob) *Association {
	var plain *Association
	for _, a := range st.Assocs {
		if a.Cluster != j.Cluster || a.Account != j.Account || a.User != j.User {
			continue
		}
		if a.Partition == j.Partition && j.Partition != "" {
			return a
		}
		if a.Partition == "" {
			plain = a
		}
	}
	return plain
}

func childWord(c *Association) string {
	if c.IsUser() {
		return fmt.Sprintf("user %s", c.User)
	}
	return fmt.Sprintf("sub-account %s", c.Account)
}

// fixDefaultAccounts refuses to leave a user who still has associations
// without one in its default account, with Slurm's message listing the
// deleted associations of those default accounts.
func fixDefaultAccounts(st *State, deleted []*Association, hint string) error {
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
	var b strings.Builder
	for _, a := range deleted {
		if a.IsUser() && any[a.User] && !has[a.User] && st.Users[a.User].DefaultAccount == a.Account {
			fmt.Fprintf(&b, "  C = %-15s A = %-10s U = %-9s\n", a.Cluster, a.Account, a.User)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	return plainErr(" Error with request: You can not remove the default account of a user\n%s%s\n Changes Discarded", b.String(), hint)
}

// The advice sacctmgr gives after refusing to delete default accounts,
// for delete account and for delete user.
const (
	accountHint = " Please either remove the accounts listed above from list and resubmit,\n" +
		" or change these users' default accounts to remove the account(s)."
	userHint = " You must change the default account of these users or remove the users completely" +
		" from the affected clusters to allow these changes."
)

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
