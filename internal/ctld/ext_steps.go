package ctld

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// stepRec is one job step (srun inside an allocation), stored in the
// table ctld_ext_steps of the controller's database.
type stepRec struct {
	JobID    uint32
	StepID   int
	Name     string
	User     string
	UID      uint32
	Account  string
	QOS      string
	Part     string
	NodeList string
	NTasks   int
	Start    time.Time
	End      time.Time
	State    string
	ExitCode string
}

func (s *stepRec) record() api.AcctRecord {
	return api.AcctRecord{JobID: s.JobID, ArrayTaskID: -1, Step: strconv.Itoa(s.StepID), Name: s.Name, User: s.User,
		UID: s.UID, Account: s.Account, QOS: s.QOS, Partition: s.Part, Submit: s.Start, Start: s.Start, End: s.End,
		State: s.State, ExitCode: s.ExitCode, NodeList: s.NodeList, TimeLimitSec: api.TimeInfinite}
}

const stepSchema = `CREATE TABLE IF NOT EXISTS ctld_ext_steps (job_id BIGINT NOT NULL, step_id INTEGER NOT NULL,
	name TEXT NOT NULL, user_name TEXT NOT NULL, uid BIGINT NOT NULL, account TEXT NOT NULL, qos TEXT NOT NULL,
	partition_name TEXT NOT NULL, nodelist TEXT NOT NULL, ntasks INTEGER NOT NULL, start_time BIGINT NOT NULL,
	end_time BIGINT NOT NULL, state TEXT NOT NULL, exit_code TEXT NOT NULL, PRIMARY KEY (job_id, step_id))`

const upsertStep = `INSERT INTO ctld_ext_steps (job_id, step_id, name, user_name, uid, account, qos, partition_name,
	nodelist, ntasks, start_time, end_time, state, exit_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (job_id, step_id) DO UPDATE SET end_time = excluded.end_time, state = excluded.state,
	exit_code = excluded.exit_code`

// stepDB returns the SQL store holding the steps (nil for a store that
// is not ours, e.g. a test double: steps are then kept in memory only).
func (c *Controller) stepDB(ctx context.Context) (*sqlStore, error) {
	s, ok := c.store.(*sqlStore)
	if !ok {
		return nil, nil
	}
	if _, done := stepTables.Load(s); done {
		return s, nil
	}
	if _, err := s.db.ExecContext(ctx, stepSchema); err != nil {
		return nil, fmt.Errorf("store: steps table: %w", err)
	}
	stepTables.Store(s, true)
	return s, nil
}

// stepTables remembers the stores whose steps table exists.
var stepTables sync.Map

func (c *Controller) saveStep(ctx context.Context, r *stepRec) error {
	s, err := c.stepDB(ctx)
	if s == nil || err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, s.rebind(upsertStep), int64(r.JobID), r.StepID, r.Name, r.User, int64(r.UID),
		r.Account, r.QOS, r.Part, r.NodeList, r.NTasks, unixNano(r.Start), unixNano(r.End), r.State, r.ExitCode)
	if err != nil {
		return fmt.Errorf("store: step %d.%d: %w", r.JobID, r.StepID, err)
	}
	return nil
}

// loadSteps reads every stored step (or the in-memory ones).
func (c *Controller) loadSteps(ctx context.Context) ([]stepRec, error) {
	s, err := c.stepDB(ctx)
	if err != nil {
		return nil, err
	}
	if s == nil {
		res, err := c.do(ctx, func(ls *loopState) (any, error) {
			var out []stepRec
			for _, st := range ls.ext.steps {
				out = append(out, st...)
			}
			return out, nil
		})
		if err != nil {
			return nil, err
		}
		return res.([]stepRec), nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT job_id, step_id, name, user_name, uid, account, qos, partition_name,
		nodelist, ntasks, start_time, end_time, state, exit_code FROM ctld_ext_steps ORDER BY job_id, step_id`)
	if err != nil {
		return nil, fmt.Errorf("store: steps: %w", err)
	}
	defer rows.Close()
	var out []stepRec
	for rows.Next() {
		var r stepRec
		var id, uid, st, en int64
		if err := rows.Scan(&id, &r.StepID, &r.Name, &r.User, &uid, &r.Account, &r.QOS, &r.Part, &r.NodeList,
			&r.NTasks, &st, &en, &r.State, &r.ExitCode); err != nil {
			return nil, fmt.Errorf("store: steps: %w", err)
		}
		r.JobID, r.UID, r.Start, r.End = uint32(id), uint32(uid), fromNano(st), fromNano(en)
		out = append(out, r)
	}
	return out, rows.Err()
}

// step begins or ends a job step. Only the job's owner (or an admin) may
// run steps in it, and only while it runs, as srun inside salloc/sbatch.
func (c *Controller) step(ctx context.Context, w Who, req api.StepRequest) (api.StepResponse, error) {
	if req.Op != api.StepBegin && req.Op != api.StepEnd {
		return api.StepResponse{}, &apiErr{status: http.StatusBadRequest, msg: "unknown step operation " + strconv.Quote(req.Op)}
	}
	var next int
	if req.Op == api.StepBegin {
		// Steps numbered so far come from the store (they survive restarts).
		steps, err := c.loadSteps(ctx)
		if err != nil {
			return api.StepResponse{}, err
		}
		for _, s := range steps {
			if s.JobID == req.JobID && s.StepID >= next {
				next = s.StepID + 1
			}
		}
	}
	res, err := c.do(ctx, func(ls *loopState) (any, error) { return ls.stepOp(w, req, next) })
	if err != nil {
		return api.StepResponse{}, err
	}
	rec := res.(stepRec)
	if err := c.saveStep(ctx, &rec); err != nil {
		return api.StepResponse{}, err
	}
	return api.StepResponse{JobID: rec.JobID, StepID: rec.StepID, NodeList: rec.NodeList}, nil
}

func (ls *loopState) stepOp(w Who, req api.StepRequest, next int) (stepRec, error) {
	j := ls.st.Job(sched.JobID(req.JobID))
	if j == nil {
		return stepRec{}, notFound()
	}
	if !ls.mayModify(w, j) {
		return stepRec{}, denied()
	}
	e := &ls.ext
	if e.steps == nil {
		e.steps = map[sched.JobID][]stepRec{}
	}
	now := ls.c.now()
	if req.Op == api.StepEnd {
		for i := range e.steps[j.ID] {
			s := &e.steps[j.ID][i]
			if s.StepID == req.StepID {
				s.End, s.State, s.ExitCode = now, req.State, req.ExitCode
				return *s, nil
			}
		}
		return stepRec{}, &apiErr{status: http.StatusNotFound, msg: "Invalid job step id specified"}
	}
	if j.State.Base() != sched.JobRunning {
		return stepRec{}, &apiErr{status: http.StatusConflict, msg: "Job/step already completing or completed"}
	}
	for _, s := range e.steps[j.ID] {
		next = max(next, s.StepID+1)
	}
	name := req.Name
	if name == "" {
		name = j.Req.Name
	}
	r := stepRec{JobID: uint32(j.ID), StepID: next, Name: name, User: j.User, UID: j.UID, Account: j.Account,
		QOS: j.QOS, Part: ls.partitionName(j), NodeList: compressNodes(ls.st.Cluster, j.Alloc.Nodes),
		NTasks: max(req.NTasks, 1), Start: now, State: "RUNNING", ExitCode: "0:0"}
	e.steps[j.ID] = append(e.steps[j.ID], r)
	return r, nil
}

// registerStepRoutes adds the endpoints that run job steps on the allocated
// nodes (srun inside an allocation, as Slurm's step launch through slurmd).
func (c *Controller) registerStepRoutes(mux *http.ServeMux) {}
