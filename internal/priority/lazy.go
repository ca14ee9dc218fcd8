package priority

// Fair-share on demand (DeferFairShare). A simulation recalculates at
// every PriorityCalcPeriod, and what it needs from a pass is the
// FairShare of the users with pending jobs: a few dozen of several
// hundred associations. A user's Fair Tree rank is the number of users
// not visited before it in the depth-first walk over levels sorted by
// LevelFS, so it needs only the levels on its path: at each, the
// siblings' LevelFS, their order, and how many users the subtrees sorted
// before it hold. The values are those of a full pass on the same usage
// bit for bit: the same operations compute each LevelFS, a level without
// NaN has one order whatever sorts it, and a user tied with the users
// before it in its level takes the first one's rank (or, through a tied
// account, the rank of the user walked before that account). A NaN
// LevelFS on the way sends the question to a full pass instead.

// lazyRank is the state of DeferFairShare, in flatTree.
type lazyRank struct {
	// lazy is set by DeferFairShare: FairShare is computed when asked
	// (fairShareOf) from the current usage. frozen (FreezeFairShare)
	// suspends that: the last value computed is read as it is.
	lazy, frozen bool
	// gen counts usage changes; a value computed under another gen is
	// stale. fullGen is the gen of the last full pass.
	gen, fullGen uint32
	levelGen     []uint32 // gen at which level p was sorted (prepLevel)
	fsGen        []uint32 // gen at which hot[i].fairShare was computed
	pos          []int32  // position in its sorted level
	before       []int32  // users in the subtrees sorted before it in its level
	rankOf       []int32  // a user's rank, computed at fsGen
	lv           []levelConst
	subUsers     []int32 // users in its fair-share subtree (shape only)
}

// buildLazy sizes the arrays and counts the users under every
// association, children before parents (reverse depth-first order).
func (f *flatTree) buildLazy(t *Tree) {
	n := len(t.Assocs)
	f.levelGen, f.fsGen = make([]uint32, n), make([]uint32, n)
	f.pos, f.before, f.subUsers = make([]int32, n), make([]int32, n), make([]int32, n)
	f.rankOf, f.lv = make([]int32, n), make([]levelConst, n)
	f.lazy, f.gen, f.fullGen = false, 1, 0
	f.buildKept(n)
	for k := len(t.order) - 1; k >= 0; k-- {
		i := t.order[k]
		if t.Assocs[i].isUser {
			f.subUsers[i] = 1
			continue
		}
		for _, c := range t.fsKids[i] {
			f.subUsers[i] += f.subUsers[c]
		}
	}
}

// usageChanged invalidates the values computed on demand.
func (f *flatTree) usageChanged() { f.gen++ }

// DeferFairShare is RecomputeFairShare computed on demand: from now until
// the next Recompute or RecomputeFairShare, the fair-share factor the
// Calculator reads for an association is the one a pass over the current
// usage would give, computed when first read after a usage change
// (Decay, Charge, ResetUsage) from the levels on its path only. The
// records are written by a full pass when a function of this package
// reads them. Same conditions as RecomputeFairShare; under the classic
// algorithms it is Recompute.
func (t *Tree) DeferFairShare(cfg *Config) {
	if !t.packedFairTree(cfg) { // flat.go
		return
	}
	f := &t.flat
	if !f.lazy {
		f.lazy = true
		f.usageChanged() // the values in hot are the last pass's
	}
	f.stale = true
}

// FreezeFairShare, while on, makes a deferred fair-share factor read as
// last computed, however the usage changed since: for a provisional
// priority that a refresh replaces before anything reads it (the
// simulator's submissions between a recalculation and its refresh).
func (t *Tree) FreezeFairShare(on bool) { t.flat.frozen = on }

// fairShareOf is association i's fair-share factor (hot.fairShare),
// computed first if it is deferred and stale.
func (t *Tree) fairShareOf(i int) float64 {
	if f := &t.flat; f.lazy && !f.frozen && f.fullGen != f.gen && f.fsGen[i] != f.gen {
		if !t.rankOne(int32(i)) {
			t.lazyFull()
		}
	}
	return t.hot[i].fairShare
}

// lazyFull runs the full pass on the current usage if deferred values are
// stale, for the readers of every value (syncRecords).
func (t *Tree) lazyFull() {
	f := &t.flat
	if !f.lazy || f.fullGen == f.gen {
		return
	}
	f.usageUpToDateAll()
	t.fairTreePass()
	copy(f.passUsage, f.usage)
	f.fullGen = f.gen
}

// rankOne computes association u's FairShare from the levels on its
// path (and, for a user tied with the one walked before it, on that
// user's path); false when a level has a NaN LevelFS (the full pass
// decides those).
func (t *Tree) rankOne(u int32) bool {
	f := &t.flat
	if u == 0 || !f.key[u].user {
		t.hot[u].fairShare = 0
		f.fsGen[u] = f.gen
		return true
	}
	_, ok := t.userRank(u)
	return ok
}

// userRank is the rank the walk (rank) gives user u, which it stores
// with u's FairShare: the users not walked before it, or, when it is tied
// with the user walked before it, the rank of the first user of its tie
// group. Among siblings of equal LevelFS users sort first, so the group
// is the users just before u in its level with u's LevelFS; its first
// member ranks by the users before it, unless it comes first in the
// level and its account is tied: then it shares the rank of the last
// user walked before the account, in an earlier subtree.
func (t *Tree) userRank(u int32) (int32, bool) {
	f := &t.flat
	if f.fsGen[u] == f.gen {
		return f.rankOf[u], true
	}
	var above int32 // users walked before u's account
	for x := u; ; x = f.fsp[x] {
		if p := f.fsp[x]; f.levelGen[p] != f.gen && !f.prepLevel(p) {
			return 0, false
		}
		if x == 0 {
			break
		}
		if x != u {
			above += f.before[x]
		}
	}
	acct, seg, k := f.fsp[u], f.level[f.fsp[u]], f.pos[u]
	for k > 0 && f.sameLFS(acct, seg[k-1], u) {
		k--
	}
	r := int32(t.users) - above - f.before[seg[k]]
	if k == 0 && acct != 0 && f.tiedWithPrevious(acct) {
		prev, ok := f.previousUser(acct)
		switch {
		case !ok:
			return 0, false
		case prev < 0:
			r = int32(t.users) // no user before: rank's initial value
		default:
			if r, ok = t.userRank(prev); !ok {
				return 0, false
			}
		}
	}
	f.rankOf[u], f.fsGen[u] = r, f.gen
	t.hot[u].fairShare = f.rankFS[r]
	return r, true
}

// previousUser returns the user the walk visits just before x (-1 for
// none): the last user of the nearest earlier sibling subtree that has
// users, at x's level or, failing that, its account's. The levels on x's
// path are prepared; false on a NaN in a level it had to prepare.
func (f *flatTree) previousUser(x int32) (int32, bool) {
	for x != 0 {
		p := f.fsp[x]
		seg := f.level[p]
		for k := f.pos[x] - 1; k >= 0; k-- {
			if s := seg[k]; f.subUsers[s] > 0 {
				return f.lastUser(s)
			}
		}
		x = p
	}
	return -1, true
}

// lastUser returns the last user the walk visits in s's subtree (which
// has users).
func (f *flatTree) lastUser(s int32) (int32, bool) {
	for !f.key[s].user {
		if f.levelGen[s] != f.gen && !f.prepLevel(s) {
			return 0, false
		}
		seg := f.level[s]
		k := len(seg) - 1
		for f.subUsers[seg[k]] == 0 {
			k--
		}
		s = seg[k]
	}
	return s, true
}

// tiedWithPrevious reports whether rank walks x tied with what it walked
// before: x ties with its predecessor in the level, or it comes first and
// its account did (rank's accountTied). The levels on x's path are
// prepared.
func (f *flatTree) tiedWithPrevious(x int32) bool {
	for {
		p := f.fsp[x]
		if k := f.pos[x]; k > 0 {
			return f.sameLFS(p, f.level[p][k-1], x)
		}
		if p == 0 {
			return false
		}
		x = p
	}
}

// levelConst is what an association's LevelFS depends on besides usage,
// read in one place by prepLevel: levelFS is 0 without shares whatever
// the usage, and a Fairshare=parent association has a fixed value.
type levelConst struct {
	ns, lfs float64 // NormShares; the LevelFS when not byUsage
	byUsage bool    // LevelFS = ns / EffectvUsage (+Inf without usage)
}

// setLevelConst fills association i's levelConst from the packed shares.
func (f *flatTree) setLevelConst(i int) {
	switch {
	case f.fromParent[i]:
		f.lv[i] = levelConst{lfs: f.fixedLFS[i]}
	case f.normShares[i] == 0:
		f.lv[i] = levelConst{}
	default:
		f.lv[i] = levelConst{ns: f.normShares[i], byUsage: true}
	}
}

// prepLevel computes the LevelFS of account p's fair-share children (as
// compute does, through levelConst; EffectvUsage is left to the full pass
// that writes the records), sorts the level if the last order no longer
// holds, and records each child's position and the users sorted before
// it. False on a NaN. The usage of a child without usage needs no decay.
// This runs for the root's children at every recalculation a simulation
// refreshes at, so it is one loop over the level in the last order, the
// positions written as it goes, and a second only after a sort.
func (f *flatTree) prepLevel(p int32) bool {
	if len(f.level[p]) >= keptMin && f.prepKept(p) { // kept.go
		return true
	}
	f.usageUpToDate(p)
	pu, now := f.usage[p], int32(len(f.wallLog))
	usage, usageAt, key, lv := f.usage, f.usageAt, f.key, f.lv
	wall, wallAt := f.wall, f.wallAt
	pos, before, sub := f.pos, f.before, f.subUsers
	seg, inOrder := f.level[p], true
	var n int32
	for k, c := range seg {
		if at := usageAt[c]; at == now-1 && wallAt[c] == at {
			// one decay behind, the common case: upToDate's work inline
			fac := f.wallLog[at]
			usage[c], wall[c] = decayed(usage[c], fac), decayed(wall[c], fac)
			usageAt[c], wallAt[c] = now, now
		} else if at != now {
			f.upToDate(c) // flat.go
		}
		u := usage[c]
		lfs := levelFSOf(&lv[c], u, pu)
		if lfs != lfs {
			return false
		}
		key[c].lfs = lfs
		inOrder = inOrder && (k == 0 || keyLess(&key[seg[k-1]], &key[c]))
		pos[c], before[c] = int32(k), n
		n += sub[c]
	}
	if !inOrder { // the last order still holds for most levels
		n = 0
		for k, c := range f.sorted(p) {
			pos[c], before[c] = int32(k), n
			n += sub[c]
		}
	}
	f.levelGen[p] = f.gen
	f.staleKeys[p] = false
	f.certify(p, pu)
	return true
}
