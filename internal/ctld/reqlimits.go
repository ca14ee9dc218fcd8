package ctld

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Limits on what one submission may carry (issue 17, finding 5). Slurm
// 24.11 (oracle) accepts a job name, comment, wckey or mail user of 1024
// characters and refuses 1025 with ESLURM_PATHNAME_TOO_LONG's text, the
// same answer as a script over max_script_size; an output path of about
// 4000 characters is accepted and one of 4100 refused.
const (
	maxStringField = 1024
	maxPathField   = 4096
	// MaxEnvironmentBytes bounds a job's environment (the sum of its
	// NAME=value strings): Linux cannot exec a larger one (ARG_MAX is
	// 2 MiB by default). Slurm has no such check.
	MaxEnvironmentBytes = 2 << 20
)

// checkSpecLimits refuses a submission whose strings are longer than
// slurmctld takes or whose environment could never be exec'd. Control
// characters in a name are accepted, as by Slurm; the commands print
// them escaped (cli.printable).
func checkSpecLimits(spec *api.JobSpec) error {
	extra := ""
	if spec.Extra != nil {
		extra = *spec.Extra
	}
	for _, v := range []string{spec.Name, spec.Comment, spec.WCKey, spec.MailUser, extra} {
		if len(v) > maxStringField {
			return &apiErr{status: http.StatusBadRequest, msg: errScriptTooLong}
		}
	}
	for _, p := range []string{spec.Output, spec.Error, spec.Input, spec.WorkDir} {
		if len(p) >= maxPathField {
			return &apiErr{status: http.StatusBadRequest, msg: errScriptTooLong}
		}
	}
	n := 0
	for _, e := range spec.Environment {
		n += len(e) + 1
	}
	if n > MaxEnvironmentBytes {
		return &apiErr{status: http.StatusBadRequest,
			msg: fmt.Sprintf("Job environment too large: %d bytes (the limit is %d)", n, MaxEnvironmentBytes)}
	}
	return nil
}

// checkUpdateLimits holds scontrol update job Name= to the submission's
// length limit.
func checkUpdateLimits(set map[string]string) error {
	for k, v := range set {
		switch strings.ToLower(k) {
		case "name", "jobname", "comment", "wckey", "mailuser":
			if len(v) > maxStringField {
				return &apiErr{status: http.StatusBadRequest, msg: errScriptTooLong}
			}
		}
	}
	return nil
}
