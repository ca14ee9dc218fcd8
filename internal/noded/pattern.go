package noded

import (
	"strconv"
	"strings"
)

// noArrayTask is what Slurm prints for %a in a job that is not an array
// task (NO_VAL - 1, 4294967294).
const noArrayTask = "4294967294"

// PatternFields are the values substituted into -o/-e filename patterns.
type PatternFields struct {
	JobID       uint32
	ArrayJobID  uint32 // 0 for a job that is not an array task
	ArrayTaskID uint32
	Name        string
	User        string
	Node        string // short host name (%N)
	NodeIndex   int    // %n
	TaskID      int    // %t
	Step        string // %s; "batch" for a batch script
}

// ExpandPattern expands sbatch's filename pattern symbols (%j %J %A %a %x
// %u %N %n %t %s %%), with an optional zero-padding width between % and the
// letter for numeric symbols (job%4j.out -> job0128.out). A pattern
// containing a backslash is not expanded; the backslashes are dropped, as
// in Slurm. Unknown symbols are kept as written.
func ExpandPattern(pattern string, f PatternFields) string {
	if strings.Contains(pattern, `\`) {
		return strings.ReplaceAll(pattern, `\`, "")
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(pattern) && pattern[j] >= '0' && pattern[j] <= '9' && j-i <= 9 {
			j++
		}
		if j >= len(pattern) {
			b.WriteString(pattern[i:])
			break
		}
		width, _ := strconv.Atoi(pattern[i+1 : j])
		if s, ok := expandSymbol(pattern[j], width, f); ok {
			b.WriteString(s)
		} else {
			b.WriteString(pattern[i : j+1])
		}
		i = j
	}
	return b.String()
}

func expandSymbol(c byte, width int, f PatternFields) (string, bool) {
	num := func(v uint64) string { return pad(strconv.FormatUint(v, 10), width) }
	step := f.Step
	if step == "" {
		step = "batch"
	}
	switch c {
	case '%':
		return "%", true
	case 'j':
		return num(uint64(f.JobID)), true
	case 'J':
		return num(uint64(f.JobID)) + "." + step, true
	case 'A':
		if f.ArrayJobID == 0 {
			return num(uint64(f.JobID)), true
		}
		return num(uint64(f.ArrayJobID)), true
	case 'a':
		if f.ArrayJobID == 0 {
			return pad(noArrayTask, width), true
		}
		return num(uint64(f.ArrayTaskID)), true
	case 'x':
		return f.Name, true
	case 'u':
		return f.User, true
	case 'N':
		return f.Node, true
	case 'n':
		return num(uint64(f.NodeIndex)), true
	case 't':
		return num(uint64(f.TaskID)), true
	case 's':
		if _, err := strconv.Atoi(step); err == nil {
			return pad(step, width), true
		}
		return step, true
	}
	return "", false
}

// maxPadWidth caps the zero-padding width of a filename pattern: Slurm pads
// to at most 10 characters whatever number is given (%200A pads to 10).
const maxPadWidth = 10

func pad(s string, width int) string {
	width = min(width, maxPadWidth)
	if len(s) >= width {
		return s
	}
	return strings.Repeat("0", width-len(s)) + s
}
