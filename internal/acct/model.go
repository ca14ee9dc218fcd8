package acct

import (
	"time"
)

// Limit is a scalar association or QOS limit (a job count, or minutes for
// the wall-clock limits). Slurm distinguishes "not set" (inherit from the
// parent, or no limit) from any number, and `-1` on the sacctmgr command
// line clears a limit back to "not set"; Unset is that state.
type Limit int64

// Unset is the value of a Limit that nobody set.
const Unset Limit = -1

// IsSet reports whether the limit carries a value.
func (l Limit) IsSet() bool { return l >= 0 }

// Or returns l when it is set and fallback otherwise; it is how unset
// association limits inherit from the parent association.
func (l Limit) Or(fallback Limit) Limit {
	if l.IsSet() {
		return l
	}
	return fallback
}

// Minutes converts a wall-clock limit (stored in minutes, as Slurm does)
// into a duration; an unset limit gives 0 and false.
func (l Limit) Minutes() (time.Duration, bool) {
	if !l.IsSet() {
		return 0, false
	}
	return time.Duration(l) * time.Minute, true
}

// SharesParent is the Shares value written `FairShare=parent`: the
// association has no share of its own and competes with its parent's
// share (Slurm's SLURMDB_FS_USE_PARENT).
const SharesParent int64 = -1

// DefaultShares is the share an association gets when none is given.
const DefaultShares int64 = 1

// RootAccount is the account at the top of every cluster's tree.
const RootAccount = "root"

// NormalQOS is the QOS that exists from the start, with priority 0.
const NormalQOS = "normal"

// Cluster is one cluster known to accounting. Its settings (shares, QOS,
// limits given on `add cluster`) live on its root association.
type Cluster struct {
	Name string
	// ControlHost, ControlPort and RPC are the address and protocol
	// version of the cluster's running controller, as `show cluster`
	// prints them; a controller fills them in when sacctmgr runs through
	// it (ExecEnv.Control), they are not stored.
	ControlHost string
	ControlPort int
	RPC         int
}

// Account is a bank account. Parent is the parent account's name ("" only
// for root); Slurm keeps the parent per association, Sluice keeps one
// account tree shared by all clusters (see docs/differences.md).
type Account struct {
	Name         string
	Parent       string
	Description  string
	Organization string
}

// AdminLevel is a user's privilege in accounting (sacctmgr AdminLevel=).
type AdminLevel int

// Admin levels, from least to most privileged.
const (
	AdminNone AdminLevel = iota
	AdminOperator
	AdminAdministrator
)

// String prints the level as sacctmgr shows it.
func (l AdminLevel) String() string {
	switch l {
	case AdminOperator:
		return "Operator"
	case AdminAdministrator:
		return "Administrator"
	default:
		return "None"
	}
}

// User is a user known to accounting.
type User struct {
	Name string
	// DefaultAccount is the account a job bills when it names none.
	DefaultAccount string
	// AdminLevel is None, Operator or Administrator.
	AdminLevel AdminLevel
}

// AssocLimits are the limits an association can carry (sacctmgr
// GrpTRES=..., MaxJobs=..., see SEMANTICS.md §5.1). A nil or missing TRES
// key and an Unset scalar mean "not set here".
type AssocLimits struct {
	GrpTRES        tresVec
	GrpTRESMins    tresVec
	GrpTRESRunMins tresVec
	GrpJobs        Limit
	GrpJobsAccrue  Limit
	GrpSubmitJobs  Limit
	// GrpWall is in minutes.
	GrpWall Limit
	// MaxTRES is MaxTRESPerJob.
	MaxTRES        tresVec
	MaxTRESPerNode tresVec
	// MaxTRESMins is MaxTRESMinsPerJob.
	MaxTRESMins    tresVec
	MaxTRESRunMins tresVec
	MaxJobs        Limit
	MaxJobsAccrue  Limit
	MaxSubmitJobs  Limit
	// MaxWall is MaxWallDurationPerJob, in minutes.
	MaxWall          Limit
	MinPrioThreshold Limit
}

// NoAssocLimits returns limits with every scalar unset.
func NoAssocLimits() AssocLimits {
	return AssocLimits{GrpJobs: Unset, GrpJobsAccrue: Unset, GrpSubmitJobs: Unset, GrpWall: Unset,
		MaxJobs: Unset, MaxJobsAccrue: Unset, MaxSubmitJobs: Unset, MaxWall: Unset, MinPrioThreshold: Unset}
}

// Association ties a user (or an account) to an account on a cluster,
// optionally for one partition; jobs bill against a user association and
// limits apply along the chain from it up to the cluster's root.
type Association struct {
	// ID is unique in a store and never reused.
	ID      int64
	Cluster string
	Account string
	// User is "" for an account association (the account's node in the tree).
	User string
	// Partition is "" unless the association is partition specific.
	Partition string
	// ParentID is the association of the parent account (0 for root).
	ParentID int64
	// Shares is the raw share (FairShare=); SharesParent means "parent".
	Shares int64
	// QOS is the allowed QOS set, sorted; nil means inherit from the parent.
	QOS []string
	// DefaultQOS is "" to inherit.
	DefaultQOS string
	// Priority is the association priority factor (Unset: inherit).
	Priority Limit
	AssocLimits
}

// IsUser reports whether a is a user association (a leaf of the tree).
func (a *Association) IsUser() bool { return a.User != "" }

// PreemptMode is how a QOS's jobs are preempted (QOS PreemptMode=).
// The zero value is "cluster": use the cluster-wide PreemptMode.
type PreemptMode uint8

// Preempt mode bits. Exactly one of Off, Cancel, Requeue, Suspend is the
// base mode; Gang, Within and Priority are modifiers.
const (
	PreemptCluster  PreemptMode = 0
	PreemptOff      PreemptMode = 1 << 0
	PreemptCancel   PreemptMode = 1 << 1
	PreemptRequeue  PreemptMode = 1 << 2
	PreemptSuspend  PreemptMode = 1 << 3
	PreemptGang     PreemptMode = 1 << 4
	PreemptWithin   PreemptMode = 1 << 5
	PreemptPriority PreemptMode = 1 << 6
)

// QOSFlags is the set of QOS Flags=.
type QOSFlags uint32

// QOS flags, named as sacctmgr prints them.
const (
	FlagDenyOnLimit QOSFlags = 1 << iota
	FlagEnforceUsageThreshold
	FlagNoDecay
	FlagNoReserve
	FlagOverPartQOS
	FlagPartitionMaxNodes
	FlagPartitionMinNodes
	FlagPartitionTimeLimit
	FlagRequiresReservation
	FlagUsageFactorSafe
	FlagRelative
)

// Has reports whether every flag in f2 is set in f.
func (f QOSFlags) Has(f2 QOSFlags) bool { return f&f2 == f2 }

// UnsetFloat marks an unset floating point setting (UsageThreshold,
// LimitFactor).
const UnsetFloat = -1.0

// QOS is a quality of service: a priority, a set of limits and the
// preemption rules for the jobs that run in it.
type QOS struct {
	// ID is unique in a store; normal is 1.
	ID          int64
	Name        string
	Description string
	Priority    int64
	Flags       QOSFlags
	// GraceTime is how long a preempted job gets before it is stopped.
	GraceTime time.Duration
	// Preempt lists the QOS names this QOS may preempt, sorted.
	Preempt     []string
	PreemptMode PreemptMode
	// PreemptExemptTime is -1 when unset (use the cluster's).
	PreemptExemptTime time.Duration
	// UsageFactor multiplies the usage of jobs in this QOS (default 1).
	UsageFactor float64
	// UsageThreshold is UnsetFloat when unset.
	UsageThreshold float64
	// LimitFactor multiplies association TRES limits; UnsetFloat if unset.
	LimitFactor float64

	GrpTRES        tresVec
	GrpTRESMins    tresVec
	GrpTRESRunMins tresVec
	GrpJobs        Limit
	GrpJobsAccrue  Limit
	GrpSubmitJobs  Limit
	// GrpWall is in minutes.
	GrpWall Limit

	MaxTRESPerJob            tresVec
	MaxTRESPerNode           tresVec
	MaxTRESPerUser           tresVec
	MaxTRESPerAccount        tresVec
	MaxTRESMinsPerJob        tresVec
	MaxTRESRunMinsPerUser    tresVec
	MaxTRESRunMinsPerAccount tresVec
	MinTRESPerJob            tresVec

	MaxJobsPerUser          Limit
	MaxJobsPerAccount       Limit
	MaxSubmitJobsPerUser    Limit
	MaxSubmitJobsPerAccount Limit
	MaxJobsAccruePerUser    Limit
	MaxJobsAccruePerAccount Limit
	// MaxWall is MaxWallDurationPerJob, in minutes.
	MaxWall          Limit
	MinPrioThreshold Limit
}

// NewQOS returns a QOS with Slurm's defaults: priority 0, usage factor 1,
// no limits, preempt mode "cluster".
func NewQOS(name string) *QOS {
	return &QOS{Name: name, UsageFactor: 1, UsageThreshold: UnsetFloat, LimitFactor: UnsetFloat,
		PreemptExemptTime: -1,
		GrpJobs:           Unset, GrpJobsAccrue: Unset, GrpSubmitJobs: Unset, GrpWall: Unset,
		MaxJobsPerUser: Unset, MaxJobsPerAccount: Unset, MaxSubmitJobsPerUser: Unset,
		MaxSubmitJobsPerAccount: Unset, MaxJobsAccruePerUser: Unset, MaxJobsAccruePerAccount: Unset,
		MaxWall: Unset, MinPrioThreshold: Unset}
}

// CanPreempt reports whether jobs in q may preempt jobs in QOS other
// according to the Preempt list (preempt/qos).
func (q *QOS) CanPreempt(other string) bool {
	for _, p := range q.Preempt {
		if p == other {
			return true
		}
	}
	return false
}

// Usage is the persisted fair-share usage of an association or a QOS:
// the decayed raw usage and when it was last decayed (priority plugin).
type Usage struct {
	// Kind is UsageAssoc or UsageQOS.
	Kind string
	// ID is the association or QOS id.
	ID int64
	// RawUsage is in TRES-billing-seconds, decayed.
	RawUsage float64
	// GrpUsedWall is the decayed wall time used against GrpWall, seconds.
	GrpUsedWall float64
	// LastDecay is when decay was last applied.
	LastDecay time.Time
}

// Usage kinds.
const (
	UsageAssoc = "assoc"
	UsageQOS   = "qos"
)
