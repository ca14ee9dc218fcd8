package sched

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseArray parses sbatch --array: comma-separated ids and ranges
// (`0-99`, `1,3,5`, `0-10:2`), optionally followed by `%N` (at most N
// tasks running at once). Every task id must be below maxArraySize
// (MaxArraySize). It returns the set of task ids, their count and the
// throttle (0 = none).
func ParseArray(spec string, maxArraySize int32) (NodeSet, int, int32, error) {
	bad := func() (NodeSet, int, int32, error) {
		return nil, 0, 0, fmt.Errorf("array %q: %w", spec, ErrInvalidArray)
	}
	body, thr, hasThr := strings.Cut(strings.TrimSpace(spec), "%")
	var throttle int32
	if hasThr {
		n, err := strconv.ParseInt(thr, 10, 32)
		if err != nil || n < 0 {
			return bad()
		}
		throttle = int32(n)
	}
	if body == "" || maxArraySize <= 0 {
		return bad()
	}
	items := strings.Split(body, ",")
	top := int64(-1)
	for _, item := range items {
		_, hi, _, ok := parseArrayRange(item)
		if !ok || hi >= int64(maxArraySize) {
			return bad()
		}
		top = max(top, hi)
	}
	// The set is sized by the largest id, not MaxArraySize (which may be
	// millions), so a small array stays small.
	tasks := NewNodeSet(int(top) + 1)
	for _, item := range items {
		lo, hi, step, _ := parseArrayRange(item)
		for t := lo; t <= hi; t += step {
			tasks.Set(int(t))
		}
	}
	n := tasks.Count()
	if n == 0 {
		return bad()
	}
	return tasks, n, throttle, nil
}

func parseArrayRange(item string) (lo, hi, step int64, ok bool) {
	item = strings.TrimSpace(item)
	rng, stepS, hasStep := strings.Cut(item, ":")
	step = 1
	if hasStep {
		s, err := strconv.ParseInt(stepS, 10, 32)
		if err != nil || s <= 0 {
			return 0, 0, 0, false
		}
		step = s
	}
	loS, hiS, isRange := strings.Cut(rng, "-")
	var err error
	if lo, err = strconv.ParseInt(loS, 10, 32); err != nil || lo < 0 {
		return 0, 0, 0, false
	}
	hi = lo
	if isRange {
		if hi, err = strconv.ParseInt(hiS, 10, 32); err != nil || hi < lo {
			return 0, 0, 0, false
		}
	} else if hasStep {
		return 0, 0, 0, false
	}
	return lo, hi, step, true
}

// FormatArrayTasks prints a task set the way squeue does inside the
// brackets of `123_[1-5,7%2]`: ranges of consecutive ids, then `%N`.
func FormatArrayTasks(tasks NodeSet, throttle int32) string {
	var b strings.Builder
	start, prev := -2, -2
	flush := func() {
		if start < 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(start))
		if prev > start {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(prev))
		}
	}
	tasks.ForEach(func(t int) bool {
		if t != prev+1 {
			flush()
			start = t
		}
		prev = t
		return true
	})
	flush()
	if throttle > 0 {
		b.WriteString("%" + strconv.Itoa(int(throttle)))
	}
	return b.String()
}

// JobIDString returns the job id as Slurm prints it (squeue %i): `123`,
// `123_4` for an array task, `123_[4-99%10]` for a pending array record.
func (j *Job) JobIDString() string {
	if j.Array == nil {
		return strconv.FormatUint(uint64(j.ID), 10)
	}
	base := strconv.FormatUint(uint64(j.Array.JobID), 10)
	if j.Array.TaskID >= 0 {
		return base + "_" + strconv.Itoa(int(j.Array.TaskID))
	}
	return base + "_[" + FormatArrayTasks(j.Array.Tasks, j.Array.Throttle) + "]"
}

// Tasks returns how many jobs the record stands for: its pending array
// tasks, else 1.
func (j *Job) Tasks() int {
	if j.Array != nil && j.Array.TaskID < 0 {
		return j.Array.Tasks.Count()
	}
	return 1
}
