package ctld

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/sched"
	"github.com/sluice-hpc/sluice/internal/tres"
)

// accounting answers sacct/sreport: the records of the jobs the loop
// still holds (their current form, pending ones included), the stored
// records of purged jobs, and the job steps. With PrivateData=jobs a
// non-admin gets only records of their own uid; without it, everyone's
// (slurmdbd's rule: sacct -a as an ordinary user lists other users' jobs).
func (c *Controller) accounting(ctx context.Context, w Who) (api.AcctResponse, error) {
	var live, interactive map[uint32]bool
	var seeAll bool
	res, err := c.do(ctx, func(ls *loopState) (any, error) {
		out := api.AcctResponse{Now: c.now(), Cluster: c.cfg.ClusterName, Admin: ls.isAdmin(w), Registered: ls.registered}
		seeAll = out.Admin || !c.privateJobs()
		interactive = map[uint32]bool{}
		live = make(map[uint32]bool, len(ls.st.Jobs()))
		for i := range ls.st.Cluster.Nodes {
			out.ClusterCPUs += int64(ls.st.Cluster.Nodes[i].CPUs)
		}
		for _, j := range ls.st.Jobs() {
			live[uint32(j.ID)] = true
			if !seeAll && j.UID != w.UID {
				continue
			}
			if sp := ls.specs[j.ID]; sp != nil && isAllocationScript(sp.Script) {
				interactive[uint32(j.ID)] = true
			}
			for _, r := range ls.liveRuns(j) {
				rec := acctRecord(r)
				rec.Reservation = j.Req.Reservation
				out.Records = append(out.Records, rec)
			}
		}
		return out, nil
	})
	if err != nil {
		return api.AcctResponse{}, err
	}
	out := res.(api.AcctResponse)
	stored, err := c.store.Runs(ctx)
	if err != nil {
		return api.AcctResponse{}, err
	}
	purged := false
	for _, r := range stored {
		if live[r.JobID] || !seeAll && r.UID != w.UID {
			continue
		}
		out.Records = append(out.Records, acctRecord(r))
		purged = true
	}
	if purged {
		if err := c.storedAllocations(ctx, interactive); err != nil {
			return api.AcctResponse{}, err
		}
	}
	n := len(out.Records)
	out.Records = appendBatchSteps(out.Records, interactive)
	if c.cfg.ContainJobs() {
		out.Records = appendExternSteps(out.Records, n)
	}
	steps, err := c.loadSteps(ctx)
	if err != nil {
		return api.AcctResponse{}, err
	}
	for _, s := range steps {
		if seeAll || s.UID == w.UID {
			out.Records = append(out.Records, s.record())
		}
	}
	usage, err := c.loadUsage(ctx)
	if err != nil {
		return api.AcctResponse{}, err
	}
	attachUsage(out.Records, usage)  // MaxRSS, TotalCPU, ...: usage.go
	c.annotateResv(ctx, out.Records) // sacct --reservation: resv.go
	slices.SortStableFunc(out.Records, compareRecords)
	return out, nil
}

// liveRuns are the accounting rows of a job the loop holds: its finished
// runs, the current run, or a PENDING row for a job not started yet.
func (ls *loopState) liveRuns(j *sched.Job) []RunRow {
	rows := ls.runRows(j)
	if j.State.Base() == sched.JobPending {
		if n := len(rows); n > 0 && rows[n-1].Restart == int(j.RestartCount) {
			rows = rows[:n-1]
		}
		r := ls.runRow(j, int(j.RestartCount))
		r.State = j.State.String()
		r.ExitCode = "0:0"
		unstarted(&r, j)
		rows = append(rows, r)
	}
	if n := len(rows); n > 0 && j.State.Base() == sched.JobSuspended {
		// The ongoing suspension counts too: Elapsed stops while suspended.
		rows[n-1].Suspended += int64(ls.c.now().Sub(j.SuspendTime) / time.Second)
	}
	return rows
}

func acctRecord(r RunRow) api.AcctRecord {
	return api.AcctRecord{JobID: r.JobID, Restart: r.Restart, ArrayJobID: r.ArrayJobID, ArrayTaskID: r.ArrayTaskID,
		Name: r.Name, User: r.User, UID: r.UID, GID: r.GID, Account: r.Account, QOS: r.QOS, Partition: r.Partition,
		Submit: r.Submit, Eligible: r.Eligible, Start: r.Start, End: r.End, State: r.State, ExitCode: r.ExitCode,
		NodeList: r.NodeList, AllocTRES: r.AllocTRES, ReqTRES: r.ReqTRES, TimeLimitSec: r.TimeLimit, WorkDir: r.WorkDir,
		SuspendedSec: r.Suspended}
}

// allocationMarker is in the script salloc and srun submit for an
// allocation (cli/salloc.go): such jobs have no batch step in Slurm.
const allocationMarker = api.AllocationMarker

// isAllocationScript reports whether a job script is salloc's or srun's
// allocation holder rather than a batch script.
func isAllocationScript(script string) bool {
	return strings.HasPrefix(script, "#!/bin/sh\n# ") && strings.Contains(script, allocationMarker)
}

// storedAllocations adds to ids the jobs purged from the loop whose
// stored record is an salloc/srun allocation.
func (c *Controller) storedAllocations(ctx context.Context, ids map[uint32]bool) error {
	s, ok := c.store.(*sqlStore)
	if !ok {
		return nil
	}
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT id FROM ctld_jobs WHERE data LIKE ?`), "%"+allocationMarker+"%")
	if err != nil {
		return fmt.Errorf("store: allocations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("store: allocations: %w", err)
		}
		ids[uint32(id)] = true
	}
	return rows.Err()
}

// appendBatchSteps adds the JOBID.batch record of every started run of a
// batch job, as Slurm's sacct lists the batch step under its job: it runs
// on the job's first node with that node's share of the allocation, from
// the run's start to its end; a run killed (cancelled, timed out,
// preempted, requeued) shows the step CANCELLED by SIGTERM, as slurmd
// reports the batch script it killed.
//
// The job's own record keeps the exit code it had when the controller
// ended it: 0:0 for a job cancelled or timed out, whose script's signal
// only reaches the batch step (oracle: "3 CANCELLED+ 0:0" over
// "3.batch CANCELLED 0:15", "5 TIMEOUT 0:0" over "5.batch CANCELLED 0:15").
func appendBatchSteps(recs []api.AcctRecord, interactive map[uint32]bool) []api.AcctRecord {
	n := len(recs)
	for i := 0; i < n; i++ {
		r := recs[i]
		if r.Step != "" {
			continue
		}
		if !r.Start.IsZero() && !interactive[r.JobID] {
			recs = append(recs, batchStep(r))
		}
		if endedByController(r.State) {
			recs[i].ExitCode = "0:0"
		}
	}
	return recs
}

// endedByController reports whether a job record's state is one the
// controller decides (scancel, time limit), not the script's exit.
func endedByController(state string) bool {
	f := strings.Fields(state)
	return len(f) > 0 && (f[0] == "CANCELLED" || f[0] == "TIMEOUT")
}

// appendExternSteps adds the JOBID.extern record of every started run
// among the first n records (batch jobs and salloc/srun allocations
// alike), as Slurm's sacct lists it under PrologFlags=Contain: the job's
// container on all its nodes with the whole allocation, from the run's
// start to its end. It ends COMPLETED 0:0 however the job ended (the
// container is torn down, not killed), and is RUNNING while the job runs
// or is suspended.
func appendExternSteps(recs []api.AcctRecord, n int) []api.AcctRecord {
	for i := 0; i < n; i++ {
		r := recs[i]
		if r.Step != "" || r.Start.IsZero() {
			continue
		}
		e := r
		e.Step, e.Name, e.ReqTRES, e.Reservation = "extern", "extern", "", ""
		e.Submit, e.Eligible, e.TimeLimitSec = r.Start, time.Time{}, api.TimeInfinite
		e.AllocTRES = withoutBilling(r.AllocTRES)
		e.State, e.ExitCode = "COMPLETED", "0:0"
		if st := strings.Fields(r.State); len(st) > 0 && (st[0] == "RUNNING" || st[0] == "SUSPENDED") {
			e.State = "RUNNING"
		}
		recs = append(recs, e)
	}
	return recs
}

// withoutBilling drops billing from a TRES string (a step's TRES carries
// none).
func withoutBilling(s string) string {
	v, err := tres.Parse(s)
	if err != nil || len(v) == 0 {
		return s
	}
	delete(v, "billing")
	return v.String()
}

// batchStep derives the batch step record of run r.
func batchStep(r api.AcctRecord) api.AcctRecord {
	b := r
	b.Step, b.Name, b.ReqTRES, b.Reservation, b.NTasks = "batch", "batch", "", "", 1
	// Slurm's step records are submitted and eligible at the run's start
	// (oracle: 1.batch Submit, Eligible and Start all 16:32:57).
	b.Submit, b.Eligible, b.TimeLimitSec = r.Start, r.Start, api.TimeInfinite
	if names, err := hostlist.Expand(r.NodeList); err == nil && len(names) > 0 {
		b.NodeList = names[0]
	}
	b.AllocTRES = firstNodeTRES(r.AllocTRES)
	state := r.State
	if f := strings.Fields(state); len(f) > 0 {
		state = f[0]
	}
	switch {
	case state == "CANCELLED", state == "TIMEOUT", state == "PREEMPTED", state == "REQUEUED", state == "DEADLINE":
		b.State = "CANCELLED"
		if r.ExitCode == "0:0" || r.ExitCode == "" {
			b.ExitCode = "0:15"
		}
	case state == "FAILED" && killedBySignal(r.ExitCode):
		// A script killed by a signal: slurmd reports its step
		// cancelled (oracle: `kill -9 $$` left "6 FAILED 0:9" over
		// "6.batch CANCELLED 0:9").
		b.State = "CANCELLED"
	default:
		b.State = state
	}
	return b
}

// killedBySignal reports whether an exit code "code:signal" has a signal.
func killedBySignal(exit string) bool {
	_, sig, ok := strings.Cut(exit, ":")
	return ok && sig != "0" && sig != ""
}

// firstNodeTRES is one node's share of an allocation's TRES (the batch
// step's): the counts divided by the node count, node=1.
func firstNodeTRES(s string) string {
	v, err := tres.Parse(s)
	if err != nil || len(v) == 0 {
		return s
	}
	nodes := max(v["node"], 1)
	out := tres.Vector{}
	for k, n := range v {
		if k == "billing" {
			continue
		}
		out[k] = n / nodes
	}
	out["node"] = 1
	return out.String()
}

// compareRecords orders records by job id, run, then steps after their
// job (batch, extern, then numbered steps), as sacct lists them.
func compareRecords(a, b api.AcctRecord) int {
	if a.JobID != b.JobID {
		if a.JobID < b.JobID {
			return -1
		}
		return 1
	}
	if a.Restart != b.Restart {
		return a.Restart - b.Restart
	}
	if a.Step == b.Step {
		return 0
	}
	if a.Step == "" {
		return -1
	}
	if b.Step == "" {
		return 1
	}
	if ra, rb := stepRank(a.Step), stepRank(b.Step); ra != rb {
		return ra - rb
	}
	if len(a.Step) != len(b.Step) {
		return len(a.Step) - len(b.Step)
	}
	return strings.Compare(a.Step, b.Step)
}

// stepRank puts batch before extern before the numbered steps.
func stepRank(step string) int {
	switch step {
	case "batch":
		return 0
	case "extern":
		return 1
	}
	return 2
}

// sdiag answers sdiag: the loop's cycle statistics and the job counters
// since the last reset, counted from the accounting records (so they
// survive a controller restart within the day).
func (c *Controller) sdiag(ctx context.Context, w Who) (api.SdiagResponse, error) {
	res, err := c.do(ctx, func(ls *loopState) (any, error) {
		now := c.now()
		e := &ls.ext
		e.resetAtMidnight(now)
		out := api.SdiagResponse{Now: now, StartTime: e.started, ResetTime: e.reset,
			ServerThreads: int(c.serving.Load()), AgentQueue: len(c.launchQ), StateSave: c.StateSaveError(),
			Cycles: e.cycles, LastCycleUS: e.lastCycle.Microseconds(), MaxCycleUS: e.maxCycle.Microseconds(),
			TotalCycleUS: e.totalCycle.Microseconds(), TotalDepth: e.totalDepth, LastQueueLen: e.lastQueueLen,
			BfTotalJobs: e.bfTotalJobs, BfJobsSinceReset: e.bfSinceReset, BfCycles: e.bfCycles,
			BfLastCycleWhen: e.bfLastWhen, BfLastCycleUS: e.bfLastCycle.Microseconds(),
			BfMaxCycleUS: e.bfMaxCycle.Microseconds(), BfTotalCycleUS: e.bfTotalCycle.Microseconds(),
			BfLastDepth: e.bfLastDepth, BfTotalDepth: e.bfTotalDepth, BfLastQueueLen: e.bfLastQueue,
			BfTotalQueueLen: e.bfTotalQueue}
		if mins := now.Sub(e.reset).Minutes(); mins >= 1 {
			out.CyclesPerMin = int64(float64(e.cycles) / mins)
		} else {
			out.CyclesPerMin = int64(e.cycles)
		}
		for _, j := range ls.st.Jobs() {
			switch j.State.Base() {
			case sched.JobPending:
				out.JobsPending++
			case sched.JobRunning, sched.JobSuspended:
				out.JobsRunning++
			}
		}
		return out, nil
	})
	if err != nil {
		return api.SdiagResponse{}, err
	}
	out := res.(api.SdiagResponse)
	all, err := c.accounting(ctx, Who{UID: 0, User: "root"})
	if err != nil {
		return api.SdiagResponse{}, err
	}
	countJobs(&out, all.Records)
	c.rpc.fill(&out)
	return out, nil
}

// countJobs fills the "since last reset" job counters from the records:
// a job counts as submitted once (its first record), a run as started,
// and a run that ended as completed, canceled or failed (FAILED,
// NODE_FAIL, TIMEOUT, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE).
func countJobs(out *api.SdiagResponse, recs []api.AcctRecord) {
	since := out.ResetTime
	seen := map[uint32]bool{}
	for _, r := range recs {
		if r.Step != "" {
			continue
		}
		if !seen[r.JobID] {
			seen[r.JobID] = true
			if !r.Submit.Before(since) {
				out.JobsSubmitted++
			}
		}
		if !r.Start.IsZero() && !r.Start.Before(since) {
			out.JobsStarted++
		}
		if r.End.IsZero() || r.End.Before(since) {
			continue
		}
		state := r.State
		if f := strings.Fields(state); len(f) > 0 {
			state = f[0] // "CANCELLED by UID"
		}
		switch state {
		case "COMPLETED":
			out.JobsCompleted++
		case "CANCELLED":
			out.JobsCanceled++
		case "FAILED", "NODE_FAIL", "TIMEOUT", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE":
			out.JobsFailed++
		}
	}
}

// ---- node state history (sreport cluster utilization Down/PlannedDown) ----

// Node time classes sreport separates from Idle and Allocated.
const (
	nodeClassUp          = ""
	nodeClassDown        = "down"         // DOWN, or DRAINED with no job left
	nodeClassPlannedDown = "planned_down" // FUTURE, or in a MAINT reservation
)

// nodeHistory follows each node's class; a change closes the stored
// span of the old class and opens one of the new.
type nodeHistory struct {
	open   []nodeSpan // per node index
	closed []nodeSpanRow
}

type nodeSpan struct {
	class string
	since time.Time
}

// nodeSpanRow is one stored span (End zero while open).
type nodeSpanRow struct {
	Node       string
	CPUs       int64
	Class      string
	Start, End time.Time
}

const nodeHistSchema = `CREATE TABLE IF NOT EXISTS ctld_ext_node_states (node TEXT NOT NULL, cpus BIGINT NOT NULL,
	class TEXT NOT NULL, start_time BIGINT NOT NULL, end_time BIGINT NOT NULL, PRIMARY KEY (node, start_time))`

// nodeHistTables remembers the stores whose node history table exists.
var nodeHistTables sync.Map

func (c *Controller) nodeHistDB(ctx context.Context) (*sqlStore, error) {
	s, ok := c.store.(*sqlStore)
	if !ok {
		return nil, nil
	}
	if _, done := nodeHistTables.Load(s); done {
		return s, nil
	}
	if _, err := s.db.ExecContext(ctx, nodeHistSchema); err != nil {
		return nil, fmt.Errorf("store: node history table: %w", err)
	}
	nodeHistTables.Store(s, true)
	return s, nil
}

// nodeSampleEvery bounds the node history's resolution (a scan of the
// nodes' states on the loop: microseconds per thousand nodes).
const nodeSampleEvery = 250 * time.Millisecond

// startNodeSampler records node class changes every nodeSampleEvery (or
// TickInterval when shorter) until the controller stops.
func (c *Controller) startNodeSampler() {
	c.onLoopEvery(min(c.opts.TickInterval, nodeSampleEvery), func(ls *loopState, now time.Time) { ls.sampleNodes(now) })
}

// nodeClass is the sreport class of node i now.
func nodeClass(n *sched.Node, maint bool) string {
	switch {
	case n.State.Base() == sched.NodeDown:
		return nodeClassDown
	case n.State.Has(sched.NodeFlagDrain|sched.NodeFlagFail) && n.Jobs == 0:
		return nodeClassDown
	case n.State.Base() == sched.NodeFuture, maint:
		return nodeClassPlannedDown
	}
	return nodeClassUp
}

// sampleNodes records the nodes whose class changed since the last
// sample (the first sample takes over the spans a previous controller
// left open).
func (ls *loopState) sampleNodes(now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := ls.st.Cluster
	h := ls.ext.nodes
	if h == nil {
		h = &nodeHistory{open: make([]nodeSpan, len(cl.Nodes))}
		ls.ext.nodes = h
		ls.adoptOpenSpans(ctx, h, now)
	}
	var maint sched.NodeSet
	if len(ls.st.Reservations()) > 0 {
		_, maint = ls.st.ReservedNodes(now)
	}
	for i := range cl.Nodes {
		n := &cl.Nodes[i]
		cls := nodeClass(n, maint != nil && maint.Has(i))
		if cls == h.open[i].class {
			continue
		}
		if err := ls.closeSpan(ctx, h, n, now); err != nil {
			ls.c.log.Error("cannot record node state history", "node", n.Name, "err", err)
			return
		}
		if cls != nodeClassUp {
			if err := ls.openSpan(ctx, n, cls, now); err != nil {
				ls.c.log.Error("cannot record node state history", "node", n.Name, "err", err)
				return
			}
		}
		h.open[i] = nodeSpan{class: cls, since: now}
	}
}

// adoptOpenSpans reads the spans left open by the previous controller:
// those of known nodes continue (the class is checked at once), the
// others are closed now.
func (ls *loopState) adoptOpenSpans(ctx context.Context, h *nodeHistory, now time.Time) {
	s, err := ls.c.nodeHistDB(ctx)
	if s == nil || err != nil {
		return
	}
	rows, err := s.db.QueryContext(ctx, `SELECT node, class, start_time FROM ctld_ext_node_states WHERE end_time = 0`)
	if err != nil {
		return
	}
	type open struct {
		node, class string
		start       int64
	}
	var found []open
	for rows.Next() {
		var o open
		if rows.Scan(&o.node, &o.class, &o.start) == nil {
			found = append(found, o)
		}
	}
	rows.Close()
	for _, o := range found {
		if i := ls.st.Cluster.NodeIndex(o.node); i >= 0 {
			h.open[i] = nodeSpan{class: o.class, since: fromNano(o.start)}
			continue
		}
		_, _ = s.db.ExecContext(ctx, s.rebind(`UPDATE ctld_ext_node_states SET end_time = ? WHERE node = ? AND start_time = ?`),
			unixNano(now), o.node, o.start)
	}
}

func (ls *loopState) openSpan(ctx context.Context, n *sched.Node, cls string, now time.Time) error {
	s, err := ls.c.nodeHistDB(ctx)
	if s == nil || err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, s.rebind(`INSERT INTO ctld_ext_node_states (node, cpus, class, start_time, end_time)
		VALUES (?, ?, ?, ?, 0) ON CONFLICT (node, start_time) DO NOTHING`), n.Name, int64(n.CPUs), cls, unixNano(now))
	return err
}

func (ls *loopState) closeSpan(ctx context.Context, h *nodeHistory, n *sched.Node, now time.Time) error {
	i := ls.st.Cluster.NodeIndex(n.Name)
	sp := h.open[i]
	if sp.class == nodeClassUp {
		return nil
	}
	s, err := ls.c.nodeHistDB(ctx)
	if err != nil {
		return err
	}
	if s == nil {
		h.closed = append(h.closed, nodeSpanRow{Node: n.Name, CPUs: int64(n.CPUs), Class: sp.class, Start: sp.since, End: now})
		return nil
	}
	_, err = s.db.ExecContext(ctx, s.rebind(`UPDATE ctld_ext_node_states SET end_time = ? WHERE node = ? AND start_time = ?`),
		unixNano(now), n.Name, unixNano(sp.since))
	return err
}

// nodeUsage answers sreport's Down and PlannedDown CPU time of [from, to).
func (c *Controller) nodeUsage(ctx context.Context, from, to time.Time) (api.NodeUsageResponse, error) {
	res, err := c.do(ctx, func(ls *loopState) (any, error) {
		now := c.now()
		ls.sampleNodes(now)
		var spans []nodeSpanRow
		if h := ls.ext.nodes; h != nil {
			spans = slices.Clone(h.closed)
			for i, sp := range h.open {
				if sp.class != nodeClassUp {
					n := &ls.st.Cluster.Nodes[i]
					spans = append(spans, nodeSpanRow{Node: n.Name, CPUs: int64(n.CPUs), Class: sp.class, Start: sp.since})
				}
			}
		}
		return spans, nil
	})
	if err != nil {
		return api.NodeUsageResponse{}, err
	}
	spans := res.([]nodeSpanRow)
	if s, err := c.nodeHistDB(ctx); err != nil {
		return api.NodeUsageResponse{}, err
	} else if s != nil {
		if spans, err = loadClosedSpans(ctx, s, from, spans); err != nil {
			return api.NodeUsageResponse{}, err
		}
	}
	return sumNodeUsage(spans, from, to, c.now()), nil
}

// loadClosedSpans adds the stored closed spans ending after from.
func loadClosedSpans(ctx context.Context, s *sqlStore, from time.Time, spans []nodeSpanRow) ([]nodeSpanRow, error) {
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT node, cpus, class, start_time, end_time FROM ctld_ext_node_states
		WHERE end_time > ?`), unixNano(from))
	if err != nil {
		return nil, fmt.Errorf("store: node history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r nodeSpanRow
		var st, en int64
		if err := rows.Scan(&r.Node, &r.CPUs, &r.Class, &st, &en); err != nil {
			return nil, fmt.Errorf("store: node history: %w", err)
		}
		r.Start, r.End = fromNano(st), fromNano(en)
		spans = append(spans, r)
	}
	return spans, rows.Err()
}

// sumNodeUsage adds the CPU-seconds of each span inside [from, to) (an
// open span lasts until now).
func sumNodeUsage(spans []nodeSpanRow, from, to, now time.Time) api.NodeUsageResponse {
	var out api.NodeUsageResponse
	for _, sp := range spans {
		end := sp.End
		if end.IsZero() {
			end = now
		}
		s, e := maxTime(sp.Start, from), minTime(end, to)
		if !e.After(s) {
			continue
		}
		v := int64(e.Sub(s)/time.Second) * sp.CPUs
		if sp.Class == nodeClassDown {
			out.DownCPUSeconds += v
		} else if sp.Class == nodeClassPlannedDown {
			out.PlannedDownCPUSeconds += v
		}
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// privateJobs reports PrivateData=jobs: users see only their own jobs'
// accounting.
func (c *Controller) privateJobs() bool { return c.private("jobs") }

// private reports whether PrivateData names what.
func (c *Controller) private(what string) bool {
	return slices.ContainsFunc(c.cfg.PrivateData, func(v string) bool { return strings.EqualFold(v, what) })
}
