package sched

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/duration"
)

// ClusterFromConf builds the cluster (nodes, partitions, GRES kinds) of a
// parsed slurm.conf. Nodes start in the state the file gives them
// (State=UNKNOWN nodes are not usable until the driver marks them up, as
// slurmctld waits for slurmd to register).
func ClusterFromConf(c *conf.Config) (*Cluster, error) {
	kinds := gresKinds(c)
	nodes := make([]Node, len(c.Nodes))
	for i, cn := range c.Nodes {
		nodes[i] = nodeFromConf(cn, kinds)
	}
	idx := map[string]int32{}
	for i, n := range nodes {
		idx[n.Name] = int32(i)
	}
	parts := make([]Partition, len(c.Partitions))
	for i, cp := range c.Partitions {
		p, err := partitionFromConf(cp, idx)
		if err != nil {
			return nil, err
		}
		p.Default = cp.Default || c.DefaultPartition == cp.Name
		parts[i] = p
	}
	cl, err := NewCluster(c.ClusterName, nodes, parts, kinds)
	if cl != nil {
		cl.Licenses = LicensesFromConf(c.Licenses) // license.go
	}
	return cl, err
}

// gresKinds collects the (name, type) pairs of every node's Gres=.
func gresKinds(c *conf.Config) []GresKind {
	var kinds []GresKind
	seen := map[GresKind]bool{}
	for _, n := range c.Nodes {
		for _, g := range n.Gres {
			k := GresKind{Name: g.Name, Type: g.Type}
			if !seen[k] {
				seen[k] = true
				kinds = append(kinds, k)
			}
		}
	}
	return kinds
}

func nodeFromConf(cn *conf.Node, kinds []GresKind) Node {
	n := Node{Name: cn.Name, CPUs: int32(cn.CPUs), Sockets: int32(cn.Sockets), CoresPerSocket: int32(cn.CoresPerSocket),
		ThreadsPerCore: int32(cn.ThreadsPerCore), RealMemory: cn.RealMemory, Weight: cn.Weight,
		Features: append([]string(nil), cn.Features...), Gres: make([]int64, len(kinds)), Reason: cn.Reason}
	for _, g := range cn.Gres {
		for k, kind := range kinds {
			if kind.Name == g.Name && kind.Type == g.Type && !g.NoConsume {
				n.Gres[k] += g.Count
			}
		}
	}
	n.State = nodeStateFromConf(cn.State)
	return n
}

// nodeStateFromConf maps a slurm.conf State= to a NodeState.
func nodeStateFromConf(s string) NodeState {
	switch strings.ToUpper(s) {
	case "IDLE", "CLOUD":
		return NodeIdle
	case "DOWN":
		return NodeDown
	case "DRAIN":
		return NodeIdle | NodeFlagDrain
	case "FAIL":
		return NodeIdle | NodeFlagFail
	case "FUTURE":
		return NodeFuture
	}
	return NodeUnknown
}

func partitionFromConf(cp *conf.Partition, idx map[string]int32) (Partition, error) {
	p := Partition{Name: cp.Name, MaxTime: cp.MaxTime, DefaultTime: cp.DefaultTime,
		MinNodes: int32(cp.MinNodes), MaxNodes: int32(cp.MaxNodes), MaxCPUsPerNode: int32(cp.MaxCPUsPerNode),
		DefMemPerCPU: cp.DefMemPerCPU, DefMemPerNode: cp.DefMemPerNode, MaxMemPerCPU: cp.MaxMemPerCPU,
		MaxMemPerNode: cp.MaxMemPerNode, PriorityJobFactor: cp.PriorityJobFactor, PriorityTier: cp.PriorityTier,
		AllowQOS: cp.AllowQos, DenyQOS: cp.DenyQos, AllowAccounts: cp.AllowAccounts, DenyAccounts: cp.DenyAccounts,
		AllowGroups: cp.AllowGroups, QOS: cp.QOS, GraceTime: cp.GraceTime, ExclusiveUser: cp.ExclusiveUser,
		RootOnly: cp.RootOnly, Hidden: cp.Hidden}
	if p.MaxTime == duration.Infinite || p.MaxTime == 0 {
		p.MaxTime = Infinite
	}
	switch strings.ToUpper(cp.State) {
	case "DOWN":
		p.State = PartitionDown
	case "DRAIN":
		p.State = PartitionDrain
	case "INACTIVE":
		p.State = PartitionInactive
	}
	p.OverSubscribe = OverSubscribe{Count: int32(cp.OverSubscribe.Max)}
	switch cp.OverSubscribe.Mode {
	case conf.OverSubscribeYes:
		p.OverSubscribe.Mode = OverSubscribeYes
	case conf.OverSubscribeForce:
		p.OverSubscribe.Mode = OverSubscribeForce
	case conf.OverSubscribeExclusive:
		p.OverSubscribe.Mode = OverSubscribeExclusive
	}
	if cp.HasPreemptMode {
		p.PreemptMode = PreemptModeFromConf(cp.PreemptMode)
	}
	for _, name := range cp.Nodes {
		i, ok := idx[name]
		if !ok {
			return p, fmt.Errorf("partition %q: node %q: %w", cp.Name, name, ErrInvalidNodeName)
		}
		p.NodeList = append(p.NodeList, i)
	}
	return p, nil
}

// PreemptModeFromConf converts conf's PreemptMode bits to the core's.
func PreemptModeFromConf(m conf.PreemptMode) PreemptMode {
	if m == conf.PreemptOff {
		return PreemptOff
	}
	var out PreemptMode
	pairs := []struct {
		c conf.PreemptMode
		s PreemptMode
	}{{conf.PreemptSuspend, PreemptSuspend}, {conf.PreemptRequeue, PreemptRequeue}, {conf.PreemptCancel, PreemptCancel},
		{conf.PreemptGang, PreemptGang}, {conf.PreemptWithin, PreemptWithin}, {conf.PreemptPriority, PreemptPriority}}
	for _, pr := range pairs {
		if m.Has(pr.c) {
			out |= pr.s
		}
	}
	return out
}

// ConfigFromConf builds the core's Config from a parsed slurm.conf.
func ConfigFromConf(c *conf.Config) Config {
	cfg := DefaultConfig()
	cfg.ClusterName = c.ClusterName
	sp := c.SelectTypeParameters
	switch strings.ToLower(sp.Unit) {
	case "cpu", "":
		cfg.Unit = ConsumeCPU
	case "socket":
		cfg.Unit = ConsumeSocket
	default:
		cfg.Unit = ConsumeCore
	}
	cfg.ConsumeMemory = sp.Memory
	cfg.GresTypes = c.GresTypes
	cfg.DefMemPerCPU, cfg.DefMemPerNode = c.DefMemPerCPU, c.DefMemPerNode
	cfg.MaxMemPerCPU, cfg.MaxMemPerNode = c.MaxMemPerCPU, c.MaxMemPerNode
	switch strings.ToLower(c.Preempt.Type) {
	case "preempt/qos":
		cfg.PreemptType = PreemptQOS
	case "preempt/partition_prio":
		cfg.PreemptType = PreemptPartitionPrio
	default:
		cfg.PreemptType = PreemptNone
	}
	cfg.PreemptMode = PreemptModeFromConf(c.Preempt.Mode)
	cfg.PreemptExemptTime = c.Preempt.ExemptTime
	switch c.EnforcePartLimits {
	case conf.EnforcePartAny:
		cfg.EnforcePartLimits = EnforcePartAny
	case conf.EnforcePartAll:
		cfg.EnforcePartLimits = EnforcePartAll
	}
	cfg.Enforce = enforceFromConf(c.Accounting.Enforce)
	if c.MaxArraySize > 0 {
		cfg.MaxArraySize = int32(c.MaxArraySize)
	}
	cfg.MaxJobCount = c.MaxJobCount
	if c.FirstJobId > 0 {
		cfg.FirstJobID = JobID(c.FirstJobId)
	}
	cfg.JobRequeue = c.JobRequeue
	cfg.ResvOverRun = c.ResvOverRun
	if c.SchedulerTimeSlice > 0 {
		cfg.SchedulerTimeSlice = c.SchedulerTimeSlice
	}
	s := c.SchedulerParameters
	if s.RequeueDelay > 0 {
		cfg.RequeueDelay = s.RequeueDelay
	}
	cfg.MaxJobStart = s.SchedMaxJobStart
	cfg.AssocLimitStop = s.AssocLimitStop
	// Slurm 24.11 reads kill_invalid_depend from DependencyParameters
	// only (in SchedulerParameters it is ignored).
	cfg.KillInvalidDepend = slices.ContainsFunc(c.DependencyParameters,
		func(o string) bool { return strings.EqualFold(o, "kill_invalid_depend") })
	cfg.Backfill = BackfillParams{
		Enabled:  strings.EqualFold(c.SchedulerType, "sched/backfill") && !s.BackfillDisabled,
		Interval: s.BfInterval, Window: s.BfWindow, Resolution: s.BfResolution, MaxJobTest: s.BfMaxJobTest,
		MaxJobUser: s.BfMaxJobUser, MaxJobPart: s.BfMaxJobPart, MaxJobStart: s.BfMaxJobStart,
		MaxJobAssoc: s.BfMaxJobAssoc, MaxJobUserPart: s.BfMaxJobUserPart, MaxJobArrayResv: s.BfMaxJobArrayResv,
		Continue: s.BfContinue, MinAgeReserve: s.BfMinAgeReserve, MinPrioReserve: uint32(max(s.BfMinPrioReserve, 0)),
		PartCountReserve: s.BfJobPartCountReserve,
	}
	return cfg
}

func enforceFromConf(e conf.EnforceFlags) Enforce {
	var out Enforce
	pairs := []struct {
		c conf.EnforceFlags
		s Enforce
	}{{conf.EnforceAssociations, EnforceAssociations}, {conf.EnforceLimits, EnforceLimits}, {conf.EnforceQOS, EnforceQOS},
		{conf.EnforceSafe, EnforceSafe}, {conf.EnforceWCKeys, EnforceWCKeys}, {conf.EnforceNoJobs, EnforceNoJobs}}
	for _, pr := range pairs {
		if e.Has(pr.c) {
			out |= pr.s
		}
	}
	return out
}
