package conf

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// SchedulerParameters is the typed form of SchedulerParameters=, with
// Slurm's defaults (slurm.conf(5), SEMANTICS.md §0) for every option not
// given. Options Sluice does not model are kept in Other.
type SchedulerParameters struct {
	// BfInterval is the time between backfill passes (default 30 s);
	// BackfillDisabled is set by bf_interval=-1.
	BfInterval       time.Duration
	BackfillDisabled bool
	// BfResolution is the time granularity of the backfill plan (default 60 s).
	BfResolution time.Duration
	// BfWindow is how far ahead backfill plans (default 1440 minutes).
	BfWindow time.Duration
	// BfWindowLinear is bf_window_linear in seconds (default 0).
	BfWindowLinear time.Duration
	// BfMaxJobTest is how many jobs one backfill pass considers (default 500).
	BfMaxJobTest int
	// BfMaxTime caps one backfill pass (default = BfInterval).
	BfMaxTime time.Duration
	// BfContinue resumes a pass after yielding locks instead of restarting.
	BfContinue bool
	// Per-user, per-partition, per-association and per-pass caps (0 = none).
	BfMaxJobUser     int
	BfMaxJobPart     int
	BfMaxJobStart    int
	BfMaxJobUserPart int
	BfMaxJobAssoc    int
	// BfMaxJobArrayResv is how many tasks of one array get reservations (default 20).
	BfMaxJobArrayResv int
	// BfMinAgeReserve: jobs pending less than this get no reservation (default 0).
	BfMinAgeReserve time.Duration
	// BfMinPrioReserve: jobs below this priority get no reservation (default 0).
	BfMinPrioReserve int64
	// BfYieldInterval and BfYieldSleep pace the backfill loop (2 s, 0.5 s).
	BfYieldInterval time.Duration
	BfYieldSleep    time.Duration
	// BfBusyNodes, BfOneResvPerJob, BfRunningJobReserve, BfLicenses and
	// BfIgnoreNewlyAvailNodes are the boolean backfill options.
	BfBusyNodes             bool
	BfOneResvPerJob         bool
	BfRunningJobReserve     bool
	BfLicenses              bool
	BfIgnoreNewlyAvailNodes bool
	// BfNodeSpaceSize caps the backfill plan's entries (default bf_window/bf_resolution).
	BfNodeSpaceSize int
	// BfJobPartCountReserve reserves resources for the top N jobs of each partition.
	BfJobPartCountReserve int

	// DefaultQueueDepth is how many jobs the main scheduler tries per
	// event-triggered pass (default 100).
	DefaultQueueDepth int
	// PartitionJobDepth caps jobs tried per partition (default 0 = none).
	PartitionJobDepth int
	// SchedInterval is the time between full main scheduler passes (default 60 s).
	SchedInterval time.Duration
	// SchedMinInterval is the minimum time between passes (default 2 µs).
	SchedMinInterval time.Duration
	// SchedMaxJobStart caps starts per main pass (default 0 = none).
	SchedMaxJobStart int
	// MaxSchedTime caps one main pass (default 2 s, at most MessageTimeout/2).
	MaxSchedTime time.Duration
	// BatchSchedDelay is how long a batch job may wait to be scheduled (default 3 s).
	BatchSchedDelay time.Duration
	// Defer skips scheduling at submit time.
	Defer bool
	// AssocLimitStop stops scheduling a partition's jobs behind an
	// association-limited job.
	AssocLimitStop bool
	// PreemptReorderCount, PreemptStrictOrder and PreemptYoungestFirst tune
	// the preemption candidate order (defaults 1, false, false).
	PreemptReorderCount  int
	PreemptStrictOrder   bool
	PreemptYoungestFirst bool
	// NoholdOnPrologFail requeues without hold after a prolog failure.
	NoholdOnPrologFail bool
	// EnableUserTop lets users reorder their own jobs (scontrol top).
	EnableUserTop bool
	// MaxArrayTasks caps tasks of one array (default = MaxArraySize).
	MaxArrayTasks int
	// MaxScriptSize caps a batch script (default 4 MiB).
	MaxScriptSize int64
	// MaxSwitchWait caps waiting for a switch count (default 300 s).
	MaxSwitchWait time.Duration
	// PackSerialAtEnd places serial jobs at the end of the node list.
	PackSerialAtEnd bool

	// RequeueDelay is the minimum time before a requeued job may restart.
	RequeueDelay time.Duration

	// Other holds every option not modelled above, name lower-cased,
	// value as written ("" for a bare flag).
	Other map[string]string
	// Unused lists, in the order written, the options Sluice does not act on.
	Unused []string
}

// defaultSchedulerParameters returns Slurm's defaults.
func defaultSchedulerParameters() SchedulerParameters {
	return SchedulerParameters{
		BfInterval:          30 * time.Second,
		BfResolution:        60 * time.Second,
		BfWindow:            1440 * time.Minute,
		BfMaxJobTest:        500,
		BfMaxJobArrayResv:   20,
		BfYieldInterval:     2 * time.Second,
		BfYieldSleep:        500 * time.Millisecond,
		DefaultQueueDepth:   100,
		SchedInterval:       60 * time.Second,
		SchedMinInterval:    2 * time.Microsecond,
		MaxSchedTime:        2 * time.Second,
		BatchSchedDelay:     3 * time.Second,
		PreemptReorderCount: 1,
		MaxScriptSize:       4 << 20,
		MaxSwitchWait:       300 * time.Second,
		Other:               map[string]string{},
	}
}

// schedOpt describes one modelled option: its range (checked as Slurm
// does: a value out of range is reported and the default kept) and how it
// is stored.
type schedOpt struct {
	lo, hi int64
	unit   time.Duration // 0 for plain counts
	set    func(s *SchedulerParameters, n int64)
	flag   func(s *SchedulerParameters)
}

// schedOpts is built on first use (see conf.clusterKeys).
var schedOpts = sync.OnceValue(func() map[string]schedOpt {
	return map[string]schedOpt{
		"bf_interval": {lo: -1, hi: 10800, set: func(s *SchedulerParameters, n int64) {
			s.BfInterval = time.Duration(n) * time.Second
			s.BackfillDisabled = n == -1
		}},
		"bf_resolution":               {lo: 1, hi: 3600, set: func(s *SchedulerParameters, n int64) { s.BfResolution = time.Duration(n) * time.Second }},
		"bf_window":                   {lo: 1, hi: 43200, set: func(s *SchedulerParameters, n int64) { s.BfWindow = time.Duration(n) * time.Minute }},
		"bf_window_linear":            {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.BfWindowLinear = time.Duration(n) * time.Second }},
		"bf_max_job_test":             {lo: 1, hi: 1000000, set: func(s *SchedulerParameters, n int64) { s.BfMaxJobTest = int(n) }},
		"bf_max_time":                 {lo: 1, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.BfMaxTime = time.Duration(n) * time.Second }},
		"bf_max_job_user":             {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.BfMaxJobUser = int(n) }},
		"bf_max_job_part":             {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.BfMaxJobPart = int(n) }},
		"bf_max_job_start":            {lo: 0, hi: 10000, set: func(s *SchedulerParameters, n int64) { s.BfMaxJobStart = int(n) }},
		"bf_max_job_user_part":        {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.BfMaxJobUserPart = int(n) }},
		"bf_max_job_assoc":            {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.BfMaxJobAssoc = int(n) }},
		"bf_max_job_array_resv":       {lo: 0, hi: 1000, set: func(s *SchedulerParameters, n int64) { s.BfMaxJobArrayResv = int(n) }},
		"bf_min_age_reserve":          {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.BfMinAgeReserve = time.Duration(n) * time.Second }},
		"bf_min_prio_reserve":         {lo: 0, hi: 1 << 32, set: func(s *SchedulerParameters, n int64) { s.BfMinPrioReserve = n }},
		"bf_yield_interval":           {lo: 1, hi: 10000000, set: func(s *SchedulerParameters, n int64) { s.BfYieldInterval = time.Duration(n) * time.Microsecond }},
		"bf_yield_sleep":              {lo: 1, hi: 10000000, set: func(s *SchedulerParameters, n int64) { s.BfYieldSleep = time.Duration(n) * time.Microsecond }},
		"bf_node_space_size":          {lo: 2, hi: 2000000, set: func(s *SchedulerParameters, n int64) { s.BfNodeSpaceSize = int(n) }},
		"bf_job_part_count_reserve":   {lo: 0, hi: 100000, set: func(s *SchedulerParameters, n int64) { s.BfJobPartCountReserve = int(n) }},
		"bf_continue":                 {flag: func(s *SchedulerParameters) { s.BfContinue = true }},
		"bf_busy_nodes":               {flag: func(s *SchedulerParameters) { s.BfBusyNodes = true }},
		"bf_one_resv_per_job":         {flag: func(s *SchedulerParameters) { s.BfOneResvPerJob = true }},
		"bf_running_job_reserve":      {flag: func(s *SchedulerParameters) { s.BfRunningJobReserve = true }},
		"bf_licenses":                 {flag: func(s *SchedulerParameters) { s.BfLicenses = true }},
		"bf_ignore_newly_avail_nodes": {flag: func(s *SchedulerParameters) { s.BfIgnoreNewlyAvailNodes = true }},
		"default_queue_depth":         {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.DefaultQueueDepth = int(n) }},
		"partition_job_depth":         {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.PartitionJobDepth = int(n) }},
		"sched_interval":              {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.SchedInterval = time.Duration(n) * time.Second }},
		"sched_min_interval":          {lo: 0, hi: 1000000, set: func(s *SchedulerParameters, n int64) { s.SchedMinInterval = time.Duration(n) * time.Microsecond }},
		"sched_max_job_start":         {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.SchedMaxJobStart = int(n) }},
		"max_sched_time":              {lo: 1, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.MaxSchedTime = time.Duration(n) * time.Second }},
		"batch_sched_delay":           {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.BatchSchedDelay = time.Duration(n) * time.Second }},
		"preempt_reorder_count":       {lo: 0, hi: 5, set: func(s *SchedulerParameters, n int64) { s.PreemptReorderCount = int(n) }},
		"max_array_tasks":             {lo: 1, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.MaxArrayTasks = int(n) }},
		"max_script_size":             {lo: 0, hi: 512 << 20, set: func(s *SchedulerParameters, n int64) { s.MaxScriptSize = n }},
		"max_switch_wait":             {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.MaxSwitchWait = time.Duration(n) * time.Second }},
		"requeue_delay":               {lo: 0, hi: 1 << 31, set: func(s *SchedulerParameters, n int64) { s.RequeueDelay = time.Duration(n) * time.Second }},
		"defer":                       {flag: func(s *SchedulerParameters) { s.Defer = true }},
		"assoc_limit_stop":            {flag: func(s *SchedulerParameters) { s.AssocLimitStop = true }},
		"preempt_strict_order":        {flag: func(s *SchedulerParameters) { s.PreemptStrictOrder = true }},
		"preempt_youngest_first":      {flag: func(s *SchedulerParameters) { s.PreemptYoungestFirst = true }},
		"nohold_on_prolog_fail":       {flag: func(s *SchedulerParameters) { s.NoholdOnPrologFail = true }},
		"enable_user_top":             {flag: func(s *SchedulerParameters) { s.EnableUserTop = true }},
		"pack_serial_at_end":          {flag: func(s *SchedulerParameters) { s.PackSerialAtEnd = true }},
	}
})

// otherSchedOpts are SchedulerParameters options Slurm documents that
// Sluice keeps in Other without acting on them.
var otherSchedOpts = []string{
	"allow_zero_lic", "bb_array_stage_cnt", "bf_hetjob_immediate", "bf_hetjob_prio",
	"bf_allow_magnetic_slot", "bf_topopt_enable", "bf_topopt_iterations",
	"build_queue_timeout", "correspond_after_task_cnt", "delay_boot", "disable_job_shrink",
	"disable_hetjob_steps", "enable_hetjob_steps", "extra_constraints", "ignore_prefer_validation",
	"ignore_constraint_validation", "max_rpc_cnt", "max_submit_line_size", "no_backup_scheduling",
	"no_env_cache", "reduce_completing_frag", "requeue_setup_env_fail", "salloc_wait_nodes",
	"sbatch_wait_nodes", "spec_cores_first", "step_retry_count", "step_retry_time", "whole_hetjob",
	"defer_batch", "enable_job_state_cache", "kill_invalid_depend", "permit_job_expansion",
	"max_depend_depth", "bf_max_job_user_part", "inventory_interval", "nohold_on_prolog_fail",
	"time_min_as_soft_limit", "bf_min_prio_reserve", "preempt_send_user_signal",
	"sched_min_interval", "ignore_numa", "cr_type", "bf_running_job_reserve",
}

// parseSchedulerParameters reads the comma list. A malformed number is an
// error; an out-of-range one is a warning and keeps the default (Slurm logs
// it and does the same); an option Sluice does not model is kept in Other.
func parseSchedulerParameters(v string, warn func(string)) (SchedulerParameters, error) {
	s := defaultSchedulerParameters()
	maxTimeSet := false
	for _, item := range splitList(v) {
		name, val, hasVal := strings.Cut(item, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		opt, ok := schedOpts()[name]
		if !ok {
			s.Other[name] = val
			s.Unused = append(s.Unused, name)
			if !knownSchedOpt(name) {
				warn(fmt.Sprintf("unknown option %s kept without effect", quote(name)))
			}
			continue
		}
		if opt.flag != nil {
			if hasVal {
				return s, fmt.Errorf("option %s takes no value", name)
			}
			opt.flag(&s)
			continue
		}
		if !hasVal {
			return s, fmt.Errorf("option %s needs a value (%s=N)", name, name)
		}
		n, err := parseInt(val, -1<<62, 1<<62)
		if err != nil {
			return s, fmt.Errorf("option %s: %v", name, err)
		}
		if n < opt.lo || n > opt.hi {
			warn(fmt.Sprintf("invalid %s=%d (range %d..%d); default kept", name, n, opt.lo, opt.hi))
			continue
		}
		opt.set(&s, n)
		maxTimeSet = maxTimeSet || name == "bf_max_time"
	}
	if !maxTimeSet {
		s.BfMaxTime = s.BfInterval
	}
	return s, nil
}

// knownSchedOpt reports whether Slurm documents the option.
func knownSchedOpt(name string) bool {
	if _, ok := schedOpts()[name]; ok {
		return true
	}
	sorted := sortedOtherSchedOpts()
	i := sort.SearchStrings(sorted, name)
	return i < len(sorted) && sorted[i] == name
}

var sortedOtherSchedOpts = sync.OnceValue(func() []string {
	s := append([]string(nil), otherSchedOpts...)
	sort.Strings(s)
	return s
})

// SelectTypeParameters says which resources are consumable
// (SelectTypeParameters=CR_Core_Memory,...).
type SelectTypeParameters struct {
	// Unit is the allocation unit: "CPU", "Core", "Socket", or "" when only
	// memory (CR_Memory) or nothing is consumable.
	Unit string
	// Memory is true when memory is consumable (the *_Memory forms, CR_Memory).
	Memory bool
	// Options are the other options as written (CR_ONE_TASK_PER_CORE,
	// CR_CORE_DEFAULT_DIST_BLOCK, CR_LLN, CR_Pack_Nodes, ...).
	Options []string
}

// String prints the parameters the way scontrol show config does.
func (s SelectTypeParameters) String() string {
	var parts []string
	switch {
	case s.Unit != "" && s.Memory:
		parts = append(parts, "CR_"+s.Unit+"_MEMORY")
	case s.Unit != "":
		parts = append(parts, "CR_"+strings.ToUpper(s.Unit))
	case s.Memory:
		parts = append(parts, "CR_MEMORY")
	}
	parts = append(parts, s.Options...)
	if len(parts) == 0 {
		return "NONE"
	}
	return strings.ToUpper(strings.Join(parts, ","))
}

var selectOptions = []string{
	"CR_ONE_TASK_PER_CORE", "CR_CORE_DEFAULT_DIST_BLOCK", "CR_LLN", "CR_PACK_NODES",
	"LL_SHARED_GRES", "MULTIPLE_SHARING_GRES_PJ", "ENFORCE_BINDING_GRES",
	"ONE_TASK_PER_SHARING_GRES", "OTHER_CONS_RES", "OTHER_CONS_TRES", "CR_SOCKET_DEFAULT_DIST_BLOCK",
}

func parseSelectTypeParameters(v string) (SelectTypeParameters, error) {
	var s SelectTypeParameters
	units := 0
	for _, w := range splitList(v) {
		u := strings.ToUpper(w)
		switch u {
		case "CR_CPU", "CR_CORE", "CR_SOCKET":
			s.Unit = unitName(u[3:])
			units++
			continue
		case "CR_CPU_MEMORY", "CR_CORE_MEMORY", "CR_SOCKET_MEMORY":
			s.Unit = unitName(strings.TrimSuffix(u[3:], "_MEMORY"))
			s.Memory = true
			units++
			continue
		case "CR_MEMORY":
			s.Memory = true
			units++
			continue
		}
		if !containsFold(selectOptions, u) {
			return s, fmt.Errorf("invalid option %s", quote(w))
		}
		s.Options = append(s.Options, w)
	}
	if units > 1 {
		return s, fmt.Errorf("%s: only one of CR_CPU, CR_Core, CR_Socket (with or without _Memory) or CR_Memory", quote(v))
	}
	return s, nil
}

func unitName(u string) string {
	switch u {
	case "CPU":
		return "CPU"
	case "CORE":
		return "Core"
	}
	return "Socket"
}

func containsFold(list []string, w string) bool {
	for _, x := range list {
		if strings.EqualFold(x, w) {
			return true
		}
	}
	return false
}
