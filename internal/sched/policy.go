package sched

import "time"

// Unlimited marks an unset scalar limit in the compiled policy.
const Unlimited int64 = -1

// QOSFlags are the QOS Flags= the core acts on.
type QOSFlags uint16

// QOS flags (same meaning as sacctmgr's).
const (
	QOSDenyOnLimit QOSFlags = 1 << iota
	QOSOverPartQOS
	QOSNoReserve
	QOSPartitionMaxNodes
	QOSPartitionMinNodes
	QOSPartitionTimeLimit
	QOSRequiresReservation
	QOSNoDecay
	QOSUsageFactorSafe
	QOSEnforceUsageThreshold
	QOSRelative
)

// TRESLimit is one TRES entry of a limit vector, resolved to the index of
// the TRES in Policy.TRES so that the gate compares slices, not maps.
type TRESLimit struct {
	TRES  int32
	Value int64
}

// QOSPolicy is one QOS compiled for the scheduler: counts are Unlimited
// when unset, TRES limits list only the TRES that are set.
type QOSPolicy struct {
	Name     string
	ID       int64
	Priority int64
	Flags    QOSFlags
	// Preempt are the indices of the QOS this one may preempt.
	Preempt           []int32
	PreemptMode       PreemptMode
	PreemptExemptTime time.Duration // -1 = unset
	GraceTime         time.Duration
	UsageFactor       float64

	GrpTRES        []TRESLimit
	GrpTRESMins    []TRESLimit
	GrpTRESRunMins []TRESLimit
	GrpJobs        int64
	GrpSubmitJobs  int64
	GrpWall        time.Duration // -1 = unset

	MaxTRESPerJob            []TRESLimit
	MaxTRESPerNode           []TRESLimit
	MaxTRESPerUser           []TRESLimit
	MaxTRESPerAccount        []TRESLimit
	MaxTRESMinsPerJob        []TRESLimit
	MaxTRESRunMinsPerUser    []TRESLimit
	MaxTRESRunMinsPerAccount []TRESLimit
	MinTRESPerJob            []TRESLimit

	MaxJobsPerUser          int64
	MaxJobsPerAccount       int64
	MaxSubmitJobsPerUser    int64
	MaxSubmitJobsPerAccount int64
	MaxWall                 time.Duration // -1 = unset
	MinPrioThreshold        int64
}

// AssocPolicy is one association compiled for the scheduler. Max* limits
// are the effective ones (inherited from the parent when unset, as
// slurmdbd does); Grp* limits are the association's own, checked at every
// level of the chain.
type AssocPolicy struct {
	ID        int64
	Account   string
	User      string
	Partition string
	// Parent is the index of the parent association, -1 for root.
	Parent int32
	// QOS are the indices of the allowed QOS; DefaultQOS the default, -1.
	QOS        []int32
	DefaultQOS int32

	GrpTRES        []TRESLimit
	GrpTRESMins    []TRESLimit
	GrpTRESRunMins []TRESLimit
	GrpJobs        int64
	GrpSubmitJobs  int64
	GrpWall        time.Duration // -1 = unset

	MaxTRESPerJob  []TRESLimit
	MaxTRESPerNode []TRESLimit
	MaxTRESMins    []TRESLimit
	MaxJobs        int64
	MaxSubmitJobs  int64
	MaxWall        time.Duration // -1 = unset
}

// UserPolicy is what the core needs to know of a user.
type UserPolicy struct {
	DefaultAccount string
	// Admin is true for AdminLevel Operator or Administrator.
	Admin bool
}

// Policy is the accounting policy compiled for the scheduling loop:
// associations and QOS by index, limits as TRES-index slices. Build it from
// an acct.Policy snapshot with CompilePolicy.
type Policy struct {
	// TRES are the TRES names limits refer to, in index order. The first
	// four are always cpu, mem, node and billing.
	TRES   []string
	QOS    []QOSPolicy
	Assocs []AssocPolicy
	Users  map[string]UserPolicy

	qosByName map[string]int32
	assocKey  map[assocKey]int32
	// partAssocs: some user association names a partition (assocFor
	// looks one up for every job start and end only then).
	partAssocs bool
	tresIndex  map[string]int32
	// runMins caches hasRunMinLimits.
	runMins, runMinsKnown bool
}

type assocKey struct{ account, user, partition string }

// Fixed TRES indices of Policy.TRES.
const (
	tresCPU     = 0
	tresMem     = 1
	tresNode    = 2
	tresBilling = 3
)

// QOSIndex returns the index of QOS name, or -1.
func (p *Policy) QOSIndex(name string) int32 {
	if i, ok := p.qosByName[name]; ok {
		return i
	}
	return -1
}

// UserAssoc returns the index of the association a job of user in account
// on partition bills against (partition-specific first), or -1.
func (p *Policy) UserAssoc(user, account, partition string) int32 {
	if partition != "" {
		if i, ok := p.assocKey[assocKey{account, user, partition}]; ok {
			return i
		}
	}
	if i, ok := p.assocKey[assocKey{account, user, ""}]; ok {
		return i
	}
	return -1
}

// tresIdx returns the index of TRES name, or -1.
func (p *Policy) tresIdx(name string) int32 {
	if i, ok := p.tresIndex[name]; ok {
		return i
	}
	return -1
}

// hasRunMinLimits reports whether any QOS or association sets a
// TRES-run-minutes limit (only then are run minutes counted).
func (p *Policy) hasRunMinLimits() bool {
	if p.runMinsKnown {
		return p.runMins
	}
	for i := range p.QOS {
		q := &p.QOS[i]
		p.runMins = p.runMins || len(q.GrpTRESRunMins) > 0 || len(q.MaxTRESRunMinsPerUser) > 0 || len(q.MaxTRESRunMinsPerAccount) > 0
	}
	for i := range p.Assocs {
		p.runMins = p.runMins || len(p.Assocs[i].GrpTRESRunMins) > 0
	}
	p.runMinsKnown = true
	return p.runMins
}
