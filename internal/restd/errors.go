package restd

import (
	"errors"
	"net/http"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/dataparser"
)

// slurmErrno is Slurm's error number for the controller's messages
// (slurm_errno.h's values, which slurmrestd prints as error_number).
var slurmErrno = map[string]int{
	"Protocol authentication error":                              1007,
	"Invalid partition name specified":                           2000,
	"No partition specified or system default partition":         2001,
	"Access/permission denied":                                   2002,
	"User's group not permitted to use this partition":           2003,
	"More processors requested than permitted":                   2005,
	"Node count specification invalid":                           2006,
	"Invalid user id":                                            2010,
	"Requested node configuration is not available":              2014,
	"Requested partition configuration not available now":        2015,
	"Invalid job id specified":                                   2017,
	"Invalid node name specified":                                2018,
	"Requested operation not supported on this job state":        2020,
	"Job/step already completing or completed":                   2021,
	"Invalid account or account/partition combination specified": 2045,
}

// errAuth is slurmctld's refusal of a token whose user is not the one
// the request names.
const errAuth = "Protocol authentication error"

// dbRefused is slurmrestd's answer on every /slurmdb path to a caller
// slurmdbd refuses (a forged token, another user's): it cannot open its
// connection, 7000, HTTP 502 (oracle, 24.11, ping included).
var dbRefused = reply{status: http.StatusBadGateway, errs: []dataparser.Error{{
	Description: "Failed to open slurmdbd connection, authentication error", Number: 7000,
	Error: "Unable to connect to database", Source: "openapi_get_db_conn"}}}

// errParse is slurmrestd's error for a request it cannot read.
const errParse = "Query empty or not RFC7320 compliant"

// errnoOf returns Slurm's number for a message (0 when Slurm has none
// Sluice knows: slurmrestd prints 0 with "No error" for its own checks).
func errnoOf(msg string) int { return slurmErrno[msg] }

// statusOf is the HTTP status slurmrestd answers a failed call with:
// 404 for an unknown job, 511 for a refused identity, else 500.
func statusOf(errno int) int {
	switch errno {
	case 2017:
		return http.StatusNotFound
	case 1007:
		return http.StatusNetworkAuthenticationRequired
	}
	return http.StatusInternalServerError
}

// callError turns a controller client's error into an envelope error:
// description and source are slurmrestd's words for the call.
func callError(err error, description, source string) dataparser.Error {
	msg := err.Error()
	var ae *api.Error
	if errors.As(err, &ae) {
		msg = ae.Message
	}
	return dataparser.Error{Description: description, Number: errnoOf(msg), Error: msg, Source: source}
}

// failed is a reply carrying one error, with the status slurmrestd
// gives its number.
func failed(data dataparser.Obj, e dataparser.Error) reply {
	return reply{data: data, status: statusOf(e.Number), errs: []dataparser.Error{e}}
}

// parseFailure is slurmrestd's 422 for parameters or a body it rejects
// (error 9000, "Query empty or not RFC7320 compliant").
func parseFailure(data dataparser.Obj, description, source string) reply {
	return reply{data: data, status: http.StatusUnprocessableEntity,
		errs: []dataparser.Error{{Description: description, Number: 9000, Error: errParse, Source: source}}}
}

// isUnauthorized reports whether the controller refused the caller's
// token (forged, expired, or signed with a revoked key).
func isUnauthorized(err error) bool {
	var ae *api.Error
	return errors.As(err, &ae) && ae.Status == http.StatusUnauthorized
}

func asAPIError(err error, ae **api.Error) bool { return errors.As(err, ae) }
