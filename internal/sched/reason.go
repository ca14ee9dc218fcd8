package sched

// Reason is a pending (or hold) reason exactly as Slurm spells it
// (src/common/job_state_reason.c): squeue prints it in parentheses and
// scontrol as Reason=. Reasons for TRES limits are built by the limits
// gate from the TRES family (see limitReason); the fixed ones are below.
type Reason string

// The reasons a finished job keeps (endReason); killed by a signal it
// shows RaisedSignal:N(text).
const (
	ReasonTimeLimit       Reason = "TimeLimit"
	ReasonNonZeroExitCode Reason = "NonZeroExitCode"
)

// Core pending reasons.
const (
	ReasonNone                     Reason = "None"
	ReasonPriority                 Reason = "Priority"
	ReasonResources                Reason = "Resources"
	ReasonDependency               Reason = "Dependency"
	ReasonDependencyNeverSatisfied Reason = "DependencyNeverSatisfied"
	ReasonBeginTime                Reason = "BeginTime"
	ReasonJobHeldUser              Reason = "JobHeldUser"
	ReasonJobHeldAdmin             Reason = "JobHeldAdmin"
	ReasonLicenses                 Reason = "Licenses"
	ReasonReservation              Reason = "Reservation"
	ReasonReqNodeNotAvail          Reason = "ReqNodeNotAvail"
	ReasonPartitionNodeLimit       Reason = "PartitionNodeLimit"
	ReasonPartitionTimeLimit       Reason = "PartitionTimeLimit"
	ReasonPartitionDown            Reason = "PartitionDown"
	ReasonPartitionInactive        Reason = "PartitionInactive"
	ReasonPartitionConfig          Reason = "PartitionConfig"
	ReasonAccountingPolicy         Reason = "AccountingPolicy"
	ReasonQOSNotAllowed            Reason = "QOSNotAllowed"
	ReasonAccountNotAllowed        Reason = "AccountNotAllowed"
	ReasonInvalidAccount           Reason = "InvalidAccount"
	ReasonInvalidQOS               Reason = "InvalidQOS"
	ReasonJobArrayTaskLimit        Reason = "JobArrayTaskLimit"
	ReasonJobHoldMaxRequeue        Reason = "JobHoldMaxRequeue"
	ReasonBadConstraints           Reason = "BadConstraints"
	ReasonNodeDown                 Reason = "NodeDown"
	ReasonNodesDown                Reason = "Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_in_higher_priority_partitions"
	ReasonMaxMemPerLimit           Reason = "MaxMemPerLimit"
	ReasonQOSUsageThreshold        Reason = "QOSUsageThreshold"
	ReasonCleaning                 Reason = "Cleaning"
	ReasonSchedDefer               Reason = "SchedDefer"
)

// Reasons for limits that are not per TRES.
const (
	ReasonAssocGrpJobsLimit               Reason = "AssocGrpJobsLimit"
	ReasonAssocGrpSubmitJobsLimit         Reason = "AssocGrpSubmitJobsLimit"
	ReasonAssocGrpWallLimit               Reason = "AssocGrpWallLimit"
	ReasonAssocMaxJobsLimit               Reason = "AssocMaxJobsLimit"
	ReasonAssocMaxSubmitJobLimit          Reason = "AssocMaxSubmitJobLimit"
	ReasonAssocMaxWallDurationPerJobLimit Reason = "AssocMaxWallDurationPerJobLimit"
	ReasonQOSGrpJobsLimit                 Reason = "QOSGrpJobsLimit"
	ReasonQOSGrpSubmitJobsLimit           Reason = "QOSGrpSubmitJobsLimit"
	ReasonQOSGrpWallLimit                 Reason = "QOSGrpWallLimit"
	ReasonQOSMaxJobsPerUserLimit          Reason = "QOSMaxJobsPerUserLimit"
	ReasonQOSMaxSubmitJobPerUserLimit     Reason = "QOSMaxSubmitJobPerUserLimit"
	ReasonQOSMaxWallDurationPerJobLimit   Reason = "QOSMaxWallDurationPerJobLimit"
	ReasonMaxJobsPerAccount               Reason = "MaxJobsPerAccount"
	ReasonMaxSubmitJobsPerAccount         Reason = "MaxSubmitJobsPerAccount"
)

// Job state descriptions Slurm shows instead of the bare reason.
const (
	// StateDescRequeuedHeld is the description of a job requeued held.
	StateDescRequeuedHeld = "job requeued in held state"
	// StateDescLaunchFailedHeld is the description of a job requeued held
	// after its Prolog failed (squeue "(launch failed requeued held)").
	StateDescLaunchFailedHeld = "launch failed requeued held"
	// StateDescNodesDown is what squeue shows for ReasonNodesDown (scontrol
	// shows the reason, with underscores).
	StateDescNodesDown = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
	// StateDescMayBeReserved is what squeue shows for ReqNodeNotAvail of a
	// job that named no nodes.
	StateDescMayBeReserved = "ReqNodeNotAvail, May be reserved for other job"
)

// requeueHeldDesc reports whether desc is one of the descriptions of a job
// requeued held, kept by scheduling passes until the job is released.
func requeueHeldDesc(desc string) bool {
	return desc == StateDescRequeuedHeld || desc == StateDescLaunchFailedHeld
}
