package sched

import (
	"sort"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/tres"
)

// CompilePolicy compiles an accounting snapshot for cluster into the
// scheduler's index-based Policy: the associations of that cluster (with
// their effective, inherited Max* limits), every QOS, every user, and the
// TRES names any limit refers to.
func CompilePolicy(ap *acct.Policy, cluster string) *Policy {
	p := &Policy{TRES: []string{"cpu", "mem", "node", "billing"}, Users: map[string]UserPolicy{},
		qosByName: map[string]int32{}, assocKey: map[assocKey]int32{}, tresIndex: map[string]int32{}}
	for i, t := range p.TRES {
		p.tresIndex[t] = int32(i)
	}
	names := ap.QOSNames()
	for i, n := range names {
		p.qosByName[n] = int32(i)
	}
	for _, n := range names {
		p.QOS = append(p.QOS, p.compileQOS(ap.QOS(n)))
	}
	var assocs []*acct.Association
	for _, a := range ap.Associations() {
		if a.Cluster == cluster {
			assocs = append(assocs, a)
		}
	}
	idx := map[int64]int32{}
	for i, a := range assocs {
		idx[a.ID] = int32(i)
	}
	for _, a := range assocs {
		p.Assocs = append(p.Assocs, p.compileAssoc(ap, a, idx))
	}
	for i, a := range p.Assocs {
		if a.User != "" {
			p.assocKey[assocKey{a.Account, a.User, a.Partition}] = int32(i)
			p.partAssocs = p.partAssocs || a.Partition != ""
		}
	}
	st := ap.State()
	users := make([]string, 0, len(st.Users))
	for n := range st.Users {
		users = append(users, n)
	}
	sort.Strings(users)
	for _, n := range users {
		u := st.Users[n]
		p.Users[n] = UserPolicy{DefaultAccount: u.DefaultAccount, Admin: u.AdminLevel >= acct.AdminOperator}
	}
	return p
}

func (p *Policy) compileQOS(q *acct.QOS) QOSPolicy {
	out := QOSPolicy{Name: q.Name, ID: q.ID, Priority: q.Priority, Flags: qosFlags(q.Flags),
		PreemptMode: PreemptMode(q.PreemptMode), PreemptExemptTime: q.PreemptExemptTime,
		GraceTime: q.GraceTime, UsageFactor: q.UsageFactor,
		GrpTRES: p.limits(q.GrpTRES), GrpTRESMins: p.limits(q.GrpTRESMins), GrpTRESRunMins: p.limits(q.GrpTRESRunMins),
		GrpJobs: int64(q.GrpJobs), GrpSubmitJobs: int64(q.GrpSubmitJobs), GrpWall: minutes(q.GrpWall),
		MaxTRESPerJob: p.limits(q.MaxTRESPerJob), MaxTRESPerNode: p.limits(q.MaxTRESPerNode),
		MaxTRESPerUser: p.limits(q.MaxTRESPerUser), MaxTRESPerAccount: p.limits(q.MaxTRESPerAccount),
		MaxTRESMinsPerJob: p.limits(q.MaxTRESMinsPerJob), MaxTRESRunMinsPerUser: p.limits(q.MaxTRESRunMinsPerUser),
		MaxTRESRunMinsPerAccount: p.limits(q.MaxTRESRunMinsPerAccount), MinTRESPerJob: p.limits(q.MinTRESPerJob),
		MaxJobsPerUser: int64(q.MaxJobsPerUser), MaxJobsPerAccount: int64(q.MaxJobsPerAccount),
		MaxSubmitJobsPerUser: int64(q.MaxSubmitJobsPerUser), MaxSubmitJobsPerAccount: int64(q.MaxSubmitJobsPerAccount),
		MaxWall: minutes(q.MaxWall), MinPrioThreshold: int64(q.MinPrioThreshold)}
	for _, name := range q.Preempt {
		if i, ok := p.qosByName[name]; ok {
			out.Preempt = append(out.Preempt, i)
		}
	}
	return out
}

func (p *Policy) compileAssoc(ap *acct.Policy, a *acct.Association, idx map[int64]int32) AssocPolicy {
	e := ap.Effective(a)
	out := AssocPolicy{ID: a.ID, Account: a.Account, User: a.User, Partition: a.Partition, Parent: -1, DefaultQOS: -1,
		GrpTRES: p.limits(a.GrpTRES), GrpTRESMins: p.limits(a.GrpTRESMins), GrpTRESRunMins: p.limits(a.GrpTRESRunMins),
		GrpJobs: int64(a.GrpJobs), GrpSubmitJobs: int64(a.GrpSubmitJobs), GrpWall: minutes(a.GrpWall),
		MaxTRESPerJob: p.limits(e.MaxTRES), MaxTRESPerNode: p.limits(e.MaxTRESPerNode), MaxTRESMins: p.limits(e.MaxTRESMins),
		MaxJobs: int64(e.MaxJobs), MaxSubmitJobs: int64(e.MaxSubmitJobs), MaxWall: minutes(e.MaxWall)}
	if pi, ok := idx[a.ParentID]; ok {
		out.Parent = pi
	}
	for _, q := range e.QOS {
		if i, ok := p.qosByName[q]; ok {
			out.QOS = append(out.QOS, i)
		}
	}
	if a.User != "" {
		if i, ok := p.qosByName[ap.DefaultQOS(a)]; ok {
			out.DefaultQOS = i
		}
	}
	return out
}

// limits compiles a limit vector, registering its TRES names.
func (p *Policy) limits(v tres.Vector) []TRESLimit {
	if len(v) == 0 {
		return nil
	}
	names := make([]string, 0, len(v))
	for n := range v {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]TRESLimit, 0, len(v))
	for _, n := range names {
		if v[n] < 0 {
			continue
		}
		i, ok := p.tresIndex[n]
		if !ok {
			if len(p.TRES) >= 64 {
				continue // the claims bitmask holds 64 TRES; more is not a real configuration
			}
			i = int32(len(p.TRES))
			p.TRES = append(p.TRES, n)
			p.tresIndex[n] = i
		}
		out = append(out, TRESLimit{TRES: i, Value: v[n]})
	}
	return out
}

func minutes(l acct.Limit) time.Duration {
	if !l.IsSet() {
		return -1
	}
	return time.Duration(l) * time.Minute
}

func qosFlags(f acct.QOSFlags) QOSFlags {
	var out QOSFlags
	pairs := []struct {
		a acct.QOSFlags
		s QOSFlags
	}{{acct.FlagDenyOnLimit, QOSDenyOnLimit}, {acct.FlagOverPartQOS, QOSOverPartQOS}, {acct.FlagNoReserve, QOSNoReserve},
		{acct.FlagPartitionMaxNodes, QOSPartitionMaxNodes}, {acct.FlagPartitionMinNodes, QOSPartitionMinNodes},
		{acct.FlagPartitionTimeLimit, QOSPartitionTimeLimit}, {acct.FlagRequiresReservation, QOSRequiresReservation},
		{acct.FlagNoDecay, QOSNoDecay}, {acct.FlagUsageFactorSafe, QOSUsageFactorSafe},
		{acct.FlagEnforceUsageThreshold, QOSEnforceUsageThreshold}, {acct.FlagRelative, QOSRelative}}
	for _, pr := range pairs {
		if f&pr.a != 0 {
			out |= pr.s
		}
	}
	return out
}

// SetPolicy installs a new accounting policy (after sacctmgr changes):
// every job's association and QOS are resolved again and the usage
// counters rebuilt from the jobs, so limits apply to the running jobs too.
func (st *State) SetPolicy(p *Policy) {
	st.orderGen++ // the incremental queue (lazy_queue.go) is built again
	st.Policy = p
	st.usage.reset(p)
	for _, j := range st.jobList {
		st.resolvePolicy(j)
		if j.State.Finished() {
			continue
		}
		st.countSubmit(j, int64(j.Tasks()))
		if isActive(j) {
			st.countRun(j, 1)
		}
	}
}

// resolvePolicy sets j's association and QOS indices from its names.
func (st *State) resolvePolicy(j *Job) {
	j.assoc, j.qos = -1, -1
	p := st.Policy
	if p == nil {
		return
	}
	part := ""
	if len(j.Partitions) > 0 {
		part = st.Cluster.Partitions[j.Partitions[0]].Name
	}
	j.assoc = p.UserAssoc(j.User, j.Account, part)
	j.qos = p.QOSIndex(j.QOS)
}
