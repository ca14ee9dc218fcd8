package api

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// ListFilter is squeue's job selection (-j -u --me --notme -A -q -p -t -n
// -w -R -L), sent with a JobQuery so that the controller renders and sends
// only the jobs the listing prints, as slurmctld answers squeue's
// filtered requests. Every list is comma-separated, as on squeue's
// command line; lists are OR-ed, filters AND-ed.
type ListFilter struct {
	Jobs, Users, NotUser, Accounts, QOS, Partitions string
	Names, Nodes, Reservations, Licenses            string
	// States are the -t states (long or compact, any case, or ALL);
	// none means squeue's default of active jobs only.
	States string
	// Pending is --start: pending jobs only, whatever -t says.
	Pending bool
}

// IsZero reports whether f selects nothing beyond squeue's default.
func (f ListFilter) IsZero() bool { return f == ListFilter{} }

// SingleJob reports whether -j names one id (no list): squeue then tells
// an unknown id from a job the other filters leave out, so the
// controller must return that id's records whatever their state.
func (f ListFilter) SingleJob() bool { return f.Jobs != "" && !strings.Contains(f.Jobs, ",") }

// listParams are the query parameters of a ListFilter, in field order.
var listParams = []string{"f_jobs", "f_users", "f_notuser", "f_accounts", "f_qos", "f_parts", "f_names",
	"f_nodes", "f_resv", "f_lic", "f_states"}

func (f *ListFilter) fields() []*string {
	return []*string{&f.Jobs, &f.Users, &f.NotUser, &f.Accounts, &f.QOS, &f.Partitions, &f.Names,
		&f.Nodes, &f.Reservations, &f.Licenses, &f.States}
}

// Encode adds f to query parameters.
func (f ListFilter) Encode(v url.Values) {
	for i, p := range f.fields() {
		if *p != "" {
			v.Set(listParams[i], *p)
		}
	}
	if f.Pending {
		v.Set("f_pending", "1")
	}
}

// DecodeListFilter reads what Encode wrote.
func DecodeListFilter(v url.Values) ListFilter {
	var f ListFilter
	for i, p := range f.fields() {
		*p = v.Get(listParams[i])
	}
	f.Pending = v.Get("f_pending") == "1"
	return f
}

// BriefFields are the squeue -o letters (and -S keys) whose values a
// brief listing (JobQuery.Brief) carries: ids, names, user, group,
// account, QOS, partition, states and reasons, times, limits, node counts
// and lists, priority, nice, reservation, licenses. %C (CPUs), %E
// (dependency), %m (memory), %o (command), %b, %f, %Z and the rest need
// the full record.
const BriefFields = "dwzHIJXiAFKPjuUgGaqtTMlLDRrpQSVyYNBevW"

// activeStates are the states squeue shows without -t.
var activeStates = map[string]bool{"PENDING": true, "RUNNING": true, "SUSPENDED": true, "COMPLETING": true,
	"CONFIGURING": true, "REQUEUED": true, "RESIZING": true, "SIGNALING": true, "STAGE_OUT": true}

// compactStates are squeue's compact state names.
var compactStates = map[string]string{"PD": "PENDING", "R": "RUNNING", "S": "SUSPENDED", "CG": "COMPLETING",
	"CD": "COMPLETED", "CA": "CANCELLED", "F": "FAILED", "TO": "TIMEOUT", "NF": "NODE_FAIL", "PR": "PREEMPTED",
	"BF": "BOOT_FAIL", "DL": "DEADLINE", "OOM": "OUT_OF_MEMORY", "CF": "CONFIGURING", "RQ": "REQUEUED"}

// JobMatcher is a ListFilter made ready to test many jobs.
type JobMatcher struct {
	f      ListFilter
	states map[string]bool
	nodes  map[string]bool
}

// Matcher compiles f (an unreadable -w node list is an error, as squeue's).
func (f ListFilter) Matcher() (*JobMatcher, error) {
	m := &JobMatcher{f: f, states: map[string]bool{}}
	for _, s := range SplitList(f.States) {
		s = strings.ToUpper(s)
		if long, ok := compactStates[s]; ok {
			s = long
		}
		m.states[s] = true
	}
	if f.Pending {
		m.states = map[string]bool{"PENDING": true}
	}
	if f.Nodes != "" {
		names, err := hostlist.Expand(f.Nodes)
		if err != nil {
			return nil, fmt.Errorf("invalid node list %q", f.Nodes)
		}
		m.nodes = map[string]bool{}
		for _, n := range names {
			m.nodes[n] = true
		}
	}
	return m, nil
}

// Match reports whether squeue lists j.
func (m *JobMatcher) Match(j *JobInfo) bool {
	f := &m.f
	switch {
	case len(m.states) > 0 && !m.states["ALL"] && !m.states[j.State]:
		return false
	case len(m.states) == 0 && !activeStates[j.State]:
		// Without -t only active jobs are listed, with -j too: a job
		// that completed is not shown (Slurm 24.11).
		return false
	case f.Jobs != "" && !JobNamed(j, f.Jobs):
		return false
	case f.Users != "" && !InList(f.Users, j.User, strconv.FormatUint(uint64(j.UID), 10)):
		return false
	case f.NotUser != "" && j.User == f.NotUser:
		return false
	case f.Licenses != "" && !usesLicense(j.Licenses, f.Licenses):
		return false
	case f.Accounts != "" && !InList(f.Accounts, j.Account):
		return false
	case f.QOS != "" && !InList(f.QOS, j.QOS):
		return false
	case f.Partitions != "" && !InList(f.Partitions, strings.Split(j.Partition, ",")...):
		return false
	case f.Names != "" && !InList(f.Names, j.Name):
		return false
	case m.nodes != nil && !nodesIntersect(m.nodes, j.NodeList):
		return false
	case f.Reservations != "" && !InList(f.Reservations, j.Reservation): // -R/--reservation (issue 8)
		return false
	}
	return true
}

// SplitList splits a comma-separated list, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// InList reports whether the comma-separated list names one of vals.
func InList(list string, vals ...string) bool {
	for _, p := range SplitList(list) {
		for _, v := range vals {
			if p == v {
				return true
			}
		}
	}
	return false
}

// usesLicense reports whether a job's license request ("a:2,b") names one
// of the comma-separated licenses (squeue -L).
func usesLicense(have, want string) bool {
	for _, l := range SplitList(have) {
		name, _, _ := strings.Cut(l, ":")
		if InList(want, name) {
			return true
		}
	}
	return false
}

func nodesIntersect(want map[string]bool, expr string) bool {
	if expr == "" {
		return false
	}
	names, err := hostlist.Expand(expr)
	if err != nil {
		return false
	}
	for _, n := range names {
		if want[n] {
			return true
		}
	}
	return false
}

// JobNamed reports whether j is named by the -j list ("12", "12_3").
func JobNamed(j *JobInfo, list string) bool {
	for _, id := range SplitList(list) {
		base, task, hasTask := strings.Cut(id, "_")
		n, err := strconv.ParseUint(base, 10, 32)
		if err != nil {
			continue
		}
		if !hasTask && (uint64(j.JobID) == n || uint64(j.ArrayJobID) == n) {
			return true
		}
		if hasTask && uint64(j.ArrayJobID) == n {
			t, err := strconv.Atoi(task)
			if err == nil && (int(j.ArrayTaskID) == t || j.ArrayTaskID < 0 && TaskInSet(j.ArrayTasks, t)) {
				return true
			}
		}
	}
	return false
}

// TaskInSet reports whether t is in a printed task set "1-5,7%2".
func TaskInSet(set string, t int) bool {
	set, _, _ = strings.Cut(set, "%")
	for _, r := range strings.Split(set, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		if t >= a && t <= b {
			return true
		}
	}
	return false
}
