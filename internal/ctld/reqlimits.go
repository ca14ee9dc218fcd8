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
// slurmctld takes, whose environment could never be exec'd, or whose
// name, comment or wckey holds a control character (a newline or NUL
// in a job name would be printed raw into squeue's and sacct's lines).
func checkSpecLimits(spec *api.JobSpec) error {
	for _, f := range []struct{ name, v string }{{"job name", spec.Name}, {"comment", spec.Comment},
		{"wckey", spec.WCKey}, {"mail user", spec.MailUser}} {
		if len(f.v) > maxStringField {
			return &apiErr{status: http.StatusBadRequest, msg: errScriptTooLong}
		}
		if err := noControlChars(f.name, f.v); err != nil {
			return err
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
// rules.
func checkUpdateLimits(set map[string]string) error {
	for k, v := range set {
		switch strings.ToLower(k) {
		case "name", "jobname", "comment", "wckey", "mailuser":
			if len(v) > maxStringField {
				return &apiErr{status: http.StatusBadRequest, msg: errScriptTooLong}
			}
			if err := noControlChars(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// noControlChars refuses a control character (below 0x20, or DEL).
func noControlChars(field, v string) error {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < 0x20 || b == 0x7f {
			return &apiErr{status: http.StatusBadRequest,
				msg: fmt.Sprintf("Invalid %s: control character 0x%02x at byte %d is not allowed", field, b, i)}
		}
	}
	return nil
}
