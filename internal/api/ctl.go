package api

// This file holds the wire types of the client <-> controller API: what
// sbatch, squeue, sinfo, scancel and scontrol send to the controller and
// what it answers (JSON over HTTP, on the controller's Unix socket or its
// TCP port). It plays the part of Slurm's REQUEST_SUBMIT_BATCH_JOB,
// REQUEST_JOB_INFO, REQUEST_NODE_INFO, REQUEST_PARTITION_INFO,
// REQUEST_KILL_JOB, REQUEST_UPDATE_JOB, ... RPCs. The caller's identity is
// never part of a request: the controller takes it from the kernel (Unix
// socket peer credentials) or from a signed token (Authorization: Bearer).

import (
	"fmt"
	"time"
)

// Paths served by the controller for clients.
const (
	// PathPing answers GET with a Whoami (who the controller thinks you are).
	PathPing = "/v1/ping"
	// PathSubmit takes a SubmitRequest (sbatch).
	PathSubmit = "/v1/submit"
	// PathJobs answers GET with a JobsResponse; ?id=N&detail=1 adds the
	// priority breakdown and the why-pending sentence (scontrol show job).
	PathJobs = "/v1/jobs"
	// PathJobControl takes a JobControlRequest (scancel, scontrol
	// hold/release/requeue/suspend/resume).
	PathJobControl = "/v1/jobs/control"
	// PathJobUpdate takes a JobUpdateRequest (scontrol update job).
	PathJobUpdate = "/v1/jobs/update"
	// PathNodes answers GET with a NodesResponse.
	PathNodes = "/v1/nodes"
	// PathNodeUpdate takes a NodeUpdateRequest (scontrol update node).
	PathNodeUpdate = "/v1/nodes/update"
	// PathPartitions answers GET with a PartitionsResponse.
	PathPartitions = "/v1/partitions"
	// PathConfig answers GET with a ConfigResponse (scontrol show config).
	PathConfig = "/v1/config"
	// PathReconfigure answers POST with a ReconfigureResponse (scontrol
	// reconfigure: the controller rereads slurm.conf).
	PathReconfigure = "/v1/reconfigure"
	// PathToken takes a TokenRequest (scontrol token).
	PathToken = "/v1/token"
	// PathTokenRotate replaces the token signing key (root, SlurmUser):
	// every earlier token is revoked.
	PathTokenRotate = "/v1/token/rotate"
)

// ReconfigureResponse answers scontrol reconfigure: the new configuration
// was read and the controller restarts on it.
type ReconfigureResponse struct {
	// RestartNeeded names the changed keys that take effect only at the
	// next start of the daemon (listening ports, state location...).
	RestartNeeded []string `json:"restart_needed,omitempty"`
}

// SocketFile is the controller's Unix socket name inside its state
// directory (StateSaveLocation).
const SocketFile = "sluice.sock"

// Whoami is the identity the controller established for a caller.
type Whoami struct {
	User  string `json:"user"`
	UID   uint32 `json:"uid"`
	GID   uint32 `json:"gid"`
	Admin bool   `json:"admin,omitempty"`
	// Via is "socket" (peer credentials) or "token" (JWT).
	Via string `json:"via"`
	// Cluster is the controller's ClusterName.
	Cluster string `json:"cluster,omitempty"`
	// StateSave says why state save is failing ("" while it works).
	StateSave string `json:"state_save,omitempty"`
}

// SubmitRequest is one sbatch submission.
type SubmitRequest struct {
	Spec JobSpec `json:"spec"`
	// TestOnly is --test-only: validate and estimate the start, store nothing.
	TestOnly bool `json:"test_only,omitempty"`
	// Interactive marks a salloc/srun allocation: slurmctld tries it at
	// once instead of waiting for the batch scheduling pass.
	Interactive bool `json:"interactive,omitempty"`
}

// SubmitResponse answers a SubmitRequest.
type SubmitResponse struct {
	// JobID is the new job's id (0 with TestOnly).
	JobID uint32 `json:"job_id"`
	// Cluster is the ClusterName (sbatch --parsable prints "id;cluster"
	// only with several clusters, so it is informational).
	Cluster string `json:"cluster,omitempty"`
	// TestOnly answers --test-only: when and where the job would start.
	TestStart     time.Time `json:"test_start,omitempty"`
	TestNodes     string    `json:"test_nodes,omitempty"`
	TestProcs     int       `json:"test_procs,omitempty"`
	TestPartition string    `json:"test_partition,omitempty"`
}

// Error is the JSON body of every non-2xx answer of the client API.
// Message is Slurm's error text; Reason, when set, is the line sbatch
// prints on its own before the message: a limit's pending-reason name or
// slurmctld's explanation ("Memory specification can not be satisfied").
type Error struct {
	Status  int    `json:"-"`
	Message string `json:"error"`
	Reason  string `json:"reason,omitempty"`
	// Job, for a refusal about one job, is that job as scontrol update
	// names it: `12`, or an array's `12_0-9` (its tasks); Detail is
	// slurmctld's extra message, when it has one.
	Job    string `json:"job,omitempty"`
	Detail string `json:"detail,omitempty"`
	// JobID, when set, is the job a refused submission still created: a
	// job that failed at once (BadConstraints), whose allocation salloc
	// reports revoked.
	JobID uint32 `json:"job_id,omitempty"`
	// Plain marks an error Slurm's clients find before submitting (a GRES
	// name outside GresTypes): sbatch prints the message alone.
	Plain bool `json:"plain,omitempty"`
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Errorf builds an *Error with an HTTP status.
func Errorf(status int, format string, a ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, a...)}
}

// JobQuery selects jobs for PathJobs (all empty = every job the
// controller still holds). Lists are OR-ed, filters AND-ed, as squeue's.
type JobQuery struct {
	IDs     []string `json:"ids,omitempty"` // "12", "12_3", "12_[1-3]"
	Detail  bool     `json:"detail,omitempty"`
	All     bool     `json:"all,omitempty"` // include finished jobs
	Summary bool     `json:"summary,omitempty"`
	// Filter is squeue's selection: the controller sends only the jobs
	// it matches (listfilter.go).
	Filter ListFilter `json:"-"`
	// Brief asks for the fields of squeue's usual columns only
	// (BriefFields): no TRES, paths or dependency strings.
	Brief bool `json:"-"`
}

// JobsResponse lists jobs.
type JobsResponse struct {
	// Now is the controller's clock (TIME columns are computed against it).
	Now  time.Time `json:"now"`
	Jobs []JobInfo `json:"jobs"`
}

// PriorityTerm is one factor of a job's priority (priority.Term).
type PriorityTerm struct {
	Name         string  `json:"name"`
	Factor       float64 `json:"factor"`
	Weight       float64 `json:"weight"`
	Contribution float64 `json:"contribution"`
}

// JobInfo is one job as squeue and scontrol show it.
type JobInfo struct {
	JobID uint32 `json:"job_id"`
	// JobIDStr is %i: "12", "12_3" or "12_[4-9%2]".
	JobIDStr    string `json:"job_id_str"`
	ArrayJobID  uint32 `json:"array_job_id,omitempty"`
	ArrayTaskID int32  `json:"array_task_id"` // -1 when none / several
	ArrayTasks  string `json:"array_tasks,omitempty"`
	// KillOnInvalidDep is --kill-on-invalid-dep as scontrol shows it
	// ("Yes", "No"; "" when not given).
	KillOnInvalidDep string `json:"kill_on_invalid_dep,omitempty"`
	// ArrayThrottle is the array's %N (ArrayTaskThrottle), 0 when none.
	ArrayThrottle int32  `json:"array_throttle,omitempty"`
	Name          string `json:"name"`
	User          string `json:"user"`
	UID           uint32 `json:"uid"`
	GID           uint32 `json:"gid"`
	Group         string `json:"group,omitempty"`
	Account       string `json:"account,omitempty"`
	QOS           string `json:"qos,omitempty"`
	// Partition is the partition the job runs in, or the requested list.
	Partition string `json:"partition"`
	// State is Slurm's long state (PENDING, RUNNING, COMPLETED, ...),
	// StateShort the compact one (PD, R, CD, ...).
	State      string `json:"state"`
	StateShort string `json:"state_short"`
	Reason     string `json:"reason,omitempty"`
	StateDesc  string `json:"state_desc,omitempty"`
	Hold       string `json:"hold,omitempty"` // "user", "admin"
	Priority   uint32 `json:"priority"`
	Nice       int32  `json:"nice"`
	SiteFactor int32  `json:"site_factor,omitempty"`

	SubmitTime    time.Time `json:"submit_time"`
	EligibleTime  time.Time `json:"eligible_time,omitempty"`
	AccrueTime    time.Time `json:"accrue_time,omitempty"`
	StartTime     time.Time `json:"start_time,omitempty"`
	EndTime       time.Time `json:"end_time,omitempty"`
	SuspendTime   time.Time `json:"suspend_time,omitempty"`
	SuspendedSec  int64     `json:"suspended_s,omitempty"`
	ExpectedStart time.Time `json:"expected_start,omitempty"`
	BeginTime     time.Time `json:"begin_time,omitempty"`
	// PreemptEligibleTime (start + PreemptExemptTime, set once started in a
	// cluster with preemption) and PreemptTime (when it was preempted or
	// signalled for it) are scontrol's.
	PreemptEligibleTime time.Time `json:"preempt_eligible_time,omitempty"`
	PreemptTime         time.Time `json:"preempt_time,omitempty"`
	// TimeLimitSec is the limit in seconds, TimeInfinite for UNLIMITED.
	TimeLimitSec int64 `json:"time_limit_s"`

	NodeList   string `json:"node_list,omitempty"`
	SchedNodes string `json:"sched_nodes,omitempty"`
	BatchHost  string `json:"batch_host,omitempty"`
	NumNodes   int    `json:"num_nodes"`
	NumCPUs    int    `json:"num_cpus"`
	// CPUsPerNode is the allocation's CPUs per node as Slurm's
	// SLURM_JOB_CPUS_PER_NODE prints them ("3,1", "2(x2)").
	CPUsPerNode string `json:"cpus_per_node,omitempty"`
	NumTasks    int    `json:"num_tasks"`
	CPUsPerTask int    `json:"cpus_per_task"`
	MinMemoryMB int64  `json:"min_memory_mb,omitempty"`
	MemPerCPU   bool   `json:"mem_per_cpu,omitempty"`
	ReqTRES     string `json:"req_tres,omitempty"`
	AllocTRES   string `json:"alloc_tres,omitempty"`
	TresPerNode string `json:"tres_per_node,omitempty"`
	// TresPerJob (--gpus) and TresPerTask (-c above 1) as scontrol shows
	// them: "gres/gpu:2", "cpu=2".
	TresPerJob  string `json:"tres_per_job,omitempty"`
	TresPerTask string `json:"tres_per_task,omitempty"`
	// MaxNodes is the upper node count of a pending job (NumNodes=2-2),
	// NTasksPerNode --ntasks-per-node, MinCPUsNode scontrol's MinCPUsNode.
	MaxNodes      int `json:"max_nodes,omitempty"`
	NTasksPerNode int `json:"ntasks_per_node,omitempty"`
	MinCPUsNode   int `json:"min_cpus_node,omitempty"`
	// LastSchedEval is when the scheduler last looked at the job;
	// AllocNode and AllocSID where it was submitted from.
	LastSchedEval time.Time `json:"last_sched_eval,omitempty"`
	AllocNode     string    `json:"alloc_node,omitempty"`
	AllocSID      int       `json:"alloc_sid,omitempty"`
	Features      string    `json:"features,omitempty"`
	ReqNodes      string    `json:"req_nodes,omitempty"`
	ExcNodes      string    `json:"exc_nodes,omitempty"`
	Dependency    string    `json:"dependency,omitempty"`
	Requeue       bool      `json:"requeue"`
	RestartCount  int       `json:"restart_count"`
	ExitCode      string    `json:"exit_code"`
	Exclusive     bool      `json:"exclusive,omitempty"`
	Reservation   string    `json:"reservation,omitempty"`
	Licenses      string    `json:"licenses,omitempty"` // -L as scontrol shows it (ctld/resv.go)
	Command       string    `json:"command,omitempty"`
	WorkDir       string    `json:"work_dir,omitempty"`
	StdOut        string    `json:"stdout,omitempty"`
	StdErr        string    `json:"stderr,omitempty"`
	StdIn         string    `json:"stdin,omitempty"`
	Comment       string    `json:"comment,omitempty"`
	Extra         *string   `json:"extra,omitempty"`

	// PriorityTerms and PrioritySummary explain the priority (detail only).
	PriorityTerms   []PriorityTerm `json:"priority_terms,omitempty"`
	PrioritySummary string         `json:"priority_summary,omitempty"`
	// WhyPending is a sentence on what a pending job waits for (detail only).
	WhyPending string `json:"why_pending,omitempty"`
}

// JobFilter selects jobs by attribute for scancel without job ids (or
// narrows the ids given), as scancel's -u -p -t -n -A -q -w.
type JobFilter struct {
	User      string   `json:"user,omitempty"`
	Partition string   `json:"partition,omitempty"`
	States    []string `json:"states,omitempty"`
	Name      string   `json:"name,omitempty"`
	Account   string   `json:"account,omitempty"`
	QOS       string   `json:"qos,omitempty"`
	NodeList  string   `json:"nodelist,omitempty"`
	// Reservation is scancel -R: jobs that asked for that reservation.
	Reservation string `json:"reservation,omitempty"`
}

// Job control operations (JobControlRequest.Op).
const (
	OpCancel      = "cancel"
	OpSignal      = "signal"
	OpHold        = "hold"
	OpUHold       = "uhold"
	OpRelease     = "release"
	OpRequeue     = "requeue"
	OpRequeueHold = "requeuehold"
	OpSuspend     = "suspend"
	OpResume      = "resume"
	// OpTop is scontrol top: Jobs in order, moved up their user's queue.
	OpTop = "top"
	// OpNotify is scontrol notify: a message for the job's srun (Message).
	OpNotify = "notify"
	// OpComplete ends a salloc allocation with ExitCode (Slurm's
	// slurm_complete_job); OpKeepalive says its holder is still there.
	OpComplete  = "complete"
	OpKeepalive = "keepalive"
)

// JobControlRequest applies one operation to jobs named by id (and
// filtered by Filter) or, without ids, to every job Filter selects.
type JobControlRequest struct {
	Op     string    `json:"op"`
	Jobs   []string  `json:"jobs,omitempty"`
	Filter JobFilter `json:"filter,omitempty"`
	// Signal is the signal number for OpSignal (and OpCancel --signal).
	Signal int `json:"signal,omitempty"`
	// BatchOnly is scancel --batch, Full scancel --full (see SignalRequest).
	BatchOnly bool `json:"batch_only,omitempty"`
	Full      bool `json:"full,omitempty"`
	// ExitCode is the holder's command's exit status for OpComplete.
	ExitCode int `json:"exit_code,omitempty"`
}

// JobResult is the outcome for one job of a JobControlRequest.
type JobResult struct {
	Job   string `json:"job"`
	Error string `json:"error,omitempty"`
}

// JobControlResponse lists one result per job acted on (or named).
type JobControlResponse struct {
	Results []JobResult `json:"results"`
}

// JobUpdateRequest is scontrol update JobId=... KEY=VALUE...
type JobUpdateRequest struct {
	Job string            `json:"job"`
	Set map[string]string `json:"set"`
}

// NodeUpdateRequest is scontrol update NodeName=... State=... Reason=...
type NodeUpdateRequest struct {
	Nodes  string `json:"nodes"`
	State  string `json:"state,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// NodeRecord is one node as sinfo and scontrol show node print it.
type NodeRecord struct {
	Name string `json:"name"`
	// State is the long state with flags ("IDLE", "MIXED+DRAIN",
	// "DOWN+NOT_RESPONDING"), StateShort sinfo's compact one ("idle",
	// "drng", "down*"), StateLong sinfo's %T ("idle", "draining", ...).
	State      string `json:"state"`
	StateShort string `json:"state_short"`
	StateLong  string `json:"state_long"`
	CPUs       int    `json:"cpus"`
	AllocCPUs  int    `json:"alloc_cpus"`
	Sockets    int    `json:"sockets"`
	Cores      int    `json:"cores_per_socket"`
	Threads    int    `json:"threads_per_core"`
	RealMemory int64  `json:"real_memory_mb"`
	AllocMem   int64  `json:"alloc_mem_mb"`
	FreeMem    int64  `json:"free_mem_mb,omitempty"`
	// CPULoad and FreeMem are the host's as its agent last reported them,
	// when LoadKnown (sinfo and scontrol print N/A otherwise).
	CPULoad    float64   `json:"cpu_load,omitempty"`
	LoadKnown  bool      `json:"load_known,omitempty"`
	Gres       string    `json:"gres,omitempty"`
	GresUsed   string    `json:"gres_used,omitempty"`
	Features   string    `json:"features,omitempty"`
	Weight     uint32    `json:"weight"`
	Partitions []string  `json:"partitions,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	ReasonTime time.Time `json:"reason_time,omitempty"`
	ReasonUser string    `json:"reason_user,omitempty"`
	Addr       string    `json:"addr,omitempty"`
	Hostname   string    `json:"hostname,omitempty"`
	Version    string    `json:"version,omitempty"`
	Arch       string    `json:"arch,omitempty"`
	OS         string    `json:"os,omitempty"`
	BootTime   time.Time `json:"boot_time,omitempty"`
	LastHeard  time.Time `json:"last_heard,omitempty"`
	Jobs       int       `json:"jobs"`
	CfgTRES    string    `json:"cfg_tres,omitempty"`
	AllocTRES  string    `json:"alloc_tres,omitempty"`
}

// NodesResponse lists nodes in configuration order.
type NodesResponse struct {
	Now   time.Time    `json:"now"`
	Nodes []NodeRecord `json:"nodes"`
}

// PartitionRecord is one partition as sinfo and scontrol show it.
type PartitionRecord struct {
	Name           string `json:"name"`
	Default        bool   `json:"default,omitempty"`
	State          string `json:"state"` // UP, DOWN, DRAIN, INACTIVE
	MaxTimeSec     int64  `json:"max_time_s"`
	DefaultTimeSec int64  `json:"default_time_s,omitempty"`
	Nodes          string `json:"nodes"`
	// NodeSets is the part of Nodes= naming node sets ("ALL" for
	// Nodes=ALL), which scontrol shows as NodeSets=.
	NodeSets          string   `json:"node_sets,omitempty"`
	NodeNames         []string `json:"node_names"`
	TotalCPUs         int64    `json:"total_cpus"`
	TotalNodes        int      `json:"total_nodes"`
	MinNodes          int32    `json:"min_nodes"`
	MaxNodes          int32    `json:"max_nodes"`
	MaxCPUsPerNode    int32    `json:"max_cpus_per_node"`
	PriorityJobFactor uint16   `json:"priority_job_factor"`
	PriorityTier      uint16   `json:"priority_tier"`
	OverSubscribe     string   `json:"oversubscribe"`
	PreemptMode       string   `json:"preempt_mode,omitempty"`
	GraceTimeSec      int64    `json:"grace_time_s,omitempty"`
	AllowAccounts     string   `json:"allow_accounts"`
	DenyAccounts      string   `json:"deny_accounts,omitempty"`
	AllowQOS          string   `json:"allow_qos"`
	DenyQOS           string   `json:"deny_qos,omitempty"`
	AllowGroups       string   `json:"allow_groups"`
	QOS               string   `json:"qos,omitempty"`
	DefMemPerCPU      int64    `json:"def_mem_per_cpu,omitempty"`
	DefMemPerNode     int64    `json:"def_mem_per_node,omitempty"`
	MaxMemPerCPU      int64    `json:"max_mem_per_cpu,omitempty"`
	MaxMemPerNode     int64    `json:"max_mem_per_node,omitempty"`
	Hidden            bool     `json:"hidden,omitempty"`
	RootOnly          bool     `json:"root_only,omitempty"`
	ExclusiveUser     bool     `json:"exclusive_user,omitempty"`
	TRES              string   `json:"tres,omitempty"`
}

// PartitionsResponse lists partitions in configuration order.
type PartitionsResponse struct {
	Now        time.Time         `json:"now"`
	Partitions []PartitionRecord `json:"partitions"`
}

// ConfigEntry is one line of scontrol show config.
type ConfigEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ConfigResponse is the running configuration.
type ConfigResponse struct {
	Now     time.Time     `json:"now"`
	Path    string        `json:"path"`
	Entries []ConfigEntry `json:"entries"`
	// Controller is the primary controller's name (the closing
	// "Slurmctld(primary) at NAME is UP").
	Controller string `json:"controller,omitempty"`
}

// TokenRequest is scontrol token [lifespan=N] [username=U].
type TokenRequest struct {
	LifespanSec int64  `json:"lifespan_s,omitempty"`
	Username    string `json:"username,omitempty"`
}

// TokenResponse carries a signed token (SLURM_JWT).
type TokenResponse struct {
	Token   string    `json:"token"`
	User    string    `json:"user"`
	Expires time.Time `json:"expires"`
}
