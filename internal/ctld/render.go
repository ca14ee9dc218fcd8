package ctld

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
	"github.com/sluice-hpc/sluice/internal/tres"
)

// allocVector is the TRES of an allocation.
func allocVector(cl *sched.Cluster, al *sched.Alloc) tres.Vector {
	v := tres.Vector{}
	if len(al.Nodes) == 0 {
		return v
	}
	for s := range al.Nodes {
		v["cpu"] += int64(al.CPUs[s])
		v["mem"] += al.Mem[s]
	}
	v["node"] = int64(len(al.Nodes))
	v["billing"] = v["cpu"]
	for _, g := range al.Gres {
		k := cl.GresKinds[g.Kind]
		v["gres/"+k.Name] += g.Count
		if k.Type != "" {
			v[k.TRESName()] += g.Count
		}
	}
	return v
}

// reqVector is what j asks for (Slurm's ReqTRES). The memory is the one
// Slurm records at submission: --mem/--mem-per-cpu or the partition's, then
// the cluster's DefMemPerCPU/DefMemPerNode (oracle: `sbatch -n3` with
// DefMemPerCPU=1000 has ReqTRES=cpu=3,mem=3000M,node=1,billing=3).
func (ls *loopState) reqVector(j *sched.Job) tres.Vector {
	r := &j.Req
	nodes := int64(max(r.MinNodes, 1))
	cpus := int64(max(r.NTasks, 1) * max(r.CPUsPerTask, 1))
	if r.NTasksPerNode > 0 && r.NTasks == 0 {
		cpus = int64(r.NTasksPerNode) * nodes * int64(max(r.CPUsPerTask, 1))
	}
	cpus = max(cpus, nodes)
	v := tres.Vector{"cpu": cpus, "node": nodes, "billing": cpus}
	switch perCPU, perNode := ls.jobMemory(j); {
	case perNode > 0:
		v["mem"] = perNode * nodes
	case perCPU > 0:
		v["mem"] = perCPU * cpus
	}
	for _, g := range r.Gres {
		v["gres/"+g.Name] += g.Count * nodes
		if g.Type != "" {
			v["gres/"+g.Name+":"+g.Type] += g.Count * nodes
		}
	}
	if r.GPUs > 0 {
		v["gres/gpu"] += r.GPUs
	}
	return v
}

// jobMemory is j's memory request with the defaults of its partition (the
// one it runs in, else the first it asked for) and of the cluster.
func (ls *loopState) jobMemory(j *sched.Job) (perCPU, perNode int64) {
	cl := ls.st.Cluster
	p := &sched.Partition{}
	switch {
	case j.Partition >= 0 && int(j.Partition) < len(cl.Partitions):
		p = &cl.Partitions[j.Partition]
	case len(j.Partitions) > 0 && int(j.Partitions[0]) < len(cl.Partitions):
		p = &cl.Partitions[j.Partitions[0]]
	}
	return sched.JobMemory(&ls.cfg, j, p)
}

func (ls *loopState) reqTRES(j *sched.Job) string { return ls.reqVector(j).String() }

// jobInfo renders j for the API.
func (ls *loopState) jobInfo(j *sched.Job, now time.Time, detail bool) api.JobInfo {
	info := ls.briefInfo(j, now)
	ls.fullInfo(j, now, detail, &info)
	ls.resvJobInfo(j, &info) // Licenses=, Reservation=, tracked license TRES (resv.go)
	return info
}

// briefInfo is what squeue's usual columns print (api.BriefFields), cheap
// enough to render for 100,000 jobs on every listing: no TRES strings,
// paths or priority terms (fullInfo adds those).
func (ls *loopState) briefInfo(j *sched.Job, now time.Time) api.JobInfo {
	cl := ls.st.Cluster
	r := &j.Req
	info := api.JobInfo{JobID: uint32(j.ID), JobIDStr: j.JobIDString(), ArrayTaskID: -1, Name: r.Name,
		User: j.User, UID: j.UID, GID: j.GID, Group: j.Group, Account: j.Account, QOS: j.QOS,
		Partition: ls.partitionName(j), State: j.State.String(), StateShort: j.State.Short(),
		StateDesc: j.StateDesc, Priority: j.Priority, Nice: r.Nice, SiteFactor: ls.site[j.ID],
		SubmitTime: j.SubmitTime, EligibleTime: j.AcctEligible(), AccrueTime: j.AccrueTime, StartTime: j.StartTime,
		EndTime: j.EndTime, SuspendTime: j.SuspendTime, SuspendedSec: int64(j.Suspended / time.Second),
		ExpectedStart: j.ExpectedStart, BeginTime: r.BeginTime, TimeLimitSec: limitSeconds(j.TimeLimit),
		NodeList: compressNodes(cl, j.Alloc.Nodes), SchedNodes: compressNodes(cl, j.PlannedNodes),
		NumNodes: int(max(r.MinNodes, 1)), NumTasks: int(max(r.NTasks, 1)), CPUsPerTask: int(max(r.CPUsPerTask, 1)),
		Features: r.Constraint, Requeue: r.Requeue,
		RestartCount: int(j.RestartCount), ExitCode: exitString(j.ExitCode), Exclusive: r.Exclusive,
		Reservation: r.Reservation}
	if j.State.Base() == sched.JobPending || j.State.Finished() || j.Hold != sched.HoldNone {
		// BadConstraints on a job failed at submission, else None; a held
		// running job shows its hold (Slurm: "R JobHeldUser").
		info.Reason = string(j.Reason)
	}
	if j.State.Base() == sched.JobPending {
		if info.ExpectedStart.IsZero() && r.BeginTime.After(now) {
			// Slurm's expected start of a job waiting for its begin time
			// (--begin, a requeue delay) is that time: scontrol StartTime,
			// squeue %S.
			info.ExpectedStart = r.BeginTime
		}
	}
	info.PreemptTime = j.PreemptTime
	if j.Hold != sched.HoldNone {
		info.Priority = 0 // a held job's priority is 0, as Slurm shows it
	}
	switch j.Hold {
	case sched.HoldUser:
		info.Hold = "user"
	case sched.HoldAdmin:
		info.Hold = "admin"
	}
	if j.Array != nil {
		info.ArrayJobID = uint32(j.Array.JobID)
		info.ArrayTaskID = j.Array.TaskID
		info.ArrayThrottle = j.Array.Throttle
		if j.Array.TaskID < 0 {
			info.ArrayTasks = sched.FormatArrayTasks(j.Array.Tasks, j.Array.Throttle)
		}
	}
	if len(j.Alloc.Nodes) > 0 {
		info.NumNodes = len(j.Alloc.Nodes)
		info.BatchHost = cl.Nodes[j.Alloc.Nodes[0]].Name
	}
	if neverStarted(j) {
		// Slurm gives a job that ended pending (cancelled) its end time as
		// start time: squeue %S and scontrol StartTime= show it (oracle,
		// cancel-pending-show).
		info.StartTime = j.EndTime
	}
	return info
}

// neverStarted reports whether j ended without ever running.
func neverStarted(j *sched.Job) bool {
	return j.State.Finished() && j.StartTime.IsZero() && !j.EndTime.IsZero()
}

// fullInfo adds to briefInfo what scontrol show job and the other
// squeue columns print.
func (ls *loopState) fullInfo(j *sched.Job, now time.Time, detail bool, info *api.JobInfo) {
	r := &j.Req
	info.ReqTRES, info.Dependency = ls.reqTRES(j), sched.DependencyString(j)
	info.PreemptEligibleTime = sched.PreemptEligibleTime(&ls.cfg, ls.st.Policy, j)
	if k := r.KillOnInvalidDep; k != nil {
		info.KillOnInvalidDep = map[bool]string{true: "Yes", false: "No"}[*k]
	}
	if len(j.Alloc.Nodes) > 0 {
		v := ls.allocTRESVector(j)
		info.NumCPUs = int(v["cpu"])
		info.AllocTRES = v.String()
		counts := make([]int, len(j.Alloc.CPUs))
		for i, c := range j.Alloc.CPUs {
			counts[i] = int(c)
		}
		info.CPUsPerNode = tasksPerNode(counts)
	} else {
		info.NumCPUs = int(ls.reqVector(j)["cpu"])
	}
	switch perCPU, perNode := ls.jobMemory(j); {
	case perNode > 0:
		info.MinMemoryMB = perNode
	case perCPU > 0:
		info.MinMemoryMB, info.MemPerCPU = perCPU, true
	}
	ls.shapeInfo(j, info)
	var gres []string
	for _, g := range r.Gres {
		s := "gres/" + g.Name
		if g.Type != "" {
			s += ":" + g.Type
		}
		gres = append(gres, s+":"+strconv.FormatInt(g.Count, 10))
	}
	info.TresPerNode = strings.Join(gres, ",")
	if len(r.NodeList) > 0 {
		info.ReqNodes = strings.Join(r.NodeList, ",")
	}
	if len(r.Exclude) > 0 {
		info.ExcNodes = strings.Join(r.Exclude, ",")
	}
	ls.specInfo(j, info)
	if detail {
		e := ls.explain(j, now)
		for _, t := range e.Terms {
			info.PriorityTerms = append(info.PriorityTerms, api.PriorityTerm{Name: t.Name, Factor: t.Factor,
				Weight: t.Weight, Contribution: t.Contribution})
		}
		info.PrioritySummary = e.Summary
		if j.State.Base() == sched.JobPending {
			info.WhyPending = ls.whyPending(j, now)
		}
	}
}

// specInfo fills what comes from the submission: command, directories,
// standard streams.
func (ls *loopState) specInfo(j *sched.Job, info *api.JobInfo) {
	s := ls.specFor(j)
	if s == nil {
		return
	}
	info.Command, info.WorkDir, info.Comment, info.Extra = s.ScriptName, s.WorkDir, s.Comment, s.Extra
	info.AllocNode, info.AllocSID = s.AllocNode, s.AllocSID
	info.StdOut, info.StdErr, info.StdIn = stdPath(s.WorkDir, s.Output, j, "slurm-%j.out"), stdPath(s.WorkDir, s.Error, j, ""), s.Input
	if info.StdErr == "" {
		info.StdErr = info.StdOut
	}
	if info.StdIn == "" {
		info.StdIn = "/dev/null"
	}
	if info.Command == "" {
		info.Command = "(null)"
	}
}

// shapeInfo fills scontrol show job's task and per-node fields as Slurm
// derives them at submission (oracle, sbatch -N2 --ntasks-per-node=2 -c1:
// NumTasks=4, NtasksPerN:B:S:C=2:0:*:*, MinCPUsNode=2; a held -N2 job
// shows NumNodes=2-2 and NumTasks=2), and when the job was last looked at.
func (ls *loopState) shapeInfo(j *sched.Job, info *api.JobInfo) {
	r := &j.Req
	_, tasks := sched.JobTasks(j)
	info.NumTasks = int(tasks)
	if neverStarted(j) && r.NTasks == 0 {
		info.NumTasks = 0 // NumTasks=N/A: no -n and never laid out (oracle, cancel-pending-show)
	}
	info.NTasksPerNode = int(r.NTasksPerNode)
	info.MinCPUsNode = int(max(r.MinCPUsPerNode, max(r.NTasksPerNode, 1)*max(r.CPUsPerTask, 1)))
	info.MaxNodes = int(max(r.MaxNodes, r.MinNodes, 1))
	if r.GPUs > 0 {
		info.TresPerJob = "gres/gpu:" + strconv.FormatInt(r.GPUs, 10)
		if r.GPUsType != "" {
			info.TresPerJob = "gres/gpu:" + r.GPUsType + ":" + strconv.FormatInt(r.GPUs, 10)
		}
	}
	if r.CPUsPerTask > 1 {
		info.TresPerTask = "cpu=" + strconv.Itoa(int(r.CPUsPerTask))
	}
	// Sluice does not record the scheduler's last look at a job: its start,
	// else its submission (Slurm evaluates a job when it is submitted).
	info.LastSchedEval = j.SubmitTime
	if !j.StartTime.IsZero() {
		info.LastSchedEval = j.StartTime
	}
	if info.AccrueTime.IsZero() && !j.StartTime.IsZero() {
		// A job started at once accrued from its eligibility (Slurm's
		// AccrueTime of a job that never pended is its submit time).
		info.AccrueTime = info.EligibleTime
	}
}

func (ls *loopState) specFor(j *sched.Job) *api.JobSpec {
	if s := ls.specs[j.ID]; s != nil {
		return s
	}
	if j.Array != nil {
		return ls.specs[j.Array.JobID]
	}
	return nil
}

// expandStdPattern fills %% %j %x %u %A %a in one left-to-right scan
// (a listing expands two patterns per job: no replacer is built).
func expandStdPattern(pattern string, j *sched.Job) string {
	if !strings.Contains(pattern, "%") {
		return pattern
	}
	arrayID, task := uint64(j.ID), "4294967294"
	if j.Array != nil {
		arrayID, task = uint64(j.Array.JobID), strconv.Itoa(int(j.Array.TaskID))
	}
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		if pattern[i] != '%' || i+1 == len(pattern) {
			b.WriteByte(pattern[i])
			continue
		}
		switch pattern[i+1] {
		case '%':
			b.WriteByte('%')
		case 'j':
			b.WriteString(strconv.FormatUint(uint64(j.ID), 10))
		case 'x':
			b.WriteString(j.Req.Name)
		case 'u':
			b.WriteString(j.User)
		case 'A':
			b.WriteString(strconv.FormatUint(arrayID, 10))
		case 'a':
			b.WriteString(task)
		default:
			b.WriteByte('%')
			continue
		}
		i++
	}
	return b.String()
}

// stdPath expands the output pattern the way scontrol shows StdOut: the
// job id patterns are filled in, the path made absolute.
func stdPath(dir, pattern string, j *sched.Job, def string) string {
	if pattern == "" {
		pattern = def
		if pattern != "" && j.Array != nil {
			pattern = "slurm-%A_%a.out"
		}
	}
	if pattern == "" {
		return ""
	}
	out := expandStdPattern(pattern, j)
	if !strings.HasPrefix(out, "/") && dir != "" {
		out = strings.TrimSuffix(dir, "/") + "/" + out
	}
	return out
}

// whyPending is the plain sentence scontrol show job prints for a pending
// job: the reason in words, what holds the resources and when the job is
// expected to start.
func (ls *loopState) whyPending(j *sched.Job, now time.Time) string {
	var b strings.Builder
	switch j.Reason {
	case sched.ReasonJobHeldUser:
		b.WriteString("The job is held by its user; `scontrol release " + j.JobIDString() + "` lets it run.")
	case sched.ReasonJobHeldAdmin:
		b.WriteString("The job is held by an administrator; only an operator can release it.")
	case sched.ReasonDependency:
		b.WriteString("The job waits for its dependency (" + j.Req.Dependency + ") to be satisfied.")
	case sched.ReasonDependencyNeverSatisfied:
		b.WriteString("The job's dependency (" + j.Req.Dependency + ") can never be satisfied; cancel it or update its dependency.")
	case sched.ReasonBeginTime:
		fmt.Fprintf(&b, "The job may not start before %s (--begin or requeue delay).", fmtTime(j.Req.BeginTime))
	case sched.ReasonPriority:
		b.WriteString("Jobs with a higher priority are waiting for the same resources and will start first.")
	case sched.ReasonResources:
		b.WriteString("The job is next in line but the resources it needs are in use")
		if holders := ls.holders(j); holders != "" {
			b.WriteString(" by " + holders)
		}
		b.WriteString(".")
	case sched.ReasonPartitionDown:
		b.WriteString("The job's partition is DOWN.")
	case sched.ReasonNone:
		b.WriteString("The job has not been considered by the scheduler yet.")
	default:
		fmt.Fprintf(&b, "The job is blocked by %s.", j.Reason)
		if strings.Contains(string(j.Reason), "Limit") || strings.HasPrefix(string(j.Reason), "QOS") ||
			strings.HasPrefix(string(j.Reason), "Assoc") {
			b.WriteString(" An accounting limit (sacctmgr show qos / assoc) holds it until running jobs of the same user, account or QOS end.")
		}
	}
	if !j.ExpectedStart.IsZero() {
		fmt.Fprintf(&b, " Expected start: %s", fmtTime(j.ExpectedStart))
		if len(j.PlannedNodes) > 0 {
			fmt.Fprintf(&b, " on %s", compressNodes(ls.st.Cluster, j.PlannedNodes))
		}
		b.WriteString(".")
	}
	return b.String()
}

// holders lists the running jobs on the nodes j could use.
func (ls *loopState) holders(j *sched.Job) string {
	cl := ls.st.Cluster
	var ids []string
	for _, o := range ls.st.Jobs() {
		if !isActive(o) {
			continue
		}
		for _, n := range o.Alloc.Nodes {
			if inPartitions(cl, j.Partitions, n) {
				ids = append(ids, o.JobIDString())
				break
			}
		}
		if len(ids) == 8 {
			ids = append(ids, "...")
			break
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return "job(s) " + strings.Join(ids, ", ")
}

func inPartitions(cl *sched.Cluster, parts []int32, node int32) bool {
	for _, p := range parts {
		if cl.Partitions[p].Nodes.Has(int(node)) {
			return true
		}
	}
	return false
}

// fmtTime prints a time as Slurm does (2026-01-02T15:04:05), "Unknown" when unset.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "Unknown"
	}
	return t.Local().Format("2006-01-02T15:04:05")
}

// nodeRecord renders node i for the API.
func (ls *loopState) nodeRecord(i int) api.NodeRecord {
	cl := ls.st.Cluster
	n := &cl.Nodes[i]
	rt := &ls.nodes[i]
	rec := api.NodeRecord{Name: n.Name, State: n.State.String(), StateShort: n.State.Short(),
		StateLong: longNodeState(n.State), CPUs: int(n.CPUs), AllocCPUs: int(n.AllocCPUs), Sockets: int(n.Sockets),
		Cores: int(n.CoresPerSocket), Threads: int(n.ThreadsPerCore), RealMemory: n.RealMemory,
		AllocMem: n.AllocMem, Features: strings.Join(n.Features, ","), Weight: n.Weight, Reason: n.Reason,
		ReasonTime: n.ReasonTime, ReasonUser: n.ReasonUser, Addr: rt.info.Addr, Hostname: rt.info.Hostname,
		Version: rt.info.Version, BootTime: rt.info.BootTime, LastHeard: rt.lastHeard, Jobs: int(n.Jobs),
		Arch: rt.info.Arch, OS: rt.info.OS}
	if l := rt.info.Load; l != nil && rt.registered {
		rec.CPULoad, rec.FreeMem, rec.LoadKnown = l.CPULoad, l.FreeMemMB, true
	}
	for _, p := range n.Partitions {
		rec.Partitions = append(rec.Partitions, cl.Partitions[p].Name)
	}
	var gres, used []string
	for k, cnt := range n.Gres {
		if cnt == 0 {
			continue
		}
		gres = append(gres, fmt.Sprintf("%s:%d", cl.GresKinds[k], cnt))
		used = append(used, fmt.Sprintf("%s:%d", cl.GresKinds[k], n.AllocGres[k]))
	}
	rec.Gres, rec.GresUsed = strings.Join(gres, ","), strings.Join(used, ",")
	cfg := tres.Vector{"cpu": int64(n.CPUs), "mem": n.RealMemory, "billing": int64(n.CPUs)}
	for k, cnt := range n.Gres {
		if cnt > 0 {
			cfg["gres/"+cl.GresKinds[k].Name] += cnt
		}
	}
	rec.CfgTRES = nodeCfgTRES(cfg)
	if n.AllocCPUs > 0 || n.AllocMem > 0 {
		alloc := tres.Vector{"cpu": int64(n.AllocCPUs), "mem": n.AllocMem}
		for k, cnt := range n.AllocGres {
			if cnt > 0 {
				alloc["gres/"+cl.GresKinds[k].Name] += cnt
			}
		}
		rec.AllocTRES = alloc.String()
	}
	ls.resvNodeState(i, &rec) // RESERVED/MAINT (resv.go)
	return rec
}

// nodeCfgTRES is a node's CfgTRES: memory in the largest unit it reaches,
// with two decimals when not whole, as Slurm prints it there (oracle:
// RealMemory=64000 is mem=62.50G; 65536 would be 64G).
func nodeCfgTRES(v tres.Vector) string {
	mem := v["mem"]
	delete(v, "mem")
	s := v.String()
	if mem <= 0 {
		return s
	}
	f, unit := float64(mem), 0
	for f >= 1024 && unit < 3 {
		f /= 1024
		unit++
	}
	m := strconv.FormatFloat(f, 'f', 2, 64)
	if f == float64(int64(f)) {
		m = strconv.FormatInt(int64(f), 10)
	}
	m = "mem=" + m + string("MGTP"[unit])
	if cpu, rest, ok := strings.Cut(s, ","); ok && strings.HasPrefix(cpu, "cpu=") {
		return cpu + "," + m + "," + rest // Slurm's order: cpu, mem, then the rest
	}
	return m + "," + s
}

// longNodeState is sinfo's %T: idle, mixed, allocated, down, drained,
// draining, ... with the '*' suffix of a non-responding node.
func longNodeState(s sched.NodeState) string {
	busy := s.Base() == sched.NodeAllocated || s.Base() == sched.NodeMixed
	var out string
	switch {
	case s.Base() == sched.NodeDown:
		out = "down"
	case s.Has(sched.NodeFlagDrain) && busy:
		out = "draining"
	case s.Has(sched.NodeFlagDrain):
		out = "drained"
	case s.Has(sched.NodeFlagFail) && busy:
		out = "failing"
	case s.Has(sched.NodeFlagFail):
		out = "fail"
	default:
		out = map[sched.NodeState]string{sched.NodeIdle: "idle", sched.NodeMixed: "mixed",
			sched.NodeAllocated: "allocated", sched.NodeFuture: "future", sched.NodeUnknown: "unknown"}[s.Base()]
	}
	if s.Has(sched.NodeFlagNoRespond) {
		out += "*"
	}
	return out
}

var partStates = map[sched.PartitionState]string{sched.PartitionUp: "UP", sched.PartitionDown: "DOWN",
	sched.PartitionDrain: "DRAIN", sched.PartitionInactive: "INACTIVE"}

// partitionRecord renders partition i.
func (ls *loopState) partitionRecord(i int) api.PartitionRecord {
	cl := ls.st.Cluster
	p := &cl.Partitions[i]
	names := cl.NodeNames(p.NodeList)
	all := func(l []string) string {
		if l == nil {
			return "ALL"
		}
		return strings.Join(l, ",")
	}
	os := map[sched.OverSubscribeMode]string{sched.OverSubscribeNo: "NO", sched.OverSubscribeExclusive: "EXCLUSIVE",
		sched.OverSubscribeYes: "YES", sched.OverSubscribeForce: "FORCE"}[p.OverSubscribe.Mode]
	if p.OverSubscribe.Mode == sched.OverSubscribeYes || p.OverSubscribe.Mode == sched.OverSubscribeForce {
		os += ":" + strconv.Itoa(int(p.OverSubscribe.Count))
	}
	tv := tres.Vector{}
	for k, v := range p.TRES {
		tv[k] = v
	}
	rec := api.PartitionRecord{Name: p.Name, Default: p.Default, State: partStates[p.State],
		MaxTimeSec: limitSeconds(p.MaxTime), DefaultTimeSec: limitSeconds(p.DefaultTime), Nodes: compressNodes(cl, p.NodeList),
		NodeNames: names, TotalCPUs: p.TotalCPUs, TotalNodes: len(p.NodeList), MinNodes: p.MinNodes, MaxNodes: p.MaxNodes,
		MaxCPUsPerNode: p.MaxCPUsPerNode, PriorityJobFactor: p.PriorityJobFactor, PriorityTier: p.PriorityTier,
		OverSubscribe: os, PreemptMode: preemptModeString(p.PreemptMode, ls.cfg.PreemptMode),
		GraceTimeSec: int64(p.GraceTime / time.Second), AllowAccounts: all(p.AllowAccounts),
		DenyAccounts: strings.Join(p.DenyAccounts, ","), AllowQOS: all(p.AllowQOS), DenyQOS: strings.Join(p.DenyQOS, ","),
		AllowGroups: all(p.AllowGroups), QOS: p.QOS, DefMemPerCPU: p.DefMemPerCPU, DefMemPerNode: p.DefMemPerNode,
		MaxMemPerCPU: p.MaxMemPerCPU, MaxMemPerNode: p.MaxMemPerNode, Hidden: p.Hidden, RootOnly: p.RootOnly,
		ExclusiveUser: p.ExclusiveUser, TRES: tv.String()}
	if p.DefaultTime == 0 {
		rec.DefaultTimeSec = 0
	}
	rec.NodeSets = ls.partitionNodeSets(p.Name)
	return rec
}

// partitionNodeSets is the NodeSets= scontrol shows for a partition: the
// node sets its Nodes= names, "ALL" for Nodes=ALL (Slurm 24.11). A
// partition made by scontrol create has none.
func (ls *loopState) partitionNodeSets(name string) string {
	if ls.c == nil || ls.c.cfg == nil {
		return ""
	}
	for _, cp := range ls.c.cfg.Partitions {
		if cp.Name != name {
			continue
		}
		if strings.EqualFold(cp.NodesExpr, "ALL") {
			return "ALL"
		}
		var sets []string
		for _, item := range strings.Split(cp.NodesExpr, ",") {
			if ls.c.cfg.NodeSet(item) != nil {
				sets = append(sets, item)
			}
		}
		return strings.Join(sets, ",")
	}
	return ""
}

// preemptModeString prints a PreemptMode the way scontrol does.
func preemptModeString(m, def sched.PreemptMode) string {
	if m == sched.PreemptUnset {
		m = def
	}
	var parts []string
	for _, f := range []struct {
		bit  sched.PreemptMode
		name string
	}{{sched.PreemptOff, "OFF"}, {sched.PreemptCancel, "CANCEL"}, {sched.PreemptRequeue, "REQUEUE"},
		{sched.PreemptSuspend, "SUSPEND"}, {sched.PreemptGang, "GANG"}, {sched.PreemptWithin, "WITHIN"},
		{sched.PreemptPriority, "PRIORITY"}} {
		if m&f.bit != 0 {
			parts = append(parts, f.name)
		}
	}
	if len(parts) == 0 {
		return "OFF"
	}
	return strings.Join(parts, ",")
}
