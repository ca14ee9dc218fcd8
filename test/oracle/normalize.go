package oracle

import (
	"regexp"
	"sort"
	"strings"
)

// What must differ between two clusters started minutes apart on different
// software is rewritten on both sides before comparison; nothing else is.
// Job ids are not rewritten: both clusters start at job 1 and a scenario
// that numbers its jobs differently is a real difference.
var (
	isoTime = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`)
	// ctime's layout, the time stamp of squeue -l and -i, sinfo -l:
	// "Thu Nov 26 22:40:38 2026".
	ctime = regexp.MustCompile(`\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d \d{4}\b`)
	// "alice(1001)" in scontrol show job, squeue %U...: host uids differ.
	userID   = regexp.MustCompile(`\b([a-z_][a-z0-9_-]*)\((\d+)\)`)
	allocSid = regexp.MustCompile(`(AllocNode:Sid=)\S+`)
	// scontrol show step names the srun process: its pid differs.
	srunPid = regexp.MustCompile(`(SrunHost:Pid=\S+:)[1-9]\d*`)
	// slurmrestd's slurmdb errors and warnings name the function called
	// with a pointer argument, "slurmdb_qos_remove(0x7fa2ac0046a0) failed":
	// an address of that process, never the same twice.
	cPointer = regexp.MustCompile(`\((0x[0-9a-f]+)\)`)
	// "@mask durations": [D-]HH:MM:SS and MM:SS (elapsed and remaining times).
	duration = regexp.MustCompile(`\b(\d+-)?\d{1,2}:\d\d(:\d\d)?\b`)
	number   = regexp.MustCompile(`\d+(\.\d+)?`)
)

// Normalizer holds what is specific to one side.
type Normalizer struct {
	// State is the side's state directory (the oracle's ORACLE_STATE,
	// Sluice's temporary directory): job output paths live below it.
	State string
	// Host is this machine's host name (the oracle's jobs see it too).
	Host string
}

// Apply rewrites one output of a step.
func (n Normalizer) Apply(st Step, text string) string {
	if st.JSON {
		text = jsonView(text, st.JSONPaths)
	}
	if n.State != "" {
		text = strings.ReplaceAll(text, n.State, "<STATE>")
	}
	if n.Host != "" {
		text = regexp.MustCompile(`\b`+regexp.QuoteMeta(n.Host)+`\b`).ReplaceAllString(text, "<HOST>")
	}
	// Debian names its build "slurm-wlm" in every -V/--version line;
	// Slurm itself prints "slurm 24.11.5".
	text = strings.ReplaceAll(text, "slurm-wlm 24.11", "slurm 24.11")
	text = isoTime.ReplaceAllString(text, "<TS>")
	text = ctime.ReplaceAllString(text, "<CTIME>")
	text = userID.ReplaceAllString(text, "$1(<ID>)")
	text = allocSid.ReplaceAllString(text, "$1<ALLOC>")
	text = srunPid.ReplaceAllString(text, "$1<PID>")
	text = cPointer.ReplaceAllString(text, "()")
	for _, m := range st.Masks {
		switch m {
		case "durations":
			text = duration.ReplaceAllString(text, "<DUR>")
		case "numbers":
			text = number.ReplaceAllString(text, "<N>")
		}
	}
	return text
}

// sortLines sorts the lines of text (for "@sort" steps whose order Slurm
// does not define).
func sortLines(text string) string {
	trail := strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	sort.Strings(lines)
	out := strings.Join(lines, "\n")
	if trail {
		out += "\n"
	}
	return out
}
