package priority

import (
	"fmt"
	"strings"

	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/duration"
)

// ConfigFrom converts the Priority* keys of a parsed slurm.conf.
func ConfigFrom(c *conf.Config) (Config, error) {
	p := &c.Priority
	cfg := DefaultConfig()
	if strings.EqualFold(p.Type, "priority/basic") {
		cfg.Type = Basic
	}
	w := []*uint32{&cfg.WeightAge, &cfg.WeightAssoc, &cfg.WeightFairshare, &cfg.WeightJobSize, &cfg.WeightPartition, &cfg.WeightQOS}
	for k, v := range []int64{p.WeightAge, p.WeightAssoc, p.WeightFairshare, p.WeightJobSize, p.WeightPartition, p.WeightQOS} {
		*w[k] = clampU32(v)
	}
	if p.WeightTRESSpec != "" {
		tw, err := ParseTRESWeights(p.WeightTRESSpec)
		if err != nil {
			return cfg, fmt.Errorf("PriorityWeightTRES: %w", err)
		}
		cfg.WeightTRES, cfg.WeightTRESString = tw, p.WeightTRESSpec
	}
	cfg.DecayHalfLife, cfg.CalcPeriod, cfg.MaxAge = p.DecayHalfLife, p.CalcPeriod, p.MaxAge
	cfg.FavorSmall = p.FavorSmall
	rp, err := ParseResetPeriod(string(p.UsageResetPeriod))
	if err != nil {
		return cfg, err
	}
	cfg.UsageResetPeriod = rp
	cfg.Flags = flagsFrom(p.Flags)
	if p.FairShareDampeningFactor > 0 {
		cfg.DampeningFactor = uint16(min(p.FairShareDampeningFactor, 0xffff))
	}
	return cfg, nil
}

var confFlags = []struct {
	from conf.PriorityFlags
	to   Flags
}{
	{conf.FlagAccrueAlways, FlagAccrueAlways},
	{conf.FlagCalculateRunning, FlagCalculateRunning},
	{conf.FlagDepthOblivious, FlagDepthOblivious},
	{conf.FlagNoFairTree, FlagNoFairTree},
	{conf.FlagIncrOnly, FlagIncrOnly},
	{conf.FlagMaxTRES, FlagMaxTRES},
	{conf.FlagMaxTRESGres, FlagMaxTRESGRES},
	{conf.FlagNoNormalAssoc, FlagNoNormalAssoc},
	{conf.FlagNoNormalPart, FlagNoNormalPart},
	{conf.FlagNoNormalQOS, FlagNoNormalQOS},
	{conf.FlagNoNormalTRES, FlagNoNormalTRES},
	{conf.FlagSmallRelativeToTime, FlagSmallRelativeToTime},
}

func flagsFrom(f conf.PriorityFlags) Flags {
	var out Flags
	for _, m := range confFlags {
		if f.Has(m.from) {
			out |= m.to
		}
	}
	return out
}

// ClusterFrom derives the normalisation inputs from slurm.conf: node and
// CPU counts of the whole cluster and, per partition, PriorityJobFactor,
// MaxTime (unlimited = 0) and the TRES totals of its nodes (cpu, mem,
// node, gres/NAME and gres/NAME:TYPE). The controller should rebuild it
// when nodes go down (Slurm counts active nodes only).
func ClusterFrom(c *conf.Config) *Cluster {
	cl := &Cluster{Partitions: map[string]*Partition{}}
	nodes := map[string]*conf.Node{}
	for _, n := range c.Nodes {
		nodes[n.Name] = n
		cl.Nodes++
		cl.CPUs += uint32(max(n.CPUs, 0))
	}
	for _, p := range c.Partitions {
		part := &Partition{JobFactor: uint32(p.PriorityJobFactor), MaxTime: p.MaxTime, TRES: map[string]int64{}}
		if p.MaxTime == duration.Infinite {
			part.MaxTime = 0
		}
		for _, name := range p.Nodes {
			n := nodes[name]
			if n == nil {
				continue
			}
			part.TRES["cpu"] += int64(n.CPUs)
			part.TRES["mem"] += n.RealMemory
			part.TRES["node"]++
			for _, g := range n.Gres {
				part.TRES["gres/"+g.Name] += g.Count
				if g.Type != "" {
					part.TRES["gres/"+g.Name+":"+g.Type] += g.Count
				}
			}
		}
		for _, l := range c.Licenses { // global TRES: the system count
			part.TRES["license/"+l.Name] = l.Count
		}
		cl.Partitions[p.Name] = part
	}
	return cl
}
