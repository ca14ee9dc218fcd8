package ctld

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// schedule runs one scheduling cycle at now and applies its plan: the
// state changes are stored with the batch, the agent calls go to the
// outbox (sent after the commit).
func (ls *loopState) schedule(now time.Time) {
	ls.wantSched = false
	if now.Sub(ls.lastPrio) >= ls.prio.period() {
		ls.recalcPriorities(now)
		ls.endOverUsage(now)
	}
	t0 := time.Now()
	cfg := ls.cfg
	cfg.Backfill.Enabled = cfg.Backfill.Enabled && ls.backfillDue(now)
	if cfg.Backfill.Enabled {
		ls.lastBackfill = backfillMark(ls.lastBackfill, now, ls.backfillInterval())
	}
	plan := sched.Schedule(ls.st, now, cfg)
	ls.applyPlan(&plan)
	ls.syncTimeLimits()
	d := time.Since(t0)
	ls.lastSched = now
	ls.stats.Cycles++
	ls.stats.LastCycle = d
	ls.stats.MaxCycle = max(ls.stats.MaxCycle, d)
	ls.stats.Started += plan.Stats.Started
	ls.stats.Backfilled += plan.Stats.Backfilled
	ls.ext.observeCycle(&plan.Stats, d, now)
}

// batchPassAt is when the pass a submission at now waits for runs
// (Options.BatchCadence): slurmctld's background thread checks once a
// second, on the second, and runs it once batch_sched_delay whole seconds
// have passed since the last one (oracle: passes at :45.005 and :48.005,
// :51.005; none in between for jobs submitted at :45.03 and :47.29).
func batchPassAt(now, last time.Time, delay time.Duration) time.Time {
	t := now
	if d := last.Truncate(time.Second).Add(delay); d.After(t) {
		t = d
	}
	if r := t.Truncate(time.Second); r.Before(t) {
		return r.Add(time.Second)
	}
	return t
}

// wantSubmitPass asks for the pass a submission waits for.
func (ls *loopState) wantSubmitPass() {
	if ls.batchCadence {
		ls.wantBatch = true
		return
	}
	ls.wantSched = true
}

// wantTickPass asks for a pass on slurmctld's next background tick
// (Options.BatchCadence): a released job shows "PD None" until then
// (oracle: holds-begin).
func (ls *loopState) wantTickPass() {
	if ls.batchCadence {
		ls.wantTick = true
		return
	}
	ls.wantSched = true
}

// tickPassAt is when the pending submission or tick pass runs.
func (ls *loopState) tickPassAt(now time.Time, delay time.Duration) time.Time {
	if ls.wantTick {
		return batchPassAt(now, time.Time{}, 0)
	}
	return batchPassAt(now, ls.lastBatch, delay)
}

// backfillInterval is bf_interval (Slurm's default 30 s when unset).
func (ls *loopState) backfillInterval() time.Duration {
	if iv := ls.cfg.Backfill.Interval; iv > 0 {
		return iv
	}
	return 30 * time.Second
}

// backfillDue reports whether a cycle at now includes a backfill pass:
// bf_interval after the last one (after the controller's start for the
// first). Other cycles run the main scheduler only, as Slurm's do on
// submissions and job ends, so a job only backfill can start waits for
// the next pass and shows no expected start before its first (oracle:
// passes 15 s apart with bf_interval=15; a job submitted between two
// passes shows StartTime N/A until the next).
func (ls *loopState) backfillDue(now time.Time) bool {
	return now.Sub(ls.lastBackfill) >= ls.backfillInterval()
}

// backfillMark is the time a backfill pass run at now counts from: the
// due time last+iv, so that the timer tick's lateness does not add up
// (Slurm's passes are bf_interval apart: 16:38:42, 16:38:57, 16:39:12),
// or now when the pass is an interval or more late.
func backfillMark(last, now time.Time, iv time.Duration) time.Time {
	if due := last.Add(iv); !now.Before(due) && now.Sub(due) < iv {
		return due
	}
	return now
}

// applyPlan applies a plan to the state and queues the agent calls.
func (ls *loopState) applyPlan(plan *sched.Plan) {
	st := ls.st
	now := plan.Now
	before := map[sched.JobID]sched.JobState{}
	for _, p := range plan.Preemptions {
		if j := st.Job(p.Job); j != nil {
			before[p.Job] = j.State
		}
	}
	for _, id := range plan.Resumes {
		if j := st.Job(id); j != nil {
			before[id] = j.State
		}
	}
	// Remember which pending records a start comes from, so the record
	// an array task was split off is stored too.
	sources := make([]sched.JobID, 0, len(plan.Starts))
	for _, s := range plan.Starts {
		sources = append(sources, s.Job)
	}
	reasons := make(map[sched.JobID]sched.Reason, len(plan.Pending))
	for _, p := range plan.Pending {
		if j := st.Job(p.Job); j != nil {
			reasons[p.Job] = j.Reason
		}
	}
	for _, p := range plan.Preemptions {
		ls.chargePreempted(p, now)
	}
	started := st.Apply(plan)
	for _, id := range plan.DepCancels {
		if j := st.Job(id); j != nil && j.State.Base() == sched.JobCancelled {
			ls.touch(j, "cancel", "invalid dependency (kill_invalid_depend)")
		}
	}
	for _, id := range sources {
		if j := st.Job(id); j != nil {
			ls.touch(j, "", "")
		}
	}
	launches := make([]*sched.Job, 0, len(started))
	for _, id := range started {
		j := st.Job(id)
		if j == nil {
			continue
		}
		ls.touch(j, "start", compressNodes(st.Cluster, j.Alloc.Nodes))
		launches = append(launches, j)
	}
	ls.queueLaunches(launches)
	for _, p := range plan.Preemptions {
		ls.applyPreemption(p, before[p.Job], now)
	}
	for _, id := range plan.Resumes {
		if j := st.Job(id); j != nil && before[id].Base() == sched.JobSuspended && j.State.Base() == sched.JobRunning {
			ls.touch(j, "resume", "gang")
			ls.agentCall(j, func(ctx context.Context, a *api.AgentClient) error {
				_, err := a.Resume(ctx, uint32(id))
				return err
			})
		}
	}
	for _, p := range plan.Pending {
		// Reasons change often; store them only when they do, so that a
		// long queue is not rewritten every cycle.
		// Dependency states too: a failed one must outlive a restart.
		if j := st.Job(p.Job); j != nil && (reasons[p.Job] != j.Reason || p.DepStates != nil) {
			ls.touch(j, "", "")
		}
	}
}

// chargePreempted charges fair-share the usage of a job that preemption
// ends (CANCEL) or requeues now, since the last priority pass: Slurm
// charges a preempted run's elapsed time × TRES like any other run's, and
// the passes only charge the jobs still running. A job in its GraceTime
// is charged when it goes (checkGrace); a suspended one keeps running
// its allocation and is charged by the passes while it runs.
func (ls *loopState) chargePreempted(p sched.Preemption, now time.Time) {
	j := ls.st.Job(p.Job)
	if j == nil || j.State.Base() != sched.JobRunning || p.Mode.Action() == sched.PreemptSuspend ||
		p.GraceEnd.After(now) {
		return
	}
	ls.prio.charge(ls, j, now)
}

// applyPreemption sends the agent what a preemption decided.
func (ls *loopState) applyPreemption(p sched.Preemption, was sched.JobState, now time.Time) {
	j := ls.st.Job(p.Job)
	if j == nil {
		return
	}
	if p.GraceEnd.After(now) && p.Mode.Action() != sched.PreemptSuspend && j.State.Base() == sched.JobRunning {
		ls.grace[j.ID] = p
		ls.touch(j, "preempt-grace", "")
		return
	}
	ls.afterPreempt(j, was, p.Mode)
}

// afterPreempt tells the agent to suspend or kill a preempted job.
func (ls *loopState) afterPreempt(j *sched.Job, was sched.JobState, mode sched.PreemptMode) {
	id := uint32(j.ID)
	ls.touch(j, "preempt", j.State.String())
	switch {
	case j.State.Base() == sched.JobSuspended && was.Base() == sched.JobRunning:
		ls.wantSched = true // the gang step may give the cores back (sched/gang.go)
		ls.agentCallNodes(was, j, func(ctx context.Context, a *api.AgentClient) error {
			_, err := a.Suspend(ctx, id)
			return err
		})
	case was.Base() == sched.JobRunning || was.Base() == sched.JobSuspended:
		state, run := api.StatePreempted, j.RestartCount
		if j.State.Base() == sched.JobPending {
			state, run = api.StateRequeued, j.RestartCount-1 // the requeue counted the run
		}
		ls.terminateOn(j, ls.lastNodes(j), run, state)
	}
}

// lastNodes returns the nodes j ran on (its allocation, or its last run's
// nodes after a requeue).
func (ls *loopState) lastNodes(j *sched.Job) []int32 {
	if len(j.Alloc.Nodes) > 0 {
		return j.Alloc.Nodes
	}
	if n := len(j.Runs); n > 0 {
		return j.Runs[n-1].Nodes
	}
	return nil
}

// batchHost returns the index of the node that runs j's batch script.
func batchHost(nodes []int32) int32 {
	if len(nodes) == 0 {
		return -1
	}
	return nodes[0]
}

// agentCall queues fn against the agent of j's batch host.
func (ls *loopState) agentCall(j *sched.Job, fn func(context.Context, *api.AgentClient) error) {
	ls.agentCallNodes(j.State, j, fn)
}

func (ls *loopState) agentCallNodes(_ sched.JobState, j *sched.Job, fn func(context.Context, *api.AgentClient) error) {
	host := batchHost(ls.lastNodes(j))
	if host < 0 {
		return
	}
	ls.agentCallOn(host, j.ID, fn)
}

func (ls *loopState) agentCallOn(node int32, id sched.JobID, fn func(context.Context, *api.AgentClient) error) {
	name := ls.st.Cluster.Nodes[node].Name
	addr := ls.nodes[node].info.Addr
	c := ls.c
	ls.outbox = append(ls.outbox, func() {
		a := c.agentClient(name, addr)
		if a == nil {
			return
		}
		c.launchQ <- struct{}{}
		defer func() { <-c.launchQ }()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := fn(ctx, a); err != nil {
			c.log.Warn("agent call failed", "node", name, "job", id, "err", err)
		}
	})
}

// terminateOn starts the kill sequence of j's run restart (its
// RestartCount while that run was on) on its batch host. The request may
// arrive late (a node cut off from the network gets it once the link is
// back) and must not end a later run started there meanwhile.
func (ls *loopState) terminateOn(j *sched.Job, nodes []int32, restart int32, state string) {
	host := batchHost(nodes)
	if host < 0 {
		return
	}
	id := uint32(j.ID)
	kw := int64(ls.c.cfg.KillWait / time.Second)
	run := int(restart)
	ls.agentCallOn(host, j.ID, func(ctx context.Context, a *api.AgentClient) error {
		_, err := a.Terminate(ctx, id, api.TerminateRequest{State: state, KillWaitSec: kw, RestartCount: &run})
		if ae, ok := err.(*api.AgentError); ok && ae.Status == 404 {
			return nil // already gone
		}
		return err
	})
}

// queueLaunch sends the batch script of a started job to its batch host.
func (ls *loopState) queueLaunch(j *sched.Job) { ls.queueLaunches([]*sched.Job{j}) }

// queueLaunches sends the batch scripts of started jobs, one call per batch
// host: a scheduling pass that starts 16 jobs on a node sends one request,
// not 16. Jobs whose launch does not land that way fall back to a call of
// their own, with retries.
func (ls *loopState) queueLaunches(jobs []*sched.Job) {
	jobs = ls.gatePrologSlurmctld(jobs) // prolog.go
	batches := map[int32]*launchBatch{}
	for _, j := range jobs {
		host := batchHost(j.Alloc.Nodes)
		if host < 0 {
			continue
		}
		req := ls.launchRequest(j)
		ls.limits().sent[j.ID] = req.TimeLimitSec
		b := batches[host]
		if b == nil || len(b.items) >= maxLaunchBatch {
			b = &launchBatch{}
			batches[host] = b
			c := ls.c
			ls.outbox = append(ls.outbox, func() { c.sendLaunchBatch(b) })
		}
		b.items = append(b.items, launchItem{id: j.ID, restart: j.RestartCount, host: host,
			name: ls.st.Cluster.Nodes[host].Name, addr: ls.nodes[host].info.Addr, req: req})
	}
}

// launchItem is one job's launch on its way to its batch host.
type launchItem struct {
	id      sched.JobID
	restart int32
	host    int32
	name    string
	addr    string
	req     api.LaunchRequest
}

// launchBatch is the launches for one node sent in one call; the loop
// fills it before the outbox is flushed, the sender only reads it.
type launchBatch struct{ items []launchItem }

// maxLaunchBatch bounds one launch call.
const maxLaunchBatch = 256

// sendLaunchBatch sends a batch in one call and records every launch that
// landed in one loop call. A batch the agent could not take (unreachable,
// an agent without the batch endpoint) and launches refused with 409 (a
// requeued job's previous run still ending there) go their own way with
// launchWithRetry.
func (c *Controller) sendLaunchBatch(b *launchBatch) {
	items := b.items
	first := items[0]
	var results []api.LaunchResult
	err := errNoAgent
	if a := c.agentClient(first.name, first.addr); a != nil {
		reqs := make([]api.LaunchRequest, len(items))
		for i := range items {
			reqs[i] = items[i].req
		}
		c.launchQ <- struct{}{}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		results, err = a.LaunchBatch(ctx, reqs)
		cancel()
		<-c.launchQ
	}
	if err != nil {
		for _, it := range items {
			go c.launchWithRetry(it)
		}
		return
	}
	done := make([]launchOutcome, 0, len(items))
	for i, r := range results {
		switch {
		case r.Error == "":
			done = append(done, launchOutcome{items[i], nil})
		case r.HTTPStatus == http.StatusConflict:
			go c.launchWithRetry(items[i])
		default:
			done = append(done, launchOutcome{items[i], &api.AgentError{Status: r.HTTPStatus, Message: r.Error}})
		}
	}
	c.do(context.Background(), func(ls *loopState) (any, error) {
		for _, o := range done {
			ls.launchDone(o.item.id, o.item.restart, o.item.name, o.err)
		}
		return nil, nil
	})
}

type launchOutcome struct {
	item launchItem
	err  error
}

// launchWithRetry launches one job on its own.
//
// Bug fix (issue 7 acceptance, TestAcceptAgentDownAtLaunch): a launch that
// found no agent answering (agent restarting, network) ended the job
// FAILED at once, so jobs given to a node while its agent restarted were
// lost. As slurmctld does, keep trying until SlurmdTimeout, at the node's
// current address: by then the agent is back (the launch lands, or its
// re-registration launched the job already) or the node is DOWN and its
// jobs ended NODE_FAIL or were requeued.
func (c *Controller) launchWithRetry(it launchItem) {
	giveUp := time.Now().Add(c.cfg.SlurmdTimeout + 5*time.Second)
	addr := it.addr
	for {
		err := c.launchOnce(it, addr)
		if errors.Is(err, errLaunchMoot) {
			return // cancelled, requeued, ended or launched meanwhile
		}
		var ae *api.AgentError
		if err == nil || errors.As(err, &ae) || time.Now().After(giveUp) {
			c.launchDone(it.id, it.restart, it.name, err)
			return
		}
		select {
		case <-c.stop:
			return
		case <-time.After(time.Second):
		}
		var again bool
		if addr, again = c.launchTarget(it.id, it.restart, it.host); !again {
			return // cancelled, requeued, purged or launched meanwhile
		}
	}
}

// launchOnce sends one launch to the agent at addr; a requeued job's
// previous run may still be in its kill sequence there (409): it retries
// until that run is gone.
//
// Before each retry it asks the loop whether the run still wants this
// launch: a launch refused because the agent was still starting the same
// run (a relaunch after a controller restart racing the dead controller's
// launch) must not start that run a second time once it has ended.
func (c *Controller) launchOnce(it launchItem, addr string) error {
	name, req := it.name, it.req
	a := c.agentClient(name, addr)
	if a == nil {
		return errNoAgent
	}
	deadline := time.Now().Add(c.cfg.KillWait + time.Minute + c.prologWait()) // prolog.go
	for {
		c.launchQ <- struct{}{}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := a.Launch(ctx, req)
		cancel()
		<-c.launchQ
		var ae *api.AgentError
		if !errors.As(err, &ae) || ae.Status != http.StatusConflict || time.Now().After(deadline) {
			return err
		}
		select {
		case <-c.stop:
			return err
		case <-time.After(250 * time.Millisecond):
		}
		if _, again := c.launchTarget(it.id, it.restart, it.host); !again {
			return errLaunchMoot
		}
	}
}

// launchTarget reports whether run restart of job id still waits for its
// launch on node host, and the agent's current address there.
func (c *Controller) launchTarget(id sched.JobID, restart, host int32) (string, bool) {
	res, err := c.do(context.Background(), func(ls *loopState) (any, error) {
		j := ls.st.Job(id)
		if j == nil || j.RestartCount != restart || !isActive(j) || batchHost(j.Alloc.Nodes) != host {
			return nil, nil
		}
		if r, ok := ls.launched[id]; ok && r == restart {
			return nil, nil
		}
		return ls.nodes[host].info.Addr, nil
	})
	addr, ok := res.(string)
	return addr, err == nil && ok
}

// errLaunchMoot ends a launch whose run no longer wants it.
var errLaunchMoot = errors.New("launch no longer wanted")

// launchDone records the outcome of a launch (on the loop).
func (c *Controller) launchDone(id sched.JobID, restart int32, node string, err error) {
	c.do(context.Background(), func(ls *loopState) (any, error) {
		ls.launchDone(id, restart, node, err)
		return nil, nil
	})
}

// launchDone records the outcome of a launch; the loop calls it.
func (ls *loopState) launchDone(id sched.JobID, restart int32, node string, err error) {
	c := ls.c
	j := ls.st.Job(id)
	if r, ok := ls.limits().ended[id]; ok && r == restart {
		delete(ls.limits().ended, id)
		if j != nil && j.RestartCount == restart {
			return // the run already ended on its node and was reported
		}
	}
	if j == nil || j.RestartCount != restart || !isActive(j) {
		// Cancelled, requeued or purged while the launch was on its
		// way: the run the agent just started must not go on.
		if i := ls.st.Cluster.NodeIndex(node); err == nil && i >= 0 {
			ls.agentCallOn(i, id, killOrphan(uint32(id), c.cfg.KillWait))
		}
		return
	}
	if r, ok := ls.launched[id]; err != nil && ok && r == restart {
		return // another launch of this run landed (re-registration)
	}
	if err != nil {
		c.log.Error("launch failed", "job", id, "node", node, "err", err)
		if j.State.Base() == sched.JobRunning || j.State.Base() == sched.JobSuspended {
			_ = ls.st.End(id, sched.JobFailed, 1<<8, c.now())
			j.StateDesc = "launch failed on " + node + ": " + err.Error()
			ls.touch(j, "end", "launch failed: "+err.Error())
			ls.wantSched = true
		}
		return
	}
	ls.launched[id] = restart
	ls.syncTimeLimit(j) // changed while the launch was on its way
	if j.State.Base() == sched.JobSuspended {
		// Suspended (preemption, scontrol) before the launch landed.
		if i := ls.st.Cluster.NodeIndex(node); i >= 0 {
			ls.agentCallOn(i, id, suspendCall(uint32(id)))
		}
	}
}

// launchRequest builds what the agent needs to run j.
func (ls *loopState) launchRequest(j *sched.Job) api.LaunchRequest {
	cl := ls.st.Cluster
	spec := ls.specs[j.ID]
	if spec == nil && j.Array != nil {
		spec = ls.specs[j.Array.JobID]
	}
	if spec == nil {
		spec = &api.JobSpec{Wrap: "true"}
	}
	r := api.LaunchRequest{JobID: uint32(j.ID), RestartCount: int(j.RestartCount), Name: j.Req.Name,
		User: j.User, UID: j.UID, GID: j.GID, Group: j.Group, Script: spec.Script, Args: spec.ScriptArgs,
		WorkDir: spec.WorkDir, SubmitDir: spec.WorkDir, SubmitHost: spec.AllocNode, StdOut: spec.Output, StdErr: spec.Error, StdIn: spec.Input,
		OpenMode: spec.OpenMode, Environment: spec.Environment, Export: spec.Export,
		Partition: ls.partitionName(j), Account: j.Account, QOS: j.QOS, ClusterName: cl.Name,
		NodeList: compressNodes(cl, j.Alloc.Nodes), NNodes: len(j.Alloc.Nodes), NTasks: int(max(j.Req.NTasks, 1)),
		CPUsPerTask: int(j.Req.CPUsPerTask), TimeLimitSec: limitSeconds(j.TimeLimit),
		KillWaitSec: int64(ls.c.cfg.KillWait / time.Second), StartTime: j.StartTime}
	if r.Script == "" {
		r.Script = "#!/bin/sh\n" + spec.Wrap + "\n"
	}
	r.AcctGatherFreqSec = acctGatherFreq(ls.c.cfg)
	r.CPUsPerNode, r.TasksPerNode = allocPerNode(j)
	r.Constrain = ls.constraints(j, 0)
	if tok, _, err := IssueToken(ls.c.jwtKey, j.User, ls.c.now(), jobTokenLifespan(r.TimeLimitSec)); err == nil {
		r.JobToken = tok
	}
	r.Scripts = ls.nodeScripts(j) // prolog.go
	if len(j.Alloc.CPUs) > 0 {
		r.CPUs = int(j.Alloc.CPUs[0])
		if ls.cfg.ConsumeMemory {
			r.MemoryMB = j.Alloc.Mem[0]
		}
	}
	r.GPUs = ls.gpuIndices(j.Alloc.Nodes[0], ls.assignGPUs(j))
	if a := j.Array; a != nil && a.TaskID >= 0 {
		r.ArrayJobID, r.ArrayTaskID = uint32(a.JobID), uint32(a.TaskID)
		if tasks, n, _, err := sched.ParseArray(j.Req.Array, ls.cfg.MaxArraySize); err == nil {
			r.ArrayTaskCount = n
			first, last := -1, -1
			tasks.ForEach(func(t int) bool {
				if first < 0 {
					first = t
				}
				last = t
				return true
			})
			r.ArrayTaskMin, r.ArrayTaskMax = uint32(first), uint32(last)
		}
	}
	if r.WorkDir == "" {
		r.WorkDir = "/"
	}
	return r
}

// jobTokenLifespan is how long a job's token (api.LaunchRequest.JobToken)
// stays valid: the job's time limit and an hour to spare, or a week for a
// job without one.
func jobTokenLifespan(limitSec int64) time.Duration {
	if limitSec <= 0 { // none, or api.TimeInfinite
		return 7 * 24 * time.Hour
	}
	return time.Duration(limitSec)*time.Second + time.Hour
}

// gpuIndices turns GPU positions on node host (the controller's
// bookkeeping: 0..n-1) into the device indices the node's agent
// registered (gres.conf File=/dev/nvidiaN or discovery, in index order),
// which CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS must name. A node whose
// agent reported no devices (Count= only) keeps the positions.
func (ls *loopState) gpuIndices(host int32, pos []int) []int {
	devs := ls.nodes[host].info.Resources.GPUs
	if len(pos) == 0 || len(devs) == 0 {
		return pos
	}
	out := make([]int, len(pos))
	for i, p := range pos {
		out[i] = p
		if p >= 0 && p < len(devs) {
			out[i] = devs[p].Index
		}
	}
	return out
}

// limitBook remembers, per running job, the time limit its agent
// enforces: sent with the launch, reported at registration, or pushed
// after a change.
//
// ended holds the runs whose end their batch host reported before the
// controller heard back from their launch: a short job's exit event
// often overtakes the launch reply, and that run must not be taken for an
// orphan (killed) when the reply arrives.
type limitBook struct {
	sent  map[sched.JobID]int64
	ended map[sched.JobID]int32
}

// limitBooks holds each loop's limitBook (loopState's own fields belong
// to state.go); only the loop goroutine touches a book.
var limitBooks sync.Map

func (ls *loopState) limits() *limitBook {
	if b, ok := limitBooks.Load(ls); ok {
		return b.(*limitBook)
	}
	b, _ := limitBooks.LoadOrStore(ls, &limitBook{sent: map[sched.JobID]int64{}, ended: map[sched.JobID]int32{}})
	return b.(*limitBook)
}

// limitRetry marks a push that failed: it never equals a real limit, so
// the next pass sends the limit again.
const limitRetry = -2

// syncTimeLimits sends running jobs' changed time limits (scontrol update
// job TimeLimit=, raised or lowered) to their agents, which enforce them,
// as slurmctld tells slurmd of a new limit. It runs after each scheduling
// pass, which every job update triggers.
func (ls *loopState) syncTimeLimits() {
	b := ls.limits()
	for id, restart := range ls.launched {
		if j := ls.st.Job(id); j != nil && j.RestartCount == restart {
			ls.syncTimeLimit(j)
		}
	}
	for id := range b.sent {
		if j := ls.st.Job(id); j == nil || !isActive(j) {
			delete(b.sent, id)
		}
	}
}

// syncTimeLimit pushes j's limit to its agent if it differs from what the
// agent was last given. The caller checked that the agent runs j.
func (ls *loopState) syncTimeLimit(j *sched.Job) {
	if !isActive(j) {
		return
	}
	b := ls.limits()
	want := limitSeconds(j.TimeLimit)
	have, ok := b.sent[j.ID]
	if !ok {
		b.sent[j.ID] = want // recovered run: its launch carried its limit
		return
	}
	if have != want {
		b.sent[j.ID] = want
		ls.pushTimeLimit(j, want)
	}
}

// pushTimeLimit queues the call that sets j's limit on its batch host.
func (ls *loopState) pushTimeLimit(j *sched.Job, limit int64) {
	id, c := j.ID, ls.c
	ls.agentCall(j, func(ctx context.Context, a *api.AgentClient) error {
		_, err := a.SetTimeLimit(ctx, uint32(id), api.TimeLimitRequest{TimeLimitSec: limit})
		var ae *api.AgentError
		if err != nil && !(errors.As(err, &ae) && ae.Status == http.StatusNotFound) {
			c.do(context.Background(), func(ls *loopState) (any, error) {
				if b := ls.limits(); b.sent[id] == limit {
					b.sent[id] = limitRetry
				}
				return nil, nil
			})
		}
		return err
	})
}

// compressNodes prints node indices as a host list.
func compressNodes(cl *sched.Cluster, idx []int32) string {
	if len(idx) == 0 {
		return ""
	}
	return hostlist.Compress(cl.NodeNames(idx))
}

// assignGPUs picks the device indices of the GPUs j holds on its batch
// host: the ones it already has (relaunch, recovery), else the lowest
// indices no other job on the node holds. The core counts GPUs per node;
// which devices they are is the controller's bookkeeping, stored with the
// job. GPU types are not told apart here (docs/differences.md).
func (ls *loopState) assignGPUs(j *sched.Job) []int {
	cl := ls.st.Cluster
	want := 0
	for _, g := range j.Alloc.Gres {
		if g.Slot == 0 && cl.GresKinds[g.Kind].Name == "gpu" {
			want += int(g.Count)
		}
	}
	if want == 0 {
		return nil
	}
	if have := ls.gpus[j.ID]; len(have) == want {
		return have
	}
	host := j.Alloc.Nodes[0]
	total := 0
	for k, cnt := range cl.Nodes[host].Gres {
		if cl.GresKinds[k].Name == "gpu" {
			total += int(cnt)
		}
	}
	used := map[int]bool{}
	for _, o := range ls.st.Jobs() {
		if o.ID != j.ID && isActive(o) && batchHost(o.Alloc.Nodes) == host {
			for _, d := range ls.gpus[o.ID] {
				used[d] = true
			}
		}
	}
	var out []int
	for d := 0; d < total && len(out) < want; d++ {
		if !used[d] {
			out = append(out, d)
		}
	}
	ls.gpus[j.ID] = out
	ls.dirty[j.ID] = struct{}{}
	return out
}

// JobCounts returns how many jobs the controller holds pending, running
// (or suspended) and finished: a cheap progress probe for `sluice bench
// drain`, which must not list every job while it measures.
func (c *Controller) JobCounts(ctx context.Context) (pending, running, finished int, err error) {
	res, err := c.do(ctx, func(ls *loopState) (any, error) {
		var n [3]int
		for _, j := range ls.st.Jobs() {
			switch b := j.State.Base(); {
			case b == sched.JobPending:
				n[0]++
			case isActive(j):
				n[1]++
			case j.State.Finished():
				n[2]++
			}
		}
		return n, nil
	})
	if err != nil {
		return 0, 0, 0, err
	}
	n := res.([3]int)
	return n[0], n[1], n[2], nil
}
