package ctld

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// loopState is everything the event loop owns.
type loopState struct {
	c   *Controller
	st  *sched.State
	cfg sched.Config
	// intern shares the values submissions repeat (intern.go).
	intern interner

	// specs holds each job's submission (script, environment, output
	// patterns); split array tasks share their array's.
	specs map[sched.JobID]*api.JobSpec
	// site holds SiteFactor values set with scontrol update.
	site map[sched.JobID]int32
	// requid holds who cancelled a job (sacct's "CANCELLED by UID").
	requid map[sched.JobID]uint32
	// gpus holds the GPU device indices given to running jobs.
	gpus map[sched.JobID][]int
	// nodes are the agents' runtime data, parallel to Cluster.Nodes.
	nodes []nodeRT
	// launched marks jobs an agent confirmed it runs (restart count).
	launched map[sched.JobID]int32
	// grace holds preemptions waiting for their GraceTime to end.
	grace map[sched.JobID]sched.Preemption
	// acctPolicy is the accounting snapshot the policy was compiled from.
	acctPolicy *acct.Policy

	prio prioState

	// pending writes of the current batch.
	dirty     map[sched.JobID]struct{}
	events    []EventRow
	nodeDirty map[int32]struct{}
	metaDirty bool
	outbox    []func()
	// keys are the recent submissions' SubmitKeys (submitkey.go).
	keys submitKeys
	// marks counts touch calls: with the lengths above it tells a call
	// that changed something from a read (wroteMark).
	marks int

	wantSched bool
	// registered is when this cluster's state began (its first start),
	// stored as registeredMetaKey: sreport has no usage before it, as
	// slurmdbd has none before the cluster registered.
	registered time.Time
	// wantBatch asks for the pass submissions wait for (Options.
	// BatchCadence); lastBatch is when the last one ran. wantTick asks
	// for a pass on the next whole second (a release, an accounting
	// change).
	wantBatch    bool
	wantTick     bool
	lastBatch    time.Time
	batchCadence bool
	// started is when this controller started (agents that never
	// register after a restart time out from it).
	started   time.Time
	lastSched time.Time
	lastPrio  time.Time
	// lastBackfill is when the last cycle with a backfill pass ran (the
	// controller's start before the first): backfill runs every
	// bf_interval, like Slurm's backfill thread.
	lastBackfill time.Time
	stats        schedStats
	// ext is the sdiag/steps bookkeeping of routes.go and steps.go.
	ext extState
	// allocSeen is when each salloc allocation's holder last said it was
	// alive (allocation.go).
	allocSeen map[sched.JobID]time.Time
}

// schedStats are the counters sdiag-like output can show.
type schedStats struct {
	Cycles     int
	LastCycle  time.Duration
	MaxCycle   time.Duration
	Started    int
	Backfilled int
}

// nodeRT is what the controller knows of a node's agent.
type nodeRT struct {
	registered bool
	info       api.NodeInfo
	lastHeard  time.Time
}

// jobRecord is the stored form of a job.
type jobRecord struct {
	Job        *sched.Job   `json:"job"`
	Spec       *api.JobSpec `json:"spec,omitempty"`
	SiteFactor int32        `json:"site_factor,omitempty"`
	GPUs       []int        `json:"gpus,omitempty"`
	// CancelledBy is the uid that cancelled the job.
	CancelledBy *uint32 `json:"cancelled_by,omitempty"`
}

func newLoopState(ctx context.Context, c *Controller) (*loopState, error) {
	cluster, err := sched.ClusterFromConf(c.cfg)
	if err != nil {
		return nil, fmt.Errorf("ctld: %w", err)
	}
	ls := &loopState{c: c, cfg: c.schedConfig(), batchCadence: c.opts.BatchCadence, specs: map[sched.JobID]*api.JobSpec{}, site: map[sched.JobID]int32{}, requid: map[sched.JobID]uint32{},
		gpus: map[sched.JobID][]int{}, launched: map[sched.JobID]int32{}, grace: map[sched.JobID]sched.Preemption{},
		dirty: map[sched.JobID]struct{}{}, nodeDirty: map[int32]struct{}{}}
	for i := range cluster.Nodes {
		n := &cluster.Nodes[i]
		if n.State.Base() != sched.NodeDown && n.State.Base() != sched.NodeFuture {
			// Like slurmctld, a node is not used until its agent registers.
			n.State = sched.NodeUnknown | n.State&^0xf | sched.NodeFlagNoRespond
		}
	}
	ls.st = sched.NewState(cluster, ls.cfg)
	ls.started = c.now()
	ls.lastBackfill = ls.started
	ls.nodes = make([]nodeRT, len(cluster.Nodes))
	if err := ls.recover(ctx); err != nil {
		return nil, err
	}
	if err := ls.loadPolicy(ctx); err != nil {
		return nil, err
	}
	ls.prio.init(c.cfg, ls.acctPolicy)
	ls.st.Usage = prioUsage{&ls.prio} // GrpTRESMins, GrpWall
	ls.recalcPriorities(c.now())
	return ls, nil
}

// loadPolicy compiles the accounting database for the scheduler.
func (ls *loopState) loadPolicy(ctx context.Context) error {
	var p *sched.Policy
	if ls.c.opts.Accounting != nil {
		as, err := ls.c.opts.Accounting.Load(ctx)
		if err != nil {
			return fmt.Errorf("ctld: load accounting: %w", err)
		}
		ls.acctPolicy = acct.NewPolicy(as)
		p = sched.CompilePolicy(ls.acctPolicy, ls.c.cfg.ClusterName)
	}
	ls.st.SetPolicy(p)
	return nil
}

// recover replays the stored jobs into the fresh state. Jobs are
// submitted again with their own ids (no accounting policy is installed
// yet, so no limit can refuse them), running ones get their allocation
// back, and the stored record then replaces the rebuilt one.
func (ls *loopState) recover(ctx context.Context) error {
	since := ls.c.now().Add(-max(ls.c.cfg.MinJobAge, time.Minute))
	snap, err := ls.c.store.Load(ctx, since)
	if err != nil {
		return fmt.Errorf("ctld: recover: %w", err)
	}
	floor, err := ls.c.checkRecord(snap.Meta, len(snap.Jobs)) // staterecord.go
	if err != nil {
		return err
	}
	for _, n := range snap.Nodes {
		ls.restoreNode(n)
	}
	ls.recoverPartitions(ctx) // scontrol partition changes first: jobs and reservations may name them (partition.go)
	ls.restoreResv(snap.Meta) // before the jobs, which may name a reservation (resv.go)
	next := ls.st.NextJobID
	for _, row := range snap.Jobs {
		var rec jobRecord
		if err := json.Unmarshal(row.Data, &rec); err != nil || rec.Job == nil {
			ls.c.log.Error("unreadable job record left in the store", "job", row.ID, "err", err)
			continue
		}
		if err := ls.replay(&rec); err != nil {
			ls.c.log.Error("cannot recover job; its record stays in the store", "job", row.ID, "err", err)
			continue
		}
		if rec.Job.ID >= next {
			next = rec.Job.ID + 1
		}
	}
	if v, err := strconv.ParseUint(snap.Meta["next_job_id"], 10, 32); err == nil && sched.JobID(v) > next {
		next = sched.JobID(v)
	}
	if sched.JobID(floor) > next {
		next, ls.metaDirty = sched.JobID(floor), true // -c / -R: no job id used twice
	}
	ls.st.NextJobID = next
	ls.registered = ls.c.now().Truncate(time.Second)
	if v, err := strconv.ParseInt(snap.Meta[registeredMetaKey], 10, 64); err == nil {
		ls.registered = time.Unix(v, 0)
	} else {
		ls.metaDirty = true // a new cluster: store when it began
	}
	if len(snap.Jobs) > 0 {
		ls.c.log.Info("recovered jobs from the store", "jobs", len(ls.st.Jobs()), "next_job_id", next)
	}
	return nil
}

func (ls *loopState) restoreNode(n NodeRow) {
	i := ls.st.Cluster.NodeIndex(n.Name)
	if i < 0 {
		return
	}
	node := &ls.st.Cluster.Nodes[i]
	st := sched.NodeState(n.State)
	flags := st & (sched.NodeFlagDrain | sched.NodeFlagFail)
	if st.Base() == sched.NodeDown {
		node.State = sched.NodeDown | flags
	} else {
		node.State = node.State&^(sched.NodeFlagDrain|sched.NodeFlagFail) | flags
	}
	node.Reason, node.ReasonTime, node.ReasonUser = n.Reason, n.ReasonTime, n.ReasonUser
}

// replay puts one stored job back into the state.
func (ls *loopState) replay(rec *jobRecord) error {
	saved := *rec.Job
	st := ls.st
	who := sched.Submitter{User: saved.User, UID: saved.UID, GID: saved.GID, Group: saved.Group, Admin: true}
	req := saved.Req
	req.Hold = true // not refused for the nodes again: the stored record (hold included) wins below
	j, err := ls.resubmit(req, who, &saved)
	if err != nil {
		// A dependency on a purged job, a node list that changed...:
		// rebuild from a bare request; the stored record wins below.
		req.Deps, req.Dependency, req.NodeList, req.Exclude, req.Constraint = nil, "", nil, nil, ""
		if j, err = ls.resubmit(req, who, &saved); err != nil {
			return err
		}
	}
	if j.ID != saved.ID {
		return fmt.Errorf("job id %d came back as %d", saved.ID, j.ID)
	}
	base := saved.State.Base()
	if base == sched.JobRunning || base == sched.JobSuspended {
		plan := sched.Plan{Now: saved.StartTime, Starts: []sched.Start{{Job: j.ID, ArrayTask: -1,
			Partition: saved.Partition, Alloc: saved.Alloc, TimeLimit: saved.TimeLimit}}}
		st.Apply(&plan)
		if base == sched.JobSuspended {
			_ = st.Suspend(j.ID, saved.SuspendTime)
		}
	} else if saved.State.Finished() {
		_ = st.End(j.ID, saved.State.Base(), saved.ExitCode, saved.EndTime)
	}
	*j = saved
	if rec.Spec != nil {
		ls.internSpec(rec.Spec)
		ls.specs[j.ID] = rec.Spec
		if ls.c.now().Sub(saved.SubmitTime) <= SubmitKeyWindow {
			ls.rememberKey(rec.Spec.SubmitKey, j.ID, saved.SubmitTime) // submitkey.go
		}
	}
	if rec.SiteFactor != 0 {
		ls.site[j.ID] = rec.SiteFactor
	}
	if len(rec.GPUs) > 0 {
		ls.gpus[j.ID] = rec.GPUs
	}
	if rec.CancelledBy != nil {
		ls.requid[j.ID] = *rec.CancelledBy
	}
	return nil
}

// resubmit submits a stored job again under its own id.
func (ls *loopState) resubmit(req sched.Request, who sched.Submitter, saved *sched.Job) (*sched.Job, error) {
	ls.st.NextJobID = saved.ID
	return ls.st.Submit(req, who, saved.SubmitTime)
}

// ---- persistence ----

// touch marks a job changed (stored at the end of the batch) and records
// the transition.
func (ls *loopState) touch(j *sched.Job, event, detail string) {
	ls.dirty[j.ID] = struct{}{}
	ls.marks++
	if !isActive(j) {
		delete(ls.gpus, j.ID) // the devices are free again
	}
	if event != "" {
		ls.events = append(ls.events, EventRow{JobID: uint32(j.ID), Time: ls.c.now(), Event: event, Detail: detail})
	}
	ls.epilogSlurmctld(j, event) // prolog.go
}

// takeBatch turns the changes marked since the last batch into the rows
// of one commit and clears the marks: the rows (copies, the job records
// encoded) belong to the committer from now on. nil when nothing changed.
func (ls *loopState) takeBatch() (*Batch, error) {
	if len(ls.dirty) == 0 && len(ls.events) == 0 && len(ls.nodeDirty) == 0 && !ls.metaDirty {
		return nil, nil
	}
	b := &Batch{Events: ls.events, Jobs: make([]JobRow, 0, len(ls.dirty))}
	// The batch's job records are encoded one after the other into one
	// buffer, each row's Data a slice of it: one growing allocation per
	// batch instead of an encoder copy per job.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var ends []int
	for id := range ls.dirty {
		j := ls.st.Job(id)
		if j == nil {
			continue
		}
		rec := jobRecord{Job: j, Spec: ls.specs[id], SiteFactor: ls.site[id], GPUs: ls.gpus[id]}
		if uid, ok := ls.requid[id]; ok {
			rec.CancelledBy = &uid
		}
		if err := enc.Encode(rec); err != nil {
			return nil, fmt.Errorf("encode job %d: %w", id, err)
		}
		ends = append(ends, buf.Len()-1) // without the encoder's newline
		b.Jobs = append(b.Jobs, JobRow{ID: uint32(id), State: int(j.State), Finished: j.State.Finished(), End: j.EndTime})
		b.Runs = append(b.Runs, ls.runRows(j)...)
	}
	data, start := buf.Bytes(), 0
	for i, end := range ends {
		b.Jobs[i].Data = data[start:end:end]
		start = end + 1
	}
	for i := range ls.nodeDirty {
		n := &ls.st.Cluster.Nodes[i]
		b.Nodes = append(b.Nodes, NodeRow{Name: n.Name, State: int(n.State), Reason: n.Reason,
			ReasonTime: n.ReasonTime, ReasonUser: n.ReasonUser})
	}
	if len(b.Jobs) > 0 || ls.metaDirty {
		b.Meta = map[string]string{"next_job_id": strconv.FormatUint(uint64(ls.st.NextJobID), 10),
			registeredMetaKey: strconv.FormatInt(ls.registered.Unix(), 10), dbIdentityKey: ls.c.dbID}
	}
	clear(ls.dirty)
	clear(ls.nodeDirty)
	ls.events = nil // the batch holds the old slice
	ls.metaDirty = false
	return b, nil
}

// takeOutbox hands over the agent calls decided since the last batch:
// they start once the batch is stored.
func (ls *loopState) takeOutbox() []func() {
	out := ls.outbox
	ls.outbox = nil
	return out
}

// ---- accounting rows ----

// runRows returns the accounting rows of j: one per earlier run and one
// for the current run once it started.
func (ls *loopState) runRows(j *sched.Job) []RunRow {
	var out []RunRow
	for i := range j.Runs {
		out = append(out, ls.pastRunRow(j, i))
	}
	if j.StartTime.IsZero() && !j.State.Finished() {
		return out
	}
	row := ls.runRow(j, int(j.RestartCount))
	row.Start, row.End = j.StartTime, j.EndTime
	if !j.State.Finished() {
		row.End = time.Time{}
	}
	row.State = ls.acctState(j)
	row.ExitCode = exitString(j.ExitCode)
	if j.Reason == sched.ReasonBadConstraints {
		// Failed at submission: slurmctld's exit code 1 reads 0:1 in
		// scontrol but 1:0 in sacct, and the record has no start.
		row.ExitCode, row.Start = "1:0", time.Time{}
	}
	if row.Start.IsZero() {
		unstarted(&row, j)
	}
	row.NodeList = compressNodes(ls.st.Cluster, j.Alloc.Nodes)
	row.AllocTRES = ls.licenseTRES(ls.allocTRESVector(j).String(), j) // resv.go
	row.Suspended = int64(j.Suspended / time.Second)
	return append(out, row)
}

// acctState is the State of j's current run in accounting: a job
// cancelled by someone reads "CANCELLED by UID", as slurmdbd records it
// (oracle: sacct -o state%30 showed "CANCELLED by 1001" for jobs alice
// cancelled, running or pending).
func (ls *loopState) acctState(j *sched.Job) string {
	if uid, ok := ls.requid[j.ID]; ok && j.State.Base() == sched.JobCancelled {
		return fmt.Sprintf("%s by %d", j.State, uid)
	}
	return j.State.String()
}

// pastRunRow is the row of j's earlier run i (ended REQUEUED, PREEMPTED,
// NODE_FAIL...) with that run's own submit and eligible times, partition
// and allocation, as Slurm keeps one record per run. Records stored
// before these were kept fall back to the job's current ones.
func (ls *loopState) pastRunRow(j *sched.Job, i int) RunRow {
	r := &j.Runs[i]
	row := ls.runRow(j, i)
	row.Start, row.End, row.State = r.Start, r.End, r.State.String()
	row.ExitCode = exitString(r.ExitCode)
	row.NodeList = compressNodes(ls.st.Cluster, r.Nodes)
	row.Suspended = int64(r.Suspended / time.Second)
	if !r.Submit.IsZero() {
		row.Submit, row.Eligible = r.Submit, r.Eligible
	}
	if len(r.Alloc.Nodes) > 0 {
		part := ""
		if r.Partition >= 0 && int(r.Partition) < len(ls.st.Cluster.Partitions) {
			part = ls.st.Cluster.Partitions[r.Partition].Name
			row.Partition = part
		}
		row.AllocTRES = ls.licenseTRES(ls.allocTRESOf(&r.Alloc, part).String(), j)
	}
	return row
}

func (ls *loopState) runRow(j *sched.Job, restart int) RunRow {
	r := RunRow{JobID: uint32(j.ID), Restart: restart, ArrayTaskID: -1, Name: j.Req.Name, User: j.User,
		UID: j.UID, GID: j.GID, Account: j.Account, QOS: j.QOS, Partition: ls.partitionName(j),
		Submit: j.SubmitTime, Eligible: j.AcctEligible(), ReqTRES: ls.licenseTRES(ls.reqTRES(j), j),
		TimeLimit: limitSeconds(j.TimeLimit)}
	if j.Array != nil {
		r.ArrayJobID, r.ArrayTaskID = uint32(j.Array.JobID), j.Array.TaskID
	}
	if s := ls.specs[j.ID]; s != nil {
		r.WorkDir = s.WorkDir
	}
	return r
}

// unstarted marks the row of a run that has not started (pending, or
// ended without running): without --time its limit is not resolved yet,
// sacct's Partition_Limit.
func unstarted(r *RunRow, j *sched.Job) {
	if j.Req.TimeLimit == 0 {
		r.TimeLimit = api.TimePartitionLimit
	}
}

// exitString prints an exit code as Slurm's "code:signal" (the code is
// kept as a wait status: exit code in the high byte, signal in the low).
func exitString(ws int32) string {
	return fmt.Sprintf("%d:%d", (ws>>8)&0xff, ws&0x7f)
}

// parseExit reads an agent's "code:signal" into a wait status.
func parseExit(s string) int32 {
	var code, sig int32
	fmt.Sscanf(s, "%d:%d", &code, &sig)
	return code<<8 | sig&0x7f
}

func limitSeconds(d time.Duration) int64 {
	if d == sched.Infinite || d <= 0 {
		return api.TimeInfinite
	}
	return int64(d / time.Second)
}

// registeredMetaKey is the ctld_meta row holding loopState.registered
// (Unix seconds).
const registeredMetaKey = "cluster_registered"
