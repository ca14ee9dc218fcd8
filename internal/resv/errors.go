package resv

import "errors"

// Errors with Slurm's messages (src/common/slurm_errno.c); scontrol prints
// them after "Error creating the reservation: " (or updating/deleting).
var (
	// ErrInvalid is ESLURM_RESERVATION_INVALID: an unknown reservation name
	// or a request that makes no sense.
	ErrInvalid = errors.New("Requested reservation is invalid")
	// ErrOverlap is ESLURM_RESERVATION_OVERLAP.
	ErrOverlap = errors.New("Reservation request overlaps with existing reservation")
	// ErrNodesBusy is ESLURM_NODES_BUSY: nodes have jobs that run into the
	// window (without IGNORE_JOBS), or not enough nodes are free.
	ErrNodesBusy = errors.New("Requested nodes are busy")
	// ErrAccess is ESLURM_RESERVATION_ACCESS: a job's user or account may
	// not use the reservation.
	ErrAccess = errors.New("Access denied to requested reservation")
	// ErrBusy is ESLURM_RESERVATION_BUSY: the reservation has running jobs
	// and cannot be deleted.
	ErrBusy = errors.New("Reservation is in use")
	// ErrNameDup is ESLURM_RESERVATION_NAME_DUP.
	ErrNameDup = errors.New("Duplicate reservation name")
	// ErrInvalidTime is ESLURM_INVALID_TIME_VALUE (end before start, a bad
	// time string).
	ErrInvalidTime = errors.New("Invalid time specified")
	// ErrInvalidNode is ESLURM_INVALID_NODE_NAME.
	ErrInvalidNode = errors.New("Invalid node name specified")
	// ErrInvalidPartition is ESLURM_INVALID_PARTITION_NAME.
	ErrInvalidPartition = errors.New("Invalid partition name specified")
	// ErrInvalidUser is ESLURM_USER_ID_MISSING.
	ErrInvalidUser = errors.New("Invalid user id")
	// ErrInvalidAccount is ESLURM_INVALID_ACCOUNT.
	ErrInvalidAccount = errors.New("Invalid account or account/partition combination specified")
	// ErrInvalidLicenses is ESLURM_INVALID_LICENSES (unknown name, more than
	// configured).
	ErrInvalidLicenses = errors.New("Invalid license specification")
	// ErrNotPermitted is ESLURM_ACCESS_DENIED: only root/SlurmUser/admins
	// manage reservations.
	// Slurm 24.11 answers a user's reservation command with "Invalid
	// user id" (oracle: create, update and delete by alice or bob).
	ErrNotPermitted = errors.New("Invalid user id")
)

// UsageError is a mistake scontrol itself reports before asking the
// controller (missing StartTime, no users or accounts, an unknown key);
// its text is printed as is and ends with "No reservation created." where
// Slurm's does.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ClientMessage is what scontrol prints for a failed reservation command
// (arg is the word after the verb, as typed): scontrol's own usage
// messages as they are; a controller error after "Error creating the
// reservation: " (create), "slurm_update error: " (update) or
// "delete_reservation ARG: " (delete), as Slurm 24.11 prints them
// (oracle: "delete_reservation reservation=nosuch: Requested reservation
// is invalid"). The command exits 1.
func ClientMessage(v Verb, arg string, err error) string {
	if ue, ok := err.(*UsageError); ok {
		return ue.Msg
	}
	switch v {
	case VerbCreate:
		return "Error creating the reservation: " + err.Error()
	case VerbUpdate:
		return "slurm_update error: " + err.Error()
	case VerbDelete:
		return "delete_reservation " + arg + ": " + err.Error()
	}
	return err.Error()
}
