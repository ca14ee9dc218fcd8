package sched

import (
	"math"

	"github.com/sluice-hpc/sluice/internal/priority"
)

// UsageSource gives the decayed historical usage that the GrpTRESMins and
// GrpWall limits compare with (Slurm's usage_tres_raw and grp_used_wall,
// kept by the priority plugin). ok is false for an entity it does not know.
type UsageSource interface {
	// AssocUsage returns the association's (user "" = the account's)
	// usage: TRES-minutes by TRES name and wall minutes.
	AssocUsage(account, user, partition string) (tresMins map[string]float64, wallMins float64, ok bool)
	// QOSUsage returns a QOS's usage.
	QOSUsage(name string) (tresMins map[string]float64, wallMins float64, ok bool)
}

// TreeUsage adapts internal/priority's fair-share tree as a UsageSource.
type TreeUsage struct{ Tree *priority.Tree }

// AssocUsage implements UsageSource.
func (u TreeUsage) AssocUsage(account, user, partition string) (map[string]float64, float64, bool) {
	i, ok := u.Tree.Lookup(account, user)
	if partition != "" {
		i, ok = u.Tree.LookupJob(account, user, partition)
	}
	if !ok {
		return nil, 0, false
	}
	a := &u.Tree.Assocs[i]
	return toMinutes(a.UsageTRES), a.UsedWall / 60, true
}

// QOSUsage implements UsageSource.
func (u TreeUsage) QOSUsage(name string) (map[string]float64, float64, bool) {
	q := u.Tree.QOS[name]
	if q == nil {
		return nil, 0, false
	}
	return toMinutes(q.UsageTRES), q.UsedWall / 60, true
}

func toMinutes(secs map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(secs))
	for k, v := range secs {
		out[k] = v / 60
	}
	return out
}

// usedMins resolves a usage map to the Policy's TRES order (minutes,
// truncated as Slurm compares whole minutes).
func usedMins(p *Policy, m map[string]float64) []int64 {
	out := make([]int64, len(p.TRES))
	for name, v := range m {
		if i := p.tresIdx(name); i >= 0 {
			out[i] = int64(math.Min(v, math.MaxInt64/2))
		}
	}
	return out
}

// addHistory loads the historical usage of every QOS and association that
// sets GrpTRESMins or GrpWall into the cycle's counters.
func (cu *cycleUsage) addHistory(c *Cycle) {
	p, src := c.State.Policy, c.State.Usage
	if p == nil || src == nil {
		return
	}
	for q := range p.QOS {
		qp := &p.QOS[q]
		if len(qp.GrpTRESMins) == 0 && qp.GrpWall < 0 || q >= len(cu.qos) {
			continue
		}
		if m, wall, ok := src.QOSUsage(qp.Name); ok {
			ct := cu.qosW(int32(q))
			ct.usedMins, ct.usedWall = usedMins(p, m), int64(wall)
		}
	}
	for a := range p.Assocs {
		ap := &p.Assocs[a]
		if len(ap.GrpTRESMins) == 0 && ap.GrpWall < 0 || a >= len(cu.assoc) {
			continue
		}
		if m, wall, ok := src.AssocUsage(ap.Account, ap.User, ap.Partition); ok {
			ct := cu.assocW(int32(a))
			ct.usedMins, ct.usedWall = usedMins(p, m), int64(wall)
		}
	}
}
