package priority

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// refTree is the Fair Tree Recompute as it was before the packed arrays
// (computeCommon, fairTree, rankLevel, sortedLevel on the records): the
// oracle the packed version must match bit for bit.
type refTree struct {
	t      *Tree
	levels map[int][]int
	pos    map[int]int // position in the fair-share level (fsKids)
}

func (r *refTree) recompute() {
	t := r.t
	if t.dirty { // prepare starts the level orders over
		r.levels = map[int][]int{}
	}
	t.prepare()
	r.pos = map[int]int{}
	for _, kids := range t.fsKids {
		for o, c := range kids {
			r.pos[c] = o
		}
	}
	t.computeCommon()
	root := &t.Assocs[0]
	root.NormShares = 0
	for _, i := range t.order[1:] {
		a := &t.Assocs[i]
		fsp := &t.Assocs[a.fsParent]
		a.FairShare, a.EffectvUsage = 0, 0
		if fsp.UsageRaw > 0 {
			a.EffectvUsage = a.UsageRaw / fsp.UsageRaw
		}
		switch {
		case a.SharesFromParent():
			a.NormShares = t.Assocs[a.Parent].NormShares
			a.LevelFS = fsParentLevelFS
			if a.isUser {
				a.LevelFS = math.Inf(1)
			}
		default:
			a.NormShares = a.shareRatio()
			a.LevelFS = levelFS(a.NormShares, a.EffectvUsage)
		}
	}
	rank, rnt := t.users, t.users
	r.rankLevel(0, false, &rank, &rnt, float64(t.users))
}

// rankLevel ranks account p's fair-share level: its children, with those
// of a Fairshare=parent account merged in (fsKids).
func (r *refTree) rankLevel(p int, accountTied bool, rank, rnt *int, n float64) {
	t := r.t
	seg := r.sortedLevel(p, t.fsKids[p])
	for k, i := range seg {
		a := &t.Assocs[i]
		tied := accountTied
		if k > 0 {
			tied = t.Assocs[seg[k-1]].LevelFS == a.LevelFS
		}
		if a.isUser {
			if !tied {
				*rank = *rnt
			}
			a.FairShare = float64(*rank) / n
			*rnt--
			continue
		}
		r.rankLevel(i, tied, rank, rnt, n)
	}
}

func (r *refTree) sortedLevel(p int, kids []int) []int {
	if len(kids) == 0 {
		return kids
	}
	seg := r.levels[p]
	if len(seg) != len(kids) {
		seg = slices.Clone(kids)
		r.levels[p] = seg
	}
	slices.SortFunc(seg, r.cmpLevelFS) // a total order without NaN
	return seg
}

// sameFairShare fails unless every exported computed field and the
// job-loop values of got equal want's bit for bit.
func sameFairShare(t interface {
	Helper()
	Fatalf(string, ...any)
}, got, want *Tree) {
	t.Helper()
	bits := math.Float64bits
	for i := range want.Assocs {
		g, w := &got.Assocs[i], &want.Assocs[i]
		if g.LevelShares != w.LevelShares || bits(g.NormShares) != bits(w.NormShares) ||
			bits(g.NormUsage) != bits(w.NormUsage) || bits(g.EffectvUsage) != bits(w.EffectvUsage) ||
			bits(g.FairShare) != bits(w.FairShare) || bits(g.LevelFS) != bits(w.LevelFS) {
			t.Fatalf("%s/%s: got LevelShares %d NormShares %v NormUsage %v EffectvUsage %v FairShare %v LevelFS %v, want %d %v %v %v %v %v",
				g.Account, g.User, g.LevelShares, g.NormShares, g.NormUsage, g.EffectvUsage, g.FairShare, g.LevelFS,
				w.LevelShares, w.NormShares, w.NormUsage, w.EffectvUsage, w.FairShare, w.LevelFS)
		}
		if bits(got.hot[i].fairShare) != bits(w.FairShare) || got.hot[i].priority != float64(w.Priority) {
			t.Fatalf("%s/%s: job-loop values %+v, want FairShare %v Priority %d", g.Account, g.User, got.hot[i], w.FairShare, w.Priority)
		}
	}
}

// The packed Fair Tree (Recompute, and RecomputeFairShare with the
// records written when read) gives exactly the values of the
// record-walking one, pass after pass: decay, charges, resets, usage set
// directly to extreme values, an occasional classic pass in between, and
// usage that decays after the pass before the records are read, on
// random trees with FS=parent and zero shares.
func TestPropertyFlatFairTreeMatchesReference(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		got := randomTree(rt)
		want := cloneTree(got)
		ref := &refTree{t: want, levels: map[int][]int{}}
		cfg := DefaultConfig()
		both := func(f func(*Tree)) { f(got); f(want) }
		packAt := rapid.IntRange(0, 9).Draw(rt, "pack at") // 9: never
		for pass := rapid.IntRange(1, 8).Draw(rt, "passes"); pass > 0; pass-- {
			if pass == packAt {
				got.PackUsage()
			}
			full := false
			for events := rapid.IntRange(1, 3).Draw(rt, "events"); events > 0; events-- {
				switch rapid.IntRange(0, 7).Draw(rt, "event") {
				case 0:
					secs := float64(rapid.IntRange(1, 100000).Draw(rt, "decay"))
					both(func(tr *Tree) { tr.Decay(&cfg, secs) })
				case 1: // a direct write: only Recompute reads it
					got.SyncUsage()
					i := rapid.IntRange(0, len(got.Assocs)-1).Draw(rt, "assoc")
					v := rapid.SampledFrom([]float64{0, 1, 3, 1e-300, 1e300, math.Inf(1), math.NaN()}).Draw(rt, "usage")
					got.Assocs[i].UsageRaw, want.Assocs[i].UsageRaw = v, v
					if got.flat.packed {
						got.PackUsage() // the records hold it now, as documented
					}
					full = true
				case 2:
					classic := cfg
					classic.Flags = FlagNoFairTree
					got.Recompute(&classic)
				case 3:
					j := RunningJob{Assoc: rapid.IntRange(0, len(got.Assocs)-1).Draw(rt, "job"), Start: t0, Billing: 7}
					both(func(tr *Tree) { tr.Charge(&cfg, &j, t0, t0.Add(time.Hour)) })
				case 4:
					both(func(tr *Tree) { tr.ResetUsage() })
				case 5:
					j := RunningJob{Assoc: rapid.IntRange(0, len(got.Assocs)-1).Draw(rt, "tres job"), Start: t0, Billing: 3,
						Alloc: map[string]int64{"cpu": 3, "mem": 1000}}
					both(func(tr *Tree) { tr.Charge(&cfg, &j, t0, t0.Add(time.Minute)) })
				case 6:
					both(func(tr *Tree) {
						if _, err := tr.AddUser(fmt.Sprintf("new%d.%d", pass, events), "acc0", 2); err != nil {
							rt.Fatal(err)
						}
					})
				}
			}
			if full || rapid.Bool().Draw(rt, "full") {
				got.Recompute(&cfg)
			} else {
				got.RecomputeFairShare(&cfg)
			}
			ref.recompute()
			want.refreshHot()
			if rapid.Bool().Draw(rt, "late decay") { // after the pass: not in its values
				both(func(tr *Tree) { tr.Decay(&cfg, 3600) })
			}
			got.syncRecords()
			sameFairShare(rt, got, want)
			got.SyncUsage()
			sameUsage(rt, got, want)
		}
	})
}

// cloneTree copies a tree's records, usage and QOS: a second, equal
// tree for the reference to work on.
func cloneTree(t *Tree) *Tree {
	c := &Tree{Assocs: slices.Clone(t.Assocs), QOS: map[string]*QOSUsage{}, byKey: maps.Clone(t.byKey), dirty: true}
	for i := range c.Assocs {
		c.Assocs[i].Children = slices.Clone(c.Assocs[i].Children)
		c.Assocs[i].UsageTRES = maps.Clone(c.Assocs[i].UsageTRES)
	}
	for k, q := range t.QOS {
		cq := *q
		cq.UsageTRES = maps.Clone(q.UsageTRES)
		c.QOS[k] = &cq
	}
	return c
}

// sameUsage fails unless got's usage records equal want's bit for bit.
func sameUsage(t interface {
	Helper()
	Fatalf(string, ...any)
}, got, want *Tree) {
	t.Helper()
	for i := range want.Assocs {
		g, w := &got.Assocs[i], &want.Assocs[i]
		if math.Float64bits(g.UsageRaw) != math.Float64bits(w.UsageRaw) || math.Float64bits(g.UsedWall) != math.Float64bits(w.UsedWall) ||
			!maps.EqualFunc(g.UsageTRES, w.UsageTRES, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
			t.Fatalf("%s/%s: usage %v wall %v tres %v, want %v %v %v", g.Account, g.User, g.UsageRaw, g.UsedWall, g.UsageTRES,
				w.UsageRaw, w.UsedWall, w.UsageTRES)
		}
	}
}

// cmpLevelFS orders siblings: higher LevelFS first, users before
// accounts on ties, then the position in the level.
func (r *refTree) cmpLevelFS(x, y int) int {
	a, b := &r.t.Assocs[x], &r.t.Assocs[y]
	switch {
	case a.LevelFS > b.LevelFS:
		return -1
	case a.LevelFS < b.LevelFS:
		return 1
	case a.isUser != b.isUser:
		if a.isUser {
			return -1
		}
		return 1
	}
	return r.pos[x] - r.pos[y]
}

// Under PackUsage a Decay only logs its factor for UsedWall (wallLog);
// the value decayed when charged or read must be bit for bit the eagerly
// decayed one, across more Decays than the log holds (wallLogMax) and
// with charges, fair-share passes (full and deferred) and reads
// interleaved.
func TestPropertyPackedWallDecayMatchesEager(t *testing.T) {
	defer func(m int) { wallLogMax = m }(wallLogMax)
	wallLogMax = 64
	rapid.Check(t, func(rt *rapid.T) {
		got, want, cfg, both := packedPair(rt)
		for step := rapid.IntRange(1, 3*wallLogMax).Draw(rt, "steps"); step > 0; step-- {
			switch k := rapid.IntRange(0, 99).Draw(rt, "event"); {
			case k < 80:
				secs := float64(rapid.IntRange(1, 100000).Draw(rt, "decay"))
				both(func(tr *Tree) { tr.Decay(&cfg, secs) })
			case k < 95:
				j := RunningJob{Assoc: rapid.IntRange(0, len(got.Assocs)-1).Draw(rt, "job"), Start: t0, Billing: 5}
				both(func(tr *Tree) { tr.Charge(&cfg, &j, t0, t0.Add(time.Hour)) })
			case k < 97:
				got.RecomputeFairShare(&cfg)
			case k < 98: // a deferred read catches up usage and wall (upToDate)
				got.DeferFairShare(&cfg)
				got.fairShareOf(rapid.IntRange(0, len(got.Assocs)-1).Draw(rt, "asked"))
			default:
				got.SyncUsage()
				sameUsage(rt, got, want)
			}
		}
		got.SyncUsage()
		sameUsage(rt, got, want)
	})
}
