package conf

import (
	"fmt"
	"strings"

	"github.com/sluice-hpc/sluice/internal/duration"
	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// partSpec is a partition line waiting for the node list to be resolved
// (a partition may name nodes defined further down the file).
type partSpec struct {
	p        Partition
	nodesPos Pos
}

var partStates = []string{"UP", "DOWN", "DRAIN", "INACTIVE"}

func newPartition() Partition {
	return Partition{
		State:             "UP",
		MaxTime:           infinite,
		MaxNodes:          Unlimited,
		MaxCPUsPerNode:    Unlimited,
		PriorityJobFactor: 1,
		PriorityTier:      1,
		OverSubscribe:     OverSubscribe{Mode: OverSubscribeNo, Max: 1},
	}
}

// setPartitionKey applies one partition key; it returns the key's
// canonical name for messages.
func setPartitionKey(pt *Partition, key, v string) (string, error) {
	yes := func(dst *bool) error {
		b, err := parseBool(v)
		*dst = b
		return err
	}
	mem := func(dst *int64) error {
		n, err := parseInt(v, 0, 1<<50)
		*dst = n
		return err
	}
	switch strings.ToLower(key) {
	case "nodes":
		pt.NodesExpr = strings.TrimSpace(v)
		return "Nodes", nil
	case "default":
		return "Default", yes(&pt.Default)
	case "state":
		if !containsFold(partStates, v) {
			return "State", fmt.Errorf("invalid state %s (UP, DOWN, DRAIN or INACTIVE)", quote(v))
		}
		pt.State = strings.ToUpper(v)
		return "State", nil
	case "maxtime":
		// Partition limits are kept in whole minutes; seconds round up (slurm.conf(5)).
		d, err := parseTime(v)
		pt.MaxTime = duration.RoundUpMinute(d)
		return "MaxTime", err
	case "defaulttime":
		d, err := parseTime(v)
		pt.DefaultTime = duration.RoundUpMinute(d)
		return "DefaultTime", err
	case "maxnodes":
		n, err := parseLimit(v, 0, 1<<31)
		pt.MaxNodes = int(n)
		return "MaxNodes", err
	case "minnodes":
		n, err := parseInt(v, 0, 1<<31)
		pt.MinNodes = int(n)
		return "MinNodes", err
	case "maxcpuspernode":
		n, err := parseLimit(v, 1, 1<<31)
		pt.MaxCPUsPerNode = int(n)
		return "MaxCPUsPerNode", err
	case "priority":
		n, err := parseInt(v, 0, 65533)
		pt.PriorityJobFactor, pt.PriorityTier = uint16(n), uint16(n)
		return "Priority", err
	case "priorityjobfactor":
		n, err := parseInt(v, 0, 65533)
		pt.PriorityJobFactor = uint16(n)
		return "PriorityJobFactor", err
	case "prioritytier":
		n, err := parseInt(v, 0, 65533)
		pt.PriorityTier = uint16(n)
		return "PriorityTier", err
	case "allowqos":
		pt.AllowQos = parseNameList(v)
		return "AllowQos", nil
	case "denyqos":
		pt.DenyQos = splitList(v)
		return "DenyQos", nil
	case "allowaccounts":
		pt.AllowAccounts = parseNameList(v)
		return "AllowAccounts", nil
	case "denyaccounts":
		pt.DenyAccounts = splitList(v)
		return "DenyAccounts", nil
	case "allowgroups":
		pt.AllowGroups = parseNameList(v)
		return "AllowGroups", nil
	case "allocnodes":
		pt.AllocNodes = parseNameList(v)
		return "AllocNodes", nil
	case "qos":
		pt.QOS = v
		return "QOS", nil
	case "oversubscribe", "shared":
		o, err := parseOverSubscribe(v)
		pt.OverSubscribe = o
		return "OverSubscribe", err
	case "preemptmode":
		m, err := ParsePreemptMode(v)
		pt.PreemptMode, pt.HasPreemptMode = m, true
		return "PreemptMode", err
	case "defmempercpu":
		return "DefMemPerCPU", mem(&pt.DefMemPerCPU)
	case "maxmempercpu":
		return "MaxMemPerCPU", mem(&pt.MaxMemPerCPU)
	case "defmempernode":
		return "DefMemPerNode", mem(&pt.DefMemPerNode)
	case "maxmempernode":
		return "MaxMemPerNode", mem(&pt.MaxMemPerNode)
	case "defmempergpu":
		return "DefMemPerGPU", mem(&pt.DefMemPerGPU)
	case "defcpupergpu":
		n, err := parseInt(v, 0, 1<<20)
		pt.DefCpuPerGPU = int(n)
		return "DefCpuPerGPU", err
	case "tresbillingweights":
		w, err := parseWeights(v)
		pt.TRESBillingWeights, pt.BillingWeights = v, w
		return "TRESBillingWeights", err
	case "hidden":
		return "Hidden", yes(&pt.Hidden)
	case "exclusiveuser":
		return "ExclusiveUser", yes(&pt.ExclusiveUser)
	case "rootonly":
		return "RootOnly", yes(&pt.RootOnly)
	case "reqresv":
		return "ReqResv", yes(&pt.ReqResv)
	case "lln":
		return "LLN", yes(&pt.LLN)
	case "disablerootjobs":
		return "DisableRootJobs", yes(&pt.DisableRootJobs)
	case "gracetime":
		d, err := parseSeconds(v, 0, 1<<31)
		pt.GraceTime = d
		return "GraceTime", err
	case "overtimelimit":
		n, err := parseLimit(v, 0, 65533)
		pt.HasOverTimeLimit = true
		if pt.OverTimeLimit = infinite; n != Unlimited {
			pt.OverTimeLimit = minutes(n)
		}
		return "OverTimeLimit", err
	case "alternate":
		pt.Alternate = v
		return "Alternate", nil
	case "selecttypeparameters":
		s, err := parseSelectTypeParameters(v)
		pt.SelectTypeParameters = &s
		return "SelectTypeParameters", err
	case "cpubind", "suspendtime", "suspendtimeout", "resumetimeout", "powerdownonidle", "maxcpuspersocket", "tres", "topology":
		return key, errUnusedNodeKey
	}
	return key, errUnknownKey
}

// parseOverSubscribe reads NO, YES[:n], FORCE[:n] or EXCLUSIVE. YES and
// FORCE without a count allow 4 jobs per resource, as Slurm.
func parseOverSubscribe(v string) (OverSubscribe, error) {
	mode, cnt, hasCnt := strings.Cut(strings.ToUpper(v), ":")
	o := OverSubscribe{Mode: OverSubscribeMode(mode), Max: 1}
	switch o.Mode {
	case OverSubscribeNo, OverSubscribeExclusive:
		if hasCnt {
			return o, fmt.Errorf("invalid value %s: %s takes no count", quote(v), mode)
		}
		return o, nil
	case OverSubscribeYes, OverSubscribeForce:
		o.Max = 4
		if hasCnt {
			n, err := parseInt(cnt, 1, 65533)
			if err != nil {
				return o, fmt.Errorf("invalid value %s: %v", quote(v), err)
			}
			o.Max = int(n)
		}
		return o, nil
	}
	return o, fmt.Errorf("invalid value %s (NO, YES[:n], FORCE[:n] or EXCLUSIVE)", quote(v))
}

// partitionLine handles PartitionName=... lines, including DEFAULT.
func (p *parser) partitionLine(st stmt) {
	head := st.Pairs[0]
	if strings.EqualFold(head.Value, "DEFAULT") {
		p.partDefaults = p.applyDefaults(p.partDefaults, st.Pairs[1:], func(k, v string) (string, error) {
			pt := newPartition()
			return setPartitionKey(&pt, k, v)
		})
		return
	}
	if head.Value == "" || strings.ContainsAny(head.Value, ",[]") {
		p.errorf(head.Pos, "PartitionName", "invalid partition name %s", quote(head.Value))
		return
	}
	s := &partSpec{p: newPartition()}
	for _, d := range p.partDefaults {
		if _, err := setPartitionKey(&s.p, d.Key, d.Value); err == nil && strings.EqualFold(d.Key, "nodes") {
			s.nodesPos = d.Pos
		}
	}
	ok := true
	for _, pr := range st.Pairs[1:] {
		name, err := setPartitionKey(&s.p, pr.Key, pr.Value)
		ok = p.reportKeyErr(pr, "PartitionName="+head.Value, name, err) && ok
		if name == "Nodes" {
			s.nodesPos = pr.Pos
		}
	}
	if !ok {
		return
	}
	s.p.Name, s.p.Pos = head.Value, head.Pos
	if s.nodesPos.File == "" {
		s.nodesPos = head.Pos
	}
	for _, prev := range p.parts {
		if prev.p.Name == s.p.Name {
			p.warnf(head, "partition %s already defined at %s; this record is ignored", s.p.Name, prev.p.Pos)
			return
		}
	}
	p.parts = append(p.parts, s)
}

// resolvePartitions expands each partition's Nodes= against the defined
// nodes and node sets, and picks the default partition: when several say
// Default=YES the last one wins, as slurmctld does (it logs the change).
func (p *parser) resolvePartitions() {
	c := p.cfg
	for _, s := range p.parts {
		pt := s.p
		names, err := p.expandPartitionNodes(pt.NodesExpr)
		if err != nil {
			p.errorf(s.nodesPos, "PartitionName="+pt.Name+": Nodes", "%v", err)
			continue
		}
		pt.Nodes = names
		if pt.Default {
			if prev := c.Partition(c.DefaultPartition); prev != nil {
				p.warns = append(p.warns, Warning{Pos: pt.Pos, Key: "Default",
					Msg: fmt.Sprintf("changing default partition from %s to %s", prev.Name, pt.Name)})
				prev.Default = false
			}
			c.DefaultPartition = pt.Name
		}
		if pt.DefaultTime > pt.MaxTime {
			// slurmctld logs this and drops DefaultTime (MaxTime then applies).
			p.warns = append(p.warns, Warning{Pos: pt.Pos, Key: "PartitionName=" + pt.Name + ": DefaultTime",
				Msg: fmt.Sprintf("DefaultTime exceeds MaxTime (%s > %s); DefaultTime ignored", duration.Format(pt.DefaultTime), duration.Format(pt.MaxTime))})
			pt.DefaultTime = 0
		}
		c.Partitions = append(c.Partitions, &pt)
		c.partIndex[pt.Name] = &pt
	}
}

// expandPartitionNodes resolves "ALL", node sets and host lists, keeping
// the order written and dropping repeats.
func (p *parser) expandPartitionNodes(expr string) ([]string, error) {
	if expr == "" {
		return nil, nil
	}
	if strings.EqualFold(expr, "ALL") {
		out := make([]string, len(p.cfg.Nodes))
		for i, n := range p.cfg.Nodes {
			out[i] = n.Name
		}
		return out, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, item := range splitTopLevel(expr) {
		var names []string
		if ns := p.cfg.NodeSet(item); ns != nil {
			names = ns.Nodes
		} else {
			var err error
			if names, err = hostlist.Expand(item); err != nil {
				return nil, err
			}
		}
		for _, n := range names {
			if _, ok := p.cfg.nodeIndex[n]; !ok {
				return nil, fmt.Errorf("unknown node %s (no NodeName line defines it)", quote(n))
			}
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// splitTopLevel splits a host list on commas outside brackets.
func splitTopLevel(v string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) {
			switch v[i] {
			case '[':
				depth++
			case ']':
				depth--
			}
			if v[i] != ',' || depth > 0 {
				continue
			}
		}
		if w := strings.TrimSpace(v[start:i]); w != "" {
			out = append(out, w)
		}
		start = i + 1
	}
	return out
}
