package sched

import (
	"fmt"
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

// UsageTimeout is a running job whose QOS or association has used up a
// GrpTRESMins limit: Slurm ends it with TIMEOUT (reason TimeLimit).
type UsageTimeout struct {
	Job JobID
	// Limit says which limit, for the controller's log, as slurmctld
	// words it ("QOS normal's group max tres(cpu) minutes of 2 with 3").
	Limit string
}

// UsageTimedOut lists the running jobs to end because the decayed usage
// (State.Usage) of their QOS or of an association on their path has
// reached a GrpTRESMins limit. slurmctld checks this with every running
// job's time limit (acct_policy_job_time_out): on the oracle, a job of 4
// CPUs under an account with GrpTRESMins=cpu=2 ended TIMEOUT after 76 s
// with "the job is at or exceeds assoc 3(budget/(null)/(null)) group max
// tres(cpu) minutes of 2 with 3" in the log, and the account's next job
// pended with AssocGrpCPUMinutesLimit. The QOS come first, then the
// associations from the job's up to the root. Only with
// AccountingStorageEnforce=limits and without safe: with safe a job
// starts only if the limit covers its whole request, and slurmctld lets
// it run on (oracle: a 2-CPU job kept running 70 s after its account's
// GrpTRESMins was lowered below its usage).
func (s *State) UsageTimedOut(cfg Config) []UsageTimeout {
	p, src := s.Policy, s.Usage
	if p == nil || src == nil || cfg.Enforce&EnforceLimits == 0 || cfg.Enforce&EnforceSafe != 0 || !p.hasGrpTRESMins() {
		return nil
	}
	used := map[int32][]int64{} // by association, QOS as -1-q
	var out []UsageTimeout
	for _, j := range s.jobList {
		if j.State.Base() != JobRunning {
			continue
		}
		if why := s.usageOver(j, src, used); why != "" {
			out = append(out, UsageTimeout{Job: j.ID, Limit: why})
		}
	}
	return out
}

// usageOver names the first GrpTRESMins limit job j's QOS or
// associations have reached, or "".
func (s *State) usageOver(j *Job, src UsageSource, used map[int32][]int64) string {
	p := s.Policy
	for _, q := range orderedQOS(p, j.qos, partQOS(p, s.Cluster, j.Partition)) {
		if q < 0 || len(p.QOS[q].GrpTRESMins) == 0 {
			continue
		}
		qp := &p.QOS[q]
		m := memoMins(p, used, -1-q, func() (map[string]float64, float64, bool) { return src.QOSUsage(qp.Name) })
		if l, ok := reachedMins(qp.GrpTRESMins, m); ok {
			return fmt.Sprintf("QOS %s's group max tres(%s) minutes of %d with %d", qp.Name, p.TRES[l.TRES], l.Value, m[l.TRES])
		}
	}
	for a := j.assocFor(p, s.Cluster, j.Partition); a >= 0; a = p.Assocs[a].Parent {
		ap := &p.Assocs[a]
		if len(ap.GrpTRESMins) == 0 {
			continue
		}
		m := memoMins(p, used, a, func() (map[string]float64, float64, bool) {
			return src.AssocUsage(ap.Account, ap.User, ap.Partition)
		})
		if l, ok := reachedMins(ap.GrpTRESMins, m); ok {
			return fmt.Sprintf("assoc %s/%s/%s group max tres(%s) minutes of %d with %d",
				ap.Account, orNull(ap.User), orNull(ap.Partition), p.TRES[l.TRES], l.Value, m[l.TRES])
		}
	}
	return ""
}

// memoMins returns the used TRES-minutes kept in used under key (an
// association, or -1-q for QOS q), reading them with fetch the first time:
// many running jobs share an association or QOS.
func memoMins(p *Policy, used map[int32][]int64, key int32, fetch func() (map[string]float64, float64, bool)) []int64 {
	m, ok := used[key]
	if !ok {
		tm, _, _ := fetch()
		m = usedMins(p, tm)
		used[key] = m
	}
	return m
}

// reachedMins returns the first of limits that used (minutes, Policy.TRES
// order) has reached.
func reachedMins(limits []TRESLimit, used []int64) (TRESLimit, bool) {
	for _, l := range limits {
		if int(l.TRES) < len(used) && used[l.TRES] >= l.Value {
			return l, true
		}
	}
	return TRESLimit{}, false
}

// hasGrpTRESMins reports whether a QOS or an association sets GrpTRESMins.
func (p *Policy) hasGrpTRESMins() bool {
	for i := range p.QOS {
		if len(p.QOS[i].GrpTRESMins) > 0 {
			return true
		}
	}
	for i := range p.Assocs {
		if len(p.Assocs[i].GrpTRESMins) > 0 {
			return true
		}
	}
	return false
}

func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}
