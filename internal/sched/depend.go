package sched

import (
	"fmt"
	"slices"
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
// (`after`, `afterany`, `afterok`, `afternotok`, `aftercorr`,
// `afterburstbuffer`) and `singleton`, joined by ',' (all must hold) or
// '?' (any one suffices). As in Slurm 24.11, one '?' makes the whole
// list an OR list, a repeated dependency (same type, job and task) is
// kept once, and every id may carry `+minutes` (used by after only). Job
// ids may be `id_task` for one array task or `id_*` for every task.
func ParseDependency(s string) ([]Dependency, bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false, nil
	}
	orList := strings.Contains(s, "?")
	var out []Dependency
	// Slurm refuses an empty item anywhere ("?after:1", "a,,b", "a?"): Job dependency problem.
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '?' }) {
		deps, err := parseDepItem(item)
		if err != nil {
			return nil, false, fmt.Errorf("dependency %q: %w", s, err)
		}
		for _, d := range deps {
			if !slices.ContainsFunc(out, d.sameAs) {
				out = append(out, d)
			}
		}
	}
	if len(out) == 0 || hasEmptyDepItem(s) {
		return nil, false, fmt.Errorf("dependency %q: %w", s, ErrDependency)
	}
	// One item left after Slurm drops repeats ("afterok:1?afterok:1") is no longer an OR list.
	return out, orList && len(out) > 1, nil
}

// hasEmptyDepItem reports a leading, trailing or doubled ',' or '?' separator.
func hasEmptyDepItem(s string) bool {
	sep := func(b byte) bool { return b == ',' || b == '?' }
	if sep(s[0]) || sep(s[len(s)-1]) {
		return true
	}
	for i := 1; i < len(s); i++ {
		if sep(s[i]) && sep(s[i-1]) {
			return true
		}
	}
	return false
}

// sameAs reports whether o repeats d (Slurm keeps the first of them).
func (d Dependency) sameAs(o Dependency) bool {
	return d.Kind == o.Kind && d.JobID == o.JobID && d.TaskID == o.TaskID
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
		d, err := parseDepID(kind, id)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// parseDepID parses `id[_task|_*][+minutes]` (minutes > 0).
func parseDepID(kind DepKind, id string) (Dependency, error) {
	d := Dependency{Kind: kind, TaskID: -1}
	if idS, delay, has := strings.Cut(id, "+"); has {
		m, err := strconv.ParseUint(delay, 10, 32)
		if err != nil || m == 0 {
			return d, ErrDependency
		}
		d.Delay = time.Duration(m) * time.Minute
		id = idS
	}
	if base, task, has := strings.Cut(id, "_"); has {
		if task == "*" {
			d.AllTasks = true
		} else {
			t, err := strconv.ParseInt(task, 10, 32)
			if err != nil || t < 0 {
				return d, ErrDependency
			}
			d.TaskID = int32(t)
		}
		id = base
	}
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil || n == 0 {
		return d, ErrDependency
	}
	d.JobID = JobID(n)
	return d, nil
}

// FormatDependency prints a dependency list as written (without states):
// the simulator's renumbered --dependency.
func FormatDependency(deps []Dependency, orList bool) string {
	parts := make([]string, len(deps))
	for i, d := range deps {
		parts[i] = formatDep(d)
	}
	return strings.Join(parts, depSep(orList))
}

// DependencyString is j's dependency as slurmctld shows it (scontrol show
// job Dependency=, squeue %E, the REST API): every dependency not yet
// fulfilled with its recorded state, `afterok:12_*(unfulfilled)`,
// `afternotok:13(failed)`, `singleton(unfulfilled)`; "" (printed
// "(null)") once the list is satisfied or the job has started, since
// Slurm clears it then. A job cancelled while pending keeps its last one.
func DependencyString(j *Job) string {
	r := &j.Req
	if len(r.Deps) == 0 || !j.StartTime.IsZero() || depsSatisfied(r) {
		return ""
	}
	var b strings.Builder
	for _, d := range r.Deps {
		if d.State == DepFulfilled {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(depSep(r.DepsAny))
		}
		b.WriteString(formatDep(d))
		b.WriteString(depStateNames[d.State])
	}
	return b.String()
}

var depStateNames = [...]string{DepUnfulfilled: "(unfulfilled)", DepFulfilled: "(fulfilled)", DepFailed: "(failed)"}

// depsSatisfied reports whether the recorded states satisfy the list:
// every one (',') or any one ('?') fulfilled.
func depsSatisfied(r *Request) bool {
	open := func(d Dependency) bool { return d.State != DepFulfilled }
	if r.DepsAny {
		return len(r.Deps) > 0 && !allFunc(r.Deps, open)
	}
	return !slices.ContainsFunc(r.Deps, open)
}

func allFunc[T any](s []T, f func(T) bool) bool {
	return !slices.ContainsFunc(s, func(v T) bool { return !f(v) })
}

func depSep(orList bool) string {
	if orList {
		return "?"
	}
	return ","
}

var depNames = map[DepKind]string{DepAfter: "after", DepAfterAny: "afterany", DepAfterOK: "afterok",
	DepAfterNotOK: "afternotok", DepAfterCorr: "aftercorr", DepAfterBurstBuffer: "afterburstbuffer"}

// formatDep prints one dependency: `singleton`, `kind:id`, with `_task`
// or `_*` (every task of an array) and `+minutes`.
func formatDep(d Dependency) string {
	if d.Kind == DepSingleton {
		return "singleton"
	}
	id := strconv.FormatUint(uint64(d.JobID), 10)
	switch {
	case d.TaskID >= 0:
		id += "_" + strconv.Itoa(int(d.TaskID))
	case d.AllTasks:
		id += "_*"
	}
	if d.Delay > 0 {
		id += "+" + strconv.Itoa(int(d.Delay/time.Minute))
	}
	return depNames[d.Kind] + ":" + id
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

// depStatus evaluates j's dependency list at c.Now (aftercorr for task,
// or corrOwn/corrSkip), and returns the dependencies' new states when one
// of them changed (nil otherwise).
func (c *Cycle) depStatus(j *Job, task int32) (depResult, []DepState) {
	return evalDeps(j, &depEval{now: c.Now, targets: c.depTargets, corrTarget: c.corrTarget,
		singletonBusy: c.singletonBusy, task: task})
}

// jobDeps evaluates j's dependencies for the gate. A pending array record
// with aftercorr is judged by its first task that can still run: a task
// whose other task failed stays pending (DependencyNeverSatisfied only
// once every task is), the others go on, as in Slurm.
func (c *Cycle) jobDeps(j *Job) (depResult, []DepState) {
	if j.Array == nil || j.Array.TaskID >= 0 || !hasAfterCorr(j) {
		return c.depStatus(j, corrOwn)
	}
	res, states := c.depStatus(j, corrSkip)
	if res == depNever {
		return res, states
	}
	res = depNever
	j.Array.Tasks.ForEach(func(t int) bool {
		res, _ = c.depStatus(j, int32(t))
		return res == depNever
	})
	return res, states
}

// corrTarget returns the member of array id that holds task (nil when
// none), from an index built once per cycle and array.
func (c *Cycle) corrTarget(id JobID, task int32) *Job {
	if c.corrIdx == nil {
		c.corrIdx = map[JobID]*corrIndex{}
	}
	x := c.corrIdx[id]
	if x == nil {
		x = &corrIndex{tasks: map[int32]*Job{}}
		for _, m := range c.depTargets(id) {
			if m.Array == nil {
				continue
			}
			if m.Array.TaskID >= 0 {
				x.tasks[m.Array.TaskID] = m
			} else {
				x.records = append(x.records, m)
			}
		}
		c.corrIdx[id] = x
	}
	if t := x.tasks[task]; t != nil {
		return t
	}
	for _, r := range x.records {
		if r.Array.Tasks.Has(int(task)) {
			return r
		}
	}
	return nil
}

// corrIndex is the members of one array by task (corrTarget).
type corrIndex struct {
	tasks   map[int32]*Job
	records []*Job
}

// depEval is what testing dependencies needs: the time, the jobs a
// dependency names, the singleton test, and the array task aftercorr
// judges.
type depEval struct {
	now           time.Time
	targets       func(JobID) []*Job
	corrTarget    func(JobID, int32) *Job
	singletonBusy func(*Job) bool
	task          int32
}

// The task an aftercorr is judged for, besides a task id.
const (
	corrOwn  int32 = -1 // the job's own task (a record's first pending task)
	corrSkip int32 = -2 // none: aftercorr counts as satisfied
)

// singletonBusy is State.singletonBusy with the (user, name) pairs
// indexed once per cycle, so many singleton jobs cost one pass: the
// running or suspended jobs counted, and the lowest pending job id.
func (c *Cycle) singletonBusy(j *Job) bool {
	if c.activeNames == nil {
		c.activeNames = map[string]singletonUse{}
		for _, o := range c.State.jobList {
			if isActive(o) || o.State.Base() == JobPending {
				c.activeNames[singletonKey(o)] = c.activeNames[singletonKey(o)].add(o)
			}
		}
	}
	u := c.activeNames[singletonKey(j)]
	if isActive(j) {
		u.active--
	}
	return u.active > 0 || u.firstPending != 0 && u.firstPending < j.ID
}

// singletonUse is what a singleton dependency waits for, per user and
// name: jobs running (or suspended), and the first pending job.
type singletonUse struct {
	active       int
	firstPending JobID
}

func (u singletonUse) add(o *Job) singletonUse {
	if isActive(o) {
		u.active++
	} else if u.firstPending == 0 || o.ID < u.firstPending {
		u.firstPending = o.ID
	}
	return u
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
// all are never). It also returns the states to record, as slurmctld
// does each time it tests a job's dependencies, when one changed: a
// dependency once failed stays failed even after the job it names has
// left memory (only an unfulfilled one is lifted then).
func evalDeps(j *Job, e *depEval) (depResult, []DepState) {
	r := &j.Req
	var states []DepState
	all := depOK
	anyOK, allNever := false, true
	for i, d := range r.Deps {
		res := evalDep(j, d, e)
		if s := nextDepState(j, d, res); s != d.State {
			if states == nil {
				states = make([]DepState, len(r.Deps))
				for k := range r.Deps {
					states[k] = r.Deps[k].State
				}
			}
			states[i] = s
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
			return depOK, states
		case allNever:
			return depNever, states
		}
		return depWait, states
	}
	return all, states
}

// evalDep evaluates one dependency: a recorded fulfilled or failed state
// stands (a singleton is always tested again).
func evalDep(j *Job, d Dependency, e *depEval) depResult {
	switch {
	case d.Kind == DepSingleton:
		if e.singletonBusy(j) {
			return depWait
		}
		return depOK
	case d.Kind == DepAfterCorr && e.task == corrSkip:
		return depOK
	}
	switch d.State {
	case DepFulfilled:
		return depOK
	case DepFailed:
		return depNever
	}
	if d.Kind == DepAfterCorr && j.Array != nil {
		task := corrTask(j, e.task)
		return evalCorr(d, task, e.now, e.corrTarget(d.JobID, task))
	}
	return evalOne(d, e.now, e.targets(d.JobID))
}

// nextDepState is the state recorded for dependency d of j that evaluated
// to res. An aftercorr of a pending array record is judged task by task
// and every task split off inherits the record's states, so it records
// nothing there.
func nextDepState(j *Job, d Dependency, res depResult) DepState {
	if d.Kind == DepAfterCorr && j.Array != nil && j.Array.TaskID < 0 {
		return d.State
	}
	if d.State != DepUnfulfilled && d.Kind != DepSingleton {
		return d.State
	}
	switch res {
	case depOK:
		return DepFulfilled
	case depNever:
		return DepFailed
	}
	return DepUnfulfilled
}

// recordDepStates stores the states a cycle or a submission found, on a
// copy of the list: array tasks split off a record share its slice.
func recordDepStates(j *Job, states []DepState) {
	if states == nil || len(states) != len(j.Req.Deps) {
		return
	}
	deps := slices.Clone(j.Req.Deps)
	for i := range deps {
		deps[i].State = states[i]
	}
	j.Req.Deps = deps
}

// evalOne evaluates one dependency against its target jobs (one job, or
// every member of an array). No target (purged after MinJobAge) satisfies
// it: Slurm lifts an unfulfilled dependency on a job it no longer knows
// (a failed one was recorded as such before, see evalDep).
func evalOne(d Dependency, now time.Time, targets []*Job) depResult {
	res := depOK
	for _, t := range targets {
		if d.TaskID >= 0 && !hasTask(t, d.TaskID) {
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

// evalCorr evaluates aftercorr for one task of an array: t, the task of
// the same index of the other array, must end OK. A task the other array
// never had (CorrTasks, taken at submission) fails it, as in Slurm; one
// that left memory is lifted.
func evalCorr(d Dependency, task int32, now time.Time, t *Job) depResult {
	if t != nil {
		return evalTarget(d, now, t)
	}
	if d.CorrTasks != nil && (task < 0 || !d.CorrTasks.Has(int(task))) {
		return depNever
	}
	return depOK
}

// corrTask is the task aftercorr judges: the one asked for, else j's own
// (a pending record's first task).
func corrTask(j *Job, task int32) int32 {
	if task >= 0 {
		return task
	}
	if j.Array.TaskID >= 0 {
		return j.Array.TaskID
	}
	first := int32(-1)
	j.Array.Tasks.ForEach(func(i int) bool { first = int32(i); return false })
	return first
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

// singletonBusy reports whether a singleton dependency of j waits: as in
// Slurm, while another job of j's user and name runs (or is suspended),
// or one submitted before it (lower id) is still pending.
func (st *State) singletonBusy(j *Job) bool {
	for _, o := range st.jobList {
		if o != j && o.User == j.User && o.Req.Name == j.Req.Name &&
			(isActive(o) || o.State.Base() == JobPending && (j.ID == 0 || o.ID < j.ID)) {
			return true
		}
	}
	return false
}

// killInvalidDep reports whether j is cancelled once its dependency can
// never be satisfied: --kill-on-invalid-dep, else kill_invalid_depend.
func killInvalidDep(j *Job, cfg *Config) bool {
	if k := j.Req.KillOnInvalidDep; k != nil {
		return *k
	}
	return cfg.KillInvalidDepend
}

// hasAfterCorr reports whether j has an aftercorr dependency.
func hasAfterCorr(j *Job) bool {
	return slices.ContainsFunc(j.Req.Deps, func(d Dependency) bool { return d.Kind == DepAfterCorr })
}
