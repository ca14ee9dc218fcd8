package ctld

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// Node reasons Slurm 24.11 gives a node drained by a failed node script
// (sinfo -R, scontrol show node).
const (
	reasonPrologError = "Prolog error"
	reasonEpilogError = "Epilog error"
)

// prologBook tracks the controller's scripts per job run: the
// PrologSlurmctld running or done (a batch launch waits for it) and the
// runs whose EpilogSlurmctld was started.
type prologBook struct {
	running, done, epilog map[sched.JobID]int32
}

var prologBooks sync.Map // *loopState -> *prologBook, as limitBooks

func (ls *loopState) prologs() *prologBook {
	if b, ok := prologBooks.Load(ls); ok {
		return b.(*prologBook)
	}
	b, _ := prologBooks.LoadOrStore(ls, &prologBook{running: map[sched.JobID]int32{},
		done: map[sched.JobID]int32{}, epilog: map[sched.JobID]int32{}})
	return b.(*prologBook)
}

// scriptTimeout is PrologEpilogTimeout (0 = wait indefinitely, Slurm's
// default).
func (ls *loopState) scriptTimeout() time.Duration {
	return time.Duration(ls.c.cfg.PrologEpilogTimeout) * time.Second
}

// nodeScripts are the node-side scripts sent with every launch of j.
func (ls *loopState) nodeScripts(j *sched.Job) *api.NodeScripts {
	cf := ls.c.cfg
	if cf.Prolog == "" && cf.Epilog == "" && cf.TaskProlog == "" && cf.TaskEpilog == "" {
		return nil
	}
	return &api.NodeScripts{Prolog: cf.Prolog, Epilog: cf.Epilog, TaskProlog: cf.TaskProlog,
		TaskEpilog: cf.TaskEpilog, TimeoutSec: int64(cf.PrologEpilogTimeout), CPUsPerNode: tasksPerNode(int32s(j.Alloc.CPUs))}
}

// slurmUser names the user Slurm records for the reasons it sets itself.
func (ls *loopState) slurmUser() string {
	if u := ls.c.cfg.SlurmUser; u != "" {
		return u
	}
	return "root"
}

// nodeScriptFailed handles a job end that carries a failed node script, as
// slurmctld does: the node is drained ("Prolog error", "Epilog error");
// after a failed Prolog the job is requeued, held unless
// SchedulerParameters=nohold_on_prolog_fail ("launch failed requeued
// held"). It reports whether the end was consumed (the job requeued).
func (ls *loopState) nodeScriptFailed(i int32, j *sched.Job, s api.JobStatus) bool {
	now := ls.c.now()
	reason := reasonEpilogError
	if s.ScriptFailure == "prolog" {
		reason = reasonPrologError
	}
	if !ls.st.Cluster.Nodes[i].State.Has(sched.NodeFlagDrain) {
		_ = ls.setNode(i, "DRAIN", reason, ls.slurmUser(), now)
	}
	if s.ScriptFailure != "prolog" {
		return false
	}
	hold := !ls.c.cfg.SchedulerParameters.NoholdOnPrologFail
	ls.prio.charge(ls, j, now)
	if err := ls.st.Requeue(j.ID, hold, now); err != nil {
		return false
	}
	if hold {
		j.StateDesc = sched.StateDescLaunchFailedHeld
	}
	delete(ls.launched, j.ID)
	ls.setPriority(j, now)
	ls.touch(j, "requeue", "prolog failed on "+ls.st.Cluster.Nodes[i].Name)
	ls.wantSched = true
	return true
}

// gatePrologSlurmctld returns the jobs whose batch launch may go now: with
// a PrologSlurmctld, a job's launch waits until the script has run for its
// run (slurmctld starts the job once its PrologSlurmctld exited 0).
func (ls *loopState) gatePrologSlurmctld(jobs []*sched.Job) []*sched.Job {
	path := ls.c.cfg.PrologSlurmctld
	if path == "" {
		return jobs
	}
	b := ls.prologs()
	var ready []*sched.Job
	for _, j := range jobs {
		if r, ok := b.done[j.ID]; ok && r == j.RestartCount {
			ready = append(ready, j)
			continue
		}
		if r, ok := b.running[j.ID]; ok && r == j.RestartCount {
			continue
		}
		b.running[j.ID] = j.RestartCount
		id, restart, c := j.ID, j.RestartCount, ls.c
		env, timeout := ls.ctldScriptEnv(j, "prolog_slurmctld"), ls.scriptTimeout()
		ls.outbox = append(ls.outbox, func() {
			go func() {
				err := runCtldScript(path, env, timeout)
				c.do(context.Background(), func(ls *loopState) (any, error) {
					ls.prologSlurmctldDone(id, restart, err)
					return nil, nil
				})
			}()
		})
	}
	return ready
}

// prologSlurmctldDone launches the job whose PrologSlurmctld succeeded;
// after a failure it requeues the job, or cancels it when it cannot be
// requeued (Slurm 24.11: a --no-requeue job ends CANCELLED 0:0).
func (ls *loopState) prologSlurmctldDone(id sched.JobID, restart int32, err error) {
	b := ls.prologs()
	delete(b.running, id)
	j := ls.st.Job(id)
	if j == nil || j.RestartCount != restart || !isActive(j) {
		return
	}
	if err == nil {
		b.done[id] = restart
		ls.queueLaunches([]*sched.Job{j})
		return
	}
	ls.c.log.Error("PrologSlurmctld failed", "job", id, "err", err)
	now := ls.c.now()
	if j.Req.Requeue {
		if ls.requeue(j, false, now) == nil {
			return
		}
	}
	ls.prio.charge(ls, j, now)
	if ls.st.Cancel(id, now) == nil {
		ls.touch(j, "cancel", "PrologSlurmctld failed")
		ls.wantSched = true
	}
}

// epilogSlurmctld runs the scripts of a job run's end, once per run of a
// job that ran and ended (or was requeued): EpilogSlurmctld on the
// controller and, for a multi-node job, the Epilog of its nodes other than
// the batch host (which runs its own after the batch script), as slurmctld
// has every node of the job run it (oracle: an -N2 job without steps runs
// its Epilog on both nodes, its Prolog only on the first).
func (ls *loopState) epilogSlurmctld(j *sched.Job, event string) {
	cf := ls.c.cfg
	if (cf.EpilogSlurmctld == "" && cf.Epilog == "") || event == "" {
		return
	}
	run := j.RestartCount
	switch {
	case event == "requeue" && j.State.Base() == sched.JobPending:
		run-- // the run that just ended
	case j.State.Finished() && !j.StartTime.IsZero():
	default:
		return
	}
	b := ls.prologs()
	if r, ok := b.epilog[j.ID]; ok && r >= run {
		return
	}
	b.epilog[j.ID] = run
	if len(b.epilog) > 100000 {
		clear(b.epilog)
	}
	delete(b.done, j.ID)
	if cf.Epilog != "" {
		ls.nodeEpilogs(j, run)
	}
	if cf.EpilogSlurmctld == "" {
		return
	}
	path, env, timeout, log, id := cf.EpilogSlurmctld, ls.ctldScriptEnv(j, "epilog_slurmctld"), ls.scriptTimeout(), ls.c.log, j.ID
	ls.outbox = append(ls.outbox, func() {
		go func() {
			if err := runCtldScript(path, env, timeout); err != nil {
				log.Error("EpilogSlurmctld failed", "job", id, "err", err)
			}
		}()
	})
}

// nodeEpilogs asks the job's nodes other than its batch host to run the
// Epilog; a node whose Epilog failed is drained ("Epilog error").
func (ls *loopState) nodeEpilogs(j *sched.Job, run int32) {
	al := j.Alloc
	if len(al.Nodes) == 0 && len(j.Runs) > 0 {
		al = j.Runs[len(j.Runs)-1].Alloc
	}
	if len(al.Nodes) < 2 {
		return
	}
	cl := ls.st.Cluster
	req := api.NodeEpilogRequest{Job: api.LaunchRequest{JobID: uint32(j.ID), RestartCount: int(run), Name: j.Req.Name,
		User: j.User, UID: j.UID, GID: j.GID, Group: j.Group, Account: j.Account, Partition: ls.partitionName(j),
		ClusterName: cl.Name, NodeList: compressNodes(cl, al.Nodes), NNodes: len(al.Nodes),
		TimeLimitSec: limitSeconds(j.TimeLimit), StartTime: j.StartTime, Scripts: ls.nodeScripts(j)},
		Status: api.JobStatus{JobID: uint32(j.ID), EndTime: j.EndTime,
			ExitCode: fmt.Sprintf("%d:%d", j.ExitCode>>8, j.ExitCode&0xff)}}
	req.Job.Scripts.CPUsPerNode = tasksPerNode(int32s(al.CPUs))
	if spec := ls.specs[j.ID]; spec != nil {
		req.Job.WorkDir = spec.WorkDir
	}
	if req.Status.EndTime.IsZero() {
		req.Status.EndTime = ls.c.now()
	}
	wait := ls.scriptTimeout()
	if wait <= 0 {
		wait = 65534 * time.Second // Slurm's default PrologEpilogTimeout
	}
	c, wait := ls.c, wait+time.Minute
	for _, i := range al.Nodes[1:] {
		name, addr := cl.Nodes[i].Name, ls.nodes[i].info.Addr
		ls.outbox = append(ls.outbox, func() {
			go c.runNodeEpilog(name, addr, req, wait)
		})
	}
}

// runNodeEpilog has one node run a job's Epilog and drains it when the
// Epilog failed.
func (c *Controller) runNodeEpilog(name, addr string, req api.NodeEpilogRequest, wait time.Duration) {
	a := c.agentClient(name, addr)
	if a == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := a.RunEpilog(ctx, req)
	if err != nil {
		c.log.Warn("node epilog call failed", "node", name, "job", req.Job.JobID, "err", err)
		return
	}
	if !res.Failed {
		return
	}
	c.do(context.Background(), func(ls *loopState) (any, error) {
		if i := ls.st.Cluster.NodeIndex(name); i >= 0 && !ls.st.Cluster.Nodes[i].State.Has(sched.NodeFlagDrain) {
			_ = ls.setNode(i, "DRAIN", reasonEpilogError, ls.slurmUser(), ls.c.now())
		}
		return nil, nil
	})
}

// ctldScriptEnv is the environment slurmctld gives PrologSlurmctld and
// EpilogSlurmctld (checked on Slurm 24.11; no PATH).
func (ls *loopState) ctldScriptEnv(j *sched.Job, context string) []string {
	al, start := j.Alloc, j.StartTime
	if len(al.Nodes) == 0 && len(j.Runs) > 0 { // requeued: the run that ended
		r := j.Runs[len(j.Runs)-1]
		al, start = r.Alloc, r.Start
	}
	cl := ls.st.Cluster
	workdir := "/"
	if spec := ls.specs[j.ID]; spec != nil && spec.WorkDir != "" {
		workdir = spec.WorkDir
	}
	m := map[string]string{
		"SLURM_SCRIPT_CONTEXT": context, "SLURM_CLUSTER_NAME": cl.Name,
		"SLURM_JOB_ID": strconv.Itoa(int(j.ID)), "SLURM_JOBID": strconv.Itoa(int(j.ID)),
		"SLURM_JOB_NAME": j.Req.Name, "SLURM_JOB_USER": j.User, "SLURM_JOB_GROUP": j.Group,
		"SLURM_JOB_UID": strconv.Itoa(int(j.UID)), "SLURM_JOB_GID": strconv.Itoa(int(j.GID)),
		"SLURM_JOB_ACCOUNT": j.Account, "SLURM_JOB_PARTITION": ls.partitionName(j),
		"SLURM_JOB_NODELIST": compressNodes(cl, al.Nodes), "SLURM_JOB_NUM_NODES": strconv.Itoa(len(al.Nodes)),
		"SLURM_JOB_CPUS_PER_NODE": tasksPerNode(int32s(al.CPUs)),
		"SLURM_JOB_RESTART_COUNT": strconv.Itoa(int(j.RestartCount)), "SLURM_JOB_OVERSUBSCRIBE": "OK",
		"SLURM_JOB_WORK_DIR": workdir, "SLURM_JOB_START_TIME": strconv.FormatInt(start.Unix(), 10),
	}
	end := j.EndTime
	if end.IsZero() {
		end = start.AddDate(1, 0, 0)
		if j.TimeLimit > 0 && j.TimeLimit != sched.Infinite {
			end = start.Add(j.TimeLimit)
		}
	}
	m["SLURM_JOB_END_TIME"] = strconv.FormatInt(end.Unix(), 10)
	if strings.HasPrefix(context, "epilog") {
		code, sig := j.ExitCode>>8, j.ExitCode&0xff
		m["SLURM_JOB_EXIT_CODE"] = strconv.Itoa(int(j.ExitCode))
		m["SLURM_JOB_EXIT_CODE2"] = fmt.Sprintf("%d:%d", code, sig)
		m["SLURM_JOB_DERIVED_EC"] = "0"
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func int32s[T ~int32 | ~int64](v []T) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// runCtldScript runs a controller script in its own process group, as the
// controller's user, from "/"; at the timeout the group gets SIGTERM, then
// SIGKILL.
func runCtldScript(path string, env []string, timeout time.Duration) error {
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, path)
	cmd.Env, cmd.Dir = env, "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		return fmt.Errorf("%s: %w (output: %q)", path, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// checkCtldScripts refuses to start with a PrologSlurmctld or
// EpilogSlurmctld that cannot be executed, as slurmctld 24.11 does
// ("error: Invalid PrologSlurmctld(`/x`): No such file or directory",
// then fatal).
func checkCtldScripts(cf *conf.Config) error {
	for _, s := range []struct{ key, path string }{{"PrologSlurmctld", cf.PrologSlurmctld}, {"EpilogSlurmctld", cf.EpilogSlurmctld}} {
		if s.path == "" {
			continue
		}
		if err := unix.Access(s.path, unix.X_OK); err != nil {
			msg := err.Error()
			if msg != "" {
				msg = strings.ToUpper(msg[:1]) + msg[1:]
			}
			return fmt.Errorf("Invalid %s(`%s`): %s", s.key, s.path, msg)
		}
	}
	return nil
}

// prologWait is how long a launch may find its job still "being launched"
// on the agent because the node's Prolog runs within the launch:
// PrologEpilogTimeout (Slurm's default 65534 s when unset) and the grace
// before the agent's SIGKILL.
func (c *Controller) prologWait() time.Duration {
	if c.cfg.Prolog == "" && c.cfg.TaskProlog == "" {
		return 0
	}
	t := time.Duration(c.cfg.PrologEpilogTimeout) * time.Second
	if t <= 0 {
		t = 65534 * time.Second
	}
	return t + 5*time.Second
}

// stepPrologFailed handles a step refused because a node's Prolog failed
// at the job's first step there: as after a failed Prolog on the batch
// host, the node is drained ("Prolog error") and the job requeued, held
// unless nohold_on_prolog_fail (a --no-requeue job goes on).
func (c *Controller) stepPrologFailed(plan *stepPlan, err error) {
	msg := err.Error()
	if !strings.Contains(msg, ": Prolog failed") { // the agent's errStepProlog
		return
	}
	node := ""
	for _, p := range plan.parts {
		if strings.HasPrefix(msg, "launch on node "+p.Node+":") {
			node = p.Node
		}
	}
	c.do(context.Background(), func(ls *loopState) (any, error) {
		now := ls.c.now()
		if i := ls.st.Cluster.NodeIndex(node); i >= 0 && !ls.st.Cluster.Nodes[i].State.Has(sched.NodeFlagDrain) {
			_ = ls.setNode(i, "DRAIN", reasonPrologError, ls.slurmUser(), now)
		}
		j := ls.st.Job(sched.JobID(plan.rec.JobID))
		if j == nil || !isActive(j) || !j.Req.Requeue {
			return nil, nil
		}
		hold := !ls.c.cfg.SchedulerParameters.NoholdOnPrologFail
		if ls.requeue(j, hold, now) == nil && hold {
			j.StateDesc = sched.StateDescLaunchFailedHeld
		}
		return nil, nil
	})
}
