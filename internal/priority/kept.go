package priority

import (
	"math"
	"slices"
)

// Kept levels. Between two recalculations of a simulation every usage
// decays and the associations of the running jobs are charged: about 5 of
// the 158 accounts under SDSC-SP2's root. prepLevel computed and checked
// the LevelFS of all 158 at every refresh, most of the cost of Fair Tree
// on demand. A decay multiplies every usage by the same factor, so the
// siblings not charged since a level was last computed in full keep their
// order, up to rounding: LevelFS = NormShares * parent usage / usage, and
// both usages of a sibling went through the same decays. The full
// computation certifies the order when every two neighbours with a finite
// positive LevelFS differ by more than keptMargin (relative), far more
// than the rounding of keptMaxDecays decays can cover; the siblings
// without usage (+Inf) or shares (0) keep their value while not charged.
// A charge notes the association in its level's list (noteCharge);
// prepKept computes only the listed siblings exactly and places each
// among the others by comparing it with their LevelFS scaled from the
// certified values (the parent usage's change over the decay product),
// which is decisive outside a band far wider than its error; inside it
// the neighbour's exact LevelFS decides. Only the stretch of the level
// between the old and new places of the charged siblings is rewritten,
// and a charged sibling far enough from its new neighbours gets a
// certified value again (rejoin), so the work follows the charges, not
// the width of the level. A charged sibling that ties a neighbour with a
// finite LevelFS, a NaN, or more than a sixteenth of the level charged
// send the level to the full computation, which certifies it again.
//
// The values and order are those of the full computation bit for bit
// (TestPropertyDeferredFairShareMatchesFullPass runs with every level
// kept). The LevelFS kept in key for a sibling not charged is its
// certified value, not the current one; the only reader that compares
// them, the tie test (sameLFS), knows that finite values never tie in a
// kept level.

// keptLevel is the certificate of a level's last full computation.
type keptLevel struct {
	epoch  uint32  // f.keptEpoch when certified; any other: none
	refGen uint32  // the usage generation it was computed at
	decays int32   // decays since
	prod   float64 // the product of their factors
	pu     float64 // the parent's usage then
	minU   float64 // least usage of a sibling with a finite LevelFS then (+Inf: none)
	// charged lists the siblings charged since they last had a certified
	// value (chargedIn marks them).
	charged []int32
	// backoff counts the full computations left before the level is
	// certified again, after too many charged siblings made one useless
	// (a level charged all over is not worth its bookkeeping).
	backoff int32
}

// keptMin is the fewest siblings a level must have to be kept: smaller
// levels cost less computed in full (the SDSC-SP2 replay executes 0.05 G
// fewer instructions with 8 than with 32). A variable so that the
// property tests keep every level.
var keptMin = 8

const (
	keptMargin    = 0x1p-30 // certified relative gap between neighbours
	keptBand      = 0x1p-31 // where a scaled LevelFS cannot decide
	keptMaxDecays = 1 << 16 // the rounding of that many decays stays under 2^-35
	// keptMaxShare: a level with more than 1/keptMaxShare of its
	// siblings charged is computed in full, which then costs less
	// (BenchmarkSimPassDeferred: on 158 accounts the kept pass is faster
	// with 5 charged, as fast with 10, slower beyond)
	keptMaxShare = 16
	keptBackoff  = 8 // full computations before trying again
)

// keptState is the part of flatTree the kept levels use.
type keptState struct {
	keptLv    []keptLevel // per account
	keptList  []int32     // accounts with a certificate, for decayKept
	keptEpoch uint32      // bumped when every certificate becomes void
	chargedIn []bool      // per association: in its level's charged list
	staleKeys []bool      // per account: prepared by prepKept at levelGen
	keptC     []int32     // scratch: the charged siblings, sorted
	keptOld   []int32     // scratch: their old places, ascending
	keptAt    []int32     // scratch: where each goes among the others
	keptWin   []int32     // scratch: the rewritten stretch
}

func (k *keptState) buildKept(n int) {
	k.keptLv, k.chargedIn, k.staleKeys = make([]keptLevel, n), make([]bool, n), make([]bool, n)
	k.keptList, k.keptEpoch = k.keptList[:0], 1
}

// voidKept drops every certificate: usage or shares changed otherwise than
// by decays and charges, or a full pass rewrote the keys.
func (k *keptState) voidKept() {
	k.keptEpoch++
	k.keptList = k.keptList[:0]
	clear(k.staleKeys)
}

// decayKept records a decay by factor fac in the certificates.
func (k *keptState) decayKept(fac float64) {
	for _, p := range k.keptList {
		if l := &k.keptLv[p]; l.epoch == k.keptEpoch {
			l.decays++
			l.prod *= fac
		}
	}
}

// noteCharge lists association i in its level's charged list when the
// level is certified. A Fairshare=parent association is in no certified
// level (an account is in no level at all).
func (f *flatTree) noteCharge(i int) {
	if f.chargedIn[i] || f.fromParent[i] || i == 0 {
		return
	}
	if l := &f.keptLv[f.fsp[i]]; l.epoch == f.keptEpoch {
		f.chargedIn[i] = true
		l.charged = append(l.charged, int32(i))
	}
}

// levelFSOf is an association's LevelFS from its usage u and its fair-share
// parent's pu (levelFS, through levelConst).
func levelFSOf(l *levelConst, u, pu float64) float64 {
	if !l.byUsage {
		return l.lfs
	}
	eu := 0.0
	if pu > 0 {
		eu = u / pu
	}
	if eu == 0 {
		return math.Inf(1)
	}
	return l.ns / eu
}

// lfsNow is association c's current LevelFS under parent usage pu.
func (f *flatTree) lfsNow(c int32, pu float64) float64 {
	f.usageUpToDate(c)
	return levelFSOf(&f.lv[c], f.usage[c], pu)
}

// certify records level p's certificate after its full computation (keys
// exact, level sorted), if it has one.
func (f *flatTree) certify(p int32, pu float64) {
	seg, k := f.level[p], &f.keptLv[p]
	for _, c := range k.charged {
		f.chargedIn[c] = false
	}
	k.epoch, k.charged = 0, k.charged[:0]
	if len(seg) < keptMin || !(pu > 0) {
		return
	}
	if k.backoff > 0 {
		k.backoff--
		return
	}
	minU, prev := math.Inf(1), 0.0
	for _, c := range seg {
		l := f.key[c].lfs
		switch {
		case f.fromParent[c]:
			return // a fixed LevelFS among scaled ones
		case l == 0:
			continue // no shares: 0 whatever the usage
		case math.IsInf(l, 1):
			if f.usage[c] != 0 {
				return // usage too small for its parent's: may come back finite
			}
			continue // no usage: +Inf until charged
		case prev != 0 && !(prev > l*(1+keptMargin)):
			return // too close to the previous one
		}
		prev, minU = l, min(minU, f.usage[c])
	}
	*k = keptLevel{epoch: f.keptEpoch, refGen: f.gen, prod: 1, pu: pu, minU: minU, charged: k.charged}
	if !slices.Contains(f.keptList, p) {
		f.keptList = append(f.keptList, p)
	}
}

// prepKept is prepLevel for a certified level (see above); false when the
// certificate does not apply and the full computation must run.
func (f *flatTree) prepKept(p int32) bool {
	k := &f.keptLv[p]
	if k.epoch != f.keptEpoch || f.gen < k.refGen || k.decays > keptMaxDecays {
		return false
	}
	f.usageUpToDate(p)
	pu := f.usage[p]
	if keptMaxShare*len(k.charged) > len(f.level[p]) {
		k.backoff = keptBackoff
		return false
	}
	// no sibling's usage near the floor of decayed, no EffectvUsage near
	// underflow: the finite values stay finite and scale alike
	if !(pu > 0) || k.minU*k.prod <= 0x1p-900 || k.minU*k.prod/pu <= 0x1p-1000 {
		return false
	}
	cs := append(f.keptC[:0], k.charged...)
	old := f.keptOld[:0]
	for _, c := range cs {
		l := f.lfsNow(c, pu)
		if l != l {
			return false // NaN: the full computation decides
		}
		f.key[c].lfs = l
		old = append(old, f.pos[c])
	}
	slices.SortFunc(cs, f.cmp)
	slices.Sort(old)
	f.keptC, f.keptOld = cs, old
	scale := pu / k.pu / k.prod
	if !f.placeCharged(p, scale, pu) {
		return false
	}
	f.rewrite(p)
	f.rejoin(p, scale)
	f.levelGen[p] = f.gen
	f.staleKeys[p] = true
	return true
}

// uncharged returns the v-th sibling of level p not charged, in order
// (f.keptOld: the charged ones' places, ascending). It sits at v + j, j
// the number of charged places before it: the j with old[j]-j <= v
// (old[j]-j never decreases), found by binary search.
func (f *flatTree) uncharged(p int32, v int) int32 {
	old := f.keptOld
	lo, hi := 0, len(old)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(old[m])-m <= v {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return f.level[p][v+lo]
}

// placeCharged finds, for each charged sibling (f.keptC, sorted), the
// first sibling not charged that it sorts before, in f.keptAt; false on
// a tie of finite LevelFS with a neighbour. scale turns a certified
// LevelFS into the current one, up to rounding.
func (f *flatTree) placeCharged(p int32, scale, pu float64) bool {
	cs, at := f.keptC, f.keptAt[:0]
	nu := len(f.level[p]) - len(cs)
	lo := 0
	for i, c := range cs {
		kc := &f.key[c]
		if i > 0 && tiedFinite(f.key[cs[i-1]].lfs, kc.lfs) {
			return false
		}
		hi := nu
		for lo < hi { // first uncharged sibling that c sorts before
			m := int(uint(lo+hi) >> 1)
			before, tie := f.sortsBefore(kc, f.uncharged(p, m), scale, pu)
			if tie {
				return false
			}
			if before {
				hi = m
			} else {
				lo = m + 1
			}
		}
		// the neighbours the search did not compare
		for _, m := range [2]int{lo - 1, lo} {
			if m >= 0 && m < nu {
				if _, tie := f.sortsBefore(kc, f.uncharged(p, m), scale, pu); tie {
					return false
				}
			}
		}
		at = append(at, int32(lo))
	}
	f.keptAt = at
	return true
}

// sortsBefore reports whether kc sorts before uncharged sibling u now, and
// whether they tie with a finite LevelFS.
func (f *flatTree) sortsBefore(kc *levelKey, u int32, scale, pu float64) (before, tie bool) {
	ku := f.key[u]
	l := ku.lfs
	if l != 0 && !math.IsInf(l, 1) { // scaled with the usages
		switch s := l * scale; {
		case kc.lfs > s*(1+keptBand):
			return true, false
		case kc.lfs < s*(1-keptBand):
			return false, false
		}
		l = f.lfsNow(u, pu)
	}
	ku.lfs = l
	return keyLess(kc, &ku), tiedFinite(kc.lfs, l)
}

// tiedFinite reports a tie the kept order cannot hold: equal finite
// positive LevelFS.
func tiedFinite(a, b float64) bool { return a == b && a != 0 && !math.IsInf(a, 1) }

// rewrite moves the charged siblings to their places in level p: charged
// sibling i goes before the f.keptAt[i]-th uncharged one, at index
// keptAt[i]+i. Only the stretch from the first old or new place to the
// last changes; there each sibling's position and the users sorted
// before it are written again.
func (f *flatTree) rewrite(p int32) {
	seg, cs, at, old := f.level[p], f.keptC, f.keptAt, f.keptOld
	m := len(cs)
	if m == 0 {
		return // nothing moved: positions and counts hold
	}
	lo := min(int(old[0]), int(at[0]))
	hi := max(int(old[m-1]), int(at[m-1])+m-1)
	win := f.keptWin[:0]
	v, i := lo, 0 // every uncharged sibling before lo is before every charged one
	for _, x := range seg[lo : hi+1] {
		if f.chargedIn[x] {
			continue
		}
		for ; i < m && int(at[i]) == v; i++ {
			win = append(win, cs[i])
		}
		win = append(win, x)
		v++
	}
	win = append(win, cs[i:]...)
	f.keptWin = win
	n := f.before[seg[lo]] // the users before lo did not move
	pos, before, sub := f.pos, f.before, f.subUsers
	for k, x := range win {
		seg[lo+k], pos[x], before[x] = x, int32(lo+k), n
		n += sub[x]
	}
}

// rejoin gives each charged sibling whose current LevelFS is far enough
// from its neighbours' (keptMargin) a certified value again: its LevelFS
// scaled back to the certificate's usages. The others stay listed and are
// computed again at the next prepKept.
func (f *flatTree) rejoin(p int32, scale float64) {
	seg, k := f.level[p], &f.keptLv[p]
	left := k.charged[:0]
	for _, c := range f.keptC {
		if !f.mayRejoin(seg, c, scale) {
			left = append(left, c)
			continue
		}
		if l := f.key[c].lfs; l != 0 && !math.IsInf(l, 1) {
			f.key[c].lfs = l / scale
			k.minU = min(k.minU, f.usage[c]/k.prod)
		}
		f.chargedIn[c] = false
	}
	k.charged = left
}

// mayRejoin reports whether charged sibling c can have a certified value
// again: +Inf without usage, 0, or a finite value keptMargin away from its
// neighbours'.
func (f *flatTree) mayRejoin(seg []int32, c int32, scale float64) bool {
	l := f.key[c].lfs
	switch {
	case l == 0:
		return true
	case math.IsInf(l, 1):
		return f.usage[c] == 0 // see certify
	}
	at := int(f.pos[c])
	return (at == 0 || f.scaledLFS(seg[at-1], scale) > l*(1+keptMargin)) &&
		(at == len(seg)-1 || l > f.scaledLFS(seg[at+1], scale)*(1+keptMargin))
}

// scaledLFS is sibling x's current LevelFS in a kept level, up to
// rounding: exact for a charged one, scaled from the certified value
// otherwise.
func (f *flatTree) scaledLFS(x int32, scale float64) float64 {
	l := f.key[x].lfs
	if f.chargedIn[x] || l == 0 || math.IsInf(l, 1) {
		return l
	}
	return l * scale
}

// sameLFS reports whether siblings a and b of level p tie (equal LevelFS):
// in a level prepKept prepared, finite values never do.
func (f *flatTree) sameLFS(p, a, b int32) bool {
	x := f.key[a].lfs
	return x == f.key[b].lfs && (!f.staleKeys[p] || !tiedFinite(x, x))
}
