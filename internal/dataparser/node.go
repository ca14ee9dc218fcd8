package dataparser

import (
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Nodes is the data of `scontrol show node --json`: nodes and last_update.
func Nodes(nodes []api.NodeRecord, now time.Time) Obj {
	list := make([]any, 0, len(nodes))
	for i := range nodes {
		list = append(list, Node(&nodes[i]))
	}
	return Obj{{"nodes", list}, {"last_update", Time(now)}}
}

// Node is one node record (v0.0.42's NODE), fields in Slurm's order.
func Node(n *api.NodeRecord) Obj {
	return Obj{
		{"architecture", n.Arch},
		{"burstbuffer_network_address", ""},
		{"boards", 1},
		{"boot_time", Time(n.BootTime)},
		{"cluster_name", ""},
		{"cores", n.Cores},
		{"specialized_cores", 0},
		{"cpu_binding", 0},
		{"cpu_load", cpuLoad(n)},
		{"free_mem", freeMem(n)},
		{"cpus", n.CPUs},
		{"effective_cpus", n.CPUs},
		{"specialized_cpus", ""},
		{"energy", Obj{
			{"average_watts", 0}, {"base_consumed_energy", 0}, {"consumed_energy", 0},
			{"current_watts", N(0)}, {"previous_consumed_energy", 0}, {"last_collected", 0},
		}},
		{"external_sensors", Obj{}},
		{"extra", ""},
		{"power", Obj{}},
		{"features", splitList(n.Features)},
		{"active_features", splitList(n.Features)},
		{"gpu_spec", ""},
		{"gres", n.Gres},
		{"gres_drained", "N/A"},
		{"gres_used", n.GresUsed},
		{"instance_id", ""},
		{"instance_type", ""},
		{"last_busy", Time(n.LastHeard)},
		{"mcs_label", ""},
		{"specialized_memory", 0},
		{"name", n.Name},
		{"next_state_after_reboot", Strings("INVALID")},
		{"address", n.Addr},
		{"hostname", n.Hostname},
		{"state", NodeState(n.State)},
		{"operating_system", n.OS},
		{"owner", ""},
		{"partitions", Strings(n.Partitions...)},
		{"port", 0},
		{"real_memory", n.RealMemory},
		{"res_cores_per_gpu", 0},
		{"comment", ""},
		{"reason", n.Reason},
		{"reason_changed_at", Time(n.ReasonTime)},
		{"reason_set_by_user", n.ReasonUser},
		{"resume_after", N(0)},
		{"reservation", ""},
		{"alloc_memory", n.AllocMem},
		{"alloc_cpus", n.AllocCPUs},
		{"alloc_idle_cpus", n.CPUs - n.AllocCPUs},
		{"tres_used", n.AllocTRES},
		{"tres_weighted", Float(n.AllocCPUs)},
		{"slurmd_start_time", Time(n.BootTime)},
		{"sockets", n.Sockets},
		{"threads", n.Threads},
		{"temporary_disk", 0},
		{"weight", n.Weight},
		{"tres", n.CfgTRES},
		{"version", n.Version},
	}
}

// NodeState is a node's state array: the base state and its flags
// ("MIXED+DRAIN" is ["MIXED", "DRAIN"]).
func NodeState(s string) []any {
	if s == "" {
		return []any{}
	}
	return Strings(strings.Split(s, "+")...)
}

// cpuLoad is the load average times 100, as slurmd reports it.
func cpuLoad(n *api.NodeRecord) int64 {
	if !n.LoadKnown {
		return 0
	}
	return int64(n.CPULoad*100 + 0.5)
}

func freeMem(n *api.NodeRecord) Num {
	if !n.LoadKnown {
		return Unset()
	}
	return N(n.FreeMem)
}

// splitList is a comma-separated list as an array.
func splitList(s string) []any {
	if s == "" || s == "(null)" {
		return []any{}
	}
	return Strings(strings.Split(s, ",")...)
}
