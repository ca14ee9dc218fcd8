package conf

import (
	"time"

	"github.com/sluice-hpc/sluice/internal/tres"
)

// Unlimited marks an integer limit that Slurm prints as UNLIMITED
// (MaxNodes, MaxCPUsPerNode, OverTimeLimit, ...).
const Unlimited = -1

// Config is one parsed slurm.conf (with its includes and, when found, its
// gres.conf). Fields carry Slurm's defaults when the file does not set them;
// durations are time.Duration, memory sizes are megabytes.
type Config struct {
	// Path is the file the configuration was loaded from.
	Path string

	// ClusterName is the cluster's name (required by Slurm; Sluice
	// defaults it to "cluster" with a warning).
	ClusterName string
	// SlurmctldHosts lists the controllers in failover order
	// (SlurmctldHost, or the legacy ControlMachine/BackupController).
	SlurmctldHosts []ControllerHost
	// SlurmctldPort and SlurmctldPortCount describe the controller's port
	// range ("6817" or "6817-6818"): default 6817, count 1.
	SlurmctldPort      int
	SlurmctldPortCount int
	// SlurmdPort is the node agents' port (default 6818).
	SlurmdPort int
	// StateSaveLocation is the controller's state directory.
	StateSaveLocation string
	// SlurmUser is the user the controller runs as (default "root").
	SlurmUser string
	// PrologFlags are slurm.conf's PrologFlags, as written (validated
	// names); Contain (or X11, which implies it) gives every job an
	// extern step (ContainJobs).
	PrologFlags []string
	// SlurmdSpoolDir is the node agents' spool directory.
	SlurmdSpoolDir string

	// SelectType is the resource selection plugin (default select/cons_tres).
	SelectType string
	// SelectTypeParameters says what is consumable (CR_Core_Memory by default).
	SelectTypeParameters SelectTypeParameters
	// GresTypes lists the generic resource names nodes may have (gpu, ...).
	GresTypes []string

	// Priority holds every Priority* key and FairShareDampeningFactor.
	Priority PriorityConfig
	// Preempt holds PreemptType, PreemptMode and PreemptExemptTime.
	Preempt PreemptConfig
	// SchedulerType is the scheduler plugin (default sched/backfill).
	SchedulerType string
	// SchedulerParameters holds the typed SchedulerParameters options.
	SchedulerParameters SchedulerParameters
	// DependencyParameters are its options as written
	// (kill_invalid_depend is the one Sluice acts on).
	DependencyParameters []string
	// SchedulerTimeSlice is the gang scheduling time slice (default 30 s).
	SchedulerTimeSlice time.Duration

	// Accounting is the accounting storage: Sluice's store choice, the
	// enforcement flags and the tracked TRES.
	Accounting AccountingConfig

	// KillWait is the SIGTERM-to-SIGKILL delay (default 30 s).
	KillWait time.Duration
	// JobAcctGatherFrequency is the task sampling period of usage
	// accounting (default 30 s; 0: only at each task's end).
	JobAcctGatherFrequency time.Duration
	// JobAcctGatherType is the usage gathering plugin; Sluice gathers
	// unless it is jobacct_gather/none.
	JobAcctGatherType string
	// OverTimeLimit is how far past its time limit a job may run; Unlimited
	// is expressed as duration.Infinite (default 0).
	OverTimeLimit time.Duration
	// ResvOverRun is how long a job started in a reservation may run past
	// the reservation's end, in minutes; Unlimited is duration.Infinite
	// (default 0: the job ends with the reservation).
	ResvOverRun time.Duration
	// MinJobAge is how long a finished job stays in the controller's memory
	// (default 300 s).
	MinJobAge time.Duration
	// MaxJobCount caps the jobs the controller holds (default 10000).
	MaxJobCount int
	// MaxArraySize is one more than the largest array index (default 1001).
	MaxArraySize int
	// FirstJobId is the first job id handed out (default 1).
	FirstJobId uint32
	// MaxJobId is the largest job id before wrapping (default 67043328).
	MaxJobId uint32
	// InactiveLimit cancels interactive jobs whose srun is gone (default 0 = off).
	InactiveLimit time.Duration
	// MessageTimeout is the RPC round-trip timeout (default 10 s).
	MessageTimeout time.Duration
	// SlurmdTimeout marks a silent node DOWN after this long (default 300 s).
	SlurmdTimeout time.Duration
	// SlurmctldTimeout is the backup controller's take-over delay (default 120 s).
	SlurmctldTimeout time.Duration
	// ResumeTimeout is the power-save resume timeout (default 60 s).
	ResumeTimeout time.Duration
	// ReturnToService says when a DOWN node returns to service (0, 1 or 2; default 0).
	ReturnToService int
	// WaitTime is srun's default --wait (default 0).
	WaitTime time.Duration
	// JobRequeue says whether batch jobs are requeueable by default (default true).
	JobRequeue bool
	// EnforcePartLimits says whether jobs over partition limits are rejected.
	EnforcePartLimits EnforcePartLimits
	// DefMemPerCPU, DefMemPerNode, MaxMemPerCPU and MaxMemPerNode are the
	// cluster-wide memory defaults and caps in MB (0 = unset).
	DefMemPerCPU  int64
	DefMemPerNode int64
	MaxMemPerCPU  int64
	MaxMemPerNode int64
	// DefMemPerGPU (MB) and DefCpuPerGPU are defaults per allocated GPU (0 = unset).
	DefMemPerGPU int64
	DefCpuPerGPU int
	// MaxTasksPerNode caps tasks per node (default 512).
	MaxTasksPerNode int
	// MaxStepCount caps steps per job (default 40000).
	MaxStepCount int
	// Licenses are the cluster's licenses in file order (Licenses=matlab:4,ansys:2).
	Licenses []License
	// JobSubmitPlugins lists the job_submit plugins (Sluice runs none yet).
	JobSubmitPlugins []string
	// TmpFS is the file system TmpDisk refers to (default /tmp).
	TmpFS string
	// DisableRootJobs refuses root's jobs when true (default false).
	DisableRootJobs bool
	// TrackWCKey tracks workload characterisation keys (default false).
	TrackWCKey bool
	// Prolog, Epilog, PrologSlurmctld, EpilogSlurmctld, TaskProlog and
	// TaskEpilog are script paths (empty = none).
	Prolog, Epilog, PrologSlurmctld, EpilogSlurmctld, TaskProlog, TaskEpilog string
	// PrologEpilogTimeout is slurm.conf's PrologEpilogTimeout in seconds
	// (0 = not set: Slurm's default 65534, no practical limit).
	PrologEpilogTimeout int
	// MailProg is the program used for job mail (default /bin/mail).
	MailProg string
	// MetricsType is metrics/openmetrics to serve Prometheus metrics on
	// SlurmctldPort (Slurm 25.11), "" for none.
	MetricsType string
	// PrivateData lists what users may not see of others (jobs, usage, ...).
	PrivateData []string

	// Nodes are the compute nodes in file order (host lists expanded).
	Nodes []*Node
	// Partitions are the partitions in file order.
	Partitions []*Partition
	// DefaultPartition names the partition jobs go to without -p ("" = none).
	DefaultPartition string
	// NodeSets are the NodeSet lines (names usable in partition Nodes=).
	NodeSets []*NodeSet
	// DownNodes are the DownNodes lines, applied to Node.State/Reason too.
	DownNodes []*DownNodes
	// Gres is the parsed gres.conf (nil when none was read).
	Gres *GresConf
	// Cgroup is the cgroup.conf next to slurm.conf (defaults when there
	// is none): how the node agents confine jobs.
	Cgroup *CgroupConf

	// AuthAlt is AuthAltParameters (authalt.go).
	AuthAlt AuthAltParameters

	// Unused holds every Slurm key Sluice accepts but does not act on yet,
	// by canonical key name, with the last value set.
	Unused map[string]UnusedKey
	// Set holds every cluster key slurm.conf sets (not NodeName or
	// PartitionName lines), by canonical name, with its last value as
	// written: scontrol show config prints it.
	Set map[string]string

	nodeIndex map[string]*Node
	partIndex map[string]*Partition
}

// ControllerHost is one SlurmctldHost entry: "name" or "name(addr)".
type ControllerHost struct {
	Name string
	Addr string
}

// UnusedKey is a Slurm key kept without effect, with where it was set.
type UnusedKey struct {
	Key   string
	Value string
	Pos   Pos
}

// License is one cluster license and its count (default 1).
type License struct {
	Name  string
	Count int64
}

// EnforcePartLimits is NO, ANY or ALL (YES is taken as ALL, as Slurm does).
type EnforcePartLimits string

// The EnforcePartLimits values.
const (
	EnforcePartNo  EnforcePartLimits = "NO"
	EnforcePartAny EnforcePartLimits = "ANY"
	EnforcePartAll EnforcePartLimits = "ALL"
)

// Node is one compute node, after NodeName=DEFAULT values and host list
// expansion are applied (one Node per name).
type Node struct {
	Name     string
	Hostname string
	Addr     string
	// Port is the node agent's port (0 = the cluster's SlurmdPort).
	Port int
	// CPUs defaults to Boards*Sockets*CoresPerSocket*ThreadsPerCore.
	CPUs           int
	Boards         int
	Sockets        int
	CoresPerSocket int
	ThreadsPerCore int
	// RealMemory is in MB (default 1, as Slurm).
	RealMemory int64
	// TmpDisk is in MB (default 0).
	TmpDisk int64
	// Gres lists the node's generic resources in the order written.
	Gres []GresSpec
	// Features are the node's features (Features= or Feature=).
	Features []string
	// Weight orders nodes for selection, lowest first (default 1).
	Weight uint32
	// State is the configured state (default UNKNOWN).
	State  string
	Reason string
	// CoreSpecCount and MemSpecLimit (MB) are reserved for the system.
	CoreSpecCount int
	MemSpecLimit  int64
	// Pos is the NodeName line that defined the node.
	Pos Pos
}

// GresSpec is one generic resource of a node: "gpu:8", "gpu:a100:8".
type GresSpec struct {
	// Name is the GRES name, lower-cased ("gpu").
	Name string
	// Type is the optional model ("a100"), lower-cased like TRES names so
	// that gres/gpu:A100 and gres/gpu:a100 meet; empty when untyped.
	Type string
	// Count is how many the node has.
	Count int64
	// NoConsume marks a resource not used up by jobs.
	NoConsume bool
}

// Partition is one partition, after PartitionName=DEFAULT values apply.
type Partition struct {
	Name string
	// NodesExpr is the Nodes= value as written ("ALL", "gpu[01-08]").
	NodesExpr string
	// Nodes are the member node names in configuration order of the
	// expression (ALL gives every node in file order).
	Nodes []string
	// Default marks the default partition (only one: the last Default=YES).
	Default bool
	// State is UP, DOWN, DRAIN or INACTIVE (default UP).
	State string
	// MaxTime is the largest time limit (duration.Infinite by default).
	MaxTime time.Duration
	// DefaultTime is the limit for jobs that give none (0 = use MaxTime).
	DefaultTime time.Duration
	// MaxNodes and MaxCPUsPerNode are Unlimited by default; MinNodes 0.
	MaxNodes       int
	MinNodes       int
	MaxCPUsPerNode int
	// PriorityJobFactor and PriorityTier default to 1; legacy Priority=
	// sets both.
	PriorityJobFactor uint16
	PriorityTier      uint16
	// AllowQos, AllowAccounts, AllowGroups, AllocNodes are nil for ALL.
	AllowQos      []string
	DenyQos       []string
	AllowAccounts []string
	DenyAccounts  []string
	AllowGroups   []string
	AllocNodes    []string
	// QOS is the partition QOS ("" = none).
	QOS string
	// OverSubscribe is NO by default.
	OverSubscribe OverSubscribe
	// PreemptMode overrides the cluster's when HasPreemptMode.
	PreemptMode    PreemptMode
	HasPreemptMode bool
	// Memory defaults and caps in MB (0 = the cluster's value).
	DefMemPerCPU  int64
	MaxMemPerCPU  int64
	DefMemPerNode int64
	MaxMemPerNode int64
	DefMemPerGPU  int64
	DefCpuPerGPU  int
	// TRESBillingWeights is as written; BillingWeights parsed (nil = bill CPUs).
	TRESBillingWeights string
	BillingWeights     tres.Weights
	Hidden             bool
	ExclusiveUser      bool
	RootOnly           bool
	ReqResv            bool
	LLN                bool
	DisableRootJobs    bool
	// GraceTime is the preemption grace period (seconds in the file).
	GraceTime time.Duration
	// OverTimeLimit overrides the cluster's when HasOverTimeLimit.
	OverTimeLimit    time.Duration
	HasOverTimeLimit bool
	// Alternate is the partition used when this one is DRAIN or INACTIVE.
	Alternate string
	// SelectTypeParameters overrides the cluster's when set (CR_Core, ...).
	SelectTypeParameters *SelectTypeParameters
	// Pos is the PartitionName line.
	Pos Pos
}

// OverSubscribeMode is the first word of OverSubscribe=.
type OverSubscribeMode string

// The OverSubscribe modes of slurm.conf(5).
const (
	OverSubscribeNo        OverSubscribeMode = "NO"
	OverSubscribeYes       OverSubscribeMode = "YES"
	OverSubscribeForce     OverSubscribeMode = "FORCE"
	OverSubscribeExclusive OverSubscribeMode = "EXCLUSIVE"
)

// OverSubscribe is NO, YES[:n], FORCE[:n] or EXCLUSIVE. Max is the jobs
// per resource (YES and FORCE default to 4, as Slurm; NO and EXCLUSIVE 1).
type OverSubscribe struct {
	Mode OverSubscribeMode
	Max  int
}

// NodeSet is a NodeSet line: a name for the union of Nodes= and the nodes
// with Feature=.
type NodeSet struct {
	Name    string
	Nodes   []string
	Feature string
	Pos     Pos
}

// DownNodes is a DownNodes line (State default DOWN).
type DownNodes struct {
	Nodes  []string
	State  string
	Reason string
	Pos    Pos
}
