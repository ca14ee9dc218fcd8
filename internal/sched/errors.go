package sched

import "errors"

// SubmitError is a rejected submission or operation: Reason is the reason
// name the controller returns first (sbatch prints `sbatch: error: <Reason>`
// when it is set), Err is the Slurm error whose message sbatch prints after
// "Batch job submission failed: ".
type SubmitError struct {
	Reason Reason
	Err    error
	// Detail, when set, is slurmctld's explanation that sbatch prints on
	// a line of its own before the message ("Memory specification can
	// not be satisfied", "invalid partition specified: NAME").
	Detail string
	// ClientSide marks an error Slurm's clients find before submitting
	// (a GRES name outside GresTypes): they print the message alone,
	// without "Batch job submission failed: ".
	ClientSide bool
}

// Error returns Slurm's message.
func (e *SubmitError) Error() string { return e.Err.Error() }

// Unwrap returns the sentinel error.
func (e *SubmitError) Unwrap() error { return e.Err }

// Sentinel errors carrying Slurm's exact messages (src/common/slurm_errno.c).
var (
	ErrAccountingPolicy   = errors.New("Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)")
	ErrInvalidPartition   = errors.New("Invalid partition name specified")
	ErrNoDefaultPartition = errors.New("No partition specified or system default partition")
	ErrInvalidAccount     = errors.New("Invalid account or account/partition combination specified")
	ErrInvalidQOS         = errors.New("Invalid qos specification")
	ErrInvalidTimeLimit   = errors.New("Requested time limit is invalid (missing or exceeds some limit)")
	ErrNodeConfig         = errors.New("Requested node configuration is not available")
	ErrPartConfig         = errors.New("Requested partition configuration not available now")
	ErrPartInactive       = errors.New("Required partition not available (inactive or drain)")
	ErrNodeCount          = errors.New("Node count specification invalid")
	ErrTooManyCPUs        = errors.New("More processors requested than permitted")
	ErrMemory             = errors.New("Memory required by task is not available")
	ErrAccessDenied       = errors.New("Access/permission denied")
	ErrGroupNotPermitted  = errors.New("User's group not permitted to use this partition")
	ErrInvalidArray       = errors.New("Invalid job array specification")
	ErrDependency         = errors.New("Job dependency problem")
	ErrCircularDependency = errors.New("Circular job dependency")
	ErrInvalidGres        = errors.New("Invalid generic resource (gres) specification")
	ErrInvalidLicense     = errors.New("Invalid license specification")
	ErrInvalidFeature     = errors.New("Invalid feature specification")
	ErrMaxJobCount        = errors.New("MaxJobCount limit reached")
	ErrInvalidJobID       = errors.New("Invalid job id specified")
	ErrAlreadyDone        = errors.New("Job/step already completing or completed")
	ErrJobPending         = errors.New("Job is pending execution")
	// ErrJobFinished refuses a hold or release of a finished job.
	ErrJobFinished     = errors.New("Job has already finished")
	ErrNotPending      = errors.New("Job is no longer pending execution")
	ErrDisabled        = errors.New("Requested operation is presently disabled")
	ErrBatchOnly       = errors.New("Only batch jobs are accepted or processed")
	ErrInvalidNodeName = errors.New("Invalid node name specified")
	ErrTransitionState = errors.New("Requested operation not supported on this job state")
	ErrHeldByAdmin     = errors.New("Access/permission denied")
	// ErrInvalidUserID is Slurm's answer to a hold or release of another
	// user's job (a requeue or cancel of it is ErrAccessDenied).
	ErrInvalidUserID = errors.New("Invalid user id")
	// ErrJobHeld refuses a priority for a held job: it must be released
	// first (scontrol release), as in Slurm.
	ErrJobHeld      = errors.New("Job is in held state, pending scheduler release")
	ErrNotSupported = errors.New("Requested operation not supported on this system")
)
