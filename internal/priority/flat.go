package priority

import (
	"math"
	"slices"
)

// flatTree is the struct-of-arrays copy of the fair-share tree that Fair
// Tree's Recompute works on. A simulation recomputes fair-share at every
// PriorityCalcPeriod (100,000 times for one long trace); walking the
// ~230-byte Assoc records in every loop dominated that, while the values a
// pass needs are a few numbers per association. Everything that depends
// only on the tree shape and the shares (LevelShares, NormShares, the
// FS=parent markers) is computed when the tree or a RawShares changes;
// Recompute reads UsageRaw and Priority from the records once, computes
// in the packed arrays and writes the results back once, so the exported
// fields hold exactly what they held before (same operations, same
// order). RecomputeFairShare and PackUsage go further for a caller that
// reads these values only through this package: the records are written
// only when read (syncRecords, SyncUsage).
type flatTree struct {
	built  bool     // shape arrays match the prepared tree
	shares []uint32 // RawShares seen by the last setShares
	fsp    []int32  // fair-share parent (0 for the root)
	// level is, per account, its children in the LevelFS order of the
	// last pass: the next pass re-sorts it by insertion (see sorted).
	level [][]int32
	key   []levelKey
	// unranked are the Fairshare=parent accounts: in no level (their
	// children are in their parent's), so rank never visits them.
	unranked []int32

	fromParent  []bool    // Fairshare=parent
	fixedLFS    []float64 // LevelFS of a Fairshare=parent association
	normShares  []float64 // Fair Tree NormShares
	levelShares []uint64
	// recordsShares is true while the records' NormShares and LevelShares
	// hold the Fair Tree values (the classic algorithms overwrite them).
	recordsShares bool

	// usage and wall mirror every UsageRaw and UsedWall while usageOK: a
	// full Recompute reads them from the records; Decay, Charge and
	// ResetUsage keep them up to date.
	usage, wall []float64
	usageOK     bool
	// packed is set by PackUsage: while usageOK, usage and wall are the
	// values and the records' copies are written by SyncUsage
	// (usageDirty says they are behind); tres lists the associations
	// with a per-TRES usage map, which Decay walks.
	packed, usageDirty bool
	tres               []int32
	// wallLog holds the decay factors of the Decays since the values were
	// last brought up to date (catchUp): under PackUsage a Decay only logs
	// its factor, and association i's wall (usage) is decayed by
	// wallLog[wallAt[i]:] (wallLog[usageAt[i]:]) when it is charged or
	// read. Each value goes through the same decayed calls, in the same
	// order between its charges, as an eager decay: the results are
	// identical. A fair-share pass reads every usage; DeferFairShare's
	// reads only the levels on the paths of the users asked for.
	wallLog []float64
	wallAt  []int32
	usageAt []int32
	hasTRES []bool
	// passUsage is usage as of the last pass (NormUsage is computed from
	// it when the records are written).
	passUsage []float64
	effUsage  []float64
	anyNaN    bool // some LevelFS is NaN this pass
	// rankFS[r] is r / UserCount, the FairShare of rank r.
	rankFS []float64
	// stale is true when the last pass (RecomputeFairShare) left its
	// values in the packed arrays only; syncRecords writes them.
	stale bool
	lazyRank
	keptState
}

// levelKey is what ordering a Fair Tree level compares: LevelFS, then
// users before accounts, then the position among the siblings.
type levelKey struct {
	lfs  float64
	ord  int32
	user bool
}

// build copies the prepared shape into the packed arrays; the per-level
// orders start over, as a shape change starts them over in prepare.
func (f *flatTree) build(t *Tree) {
	n := len(t.Assocs)
	f.fsp, f.level = make([]int32, n), make([][]int32, n)
	f.key = make([]levelKey, n)
	f.shares = make([]uint32, n)
	f.fromParent, f.fixedLFS = make([]bool, n), make([]float64, n)
	f.normShares, f.levelShares = make([]float64, n), make([]uint64, n)
	f.usage, f.passUsage, f.effUsage = make([]float64, n), make([]float64, n), make([]float64, n)
	f.wall, f.hasTRES = make([]float64, n), make([]bool, n)
	f.wallLog, f.wallAt, f.usageAt = f.wallLog[:0], make([]int32, n), make([]int32, n)
	f.buildLazy(t)
	f.usageOK, f.stale, f.usageDirty = false, false, false
	levels := make([]int32, 0, n) // one backing array: the walk stays in few cache lines
	for i := range t.Assocs {
		a := &t.Assocs[i]
		f.fsp[i] = int32(max(a.fsParent, 0))
		f.key[i] = levelKey{ord: int32(a.ord), user: a.isUser}
		// A level is the fair-share siblings (fsKids): the children of a
		// Fairshare=parent account are ranked among its parent's
		// children, as Slurm 24.11's Fair Tree merges them (test24.4;
		// oracle: such a user ties with a user of the parent account).
		start := len(levels)
		for _, c := range t.fsKids[i] { // display order to start with
			levels = append(levels, int32(c))
		}
		f.level[i] = levels[start:len(levels):len(levels)]
	}
	f.unranked = f.unranked[:0]
	for i, kids := range t.fsKids {
		for o, c := range kids {
			f.key[c].ord = int32(o) // the tie-break: position in the level
		}
		if i != 0 && !t.Assocs[i].isUser && t.Assocs[i].SharesFromParent() {
			f.unranked = append(f.unranked, int32(i))
		}
	}
	f.rankFS = make([]float64, t.users+1)
	for r := range f.rankFS {
		f.rankFS[r] = float64(r) / float64(t.users)
	}
	if len(t.hot) != n {
		t.hot = make([]assocHot, n)
	}
	f.built = true
	f.setShares(t)
}

// setShares computes what depends on the shares alone: LevelShares (the
// shares of the fair-share siblings, computeCommon's kidSum) and Fair
// Tree's NormShares, parents before children.
func (f *flatTree) setShares(t *Tree) {
	f.voidKept()
	kidSum := make([]uint64, len(t.Assocs))
	for p, kids := range t.fsKids {
		for _, c := range kids {
			if s := t.Assocs[c].RawShares; s != SharesParent {
				kidSum[p] += uint64(s)
			}
		}
	}
	for _, i := range t.order {
		a := &t.Assocs[i]
		f.shares[i] = a.RawShares
		f.fromParent[i] = a.SharesFromParent()
		if i == 0 {
			f.levelShares[0], f.normShares[0] = uint64(a.RawShares), 0
			continue
		}
		f.levelShares[i] = kidSum[a.fsParent]
		switch {
		case f.fromParent[i]:
			f.normShares[i] = f.normShares[a.Parent]
			f.fixedLFS[i] = fsParentLevelFS
			if a.isUser {
				f.fixedLFS[i] = math.Inf(1)
			}
		case f.levelShares[i] == 0:
			f.normShares[i] = 0
		default:
			f.normShares[i] = float64(a.RawShares) / float64(f.levelShares[i])
		}
		f.setLevelConst(i)
	}
	f.recordsShares = false
}

// fairTreeFlat is Recompute under Slurm's Fair Tree, on the packed
// arrays: LevelFS = S/U at each level (S = NormShares, U = EffectvUsage,
// the usage relative to the fair-share parent), then a depth-first walk
// over siblings sorted by LevelFS that hands out ranks; FairShare = rank /
// number of user associations. The values go to the records and to the
// packed job-loop array.
func (t *Tree) fairTreeFlat() {
	f := &t.flat
	if !f.built {
		f.build(t)
	}
	f.gather(t)
	t.fairTreePass()
	f.writeBack(t, f.usage)
}

// RecomputeFairShare is Recompute for a caller that reads the computed
// fair-share values only through this package (Calculator, FormatSshare,
// Calculator.Explain): the simulator, which recomputes at every
// PriorityCalcPeriod of a long trace. Under Fair Tree it computes the same
// values as Recompute but keeps them in packed arrays: the computed
// fields of Assocs (LevelShares, NormShares, NormUsage, EffectvUsage,
// FairShare, LevelFS) are written, with the values of this pass, only when
// one of those functions or the next Recompute needs them; reading them
// directly from Assocs in between gives older values.
//
// It is valid as long as, since the last Recompute, usage changed only
// through Decay, Charge and ResetUsage, and no RawShares or Priority was
// written directly (after such a write call Recompute, which reads every
// record again). Under the classic algorithms it is Recompute.
func (t *Tree) RecomputeFairShare(cfg *Config) {
	if !t.packedFairTree(cfg) {
		return
	}
	f := &t.flat
	f.lazy = false
	f.usageUpToDateAll()
	t.fairTreePass()
	copy(f.passUsage, f.usage)
	f.stale = true
}

// packedFairTree prepares the tree and reports whether Fair Tree can run
// on the packed arrays (RecomputeFairShare, DeferFairShare); if not it
// runs Recompute, which those two then are.
func (t *Tree) packedFairTree(cfg *Config) bool {
	t.prepare()
	f := &t.flat
	if cfg.Flags&(FlagDepthOblivious|FlagNoFairTree) != 0 || !f.built || !f.usageOK {
		t.Recompute(cfg)
		return false
	}
	return true
}

// fairTreePass computes EffectvUsage, LevelFS and the ranks from the
// mirrored usage; FairShare goes to the job-loop array.
func (t *Tree) fairTreePass() {
	f := &t.flat
	f.compute()
	t.hot[0].fairShare = 0
	for _, i := range f.unranked {
		t.hot[i].fairShare = 0 // an account: no factor of its own
	}
	f.rank(t.hot, 0, false, t.users, t.users)
}

// syncRecords writes the values of the last RecomputeFairShare into the
// records, for the functions that read them there.
func (t *Tree) syncRecords() {
	if f := &t.flat; f.stale {
		t.lazyFull()
		f.writeBack(t, f.passUsage)
	}
}

// gather reads the usage and priority of every association (one pass over
// the records) and notices a changed RawShares.
func (f *flatTree) gather(t *Tree) {
	t.SyncUsage()
	changed := false
	f.tres = f.tres[:0]
	for i := range t.Assocs {
		a := &t.Assocs[i]
		changed = changed || a.RawShares != f.shares[i]
		f.usage[i], f.wall[i] = a.UsageRaw, a.UsedWall
		f.usageAt[i], f.wallAt[i] = int32(len(f.wallLog)), int32(len(f.wallLog))
		t.hot[i].priority = float64(a.Priority)
		if f.hasTRES[i] = a.UsageTRES != nil; f.hasTRES[i] {
			f.tres = append(f.tres, int32(i))
		}
	}
	f.usageOK, f.lazy = true, false
	f.voidKept()
	if changed {
		f.setShares(t)
	}
}

// compute sets EffectvUsage (UsageRaw over the fair-share parent's) and
// LevelFS (levelFS; a fixed value for Fairshare=parent) of every
// association but the root.
func (f *flatTree) compute() {
	f.voidKept() // every key is rewritten, levels may be sorted
	u := f.usage
	nan := false
	for i := 1; i < len(u); i++ {
		eu := 0.0
		if pu := u[f.fsp[i]]; pu > 0 {
			eu = u[i] / pu
		}
		f.effUsage[i] = eu
		lfs := f.fixedLFS[i]
		if !f.fromParent[i] {
			lfs = levelFS(f.normShares[i], eu)
		}
		f.key[i].lfs = lfs
		nan = nan || lfs != lfs
	}
	f.key[0].lfs = 0
	f.anyNaN = nan
}

// rank walks account p's children in LevelFS order (descending, users
// before accounts on ties): a user not tied with its predecessor takes
// the next rank; an account passes on whether it tied, so its first
// child shares the rank of the last ranked user. rank and rnt (the rank
// of the last tie group and the next free one) come back updated. The
// level is walked in the previous pass's order and sorted only when two
// neighbours turn out out of order (then walked again): without NaN the
// sorted order is unique, so that is the order a sort first would give.
func (f *flatTree) rank(hot []assocHot, p int32, accountTied bool, rank, rnt int) (int, int) {
	seg := f.level[p]
	checked := f.anyNaN // sorted's NaN handling decides the order
	if checked {
		seg = f.sorted(p)
	}
	key := f.key
	rank0, rnt0 := rank, rnt
walk:
	var prev *levelKey
	for k, i := range seg {
		c := &key[i]
		tied := accountTied
		if k > 0 {
			// in order: a lower LevelFS, or an equal one (a tie) with
			// the sibling order of cmpLevelFS
			switch {
			case c.lfs < prev.lfs:
				tied = false
			case c.lfs == prev.lfs:
				tied = true
				if !checked && keyLess(c, prev) {
					seg, checked = f.sorted(p), true
					rank, rnt = rank0, rnt0
					goto walk
				}
			default: // higher, or NaN (then checked: sorted decided)
				tied = false
				if !checked {
					seg, checked = f.sorted(p), true
					rank, rnt = rank0, rnt0
					goto walk
				}
			}
		}
		prev = c
		if c.user {
			if !tied {
				rank = rnt
			}
			hot[i].fairShare = f.rankFS[rank]
			rnt--
			continue
		}
		hot[i].fairShare = 0
		rank, rnt = f.rank(hot, i, tied, rank, rnt)
	}
	return rank, rnt
}

// sorted returns account p's children ordered by cmp, starting from the
// previous pass's order: between two passes only the charged
// associations move, so an insertion sort is linear where a full sort of
// every level on every pass dominated a long simulation. cmp is a total
// order without NaN (ties end on the unique position in the parent), so
// any sort gives the same sequence; a level with a NaN LevelFS (which
// breaks that) is sorted by slices.SortFunc from the previous order, and
// a level that moved a lot falls back to it too.
func (f *flatTree) sorted(p int32) []int32 {
	seg := f.level[p]
	if len(seg) < 2 {
		return seg
	}
	if f.anyNaN {
		for _, i := range seg {
			if math.IsNaN(f.key[i].lfs) {
				slices.SortFunc(seg, f.cmp)
				return seg
			}
		}
	}
	key := f.key
	budget := 8 * len(seg)
	for k := 1; k < len(seg); k++ {
		for m := k; m > 0 && keyLess(&key[seg[m]], &key[seg[m-1]]); m-- {
			seg[m-1], seg[m] = seg[m], seg[m-1]
			if budget--; budget < 0 {
				slices.SortFunc(seg, f.cmp)
				return seg
			}
		}
	}
	return seg
}

// keyLess reports whether a sorts before b: higher LevelFS first, then
// users, then the earlier sibling (cmpLevelFS < 0).
func keyLess(a, b *levelKey) bool {
	switch {
	case a.lfs > b.lfs:
		return true
	case a.lfs < b.lfs:
		return false
	case a.user != b.user:
		return a.user
	}
	return a.ord < b.ord
}

// cmp is cmpLevelFS on the packed keys.
func (f *flatTree) cmp(x, y int32) int {
	a, b := &f.key[x], &f.key[y]
	switch {
	case a.lfs > b.lfs:
		return -1
	case a.lfs < b.lfs:
		return 1
	case a.user != b.user:
		if a.user {
			return -1
		}
		return 1
	}
	return int(a.ord) - int(b.ord)
}

// writeBack stores the pass's values in the records (one pass over
// them); usage is UsageRaw as of the pass, for NormUsage
// (computeCommon's formula).
func (f *flatTree) writeBack(t *Tree, usage []float64) {
	shares := !f.recordsShares
	ru := usage[0]
	for i := 1; i < len(f.effUsage); i++ { // not the ones added since
		a := &t.Assocs[i]
		nu := 0.0
		if ru > 0 {
			// min(1, x) as math.Min computes it here (x is never -0 and
			// a NaN stays NaN)
			nu = usage[i] / ru
			if nu >= 1 {
				nu = 1
			}
		}
		a.NormUsage, a.EffectvUsage = nu, f.effUsage[i]
		a.FairShare, a.LevelFS = t.hot[i].fairShare, f.key[i].lfs
		a.AwaitingPass = false
		if shares {
			a.NormShares, a.LevelShares = f.normShares[i], f.levelShares[i]
		}
	}
	root := &t.Assocs[0]
	root.LevelShares, root.NormShares = f.levelShares[0], 0
	root.NormUsage, root.EffectvUsage, root.FairShare, root.LevelFS = 1, 1, 0, 0
	f.recordsShares, f.stale = true, false
}

// PackUsage is for a caller that reads usage only through this package
// (the simulator): from the next Recompute on, Decay and Charge update
// UsageRaw and UsedWall in packed arrays instead of the ~230-byte
// records, which a long replay walked at every PriorityCalcPeriod. The
// records' UsageRaw and UsedWall are written back when this package reads
// them (FormatSshare, CopyUsageFrom, Recompute, a change of the tree's
// shape) or by SyncUsage; read directly in between, they are older.
// UsageTRES stays in the records. To write UsageRaw or UsedWall directly,
// call SyncUsage before and PackUsage again after (the next Recompute
// reads the records).
func (t *Tree) PackUsage() {
	t.flat.packed = true
	t.flat.usageOK = false // read the records at the next Recompute
}

// SyncUsage writes the packed usage (see PackUsage) into the records'
// UsageRaw and UsedWall.
func (t *Tree) SyncUsage() {
	f := &t.flat
	if !f.usageDirty {
		return
	}
	f.catchUp()
	for i := range f.usage {
		t.Assocs[i].UsageRaw, t.Assocs[i].UsedWall = f.usage[i], f.wall[i]
	}
	f.usageDirty = false
}

// wallLogMax bounds wallLog (2 MiB): past it a Decay brings every wall up
// to date. Catching up costs what decaying eagerly would have, so the
// saving is the decays never caught up: a replay reads UsedWall only
// through sshare (--inspect), and 2^18 periods of 5 minutes are two and
// a half years of trace. A variable so that a test can lower it.
var wallLogMax = 1 << 18

// catchUp applies the logged decays to every association's wall and
// usage and empties the log.
func (f *flatTree) catchUp() {
	if len(f.wallLog) == 0 {
		return
	}
	for i := range f.wall {
		f.wallUpToDate(i)
		f.usageUpToDate(int32(i))
	}
	f.wallLog = f.wallLog[:0]
	clear(f.wallAt)
	clear(f.usageAt)
}

// usageUpToDateAll applies the logged decays to every usage (a pass
// reads them all); the log stays for the walls.
func (f *flatTree) usageUpToDateAll() {
	for i := range f.usage {
		f.usageUpToDate(int32(i))
	}
}

// usageUpToDate applies to association i's usage the logged decays it
// has not had yet, and to its wall too (upToDate).
func (f *flatTree) usageUpToDate(i int32) {
	if int(f.usageAt[i]) != len(f.wallLog) {
		f.upToDate(i)
	}
}

// wallUpToDate applies to association i's wall the logged decays it has
// not had yet, and to its usage too (upToDate).
func (f *flatTree) wallUpToDate(i int) {
	if int(f.wallAt[i]) != len(f.wallLog) {
		f.upToDate(int32(i))
	}
}

// upToDate applies to association i's usage and wall the logged decays
// each has not had yet. The two are decayed in one loop: each is a chain
// of dependent multiplications, so the processor runs the two chains side
// by side for about the cost of one, and a wall brought up to date when
// its usage is read costs nothing when the association is next charged
// (a replay's charges spent more time catching up the walls than on
// anything else in Charge). Each value still goes through the same
// decayed calls in the same order: the results are identical.
func (f *flatTree) upToDate(i int32) {
	log, now := f.wallLog, int32(len(f.wallLog))
	ua, wa := f.usageAt[i], f.wallAt[i]
	u, w := f.usage[i], f.wall[i]
	for ; wa < ua; wa++ {
		w = decayed(w, log[wa])
	}
	for ; ua < wa; ua++ {
		u = decayed(u, log[ua])
	}
	switch {
	case u == 0 && w == 0: // decayed keeps 0 at 0
	case w == 0:
		for _, fac := range log[ua:] {
			u = decayed(u, fac)
		}
	case u == 0:
		for _, fac := range log[ua:] {
			w = decayed(w, fac)
		}
	default:
		for _, fac := range log[ua:] {
			u, w = decayed(u, fac), decayed(w, fac)
		}
	}
	f.usage[i], f.wall[i] = u, w
	f.usageAt[i], f.wallAt[i] = now, now
}

// usagePacked reports whether the packed arrays hold the usage.
func (t *Tree) usagePacked() bool { return t.flat.packed && t.flat.usageOK }

// decay is Decay on the packed usage.
func (t *Tree) decayPacked(fac float64) {
	f := &t.flat
	f.usageChanged()
	if len(f.wallLog) == wallLogMax {
		f.catchUp()
	}
	f.wallLog = append(f.wallLog, fac)
	f.decayKept(fac)
	for _, i := range f.tres {
		m := t.Assocs[i].UsageTRES
		for k, v := range m {
			m[k] = decayed(v, fac)
		}
	}
	f.usageDirty = true
}

// chargePacked is Charge's update of association i on the packed usage.
func (t *Tree) chargePacked(i int, j *RunningJob, runDecay, factor float64) {
	f := &t.flat
	f.usageChanged()
	f.noteCharge(i) // kept.go
	f.usageUpToDate(int32(i))
	f.usage[i] += runDecay * j.Billing * factor
	f.wallUpToDate(i)
	f.wall[i] += runDecay
	f.usageDirty = true
	if len(j.Alloc) == 0 {
		return
	}
	a := &t.Assocs[i]
	a.UsageTRES = addTRES(a.UsageTRES, j, runDecay*factor)
	if !f.hasTRES[i] {
		f.hasTRES[i] = true
		f.tres = append(f.tres, int32(i))
	}
}

// mirror notes that association i's UsageRaw and UsedWall are now u, w.
func (f *flatTree) mirror(i int, u, w float64) {
	if f.usageOK {
		f.usageChanged()
		f.noteCharge(i)
		f.usage[i], f.wall[i] = u, w
		f.wallAt[i], f.usageAt[i] = int32(len(f.wallLog)), int32(len(f.wallLog))
	}
}
