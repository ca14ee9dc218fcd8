package ctld

// Usage accounting: the usage the node agents gather for each step (the
// batch script as JOBID.batch, srun steps as JOBID.N) is stored with the
// step's end in the table ctld_ext_usage and shown by sacct (MaxRSS,
// TotalCPU, ...); sstat asks the agents of a running step for it live
// (Slurm's REQUEST_JOB_STEP_STAT).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/sched"
)

const usageSchema = `CREATE TABLE IF NOT EXISTS ctld_ext_usage (job_id BIGINT NOT NULL, restart INTEGER NOT NULL,
	step TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (job_id, restart, step))`

const upsertUsage = `INSERT INTO ctld_ext_usage (job_id, restart, step, data) VALUES (?, ?, ?, ?)
	ON CONFLICT (job_id, restart, step) DO UPDATE SET data = excluded.data`

// usageKey names one step's usage: numbered steps have restart 0 (their
// ids are unique across a job's runs).
type usageKey struct {
	job     uint32
	restart int
	step    string
}

// usageTables remembers the stores whose usage table exists; usageMem
// holds the usage of controllers whose store is not SQL (test doubles).
var (
	usageTables sync.Map
	usageMem    sync.Map // *Controller -> *sync.Map[usageKey]*api.Usage
)

func (c *Controller) usageDB(ctx context.Context) (*sqlStore, error) {
	s, ok := c.store.(*sqlStore)
	if !ok {
		return nil, nil
	}
	if _, done := usageTables.Load(s); done {
		return s, nil
	}
	if _, err := s.db.ExecContext(ctx, usageSchema); err != nil {
		return nil, fmt.Errorf("store: usage table: %w", err)
	}
	usageTables.Store(s, true)
	return s, nil
}

// saveUsage stores one step's usage (an agent re-sending an event
// overwrites it with the same figures).
func (c *Controller) saveUsage(ctx context.Context, k usageKey, u *api.Usage) error {
	if u.Empty() {
		return nil
	}
	s, err := c.usageDB(ctx)
	if err != nil {
		return err
	}
	if s == nil {
		m, _ := usageMem.LoadOrStore(c, &sync.Map{})
		m.(*sync.Map).Store(k, u)
		return nil
	}
	data, err := json.Marshal(u)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, s.rebind(upsertUsage), int64(k.job), k.restart, k.step, string(data)); err != nil {
		return fmt.Errorf("store: usage of %d.%s: %w", k.job, k.step, err)
	}
	return nil
}

// loadUsage reads every stored usage.
func (c *Controller) loadUsage(ctx context.Context) (map[usageKey]*api.Usage, error) {
	out := map[usageKey]*api.Usage{}
	s, err := c.usageDB(ctx)
	if err != nil {
		return nil, err
	}
	if s == nil {
		if m, ok := usageMem.Load(c); ok {
			m.(*sync.Map).Range(func(k, v any) bool {
				out[k.(usageKey)] = v.(*api.Usage)
				return true
			})
		}
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT job_id, restart, step, data FROM ctld_ext_usage`)
	if err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var k usageKey
		var data string
		if err := rows.Scan(&id, &k.restart, &k.step, &data); err != nil {
			return nil, fmt.Errorf("store: usage: %w", err)
		}
		k.job = uint32(id)
		var u api.Usage
		if json.Unmarshal([]byte(data), &u) == nil {
			out[k] = &u
		}
	}
	return out, rows.Err()
}

// saveEventUsage stores the batch step usage carried by agents' job
// events, before the events are acknowledged.
func (c *Controller) saveEventUsage(ctx context.Context, ev api.JobEvents) error {
	for _, e := range ev.Events {
		if e.Job.Usage.Empty() {
			continue
		}
		if err := c.saveUsage(ctx, usageKey{e.Job.JobID, e.Job.RestartCount, "batch"}, e.Job.Usage); err != nil {
			return err
		}
	}
	return nil
}

// attachUsage puts the stored usage on the records: each step's own, and
// on a job's line the CPU times of all its steps (oracle: the job line's
// TotalCPU is the sum of .batch and .0, its MaxRSS empty).
func attachUsage(recs []api.AcctRecord, usage map[usageKey]*api.Usage) {
	jobs := map[usageKey]int{}
	for i := range recs {
		r := &recs[i]
		if r.Step == "" {
			jobs[usageKey{job: r.JobID, restart: r.Restart}] = i
			continue
		}
		k := usageKey{r.JobID, r.Restart, r.Step}
		if r.Step != "batch" && r.Step != "extern" {
			k.restart = 0
		}
		r.Usage = usage[k]
	}
	for i := range recs {
		r := &recs[i]
		if r.Step == "" || r.Usage.Empty() {
			continue
		}
		j, ok := jobs[usageKey{job: r.JobID, restart: r.Restart}]
		if !ok {
			continue
		}
		if recs[j].Usage == nil {
			recs[j].Usage = &api.Usage{}
		}
		recs[j].Usage.Tasks = append(recs[j].Usage.Tasks, r.Usage.Tasks...)
	}
}

// combineUsage joins the nodes' usage of a step.
func combineUsage(res []api.StepNodeResult) *api.Usage {
	u := &api.Usage{}
	for _, r := range res {
		if r.Usage != nil {
			u.Tasks = append(u.Tasks, r.Usage.Tasks...)
		}
	}
	return u
}

// sstatTarget is a running step sstat asks the agents about.
type sstatTarget struct {
	step   string
	nodes  []string
	addrs  []string
	ntasks int
	list   string
}

// sstat answers sstat: the live usage of the running steps asked for.
// Its errors are sstat's messages; "none running" answers an empty list.
func (c *Controller) sstat(ctx context.Context, w Who, req api.SstatRequest) (api.SstatResponse, error) {
	res, err := c.do(ctx, func(ls *loopState) (any, error) { return ls.sstatTargets(w, req) })
	if err != nil {
		return api.SstatResponse{}, err
	}
	var out api.SstatResponse
	for _, t := range res.([]sstatTarget) {
		st := api.StepStat{JobID: req.JobID, Step: t.step, NodeList: t.list, NTasks: t.ntasks}
		for i, n := range t.nodes {
			a := c.agentClient(n, t.addrs[i])
			if a == nil {
				continue
			}
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			u, err := a.Usage(cctx, req.JobID, t.step)
			cancel()
			if err == nil {
				st.Usage.Tasks = append(st.Usage.Tasks, u.Tasks...)
			}
		}
		out.Steps = append(out.Steps, st)
	}
	return out, nil
}

// sstatTargets lists the job's running steps that req asks for (loop).
func (ls *loopState) sstatTargets(w Who, req api.SstatRequest) ([]sstatTarget, error) {
	j := ls.st.Job(sched.JobID(req.JobID))
	if j == nil {
		if len(ls.st.Jobs()) == 0 {
			// A controller with no job at all answers with an empty list
			// (oracle: a fresh cluster's sstat -j 99).
			return nil, &apiErr{status: http.StatusConflict, msg: fmt.Sprintf("No steps running for job %d", req.JobID)}
		}
		return nil, &apiErr{status: http.StatusNotFound, msg: fmt.Sprintf("couldn't get steps for job %d", req.JobID)}
	}
	if !ls.mayModify(w, j) {
		return nil, denied()
	}
	var out []sstatTarget
	running := j.State.Base() == sched.JobRunning || j.State.Base() == sched.JobSuspended
	if running {
		if sp := ls.specs[j.ID]; sp == nil || !isAllocationScript(sp.Script) {
			n := j.Alloc.Nodes[0]
			out = append(out, ls.sstatTarget("batch", []int32{n}, 1))
		}
		for _, s := range ls.ext.steps[j.ID] {
			if s.End.IsZero() && s.State == "RUNNING" {
				nodes, _ := hostlist.Expand(s.NodeList)
				idx := make([]int32, 0, len(nodes))
				for _, n := range nodes {
					if i := ls.st.Cluster.NodeIndex(n); i >= 0 {
						idx = append(idx, i)
					}
				}
				out = append(out, ls.sstatTarget(strconv.Itoa(s.StepID), idx, s.NTasks))
			}
		}
	}
	var picked []sstatTarget
	for _, t := range out {
		switch {
		case req.Step != "":
			if t.step == req.Step {
				picked = append(picked, t)
			}
		case req.All || t.step != "batch":
			picked = append(picked, t)
		}
	}
	if req.Step != "" && len(picked) == 0 {
		return nil, &apiErr{status: http.StatusNotFound, msg: fmt.Sprintf("StepId=%d.%s not found running.", req.JobID, req.Step)}
	}
	if len(out) == 0 {
		return nil, &apiErr{status: http.StatusConflict, msg: fmt.Sprintf("No steps running for job %d", req.JobID)}
	}
	return picked, nil
}

func (ls *loopState) sstatTarget(step string, nodes []int32, ntasks int) sstatTarget {
	t := sstatTarget{step: step, ntasks: ntasks, list: compressNodes(ls.st.Cluster, nodes)}
	for _, i := range nodes {
		t.nodes = append(t.nodes, ls.st.Cluster.Nodes[i].Name)
		t.addrs = append(t.addrs, ls.nodes[i].info.Addr)
	}
	return t
}

// acctGatherFreq is the agents' sampling period (LaunchRequest's
// AcctGatherFreqSec): JobAcctGatherFrequency's task period, -1 when no
// periodic sample is taken (0 s) or nothing is gathered at all
// (JobAcctGatherType=jobacct_gather/none).
func acctGatherFreq(cfg *conf.Config) int {
	if cfg.JobAcctGatherFrequency <= 0 || strings.EqualFold(cfg.JobAcctGatherType, "jobacct_gather/none") {
		return -1
	}
	return int(cfg.JobAcctGatherFrequency / time.Second)
}

// constraints is cgroup.conf's confinement of job j on its slot-th node,
// with the memory the job asked for there (--mem, or --mem-per-cpu times
// its CPUs on the node), which task/cgroup enforces even when memory is
// not a consumable resource. Nil without a cgroup.conf in the config.
func (ls *loopState) constraints(j *sched.Job, slot int) *api.CgroupConstraints {
	cg := ls.c.cfg.Cgroup
	if cg == nil {
		return nil
	}
	c := &api.CgroupConstraints{Plugin: cg.Plugin, Cores: cg.ConstrainCores, RAM: cg.ConstrainRAMSpace,
		Swap: cg.ConstrainSwapSpace, Devices: cg.ConstrainDevices, AllowedRAMPercent: cg.AllowedRAMSpace,
		AllowedSwapPercent: cg.AllowedSwapSpace, MaxRAMPercent: cg.MaxRAMPercent, MinRAMMB: cg.MinRAMSpaceMB}
	switch {
	case slot < len(j.Alloc.Mem) && j.Alloc.Mem[slot] > 0:
		c.MemLimitMB = j.Alloc.Mem[slot]
	case j.Req.MemPerNode > 0:
		c.MemLimitMB = j.Req.MemPerNode
	case j.Req.MemPerCPU > 0 && slot < len(j.Alloc.CPUs):
		c.MemLimitMB = j.Req.MemPerCPU * int64(j.Alloc.CPUs[slot])
	}
	return c
}
