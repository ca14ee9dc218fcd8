package ctld

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/hostlist"
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
	// What scontrol show step prints besides (kept in memory only: after
	// a controller restart a step shows no limit, its default
	// distribution and no srun).
	TimeLimitSec   int64
	Dist, SrunHost string
	SrunPid        int
}

func (s *stepRec) record() api.AcctRecord {
	return api.AcctRecord{JobID: s.JobID, ArrayTaskID: -1, Step: strconv.Itoa(s.StepID), Name: s.Name, User: s.User,
		UID: s.UID, Account: s.Account, QOS: s.QOS, Partition: s.Part, Submit: s.Start, Start: s.Start, End: s.End,
		State: s.State, ExitCode: s.ExitCode, NodeList: s.NodeList, TimeLimitSec: api.TimeInfinite, NTasks: s.NTasks}
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
// nodes (srun inside an allocation, as Slurm's step launch through slurmd):
// the controller checks the caller may use the job, picks the nodes and
// tasks, has each node's agent prepare its part, and answers srun with
// where to connect and a credential for each node.
func (c *Controller) registerStepRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST "+api.PathStepLaunch, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.StepLaunchRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.launchStep(ctx, w, req)
	}))
	c.registerStepList(mux)      // squeue -s: steps_list.go
	c.registerAdminRoutes(mux)   // scontrol write batch_script, setdebug: admin.go
	c.registerAssocMgrRoute(mux) // scontrol show assoc_mgr: assocmgr.go
	c.registerAttachRoute(mux)   // sattach.go
	c.recoverSteps()
}

// stepAttachTimeout is how long agents wait for srun's I/O connection.
const stepAttachTimeout = 60 * time.Second

// stepWatchInterval is how often a running step's job is checked: a step
// ends with its job (scancel, time limit, requeue) and stops while the job
// is suspended, as Slurm's steps do.
const stepWatchInterval = 250 * time.Millisecond

// stepPlan is a step about to be launched: its record and each node's part.
type stepPlan struct {
	rec      stepRec
	parts    []api.AgentStepLaunch
	addrs    []string
	warnings []string
}

// launchStep creates a step of a running job and has its nodes' agents
// prepare the tasks; it returns what srun needs to connect to them.
func (c *Controller) launchStep(ctx context.Context, w Who, req api.StepLaunchRequest) (api.StepLaunchResponse, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return api.StepLaunchResponse{}, &apiErr{status: http.StatusBadRequest, msg: "No command given to execute."}
	}
	next, err := c.nextStepID(ctx, req.JobID)
	if err != nil {
		return api.StepLaunchResponse{}, err
	}
	res, err := c.do(ctx, func(ls *loopState) (any, error) { return ls.planStep(w, req, next) })
	if err != nil {
		return api.StepLaunchResponse{}, err
	}
	plan := res.(*stepPlan)
	if err := c.saveStep(ctx, &plan.rec); err != nil {
		return api.StepLaunchResponse{}, err
	}
	if err := c.prepareStepParts(plan); err != nil {
		c.finishStep(plan.rec.JobID, plan.rec.StepID, api.StateFailed, "1:0")
		c.stepPrologFailed(plan, err) // prolog.go
		return api.StepLaunchResponse{}, &apiErr{status: http.StatusBadGateway, msg: err.Error()}
	}
	out := api.StepLaunchResponse{JobID: plan.rec.JobID, StepID: plan.rec.StepID, NodeList: plan.rec.NodeList,
		NTasks: plan.rec.NTasks, Warnings: plan.warnings, CA: c.CACertPEM()}
	// Agents check credentials against their own clock: sign with the
	// real time even when the controller runs on a test clock.
	now := time.Now()
	names := make([]string, len(plan.parts))
	for i, p := range plan.parts {
		out.Nodes = append(out.Nodes, api.StepNodeIO{Node: p.Node, NodeID: p.NodeID, Tasks: p.Tasks, URL: plan.addrs[i],
			Credential: api.SignStepIO(c.clusterKey, plan.rec.JobID, plan.rec.StepID, now)})
		names[i] = p.Node
	}
	go c.followStep(plan.rec.JobID, plan.rec.StepID, names)
	return out, nil
}

// nextStepID numbers the job's next step from the stored steps (they
// survive restarts); the loop also checks the ones in memory.
func (c *Controller) nextStepID(ctx context.Context, job uint32) (int, error) {
	db, err := c.stepDB(ctx)
	if err != nil {
		return 0, err
	}
	if db == nil {
		return 0, nil // in memory only: planStep numbers from there
	}
	var last *int64
	if err := db.db.QueryRowContext(ctx, db.rebind(`SELECT MAX(step_id) FROM ctld_ext_steps WHERE job_id = ?`),
		int64(job)).Scan(&last); err != nil {
		return 0, fmt.Errorf("store: steps of job %d: %w", job, err)
	}
	if last == nil {
		return 0, nil
	}
	return int(*last) + 1, nil
}

// planStep checks the request against the job and lays the tasks out on
// its nodes: -N nodes (default all, or fewer when fewer tasks), -n tasks
// (default the job's, at least one per node), block distribution
// (consecutive task ids fill a node before the next), as srun(1) does.
func (ls *loopState) planStep(w Who, req api.StepLaunchRequest, next int) (*stepPlan, error) {
	j := ls.st.Job(sched.JobID(req.JobID))
	if j == nil {
		return nil, notFound()
	}
	if !ls.mayModify(w, j) {
		return nil, denied()
	}
	switch j.State.Base() {
	case sched.JobRunning:
	case sched.JobPending:
		return nil, &apiErr{status: http.StatusConflict, msg: "Job is pending execution"}
	case sched.JobSuspended:
		return nil, &apiErr{status: http.StatusConflict, msg: "Requested operation is presently disabled"}
	default:
		return nil, &apiErr{status: http.StatusConflict, msg: "Job/step already completing or completed"}
	}
	order, err := ls.stepSlots(j, req.NodeList, req.Exclude)
	if err != nil {
		return nil, err
	}
	nnodes, ntasks, warns, err := stepShape(len(order), int(j.Req.NTasks), req.NNodes, req.NTasks)
	if err != nil {
		return nil, err
	}
	for _, s := range ls.ext.steps[j.ID] {
		next = max(next, s.StepID+1)
	}
	order = order[:nnodes]
	stepNodes := make([]int32, nnodes)
	caps := make([]int, nnodes)
	total := 0
	for i, slot := range order {
		stepNodes[i] = j.Alloc.Nodes[slot]
		caps[i] = int(j.Alloc.CPUs[slot]) / max(req.CPUsPerTask, 1)
		total += int(j.Alloc.CPUs[slot])
	}
	if !req.Overcommit && req.CPUsPerTask <= 1 && ntasks > total {
		return nil, &apiErr{status: http.StatusBadRequest, msg: "More processors requested than permitted"}
	}
	dist := req.Distribution
	if dist == "" {
		dist = "block"
		if ntasks <= nnodes {
			dist = "cyclic"
		}
	}
	layout := stepLayout(caps, ntasks, dist, req.PlaneSize)
	stepNodes, layout, slots := usedNodes(stepNodes, layout)
	for i := range slots {
		slots[i] = order[slots[i]] // the node's slot in the job's allocation
	}
	nnodes = len(stepNodes)
	argv, err := multiProgArgv(req.MultiProg, ntasks)
	if err != nil {
		return nil, err
	}
	counts := make([]int, nnodes)
	for slot, ts := range layout {
		counts[slot] = len(ts)
	}
	plan := &stepPlan{warnings: warns}
	kw := int64(ls.c.cfg.KillWait / time.Second)
	jobCtx := ls.launchRequest(j)
	jobCtx.Script, jobCtx.Args, jobCtx.Environment, jobCtx.StdOut, jobCtx.StdErr, jobCtx.StdIn = "", nil, nil, "", "", ""
	nodeList := compressNodes(ls.st.Cluster, stepNodes)
	for slot, idx := range stepNodes {
		n := &ls.st.Cluster.Nodes[idx]
		rt := ls.nodes[idx]
		if !rt.registered || rt.info.Addr == "" {
			return nil, &apiErr{status: http.StatusServiceUnavailable, msg: "Required node not available (down, drained or reserved): " + n.Name}
		}
		part := api.AgentStepLaunch{Job: jobCtx, StepID: next, Name: req.Name, Argv: req.Argv, Cwd: req.Cwd, Env: req.Env,
			NodeID: slot, NTasks: ntasks, NNodes: nnodes, NodeList: nodeList, TasksPerNode: tasksPerNode(counts),
			CPUsPerTask: req.CPUsPerTask, TimeLimitSec: req.TimeLimitSec, KillWaitSec: kw, Input: req.Input,
			AttachTimeoutSec: int(stepAttachTimeout / time.Second), Distribution: dist, CPUBind: req.CPUBind,
			MPI: ls.stepMPI(req.MPI), TaskCounts: contiguousCounts(layout)}
		if slot == 0 {
			part.Pty = req.Pty
		}
		part.Node = n.Name
		part.Job.CPUs = int(j.Alloc.CPUs[slots[slot]])
		if req.Exact {
			part.StepCPUs = min(part.Job.CPUs, counts[slot]*max(req.CPUsPerTask, 1))
		}
		if !ls.cfg.ConsumeMemory {
			part.Job.MemoryMB = 0
		} else {
			part.Job.MemoryMB = j.Alloc.Mem[slots[slot]]
		}
		part.Job.GPUs = ls.stepGPUs(j, slots[slot])
		part.Job.Constrain = ls.constraints(j, slots[slot])
		part.GPUs = part.Job.GPUs
		part.Tasks = layout[slot]
		for _, t := range part.Tasks {
			if argv != nil {
				part.TaskArgv = append(part.TaskArgv, argv[t])
			}
		}
		plan.parts = append(plan.parts, part)
		plan.addrs = append(plan.addrs, rt.info.Addr)
	}
	name := req.Name
	if name == "" {
		name = j.Req.Name
	}
	plan.rec = stepRec{JobID: uint32(j.ID), StepID: next, Name: name, User: j.User, UID: j.UID, Account: j.Account,
		QOS: j.QOS, Part: ls.partitionName(j), NodeList: nodeList, NTasks: ntasks, Start: ls.c.now(), State: "RUNNING",
		ExitCode: "0:0", TimeLimitSec: req.TimeLimitSec, Dist: stepDist(req.Distribution, ntasks, nodeList),
		SrunHost: req.SrunHost, SrunPid: req.SrunPid}
	if ls.ext.steps == nil {
		ls.ext.steps = map[sched.JobID][]stepRec{}
	}
	ls.ext.steps[j.ID] = append(ls.ext.steps[j.ID], plan.rec)
	return plan, nil
}

// stepShape resolves the step's node and task counts within an allocation
// of allocNodes nodes for a job of jobTasks tasks. Asking for more nodes
// than allocated is srun's "Only allocated N nodes asked for M"; fewer
// tasks than nodes shrink the node count with srun's warning.
func stepShape(allocNodes, jobTasks, nnodes, ntasks int) (int, int, []string, error) {
	if nnodes < 0 || ntasks < 0 {
		return 0, 0, nil, &apiErr{status: http.StatusBadRequest, msg: "Invalid node or task count"}
	}
	if nnodes > allocNodes {
		return 0, 0, nil, &apiErr{status: http.StatusBadRequest,
			msg: fmt.Sprintf("Only allocated %d nodes asked for %d", allocNodes, nnodes)}
	}
	explicitNodes := nnodes > 0
	if nnodes == 0 {
		nnodes = allocNodes
		if ntasks > 0 {
			nnodes = min(ntasks, allocNodes)
		}
	}
	if ntasks == 0 {
		ntasks = nnodes
		if !explicitNodes {
			ntasks = max(jobTasks, nnodes)
		}
	}
	var warns []string
	if ntasks < nnodes {
		warns = append(warns, fmt.Sprintf("can't run %d processes on %d nodes, setting nnodes to %d", ntasks, nnodes, ntasks))
		nnodes = ntasks
	}
	return nnodes, ntasks, warns, nil
}

// multiProgArgv checks --multi-prog's records against the step's task
// count and returns each task's command (nil without --multi-prog).
func multiProgArgv(m *api.MultiProg, ntasks int) ([][]string, error) {
	if m == nil {
		return nil, nil
	}
	if errs := m.Check(ntasks); errs != nil {
		return nil, &apiErr{status: http.StatusBadRequest, msg: api.MultiProgErrorPrefix + strings.Join(errs, "\n")}
	}
	out := make([][]string, ntasks)
	for t := range out {
		out[t], _ = m.Argv(t)
	}
	return out, nil
}

// stepSlots are the allocation slots a step may use, in allocation order:
// all of them, or those of srun -w (every named node must be allocated,
// as in Slurm) less those of -x.
func (ls *loopState) stepSlots(j *sched.Job, include, exclude string) ([]int, error) {
	names := func(expr string) (map[string]bool, error) {
		if expr == "" {
			return nil, nil
		}
		list, err := hostlist.Expand(expr)
		if err != nil {
			return nil, &apiErr{status: http.StatusBadRequest, msg: sched.ErrInvalidNodeName.Error()}
		}
		set := map[string]bool{}
		for _, n := range list {
			set[n] = true
		}
		return set, nil
	}
	in, err := names(include)
	if err != nil {
		return nil, err
	}
	out, err := names(exclude)
	if err != nil {
		return nil, err
	}
	var slots []int
	for slot, idx := range j.Alloc.Nodes {
		name := ls.st.Cluster.Nodes[idx].Name
		if (in == nil || in[name]) && !out[name] {
			slots = append(slots, slot)
		}
		delete(in, name)
	}
	if len(in) > 0 || len(slots) == 0 {
		return nil, &apiErr{status: http.StatusBadRequest, msg: "Requested node configuration is not available"}
	}
	return slots, nil
}

// allocPerNode is a running job's SLURM_JOB_CPUS_PER_NODE and
// SLURM_TASKS_PER_NODE: its CPUs on each node, and its tasks laid out over
// them as a step's are ("2(x3)" for -N3 -n6 on 2-CPU nodes).
func allocPerNode(j *sched.Job) (cpus, tasks string) {
	if len(j.Alloc.CPUs) == 0 {
		return "", ""
	}
	per := max(int(j.Req.CPUsPerTask), 1)
	caps := make([]int, len(j.Alloc.CPUs))
	for i, c := range j.Alloc.CPUs {
		caps[i] = int(c) / per
	}
	return tasksPerNode(int32s(j.Alloc.CPUs)), tasksPerNode(stepCounts(caps, max(int(j.Req.NTasks), len(caps))))
}

// stepCounts is how many tasks each node of the step runs, as Slurm's
// step layout counts them: one node after the other, one task at a time,
// skipping nodes whose CPUs (caps, in tasks) are used up; once every node
// is full (-O) the round goes on over all of them.
func stepCounts(caps []int, ntasks int) []int {
	out := make([]int, len(caps))
	full := true
	for _, c := range caps {
		if c > 0 {
			full = false
		}
	}
	for t := 0; t < ntasks; {
		placed := false
		for i := range out {
			if t < ntasks && (full || out[i] < caps[i]) {
				out[i]++
				t++
				placed = true
			}
		}
		if !placed {
			full = true
		}
	}
	return out
}

// usedNodes drops the nodes a layout gave no task (-m ...,Pack): the step
// runs on the others only.
// It also returns the kept nodes' slots in the job's allocation.
func usedNodes(nodes []int32, layout [][]int) ([]int32, [][]int, []int) {
	var n []int32
	var l [][]int
	var slots []int
	for i, ts := range layout {
		if len(ts) > 0 {
			n, l, slots = append(n, nodes[i]), append(l, ts), append(slots, i)
		}
	}
	return n, l, slots
}

// packCounts is -m ...,Pack: each node is filled to its CPUs before the
// next takes a task (the rest round the nodes once all are full).
func packCounts(caps []int, ntasks int) []int {
	out := make([]int, len(caps))
	left := ntasks
	for i, c := range caps {
		out[i] = min(c, left)
		left -= out[i]
	}
	for i := 0; left > 0; i = (i + 1) % len(out) {
		out[i]++
		left--
	}
	return out
}

// stepLayout assigns task ids to the step's nodes (slots): block runs
// consecutive ids on a node before the next, cyclic deals them one at a
// time to nodes with room left, plane deals blocks of plane ids; the
// counts per node are stepCounts' in every case (srun -m).
func stepLayout(caps []int, ntasks int, dist string, plane int) [][]int {
	counts := stepCounts(caps, ntasks)
	if strings.HasSuffix(dist, ",pack") {
		counts = packCounts(caps, ntasks)
	}
	out := make([][]int, len(caps))
	base, _, _ := strings.Cut(strings.SplitN(dist, ",", 2)[0], ":")
	chunk := 1
	switch base {
	case "block", "*", "":
		t := 0
		for i, c := range counts {
			for k := 0; k < c; k++ {
				out[i] = append(out[i], t)
				t++
			}
		}
		return out
	case "plane":
		chunk = max(plane, 1)
	}
	for t := 0; t < ntasks; {
		for i := range out {
			for k := 0; k < chunk && t < ntasks && len(out[i]) < counts[i]; k++ {
				out[i] = append(out[i], t)
				t++
			}
		}
	}
	return out
}

// contiguousCounts is each node's task count when the tasks are laid out
// in blocks (node 0 has the first ranks, node 1 the next, ...), as
// PMI_process_mapping's vector describes them; nil for another layout.
func contiguousCounts(layout [][]int) []int {
	next := 0
	counts := make([]int, len(layout))
	for i, tasks := range layout {
		for _, t := range tasks {
			if t != next {
				return nil
			}
			next++
		}
		counts[i] = len(tasks)
	}
	return counts
}

// stepMPI is the step's MPI type: srun --mpi, else slurm.conf's
// MpiDefault; "" for none.
func (ls *loopState) stepMPI(asked string) string {
	if asked == "" {
		asked = ls.c.cfg.Set["MpiDefault"]
	}
	if strings.EqualFold(asked, api.MPIPMI2) || strings.EqualFold(asked, "mpi/pmi2") {
		return api.MPIPMI2
	}
	return ""
}

// tasksPerNode prints task counts as Slurm's SLURM_TASKS_PER_NODE: runs
// of equal counts compressed, "2(x3),1".
func tasksPerNode(counts []int) string {
	var parts []string
	for i := 0; i < len(counts); {
		k := i
		for k < len(counts) && counts[k] == counts[i] {
			k++
		}
		if k-i > 1 {
			parts = append(parts, fmt.Sprintf("%d(x%d)", counts[i], k-i))
		} else {
			parts = append(parts, strconv.Itoa(counts[i]))
		}
		i = k
	}
	return strings.Join(parts, ",")
}

// stepGPUs returns the device indices of j's GPUs on its slot-th node: the
// batch host's are the controller's bookkeeping; on the other nodes the
// first devices (the core counts GPUs per node, not which ones).
func (ls *loopState) stepGPUs(j *sched.Job, slot int) []int {
	if slot == 0 {
		return ls.assignGPUs(j)
	}
	cl := ls.st.Cluster
	n := 0
	for _, g := range j.Alloc.Gres {
		if int(g.Slot) == slot && cl.GresKinds[g.Kind].Name == "gpu" {
			n += int(g.Count)
		}
	}
	var out []int
	for d := 0; d < n; d++ {
		out = append(out, d)
	}
	return out
}

// prepareStepParts sends each node its part, in parallel; if one fails
// the others are killed.
func (c *Controller) prepareStepParts(plan *stepPlan) error {
	errs := make([]error, len(plan.parts))
	var wg sync.WaitGroup
	for i, p := range plan.parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			a := c.agentClient(p.Node, plan.addrs[i])
			_, errs[i] = a.LaunchStep(ctx, p)
		}()
	}
	wg.Wait()
	var first error
	for i, err := range errs {
		if err != nil && first == nil {
			first = fmt.Errorf("launch on node %s: %v", plan.parts[i].Node, err)
		}
	}
	if first != nil {
		for i, p := range plan.parts {
			if errs[i] == nil {
				go c.signalStepNode(p.Node, plan.addrs[i], p.Job.JobID, p.StepID,
					api.StepSignalRequest{Kill: true, State: api.StateFailed, Message: "-"})
			}
		}
	}
	return first
}

// signalStepNode sends one node a step signal or kill (best effort: a
// node that no longer knows the step has nothing to kill).
func (c *Controller) signalStepNode(node, addr string, job uint32, step int, req api.StepSignalRequest) {
	a := c.agentClient(node, addr)
	if a == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := a.SignalStep(ctx, job, step, req); err != nil {
		c.log.Debug("step signal failed", "node", node, "step", fmt.Sprintf("%d.%d", job, step), "err", err)
	}
}

// stepJobState is what a step's follower needs to know of its job.
type stepJobState struct {
	active, suspended bool
	state             sched.JobState
	addrs             map[string]string
}

// stepJob reads the job's state and the current agent addresses of nodes.
func (c *Controller) stepJob(job uint32, nodes []string) (stepJobState, error) {
	res, err := c.do(context.Background(), func(ls *loopState) (any, error) {
		out := stepJobState{addrs: map[string]string{}}
		if j := ls.st.Job(sched.JobID(job)); j != nil {
			out.state = j.State.Base()
			out.active = isActive(j)
			out.suspended = out.state == sched.JobSuspended
		}
		for _, n := range nodes {
			if i := ls.st.Cluster.NodeIndex(n); i >= 0 && ls.nodes[i].registered {
				out.addrs[n] = ls.nodes[i].info.Addr
			}
		}
		return out, nil
	})
	if err != nil {
		return stepJobState{}, err
	}
	return res.(stepJobState), nil
}

// followStep waits for every node's part of a step to end and records the
// step; meanwhile it kills the step when its job ends and stops/continues
// it while the job is suspended.
func (c *Controller) followStep(job uint32, step int, nodes []string) {
	done := make(chan struct{})
	defer close(done)
	results := make(chan api.StepNodeResult, len(nodes))
	for _, n := range nodes {
		go c.waitStepNode(job, step, n, results, done)
	}
	got := make([]api.StepNodeResult, 0, len(nodes))
	tick := time.NewTicker(stepWatchInterval)
	defer tick.Stop()
	killed, stopped := false, false
	for len(got) < len(nodes) {
		select {
		case <-c.stop:
			return
		case r := <-results:
			if killed && r.State == api.StateNodeFail {
				r.State = api.StateCancelled // the node forgot a step its job's end killed
			}
			got = append(got, r)
			continue
		case <-tick.C:
		}
		st, err := c.stepJob(job, nodes)
		if err != nil {
			continue
		}
		var req *api.StepSignalRequest
		switch {
		case !st.active && !killed:
			killed = true
			msg := ""
			if st.state == sched.JobTimeout {
				msg = " DUE TO TIME LIMIT"
			}
			req = &api.StepSignalRequest{Kill: true, State: api.StateCancelled, Message: msg}
		case st.suspended && !stopped:
			stopped, req = true, &api.StepSignalRequest{Signal: int(syscall.SIGSTOP)}
		case st.active && !st.suspended && stopped:
			stopped, req = false, &api.StepSignalRequest{Signal: int(syscall.SIGCONT)}
		}
		if req != nil {
			for _, n := range nodes {
				go c.signalStepNode(n, st.addrs[n], job, step, *req)
			}
		}
	}
	state, exit := combineStep(got)
	if err := c.saveUsage(context.Background(), usageKey{job, 0, strconv.Itoa(step)}, combineUsage(got)); err != nil {
		c.log.Error("cannot store the usage of a step", "step", fmt.Sprintf("%d.%d", job, step), "err", err)
	}
	c.finishStep(job, step, state, exit)
}

// waitStepNode long-polls one node's part until it ends. A node that does
// not know the step (its agent restarted) or stays unreachable for
// SlurmdTimeout ends its part NODE_FAIL.
func (c *Controller) waitStepNode(job uint32, step int, node string, out chan<- api.StepNodeResult, done <-chan struct{}) {
	lost := api.StepNodeResult{Node: node, JobID: job, StepID: step, Done: true, State: api.StateNodeFail}
	var failingSince time.Time
	for {
		select {
		case <-done:
			return
		case <-c.stop:
			return
		default:
		}
		st, err := c.stepJob(job, []string{node})
		var res api.StepNodeResult
		if err == nil && st.addrs[node] != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			res, err = c.agentClient(node, st.addrs[node]).WaitStep(ctx, job, step, 20*time.Second)
			cancel()
		} else if err == nil {
			err = errNoAgent
		}
		var ae *api.AgentError
		switch {
		case err == nil && res.Done:
			out <- res
			return
		case err == nil:
			failingSince = time.Time{}
			continue
		case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
			lost.Reason = "the node agent does not know the step"
			out <- lost
			return
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		}
		if time.Since(failingSince) > c.cfg.SlurmdTimeout+5*time.Second {
			lost.Reason = err.Error()
			out <- lost
			return
		}
		select {
		case <-done:
			return
		case <-c.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// combineStep turns the nodes' results into the step's state and
// ExitCode: the highest exit code of any task (a signal when no task
// exited non-zero), TIMEOUT, CANCELLED or NODE_FAIL when a node says so,
// OUT_OF_MEMORY (0:125) when the OOM killer hit a task, FAILED when a
// task failed.
func combineStep(res []api.StepNodeResult) (string, string) {
	code, sig := 0, 0
	rank := map[string]int{api.StateCompleted: 0, api.StateFailed: 1, api.StateOutOfMemory: 2, api.StateCancelled: 3,
		api.StateNodeFail: 4, api.StateTimeout: 5}
	state := api.StateCompleted
	for _, r := range res {
		if rank[r.State] > rank[state] {
			state = r.State
		}
		for _, t := range r.Tasks {
			c, s := splitExit(t.ExitCode)
			code, sig = max(code, c), max(sig, s)
		}
	}
	if state == api.StateCompleted && (code != 0 || sig != 0) {
		state = api.StateFailed
	}
	if state == api.StateOutOfMemory {
		return state, "0:125" // as the batch step's (noded finish)
	}
	if code != 0 {
		return state, strconv.Itoa(code) + ":0"
	}
	return state, "0:" + strconv.Itoa(sig)
}

func splitExit(s string) (int, int) {
	a, b, _ := strings.Cut(s, ":")
	code, _ := strconv.Atoi(a)
	sig, _ := strconv.Atoi(b)
	return code, sig
}

// finishStep records a step's end (in memory and in the store).
func (c *Controller) finishStep(job uint32, step int, state, exit string) {
	res, err := c.do(context.Background(), func(ls *loopState) (any, error) {
		for i := range ls.ext.steps[sched.JobID(job)] {
			s := &ls.ext.steps[sched.JobID(job)][i]
			if s.StepID == step {
				s.End, s.State, s.ExitCode = ls.c.now(), state, exit
				return *s, nil
			}
		}
		return nil, fmt.Errorf("step %d.%d is not known", job, step)
	})
	if err != nil {
		c.log.Warn("cannot record the end of a step", "step", fmt.Sprintf("%d.%d", job, step), "err", err)
		return
	}
	rec := res.(stepRec)
	if err := c.saveStep(context.Background(), &rec); err != nil {
		c.log.Error("cannot store the end of a step", "step", fmt.Sprintf("%d.%d", job, step), "err", err)
		return
	}
	if db, _ := c.stepDB(context.Background()); db != nil {
		// Stored: sacct and the numbering read it from the store, so the
		// loop need not keep it.
		c.do(context.Background(), func(ls *loopState) (any, error) {
			list := ls.ext.steps[sched.JobID(job)]
			for i := range list {
				if list[i].StepID == step {
					list = append(list[:i:i], list[i+1:]...)
					break
				}
			}
			if len(list) == 0 {
				delete(ls.ext.steps, sched.JobID(job))
			} else {
				ls.ext.steps[sched.JobID(job)] = list
			}
			return nil, nil
		})
	}
}

// stepRecovery remembers the controllers whose running steps were taken
// up again (clientMux, hence registerStepRoutes, runs more than once).
var stepRecovery sync.Map

// recoverSteps follows again the steps a previous controller left
// running: their agents still run them (or report them lost).
func (c *Controller) recoverSteps() {
	if _, dup := stepRecovery.LoadOrStore(c, true); dup {
		return
	}
	go func() {
		steps, err := c.loadSteps(context.Background())
		if err != nil {
			return
		}
		for _, s := range steps {
			if !s.End.IsZero() || s.State != "RUNNING" {
				continue
			}
			s := s
			known, err := c.do(context.Background(), func(ls *loopState) (any, error) {
				for _, m := range ls.ext.steps[sched.JobID(s.JobID)] {
					if m.StepID == s.StepID {
						return true, nil
					}
				}
				if ls.ext.steps == nil {
					ls.ext.steps = map[sched.JobID][]stepRec{}
				}
				ls.ext.steps[sched.JobID(s.JobID)] = append(ls.ext.steps[sched.JobID(s.JobID)], s)
				return false, nil
			})
			if err != nil || known.(bool) {
				continue
			}
			nodes, err := hostlist.Expand(s.NodeList)
			if err != nil || len(nodes) == 0 {
				c.finishStep(s.JobID, s.StepID, api.StateNodeFail, "0:0")
				continue
			}
			go c.followStep(s.JobID, s.StepID, nodes)
		}
	}()
}
