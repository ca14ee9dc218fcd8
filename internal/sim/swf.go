package sim

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// SWF field positions (0-based) of the Standard Workload Format's 18
// fields, as the Parallel Workloads Archive defines them.
const (
	swfJob = iota
	swfSubmit
	swfWait
	swfRun
	swfAllocProcs
	swfAvgCPU
	swfUsedMem
	swfReqProcs
	swfReqTime
	swfReqMem
	swfStatus
	swfUser
	swfGroup
	swfExe
	swfQueue
	swfPartition
	swfPrecedingJob
	swfThinkTime
	swfFields
)

// UserEntry maps one SWF user id to a user name and an account.
type UserEntry struct {
	User    string
	Account string
}

// ReadSWF parses a Standard Workload Format trace: header comments
// (MaxNodes, MaxProcs, UnixStartTime, TimeZoneString, Queue lines) and one
// job per line of 18 numbers, -1 meaning unknown. Jobs that never ran (run
// time < 0, e.g. cancelled while waiting) and jobs without a processor
// count are skipped and counted; a job without a requested time gets its
// run time as its limit. Users become "user<N>" in account "group<N>"
// unless users maps them.
func ReadSWF(r io.Reader, users map[int]UserEntry) (*Trace, error) {
	t := newTrace("swf", r)
	t.Queues = map[int]string{}
	specs := swfSpecs{users: users, m: map[swfSpecKey]*api.JobSpec{}}
	err := lines(r, func(n int, line string) {
		s := strings.TrimSpace(line)
		switch {
		case s == "":
			return
		case s[0] == ';':
			t.header(s[1:])
			return
		}
		t.Records++
		if j, cause, err := swfJobLine(s, &specs); err != nil {
			t.bad(n, "%v", err)
		} else if cause != "" {
			t.skip(cause)
		} else {
			j.Line = n
			t.add(&j)
		}
	})
	if err != nil {
		return t, err
	}
	if len(t.Queues) == 0 {
		t.Queues = nil
	}
	return t.finish()
}

// header reads one SWF header comment ("MaxProcs: 128").
func (t *Trace) header(s string) {
	key, val, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return
	}
	val = strings.TrimSpace(val)
	var num int64
	if f := strings.Fields(val); len(f) > 0 {
		num, _ = strconv.ParseInt(f[0], 10, 64)
	}
	switch strings.TrimSpace(key) {
	case "MaxNodes":
		t.MaxNodes = int(num)
	case "MaxProcs":
		t.MaxProcs = int(num)
	case "UnixStartTime":
		t.StartUnix = num
	case "TimeZoneString":
		t.TimeZone = val
	case "Queue":
		f := strings.Fields(val)
		if len(f) >= 2 {
			if q, err := strconv.Atoi(f[0]); err == nil {
				t.Queues[q] = f[1]
			}
		}
	}
}

// swfJobLine parses one job line; cause is set for a valid line that is
// left out of the simulation.
func swfJobLine(s string, specs *swfSpecs) (Job, string, error) {
	var v [swfFields]int64
	if err := swfNumbers(s, &v); err != nil {
		return Job{}, "", err
	}
	if v[swfSubmit] < 0 {
		return Job{}, "", fmt.Errorf("field 2: negative submit time %d", v[swfSubmit])
	}
	if v[swfRun] < 0 {
		return Job{}, "never ran", nil
	}
	procs := v[swfReqProcs]
	if procs <= 0 {
		procs = v[swfAllocProcs]
	}
	if procs <= 0 {
		return Job{}, "no processor count", nil
	}
	limit := v[swfReqTime]
	if limit <= 0 {
		limit = max(v[swfRun], 1)
	}
	j := Job{ID: v[swfJob], Submit: v[swfSubmit], Runtime: v[swfRun], RecordedWait: v[swfWait], Status: statusName(v[swfStatus])}
	j.JobSpec = specs.get(swfSpecKey{procs, limit, v[swfUser], v[swfGroup]})
	return j, "", nil
}

// swfSpecs interns the specs of an SWF trace's jobs: an SWF job asks for
// tasks and a time limit as a user of a group, so a whole trace has a few
// thousand distinct requests (8,550 of SDSC-SP2's 59,715 jobs), and the
// jobs share them read-only instead of each holding a spec of almost a
// kilobyte (the trace was two thirds of a replay's memory, every page of
// which costs a fault).
type swfSpecs struct {
	users map[int]UserEntry
	m     map[swfSpecKey]*api.JobSpec
}

type swfSpecKey struct{ procs, limit, uid, gid int64 }

func (s *swfSpecs) get(k swfSpecKey) *api.JobSpec {
	if spec, ok := s.m[k]; ok {
		return spec
	}
	spec := &api.JobSpec{NTasks: int(k.procs), TimeLimitSec: k.limit}
	spec.User, spec.Account = userAccount(k.uid, k.gid, s.users)
	s.m[k] = spec
	return spec
}

func statusName(s int64) string {
	switch s {
	case 1:
		return "COMPLETED"
	case 0:
		return "FAILED"
	case 5:
		return "CANCELLED"
	}
	return ""
}

func userAccount(uid, gid int64, users map[int]UserEntry) (string, string) {
	if e, ok := users[int(uid)]; ok {
		return e.User, e.Account
	}
	user := "user" + strconv.FormatInt(max(uid, 0), 10)
	if uid < 0 {
		user = "unknown"
	}
	account := "group" + strconv.FormatInt(max(gid, 0), 10)
	if gid < 0 {
		account = "nogroup"
	}
	return user, account
}

// ReadUserMap reads an SWF user mapping file: one "uid user account" per
// line, '#' comments.
func ReadUserMap(r io.Reader) (map[int]UserEntry, error) {
	m := map[int]UserEntry{}
	var errs []string
	err := lines(r, func(n int, line string) {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			return
		}
		uid, err := strconv.Atoi(f[0])
		if len(f) != 3 || err != nil {
			errs = append(errs, fmt.Sprintf("line %d: want \"uid user account\"", n))
			return
		}
		m[uid] = UserEntry{User: f[1], Account: f[2]}
	})
	if err == nil && len(errs) > 0 {
		err = fmt.Errorf("user map: %s", strings.Join(errs, "; "))
	}
	return m, err
}

// swfNumbers parses the 18 whitespace-separated numbers of a job line
// without allocating (a fractional part, which some archives write for
// average CPU time, is truncated).
func swfNumbers(s string, v *[swfFields]int64) error {
	n, i := 0, 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r') {
			i++
		}
		if i == len(s) {
			break
		}
		start := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' {
			i++
		}
		if n == swfFields {
			return fmt.Errorf("want %d fields, got more", swfFields)
		}
		x, ok := swfNumber(s[start:i])
		if !ok {
			return fmt.Errorf("field %d: not a number: %q", n+1, s[start:i])
		}
		v[n] = x
		n++
	}
	if n != swfFields {
		return fmt.Errorf("want %d fields, got %d", swfFields, n)
	}
	return nil
}

func swfNumber(f string) (int64, bool) {
	neg := false
	if f != "" && (f[0] == '-' || f[0] == '+') {
		neg, f = f[0] == '-', f[1:]
	}
	if f == "" {
		return 0, false
	}
	var x int64
	for k := 0; k < len(f); k++ {
		c := f[k]
		if c == '.' {
			for _, d := range f[k+1:] {
				if d < '0' || d > '9' {
					return 0, false
				}
			}
			break
		}
		if c < '0' || c > '9' || x > 1e14 {
			return 0, false
		}
		x = x*10 + int64(c-'0')
	}
	if neg {
		x = -x
	}
	return x, true
}
