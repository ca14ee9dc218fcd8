package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/duration"
)

// setSignal checks --signal=[{R|B}:]<sig_num>[@sig_time] as sbatch does
// before anything is sent (Slurm 24.11, oracle): the signal a name (with
// or without SIG) or a number above 0, the time 0..65535 seconds or
// empty; anything else is "Invalid --signal specification", exit 255.
func setSignal(v string, dst *string) error {
	spec := v
	if len(spec) > 2 && spec[1] == ':' && strings.ContainsRune("RBrb", rune(spec[0])) {
		spec = spec[2:]
	}
	sig, at, hasAt := strings.Cut(spec, "@")
	ok := sig != ""
	if n, err := strconv.Atoi(sig); err == nil {
		ok = n > 0
	} else if ok {
		_, err := parseSignal(sig)
		ok = err == nil
	}
	if hasAt && at != "" {
		n, err := strconv.Atoi(at)
		ok = ok && err == nil && n >= 0 && n <= 0xffff && !strings.HasPrefix(at, "+")
	}
	if !ok {
		return errors.New("Invalid --signal specification")
	}
	*dst = v
	return nil
}

// beginPrefix is the part of a --begin value that Slurm's time parser
// reads before it gives up (the pos= of its message): a leading keyword
// or a leading run of digits and separators.
var beginPrefix = regexp.MustCompile(`^(?i:now|today|tomorrow|midnight|noon|elevenses|fika|teatime|[0-9:/.]+)`)

// setBegin checks --begin on the command line, as sbatch does: Slurm
// prints its time parser's line "Invalid time specification (pos=N):
// VALUE" and then "Invalid --begin specification", exit 255, and submits
// nothing (the controller used to answer with a time-limit message).
// pos is where the parser stopped; Sluice gives the length of the
// leading keyword or run of digits, which matches Slurm for a word, for
// junk after now/a keyword/a time, and for a date with a bad month.
func setBegin(v string, dst *string) error {
	if _, err := duration.ParseTime(v, time.Now(), time.Local); err != nil {
		return fmt.Errorf("Invalid time specification (pos=%d): %s\nInvalid --begin specification", beginPos(v), v)
	}
	*dst = v
	return nil
}

func beginPos(v string) int {
	m := beginPrefix.FindString(v)
	if len(v) > 5 && v[4] == '-' {
		return 5 // YYYY-MM-DD: the month is the first field checked
	}
	return len(m)
}

// dosLineBreaks is sbatch's refusal of a script written with CR LF line
// ends (Slurm 24.11, oracle): bash would read "\r" into every command.
func dosLineBreaks(env *Env, script string) int {
	if !strings.Contains(script, "\r\n") {
		return 0
	}
	fmt.Fprintln(env.Stderr, `sbatch: error: Batch script contains DOS line breaks (\r\n)`)
	fmt.Fprintln(env.Stderr, `sbatch: error: instead of expected UNIX line breaks (\n).`)
	return 1
}
