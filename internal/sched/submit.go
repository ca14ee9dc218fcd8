package sched

import (
	"slices"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/priority"
)

// Submitter identifies who submits a job (the controller takes it from
// the kernel or a token, never from the request).
type Submitter struct {
	User  string
	UID   uint32
	GID   uint32
	Group string
	// Admin is an operator or administrator (may use --priority, --uid...).
	Admin bool
}

// Submit validates a request the way slurmctld does at submission and
// queues the job: partitions, association and QOS, the array spec, GRES
// names, licenses, partition limits under EnforcePartLimits, the
// submit-count limits (every array task counts) and, under strict checking
// (QOS DenyOnLimit, or no QOS), every limit the job breaches on its own.
// A rejection is a *SubmitError carrying Slurm's message and, for limits,
// the reason name. As in slurmctld, the job id is taken once those checks
// pass: a bad reservation or dependency found later still uses it up, and
// a request no node could ever satisfy ("Requested node configuration is
// not available") is checked last, unless the job is held, and leaves the
// job behind FAILED with Reason=BadConstraints; Submit then returns that
// job with the error.
func (st *State) Submit(req Request, who Submitter, now time.Time) (*Job, error) {
	if st.Config.MaxJobCount > 0 && len(st.jobList) >= st.Config.MaxJobCount {
		return nil, &SubmitError{Err: ErrMaxJobCount}
	}
	j := &Job{User: who.User, UID: who.UID, GID: who.GID, Group: who.Group, Req: req, Partition: -1,
		assoc: -1, qos: -1, SubmitTime: now, State: JobPending, Reason: ReasonNone}
	for _, step := range submitSteps {
		if err := step(st, j, who); err != nil {
			return nil, err
		}
	}
	j.ID = st.NextJobID
	st.NextJobID++
	if j.Array != nil {
		j.Array.JobID = j.ID
	}
	for _, step := range recordSteps {
		if err := step(st, j, who); err != nil {
			return nil, err
		}
	}
	if req.Hold {
		j.Hold, j.Reason = HoldUser, ReasonJobHeldUser
	} else if len(j.Req.Deps) > 0 {
		// slurmctld gives a job with dependencies its reason when it
		// accepts it, before any scheduling pass (oracle, dependencies:
		// "3 a PD Dependency" a second after a burst of submissions).
		j.Reason = ReasonDependency
	} else if j.Req.BeginTime.After(now) {
		// Likewise a job with a begin time ahead (oracle, holds-begin:
		// "2 PD BeginTime" before the first pass).
		j.Reason = ReasonBeginTime
	}
	if req.Priority > 0 && who.Admin {
		j.Priority, j.DirectPriority = req.Priority, true
	}
	j.TimeLimit = effectiveTimeLimit(st.Policy, st.Cluster, j, j.Partitions[0])
	// A held job is not refused: once released it pends with the reason,
	// as in slurmctld.
	if err := st.checkFits(j, who); err != nil {
		if !req.Hold {
			st.failAtSubmit(j, now)
			return j, err
		}
		j.Unfit = st.unfitReason(j)
	}
	st.addJob(j)
	st.countSubmit(j, int64(j.Tasks()))
	return j, nil
}

// submitSteps are Submit's checks before the job gets its id, in
// slurmctld's order (a DenyOnLimit limit is reported before a bad
// dependency or node configuration), as method expressions: a list of
// method values bound to the State would allocate a closure per step on
// every submission.
var submitSteps = [...]func(*State, *Job, Submitter) error{(*State).checkRequest, (*State).checkPrivileges,
	(*State).resolvePartitions, (*State).resolveAccount, (*State).resolveQOS, (*State).checkMemoryLimits,
	(*State).checkArray, (*State).checkGresNames, (*State).checkFeatures, (*State).checkLicenses, (*State).checkPartitionLimits,
	(*State).checkSubmitLimits} // license.go

// recordSteps are the checks slurmctld makes once the job record exists:
// a rejection there still uses up the job id.
var recordSteps = [...]func(*State, *Job, Submitter) error{(*State).checkReservation, (*State).checkDependency} // resv_state.go

// failAtSubmit keeps a job no node configuration could ever run as
// slurmctld does: FAILED at once with Reason=BadConstraints and exit code
// 1, listed by `squeue -t all` and recorded in accounting.
func (st *State) failAtSubmit(j *Job, now time.Time) {
	j.State, j.Reason, j.ExitCode = JobFailed, ReasonBadConstraints, 1
	j.EligibleTime, j.StartTime, j.EndTime = now, now, now
	st.addJob(j)
}

func reject(err error) error { return &SubmitError{Err: err} }

// resolvePartitions maps the requested partitions (or the default one) to
// indices, ordered by PriorityTier (highest first) as Slurm lists them.
func (st *State) resolvePartitions(j *Job, _ Submitter) error {
	cl := st.Cluster
	names := j.Req.Partitions
	if len(names) == 0 {
		if cl.DefaultPartition < 0 {
			return reject(ErrNoDefaultPartition)
		}
		j.Partitions = []int32{cl.DefaultPartition}
		return nil
	}
	for _, n := range names {
		i := cl.PartitionIndex(n)
		if i < 0 {
			return &SubmitError{Err: ErrInvalidPartition, Detail: "invalid partition specified: " + n}
		}
		if !slices.Contains(j.Partitions, i) {
			j.Partitions = append(j.Partitions, i)
		}
	}
	slices.SortStableFunc(j.Partitions, func(a, b int32) int {
		return int(cl.Partitions[b].PriorityTier) - int(cl.Partitions[a].PriorityTier)
	})
	return nil
}

// resolveAccount picks the account (--account or the user's default) and
// the user's association; with AccountingStorageEnforce=associations a job
// without one is rejected. Account names are case-insensitive as in
// Slurm's accounting (stored lowercase): -A Proj is account proj.
func (st *State) resolveAccount(j *Job, _ Submitter) error {
	p := st.Policy
	if p == nil {
		j.Account = j.Req.Account
		return nil
	}
	j.Account = strings.ToLower(j.Req.Account)
	if j.Account == "" {
		j.Account = p.Users[j.User].DefaultAccount
	}
	part := st.Cluster.Partitions[j.Partitions[0]].Name
	j.assoc = p.UserAssoc(j.User, j.Account, part)
	if j.assoc < 0 && st.Config.Enforce&(EnforceAssociations|EnforceLimits|EnforceQOS) != 0 {
		return reject(ErrInvalidAccount)
	}
	return nil
}

// resolveQOS picks the QOS (--qos or the association's default) and checks
// that the association may use it. QOS names are case-insensitive like
// account names (-q NORMAL is normal).
func (st *State) resolveQOS(j *Job, _ Submitter) error {
	p := st.Policy
	if p == nil {
		j.QOS = j.Req.QOS
		if j.QOS == "" {
			j.QOS = "normal"
		}
		return nil
	}
	j.QOS = strings.ToLower(j.Req.QOS)
	if j.QOS == "" {
		if j.assoc >= 0 && p.Assocs[j.assoc].DefaultQOS >= 0 {
			j.QOS = p.QOS[p.Assocs[j.assoc].DefaultQOS].Name
		} else {
			j.QOS = "normal"
		}
	}
	j.qos = p.QOSIndex(j.QOS)
	enforce := st.Config.Enforce&(EnforceQOS|EnforceLimits) != 0
	if j.qos < 0 {
		if enforce {
			return reject(ErrInvalidQOS)
		}
		return nil
	}
	if enforce && j.assoc >= 0 && !slices.Contains(p.Assocs[j.assoc].QOS, j.qos) {
		return reject(ErrInvalidQOS)
	}
	return nil
}

// checkArray parses --array against MaxArraySize.
func (st *State) checkArray(j *Job, _ Submitter) error {
	if j.Req.Array == "" {
		return nil
	}
	tasks, _, throttle, err := ParseArray(j.Req.Array, st.Config.MaxArraySize)
	if err != nil {
		return reject(ErrInvalidArray)
	}
	j.Array = &ArrayInfo{TaskID: -1, Tasks: tasks, Throttle: throttle}
	return nil
}

// checkDependency parses --dependency (unless already parsed), checks
// that every job it names exists (a job purged after MinJobAge is
// unknown: "Job dependency problem"), marks the dependencies on a whole
// array, and tests the list once, as slurmctld does at submission, so
// that a held job shows the states found then.
func (st *State) checkDependency(j *Job, _ Submitter) error {
	r := &j.Req
	if r.Dependency != "" && len(r.Deps) == 0 {
		deps, any, err := ParseDependency(r.Dependency)
		if err != nil {
			return reject(ErrDependency)
		}
		r.Deps, r.DepsAny = deps, any
	}
	if len(r.Deps) == 0 {
		return nil
	}
	r.Deps = slices.Clone(r.Deps) // a replayed or copied request shares it
	for i := range r.Deps {
		d := &r.Deps[i]
		if d.Kind == DepSingleton {
			continue
		}
		targets := st.depTargets(d.JobID)
		if len(targets) == 0 || d.TaskID >= 0 && !slices.ContainsFunc(targets, func(t *Job) bool { return hasTask(t, d.TaskID) }) {
			return reject(ErrDependency)
		}
		// The array's id names every task (id_*); a task's own job id
		// names that task only (printed as is).
		d.AllTasks = d.TaskID < 0 && targets[0].Array != nil && targets[0].Array.JobID == d.JobID
		if d.Kind == DepAfterCorr && d.AllTasks {
			d.CorrTasks = ArrayTaskSet(targets)
		}
	}
	if err := st.checkCircular(j); err != nil {
		return err
	}
	_, states := evalDeps(j, &depEval{now: j.SubmitTime, targets: st.depTargets, corrTarget: st.corrTarget,
		singletonBusy: st.singletonBusy, task: corrOwn})
	recordDepStates(j, states)
	return nil
}

// maxDependDepth is how far Slurm follows dependencies looking for a
// cycle (DependencyParameters max_depend_depth, default 10).
const maxDependDepth = 10

// checkCircular refuses, on scontrol update of a job already known, a
// dependency on the job itself ("Job dependency problem") or on a job
// that depends on it, directly or through others ("Circular job
// dependency"), as slurmctld does.
func (st *State) checkCircular(j *Job) error {
	if j.ID == 0 {
		return nil // a new job: nothing can depend on it yet
	}
	self := func(id JobID) bool { return id == j.ID || j.Array != nil && id == j.Array.JobID }
	if slices.ContainsFunc(j.Req.Deps, func(d Dependency) bool { return d.Kind != DepSingleton && self(d.JobID) }) {
		return reject(ErrDependency)
	}
	seen := map[JobID]bool{}
	level := j.Req.Deps
	for depth := 0; depth < maxDependDepth && len(level) > 0; depth++ {
		var next []Dependency
		for _, d := range level {
			if d.Kind == DepSingleton || seen[d.JobID] {
				continue
			}
			if self(d.JobID) {
				return reject(ErrCircularDependency)
			}
			seen[d.JobID] = true
			for _, t := range st.depTargets(d.JobID) {
				next = append(next, t.Req.Deps...)
			}
		}
		level = next
	}
	return nil
}

// corrTarget returns the member of array id that holds task, or nil.
func (st *State) corrTarget(id JobID, task int32) *Job {
	for _, m := range st.depTargets(id) {
		if hasTask(m, task) {
			return m
		}
	}
	return nil
}

// ArrayTaskSet is the set of task ids of an array's members (pending
// records and tasks).
func ArrayTaskSet(members []*Job) NodeSet {
	var set NodeSet
	add := func(i int) bool {
		for len(set) <= i>>6 {
			set = append(set, 0)
		}
		set.Set(i)
		return true
	}
	for _, m := range members {
		if m.Array.TaskID >= 0 {
			add(int(m.Array.TaskID))
		} else {
			m.Array.Tasks.ForEach(add)
		}
	}
	return set
}

// depTargets returns the jobs a dependency on id names: every member of
// the array id, or the job id.
func (st *State) depTargets(id JobID) []*Job {
	var members []*Job
	if st.arrayJobs > 0 {
		for _, o := range st.jobList {
			if o.Array != nil && o.Array.JobID == id {
				members = append(members, o)
			}
		}
	}
	if len(members) > 0 {
		return members
	}
	if t := st.jobs[id]; t != nil {
		return []*Job{t}
	}
	return nil
}

// checkPartitionLimits applies EnforcePartLimits: NO accepts a job that
// breaks its partitions' limits (it pends with PartitionTimeLimit,
// PartitionNodeLimit, AccountNotAllowed...), ANY rejects it unless one
// requested partition fits, ALL unless every one does.
func (st *State) checkPartitionLimits(j *Job, _ Submitter) error {
	if !st.anyAcceptsSubmit(j) {
		return reject(ErrPartInactive)
	}
	mode := st.Config.EnforcePartLimits
	if mode == EnforcePartNo {
		return nil
	}
	var first Reason
	ok := 0
	for _, part := range j.Partitions {
		if r := partitionLimitReason(st.Policy, st.Cluster, j, part); r != "" {
			if first == "" {
				first = r
			}
			continue
		}
		ok++
	}
	if ok == len(j.Partitions) || mode == EnforcePartAny && ok > 0 {
		return nil
	}
	return reject(partitionLimitError(first))
}

// partitionLimitError maps a partition limit to the error Slurm returns.
func partitionLimitError(r Reason) error {
	switch r {
	case ReasonPartitionTimeLimit:
		return ErrInvalidTimeLimit
	case ReasonPartitionNodeLimit:
		return ErrNodeCount
	case ReasonAccountNotAllowed:
		return ErrInvalidAccount
	case ReasonQOSNotAllowed:
		return ErrInvalidQOS
	}
	return ErrPartConfig
}

// checkFits rejects a request that no node set of any requested partition
// could ever satisfy, even with the whole cluster idle: Slurm's
// "Requested node configuration is not available".
func (st *State) checkFits(j *Job, _ Submitter) error {
	if j.Req.ZeroNodes {
		// Slurm 24.11: sbatch -N 0 uses up a job id, kept FAILED
		// (BadConstraints), and is refused with this message.
		return &SubmitError{Err: ErrNodeCount}
	}
	sel := st.selector()
	empty := st.emptyView()
	for _, part := range j.Partitions {
		pt := &st.Cluster.Partitions[part]
		mask := pt.Nodes
		if j.Req.Constraint != "" || len(j.Req.NodeList) > 0 || len(j.Req.Exclude) > 0 {
			mask = pt.Nodes.Clone()
			mask.And(jobNodeMask(st.Cluster, &j.Req, &st.masks))
		}
		if mask.Empty() {
			continue
		}
		if st.everFit.canEverFit(st, sel, j, part, empty, mask) {
			return nil
		}
	}
	return &SubmitError{Err: ErrNodeConfig, Detail: st.unfitDetail(j)}
}

// unfitReason is the pending reason of a job no node can ever run, as
// slurmctld gives it to such a job submitted held and then released:
// PartitionNodeLimit for more nodes than its partition has,
// PartitionConfig for more CPUs, else BadConstraints.
func (st *State) unfitReason(j *Job) Reason {
	pt := &st.Cluster.Partitions[j.Partitions[0]]
	s := jobShape(&st.Config, j, pt)
	if int(s.minNodes) > pt.Nodes.Count() {
		return ReasonPartitionNodeLimit
	}
	var cpus int64
	for i := range st.Cluster.Nodes {
		if pt.Nodes.Has(i) {
			cpus += int64(st.Cluster.Nodes[i].CPUs)
		}
	}
	if cpuFloor(&j.Req, pt) > cpus {
		return ReasonPartitionConfig
	}
	return ReasonBadConstraints
}

// unfitDetail explains a request no node could satisfy as slurmctld does
// when no node of the job's partitions has enough CPUs or memory for one
// node's share of it: "CPU count per node can not be satisfied", else
// "Memory specification can not be satisfied"; "" when some node has both
// (too many nodes, GPUs... get no explanation).
func (st *State) unfitDetail(j *Job) string {
	cpuOK, memOK := false, false
	for _, part := range j.Partitions {
		pt := &st.Cluster.Partitions[part]
		s := jobShape(&st.Config, j, pt)
		cpus := max(s.cpusPerTask, s.minCPUsPerNode, s.tasksPerNode*s.cpusPerTask)
		mem := s.memPerNode
		if mem == 0 {
			mem = s.memPerCPU * int64(cpus)
		}
		for i := range st.Cluster.Nodes {
			if !pt.Nodes.Has(i) {
				continue
			}
			n := &st.Cluster.Nodes[i]
			cpuOK = cpuOK || n.CPUs >= cpus
			memOK = memOK || n.RealMemory >= mem
		}
	}
	switch {
	case !cpuOK:
		return "CPU count per node can not be satisfied"
	case !memOK:
		return "Memory specification can not be satisfied"
	}
	return ""
}

// checkSubmitLimits applies the submit-count limits (always) and, when the
// job's or its partition's QOS has DenyOnLimit (or the job has no QOS),
// every limit the job breaks on its own.
func (st *State) checkSubmitLimits(j *Job, _ Submitter) error {
	p := st.Policy
	if p == nil || st.Config.Enforce&(EnforceLimits|EnforceSafe) == 0 {
		return nil
	}
	part := j.Partitions[0]
	lc := limitCheck{p: p, use: &st.usage, qos: orderedQOS(p, j.qos, partQOS(p, st.Cluster, part)),
		assoc: j.assocFor(p, st.Cluster, part), user: j.User, account: j.Account,
		wall: effectiveTimeLimit(p, st.Cluster, j, part), tasks: int64(j.Tasks())}
	if r := lc.submitCounts(); r != "" {
		return &SubmitError{Reason: r, Err: ErrAccountingPolicy}
	}
	if !st.strictLimits(lc.qos) {
		return nil
	}
	lc.use = nil
	lc.req = make([]int64, len(p.TRES))
	lc.perNode = make([]int64, len(p.TRES))
	requestTRES(st.Cluster, &st.Config, p, j, part, lc.req, lc.perNode)
	if r := lc.runnable(); r != "" {
		return &SubmitError{Reason: r, Err: ErrAccountingPolicy}
	}
	return nil
}

// strictLimits reports Slurm's "strict checking" at submit: a QOS with
// DenyOnLimit among the job's QOS, or no QOS at all.
func (st *State) strictLimits(qs [2]int32) bool {
	none := true
	for _, q := range qs {
		if q >= 0 {
			none = false
			if st.Policy.QOS[q].Flags&QOSDenyOnLimit != 0 {
				return true
			}
		}
	}
	return none
}

// selector returns a selector for submit-time checks.
func (st *State) selector() *selector {
	if st.sel == nil || st.sel.c != st.Cluster {
		st.sel = newSelector(st.Cluster, &st.Config)
	}
	st.sel.cfg = &st.Config
	return st.sel
}

// emptyView returns the cluster with every node free (cached).
func (st *State) emptyView() *Avail {
	if st.empty == nil || len(st.empty.CPUs) != len(st.Cluster.Nodes) {
		st.empty = st.selector().emptyAvail()
	}
	return st.empty
}

// checkGresNames rejects a GRES name that slurm.conf's GresTypes does not
// list (nor any node has), as Slurm's clients do before submitting:
// "Invalid generic resource (gres) specification", no job id used. A
// listed name, or a GPU type, that no node has is a request no node can
// satisfy (checkFits), as in Slurm 24.11.
func (st *State) checkGresNames(j *Job, _ Submitter) error {
	known := func(name string) bool {
		if slices.Contains(st.Config.GresTypes, strings.ToLower(name)) {
			return true
		}
		for _, k := range st.Cluster.GresKinds {
			if k.Name == name {
				return true
			}
		}
		return false
	}
	for _, g := range j.Req.Gres {
		if !known(g.Name) {
			return &SubmitError{Err: ErrInvalidGres, ClientSide: true}
		}
	}
	if (j.Req.GPUs > 0 || j.Req.GPUsPerTask > 0) && !known("gpu") {
		return &SubmitError{Err: ErrInvalidGres, ClientSide: true}
	}
	return nil
}

// checkPrivileges applies the operator-only options: a negative --nice
// is refused (priority.ValidateNice, Slurm's messages); a user's
// --priority is ignored, the job accepted with its computed priority
// (oracle, sbatch-options-more: --priority=100 from alice pends at 39).
func (st *State) checkPrivileges(j *Job, who Submitter) error {
	if j.Req.Priority > 0 && !who.Admin {
		j.Req.Priority = 0
	}
	if err := priority.ValidateNice(int64(j.Req.Nice), who.Admin); err != nil {
		return reject(err)
	}
	return nil
}

// anyAcceptsSubmit reports whether one of the job's partitions takes new
// jobs: UP and DOWN partitions do (a DOWN partition's jobs pend with
// PartitionDown), DRAIN and INACTIVE ones refuse them, Slurm's
// "Required partition not available (inactive or drain)".
func (st *State) anyAcceptsSubmit(j *Job) bool {
	for _, part := range j.Partitions {
		switch st.Cluster.Partitions[part].State {
		case PartitionUp, PartitionDown:
			return true
		}
	}
	return false
}

// checkMemoryLimits applies MaxMemPerNode and MaxMemPerCPU (the first
// requested partition's, else the cluster's): a --mem above MaxMemPerNode
// is refused ("Memory required by task is not available"); a
// --mem-per-cpu above MaxMemPerCPU raises the job's CPUs per task until
// the memory per CPU fits, as Slurm does.
func (st *State) checkMemoryLimits(j *Job, _ Submitter) error {
	pt := &st.Cluster.Partitions[j.Partitions[0]]
	maxNode, maxCPU := pt.MaxMemPerNode, pt.MaxMemPerCPU
	if maxNode == 0 {
		maxNode = st.Config.MaxMemPerNode
	}
	if maxCPU == 0 {
		maxCPU = st.Config.MaxMemPerCPU
	}
	r := &j.Req
	if maxNode > 0 && r.MemPerNode > maxNode {
		return reject(ErrMemory)
	}
	if maxCPU > 0 && r.MemPerCPU > maxCPU {
		cpt := int64(max(r.CPUsPerTask, 1))
		total := r.MemPerCPU * cpt
		newCPT := (total + maxCPU - 1) / maxCPU
		r.CPUsPerTask = int32(newCPT)
		r.MemPerCPU = (total + newCPT - 1) / newCPT
	}
	return nil
}

// checkRequest rejects malformed numbers and unknown node names with
// Slurm's messages before anything else looks at the request.
func (st *State) checkRequest(j *Job, _ Submitter) error {
	r := &j.Req
	switch {
	case r.TimeLimit < 0 || r.TimeMin < 0 || r.TimeLimit > 0 && r.TimeMin > r.TimeLimit:
		return reject(ErrInvalidTimeLimit)
	case r.MinNodes < 0 || r.MaxNodes < 0 || r.MaxNodes > 0 && r.MaxNodes < r.MinNodes:
		return reject(ErrNodeCount)
	case r.NTasks < 0 || r.CPUsPerTask < 0 || r.NTasksPerNode < 0 || r.MinCPUsPerNode < 0 || r.CPUsPerGPU < 0:
		return reject(ErrTooManyCPUs)
	case r.MemPerNode < 0 || r.MemPerCPU < 0 || r.MemPerGPU < 0:
		return reject(ErrMemory)
	case r.GPUs < 0 || r.GPUsPerTask < 0:
		return reject(ErrInvalidGres)
	}
	for _, g := range r.Gres {
		if g.Count < 0 || g.Name == "" {
			return reject(ErrInvalidGres)
		}
	}
	for _, names := range [][]string{r.NodeList, r.Exclude} {
		for _, n := range names {
			if st.Cluster.NodeIndex(n) < 0 {
				return reject(ErrInvalidNodeName)
			}
		}
	}
	return nil
}

// SetSubmitReason gives a new pending job the reason slurmctld gives it
// at submission, shown until the first scheduling pass looks at it (batch
// jobs wait up to batch_sched_delay for one). Submit already gave a hold,
// Dependency or BeginTime; here slurmctld's submit-time dependency test
// turns a dependency that already failed into DependencyNeverSatisfied
// (oracle: afternotok on a job that completed), and a job behind a
// runnable pending job of as high a priority in one of its partitions
// shows Priority (oracle: of two jobs of equal priority submitted
// together, the second shows "PD Priority" and the first "PD None").
func (st *State) SetSubmitReason(j *Job, now time.Time) {
	if j.State.Base() != JobPending {
		return
	}
	switch j.Reason {
	case ReasonDependency:
		e := depEval{now: now, targets: st.depTargets, singletonBusy: st.singletonBusy, task: corrSkip}
		if res, states := evalDeps(j, &e); res == depNever {
			recordDepStates(j, states)
			j.Reason = ReasonDependencyNeverSatisfied
		}
	case ReasonNone:
		if !st.topPriority(j, now) {
			j.Reason = ReasonPriority
		}
	}
}

// topPriority reports whether no other runnable pending job sharing one
// of j's partitions comes before it: held jobs, jobs waiting for a
// dependency, a begin time or a limit do not count.
func (st *State) topPriority(j *Job, now time.Time) bool {
	for _, o := range st.jobList {
		if o == j || o.State.Base() != JobPending || o.Hold != HoldNone || o.Priority < j.Priority ||
			o.Req.BeginTime.After(now) || !runnableReason(o.Reason) || !sharePartition(o, j) {
			continue
		}
		return false
	}
	return true
}

// runnableReason reports whether a pending job's reason leaves it
// competing for resources.
func runnableReason(r Reason) bool {
	return r == ReasonNone || r == ReasonPriority || r == ReasonResources
}

// sharePartition reports whether two jobs may run in a common partition.
func sharePartition(a, b *Job) bool {
	for _, p := range a.Partitions {
		if slices.Contains(b.Partitions, p) {
			return true
		}
	}
	return false
}
