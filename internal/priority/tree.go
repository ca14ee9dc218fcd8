package priority

import (
	"fmt"
	"maps"
	"sort"
)

// SharesParent is the RawShares marker for `Fairshare=parent` (Slurm's
// SLURMDB_FS_USE_PARENT): the association takes its parent's fair-share.
const SharesParent uint32 = 0x7fffffff

// NoAssoc is the association index of a job without an association.
const NoAssoc = -1

// Assoc is one association of the fair-share tree: an account (User == "")
// or a user under an account. Input fields are set by the builder and the
// driver; computed fields are filled by Tree.Recompute.
type Assoc struct {
	// ID is the association id (sshare -o ID); the builders number
	// associations from 1 in creation order unless the store's ids are set.
	ID uint32
	// Account is the account name; for a user association, its account.
	Account string
	// User is the user name, "" for an account association.
	User string
	// Partition is set for a partition-specific user association.
	Partition string
	// Parent is the index of the parent account association, -1 for root.
	Parent int
	// Children are indexes of the child associations in display order:
	// users first, then sub-accounts, each sorted by name (sacctmgr/sshare
	// tree order).
	Children []int
	// RawShares is the Fairshare value, or SharesParent.
	RawShares uint32
	// Priority is the association priority (already inherited from the
	// parent when unset, as slurmdbd does).
	Priority uint32
	// UsageRaw is the decayed usage in billing-seconds (Slurm usage_raw).
	UsageRaw float64
	// UsageTRES is the decayed per-TRES usage in TRES-seconds
	// (usage_tres_raw; sshare GrpTRESRaw prints it in minutes).
	UsageTRES map[string]float64
	// UsedWall is the decayed wall-clock seconds of its jobs
	// (grp_used_wall, checked against GrpWall).
	UsedWall float64
	// GrpTRESMins is the association's GrpTRESMins limit (sshare column).
	GrpTRESMins map[string]int64
	// TRESRunMins is the remaining TRES-minutes of its running jobs,
	// set by the driver (sshare column).
	TRESRunMins map[string]int64

	// Computed by Recompute.

	// LevelShares is the sum of RawShares of the fair-share siblings.
	LevelShares uint64
	// NormShares is shares/level_shares under Fair Tree, the product along
	// the path under the classic algorithms.
	NormShares float64
	// NormUsage is UsageRaw / root UsageRaw (capped at 1).
	NormUsage float64
	// EffectvUsage is usage relative to the fair-share parent (Fair Tree)
	// or the classic effective usage.
	EffectvUsage float64
	// FairShare is the fair-share factor (fs_factor) in [0,1].
	FairShare float64
	// LevelFS is NormShares/EffectvUsage (Fair Tree only); +Inf when
	// there is no usage.
	LevelFS float64
	// AwaitingPass is set on an association added since the last
	// PriorityCalcPeriod pass (ContinueFrom): it has no factors yet, and
	// sshare prints its NormUsage empty, as Slurm's does. Recompute
	// clears it.
	AwaitingPass bool

	depth    int
	fsParent int     // first ancestor that is not FS=parent
	ord      int     // position in the parent's Children
	isUser   bool    // cached User != ""
	kidSum   uint64  // shares of the fair-share children
	kidUsage float64 // NormUsage of the fair-share children
}

// Sync brings the records (Assocs, their usage and fair-share values) up
// to date for a reader outside this package.
func (t *Tree) Sync() {
	t.syncRecords()
	t.SyncUsage()
}

// IsUser reports whether this is a user association.
func (a *Assoc) IsUser() bool { return a.User != "" }

// SharesFromParent reports whether the association has Fairshare=parent.
func (a *Assoc) SharesFromParent() bool { return a.RawShares == SharesParent }

// Depth is the association's depth in the tree (root = 0).
func (a *Assoc) Depth() int { return a.depth }

// QOSUsage is the usage state of one QOS: Slurm charges the job QOS (with
// its UsageFactor) and the partition QOS besides the associations.
type QOSUsage struct {
	Name     string
	Priority uint32
	// UsageFactor multiplies the usage charged by jobs of this QOS
	// (default 1).
	UsageFactor float64
	// NoDecay is QOS Flags=NoDecay: its usage is neither decayed nor
	// charged decayed increments.
	NoDecay  bool
	UsageRaw float64
	// UsedWall is the decayed wall-clock seconds (grp_used_wall).
	UsedWall  float64
	UsageTRES map[string]float64
}

// Tree is the fair-share tree. Index 0 is the root account association.
// It also holds the QOS usage records.
type Tree struct {
	Assocs []Assoc
	QOS    map[string]*QOSUsage
	// TRESNames is the configured TRES list, in Slurm's order, used to
	// print GrpTRESRaw; DefaultTRESNames when empty.
	TRESNames []string

	byKey  map[assocKey]int
	users  int
	dirty  bool
	order  []int // every association in display (depth-first) order
	fsKids [][]int
	// hot mirrors the per-association values the job loop reads, packed
	// so 100,000 jobs hit a small array instead of the large Assoc records.
	hot []assocHot
	// flat is the packed copy Fair Tree's Recompute works on.
	flat flatTree
	pow  powMemo
}

type assocHot struct {
	fairShare float64
	priority  float64
}

// refreshHot copies FairShare and Priority into the packed array.
func (t *Tree) refreshHot() {
	t.syncRecords()
	if len(t.hot) != len(t.Assocs) {
		t.hot = make([]assocHot, len(t.Assocs))
	}
	for i := range t.Assocs {
		t.hot[i] = assocHot{t.Assocs[i].FairShare, float64(t.Assocs[i].Priority)}
	}
}

type assocKey struct{ account, user, partition string }

// DefaultTRESNames is Slurm's default TRES list.
var DefaultTRESNames = []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}

// NewTree returns a tree holding only the root account (shares 1).
func NewTree() *Tree {
	t := &Tree{QOS: map[string]*QOSUsage{}, byKey: map[assocKey]int{}}
	t.Assocs = append(t.Assocs, Assoc{ID: 1, Account: "root", Parent: -1, RawShares: 1})
	t.byKey[assocKey{"root", "", ""}] = 0
	t.dirty = true
	return t
}

// AddAccount adds account name under parent with the given RawShares
// (or SharesParent) and returns its index.
func (t *Tree) AddAccount(name, parent string, shares uint32) (int, error) {
	return t.add(name, "", "", parent, shares)
}

// AddUser adds the association of user under account and returns its index.
func (t *Tree) AddUser(user, account string, shares uint32) (int, error) {
	if user == "" {
		return 0, fmt.Errorf("add user association: empty user name")
	}
	return t.add(account, user, "", account, shares)
}

// AddUserPartition adds a partition-specific association of user under
// account (a separate user association for fair-share, as in Slurm).
func (t *Tree) AddUserPartition(user, account, partition string, shares uint32) (int, error) {
	if user == "" {
		return 0, fmt.Errorf("add user association: empty user name")
	}
	return t.add(account, user, partition, account, shares)
}

func (t *Tree) add(account, user, partition, parent string, shares uint32) (int, error) {
	if account == "" {
		return 0, fmt.Errorf("add association: empty account name")
	}
	p, ok := t.byKey[assocKey{parent, "", ""}]
	if !ok {
		return 0, fmt.Errorf("add association %s/%s: parent account %q does not exist", account, user, parent)
	}
	k := assocKey{account, user, partition}
	if _, dup := t.byKey[k]; dup {
		return 0, fmt.Errorf("add association %s/%s: already exists", account, user)
	}
	t.syncRecords() // the packed values, before the shape changes
	t.SyncUsage()
	t.flat.usageOK = false
	id := len(t.Assocs)
	t.Assocs = append(t.Assocs, Assoc{ID: uint32(id + 1), Account: account, User: user, Partition: partition, Parent: p, RawShares: shares})
	t.Assocs[p].Children = append(t.Assocs[p].Children, id)
	t.byKey[k] = id
	t.dirty = true
	return id, nil
}

// AddQOS registers a QOS (priority, UsageFactor, NoDecay) and returns it.
func (t *Tree) AddQOS(name string, prio uint32, usageFactor float64, noDecay bool) *QOSUsage {
	q := &QOSUsage{Name: name, Priority: prio, UsageFactor: usageFactor, NoDecay: noDecay}
	t.QOS[name] = q
	t.dirty = true
	return q
}

// Lookup returns the index of the association (account, user); user ""
// names the account association.
func (t *Tree) Lookup(account, user string) (int, bool) {
	i, ok := t.byKey[assocKey{account, user, ""}]
	return i, ok
}

// LookupJob returns the association a job of user in account on partition
// is charged to: the partition-specific one if it exists, else the user's.
func (t *Tree) LookupJob(account, user, partition string) (int, bool) {
	if partition != "" {
		if i, ok := t.byKey[assocKey{account, user, partition}]; ok {
			return i, true
		}
	}
	return t.Lookup(account, user)
}

// UserCount is the number of user associations (Fair Tree's denominator).
func (t *Tree) UserCount() int { t.prepare(); return t.users }

// Order returns every association index in display order (depth first,
// users before sub-accounts).
func (t *Tree) Order() []int { t.prepare(); return t.order }

// prepare sorts children, computes depths, fair-share parents, the
// flattened fair-share sibling sets and the maxima used for normalising.
// It runs once after the tree changes shape.
func (t *Tree) prepare() {
	if !t.dirty {
		return
	}
	t.syncRecords() // the last pass's values, for the associations it knew
	t.SyncUsage()
	t.dirty = false
	t.users = 0
	for i := range t.Assocs {
		a := &t.Assocs[i]
		a.isUser = a.User != ""
		if a.isUser {
			t.users++
		}
		kids := a.Children
		sort.SliceStable(kids, func(x, y int) bool { return t.childLess(kids[x], kids[y]) })
		for o, c := range kids {
			t.Assocs[c].ord = o
		}
	}
	t.order = t.order[:0]
	t.walkPrepare(0, 0)
	t.fsKids = make([][]int, len(t.Assocs))
	for i := range t.Assocs {
		if t.Assocs[i].isUser || (i != 0 && t.Assocs[i].SharesFromParent()) {
			continue
		}
		t.fsKids[i] = t.flatten(i, nil)
	}
	t.flat.built = false
}

func (t *Tree) childLess(x, y int) bool {
	a, b := &t.Assocs[x], &t.Assocs[y]
	if (a.User != "") != (b.User != "") {
		return a.User != ""
	}
	if a.User != b.User {
		return a.User < b.User
	}
	if a.Account != b.Account {
		return a.Account < b.Account
	}
	return a.Partition < b.Partition
}

func (t *Tree) walkPrepare(i, depth int) {
	a := &t.Assocs[i]
	a.depth = depth
	a.fsParent = -1
	if p := a.Parent; p >= 0 {
		a.fsParent = p
		if p != 0 && t.Assocs[p].SharesFromParent() && !t.Assocs[p].isUser {
			a.fsParent = t.Assocs[p].fsParent
		}
	}
	t.order = append(t.order, i)
	for _, c := range a.Children {
		t.walkPrepare(c, depth+1)
	}
}

// flatten lists the fair-share siblings under account i: its children,
// with FS=parent sub-accounts replaced by their own children.
func (t *Tree) flatten(i int, out []int) []int {
	for _, c := range t.Assocs[i].Children {
		ca := &t.Assocs[c]
		if !ca.isUser && ca.SharesFromParent() {
			out = t.flatten(c, out)
			continue
		}
		out = append(out, c)
	}
	return out
}

// CopyUsageFrom takes over the usage of the associations and QOS of old
// that exist in t (matched by account and user, QOS by name): used when
// the tree is rebuilt from a new accounting snapshot.
func (t *Tree) CopyUsageFrom(old *Tree) {
	if old == nil {
		return
	}
	old.SyncUsage()
	t.SyncUsage()
	t.flat.usageOK = false // read from the records again
	for i := range old.Assocs {
		o := &old.Assocs[i]
		if j, ok := t.byKey[assocKey{o.Account, o.User, o.Partition}]; ok {
			t.Assocs[j].UsageRaw, t.Assocs[j].UsedWall = o.UsageRaw, o.UsedWall
			t.Assocs[j].UsageTRES = maps.Clone(o.UsageTRES)
		}
	}
	for name, oq := range old.QOS {
		if q := t.QOS[name]; q != nil {
			q.UsageRaw, q.UsedWall, q.UsageTRES = oq.UsageRaw, oq.UsedWall, maps.Clone(oq.UsageTRES)
		}
	}
}
