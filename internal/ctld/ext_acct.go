package ctld

import (
	"context"
	"runtime"
	"slices"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// accounting answers sacct/sreport: the records of the jobs the loop
// still holds (their current form, pending ones included), the stored
// records of purged jobs, and the job steps. A non-admin gets only
// records of their own uid, as Slurm's sacct does for ordinary users.
func (c *Controller) accounting(ctx context.Context, w Who) (api.AcctResponse, error) {
	var live map[uint32]bool
	var admin bool
	res, err := c.do(ctx, func(ls *loopState) (any, error) {
		admin = ls.isAdmin(w)
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
	for _, r := range stored {
		if live[r.JobID] || !admin && r.UID != w.UID {
			continue
		}
		out.Records = append(out.Records, acctRecord(r))
	}
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

// compareRecords orders records by job id, run, then steps after their
// job (batch first, then numbered steps).
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
	if len(a.Step) != len(b.Step) {
		return len(a.Step) - len(b.Step)
	}
	return strings.Compare(a.Step, b.Step)
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
