package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// scontrol's job and daemon administration commands: write batch_script,
// wait_job, notify, setdebug and show daemons. Output, messages and exit
// codes are Slurm 24.11's (oracle scenarios scontrol-admin-misc and
// scontrol-steps-script).

// writeBatchScript is "scontrol write batch_script JOB [FILE]": the
// script to FILE (default slurm-JOB.sh; "-" is stdout). A failed retrieval
// is reported and, as in Slurm, exits 0.
func (s *scontrolRun) writeBatchScript(args []string) int {
	if len(args) == 0 || !strings.HasPrefix("batch_script", strings.ToLower(args[0])) {
		fmt.Fprintln(s.env.Stderr, "invalid write argument")
		return 1
	}
	if len(args) < 2 {
		fmt.Fprintln(s.env.Stderr, "too few arguments for keyword:write")
		return 1
	}
	id := args[1]
	res, err := s.cl.JobScript(s.ctx, id)
	if err != nil {
		var ae *api.Error
		if !errors.As(err, &ae) {
			return clientError(s.env, "scontrol", err)
		}
		fmt.Fprintf(s.env.Stderr, "job script retrieval failed: %s\n", ae.Message)
		return 0
	}
	file := "slurm-" + id + ".sh"
	if len(args) > 2 {
		file = args[2]
	}
	if file == "-" {
		fmt.Fprint(s.env.Stdout, res.Script)
		return 0
	}
	if err := os.WriteFile(file, []byte(res.Script), 0o644); err != nil {
		return Errorf(s.env, "scontrol", "failed to write %s: %v", file, err)
	}
	fmt.Fprintf(s.env.Stdout, "batch script for job %s written to %s\n", id, file)
	return 0
}

// waitJob is "scontrol wait_job JOB": it returns once the job runs (its
// nodes are ready) and fails when it ended or is unknown; a pending job
// is polled until then.
func (s *scontrolRun) waitJob(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(s.env.Stderr, "too few arguments for keyword:wait_job")
		return 1
	}
	id := args[0]
	for delay := time.Second; ; delay = min(2*delay, 10*time.Second) {
		res, err := s.cl.Jobs(s.ctx, api.JobQuery{IDs: []string{id}})
		var ae *api.Error
		switch {
		case errors.As(err, &ae) && ae.Status == 404, err == nil && len(res.Jobs) == 0:
			fmt.Fprintf(s.env.Stderr, "scontrol: Problem running job %s\n", id)
			return 1
		case err != nil:
			return clientError(s.env, "scontrol", err)
		}
		switch res.Jobs[0].State {
		case "RUNNING", "SUSPENDED":
			fmt.Fprintf(s.env.Stderr, "scontrol: Nodes are ready for job %s\n", id)
			return 0
		case "PENDING":
		default:
			fmt.Fprintf(s.env.Stderr, "scontrol: Job %s no longer running\n", id)
			return 1
		}
		select {
		case <-s.ctx.Done():
			return clientError(s.env, "scontrol", s.ctx.Err())
		case <-time.After(delay):
		}
	}
}

// notify is "scontrol notify JOB MESSAGE".
func (s *scontrolRun) notify(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(s.env.Stderr, "too few arguments for keyword:notify")
		return 1
	}
	res, err := s.cl.Control(s.ctx, api.JobControlRequest{Op: api.OpNotify, Jobs: args[:1]})
	if err != nil {
		var ae *api.Error
		if errors.As(err, &ae) {
			fmt.Fprintf(s.env.Stderr, "job notify failure: %s\n", ae.Message)
			return 1
		}
		return clientError(s.env, "scontrol", err)
	}
	for _, r := range res.Results {
		if r.Error != "" {
			fmt.Fprintf(s.env.Stderr, "job notify failure: %s\n", r.Error)
			return 1
		}
	}
	return 0
}

// setDebug is "scontrol setdebug LEVEL" (a level name or 0-9).
func (s *scontrolRun) setDebug(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(s.env.Stderr, "too few arguments for keyword:setdebug")
		return 1
	}
	level := strings.ToLower(args[0])
	if !validDebugLevel(level) {
		fmt.Fprintf(s.env.Stderr, "invalid debug level: %s\n", args[0])
		return 1
	}
	if err := s.cl.SetDebug(s.ctx, level); err != nil {
		var ae *api.Error
		if errors.As(err, &ae) {
			fmt.Fprintf(s.env.Stderr, "slurm_set_debug_level error: %s\n", ae.Message)
			return 1
		}
		return clientError(s.env, "scontrol", err)
	}
	return 0
}

// shortHostname is this host's name without its domain, as Slurm's
// commands name the host they run on.
func shortHostname() string {
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	return host
}

func validDebugLevel(level string) bool {
	if slices.Contains(api.DebugLevels, level) {
		return true
	}
	return len(level) == 1 && level[0] >= '0' && level[0] <= '9'
}

// showDaemons is "scontrol show daemons": the daemons slurm.conf places
// on this host, slurmctld when it is a SlurmctldHost (or that host is
// localhost), slurmd when it is a node's name or NodeHostname; each name
// is followed by a blank, as Slurm prints them.
func showDaemons(env *Env) int {
	cfg, _, err := conf.Load(confPath(env))
	if err != nil {
		return Errorf(env, "scontrol", "%v", err)
	}
	host := shortHostname()
	here := func(name string) bool { return name == host || name == "localhost" }
	var out string
	for _, h := range cfg.SlurmctldHosts {
		if here(h.Name) {
			out += "slurmctld "
			break
		}
	}
	for _, n := range cfg.Nodes {
		names, _ := hostlist.Expand(n.Name)
		hosts, _ := hostlist.Expand(n.Hostname)
		if slices.Contains(names, host) || slices.Contains(hosts, host) {
			out += "slurmd "
			break
		}
	}
	fmt.Fprintln(env.Stdout, out)
	return 0
}

// showSteps is "scontrol show step[s] [JOB[.STEP]]": the running steps'
// records (all, one job's, or one step), Slurm 24.11's layout (oracle,
// scontrol-steps-script).
func (s *scontrolRun) showSteps(name string) int {
	res, err := s.cl.Steps(s.ctx)
	if err != nil {
		return clientError(s.env, "scontrol", err)
	}
	job, step, oneStep := strings.Cut(name, ".")
	var recs [][]string
	for i := range res.Steps {
		st := &res.Steps[i]
		if name == "" || st.JobIDStr == job && (!oneStep || st.Step == step) {
			recs = append(recs, stepRecordLines(st))
		}
	}
	if len(recs) > 0 {
		s.print(recs)
		return 0
	}
	if name == "" {
		fmt.Fprintln(s.env.Stdout, "No job steps in the system")
		return 0
	}
	if jr, err := s.cl.Jobs(s.ctx, api.JobQuery{IDs: []string{job}}); err != nil || len(jr.Jobs) == 0 {
		fmt.Fprintf(s.env.Stderr, "scontrol: error: scontrol_print_step: slurm_get_job_steps(%s) failed: Invalid job id specified\n", job)
		return 1
	}
	fmt.Fprintf(s.env.Stdout, "Job step %s not found\n", name)
	return 1
}

// stepRecordLines is one step's record: the batch step holds no CPUs or
// TRES of its own and has no srun.
func stepRecordLines(st *api.StepInfo) []string {
	nodes := 0
	if names, err := hostlist.Expand(st.NodeList); err == nil {
		nodes = len(names)
	}
	tres, dist, srun := "(null)", "", "(null):0"
	if st.CPUs > 0 {
		tres = fmt.Sprintf("cpu=%d,mem=%dM,node=%d", st.CPUs, st.MemMB, nodes)
	}
	if st.Dist != "" {
		dist = " Dist=" + st.Dist
	}
	if st.SrunHost != "" {
		srun = fmt.Sprintf("%s:%d", st.SrunHost, st.SrunPid)
	}
	return []string{
		fmt.Sprintf("StepId=%s.%s UserId=%d StartTime=%s TimeLimit=%s", st.JobIDStr, st.Step, st.UID, slurmTime(st.Start),
			limitOrUnlimited(st.TimeLimitSec)),
		fmt.Sprintf("State=%s Partition=%s NodeList=%s", st.State, st.Partition, st.NodeList),
		fmt.Sprintf("Nodes=%d CPUs=%d Tasks=%d Name=%s Network=(null)", nodes, st.CPUs, st.NTasks, st.Name),
		"TRES=" + tres,
		"ResvPorts=(null)",
		"CPUFreqReq=Default" + dist,
		"SrunHost:Pid=" + srun,
	}
}

// showAssocMgr is "scontrol show assoc_mgr [users=U,..] [accounts=A,..]
// [qos=Q,..] [flags=users,assoc,qos]": the controller renders it.
func (s *scontrolRun) showAssocMgr(args []string) int {
	var req api.AssocMgrRequest
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		list := splitComma(v)
		switch strings.ToLower(k) {
		case "users", "user":
			req.Users = list
		case "accounts", "account":
			req.Accounts = list
		case "qos":
			req.QOS = list
		case "flags", "flag":
			req.Flags = list
		default:
			// Slurm's own wording here, without the "scontrol: error: " prefix
			fmt.Fprintf(s.env.Stderr, "invalid entity: %s for keyword:show assoc_mgr\n", a)
			return 1
		}
	}
	text, err := s.cl.AssocMgr(s.ctx, req)
	if err != nil {
		return clientError(s.env, "scontrol", err)
	}
	fmt.Fprint(s.env.Stdout, text)
	return 0
}
