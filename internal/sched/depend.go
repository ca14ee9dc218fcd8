package sched

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// depResult is the state of a dependency (list).
type depResult uint8

const (
	depOK    depResult = iota // satisfied: the job may run
	depWait                   // not yet: reason Dependency
	depNever                  // can never be satisfied: DependencyNeverSatisfied
)

// ParseDependency parses sbatch --dependency: a list of `type:id[:id...]`
// (`after:id[+min]`, `afterany`, `afterok`, `afternotok`, `aftercorr`,
// `afterburstbuffer`) and `singleton`, joined by ',' (all must hold) or
// '?' (any one suffices; Slurm does not allow mixing both). Job ids may be
// `id_task` for one array task.
func ParseDependency(s string) ([]Dependency, bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false, nil
	}
	orList := strings.Contains(s, "?")
	if orList && strings.Contains(s, ",") {
		return nil, false, fmt.Errorf("dependency %q: mixes ',' and '?': %w", s, ErrDependency)
	}
	sep := ","
	if orList {
		sep = "?"
	}
	var out []Dependency
	for _, item := range strings.Split(s, sep) {
		deps, err := parseDepItem(item)
		if err != nil {
			return nil, false, fmt.Errorf("dependency %q: %w", s, err)
		}
		out = append(out, deps...)
	}
	return out, orList, nil
}

var depKinds = map[string]DepKind{"after": DepAfter, "afterany": DepAfterAny, "afterok": DepAfterOK,
	"afternotok": DepAfterNotOK, "aftercorr": DepAfterCorr, "afterburstbuffer": DepAfterBurstBuffer}

func parseDepItem(item string) ([]Dependency, error) {
	item = strings.TrimSpace(item)
	if item == "singleton" {
		return []Dependency{{Kind: DepSingleton, TaskID: -1}}, nil
	}
	kindS, ids, ok := strings.Cut(item, ":")
	kind, known := depKinds[kindS]
	if !ok || !known || ids == "" {
		return nil, ErrDependency
	}
	var out []Dependency
	for _, id := range strings.Split(ids, ":") {
		d := Dependency{Kind: kind, TaskID: -1}
		if idS, delay, has := strings.Cut(id, "+"); has {
			if kind != DepAfter {
				return nil, ErrDependency
			}
			m, err := strconv.ParseUint(delay, 10, 32)
			if err != nil {
				return nil, ErrDependency
			}
			d.Delay = time.Duration(m) * time.Minute
			id = idS
		}
		if base, task, has := strings.Cut(id, "_"); has {
			t, err := strconv.ParseInt(task, 10, 32)
			if err != nil || t < 0 {
				return nil, ErrDependency
			}
			d.TaskID = int32(t)
			id = base
		}
		n, err := strconv.ParseUint(id, 10, 32)
		if err != nil || n == 0 {
			return nil, ErrDependency
		}
		d.JobID = JobID(n)
		out = append(out, d)
	}
	return out, nil
}

// FormatDependency prints a dependency list as squeue %E does.
func FormatDependency(deps []Dependency, orList bool) string {
	names := map[DepKind]string{}
	for k, v := range depKinds {
		names[v] = k
	}
	parts := make([]string, len(deps))
	for i, d := range deps {
		if d.Kind == DepSingleton {
			parts[i] = "singleton"
			continue
		}
		id := strconv.FormatUint(uint64(d.JobID), 10)
		if d.TaskID >= 0 {
			id += "_" + strconv.Itoa(int(d.TaskID))
		}
		if d.Delay > 0 {
			id += "+" + strconv.Itoa(int(d.Delay/time.Minute))
		}
		parts[i] = names[d.Kind] + ":" + id
	}
	if orList {
		return strings.Join(parts, "?")
	}
	return strings.Join(parts, ",")
}

// indexArrays lists array members by array job id, for dependencies on
// whole arrays, and counts each array's running tasks (for its throttle),
// in one walk of the jobs. The maps stay nil when there are no arrays.
func (c *Cycle) indexArrays() {
	if c.State.arrayJobs == 0 {
		return
	}
	for _, j := range c.State.jobList {
		a := j.Array
		if a == nil {
			continue
		}
		if c.arrays == nil {
			c.arrays, c.arrayRun = map[JobID][]*Job{}, map[JobID]int32{}
		}
		c.arrays[a.JobID] = append(c.arrays[a.JobID], j)
		if a.TaskID >= 0 && isActive(j) {
			c.arrayRun[a.JobID]++
		}
	}
}

// countArrayTask counts a task of j's array started in this cycle.
func (c *Cycle) countArrayTask(j *Job) {
	if c.arrayRun == nil {
		c.arrayRun = map[JobID]int32{}
	}
	c.arrayRun[j.Array.JobID]++
}

// depStatus evaluates j's dependency list at c.Now.
func (c *Cycle) depStatus(j *Job) depResult {
	return evalDeps(j, c.Now, func(id JobID) []*Job { return c.depTargets(id) }, c.singletonBusy)
}

// singletonBusy is State.singletonBusy with the running (user, name)
// pairs indexed once per cycle, so many singleton jobs cost one pass.
func (c *Cycle) singletonBusy(j *Job) bool {
	if c.activeNames == nil {
		c.activeNames = map[string]int{}
		for _, o := range c.State.jobList {
			if isActive(o) {
				c.activeNames[singletonKey(o)]++
			}
		}
	}
	n := c.activeNames[singletonKey(j)]
	if isActive(j) {
		n--
	}
	return n > 0
}

func (c *Cycle) depTargets(id JobID) []*Job {
	if members, ok := c.arrays[id]; ok {
		return members
	}
	if t := c.State.jobs[id]; t != nil {
		return []*Job{t}
	}
	return nil
}

// evalDeps combines the dependencies: with ',' every one must be
// satisfied (never if any is never), with '?' any one suffices (never if
// all are never).
func evalDeps(j *Job, now time.Time, targets func(JobID) []*Job, singletonBusy func(*Job) bool) depResult {
	r := &j.Req
	all := depOK
	anyOK, allNever := false, true
	for _, d := range r.Deps {
		var res depResult
		if d.Kind == DepSingleton {
			res = depOK
			if singletonBusy(j) {
				res = depWait
			}
		} else {
			res = evalOne(j, d, now, targets(d.JobID))
		}
		switch res {
		case depOK:
			anyOK = true
			allNever = false
		case depWait:
			allNever = false
			if all == depOK {
				all = depWait
			}
		case depNever:
			all = depNever
		}
	}
	if r.DepsAny {
		switch {
		case anyOK:
			return depOK
		case allNever:
			return depNever
		}
		return depWait
	}
	return all
}

// evalOne evaluates one dependency against its target jobs (one job, or
// every member of an array; no target = purged = satisfied, as Slurm
// treats a dependency on a job it no longer knows).
func evalOne(j *Job, d Dependency, now time.Time, targets []*Job) depResult {
	res := depOK
	for _, t := range targets {
		if d.TaskID >= 0 && !hasTask(t, d.TaskID) {
			continue
		}
		if d.Kind == DepAfterCorr && !corresponds(j, t) {
			continue
		}
		r := evalTarget(d, now, t)
		if r == depNever {
			return depNever
		}
		if r == depWait {
			res = depWait
		}
	}
	return res
}

func hasTask(t *Job, task int32) bool {
	if t.Array == nil {
		return false
	}
	if t.Array.TaskID >= 0 {
		return t.Array.TaskID == task
	}
	return t.Array.Tasks.Has(int(task))
}

// corresponds reports whether target t holds the task of the same index
// as j (aftercorr); a pending record of j is judged by its first task.
func corresponds(j, t *Job) bool {
	if j.Array == nil {
		return true
	}
	task := j.Array.TaskID
	if task < 0 {
		task = -1
		j.Array.Tasks.ForEach(func(i int) bool { task = int32(i); return false })
	}
	return hasTask(t, task)
}

func evalTarget(d Dependency, now time.Time, t *Job) depResult {
	st := t.State.Base()
	finished := t.State.Finished() && t.State&JobFlagCompleting == 0 || t.State.Finished()
	switch d.Kind {
	case DepAfter:
		if st == JobPending {
			return depWait
		}
		if st == JobCancelled && t.StartTime.IsZero() {
			return depOK
		}
		if now.Before(t.StartTime.Add(d.Delay)) {
			return depWait
		}
		return depOK
	case DepAfterAny, DepAfterBurstBuffer:
		if finished {
			return depOK
		}
	case DepAfterOK, DepAfterCorr:
		if finished {
			if st == JobCompleted && t.ExitCode == 0 {
				return depOK
			}
			return depNever
		}
	case DepAfterNotOK:
		if finished {
			if st == JobCompleted && t.ExitCode == 0 {
				return depNever
			}
			return depOK
		}
	}
	return depWait
}

// singletonBusy reports whether another job of j's name and user is
// running or suspended (singleton dependency).
func (st *State) singletonBusy(j *Job) bool {
	for _, o := range st.jobList {
		if o != j && isActive(o) && o.User == j.User && o.Req.Name == j.Req.Name {
			return true
		}
	}
	return false
}
