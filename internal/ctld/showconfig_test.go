package ctld

import (
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/conf"
)

// TestShowConfigValues: scontrol show config writes set values back as
// slurmctld 24.11 does (oracle, test/oracle scenario scontrol-show-config)
// and unset keys as Slurm shows them unset.
func TestShowConfigValues(t *testing.T) {
	t.Parallel()
	base := "ClusterName=c1\nSlurmctldHost=head(10.0.0.1)\nNodeName=n1 CPUs=8 RealMemory=1000\nPartitionName=p Nodes=ALL\n"
	cases := []struct {
		name, conf string
		want       []string // "Key = value" lines that must appear
		absent     []string // keys that must not
	}{
		{"unset", "", []string{"KillWait = 30 sec", "DefMemPerNode = UNLIMITED", "MaxMemPerNode = UNLIMITED",
			"TaskPlugin = (null)", "MaxArraySize = 1001", "SlurmctldHost[0] = head(10.0.0.1)", "MaxNodeCount = 1",
			"NEXT_JOB_ID = 42", "BOOT_TIME = 2026-01-02T10:00:00", "ClusterName = c1"}, []string{"DefMemPerCPU"}},
		{"times with units", "KillWait=5\nMinJobAge=300\nOverTimeLimit=2\n", []string{"KillWait = 5 sec", "MinJobAge = 300 sec", "OverTimeLimit = 2 min"}, nil},
		{"per-CPU memory", "DefMemPerCPU=1000\n", []string{"DefMemPerCPU = 1000"}, []string{"DefMemPerNode"}},
		{"plugins of type none", "TaskPlugin=task/none\nMpiDefault=none\nJobCompType=jobcomp/none\n",
			[]string{"TaskPlugin = (null)", "MpiDefault = (null)", "JobCompType = (null)"}, nil},
		{"users and upper case", "SlurmUser=root\nSelectTypeParameters=CR_Core_Memory\nPreemptMode=requeue\n",
			[]string{"SlurmUser = root(0)", "SelectTypeParameters = CR_CORE_MEMORY", "PreemptMode = REQUEUE"}, nil},
		{"accounted TRES", "AccountingStorageTRES=gres/gpu\n",
			[]string{"AccountingStorageTRES = cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu,gres/gpumem,gres/gpuutil"}, nil},
		{"priority periods", "PriorityCalcPeriod=1\nPriorityDecayHalfLife=7-0\n", []string{"PriorityCalcPeriod = 00:01:00", "PriorityDecayHalfLife = 7-00:00:00"}, nil},
	}
	boot := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, _, err := conf.Parse("slurm.conf", []byte(base+c.conf))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			var order []string
			for _, e := range configEntries(cfg, boot, 42) {
				got[e.Key] = e.Value
				order = append(order, e.Key)
			}
			for _, w := range c.want {
				k, v, _ := strings.Cut(w, " = ")
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			for _, k := range c.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s shown", k)
				}
			}
			if len(order) != len(showConfigKeys) || order[0] != "AccountingStorageBackupHost" || order[len(order)-1] != "X11Parameters" {
				t.Errorf("%d keys from %s to %s", len(order), order[0], order[len(order)-1])
			}
		})
	}
}
