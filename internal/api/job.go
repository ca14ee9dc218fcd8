package api

// JobSpec is one job submission as sbatch sends it to the controller, and as
// the simulator's trace readers hand it to the scheduler core. Every field
// corresponds to an sbatch option (named in its comment); a zero value means
// "not given" so the controller can apply Slurm's defaults (partition
// DefaultTime, the association's default QOS, DefMemPerCPU, ...).
//
// Quantities are parsed (seconds, megabytes, counts); strings whose meaning
// depends on the controller's state or clock at submit time (begin time,
// dependency, array expression, GRES) travel as the user wrote them.
type JobSpec struct {
	// Name is --job-name/-J (default: the script's file name, or "wrap").
	Name string `json:"name,omitempty"`
	// Partitions is --partition/-p split on commas, in the order given.
	Partitions []string `json:"partitions,omitempty"`
	// Account is --account/-A.
	Account string `json:"account,omitempty"`
	// QOS is --qos/-q.
	QOS string `json:"qos,omitempty"`

	// User is the submitting user's name (or --uid given as a name).
	User string `json:"user,omitempty"`
	// UID is the submitting user's numeric id (or --uid given as a number).
	UID *uint32 `json:"uid,omitempty"`
	// GID is --gid (or the submitting user's primary group).
	GID *uint32 `json:"gid,omitempty"`
	// Group is --gid given as a group name.
	Group string `json:"group,omitempty"`

	// MinNodes and MaxNodes are --nodes/-N min[-max]; 0 means not given.
	MinNodes int `json:"min_nodes,omitempty"`
	MaxNodes int `json:"max_nodes,omitempty"`
	// ZeroNodes records --nodes=0 (a job of no nodes, which slurmctld
	// refuses after giving it an id).
	ZeroNodes bool `json:"zero_nodes,omitempty"`
	// NTasks is --ntasks/-n.
	NTasks int `json:"ntasks,omitempty"`
	// CPUsPerTask is --cpus-per-task/-c.
	CPUsPerTask int `json:"cpus_per_task,omitempty"`
	// NTasksPerNode is --ntasks-per-node.
	NTasksPerNode int `json:"ntasks_per_node,omitempty"`
	// MinCPUsPerNode is --mincpus.
	MinCPUsPerNode int `json:"mincpus,omitempty"`
	// MemPerNodeMB is --mem in megabytes (0 with MemPerNodeSet = all of
	// each node's memory, as Slurm treats --mem=0).
	MemPerNodeMB int64 `json:"mem_per_node_mb,omitempty"`
	// MemPerNodeSet records that --mem was given (needed for --mem=0).
	MemPerNodeSet bool `json:"mem_per_node_set,omitempty"`
	// MemPerCPUMB is --mem-per-cpu in megabytes.
	MemPerCPUMB int64 `json:"mem_per_cpu_mb,omitempty"`
	// MemPerGPUMB is --mem-per-gpu in megabytes.
	MemPerGPUMB int64 `json:"mem_per_gpu_mb,omitempty"`
	// Gres is --gres as written, e.g. "gpu:2" or "gpu:a100:8,shard:1".
	Gres string `json:"gres,omitempty"`
	// GPUs is --gpus/-G as written: "4" or "a100:4".
	GPUs string `json:"gpus,omitempty"`
	// GPUsPerNode is --gpus-per-node as written.
	GPUsPerNode string `json:"gpus_per_node,omitempty"`
	// GPUsPerTask is --gpus-per-task as written.
	GPUsPerTask string `json:"gpus_per_task,omitempty"`
	// CPUsPerGPU is --cpus-per-gpu.
	CPUsPerGPU int `json:"cpus_per_gpu,omitempty"`
	// Licenses is --licenses/-L as written: "matlab:2,ansys".
	Licenses string `json:"licenses,omitempty"`

	// TimeLimitSec is --time/-t in seconds; 0 = not given, TimeInfinite =
	// UNLIMITED/INFINITE.
	TimeLimitSec int64 `json:"time_limit_s,omitempty"`
	// TimeMinSec is --time-min in seconds (backfill may shorten the job's
	// limit down to it).
	TimeMinSec int64 `json:"time_min_s,omitempty"`
	// Begin is --begin/-b as written ("now+1hour", "16:00", "2026-01-01T10:00");
	// the controller resolves it against its clock.
	Begin string `json:"begin,omitempty"`
	// Deadline is --deadline as written.
	Deadline string `json:"deadline,omitempty"`
	// Dependency is --dependency/-d as written: "afterok:12:13,singleton".
	Dependency string `json:"dependency,omitempty"`
	// KillOnInvalidDep is --kill-on-invalid-dep: "yes" or "no" ("" = the
	// cluster's kill_invalid_depend).
	KillOnInvalidDep string `json:"kill_on_invalid_dep,omitempty"`
	// Nice is --nice (bare --nice means +100, Slurm's default adjustment).
	Nice *int `json:"nice,omitempty"`
	// Priority is --priority (operators only).
	Priority *uint32 `json:"priority,omitempty"`
	// Hold is --hold/-H: submit held (priority 0, reason JobHeldUser).
	Hold bool `json:"hold,omitempty"`
	// Exclusive is --exclusive[=user|mcs|topo]: "node" for a bare
	// --exclusive, else the given mode; empty when not given.
	Exclusive string `json:"exclusive,omitempty"`
	// OverSubscribe is --oversubscribe/-s.
	OverSubscribe bool `json:"oversubscribe,omitempty"`
	// Constraint is --constraint/-C as written: "V100|P100", "IB&CPU-Gold-6230".
	Constraint string `json:"constraint,omitempty"`
	// Prefer is --prefer as written.
	Prefer string `json:"prefer,omitempty"`
	// NodeList is --nodelist/-w as written (a hostlist expression).
	NodeList string `json:"nodelist,omitempty"`
	// Exclude is --exclude/-x as written.
	Exclude string `json:"exclude,omitempty"`
	// Contiguous is --contiguous.
	Contiguous bool `json:"contiguous,omitempty"`
	// Array is --array/-a as written: "0-15%4", "1,3,5-7".
	Array string `json:"array,omitempty"`
	// Requeue is --requeue (true) / --no-requeue (false); nil = the
	// cluster's JobRequeue default.
	Requeue *bool `json:"requeue,omitempty"`
	// Reservation is --reservation.
	Reservation string `json:"reservation,omitempty"`
	// WCKey is --wckey.
	WCKey string `json:"wckey,omitempty"`
	// Comment is --comment.
	Comment string `json:"comment,omitempty"`
	// Extra is --extra: a string stored with the job and shown by
	// scontrol show job (set, even empty, when given).
	Extra *string `json:"extra,omitempty"`
	// Allocation marks a job that holds an allocation for salloc or srun
	// (its script only waits): it ends when its holder releases it
	// (OpComplete) or stops sending OpKeepalive.
	Allocation bool `json:"allocation,omitempty"`
	// NoShell is salloc --no-shell: the allocation has no holder once
	// granted and lasts until it is cancelled or reaches its time limit.
	NoShell bool `json:"no_shell,omitempty"`
	// AllocNode and AllocSID are the submitting host (short name) and the
	// session id of the submitting process (scontrol's AllocNode:Sid).
	AllocNode string `json:"alloc_node,omitempty"`
	AllocSID  int    `json:"alloc_sid,omitempty"`
	// SubmitKey is sbatch's idempotency key (random, one per command):
	// a submission sent again with the key of a job the same user
	// submitted within the last SubmitKeyWindow is answered with that
	// job's id instead of making a second job. Stored with the job.
	SubmitKey string `json:"submit_key,omitempty"`

	// Output, Error and Input are --output/-o, --error/-e and --input/-i
	// filename patterns (%j, %A, %a, %u, %x, %N ... are expanded at launch).
	Output string `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
	Input  string `json:"input,omitempty"`
	// OpenMode is --open-mode (append|truncate).
	OpenMode string `json:"open_mode,omitempty"`
	// WorkDir is --chdir/-D (default: the submit directory).
	WorkDir string `json:"workdir,omitempty"`
	// Export is --export as written: "ALL", "NONE", "ALL,FOO=bar".
	Export string `json:"export,omitempty"`
	// Environment is the submitting environment captured by sbatch
	// ("NAME=value"), filtered by Export at launch.
	Environment []string `json:"environment,omitempty"`
	// MailType and MailUser are --mail-type and --mail-user.
	MailType string `json:"mail_type,omitempty"`
	MailUser string `json:"mail_user,omitempty"`
	// Signal is --signal as written: "[{R|B}:]num[@time]".
	Signal string `json:"signal,omitempty"`

	// Wrap is --wrap: the command line sbatch turns into a script.
	Wrap string `json:"wrap,omitempty"`
	// Script is the batch script's full text.
	Script string `json:"script,omitempty"`
	// ScriptName is the script's path as given on the command line.
	ScriptName string `json:"script_name,omitempty"`
	// ScriptArgs are the arguments after the script name.
	ScriptArgs []string `json:"script_args,omitempty"`
}

// TimeInfinite is the value of JobSpec.TimeLimitSec (and TimeMinSec) for
// --time=UNLIMITED / INFINITE.
const TimeInfinite int64 = -1

// TimePartitionLimit is an accounting record's TimeLimitSec for a job
// that gave no --time and has not started (pending, or ended without
// running): its limit is not resolved yet, sacct prints Partition_Limit.
const TimePartitionLimit int64 = -2

// CPUCount returns the number of CPUs the request asks for, the way Slurm
// counts it before node selection: ntasks (default 1, or ntasks-per-node x
// min nodes) times cpus-per-task (default 1), and at least one per node.
func (s *JobSpec) CPUCount() int {
	tasks := s.NTasks
	if tasks <= 0 && s.NTasksPerNode > 0 && s.MinNodes > 0 {
		tasks = s.NTasksPerNode * s.MinNodes
	}
	if tasks <= 0 {
		tasks = 1
	}
	cpt := s.CPUsPerTask
	if cpt <= 0 {
		cpt = 1
	}
	n := tasks * cpt
	if n < s.MinNodes {
		n = s.MinNodes
	}
	return n
}
