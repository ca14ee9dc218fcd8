package cli

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/duration"
)

// squeue -s/--steps[=LIST]: running steps instead of jobs, with squeue's
// step layout and step format letters (squeue.1 "-s").
const squeueStepsDefault = "%.15i %.8j %.9P %.8u %.9M %N"

// squeueStepHeaders are the step format letters squeue knows.
var squeueStepHeaders = map[byte]string{'i': "STEPID", 'j': "NAME", 'P': "PARTITION", 'u': "USER", 'M': "TIME",
	'l': "TIME_LIMIT", 'N': "NODELIST", 'A': "TASKS", 'b': "TRES_PER_JOB", 'U': "UID", 'S': "START_TIME"}

// squeueStepFields are the -O names valid for steps, and their letters.
var squeueStepFields = map[string]byte{"stepid": 'i', "stepname": 'j', "partition": 'P', "username": 'u',
	"timeused": 'M', "timelimit": 'l', "numtasks": 'A', "userid": 'U', "starttime": 'S', "stepstate": 'T'}

// squeueStepsOnce lists the running steps once.
func squeueStepsOnce(ctx context.Context, env *Env, cl *api.Client, o *squeueOpts) int {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	want, err := parseStepList(o.steps)
	if err != nil {
		return Errorf(env, "squeue", "%v", err)
	}
	res, err := cl.Steps(ctx)
	if err != nil {
		return clientError(env, "squeue", err)
	}
	out, bad := RenderSqueueSteps(res, o, want)
	fmt.Fprint(env.Stdout, out)
	for _, f := range bad {
		Errorf(env, "squeue", "Invalid job step format specification: %s", f)
	}
	return 0
}

// parseStepList reads -s's JOB.STEP list ("" or "*": every step).
func parseStepList(s string) (map[string]bool, error) {
	if s == "" || s == "*" {
		return nil, nil
	}
	out := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		job, step, ok := strings.Cut(item, ".")
		if !ok || job == "" || step == "" {
			return nil, fmt.Errorf("Invalid job_step id: %s.??", item)
		}
		out[job+"."+step] = true
	}
	return out, nil
}

// RenderSqueueSteps prints steps as squeue -s does; bad are the format
// letters or -O names it does not know for steps.
func RenderSqueueSteps(res api.StepsResponse, o *squeueOpts, want map[string]bool) (string, []string) {
	var steps []api.StepInfo
	users, parts := splitSet(o.users), splitSet(o.parts)
	for _, s := range res.Steps {
		if want != nil && !want[s.JobIDStr+"."+s.Step] {
			continue
		}
		if (users != nil && !users[s.User]) || (parts != nil && !parts[s.Partition]) {
			continue
		}
		steps = append(steps, s)
	}
	sortSteps(steps, o.sortKeys)
	items, bad := stepItems(o)
	var b strings.Builder
	if !o.noHeader {
		b.WriteString(renderLine(items, func(c byte) string { return squeueStepHeaders[c] }) + "\n")
	}
	for _, s := range steps {
		b.WriteString(renderLine(items, func(c byte) string { return stepField(s, c, res.Now) }) + "\n")
	}
	return b.String(), bad
}

// stepItems is the layout: -O names (20 wide), -o letters or the default.
func stepItems(o *squeueOpts) ([]fmtItem, []string) {
	var bad []string
	if o.formatLong != "" {
		var items []fmtItem
		for _, name := range strings.Split(o.formatLong, ",") {
			c, ok := squeueStepFields[strings.ToLower(name)]
			if !ok {
				bad = append(bad, name)
				continue
			}
			items = append(items, fmtItem{field: c, width: 20}, fmtItem{lit: ""})
		}
		return items, bad
	}
	format := squeueStepsDefault
	if o.format != "" {
		format = o.format
	}
	items, err := parseFormat(format)
	if err != nil {
		return nil, []string{format}
	}
	for i, it := range items {
		if it.field != 0 && squeueStepHeaders[it.field] == "" && it.field != 'T' {
			// Printed as written, as squeue does, and reported.
			bad = append(bad, string(it.field))
			items[i] = fmtItem{lit: "%" + string(it.field)}
		}
	}
	return items, bad
}

func stepField(s api.StepInfo, c byte, now time.Time) string {
	switch c {
	case 'i':
		return s.JobIDStr + "." + s.Step
	case 'j':
		return s.Name
	case 'P':
		return s.Partition
	case 'u':
		return s.User
	case 'U':
		return strconv.FormatUint(uint64(s.UID), 10)
	case 'M':
		return duration.FormatElapsed(max(now.Sub(s.Start), 0).Truncate(time.Second))
	case 'l':
		if s.TimeLimitSec == api.TimeInfinite || s.TimeLimitSec <= 0 {
			return "UNLIMITED"
		}
		return duration.FormatElapsed(time.Duration(s.TimeLimitSec) * time.Second)
	case 'N':
		return s.NodeList
	case 'A':
		return strconv.Itoa(s.NTasks)
	case 'b':
		return "(null)"
	case 'S':
		return s.Start.Local().Format("2006-01-02T15:04:05")
	case 'T':
		return s.State
	}
	return ""
}

// sortSteps orders steps by partition then step id (squeue's "P,i"), or
// by -S's letters; a batch step sorts after the numbered ones, as
// Slurm's step id for it is near the top of the range.
func sortSteps(steps []api.StepInfo, keys string) {
	if keys == "" {
		keys = "P,i"
	}
	num := func(s api.StepInfo) int64 {
		if n, err := strconv.ParseInt(s.Step, 10, 64); err == nil {
			return n
		}
		return 1<<32 - 5 // SLURM_BATCH_SCRIPT
	}
	slices.SortStableFunc(steps, func(a, b api.StepInfo) int {
		for _, k := range strings.Split(keys, ",") {
			desc := strings.HasPrefix(k, "-")
			k = strings.TrimLeft(k, "+-")
			c := 0
			switch k {
			case "P":
				c = strings.Compare(a.Partition, b.Partition)
			case "i":
				c = cmpNum(int64(a.JobID), int64(b.JobID))
				if c == 0 {
					c = cmpNum(num(a), num(b))
				}
			case "u":
				c = strings.Compare(a.User, b.User)
			case "M", "S":
				c = -a.Start.Compare(b.Start)
			}
			if desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

// splitSet is a comma-separated list as a set (nil when empty).
func splitSet(s string) map[string]bool {
	if s == "" {
		return nil
	}
	out := map[string]bool{}
	for _, v := range strings.Split(s, ",") {
		out[v] = true
	}
	return out
}
