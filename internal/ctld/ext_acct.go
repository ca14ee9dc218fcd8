package ctld

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/sched"
	"github.com/sluice-hpc/sluice/internal/tres"
)

// accounting answers sacct/sreport: the records of the jobs the loop
// still holds (their current form, pending ones included), the stored
// records of purged jobs, and the job steps. A non-admin gets only
// records of their own uid, as Slurm's sacct does for ordinary users.
func (c *Controller) accounting(ctx context.Context, w Who) (api.AcctResponse, error) {
	var live, interactive map[uint32]bool
	var admin bool
	res, err := c.do(ctx, func(ls *loopState) (any, error) {
		admin = ls.isAdmin(w)
		interactive = map[uint32]bool{}
		out := api.AcctResponse{Now: c.now(), Cluster: c.cfg.ClusterName, Admin: admin}
		live = make(map[uint32]bool, len(ls.st.Jobs()))
		for i := range ls.st.Cluster.Nodes {
			out.ClusterCPUs += int64(ls.st.Cluster.Nodes[i].CPUs)
		}
		for _, j := range ls.st.Jobs() {
			live[uint32(j.ID)] = true
			if !admin && j.UID != w.UID {
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
		if live[r.JobID] || !admin && r.UID != w.UID {
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
	out.Records = appendBatchSteps(out.Records, interactive)
	steps, err := c.loadSteps(ctx)
	if err != nil {
		return api.AcctResponse{}, err
	}
	for _, s := range steps {
		if admin || s.UID == w.UID {
			out.Records = append(out.Records, s.record())
		}
	}
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
		rows = append(rows, r)
	}
	return rows
}

func acctRecord(r RunRow) api.AcctRecord {
	return api.AcctRecord{JobID: r.JobID, Restart: r.Restart, ArrayJobID: r.ArrayJobID, ArrayTaskID: r.ArrayTaskID,
		Name: r.Name, User: r.User, UID: r.UID, GID: r.GID, Account: r.Account, QOS: r.QOS, Partition: r.Partition,
		Submit: r.Submit, Eligible: r.Eligible, Start: r.Start, End: r.End, State: r.State, ExitCode: r.ExitCode,
		NodeList: r.NodeList, AllocTRES: r.AllocTRES, ReqTRES: r.ReqTRES, TimeLimitSec: r.TimeLimit, WorkDir: r.WorkDir}
}

// allocationMarker is in the script salloc and srun submit for an
// allocation (cli/salloc.go): such jobs have no batch step in Slurm.
const allocationMarker = "allocation: held until the command exits"

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
func appendBatchSteps(recs []api.AcctRecord, interactive map[uint32]bool) []api.AcctRecord {
	n := len(recs)
	for i := 0; i < n; i++ {
		r := recs[i]
		if r.Step != "" || r.Start.IsZero() || interactive[r.JobID] {
			continue
		}
		recs = append(recs, batchStep(r))
	}
	return recs
}

// batchStep derives the batch step record of run r.
func batchStep(r api.AcctRecord) api.AcctRecord {
	b := r
	b.Step, b.Name, b.ReqTRES, b.Reservation = "batch", "batch", "", ""
	b.Submit, b.Eligible, b.TimeLimitSec = r.Start, time.Time{}, api.TimeInfinite
	if names, err := hostlist.Expand(r.NodeList); err == nil && len(names) > 0 {
		b.NodeList = names[0]
	}
	b.AllocTRES = firstNodeTRES(r.AllocTRES)
	state := r.State
	if f := strings.Fields(state); len(f) > 0 {
		state = f[0]
	}
	switch state {
	case "CANCELLED", "TIMEOUT", "PREEMPTED", "REQUEUED", "DEADLINE":
		b.State = "CANCELLED"
		if r.ExitCode == "0:0" || r.ExitCode == "" {
			b.ExitCode = "0:15"
		}
	default:
		b.State = state
	}
	return b
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
			ServerThreads: runtime.NumGoroutine(), AgentQueue: len(c.launchQ),
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
		switch r.State {
		case "COMPLETED":
			out.JobsCompleted++
		case "CANCELLED":
			out.JobsCanceled++
		case "FAILED", "NODE_FAIL", "TIMEOUT", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE":
			out.JobsFailed++
		}
	}
}
