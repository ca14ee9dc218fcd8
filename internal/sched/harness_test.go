package sched

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/duration"
)

// harness drives the core the way the controller and the simulator do: a
// cluster from a slurm.conf string, accounts from a sacctmgr script, jobs
// submitted with sbatch-like options at a fake clock, one scheduling
// cycle (Schedule then Apply) after every event, and jobs that end after
// the run time given with the harness-only option --run=DURATION (or at
// their time limit, as TIMEOUT).
type harness struct {
	t     tb
	st    *State
	cfg   Config
	acct  *acct.State
	now   time.Time
	runs  map[JobID]time.Duration // run time of each job once started (0 = until its limit)
	specs map[JobID]time.Duration // run time given at submission (array tasks inherit it)
	// lastPlan is the plan of the latest cycle.
	lastPlan Plan
}

// tb is what the harness needs of a test: testing.TB and *rapid.T both
// have it.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}

// t0 is the harness clock's start: a fixed instant, so tests are
// deterministic.
var t0 = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// newHarness builds the cluster of a slurm.conf text; every node starts
// IDLE (registered).
func newHarness(t tb, slurmConf string) *harness {
	t.Helper()
	c, _, err := conf.Parse("slurm.conf", []byte(slurmConf))
	if err != nil {
		t.Fatalf("slurm.conf: %v", err)
	}
	cl, err := ClusterFromConf(c)
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	for i := range cl.Nodes {
		if cl.Nodes[i].State.Base() == NodeUnknown {
			cl.Nodes[i].State = NodeIdle
		}
	}
	cfg := ConfigFromConf(c)
	h := &harness{t: t, st: NewState(cl, cfg), cfg: cfg, now: t0, runs: map[JobID]time.Duration{},
		specs: map[JobID]time.Duration{}}
	return h
}

// sacctmgr applies a sacctmgr script (one command per line) and installs
// the resulting policy.
func (h *harness) sacctmgr(script string) {
	h.t.Helper()
	if h.acct == nil {
		h.acct = acct.NewState()
	}
	env := acct.ExecEnv{Actor: acct.Actor{Name: "root"}, DefaultCluster: h.cfg.ClusterName}
	if err := acct.ApplyScript(h.acct, script, env); err != nil {
		h.t.Fatalf("sacctmgr: %v", err)
	}
	h.st.SetPolicy(CompilePolicy(acct.NewPolicy(h.acct.Clone()), h.cfg.ClusterName))
}

// submit submits a job for user with sbatch-like options and runs a
// scheduling cycle, as the controller does on submission.
func (h *harness) submit(user, opts string) (*Job, error) {
	h.t.Helper()
	spec, run := h.parseOpts(opts)
	spec.User = user
	req, err := RequestFromSpec(&spec, h.now, time.UTC, &h.st.Config)
	if err != nil {
		return nil, err
	}
	j, err := h.st.Submit(req, Submitter{User: user}, h.now)
	if err != nil {
		return nil, err
	}
	h.specs[j.ID] = run
	h.schedule()
	return j, nil
}

// queue submits a job without running a cycle (several jobs then meet
// the scheduler together).
func (h *harness) queue(user, opts string) *Job {
	h.t.Helper()
	spec, run := h.parseOpts(opts)
	spec.User = user
	req, err := RequestFromSpec(&spec, h.now, time.UTC, &h.st.Config)
	if err != nil {
		h.t.Fatalf("submit %q: %v", opts, err)
	}
	j, err := h.st.Submit(req, Submitter{User: user}, h.now)
	if err != nil {
		h.t.Fatalf("submit %q as %s: %v", opts, user, err)
	}
	h.specs[j.ID] = run
	return j
}

// mustSubmit is submit that fails the test on a rejection.
func (h *harness) mustSubmit(user, opts string) *Job {
	h.t.Helper()
	j, err := h.submit(user, opts)
	if err != nil {
		h.t.Fatalf("submit %q as %s: %v", opts, user, err)
	}
	return j
}

// schedule runs one cycle at the current time and applies it.
func (h *harness) schedule() Plan {
	h.lastPlan = Schedule(h.st, h.now, h.st.Config)
	started := h.st.Apply(&h.lastPlan)
	for _, id := range started {
		j := h.st.Job(id)
		run, ok := h.specs[id]
		if !ok && j.Array != nil {
			run = h.specs[j.Array.JobID]
		}
		h.runs[id] = run
	}
	return h.lastPlan
}

// advance moves the clock by d, ending jobs whose run time or time limit
// passes (in time order) and scheduling after each event.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	end := h.now.Add(d)
	for {
		next, ids := h.nextEnds(end)
		if len(ids) == 0 {
			break
		}
		h.now = next
		for _, id := range ids {
			j := h.st.Job(id)
			state := JobCompleted
			if !j.EndTime.IsZero() && !next.Before(j.EndTime) && (h.runs[id] == 0 || !next.Before(j.EndTime)) {
				if h.runs[id] == 0 || j.StartTime.Add(h.runs[id]+j.Suspended).After(j.EndTime) {
					state = JobTimeout
				}
			}
			if !j.ResvEnd.IsZero() && !next.Before(j.ResvEnd) &&
				(h.runs[id] == 0 || j.StartTime.Add(h.runs[id]+j.Suspended).After(j.ResvEnd)) {
				state = JobTimeout // ended with its reservation (the controller's ResvEnded)
			}
			if err := h.st.End(id, state, 0, next); err != nil {
				h.t.Fatalf("end %d: %v", id, err)
			}
		}
		h.schedule()
	}
	h.now = end
	h.schedule()
}

// nextEnds returns the earliest end time not after limit and the jobs
// ending then.
func (h *harness) nextEnds(limit time.Time) (time.Time, []JobID) {
	var best time.Time
	var ids []JobID
	for _, j := range h.st.Jobs() {
		if j.State.Base() != JobRunning {
			continue
		}
		at := j.EndTime
		if !j.ResvEnd.IsZero() && (at.IsZero() || j.ResvEnd.Before(at)) {
			at = j.ResvEnd
		}
		if run := h.runs[j.ID]; run > 0 {
			if done := j.StartTime.Add(run + j.Suspended); at.IsZero() || done.Before(at) {
				at = done
			}
		}
		if at.IsZero() || at.After(limit) {
			continue
		}
		switch {
		case best.IsZero() || at.Before(best):
			best, ids = at, []JobID{j.ID}
		case at.Equal(best):
			ids = append(ids, j.ID)
		}
	}
	return best, ids
}

// job returns the job with id (failing the test if unknown).
func (h *harness) job(id JobID) *Job {
	h.t.Helper()
	j := h.st.Job(id)
	if j == nil {
		h.t.Fatalf("no job %d", id)
	}
	return j
}

// expectState checks a job's state and, for a pending job, its reason.
func (h *harness) expectState(id JobID, state JobState, reason Reason) {
	h.t.Helper()
	j := h.job(id)
	if j.State.Base() != state || state == JobPending && j.Reason != reason {
		h.t.Fatalf("job %s: state %s reason %s, want %s (%s)", j.JobIDString(), j.State, j.Reason, state, reason)
	}
	h.t.Logf("job %s: %s (%s)", j.JobIDString(), j.State, j.Reason)
}

// nodes returns the names of a job's allocated nodes.
func (h *harness) nodes(id JobID) []string {
	return h.st.Cluster.NodeNames(h.job(id).Alloc.Nodes)
}

// countState counts the jobs in a base state.
func (h *harness) countState(state JobState, pred func(*Job) bool) int {
	n := 0
	for _, j := range h.st.Jobs() {
		if j.State.Base() == state && (pred == nil || pred(j)) {
			n++
		}
	}
	return n
}

// parseOpts reads the sbatch options the scenarios use into a JobSpec,
// plus the harness-only --run=DURATION.
func (h *harness) parseOpts(opts string) (api.JobSpec, time.Duration) {
	h.t.Helper()
	var s api.JobSpec
	var run time.Duration
	fields := strings.Fields(opts)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		k, v, hasV := strings.Cut(f, "=")
		if !hasV && len(k) == 2 && k != "-H" && k != "-s" && i+1 < len(fields) {
			i++
			v = fields[i] // "-n 4": a short option's value is the next word
		}
		var err error
		switch k {
		case "-p", "--partition":
			s.Partitions = strings.Split(v, ",")
		case "-A", "--account":
			s.Account = v
		case "-q", "--qos":
			s.QOS = v
		case "-J", "--job-name":
			s.Name = v
		case "--gres":
			s.Gres = v
		case "--gpus", "-G":
			s.GPUs = v
		case "--gpus-per-node":
			s.GPUsPerNode = v
		case "--gpus-per-task":
			s.GPUsPerTask = v
		case "--cpus-per-gpu":
			s.CPUsPerGPU, err = strconv.Atoi(v)
		case "--mem-per-gpu":
			s.MemPerGPUMB, err = memMB(v)
		case "-N", "--nodes":
			lo, hi, _ := strings.Cut(v, "-")
			s.MinNodes, err = strconv.Atoi(lo)
			if hi != "" && err == nil {
				s.MaxNodes, err = strconv.Atoi(hi)
			}
		case "-n", "--ntasks":
			s.NTasks, err = strconv.Atoi(v)
		case "-c", "--cpus-per-task":
			s.CPUsPerTask, err = strconv.Atoi(v)
		case "--ntasks-per-node":
			s.NTasksPerNode, err = strconv.Atoi(v)
		case "--mem":
			s.MemPerNodeMB, err = memMB(v)
			s.MemPerNodeSet = true
		case "--mem-per-cpu":
			s.MemPerCPUMB, err = memMB(v)
		case "-t", "--time":
			var d time.Duration
			d, err = duration.Parse(v)
			s.TimeLimitSec = int64(d / time.Second)
			if d == duration.Infinite {
				s.TimeLimitSec = api.TimeInfinite
			}
		case "--time-min":
			var d time.Duration
			d, err = duration.Parse(v)
			s.TimeMinSec = int64(d / time.Second)
		case "--begin":
			s.Begin = v
		case "-d", "--dependency":
			s.Dependency = v
		case "--kill-on-invalid-dep":
			s.KillOnInvalidDep = v
		case "--nice":
			n := 100
			if v != "" {
				n, err = strconv.Atoi(v)
			}
			s.Nice = &n
		case "-H", "--hold":
			s.Hold = true
		case "--exclusive":
			s.Exclusive = "node"
		case "-s", "--oversubscribe":
			s.OverSubscribe = true
		case "-C", "--constraint":
			s.Constraint = v
		case "-w", "--nodelist":
			s.NodeList = v
		case "-x", "--exclude":
			s.Exclude = v
		case "-a", "--array":
			s.Array = v
		case "--no-requeue":
			f := false
			s.Requeue = &f
		case "--run":
			run, err = duration.Parse(v)
		default:
			h.t.Fatalf("harness: unknown option %q", f)
		}
		if err != nil {
			h.t.Fatalf("harness: option %q: %v", f, err)
		}
	}
	return s, run
}

// memMB reads a --mem value: a number of MB or K/M/G/T suffixed.
func memMB(v string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "G"):
		mult, v = 1024, strings.TrimSuffix(v, "G")
	case strings.HasSuffix(v, "T"):
		mult, v = 1024*1024, strings.TrimSuffix(v, "T")
	case strings.HasSuffix(v, "M"):
		v = strings.TrimSuffix(v, "M")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n * mult, err
}

// submitError unpacks a rejection into the two lines sbatch prints.
func submitError(err error) string {
	var se *SubmitError
	if !errors.As(err, &se) {
		return fmt.Sprintf("sbatch: error: Batch job submission failed: %v", err)
	}
	out := ""
	if se.Reason != "" {
		out = "sbatch: error: " + string(se.Reason) + "\n"
	}
	return out + "sbatch: error: Batch job submission failed: " + se.Err.Error()
}
