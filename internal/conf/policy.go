package conf

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/tres"
)

// PriorityConfig holds the Priority* keys (priority_multifactor.shtml).
type PriorityConfig struct {
	// Type is priority/multifactor (the default since Slurm 23.11) or
	// priority/basic.
	Type string
	// The integer weights; all default to 0.
	WeightAge       int64
	WeightAssoc     int64
	WeightFairshare int64
	WeightJobSize   int64
	WeightPartition int64
	WeightQOS       int64
	// WeightTRESSpec is PriorityWeightTRES as written; WeightTRES is parsed.
	WeightTRESSpec string
	WeightTRES     tres.Weights
	// DecayHalfLife (default 7 days, 0 = no decay), CalcPeriod (default 5
	// minutes) and MaxAge (default 7 days).
	DecayHalfLife time.Duration
	CalcPeriod    time.Duration
	MaxAge        time.Duration
	// FavorSmall inverts the job size factor.
	FavorSmall bool
	// UsageResetPeriod is NONE by default.
	UsageResetPeriod UsageResetPeriod
	// Flags is the PriorityFlags set; see PriorityFlags.FairTree.
	Flags PriorityFlags
	// Parameters, SiteFactorPlugin and SiteFactorParameters are kept as
	// written.
	Parameters           string
	SiteFactorPlugin     string
	SiteFactorParameters string
	// FairShareDampeningFactor divides the classic fair-share exponent (default 1).
	FairShareDampeningFactor int
}

// UsageResetPeriod is PriorityUsageResetPeriod.
type UsageResetPeriod string

// The PriorityUsageResetPeriod values.
const (
	ResetNone      UsageResetPeriod = "NONE"
	ResetNow       UsageResetPeriod = "NOW"
	ResetDaily     UsageResetPeriod = "DAILY"
	ResetWeekly    UsageResetPeriod = "WEEKLY"
	ResetMonthly   UsageResetPeriod = "MONTHLY"
	ResetQuarterly UsageResetPeriod = "QUARTERLY"
	ResetYearly    UsageResetPeriod = "YEARLY"
)

func parseUsageReset(v string) (UsageResetPeriod, error) {
	u := UsageResetPeriod(strings.ToUpper(v))
	switch u {
	case ResetNone, ResetNow, ResetDaily, ResetWeekly, ResetMonthly, ResetQuarterly, ResetYearly:
		return u, nil
	}
	return "", fmt.Errorf("invalid value %s (NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY)", quote(v))
}

// PriorityFlags is the PriorityFlags set.
type PriorityFlags uint32

// The PriorityFlags of slurm.conf(5).
const (
	FlagAccrueAlways PriorityFlags = 1 << iota
	FlagCalculateRunning
	FlagDepthOblivious
	FlagNoFairTree
	FlagIncrOnly
	FlagMaxTRES
	FlagMaxTRESGres
	FlagNoNormalAssoc
	FlagNoNormalPart
	FlagNoNormalQOS
	FlagNoNormalTRES
	FlagSmallRelativeToTime
	// FlagFairTree is explicit FAIR_TREE, accepted from old configs.
	FlagFairTree
)

var priorityFlagNames = []flagName[PriorityFlags]{
	{FlagAccrueAlways, "ACCRUE_ALWAYS"},
	{FlagCalculateRunning, "CALCULATE_RUNNING"},
	{FlagDepthOblivious, "DEPTH_OBLIVIOUS"},
	{FlagNoFairTree, "NO_FAIR_TREE"},
	{FlagIncrOnly, "INCR_ONLY"},
	{FlagMaxTRES, "MAX_TRES"},
	{FlagMaxTRESGres, "MAX_TRES_GRES"},
	{FlagNoNormalAssoc, "NO_NORMAL_ASSOC"},
	{FlagNoNormalPart, "NO_NORMAL_PART"},
	{FlagNoNormalQOS, "NO_NORMAL_QOS"},
	{FlagNoNormalTRES, "NO_NORMAL_TRES"},
	{FlagSmallRelativeToTime, "SMALL_RELATIVE_TO_TIME"},
	{FlagFairTree, "FAIR_TREE"},
}

// Has reports whether every flag of f is set.
func (p PriorityFlags) Has(f PriorityFlags) bool { return p&f == f }

// FairTree reports whether the Fair Tree algorithm is in use: it is on
// unless NO_FAIR_TREE or DEPTH_OBLIVIOUS is given (SEMANTICS.md §0).
func (p PriorityFlags) FairTree() bool {
	return p&(FlagNoFairTree|FlagDepthOblivious) == 0
}

// String lists the flags comma separated, as scontrol show config does.
func (p PriorityFlags) String() string { return flagString(p, priorityFlagNames, "") }

func parsePriorityFlags(v string) (PriorityFlags, error) {
	var f PriorityFlags
	for _, w := range splitList(v) {
		if strings.EqualFold(w, "NO_NORMAL_ALL") {
			f |= FlagNoNormalAssoc | FlagNoNormalPart | FlagNoNormalQOS | FlagNoNormalTRES
			continue
		}
		b, ok := lookupFlag(priorityFlagNames, w)
		if !ok {
			return 0, fmt.Errorf("invalid flag %s", quote(w))
		}
		f |= b
	}
	if f.Has(FlagDepthOblivious) {
		f |= FlagNoFairTree
	}
	return f, nil
}

// PreemptConfig holds the cluster-wide preemption keys.
type PreemptConfig struct {
	// Type is preempt/none (default), preempt/partition_prio or preempt/qos.
	Type string
	// Mode is the cluster's PreemptMode (default OFF).
	Mode PreemptMode
	// ExemptTime is the minimum run time before a job may be preempted
	// (PreemptExemptTime; 0 when unset or -1).
	ExemptTime time.Duration
	// Parameters is PreemptParameters as written.
	Parameters string
}

// PreemptMode is a set of preemption mechanisms; the zero value is OFF.
type PreemptMode uint16

// The PreemptMode flags of slurm.conf(5) and sacctmgr(1).
const (
	PreemptOff     PreemptMode = 0
	PreemptSuspend PreemptMode = 1 << iota
	PreemptRequeue
	PreemptCancel
	PreemptGang
	PreemptWithin
	PreemptPriority
)

var preemptModeNames = []flagName[PreemptMode]{
	{PreemptGang, "GANG"},
	{PreemptSuspend, "SUSPEND"},
	{PreemptRequeue, "REQUEUE"},
	{PreemptCancel, "CANCEL"},
	{PreemptWithin, "WITHIN"},
	{PreemptPriority, "PRIORITY"},
}

// Has reports whether every flag of f is set.
func (m PreemptMode) Has(f PreemptMode) bool { return m&f == f }

// String prints the mode as Slurm does: "OFF", "REQUEUE", "GANG,SUSPEND".
func (m PreemptMode) String() string { return flagString(m, preemptModeNames, "OFF") }

// ParsePreemptMode reads a PreemptMode value: OFF, or a comma list of
// CANCEL, REQUEUE, SUSPEND (at most one of these three), GANG, WITHIN,
// PRIORITY. It is exported for sacctmgr's QOS PreemptMode.
func ParsePreemptMode(v string) (PreemptMode, error) {
	var m PreemptMode
	off := false
	for _, w := range splitList(v) {
		if strings.EqualFold(w, "OFF") {
			off = true
			continue
		}
		b, ok := lookupFlag(preemptModeNames, w)
		if !ok {
			return 0, fmt.Errorf("invalid PreemptMode %s", quote(w))
		}
		m |= b
	}
	if off && m != 0 {
		return 0, fmt.Errorf("invalid PreemptMode %s: OFF cannot be combined", quote(v))
	}
	n := 0
	for _, b := range []PreemptMode{PreemptSuspend, PreemptRequeue, PreemptCancel} {
		if m.Has(b) {
			n++
		}
	}
	if n > 1 {
		return 0, fmt.Errorf("invalid PreemptMode %s: only one of SUSPEND, REQUEUE, CANCEL", quote(v))
	}
	return m, nil
}

// EnforceFlags is AccountingStorageEnforce.
type EnforceFlags uint16

// The AccountingStorageEnforce flags.
const (
	EnforceAssociations EnforceFlags = 1 << iota
	EnforceLimits
	EnforceQOS
	EnforceSafe
	EnforceWCKeys
	EnforceNoJobs
	EnforceNoSteps
)

var enforceNames = []flagName[EnforceFlags]{
	{EnforceAssociations, "associations"},
	{EnforceLimits, "limits"},
	{EnforceQOS, "qos"},
	{EnforceSafe, "safe"},
	{EnforceWCKeys, "wckeys"},
	{EnforceNoJobs, "nojobs"},
	{EnforceNoSteps, "nosteps"},
}

// Has reports whether every flag of f is set.
func (e EnforceFlags) Has(f EnforceFlags) bool { return e&f == f }

// String lists the flags as scontrol show config does ("none" when empty).
func (e EnforceFlags) String() string { return flagString(e, enforceNames, "none") }

// parseEnforce applies slurm.conf(5)'s implications: limits, qos and
// wckeys imply associations; safe implies limits; nojobs implies nosteps;
// "all" is everything but nojobs and nosteps.
func parseEnforce(v string) (EnforceFlags, error) {
	var e EnforceFlags
	for _, w := range splitList(v) {
		switch strings.ToLower(w) {
		case "all":
			e |= EnforceAssociations | EnforceLimits | EnforceQOS | EnforceSafe | EnforceWCKeys
			continue
		case "none", "0":
			continue
		case "association":
			w = "associations"
		case "limit":
			w = "limits"
		case "wckey":
			w = "wckeys"
		}
		b, ok := lookupFlag(enforceNames, w)
		if !ok {
			return 0, fmt.Errorf("invalid flag %s", quote(w))
		}
		e |= b
	}
	if e&EnforceSafe != 0 {
		e |= EnforceLimits
	}
	if e&(EnforceLimits|EnforceQOS|EnforceWCKeys) != 0 {
		e |= EnforceAssociations
	}
	if e&EnforceNoJobs != 0 {
		e |= EnforceNoSteps
	}
	return e, nil
}

// flagName names one bit of a flag set.
type flagName[T ~uint16 | ~uint32] struct {
	bit  T
	name string
}

func lookupFlag[T ~uint16 | ~uint32](names []flagName[T], w string) (T, bool) {
	for _, n := range names {
		if strings.EqualFold(n.name, w) {
			return n.bit, true
		}
	}
	return 0, false
}

func flagString[T ~uint16 | ~uint32](v T, names []flagName[T], empty string) string {
	var out []string
	for _, n := range names {
		if v&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	if len(out) == 0 {
		return empty
	}
	return strings.Join(out, ",")
}

// splitList splits a comma separated value, dropping empty items and
// surrounding spaces.
func splitList(v string) []string {
	var out []string
	for _, w := range strings.Split(v, ",") {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}
