package priority

import (
	"math"
)

// fsParentLevelFS is the LevelFS recorded for an FS=parent account under
// Fair Tree: it has no value of its own (sshare prints it blank) and is
// never ranked: its children are ranked in its parent's level.
const fsParentLevelFS = float64(0xfffffffe)

// Recompute computes NormShares, NormUsage, EffectvUsage, LevelFS and
// FairShare for every association from the current RawShares and UsageRaw,
// with Fair Tree (default), the classic algorithm (NO_FAIR_TREE) or
// DEPTH_OBLIVIOUS. It allocates nothing once the tree shape is prepared.
func (t *Tree) Recompute(cfg *Config) {
	t.prepare()
	if cfg.Flags&(FlagDepthOblivious|FlagNoFairTree) == 0 {
		t.fairTreeFlat()
		return
	}
	t.SyncUsage()
	t.computeCommon()
	t.classic(cfg, cfg.Flags&FlagDepthOblivious != 0)
	t.flat.recordsShares, t.flat.stale = false, false
	t.refreshHot()
}

// computeCommon sets LevelShares, NormUsage (usage over the root's) and
// the per-level sums used by the algorithms.
func (t *Tree) computeCommon() {
	root := &t.Assocs[0]
	ru := root.UsageRaw
	for _, i := range t.order {
		a := &t.Assocs[i]
		a.NormUsage = 0
		if ru > 0 {
			// min(1, x) as math.Min computes it here (x is never -0 and a
			// NaN stays NaN), without the call: this runs for every
			// association at every PriorityCalcPeriod
			v := a.UsageRaw / ru
			if v >= 1 {
				v = 1
			}
			a.NormUsage = v
		}
	}
	for p, kids := range t.fsKids {
		var sum uint64
		var use float64
		for _, c := range kids {
			if s := t.Assocs[c].RawShares; s != SharesParent {
				sum += uint64(s)
			}
			use += t.Assocs[c].NormUsage
		}
		t.Assocs[p].kidSum, t.Assocs[p].kidUsage = sum, use
	}
	for _, i := range t.order[1:] {
		a := &t.Assocs[i]
		a.LevelShares = t.Assocs[a.fsParent].kidSum
	}
	root.LevelShares = uint64(root.RawShares)
	root.NormUsage, root.EffectvUsage, root.FairShare, root.LevelFS = 1, 1, 0, 0
}

// shareRatio is RawShares/LevelShares, 0 for FS=parent or an empty level.
func (a *Assoc) shareRatio() float64 {
	if a.RawShares == SharesParent || a.LevelShares == 0 {
		return 0
	}
	return float64(a.RawShares) / float64(a.LevelShares)
}

// levelFS is S/U, +Inf for no usage, 0 for no shares.
func levelFS(s, u float64) float64 {
	switch {
	case s == 0:
		return 0
	case u == 0:
		return math.Inf(1)
	}
	return s / u
}

// classic implements the classic fair-share (NO_FAIR_TREE) and, with
// oblivious, DEPTH_OBLIVIOUS. Parents are computed before children.
func (t *Tree) classic(cfg *Config, oblivious bool) {
	root := &t.Assocs[0]
	root.NormShares, root.EffectvUsage = 1, 1
	damp := float64(cfg.DampeningFactor)
	if damp < 1 {
		damp = 1
	}
	for _, i := range t.order[1:] {
		a := &t.Assocs[i]
		fsp := &t.Assocs[a.fsParent]
		a.LevelFS, a.AwaitingPass = 0, false
		if a.SharesFromParent() {
			a.NormShares, a.EffectvUsage, a.FairShare = fsp.NormShares, fsp.EffectvUsage, fsp.FairShare
			continue
		}
		r := a.shareRatio()
		a.NormShares = fsp.NormShares * r
		if oblivious {
			t.depthOblivious(a, fsp)
			continue
		}
		switch {
		case a.fsParent == 0:
			a.EffectvUsage = a.NormUsage
		case a.LevelShares == 0:
			a.EffectvUsage = fsp.EffectvUsage
		default:
			a.EffectvUsage = a.NormUsage + (fsp.EffectvUsage-a.NormUsage)*r
		}
		a.FairShare = 0
		if a.NormShares > 0 {
			a.FairShare = math.Exp2(-(a.EffectvUsage / a.NormShares) / damp)
		}
	}
}

// depthOblivious computes R = ratio_p * ratio_l^k (priority_multifactor3):
// ratio_p is the parent's UE/S, ratio_l the association's usage/shares
// ratio over its level's, and k damps a child that pulls against its
// parent. UE = R*S and FairShare = 2^-R.
func (t *Tree) depthOblivious(a, fsp *Assoc) {
	a.FairShare, a.EffectvUsage = 0, 0
	if a.NormShares <= 0 {
		return
	}
	ratioP := 1.0
	if fsp.NormShares > 0 && a.fsParent != 0 {
		ratioP = fsp.EffectvUsage / fsp.NormShares
	}
	level := fsp.kidUsage
	var r float64
	if a.NormUsage > 0 && level > 0 {
		ratioL := (a.NormUsage / a.NormShares) / (level / fsp.NormShares)
		k := 1.0
		lp, ll := math.Log(ratioP), math.Log(ratioL)
		if lp*ll < 0 {
			k = 1 / (1 + (5*lp)*(5*lp))
		}
		r = ratioP * math.Pow(ratioL, k)
	}
	a.EffectvUsage = r * a.NormShares
	a.FairShare = math.Exp2(-r)
}
