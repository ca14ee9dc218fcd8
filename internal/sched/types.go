package sched

import (
	"time"
)

// ---------------------------------------------------------------------------
// Nodes

// NodeState is a Slurm node state: a base state in the low four bits and
// flags above them, as Slurm itself stores it (node_state_t). The base state
// of a node that is up follows its allocation (IDLE, MIXED, ALLOCATED); DOWN
// and FUTURE are set by the driver; DRAIN and FAIL are flags so that a
// draining node keeps showing its allocation (DRAINING vs DRAINED).
type NodeState uint16

// Base node states (the low four bits of NodeState).
const (
	NodeUnknown   NodeState = 0 // not yet registered (State=UNKNOWN in slurm.conf)
	NodeDown      NodeState = 1
	NodeIdle      NodeState = 2
	NodeAllocated NodeState = 3
	NodeMixed     NodeState = 4
	NodeFuture    NodeState = 5

	nodeBaseMask NodeState = 0x000f
)

// Node state flags (combined with a base state).
const (
	NodeFlagDrain      NodeState = 1 << 4 // DRAIN: take no new jobs
	NodeFlagCompleting NodeState = 1 << 5 // COMPLETING: epilog of an ended job still runs
	NodeFlagFail       NodeState = 1 << 6 // FAIL: like DRAIN, after a failure
	NodeFlagNoRespond  NodeState = 1 << 7 // not responding ('*' suffix)
	NodeFlagPlanned    NodeState = 1 << 8 // PLANNED by backfill ('-' suffix)
	NodeFlagMaint      NodeState = 1 << 9 // in a maintenance reservation
)

// Base returns the base state without flags.
func (s NodeState) Base() NodeState { return s & nodeBaseMask }

// Has reports whether flag f is set.
func (s NodeState) Has(f NodeState) bool { return s&f != 0 }

// GresKind is one configured generic resource kind: a name ("gpu") and an
// optional type ("a100"). Node GRES counts are kept per kind, so
// `Gres=gpu:a100:8` and `Gres=gpu:4` are two kinds of the name "gpu".
type GresKind struct {
	Name string
	Type string
}

// String returns Slurm's spelling: "gpu" or "gpu:a100".
func (k GresKind) String() string {
	if k.Type == "" {
		return k.Name
	}
	return k.Name + ":" + k.Type
}

// TRESName returns the TRES name of the kind: "gres/gpu" or "gres/gpu:a100".
func (k GresKind) TRESName() string { return "gres/" + k.String() }

// Node is one compute node. Nodes are addressed by their index in
// Cluster.Nodes everywhere in the core (NodeSet bitsets, allocations), so a
// node is never looked up by name in the scheduling loop.
type Node struct {
	// Name is the NodeName.
	Name string
	// CPUs is the number of logical CPUs (Sockets*CoresPerSocket*ThreadsPerCore
	// unless CPUs= says otherwise).
	CPUs int32
	// Sockets, CoresPerSocket and ThreadsPerCore describe the layout; with
	// CR_Core a job is given whole cores, i.e. multiples of ThreadsPerCore.
	Sockets        int32
	CoresPerSocket int32
	ThreadsPerCore int32
	// RealMemory is the node's memory in MB.
	RealMemory int64
	// Gres holds the configured count per Cluster.GresKinds index (dense; one
	// slot per kind even if zero).
	Gres []int64
	// Features are the node's AvailableFeatures (constraint names).
	Features []string
	// Weight is the node Weight: lower weights are allocated first.
	Weight uint32
	// State is the current state (base + flags).
	State NodeState
	// Reason, ReasonTime and ReasonUser explain a DOWN/DRAIN/FAIL state.
	Reason     string
	ReasonTime time.Time
	ReasonUser string
	// Partitions lists the indices of the partitions the node belongs to.
	Partitions []int32

	// AllocCPUs, AllocMem and AllocGres are the amounts held by running and
	// suspended jobs (suspended jobs keep memory and GRES; see Slurm's
	// gang_scheduling.shtml).
	AllocCPUs int32
	AllocMem  int64
	AllocGres []int64
	// Jobs is the number of jobs holding resources on the node (for
	// OverSubscribe and for the node state).
	Jobs int32
	// ExclusiveJob is set while an --exclusive job holds the whole node.
	ExclusiveJob JobID
}

// Cores returns the number of cores (CPUs / ThreadsPerCore).
func (n *Node) Cores() int32 {
	if n.ThreadsPerCore <= 1 {
		return n.CPUs
	}
	return n.CPUs / n.ThreadsPerCore
}

// Usable reports whether new work may be placed on the node: up (idle,
// mixed or allocated) and neither draining nor failing.
func (n *Node) Usable() bool {
	b := n.State.Base()
	if b != NodeIdle && b != NodeMixed && b != NodeAllocated {
		return false
	}
	return !n.State.Has(NodeFlagDrain | NodeFlagFail)
}

// ---------------------------------------------------------------------------
// Partitions

// PartitionState is a partition's State= (UP, DOWN, DRAIN, INACTIVE).
type PartitionState uint8

// Partition states as in slurm.conf.
const (
	PartitionUp PartitionState = iota
	PartitionDown
	PartitionDrain
	PartitionInactive
)

// OverSubscribeMode is a partition's OverSubscribe= mode.
type OverSubscribeMode uint8

// OverSubscribe modes as in slurm.conf (the default is NO).
const (
	OverSubscribeNo OverSubscribeMode = iota
	OverSubscribeExclusive
	OverSubscribeYes
	OverSubscribeForce
)

// OverSubscribe is a partition's OverSubscribe= setting: a mode and the
// number of jobs that may share one resource (YES and FORCE default to 4).
type OverSubscribe struct {
	Mode  OverSubscribeMode
	Count int32
}

// PreemptMode is a set of preemption mode bits (OFF, CANCEL, REQUEUE,
// SUSPEND, GANG, WITHIN, PRIORITY) as written in PreemptMode=.
type PreemptMode uint8

// Preemption mode bits. PreemptUnset means "not given here": use the next
// level (QOS, then partition, then the cluster's PreemptMode).
const (
	PreemptUnset    PreemptMode = 0
	PreemptOff      PreemptMode = 1 << 0
	PreemptCancel   PreemptMode = 1 << 1
	PreemptRequeue  PreemptMode = 1 << 2
	PreemptSuspend  PreemptMode = 1 << 3
	PreemptGang     PreemptMode = 1 << 4
	PreemptWithin   PreemptMode = 1 << 5
	PreemptPriority PreemptMode = 1 << 6
)

// Action returns the action part of the mode (OFF, CANCEL, REQUEUE or
// SUSPEND), dropping GANG, WITHIN and PRIORITY.
func (m PreemptMode) Action() PreemptMode {
	return m & (PreemptOff | PreemptCancel | PreemptRequeue | PreemptSuspend)
}

// Partition is one PartitionName= line with every limit the core enforces.
// Durations use Infinite for UNLIMITED; counts use -1 for unlimited.
type Partition struct {
	// Name is the PartitionName.
	Name string
	// Index is the partition's index in Cluster.Partitions.
	Index int32
	// Nodes is the set of the partition's nodes; NodeList the same indices
	// in configuration order.
	Nodes    NodeSet
	NodeList []int32
	// Default marks the default partition (Default=YES).
	Default bool
	// State is State= (UP, DOWN, DRAIN, INACTIVE).
	State PartitionState
	// MaxTime is MaxTime= (Infinite when UNLIMITED); DefaultTime is
	// DefaultTime= (0 when unset: MaxTime is used).
	MaxTime     time.Duration
	DefaultTime time.Duration
	// MinNodes and MaxNodes are MinNodes=/MaxNodes= (MaxNodes -1 = UNLIMITED).
	MinNodes int32
	MaxNodes int32
	// MaxCPUsPerNode is MaxCPUsPerNode= (-1 = UNLIMITED).
	MaxCPUsPerNode int32
	// DefMemPerCPU, DefMemPerNode, MaxMemPerCPU, MaxMemPerNode are the
	// partition's memory defaults and limits in MB (0 = unset, inherit the
	// cluster's value).
	DefMemPerCPU  int64
	DefMemPerNode int64
	MaxMemPerCPU  int64
	MaxMemPerNode int64
	// PriorityJobFactor and PriorityTier are the partition's priority knobs
	// (Priority= sets both).
	PriorityJobFactor uint16
	PriorityTier      uint16
	// AllowQOS, DenyQOS, AllowAccounts, DenyAccounts and AllowGroups are the
	// access lists; nil means ALL (no restriction).
	AllowQOS      []string
	DenyQOS       []string
	AllowAccounts []string
	DenyAccounts  []string
	AllowGroups   []string
	// QOS is the partition QOS (QOS=), "" when none.
	QOS string
	// OverSubscribe is OverSubscribe=.
	OverSubscribe OverSubscribe
	// PreemptMode is the partition's PreemptMode= (PreemptUnset = cluster's).
	PreemptMode PreemptMode
	// GraceTime is GraceTime= (preempt/partition_prio grace before the kill).
	GraceTime time.Duration
	// ExclusiveUser is ExclusiveUser=YES (nodes given to one user at a time).
	ExclusiveUser bool
	// RootOnly and Hidden are RootOnly=/Hidden=.
	RootOnly bool
	Hidden   bool
	// TRES are the partition's TRES totals (cpu, mem, node, gres/...,
	// billing), used by the priority TRES factor and by Relative QOS.
	TRES map[string]int64
	// TotalCPUs is the sum of the partition's node CPUs.
	TotalCPUs int64
}

// Cluster is the static shape of the cluster: nodes, partitions, GRES kinds
// and features, indexed for the scheduling loop.
type Cluster struct {
	// Name is ClusterName.
	Name string
	// Nodes are the nodes in configuration order; every NodeSet indexes them.
	Nodes []Node
	// Partitions are the partitions in configuration order.
	Partitions []Partition
	// GresKinds are the configured GRES kinds; Node.Gres is indexed by them.
	GresKinds []GresKind
	// DefaultPartition is the index of the Default=YES partition, or -1.
	DefaultPartition int32
	// Licenses are the cluster's licenses (Licenses= in slurm.conf), see
	// license.go.
	Licenses []License

	nodeByName map[string]int32
	partByName map[string]int32
	// featureNodes maps a feature name to the nodes that have it.
	featureNodes map[string]NodeSet
}

// ---------------------------------------------------------------------------
// Jobs

// JobID is a Slurm job id.
type JobID uint32

// JobState is a job state: a base state in the low byte and flags above it,
// as Slurm stores it (job_states).
type JobState uint16

// Base job states.
const (
	JobPending     JobState = 0
	JobRunning     JobState = 1
	JobSuspended   JobState = 2
	JobCompleted   JobState = 3
	JobCancelled   JobState = 4
	JobFailed      JobState = 5
	JobTimeout     JobState = 6
	JobNodeFail    JobState = 7
	JobPreempted   JobState = 8
	JobBootFail    JobState = 9
	JobDeadline    JobState = 10
	JobOutOfMemory JobState = 11
	// JobRequeued is the state of an accounting run record that ended in a
	// requeue (not a live job's state: the job itself is PENDING again).
	JobRequeued JobState = 12

	jobBaseMask JobState = 0x00ff
)

// Job state flags.
const (
	// JobFlagCompleting is set while an ended job's nodes run the epilog
	// (squeue shows CG).
	JobFlagCompleting JobState = 1 << 8
	// JobFlagRequeue is set on a job that is being requeued.
	JobFlagRequeue JobState = 1 << 9
)

// Base returns the base state without flags.
func (s JobState) Base() JobState { return s & jobBaseMask }

// Finished reports whether the base state is a final state.
func (s JobState) Finished() bool { return s.Base() >= JobCompleted }

// Hold is the kind of hold on a job: a held job has priority 0 and reason
// JobHeldUser or JobHeldAdmin.
type Hold uint8

// Holds: `scontrol hold` by an operator/admin is an admin hold (only an
// admin can release it); `sbatch --hold` and `scontrol uhold` are user holds.
const (
	HoldNone Hold = iota
	HoldUser
	HoldAdmin
)

// GresReq is one requested GRES per node: `gpu:4` (any type) or
// `gpu:a100:2` (type a100).
type GresReq struct {
	Name  string
	Type  string
	Count int64
}

// DepKind is a dependency type (sbatch --dependency).
type DepKind uint8

// Dependency kinds.
const (
	DepAfter      DepKind = iota // after: the other job started (or was cancelled)
	DepAfterAny                  // afterany: the other job ended, any state
	DepAfterOK                   // afterok: ended COMPLETED, exit 0
	DepAfterNotOK                // afternotok: ended in failure
	DepAfterCorr                 // aftercorr: the same-index task of the other array ended OK
	DepSingleton                 // singleton: no other job of the same name and user running
	DepAfterBurstBuffer
)

// DepState is where one dependency stands, as slurmctld records it each
// time it tests a pending job's dependencies: a dependency once fulfilled
// or failed keeps that state, whatever happens to the job it names (it
// may be requeued, or purged after MinJobAge).
type DepState uint8

// Dependency states (Slurm's unfulfilled, fulfilled, failed).
const (
	DepUnfulfilled DepState = iota
	DepFulfilled
	DepFailed
)

// Dependency is one element of a dependency list.
type Dependency struct {
	Kind DepKind
	// JobID is the job depended on (0 for singleton).
	JobID JobID
	// TaskID is an array task id (`afterok:123_4`), or -1 for the whole job.
	TaskID int32
	// Delay is the optional `+time` (minutes): for after:, the time after
	// the other job's start; Slurm accepts and prints it for every type.
	Delay time.Duration
	// AllTasks marks a dependency on every task of an array (printed
	// `id_*`), known once the job is submitted.
	AllTasks bool `json:",omitempty"`
	// State is the dependency's recorded state (see DepState).
	State DepState `json:",omitempty"`
	// CorrTasks are, for aftercorr on an array, the other array's task
	// ids when the job was submitted: a task of this job without one of
	// them can never run.
	CorrTasks NodeSet `json:",omitempty"`
}

// Request is everything a user asked for at submission, resolved to numbers
// (the driver converts an api.JobSpec with RequestFromSpec). Zero means "not
// given": defaults are applied by Submit.
type Request struct {
	// Name is the job name.
	Name string
	// Partitions are the requested partitions in the order given (empty =
	// the default partition). A job runs in whichever starts it first.
	Partitions []string
	// Account and QOS are --account and --qos ("" = the defaults).
	Account string
	QOS     string
	// MinNodes and MaxNodes are --nodes=min[-max] (0 = not given).
	MinNodes int32
	MaxNodes int32
	// ZeroNodes is --nodes=0: never runnable, refused once it has an id.
	ZeroNodes bool
	// NTasks, CPUsPerTask, NTasksPerNode and MinCPUsPerNode are -n, -c,
	// --ntasks-per-node and --mincpus.
	NTasks         int32
	CPUsPerTask    int32
	NTasksPerNode  int32
	MinCPUsPerNode int32
	// MemPerNode (--mem, MB), with MemPerNodeSet for --mem=0 (all memory),
	// and MemPerCPU (--mem-per-cpu, MB).
	MemPerNode    int64
	MemPerNodeSet bool
	MemPerCPU     int64
	// Gres is --gres (per node) plus --gpus-per-node.
	Gres []GresReq
	// GPUs and GPUsType are --gpus/-G (a total for the job).
	GPUs     int64
	GPUsType string
	// GPUsPerTask is --gpus-per-task (type in GPUsType when given there).
	GPUsPerTask int64
	// CPUsPerGPU is --cpus-per-gpu; MemPerGPU is --mem-per-gpu (MB).
	CPUsPerGPU int32
	MemPerGPU  int64
	// TimeLimit and TimeMin are --time and --time-min (0 = not given,
	// Infinite = UNLIMITED).
	TimeLimit time.Duration
	TimeMin   time.Duration
	// BeginTime is --begin (zero = now).
	BeginTime time.Time
	// Dependency is --dependency as written; Deps and DepsAny its parsed form
	// (DepsAny: the list was joined with '?', any one satisfies it).
	Dependency string
	Deps       []Dependency
	DepsAny    bool
	// KillOnInvalidDep is --kill-on-invalid-dep (nil: not given, the
	// cluster's kill_invalid_depend decides).
	KillOnInvalidDep *bool `json:",omitempty"`
	// Nice is --nice.
	Nice int32
	// Priority is --priority (operator-set priority), 0 = not given.
	Priority uint32
	// Hold is --hold.
	Hold bool
	// Exclusive is --exclusive (whole nodes); OverSubscribe is -s.
	Exclusive     bool
	OverSubscribe bool
	// Constraint is --constraint as written ("a&b", "a|b").
	Constraint string
	// NodeList and Exclude are --nodelist and --exclude, expanded to names.
	NodeList []string
	Exclude  []string
	// Array is --array as written ("0-99%10"); empty for a plain job.
	Array string
	// Requeue is whether the job may be requeued (--requeue / JobRequeue).
	Requeue bool
	// Reservation is --reservation (a comma list: the first usable one).
	Reservation string
	// Licenses is --licenses/-L (see license.go); LicenseSpec is the
	// option as written, which squeue %W and scontrol show job print
	// (Slurm: "-L matlab" shows Licenses=matlab, not matlab:1).
	Licenses    []LicenseReq
	LicenseSpec string
}

// ArrayInfo describes a job array member. A pending array whose tasks have
// not started yet is a single job record holding all its pending task ids
// (Slurm prints it as `123_[4-99%10]`); a task that starts is split off into
// its own record. The last task keeps the array's own job id.
type ArrayInfo struct {
	// JobID is the array's job id (ArrayJobId, the %F of squeue).
	JobID JobID
	// TaskID is the task index (%K), or -1 for a record holding several
	// pending tasks (then Tasks lists them).
	TaskID int32
	// Tasks is the set of pending task ids of a record with TaskID -1 (a
	// bitset over task ids).
	Tasks NodeSet
	// Throttle is the `%N` limit on simultaneously running tasks (0 = none).
	Throttle int32
}

// Alloc is the resources a running job holds, node by node.
type Alloc struct {
	// Nodes are the node indices, ascending.
	Nodes []int32
	// CPUs and Mem are the CPUs and memory (MB) held on each node, parallel
	// to Nodes.
	CPUs []int32
	Mem  []int64
	// Gres are the GRES held, sparse (only non-zero entries).
	Gres []GresUse
	// Exclusive marks a whole-node allocation (--exclusive or
	// OverSubscribe=EXCLUSIVE).
	Exclusive bool
}

// GresUse is a GRES count held on one node of an allocation.
type GresUse struct {
	// Slot is the position in Alloc.Nodes.
	Slot int32
	// Kind is the index in Cluster.GresKinds.
	Kind  int32
	Count int64
}

// RunRecord is one run of a job as accounting records it: a job requeued
// twice has three records, the first two ending REQUEUED or PREEMPTED.
// Like Slurm's, each record keeps the submit and eligible times of its own
// run (a requeued job gets a new submit time) and the run's allocation, so
// that AllocCPUS and AllocTRES of an earlier run are those it ran with.
type RunRecord struct {
	Start    time.Time
	End      time.Time
	State    JobState
	Nodes    []int32
	ExitCode int32
	// Submit and Eligible are the run's submit and eligible times (zero in
	// records stored before they were kept).
	Submit   time.Time
	Eligible time.Time
	// Alloc is the run's allocation and Partition the partition it ran in
	// (-1 if unknown).
	Alloc     Alloc
	Partition int32
	// Suspended is the time the run spent suspended.
	Suspended time.Duration
}

// Job is one job (or one pending array record) with its request, its
// resolved policy, its state and its allocation.
type Job struct {
	// ID is the job id (for a split array task, its own id; Array.JobID is
	// the array's).
	ID JobID
	// User, UID and GID identify the owner; Group is the group name.
	User  string
	UID   uint32
	GID   uint32
	Group string
	// Req is the request as submitted (after defaults and updates).
	Req Request
	// Account and QOS are the resolved account and QOS names.
	Account string
	QOS     string
	// Partitions are the indices of the requested partitions, sorted by
	// PriorityTier descending as Slurm displays them; Partition is the
	// partition the job runs (or last ran) in, -1 if none.
	Partitions []int32
	Partition  int32
	// TimeLimit is the effective time limit (Infinite = UNLIMITED).
	TimeLimit time.Duration
	// State, Reason and StateDesc are what squeue shows: Reason is Slurm's
	// reason string, StateDesc an optional longer text that replaces it.
	State     JobState
	Reason    Reason
	StateDesc string
	// Hold is the current hold.
	Hold Hold
	// Priority is the job's priority (set by internal/priority through the
	// driver); PartPriority, when set, holds one value per entry of
	// Partitions (Slurm's per-partition priority array).
	Priority     uint32
	PartPriority []uint32
	// DirectPriority marks a priority set by an operator (never recomputed).
	DirectPriority bool
	// SubmitTime, EligibleTime (begin time reached and dependencies met),
	// AccrueTime (age factor base), StartTime and EndTime.
	SubmitTime   time.Time
	EligibleTime time.Time
	AccrueTime   time.Time
	StartTime    time.Time
	EndTime      time.Time
	// ResvEnd is when a job running in a reservation is ended with
	// TIMEOUT whatever its limit: the reservation's end plus ResvOverRun
	// (zero: never). Slurm keeps the job's own limit, and its EndTime.
	ResvEnd time.Time `json:",omitzero"`
	// SuspendTime is when the job was last suspended or resumed; Suspended
	// is the total time spent suspended (the time limit is extended by it).
	SuspendTime time.Time
	Suspended   time.Duration
	// GangSuspended marks a job suspended by preemption or a gang time
	// slice (it resumes on its own when its CPUs are free again), as
	// opposed to `scontrol suspend`, which only `scontrol resume` undoes.
	GangSuspended bool
	// SuspendedBy is the job whose preemption suspended this one (0: none,
	// or a time slice). Slurm suspends a victim to give its very cores to
	// the preemptor, so the victim resumes only once that job is gone.
	SuspendedBy JobID
	// PreemptTime is when the job was chosen for preemption (grace time
	// runs from it); zero otherwise.
	PreemptTime time.Time
	// Alloc is the allocation of a running, suspended or completing job.
	Alloc Alloc
	// RestartCount is how many times the job was requeued.
	RestartCount int32
	// ExitCode is the job's exit code once it ended.
	ExitCode int32
	// Array is set for job array records.
	Array *ArrayInfo
	// ExpectedStart and PlannedNodes are backfill's plan for a pending job
	// (squeue --start); zero when not planned.
	ExpectedStart time.Time
	PlannedNodes  []int32
	// Runs are the earlier runs of a requeued job.
	Runs []RunRecord
	// Unfit is the reason a job held at submission that no node could
	// ever run pends with once released (Submit does not refuse it).
	Unfit Reason `json:",omitempty"`

	// resolved policy handles (indices into Policy); -1 when none.
	assoc int32
	qos   int32
	// orderRank are the places of the job's first two records in the
	// queue of the cycle orderPass counts (State.orderPass): a hint for
	// the next cycle's sort.
	orderRank [2]int32
	orderPass uint32
	// lazyPass is the cycle (State.orderPass) that last tested the job or
	// gave it Priority in the incremental queue (lazy_queue.go).
	lazyPass uint32
}

// IsArray reports whether the job is a member or record of a job array.
func (j *Job) IsArray() bool { return j.Array != nil }

// ---------------------------------------------------------------------------
// Plan

// Start is a decision to start a job now.
type Start struct {
	// Job is the job (for an array record with TaskID -1: the record; the
	// task to split off is ArrayTask).
	Job JobID
	// ArrayTask is the task id started from a pending array record, -1
	// otherwise.
	ArrayTask int32
	// Partition is the partition index the job runs in.
	Partition int32
	// Alloc is the allocation.
	Alloc Alloc
	// TimeLimit is the limit the job starts with (backfill may lower a
	// job with --time-min).
	TimeLimit time.Duration
	// Backfill is set when the job was started by backfill.
	Backfill bool
	// Preempts lists the jobs this start needs preempted first.
	Preempts []JobID
	// ResvEnd is when a job started in a reservation is ended, if still
	// running: its window's end plus ResvOverRun (zero: never).
	ResvEnd time.Time
}

// Preemption is a decision to preempt a running job.
type Preemption struct {
	Job JobID
	// Mode is PreemptCancel, PreemptRequeue or PreemptSuspend.
	Mode PreemptMode
	// By is the preemptor.
	By JobID
	// GraceEnd is when the job is killed (now + GraceTime); equal to now
	// when there is no grace time.
	GraceEnd time.Time
}

// PendingInfo is the pass's verdict on a job that stays pending.
type PendingInfo struct {
	Job JobID
	// Reason and StateDesc are the pending reason.
	Reason    Reason
	StateDesc string
	// ExpectedStart and PlannedNodes come from backfill (zero if unknown).
	ExpectedStart time.Time
	PlannedNodes  []int32
	// Partition is the partition the plan is for, -1 if none.
	Partition int32
	// DepStates, when not nil, are the job's dependency states the cycle
	// found, index for index with Req.Deps, because one of them changed
	// (Apply records them).
	DepStates []DepState
}

// Plan is the result of one scheduling cycle: what to start, what to
// preempt or resume, and why every other pending job waits.
type Plan struct {
	// Now is the cycle's time.
	Now time.Time
	// Starts are in the order the jobs were scheduled.
	Starts      []Start
	Preemptions []Preemption
	// Resumes are suspended jobs to resume (gang scheduling / end of a
	// preemptor).
	Resumes []JobID
	// Pending has one entry per job that stays pending.
	Pending []PendingInfo
	// BackfillPass reports that the backfill step ran in this cycle: only
	// such a plan carries expected starts. Applying a main-only plan
	// leaves the jobs' ExpectedStart and PlannedNodes as the last
	// backfill pass set them, as Slurm's main scheduler does (squeue
	// --start keeps showing them; a job submitted since shows N/A).
	BackfillPass bool
	// DepCancels are the pending jobs whose dependency can never be
	// satisfied and that kill_invalid_depend (or --kill-on-invalid-dep)
	// cancels: Apply ends them CANCELLED.
	DepCancels []JobID
	// Stats describes the cycle (sdiag).
	Stats CycleStats
	// Stuck, when not nil, certifies the main pass (main_stuck.go): it
	// lists the jobs the pass found no room for, and a later main pass
	// starts nothing while each of them is still pending and fits in no
	// free resources, provided that in between only running jobs ended
	// and jobs that fit nowhere were submitted (no reordering, no
	// eligibility or node change). Nil when the pass cannot certify that.
	Stuck []JobID
	// StaticGates reports that no gate can newly hold back a queued
	// record in a later cycle and every pending job had a record
	// (main_stuck.go's conditions, whatever the main pass found): then,
	// on a cluster of one partition, a later main pass starts nothing
	// when the first record of its queue, a job of this cycle asking for
	// no node list, fits in no free resources (it fails the partition).
	StaticGates bool
	// pendJobs are the jobs of Pending, index for index, so that Apply
	// does not look each one up by id (nil for a plan not made by
	// Schedule).
	pendJobs []*Job
}

// CycleStats are the counters sdiag reports for one cycle.
type CycleStats struct {
	// QueueLen is the number of queue records (job, partition) considered.
	QueueLen int
	// Depth is the number of records the main scheduler tested.
	Depth int
	// Started and Backfilled count starts by the main scheduler and by
	// backfill.
	Started    int
	Backfilled int
	// BackfillDepth is the number of records backfill tested.
	BackfillDepth int
}
