package ctld

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

var errNoAgent = errors.New("node agent not registered")

// reasonNotResponding is the reason slurmctld gives a silent node.
const reasonNotResponding = "Not responding"

// agentClient returns a cached client for the agent at addr.
func (c *Controller) agentClient(name, addr string) *api.AgentClient {
	if addr == "" {
		return nil
	}
	c.agentsMu.Lock()
	defer c.agentsMu.Unlock()
	key := name + "@" + addr
	a := c.agents[key]
	if a == nil {
		a = api.NewAgentClient(agentURL(addr), c.clusterKey, c.agentHTTPClient(name)) // agenttls.go
		c.agents[key] = a
	}
	return a
}

// heartbeatInterval is what agents are asked to use.
func (c *Controller) heartbeatInterval() time.Duration {
	if c.opts.HeartbeatInterval > 0 {
		return c.opts.HeartbeatInterval
	}
	hb := c.cfg.SlurmdTimeout / 3
	return min(max(hb, time.Second), 30*time.Second)
}

// agentMux serves the node agents (behind the cluster-key check).
func (c *Controller) agentMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+api.PathAgentRegister, c.agentCall(rpcNodeReg, func(w http.ResponseWriter, r *http.Request) {
		var req api.RegisterRequest
		if err := api.DecodeAgentRequest(r, &req); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		if req.Node.Name != api.AgentNode(r.Context()) {
			api.WriteAgentError(w, http.StatusForbidden, "node name does not match the signature")
			return
		}
		if _, err := c.do(r.Context(), func(ls *loopState) (any, error) { return nil, ls.register(req) }); err != nil {
			api.WriteAgentError(w, http.StatusNotFound, err.Error())
			return
		}
		api.WriteAgentJSON(w, http.StatusOK, api.RegisterResponse{HeartbeatIntervalSec: int(max(c.heartbeatInterval()/time.Second, 1)),
			BootID: c.bootID(), FenceAfterSec: c.fenceAfterSec()})
	}))
	mux.HandleFunc("POST "+api.PathAgentWatch, c.watch)
	mux.HandleFunc("POST "+api.PathAgentHeartbeat, func(w http.ResponseWriter, r *http.Request) {
		var hb api.Heartbeat
		if err := api.DecodeAgentRequest(r, &hb); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		node := api.AgentNode(r.Context())
		res, err := c.do(r.Context(), func(ls *loopState) (any, error) {
			res := ls.heartbeat(node, hb.Load)
			ls.agentDrain(node, hb.Drain) // nodedrain.go
			return res, nil
		})
		if err != nil {
			api.WriteAgentError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		api.WriteAgentJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("POST "+api.PathAgentEvents, c.agentCall(rpcCompleteBatch, func(w http.ResponseWriter, r *http.Request) {
		var ev api.JobEvents
		if err := api.DecodeAgentRequest(r, &ev); err != nil {
			api.WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		node := api.AgentNode(r.Context())
		if err := c.saveEventUsage(r.Context(), ev); err != nil {
			api.WriteAgentError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		_, err := c.do(r.Context(), func(ls *loopState) (any, error) {
			i := ls.st.Cluster.NodeIndex(node)
			if i < 0 {
				return nil, fmt.Errorf("node %q: %w", node, sched.ErrInvalidNodeName)
			}
			for _, e := range ev.Events {
				ls.jobEnded(i, e.Job)
			}
			return nil, nil
		})
		if err != nil {
			api.WriteAgentError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		api.WriteAgentJSON(w, http.StatusOK, struct{}{})
	}))
	mux.HandleFunc("POST "+api.PathAgentEnroll, api.HandleEnroll(c.ca, c.clusterKey, func(node string) bool { return c.cfg.Node(node) != nil }))
	return api.RequireSignature(c.clusterKey, c.now, api.RequireAgentPeer(isNodePeer, agentPeerPolicy, mux))
}

// bootIDs holds each controller's boot id (a Controller's own fields
// belong to controller.go).
var bootIDs sync.Map

// bootID identifies this controller process: random, so that a restart
// is told apart even with a fixed test clock.
func (c *Controller) bootID() string {
	if v, ok := bootIDs.Load(c); ok {
		return v.(string)
	}
	b := make([]byte, 8)
	rand.Read(b)
	v, _ := bootIDs.LoadOrStore(c, hex.EncodeToString(b))
	return v.(string)
}

// watchHold bounds one watch stream; the agent opens the next at once.
const watchHold = 5 * time.Minute

// watch answers an agent's watch with the boot id and keeps the connection
// until the controller stops. The connection is hijacked so that the
// server's graceful shutdown does not wait for it; a controller that dies
// closes it with the process. Either way the agent learns at once that
// the controller went away, and registers again with the next one as soon
// as that one answers, instead of at its next heartbeat.
func (c *Controller) watch(w http.ResponseWriter, r *http.Request) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		api.WriteAgentJSON(w, http.StatusOK, api.WatchResponse{BootID: c.bootID()})
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	body, _ := json.Marshal(api.WatchResponse{BootID: c.bootID()})
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n%s\n", body)
	if buf.Flush() != nil {
		return
	}
	t := time.NewTimer(watchHold)
	defer t.Stop()
	select {
	case <-c.stop:
	case <-t.C:
	}
}

// register handles an agent's registration: the node comes up and the
// jobs it reports are reconciled with the state.
func (ls *loopState) register(req api.RegisterRequest) error {
	now := ls.c.now()
	i := ls.st.Cluster.NodeIndex(req.Node.Name)
	if i < 0 {
		return fmt.Errorf("node %q is not in slurm.conf: %w", req.Node.Name, sched.ErrInvalidNodeName)
	}
	ls.nodes[i] = nodeRT{registered: true, info: req.Node, lastHeard: now}
	n := &ls.st.Cluster.Nodes[i]
	flags := n.State & (sched.NodeFlagDrain | sched.NodeFlagFail)
	back := n.State.Base() == sched.NodeUnknown
	if n.State.Base() == sched.NodeDown {
		rts := ls.c.cfg.ReturnToService
		back = rts >= 2 || rts == 1 && n.Reason == reasonNotResponding
	}
	if back {
		reason := n.Reason
		if reason == reasonNotResponding {
			reason = ""
		}
		_ = ls.st.SetNodeState(n.Name, sched.NodeIdle|flags, reason, now)
		ls.nodeDirty[i] = struct{}{}
	}
	n.State &^= sched.NodeFlagNoRespond
	ls.checkResources(i, req.Node.Resources, now)
	ls.reconcile(i, req.Jobs)
	ls.wantSched = true
	ls.c.log.Info("node registered", "node", n.Name, "addr", req.Node.Addr, "jobs", len(req.Jobs))
	return nil
}

// checkResources drains a node whose agent found less than slurm.conf
// says, as slurmctld does ("Low socket*core*thread count", "Low
// RealMemory").
func (ls *loopState) checkResources(i int32, res api.NodeResources, now time.Time) {
	n := &ls.st.Cluster.Nodes[i]
	reason := ""
	switch {
	case res.CPUs > 0 && int32(res.CPUs) < n.CPUs:
		reason = fmt.Sprintf("Low socket*core*thread count, Low CPUs (%d < %d)", res.CPUs, n.CPUs)
	case res.RealMemoryMB > 0 && res.RealMemoryMB < n.RealMemory:
		reason = fmt.Sprintf("Low RealMemory (reported:%d < %.2f%% of configured:%d)", res.RealMemoryMB, 100.0, n.RealMemory)
	}
	if reason != "" && !n.State.Has(sched.NodeFlagDrain) {
		n.State |= sched.NodeFlagDrain
		n.Reason, n.ReasonTime, n.ReasonUser = reason, now, "slurm"
		ls.nodeDirty[i] = struct{}{}
	}
}

// reconcile compares what an agent runs with what the state says runs on
// its node: finished jobs are ended, unknown ones killed, and jobs the
// agent never got are launched (launch is idempotent).
func (ls *loopState) reconcile(i int32, jobs []api.JobStatus) {
	seen := map[sched.JobID]bool{}
	for _, s := range jobs {
		id := sched.JobID(s.JobID)
		if api.AgentJobFinal(s.State) {
			ls.jobEnded(i, s)
			seen[id] = true
			continue
		}
		j := ls.st.Job(id)
		if j == nil || !isActive(j) || int(j.RestartCount) != s.RestartCount || batchHost(j.Alloc.Nodes) != i {
			ls.c.log.Warn("agent runs a job the controller does not; killing it", "node", ls.st.Cluster.Nodes[i].Name, "job", id)
			ls.agentCallOn(i, id, killOrphan(uint32(id), ls.c.cfg.KillWait))
			continue
		}
		seen[id] = true
		ls.launched[id] = j.RestartCount
		if s.TimeLimitSec != 0 {
			ls.limits().sent[id] = s.TimeLimitSec
		}
		if s.State == api.StateSuspended && j.State.Base() == sched.JobRunning {
			ls.agentCallOn(i, id, resumeCall(uint32(id)))
		}
		if s.State == api.StateRunning && j.State.Base() == sched.JobSuspended {
			ls.agentCallOn(i, id, suspendCall(uint32(id)))
		}
	}
	var missing []*sched.Job
	for _, j := range ls.st.Jobs() {
		if isActive(j) && batchHost(j.Alloc.Nodes) == i && !seen[j.ID] {
			ls.c.log.Info("launching a job its agent does not hold", "job", j.ID, "node", ls.st.Cluster.Nodes[i].Name)
			missing = append(missing, j)
		}
	}
	ls.queueLaunches(missing)
}

// heartbeat records that a node is alive; an unknown or DOWN node is asked
// to register again.
func (ls *loopState) heartbeat(node string, load *api.HostLoad) api.HeartbeatResponse {
	i := ls.st.Cluster.NodeIndex(node)
	if i < 0 || !ls.nodes[i].registered {
		return api.HeartbeatResponse{Reregister: true}
	}
	ls.nodes[i].lastHeard = ls.c.now()
	if load != nil {
		ls.nodes[i].info.Load = load
	}
	n := &ls.st.Cluster.Nodes[i]
	if n.State.Has(sched.NodeFlagNoRespond) {
		n.State &^= sched.NodeFlagNoRespond
	}
	return api.HeartbeatResponse{}
}

// agentStates maps the agent's final states to the core's.
var agentStates = map[string]sched.JobState{
	api.StateCompleted: sched.JobCompleted, api.StateFailed: sched.JobFailed, api.StateCancelled: sched.JobCancelled,
	api.StateTimeout: sched.JobTimeout, api.StateNodeFail: sched.JobNodeFail, api.StatePreempted: sched.JobPreempted,
	api.StateOutOfMemory: sched.JobOutOfMemory,
}

// jobEnded handles a job's end reported by node i. It is idempotent:
// agents resend events until they are acknowledged.
func (ls *loopState) jobEnded(i int32, s api.JobStatus) {
	j := ls.st.Job(sched.JobID(s.JobID))
	if j == nil || int(j.RestartCount) != s.RestartCount {
		return
	}
	exit := parseExit(s.ExitCode)
	if !isActive(j) {
		if j.State.Base() == sched.JobCancelled && j.ExitCode == 0 && exit != 0 {
			j.ExitCode = exit // scancel'd job: record the signal it died of
			ls.touch(j, "", "")
		}
		return
	}
	if batchHost(j.Alloc.Nodes) != i {
		return
	}
	state, ok := agentStates[s.State]
	if !ok {
		return // REQUEUED: the controller requeued it already
	}
	if s.ScriptFailure != "" && ls.nodeScriptFailed(i, j, s) { // prolog.go
		return
	}
	if state == sched.JobCompleted && exit != 0 {
		state = sched.JobFailed
	}
	end := s.EndTime
	if end.IsZero() || end.After(ls.c.now()) {
		end = ls.c.now()
	}
	if end.Before(j.StartTime) {
		end = j.StartTime
	}
	ls.prio.charge(ls, j, end)
	if err := ls.st.End(j.ID, state, exit, end); err != nil {
		return
	}
	if s.Reason != "" && state != sched.JobCompleted {
		j.StateDesc = s.Reason
	}
	if _, ok := ls.launched[j.ID]; !ok {
		ls.limits().ended[j.ID] = j.RestartCount // see launchDone
	}
	delete(ls.launched, j.ID)
	ls.touch(j, "end", state.String()+" "+s.ExitCode)
	ls.wantSched = true
}

// timers runs the periodic work: silent nodes, grace-time preemptions,
// time-limit backstop, begin times, the backfill interval and purging.
func (ls *loopState) timers(now time.Time) {
	ls.checkNodes(now)
	ls.checkAllocations(now)
	ls.checkGrace(now)
	ls.checkTimeLimits(now)
	backfill := ls.cfg.Backfill.Enabled && ls.backfillDue(now)
	if backfill || now.Sub(ls.lastSched) >= ls.backfillInterval() || now.Sub(ls.lastPrio) >= ls.prio.period() {
		ls.wantSched = true
	}
	for _, j := range ls.st.Jobs() {
		if j.State.Base() == sched.JobPending && j.Reason == sched.ReasonBeginTime && !j.Req.BeginTime.After(now) {
			ls.wantSched = true
			break
		}
	}
	ls.purge(now)
}

// checkNodes marks DOWN the nodes silent for SlurmdTimeout.
func (ls *loopState) checkNodes(now time.Time) {
	timeout := ls.c.cfg.SlurmdTimeout
	if timeout <= 0 {
		return
	}
	for i := range ls.nodes {
		rt := &ls.nodes[i]
		silent := rt.registered && now.Sub(rt.lastHeard) > timeout
		// A node that held jobs when the controller (re)started and
		// whose agent never came back is as silent as one that stopped.
		lost := !rt.registered && now.Sub(ls.started) > timeout && ls.st.Cluster.Nodes[i].Jobs > 0
		if silent || lost {
			ls.c.log.Warn("node not responding, setting DOWN", "node", ls.st.Cluster.Nodes[i].Name)
			ls.nodeDown(int32(i), reasonNotResponding, "slurm", now)
		}
	}
}

// nodeDown sets node i DOWN and ends (or requeues, the run recorded as
// NODE_FAIL) its jobs: sched.NodeFail, then the agent is told to kill them
// in case it is still alive.
func (ls *loopState) nodeDown(i int32, reason, user string, now time.Time) {
	n := &ls.st.Cluster.Nodes[i]
	nodes, runs := map[sched.JobID][]int32{}, map[sched.JobID]int32{}
	for _, j := range ls.st.Jobs() {
		if isActive(j) && hasNode(j.Alloc.Nodes, i) {
			nodes[j.ID], runs[j.ID] = append([]int32(nil), j.Alloc.Nodes...), j.RestartCount
			ls.prio.charge(ls, j, now) // the run ends (NODE_FAIL) or is requeued here
		}
	}
	hit, _ := ls.st.NodeFail(n.Name, reason, now)
	if reason == reasonNotResponding {
		n.State |= sched.NodeFlagNoRespond
		ls.nodes[i].registered = false
	}
	n.ReasonUser = user
	ls.nodeDirty[i] = struct{}{}
	for _, id := range hit {
		if j := ls.st.Job(id); j != nil {
			ls.touch(j, "node-fail", n.Name)
			ls.terminateOn(j, nodes[id], runs[id], api.StateNodeFail)
		}
	}
	ls.wantSched = true
}

func hasNode(nodes []int32, i int32) bool {
	for _, n := range nodes {
		if n == i {
			return true
		}
	}
	return false
}

// checkGrace carries out preemptions whose grace time ended.
func (ls *loopState) checkGrace(now time.Time) {
	for id, p := range ls.grace {
		if now.Before(p.GraceEnd) {
			continue
		}
		delete(ls.grace, id)
		j := ls.st.Job(id)
		if j == nil || !isActive(j) {
			continue
		}
		was := j.State
		if j.State.Base() == sched.JobRunning && p.Mode.Action() != sched.PreemptSuspend {
			ls.prio.charge(ls, j, now) // its run ends here (see chargePreempted)
		}
		if ls.st.Preempted(id, p.Mode, now) == nil {
			ls.afterPreempt(j, was, p.Mode)
			ls.wantSched = true
		}
	}
}

// checkTimeLimits is a backstop for agents that do not report a timed-out
// job: KillWait plus a minute after the limit the controller ends it.
// The controller itself ends the jobs whose reservation has ended (its
// end plus ResvOverRun): their agents know only their own limit.
func (ls *loopState) checkTimeLimits(now time.Time) {
	slack := ls.c.cfg.KillWait + time.Minute
	for _, id := range ls.st.TimedOut(now.Add(-slack)) {
		ls.endTimedOut(ls.st.Job(id), now, "controller")
	}
	for _, id := range ls.st.ResvEnded(now) {
		ls.endTimedOut(ls.st.Job(id), now, "reservation ended")
	}
}

// endTimedOut ends running job j with TIMEOUT at now on the controller's
// own decision (why, for the job's history) and has its agents stop it.
// Its run since the last priority pass is charged first, as an agent's
// end report would be.
func (ls *loopState) endTimedOut(j *sched.Job, now time.Time, why string) bool {
	nodes := append([]int32(nil), j.Alloc.Nodes...)
	ls.prio.charge(ls, j, now)
	if ls.st.End(j.ID, sched.JobTimeout, 0, now) != nil {
		return false
	}
	ls.touch(j, "end", "TIMEOUT ("+why+")")
	ls.terminateOn(j, nodes, j.RestartCount, api.StateTimeout)
	ls.wantSched = true
	return true
}

// purge forgets jobs finished more than MinJobAge ago (they stay in the
// store for accounting).
func (ls *loopState) purge(now time.Time) {
	age := ls.c.cfg.MinJobAge
	if age <= 0 {
		return
	}
	cutoff := now.Add(-age)
	ls.st.Purge(func(j *sched.Job) bool {
		if j.EndTime.Before(cutoff) {
			delete(ls.specs, j.ID)
			delete(ls.site, j.ID)
			delete(ls.requid, j.ID)
			delete(ls.gpus, j.ID)
			delete(ls.launched, j.ID)
			delete(ls.limits().ended, j.ID)
			return true
		}
		return false
	})
}

func isActive(j *sched.Job) bool {
	b := j.State.Base()
	return b == sched.JobRunning || b == sched.JobSuspended
}

// partitionName returns the partition j runs in, or its requested list.
func (ls *loopState) partitionName(j *sched.Job) string {
	cl := ls.st.Cluster
	if j.Partition >= 0 && int(j.Partition) < len(cl.Partitions) {
		return cl.Partitions[j.Partition].Name
	}
	names := make([]string, 0, len(j.Partitions))
	for _, p := range j.Partitions {
		names = append(names, cl.Partitions[p].Name)
	}
	return strings.Join(names, ",")
}

// killOrphan ends a job an agent runs that the controller does not know.
func killOrphan(id uint32, kw time.Duration) func(context.Context, *api.AgentClient) error {
	return func(ctx context.Context, a *api.AgentClient) error {
		_, err := a.Terminate(ctx, id, api.TerminateRequest{State: api.StateCancelled, KillWaitSec: int64(kw / time.Second)})
		return err
	}
}

// resumeCall resumes a job an agent holds suspended while the controller
// has it running.
func resumeCall(id uint32) func(context.Context, *api.AgentClient) error {
	return func(ctx context.Context, a *api.AgentClient) error {
		_, err := a.Resume(ctx, id)
		return err
	}
}

// suspendCall stops a job the controller has suspended.
func suspendCall(id uint32) func(context.Context, *api.AgentClient) error {
	return func(ctx context.Context, a *api.AgentClient) error {
		_, err := a.Suspend(ctx, id)
		return err
	}
}
