package sched

import (
	"math"
	"time"
)

// Infinite is the duration used for UNLIMITED / INFINITE time limits. It
// has the same value as duration.Infinite (the largest time.Duration).
const Infinite time.Duration = math.MaxInt64

// ConsumeUnit is the CPU unit select/cons_tres allocates
// (SelectTypeParameters CR_CPU* vs CR_Core* vs CR_Socket*).
type ConsumeUnit uint8

// Consumable CPU units.
const (
	// ConsumeCore gives jobs whole cores (CR_Core, the default): on a node
	// with ThreadsPerCore=2 a 1-CPU job holds 2 CPUs.
	ConsumeCore ConsumeUnit = iota
	// ConsumeCPU gives jobs logical CPUs (CR_CPU).
	ConsumeCPU
	// ConsumeSocket gives jobs whole sockets (CR_Socket).
	ConsumeSocket
)

// PreemptType is PreemptType=.
type PreemptType uint8

// Preemption plugins.
const (
	PreemptNone          PreemptType = iota // preempt/none (the default)
	PreemptQOS                              // preempt/qos
	PreemptPartitionPrio                    // preempt/partition_prio
)

// EnforcePartLimits is EnforcePartLimits= (NO, ANY, ALL).
type EnforcePartLimits uint8

// EnforcePartLimits values.
const (
	EnforcePartNo EnforcePartLimits = iota
	EnforcePartAny
	EnforcePartAll
)

// Enforce is the set of AccountingStorageEnforce= options.
type Enforce uint8

// AccountingStorageEnforce bits.
const (
	EnforceAssociations Enforce = 1 << iota // a job must have a valid association
	EnforceLimits                           // association and QOS limits (implies associations)
	EnforceQOS                              // a job must have a valid QOS
	EnforceSafe                             // TRES-minute limits must cover the whole time limit
	EnforceWCKeys
	EnforceNoJobs
)

// BackfillParams are the sched/backfill SchedulerParameters (SEMANTICS §0
// and §4.3 give Slurm's defaults, which DefaultConfig uses).
type BackfillParams struct {
	// Enabled is SchedulerType=sched/backfill (false for sched/builtin).
	Enabled bool
	// Interval is bf_interval (the driver decides when to run a cycle).
	Interval time.Duration
	// Window is bf_window; Resolution is bf_resolution.
	Window     time.Duration
	Resolution time.Duration
	// MaxJobTest is bf_max_job_test (0 = plan the whole queue, Sluice's
	// default goal; Slurm's default is 500).
	MaxJobTest int
	// MaxJobUser, MaxJobPart, MaxJobStart, MaxJobAssoc and MaxJobUserPart
	// are the bf_max_job_* caps (0 = no limit).
	MaxJobUser     int
	MaxJobPart     int
	MaxJobStart    int
	MaxJobAssoc    int
	MaxJobUserPart int
	// MaxJobArrayResv is bf_max_job_array_resv.
	MaxJobArrayResv int
	// Continue is bf_continue.
	Continue bool
	// MinAgeReserve is bf_min_age_reserve; MinPrioReserve bf_min_prio_reserve.
	MinAgeReserve  time.Duration
	MinPrioReserve uint32
	// PartCountReserve is bf_job_part_count_reserve: only the first this
	// many jobs of each partition that cannot start now get a reservation
	// (0 = every job). With 1, backfill is EASY backfilling: lower jobs
	// start when they do not delay the first blocked job of their
	// partition.
	PartCountReserve int
	// StartsOnly lets a backfill pass stop planning once no job left in
	// the queue could start now (each needs more CPUs than are free):
	// the rest are only given their limit reasons, with no expected start
	// time. The starts are the same, since planning a job that cannot
	// start now only reserves resources for later; the simulator, which
	// reports starts and not expected start times, sets it. Slurm has no
	// such parameter (squeue --start needs every plan).
	StartsOnly bool
}

// WindowOrDefault is bf_window, Slurm's default (one day) when unset.
func (bp *BackfillParams) WindowOrDefault() time.Duration {
	if bp.Window > 0 {
		return bp.Window
	}
	return 24 * time.Hour
}

// ResolutionOrDefault is bf_resolution, Slurm's default (60 s) when unset.
func (bp *BackfillParams) ResolutionOrDefault() time.Duration {
	if bp.Resolution > 0 {
		return bp.Resolution
	}
	return time.Minute
}

// Config is the part of the cluster configuration the core's decisions
// depend on. Build it from internal/conf with ConfigFromConf, or start from
// DefaultConfig in tests.
type Config struct {
	// Unit and ConsumeMemory are SelectTypeParameters (CR_Core_Memory =
	// ConsumeCore + ConsumeMemory).
	Unit          ConsumeUnit
	ConsumeMemory bool
	// DefMemPerCPU, DefMemPerNode, MaxMemPerCPU, MaxMemPerNode are the
	// cluster-wide memory defaults and limits in MB (0 = unset; a job with
	// no memory request and no default gets the whole node's memory, as in
	// Slurm).
	DefMemPerCPU  int64
	DefMemPerNode int64
	MaxMemPerCPU  int64
	MaxMemPerNode int64
	// PreemptType, PreemptMode and PreemptExemptTime are the cluster's
	// preemption settings.
	PreemptType       PreemptType
	PreemptMode       PreemptMode
	PreemptExemptTime time.Duration
	// EnforcePartLimits is EnforcePartLimits=.
	EnforcePartLimits EnforcePartLimits
	// Enforce is AccountingStorageEnforce=.
	Enforce Enforce
	// MaxArraySize is MaxArraySize= (task ids must be < it).
	MaxArraySize int32
	// GresTypes is slurm.conf's GresTypes (lowercase): a GRES name outside
	// it is refused at submission, one no node has never fits.
	GresTypes []string
	// MaxJobCount is MaxJobCount= (0 = no limit).
	MaxJobCount int
	// FirstJobID is FirstJobId=.
	FirstJobID JobID
	// JobRequeue is JobRequeue= (default for --requeue).
	JobRequeue bool
	// RequeueDelay is the delay after which a requeued job becomes eligible
	// again; Slurm sets begin_time = now + requeue_delay + 1 s with a
	// default delay of 120 s (the credential lifetime).
	RequeueDelay time.Duration
	// SchedulerTimeSlice is SchedulerTimeSlice= (gang scheduling).
	SchedulerTimeSlice time.Duration
	// ResvOverRun is how long a job started in a reservation may run past
	// its end (Infinite = UNLIMITED; default 0: ended with it).
	ResvOverRun time.Duration
	// DefaultQueueDepth is default_queue_depth (0 = the whole queue).
	DefaultQueueDepth int
	// MaxJobStart is sched_max_job_start (0 = no limit).
	MaxJobStart int
	// AssocLimitStop is assoc_limit_stop: a job blocked by an accounting
	// limit also blocks its partition.
	AssocLimitStop bool
	// KillInvalidDepend is DependencyParameters=kill_invalid_depend: a
	// job whose dependency can never be satisfied is cancelled instead
	// of pending forever.
	KillInvalidDepend bool
	// Backfill are the sched/backfill parameters.
	Backfill BackfillParams
	// IncrementalQueue keeps the queue's order across cycles and lets a
	// cycle without backfill test the queue from its head only, so that
	// its cost follows the records it tests, not the queue's length
	// (lazy_queue.go). The starts and reasons are the full cycle's; only
	// Plan.Pending lists just the jobs whose reason may have changed, and
	// Plan.Stats count the records tested. It also has node Weights read
	// once per Cluster: a weight change needs a new Cluster. The simulator
	// sets it; Slurm has no such parameter.
	IncrementalQueue bool
	// ClusterName is ClusterName= (associations are per cluster).
	ClusterName string
}

// DefaultConfig returns Slurm's defaults (SEMANTICS §0): CR_Core without
// memory, no preemption, EnforcePartLimits=NO, MaxArraySize=1001,
// MaxJobCount=10000, JobRequeue=1, sched/backfill with bf_window=1 day and
// bf_resolution=60 s; bf_max_job_test is 0 (the whole queue) in Sluice.
func DefaultConfig() Config {
	return Config{
		Unit:               ConsumeCore,
		PreemptMode:        PreemptOff,
		MaxArraySize:       1001,
		MaxJobCount:        10000,
		FirstJobID:         1,
		JobRequeue:         true,
		RequeueDelay:       120 * time.Second,
		SchedulerTimeSlice: 30 * time.Second,
		Backfill: BackfillParams{
			Enabled:         true,
			Interval:        30 * time.Second,
			Window:          24 * time.Hour,
			Resolution:      60 * time.Second,
			MaxJobArrayResv: 20,
		},
	}
}
