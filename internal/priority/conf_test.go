package priority

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/conf"
)

const ohpcConf = `ClusterName=ohpc
SlurmctldHost=ohpc
PriorityType=priority/multifactor
PriorityDecayHalfLife=30-00:00:00
PriorityCalcPeriod=00:05:00
PriorityFavorSmall=No
PriorityMaxAge=7-00:00:00
PriorityUsageResetPeriod=QUARTERLY
PriorityWeightAge=0
PriorityWeightAssoc=0
PriorityWeightFairShare=10000
PriorityWeightJobSize=1000
PriorityWeightPartition=10
PriorityWeightQOS=1000
PriorityWeightTRES=CPU=1000,Mem=2G,GRES/gpu=4000
PriorityFlags=NO_NORMAL_QOS,SMALL_RELATIVE_TO_TIME
GresTypes=gpu
AccountingStorageTRES=gres/gpu
NodeName=node[001-100] CPUs=48 RealMemory=190000 Gres=gpu:a100:2
PartitionName=short Nodes=node[001-100] Default=YES MaxTime=02:00:00 PriorityJobFactor=1000
PartitionName=high Nodes=node[001-050] MaxTime=UNLIMITED PriorityJobFactor=400
`

func TestConfigFromSlurmConf(t *testing.T) {
	c, _, err := conf.Parse("ohpc.conf", []byte(ohpcConf))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WeightFairshare != 10000 || cfg.WeightJobSize != 1000 || cfg.WeightPartition != 10 || cfg.WeightQOS != 1000 || cfg.WeightAge != 0 {
		t.Errorf("weights %+v", cfg)
	}
	if cfg.DecayHalfLife != 30*day || cfg.CalcPeriod != 5*time.Minute || cfg.MaxAge != 7*day || cfg.UsageResetPeriod != ResetQuarterly {
		t.Errorf("times %+v", cfg)
	}
	if cfg.Flags != FlagNoNormalQOS|FlagSmallRelativeToTime || !cfg.Flags.FairTree() {
		t.Errorf("flags %b", cfg.Flags)
	}
	if len(cfg.WeightTRES) != 3 || cfg.WeightTRES[1] != (TRESWeight{"mem", 2.0 / 1024}) || cfg.WeightTRES[2].Name != "gres/gpu" {
		t.Errorf("TRES weights %+v", cfg.WeightTRES)
	}
	cl := ClusterFrom(c)
	if cl.Nodes != 100 || cl.CPUs != 4800 {
		t.Errorf("cluster %d nodes %d cpus", cl.Nodes, cl.CPUs)
	}
	hi := cl.Partitions["high"]
	if hi.JobFactor != 400 || hi.MaxTime != 0 || hi.TRES["cpu"] != 2400 || hi.TRES["gres/gpu"] != 100 || hi.TRES["gres/gpu:a100"] != 100 || hi.TRES["node"] != 50 {
		t.Errorf("high partition %+v", hi)
	}
	if sh := cl.Partitions["short"]; sh.MaxTime != 2*time.Hour || sh.JobFactor != 1000 {
		t.Errorf("short partition %+v", sh)
	}
}
