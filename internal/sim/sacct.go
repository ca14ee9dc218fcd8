package sim

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// sacctTimeLayout is sacct's default time format (SLURM_TIME_FORMAT unset).
const sacctTimeLayout = "2006-01-02T15:04:05"

// ReadSacct parses `sacct -P` (or `-p`) output with a header line, e.g.
// from `sacct -a -X -P -S ... -E ... -o
// JobID,User,Account,QOS,Partition,Submit,Start,End,Timelimit,ReqTRES,AllocTRES,State`.
// Required columns: JobID, Submit and Start, plus End or Elapsed. Job steps
// (JobID with a dot) are ignored; jobs that never started are skipped and
// counted. Times are read as UTC; the trace starts at the first submit.
func ReadSacct(r io.Reader) (*Trace, error) {
	t := newTrace("sacct", r)
	var cols map[string]int
	var abs []int64
	err := lines(r, func(n int, line string) {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			return
		}
		f := strings.Split(strings.TrimSuffix(line, "|"), "|")
		if cols == nil {
			cols = sacctHeader(f)
			if missing := sacctMissing(cols); missing != "" {
				t.bad(n, "header lacks column %s", missing)
				cols = map[string]int{}
			}
			return
		}
		if len(cols) == 0 {
			return
		}
		get := func(name string) string {
			if i, ok := cols[name]; ok && i < len(f) {
				return strings.TrimSpace(f[i])
			}
			return ""
		}
		if strings.Contains(get("jobid"), ".") {
			return
		}
		t.Records++
		j, submit, cause, err := sacctJob(get, t.Records)
		switch {
		case err != nil:
			t.bad(n, "%v", err)
		case cause != "":
			t.skip(cause)
		default:
			j.Line = n
			t.add(&j)
			abs = append(abs, submit)
		}
	})
	if err != nil {
		return t, err
	}
	if cols == nil {
		t.bad(1, "no header line")
	}
	t.flatten()
	t.rebase(abs)
	return t.finish()
}

// rebase makes submit times relative to the earliest one.
func (t *Trace) rebase(abs []int64) {
	if len(abs) == 0 {
		return
	}
	first := abs[0]
	for _, a := range abs {
		first = min(first, a)
	}
	t.StartUnix = first
	for i := range t.Jobs {
		t.Jobs[i].Submit = abs[i] - first
	}
}

func sacctHeader(f []string) map[string]int {
	m := map[string]int{}
	for i, name := range f {
		m[strings.ToLower(strings.TrimSpace(name))] = i
	}
	return m
}

func sacctMissing(cols map[string]int) string {
	for _, c := range []string{"jobid", "submit", "start"} {
		if _, ok := cols[c]; !ok {
			return c
		}
	}
	_, end := cols["end"]
	_, el := cols["elapsed"]
	if !end && !el {
		return "End or Elapsed"
	}
	return ""
}

func sacctJob(get func(string) string, seq int) (Job, int64, string, error) {
	submit, err := sacctTime(get("submit"))
	if err != nil {
		return Job{}, 0, "", fmt.Errorf("Submit: %v", err)
	}
	start, err := sacctTime(get("start"))
	if err != nil || start == 0 {
		return Job{}, 0, "never ran", nil
	}
	run, err := sacctRuntime(get, start)
	if err != nil {
		return Job{}, 0, "", err
	}
	j := Job{ID: sacctID(get("jobid"), seq), Runtime: run, RecordedWait: max(start-submit, 0), JobSpec: &api.JobSpec{}}
	j.Status, _, _ = strings.Cut(get("state"), " ")
	j.Name, j.User, j.Account, j.QOS = get("jobname"), get("user"), get("account"), get("qos")
	j.Partitions = splitComma(get("partition"))
	if tl := get("timelimit"); tl != "" && tl != "Partition_Limit" {
		if j.TimeLimitSec, err = parseLimit(tl); err != nil {
			return Job{}, 0, "", fmt.Errorf("Timelimit: %v", err)
		}
	}
	tres := get("reqtres")
	if tres == "" {
		tres = get("alloctres")
	}
	if err := applyTRES(&j, tres); err != nil {
		return Job{}, 0, "", err
	}
	if j.NTasks == 0 {
		j.NTasks, _ = strconv.Atoi(get("ncpus"))
		j.NTasks = max(j.NTasks, 1)
	}
	return j, submit, "", nil
}

func sacctRuntime(get func(string) string, start int64) (int64, error) {
	if e := get("elapsed"); e != "" {
		if s, err := parseLimit(e); err == nil && s >= 0 {
			return s, nil
		}
	}
	end, err := sacctTime(get("end"))
	if err != nil || end == 0 {
		return 0, fmt.Errorf("End: %q is not a time", get("end"))
	}
	if end < start {
		return 0, fmt.Errorf("End before Start")
	}
	return end - start, nil
}

func sacctID(s string, seq int) int64 {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
		return n
	}
	if base, task, ok := strings.Cut(s, "_"); ok {
		b, err1 := strconv.ParseInt(base, 10, 32)
		k, err2 := strconv.ParseInt(task, 10, 32)
		if err1 == nil && err2 == nil {
			return b<<20 | k
		}
	}
	return 1<<40 + int64(seq)
}

// sacctTime parses sacct's time; "Unknown" and "None" give 0.
func sacctTime(s string) (int64, error) {
	switch s {
	case "Unknown", "None", "":
		return 0, nil
	}
	tm, err := time.ParseInLocation(sacctTimeLayout, s, time.UTC)
	if err != nil {
		return 0, fmt.Errorf("%q is not a time", s)
	}
	return tm.Unix(), nil
}

// parseLimit parses a Slurm time limit or elapsed time ("1-00:00:00",
// "30", "UNLIMITED") into seconds.
func parseLimit(s string) (int64, error) {
	s = strings.TrimSpace(s)
	switch strings.ToUpper(s) {
	case "UNLIMITED", "INFINITE":
		return api.TimeInfinite, nil
	}
	days, rest, hasDays := int64(0), s, false
	if d, r, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("invalid time %q", s)
		}
		days, rest, hasDays = n, r, true
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("invalid time %q", s)
	}
	var nums []int64
	for _, p := range parts {
		n, err := strconv.ParseFloat(p, 64)
		if err != nil || n < 0 || n > 1e12 {
			return 0, fmt.Errorf("invalid time %q", s)
		}
		nums = append(nums, int64(n))
	}
	var h, m, sec int64
	switch {
	case hasDays || len(nums) == 3:
		h = nums[0]
		if len(nums) > 1 {
			m = nums[1]
		}
		if len(nums) > 2 {
			sec = nums[2]
		}
	case len(nums) == 2:
		m, sec = nums[0], nums[1]
	default:
		m = nums[0]
	}
	return days*86400 + h*3600 + m*60 + sec, nil
}

// applyTRES fills the request from a TRES string ("cpu=4,mem=16G,node=1,
// gres/gpu=2"): cpu → tasks, node → nodes, mem (job total) → memory per
// node, gres/gpu → --gpus.
func applyTRES(j *Job, s string) error {
	var memMB int64
	for _, kv := range splitComma(s) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("TRES %q: want name=value", kv)
		}
		switch {
		case k == "cpu":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("TRES cpu=%q", v)
			}
			j.NTasks = n
		case k == "node":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("TRES node=%q", v)
			}
			j.MinNodes, j.MaxNodes = n, n
		case k == "mem":
			mb, err := memMBOf(v)
			if err != nil {
				return fmt.Errorf("TRES mem=%q", v)
			}
			memMB = mb
		case k == "gres/gpu":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("TRES gres/gpu=%q", v)
			}
			j.GPUs = n
			if n > 0 {
				j.JobSpec.GPUs = strconv.FormatInt(n, 10)
			}
		}
	}
	if memMB > 0 {
		nodes := int64(max(j.MinNodes, 1))
		j.MemPerNodeMB, j.MemPerNodeSet = (memMB+nodes-1)/nodes, true
	}
	return nil
}

// memMBOf parses a memory amount with an optional K/M/G/T suffix (M
// default) into MB.
func memMBOf(v string) (int64, error) {
	if v == "" {
		return 0, fmt.Errorf("empty")
	}
	mult := 1.0
	switch v[len(v)-1] {
	case 'K', 'k':
		mult, v = 1.0/1024, v[:len(v)-1]
	case 'M', 'm':
		v = v[:len(v)-1]
	case 'G', 'g':
		mult, v = 1024, v[:len(v)-1]
	case 'T', 't':
		mult, v = 1024*1024, v[:len(v)-1]
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 || n > 1e15 {
		return 0, fmt.Errorf("invalid memory %q", v)
	}
	mb := n * mult
	if r := int64(mb); float64(r) < mb {
		return r + 1, nil
	}
	return int64(mb), nil
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
