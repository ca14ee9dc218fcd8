package ctld

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/priority"
	"github.com/sluice-hpc/sluice/internal/sched"
	"github.com/sluice-hpc/sluice/internal/tres"
)

// scontrol show assoc_mgr: the controller's view of the accounting
// records it enforces, with what its jobs hold against each limit. The
// layout, the filters and every figure were read on Slurm 24.11
// (scenarios scontrol-assoc-mgr and scontrol-admin-misc; a running-job
// session for the used figures): a limit prints as LIMIT(USED), N when
// unset; Grp figures count the association's whole subtree.

func (c *Controller) registerAssocMgrRoute(mux *http.ServeMux) {
	mux.HandleFunc("POST "+api.PathAssocMgr, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.AssocMgrRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.do(ctx, func(ls *loopState) (any, error) { return ls.assocMgr(w, req), nil })
	}))
}

// limitUse is what the live jobs hold against one association subtree,
// one QOS or one user or account within a QOS.
type limitUse struct {
	run, accrue, submit int64
	tres                tres.Vector // held by running jobs; node counts distinct nodes
	runMins             tres.Vector // TRES-minutes left before the running jobs' limits
	nodes               map[int32]bool
	first               sched.JobID // the lowest job id counted (QOS owner order)
}

func (u *limitUse) add(j *sched.Job, alloc tres.Vector, left time.Duration) {
	if u.tres == nil {
		u.tres, u.runMins, u.nodes, u.first = tres.Vector{}, tres.Vector{}, map[int32]bool{}, j.ID
	}
	u.first = min(u.first, j.ID)
	u.submit++
	if j.State.Base() == sched.JobPending {
		if !j.AccrueTime.IsZero() && j.Hold == sched.HoldNone {
			u.accrue++
		}
		return
	}
	u.run++
	for name, v := range alloc {
		if name != "node" {
			u.tres[name] += v
			// whole minutes, as Slurm's remaining-time product is kept
			u.runMins[name] += int64(float64(v) * left.Seconds() / 60)
		}
	}
	for _, n := range j.Alloc.Nodes {
		u.nodes[n] = true
	}
	u.tres["node"] = int64(len(u.nodes))
	u.runMins["node"] += int64(float64(len(j.Alloc.Nodes)) * left.Seconds() / 60)
}

// assocMgrUse counts the pending and active jobs by association (each
// counts in its association and every ancestor), by QOS and by QOS user
// and account.
type assocMgrUse struct {
	assoc            map[int64]*limitUse
	qos              map[string]*limitUse
	qosUser, qosAcct map[string]map[string]*limitUse
}

func (ls *loopState) assocMgrUse(now time.Time) assocMgrUse {
	u := assocMgrUse{assoc: map[int64]*limitUse{}, qos: map[string]*limitUse{},
		qosUser: map[string]map[string]*limitUse{}, qosAcct: map[string]map[string]*limitUse{}}
	ap, cluster := ls.acctPolicy, ls.c.cfg.ClusterName
	for _, j := range ls.st.Jobs() {
		if j.State.Base() != sched.JobPending && !isActive(j) {
			continue
		}
		var alloc tres.Vector
		var left time.Duration
		if isActive(j) {
			alloc = ls.allocTRESVector(j)
			if !j.EndTime.IsZero() && j.EndTime.After(now) {
				left = j.EndTime.Sub(now)
			}
		}
		a := ap.UserAssoc(cluster, j.User, j.Account, ls.runPartition(j))
		for ; a != nil; a = ap.Parent(a) {
			entry(u.assoc, a.ID).add(j, alloc, left)
		}
		if j.QOS == "" {
			continue
		}
		entry(u.qos, j.QOS).add(j, alloc, left)
		if u.qosUser[j.QOS] == nil {
			u.qosUser[j.QOS], u.qosAcct[j.QOS] = map[string]*limitUse{}, map[string]*limitUse{}
		}
		entry(u.qosUser[j.QOS], j.User).add(j, alloc, left)
		entry(u.qosAcct[j.QOS], j.Account).add(j, alloc, left)
	}
	return u
}

// assocMgr renders scontrol show assoc_mgr. Flags pick the sections
// (users, assoc, qos; all three without flags); users= narrows the user
// records and the user associations (account associations always show),
// accounts= the associations, qos= the QOS records.
func (ls *loopState) assocMgr(w Who, req api.AssocMgrRequest) api.TextResponse {
	var b strings.Builder
	b.WriteString("Current Association Manager state\n")
	ap := ls.acctPolicy
	if ap == nil {
		return api.TextResponse{Text: b.String()}
	}
	want := func(flag string) bool {
		return len(req.Flags) == 0 || slices.ContainsFunc(req.Flags, func(f string) bool { return strings.EqualFold(f, flag) })
	}
	now := ls.c.now()
	use := ls.assocMgrUse(now)
	m := assocMgrText{b: &b, ap: ap, tree: ls.prio.tree, use: use, req: req}
	if !ls.isAdmin(w) {
		// PrivateData=users: a user's own record only; accounts or usage:
		// their own associations only (oracle: no account association
		// either). The QOS records stay public.
		m.ownUser = ls.c.private("users")
		m.ownAssocs = ls.c.private("accounts") || ls.c.private("usage")
		m.who = w.User
	}
	if want("users") {
		m.users()
	}
	if want("assoc") {
		m.assocs(ls.c.cfg.ClusterName)
	}
	if want("qos") {
		m.qos()
	}
	return api.TextResponse{Text: b.String()}
}

type assocMgrText struct {
	b    *strings.Builder
	ap   *acct.Policy
	tree *priority.Tree
	use  assocMgrUse
	req  api.AssocMgrRequest
	// ownUser and ownAssocs narrow the records to who's (PrivateData).
	ownUser, ownAssocs bool
	who                string
	uids               map[string]int
}

func listed(list []string, name string) bool { return len(list) == 0 || slices.Contains(list, name) }

// nameID is Slurm's "name(id)".
func nameID(name string, id int64) string { return name + "(" + strconv.FormatInt(id, 10) + ")" }

// uid is lookupUID, remembered for the listing: a user's records come
// up once per association, and each lookup reads the password database.
func (m *assocMgrText) uid(name string) int {
	if id, ok := m.uids[name]; ok {
		return id
	}
	if m.uids == nil {
		m.uids = map[string]int{}
	}
	m.uids[name] = lookupUID(name)
	return m.uids[name]
}

// userID is a user's "name(uid)".
func (m *assocMgrText) userID(name string) string { return nameID(name, int64(m.uid(name))) }

func (m *assocMgrText) section(title string) { m.b.WriteString("\n" + title + "\n\n") }

// users writes the user records: root first, as slurmctld loads them,
// then by uid.
func (m *assocMgrText) users() {
	m.section("User Records")
	st := m.ap.State()
	var names []string
	for name := range st.Users {
		if listed(m.req.Users, name) && (!m.ownUser || name == m.who) {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		if c := cmpUID(m.uid(a), m.uid(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for _, name := range names {
		u := st.Users[name]
		wckey := "(null)"
		if name == "root" {
			wckey = "" // the root user slurmdbd creates has an empty default wckey
		}
		fmt.Fprintf(m.b, "UserName=%s DefAccount=%s DefWckey=%s AdminLevel=%s\n", m.userID(name), u.DefaultAccount, wckey, u.AdminLevel)
	}
}

// cmpUID orders uids ascending, unknown users (-1) last.
func cmpUID(a, b int) int {
	if a < 0 || b < 0 {
		return cmp.Compare(b, a)
	}
	return cmp.Compare(a, b)
}

// assocs writes the association records in the tree's order (sshare's).
func (m *assocMgrText) assocs(cluster string) {
	m.section("Association Records")
	m.tree.Sync()
	var rootUsage float64
	if i, ok := m.tree.Lookup("root", ""); ok {
		rootUsage = m.tree.Assocs[i].UsageRaw
	}
	for _, a := range m.ap.Associations() {
		if a.Cluster != cluster || a.IsUser() && !listed(m.req.Users, a.User) || !listed(m.req.Accounts, a.Account) ||
			m.ownAssocs && a.User != m.who {
			continue
		}
		var t priority.Assoc
		if i, ok := m.tree.LookupJob(a.Account, a.User, a.Partition); ok {
			t = m.tree.Assocs[i]
		}
		m.assoc(a, &t, rootUsage)
	}
}

func (m *assocMgrText) assoc(a *acct.Association, t *priority.Assoc, rootUsage float64) {
	u := m.use.assoc[a.ID]
	if u == nil {
		u = &limitUse{}
	}
	user, parent, def := "", "", "No"
	root := a.ParentID == 0
	if a.IsUser() {
		user = m.userID(a.User)
		if du := m.ap.User(a.User); du != nil && du.DefaultAccount == a.Account {
			def = "Yes"
		}
	} else if p := m.ap.Parent(a); p != nil {
		parent = nameID(p.Account, p.ID)
	}
	prio := int64(0)
	if a.Priority != acct.Unset {
		prio = int64(a.Priority)
	}
	fmt.Fprintf(m.b, "ClusterName=%s Account=%s UserName=%s Partition=%s Priority=%d ID=%d\n", a.Cluster, a.Account, user, a.Partition, prio, a.ID)
	level, factor := t.LevelShares, 0.0
	if root {
		level = uint64(t.RawShares)
	}
	if a.IsUser() {
		factor = t.FairShare
	}
	// Normalised usage reads 1 until the cluster has any usage, and the
	// root's effective usage is 1 (oracle).
	norm, efctv := t.NormUsage, t.EffectvUsage
	if rootUsage == 0 {
		norm = 1
	}
	if root {
		norm, efctv = 1, 1
	}
	fmt.Fprintf(m.b, "    SharesRaw/Norm/Level/Factor=%d/%.2f/%d/%.2f\n", t.RawShares, rootZero(root, t.NormShares), level, factor)
	fmt.Fprintf(m.b, "    UsageRaw/Norm/Efctv=%.2f/%.2f/%.2f\n", t.UsageRaw, norm, efctv)
	fmt.Fprintf(m.b, "    ParentAccount=%s Lineage=%s DefAssoc=%s\n", parent, m.lineage(a), def)
	fmt.Fprintf(m.b, "    GrpJobs=%s GrpJobsAccrue=%s\n", used(a.GrpJobs, u.run), used(a.GrpJobsAccrue, u.accrue))
	fmt.Fprintf(m.b, "    GrpSubmitJobs=%s GrpWall=%s\n", used(a.GrpSubmitJobs, u.submit), usedWall(a.GrpWall, t.UsedWall))
	m.grpTRES(a.GrpTRES, a.GrpTRESMins, a.GrpTRESRunMins, u, t.UsageTRES)
	fmt.Fprintf(m.b, "    MaxJobs=%s MaxJobsAccrue=%s MaxSubmitJobs=%s MaxWallPJ=%s\n",
		usedIfSet(a.MaxJobs, u.run), usedIfSet(a.MaxJobsAccrue, u.accrue), usedIfSet(a.MaxSubmitJobs, u.submit), ifSet(a.MaxWall))
	fmt.Fprintf(m.b, "    MaxTRESPJ=%s\n    MaxTRESPN=%s\n    MaxTRESMinsPJ=%s\n", m.setTRES(a.MaxTRES), m.setTRES(a.MaxTRESPerNode), m.setTRES(a.MaxTRESMins))
	fmt.Fprintf(m.b, "    MinPrioThresh=%s\n    Comment=(null)\n", ifSet(a.MinPrioThreshold))
}

// rootZero is the root's normalised shares, which slurmctld leaves 0.
func rootZero(root bool, v float64) float64 {
	if root {
		return 0
	}
	return v
}

// lineage is Slurm's association path: "/" for the root, "/a/b/" for
// account b under a, "/a/b/0-user/" for a user of b.
func (m *assocMgrText) lineage(a *acct.Association) string {
	var parts []string
	chain := m.ap.Chain(a) // a first, the root last
	slices.Reverse(chain)
	for _, c := range chain {
		switch {
		case c.ParentID == 0 && !c.IsUser():
		case c.IsUser():
			leaf := "0-" + c.User
			if c.Partition != "" {
				leaf += "-" + c.Partition
			}
			parts = append(parts, leaf)
		default:
			parts = append(parts, c.Account)
		}
	}
	if len(parts) == 0 {
		return "/"
	}
	return "/" + strings.Join(parts, "/") + "/"
}

// grpTRES writes GrpTRES, GrpTRESMins and GrpTRESRunMins over every
// tracked TRES.
func (m *assocMgrText) grpTRES(grp, mins, runMins tres.Vector, u *limitUse, usage map[string]float64) {
	fmt.Fprintf(m.b, "    GrpTRES=%s\n", m.tresUsed(grp, func(n string) int64 { return u.tres[n] }))
	fmt.Fprintf(m.b, "    GrpTRESMins=%s\n", m.tresUsed(mins, func(n string) int64 { return int64(usage[n] / 60) }))
	fmt.Fprintf(m.b, "    GrpTRESRunMins=%s\n", m.tresUsed(runMins, func(n string) int64 { return u.runMins[n] }))
}

// tresUsed is "cpu=LIMIT(USED),mem=..." over the tracked TRES.
func (m *assocMgrText) tresUsed(limit tres.Vector, usedOf func(string) int64) string {
	parts := make([]string, 0, len(m.tree.TRESNames))
	for _, n := range m.tree.TRESNames {
		l := "N"
		if v, ok := limit[n]; ok && v >= 0 {
			l = strconv.FormatInt(v, 10)
		}
		parts = append(parts, n+"="+l+"("+strconv.FormatInt(usedOf(n), 10)+")")
	}
	return strings.Join(parts, ",")
}

// setTRES lists the TRES a limit sets, in the tracked TRES order.
func (m *assocMgrText) setTRES(limit tres.Vector) string {
	var parts []string
	for _, n := range m.tree.TRESNames {
		if v, ok := limit[n]; ok && v >= 0 {
			parts = append(parts, n+"="+strconv.FormatInt(v, 10))
		}
	}
	return strings.Join(parts, ",")
}

func used(l acct.Limit, n int64) string {
	if l == acct.Unset {
		return "N(" + strconv.FormatInt(n, 10) + ")"
	}
	return strconv.FormatInt(int64(l), 10) + "(" + strconv.FormatInt(n, 10) + ")"
}

func usedIfSet(l acct.Limit, n int64) string {
	if l == acct.Unset {
		return ""
	}
	return used(l, n)
}

func ifSet(l acct.Limit) string {
	if l == acct.Unset {
		return ""
	}
	return strconv.FormatInt(int64(l), 10)
}

// usedWall is GrpWall: the limit in minutes and the decayed wall minutes
// used.
func usedWall(l acct.Limit, secs float64) string {
	lim := "N"
	if l != acct.Unset {
		lim = strconv.FormatInt(int64(l), 10)
	}
	return fmt.Sprintf("%s(%.2f)", lim, secs/60)
}

// qos writes the QOS records in id order.
func (m *assocMgrText) qos() {
	m.section("QOS Records")
	st := m.ap.State()
	var qs []*acct.QOS
	for name, q := range st.QOS {
		if listed(m.req.QOS, name) {
			qs = append(qs, q)
		}
	}
	slices.SortFunc(qs, func(a, b *acct.QOS) int { return cmp.Compare(int(a.ID), int(b.ID)) })
	for _, q := range qs {
		m.qosRecord(q)
	}
}

func (m *assocMgrText) qosRecord(q *acct.QOS) {
	u := m.use.qos[q.Name]
	if u == nil {
		u = &limitUse{}
	}
	var raw, wall float64
	var usage map[string]float64
	if t := m.tree.QOS[q.Name]; t != nil {
		raw, wall, usage = t.UsageRaw, t.UsedWall, t.UsageTRES
	}
	fmt.Fprintf(m.b, "QOS=%s\n    UsageRaw=%f\n", nameID(q.Name, q.ID), raw)
	fmt.Fprintf(m.b, "    GrpJobs=%s GrpJobsAccrue=%s GrpSubmitJobs=%s GrpWall=%s\n",
		used(q.GrpJobs, u.run), used(q.GrpJobsAccrue, u.accrue), used(q.GrpSubmitJobs, u.submit), usedWall(q.GrpWall, wall))
	m.grpTRES(q.GrpTRES, q.GrpTRESMins, q.GrpTRESRunMins, u, usage)
	fmt.Fprintf(m.b, "    MaxWallPJ=%s\n    MaxTRESPJ=%s\n    MaxTRESPN=%s\n    MaxTRESMinsPJ=%s\n",
		ifSet(q.MaxWall), m.setTRES(q.MaxTRESPerJob), m.setTRES(q.MaxTRESPerNode), m.setTRES(q.MaxTRESMinsPerJob))
	fmt.Fprintf(m.b, "    MinPrioThresh= %s\n    MinTRESPJ=%s\n", ifSet(q.MinPrioThreshold), m.setTRES(q.MinTRESPerJob))
	fmt.Fprintf(m.b, "    PreemptMode=%s\n    Priority=%d\n", qosPreemptMode(q.PreemptMode), q.Priority)
	m.owners("Account", "No Accounts", "PA", m.use.qosAcct[q.Name], func(n string) string { return n },
		q.MaxJobsPerAccount, q.MaxJobsAccruePerAccount, q.MaxSubmitJobsPerAccount, q.MaxTRESPerAccount, q.MaxTRESRunMinsPerAccount)
	m.owners("User", "No Users", "PU", m.use.qosUser[q.Name], m.userID,
		q.MaxJobsPerUser, q.MaxJobsAccruePerUser, q.MaxSubmitJobsPerUser, q.MaxTRESPerUser, q.MaxTRESRunMinsPerUser)
}

// qosPreemptMode is the QOS's own preempt mode; one that defers to the
// cluster's prints OFF (oracle).
func qosPreemptMode(pm acct.PreemptMode) string {
	if pm == acct.PreemptCluster {
		return "OFF"
	}
	return strings.ToUpper(pm.String())
}

// owners writes a QOS's per-account or per-user limits with what each
// account or user with jobs in the QOS holds, in the order of their
// first job.
func (m *assocMgrText) owners(kind, none, sfx string, use map[string]*limitUse, label func(string) string,
	maxJobs, maxAccrue, maxSubmit acct.Limit, maxTRES, maxRunMins tres.Vector) {
	fmt.Fprintf(m.b, "    %s Limits\n", kind)
	if len(use) == 0 {
		fmt.Fprintf(m.b, "        %s\n", none)
		return
	}
	names := make([]string, 0, len(use))
	for n := range use {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(int(use[a].first), int(use[b].first)) })
	for _, n := range names {
		u := use[n]
		fmt.Fprintf(m.b, "      %s\n", label(n))
		fmt.Fprintf(m.b, "        MaxJobs%s=%s MaxJobsAccrue%s=%s MaxSubmitJobs%s=%s\n",
			sfx, used(maxJobs, u.run), sfx, used(maxAccrue, u.accrue), sfx, used(maxSubmit, u.submit))
		fmt.Fprintf(m.b, "        MaxTRES%s=%s\n", sfx, m.tresUsed(maxTRES, func(n string) int64 { return u.tres[n] }))
		fmt.Fprintf(m.b, "        MaxTRESRunMins%s=%s\n", sfx, m.tresUsed(maxRunMins, func(n string) int64 { return u.runMins[n] }))
	}
}
