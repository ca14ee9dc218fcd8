package dataparser

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Partitions is the data of `scontrol show partition --json`.
func Partitions(parts []api.PartitionRecord, now time.Time) Obj {
	list := make([]any, 0, len(parts))
	for i := range parts {
		list = append(list, Partition(&parts[i]))
	}
	return Obj{{"partitions", list}, {"last_update", Time(now)}}
}

// Partition is one partition record (v0.0.42's PARTITION_INFO).
func Partition(p *api.PartitionRecord) Obj {
	return Obj{
		{"nodes", Obj{{"allowed_allocation", ""}, {"configured", p.Nodes}, {"total", p.TotalNodes}}},
		{"accounts", Obj{{"allowed", notAll(p.AllowAccounts)}, {"deny", p.DenyAccounts}}},
		{"groups", Obj{{"allowed", notAll(p.AllowGroups)}}},
		{"qos", Obj{{"allowed", notAll(p.AllowQOS)}, {"deny", p.DenyQOS}, {"assigned", p.QOS}}},
		{"alternate", ""},
		{"tres", Obj{{"billing_weights", ""}, {"configured", p.TRES}}},
		{"cluster", ""},
		{"select_type", []any{}},
		{"cpus", Obj{{"task_binding", 0}, {"total", p.TotalCPUs}}},
		{"defaults", Obj{
			{"memory_per_cpu", memPerCPUField(p.DefMemPerCPU)},
			{"partition_memory_per_cpu", setIf(p.DefMemPerCPU)},
			{"partition_memory_per_node", nodeMem(p.DefMemPerCPU, p.DefMemPerNode)},
			{"time", Minutes(p.DefaultTimeSec)},
			{"job", ""},
		}},
		{"grace_time", p.GraceTimeSec},
		{"maximums", Obj{
			{"cpus_per_node", countLimit(p.MaxCPUsPerNode)},
			{"cpus_per_socket", Infinite()},
			{"memory_per_cpu", memPerCPUField(p.MaxMemPerCPU)},
			{"partition_memory_per_cpu", setIf(p.MaxMemPerCPU)},
			{"partition_memory_per_node", nodeMem(p.MaxMemPerCPU, p.MaxMemPerNode)},
			{"nodes", countLimit(p.MaxNodes)},
			{"shares", 1},
			{"oversubscribe", oversubscribe(p.OverSubscribe)},
			{"time", limitMinutes(p.MaxTimeSec)},
			{"over_time_limit", Unset()},
		}},
		{"minimums", Obj{{"nodes", p.MinNodes}}},
		{"name", p.Name},
		{"node_sets", p.NodeSets},
		{"priority", Obj{{"job_factor", p.PriorityJobFactor}, {"tier", p.PriorityTier}}},
		{"timeouts", Obj{{"resume", Unset()}, {"suspend", Unset()}}},
		{"partition", Obj{{"state", Strings(p.State)}}},
		{"suspend_time", Unset()},
	}
}

// notAll is an access list with ALL (no restriction) printed empty.
func notAll(s string) string {
	if s == "ALL" {
		return ""
	}
	return s
}

func setIf(v int64) Num {
	if v == 0 {
		return Unset()
	}
	return N(v)
}

// nodeMem is a per-node memory value: set (0 when none) unless the
// memory is given per CPU.
func nodeMem(perCPU, perNode int64) Num {
	if perCPU != 0 {
		return Unset()
	}
	return N(perNode)
}

// countLimit is a count limit, infinite when unlimited (negative).
func countLimit(v int32) Num {
	if v < 0 {
		return Infinite()
	}
	return N(v)
}

// limitMinutes is a partition's MaxTime: UNLIMITED is infinite.
func limitMinutes(sec int64) Num {
	if sec <= 0 {
		return Infinite()
	}
	return Minutes(sec)
}

// oversubscribe is OverSubscribe as {jobs, flags}: "NO" one job per
// resource, "YES:4" or "FORCE:4" four, FORCE flagged "force", EXCLUSIVE
// flagged "exclusive".
func oversubscribe(s string) Obj {
	mode, n, _ := strings.Cut(strings.ToUpper(s), ":")
	jobs, _ := strconv.Atoi(n)
	flags := []any{}
	switch mode {
	case "YES", "FORCE":
		if jobs == 0 {
			jobs = 4
		}
		if mode == "FORCE" {
			flags = Strings("force")
		}
	case "EXCLUSIVE":
		jobs, flags = 1, Strings("exclusive")
	default:
		jobs = 1
	}
	return Obj{{"jobs", jobs}, {"flags", flags}}
}

// memPerCPUField is the raw memory_per_cpu of a partition record: slurmctld
// keeps a per-CPU value with its MEM_PER_CPU flag (the top bit) set, and
// data_parser prints that word as a signed integer (oracle: DefMemPerCPU=500
// prints -9223372036854775308); 0 when unset.
func memPerCPUField(mb int64) int64 {
	if mb <= 0 {
		return 0
	}
	return math.MinInt64 + mb
}
