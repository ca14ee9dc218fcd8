package acct

import "sync"

// Field tables: one place that says which limit key maps to which field,
// shared by add/modify, show, dump and load.

// assocCountFields() are association limits that are plain counts.
var assocCountFields = sync.OnceValue(func() map[string]func(*AssocLimits) *Limit {
	return map[string]func(*AssocLimits) *Limit{
		"GrpJobs":          func(l *AssocLimits) *Limit { return &l.GrpJobs },
		"GrpJobsAccrue":    func(l *AssocLimits) *Limit { return &l.GrpJobsAccrue },
		"GrpSubmitJobs":    func(l *AssocLimits) *Limit { return &l.GrpSubmitJobs },
		"MaxJobs":          func(l *AssocLimits) *Limit { return &l.MaxJobs },
		"MaxJobsAccrue":    func(l *AssocLimits) *Limit { return &l.MaxJobsAccrue },
		"MaxSubmitJobs":    func(l *AssocLimits) *Limit { return &l.MaxSubmitJobs },
		"MinPrioThreshold": func(l *AssocLimits) *Limit { return &l.MinPrioThreshold },
	}
})

// assocWallFields() are association limits in minutes.
var assocWallFields = sync.OnceValue(func() map[string]func(*AssocLimits) *Limit {
	return map[string]func(*AssocLimits) *Limit{
		"GrpWall": func(l *AssocLimits) *Limit { return &l.GrpWall },
		"MaxWall": func(l *AssocLimits) *Limit { return &l.MaxWall },
	}
})

// assocTRESFields() are association TRES limits.
var assocTRESFields = sync.OnceValue(func() map[string]func(*AssocLimits) *tresVec {
	return map[string]func(*AssocLimits) *tresVec{
		"GrpTRES":        func(l *AssocLimits) *tresVec { return &l.GrpTRES },
		"GrpTRESMins":    func(l *AssocLimits) *tresVec { return &l.GrpTRESMins },
		"GrpTRESRunMins": func(l *AssocLimits) *tresVec { return &l.GrpTRESRunMins },
		"MaxTRES":        func(l *AssocLimits) *tresVec { return &l.MaxTRES },
		"MaxTRESPerNode": func(l *AssocLimits) *tresVec { return &l.MaxTRESPerNode },
		"MaxTRESMins":    func(l *AssocLimits) *tresVec { return &l.MaxTRESMins },
		"MaxTRESRunMins": func(l *AssocLimits) *tresVec { return &l.MaxTRESRunMins },
	}
})

// qosCountFields() are QOS limits that are plain counts.
var qosCountFields = sync.OnceValue(func() map[string]func(*QOS) *Limit {
	return map[string]func(*QOS) *Limit{
		"GrpJobs":                 func(q *QOS) *Limit { return &q.GrpJobs },
		"GrpJobsAccrue":           func(q *QOS) *Limit { return &q.GrpJobsAccrue },
		"GrpSubmitJobs":           func(q *QOS) *Limit { return &q.GrpSubmitJobs },
		"MaxJobsPerUser":          func(q *QOS) *Limit { return &q.MaxJobsPerUser },
		"MaxJobsPerAccount":       func(q *QOS) *Limit { return &q.MaxJobsPerAccount },
		"MaxSubmitJobsPerUser":    func(q *QOS) *Limit { return &q.MaxSubmitJobsPerUser },
		"MaxSubmitJobsPerAccount": func(q *QOS) *Limit { return &q.MaxSubmitJobsPerAccount },
		"MaxJobsAccruePerUser":    func(q *QOS) *Limit { return &q.MaxJobsAccruePerUser },
		"MaxJobsAccruePerAccount": func(q *QOS) *Limit { return &q.MaxJobsAccruePerAccount },
		"MinPrioThreshold":        func(q *QOS) *Limit { return &q.MinPrioThreshold },
	}
})

// qosWallFields() are QOS limits in minutes.
var qosWallFields = sync.OnceValue(func() map[string]func(*QOS) *Limit {
	return map[string]func(*QOS) *Limit{
		"GrpWall": func(q *QOS) *Limit { return &q.GrpWall },
		"MaxWall": func(q *QOS) *Limit { return &q.MaxWall },
	}
})

// qosTRESFields() are QOS TRES limits.
var qosTRESFields = sync.OnceValue(func() map[string]func(*QOS) *tresVec {
	return map[string]func(*QOS) *tresVec{
		"GrpTRES":                  func(q *QOS) *tresVec { return &q.GrpTRES },
		"GrpTRESMins":              func(q *QOS) *tresVec { return &q.GrpTRESMins },
		"GrpTRESRunMins":           func(q *QOS) *tresVec { return &q.GrpTRESRunMins },
		"MaxTRES":                  func(q *QOS) *tresVec { return &q.MaxTRESPerJob },
		"MaxTRESPerNode":           func(q *QOS) *tresVec { return &q.MaxTRESPerNode },
		"MaxTRESPerUser":           func(q *QOS) *tresVec { return &q.MaxTRESPerUser },
		"MaxTRESPerAccount":        func(q *QOS) *tresVec { return &q.MaxTRESPerAccount },
		"MaxTRESMins":              func(q *QOS) *tresVec { return &q.MaxTRESMinsPerJob },
		"MaxTRESRunMinsPerUser":    func(q *QOS) *tresVec { return &q.MaxTRESRunMinsPerUser },
		"MaxTRESRunMinsPerAccount": func(q *QOS) *tresVec { return &q.MaxTRESRunMinsPerAccount },
		"MinTRESPerJob":            func(q *QOS) *tresVec { return &q.MinTRESPerJob },
	}
})

// qosFlagNames lists the QOS flags in the order sacctmgr prints them.
var qosFlagNames = []struct {
	flag QOSFlags
	name string
}{
	{FlagDenyOnLimit, "DenyOnLimit"}, {FlagEnforceUsageThreshold, "EnforceUsageThreshold"},
	{FlagNoDecay, "NoDecay"}, {FlagNoReserve, "NoReserve"}, {FlagOverPartQOS, "OverPartQOS"},
	{FlagPartitionMaxNodes, "PartitionMaxNodes"}, {FlagPartitionMinNodes, "PartitionMinNodes"},
	{FlagPartitionTimeLimit, "PartitionTimeLimit"}, {FlagRequiresReservation, "RequiresReservation"},
	{FlagUsageFactorSafe, "UsageFactorSafe"}, {FlagRelative, "Relative"},
}

// String prints the flags as sacctmgr does (comma separated).
func (f QOSFlags) String() string {
	s := ""
	for _, n := range qosFlagNames {
		if f.Has(n.flag) {
			if s != "" {
				s += ","
			}
			s += n.name
		}
	}
	return s
}

// preemptModeNames lists the preempt modes in the order they print.
var preemptModeNames = []struct {
	mode PreemptMode
	name string
}{
	{PreemptOff, "OFF"}, {PreemptCancel, "CANCEL"}, {PreemptRequeue, "REQUEUE"}, {PreemptSuspend, "SUSPEND"},
	{PreemptGang, "GANG"}, {PreemptWithin, "WITHIN"}, {PreemptPriority, "PRIORITY"},
}

// String prints the mode as sacctmgr does: "cluster" when unset,
// otherwise e.g. "REQUEUE" or "SUSPEND,GANG".
func (m PreemptMode) String() string {
	if m == PreemptCluster {
		return "cluster"
	}
	s := ""
	for _, n := range preemptModeNames {
		if m&n.mode != 0 {
			if s != "" {
				s += ","
			}
			s += n.name
		}
	}
	return s
}

// Base returns the base mode (Off, Cancel, Requeue or Suspend), or
// PreemptCluster when the QOS defers to the cluster.
func (m PreemptMode) Base() PreemptMode {
	return m & (PreemptOff | PreemptCancel | PreemptRequeue | PreemptSuspend)
}
