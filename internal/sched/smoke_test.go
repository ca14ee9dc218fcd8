package sched

import (
	"testing"
	"time"
)

const qosDemoConf = `ClusterName=slurm-qos-demo
SlurmctldHost=head
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageTRES=gres/gpu
AccountingStorageEnforce=associations,limits,qos
PriorityType=priority/multifactor
PreemptType=preempt/qos
PreemptMode=REQUEUE
SchedulerType=sched/backfill
NodeName=gpu-st-g6-48xl-[1-2] CPUs=192 RealMemory=760000 Gres=gpu:8 State=UNKNOWN
PartitionName=gpu Nodes=gpu-st-g6-48xl-[1-2] Default=YES MaxTime=INFINITE State=UP
`

const qosDemoAcct = `sacctmgr -i add account research Description="Research team" Organization=acme
sacctmgr -i add account batch Description="Batch jobs" Organization=acme
sacctmgr -i add user alice DefaultAccount=research
sacctmgr -i add user bob DefaultAccount=research
sacctmgr -i add user charlie DefaultAccount=batch
sacctmgr -i add qos research Priority=10000 Flags=DenyOnLimit
sacctmgr -i add qos interactive Priority=5000 Flags=DenyOnLimit
sacctmgr -i add qos batch-lowprio Priority=100 Flags=DenyOnLimit
sacctmgr -i modify qos interactive set MaxWall=01:00:00 GrpTRES=gres/gpu=4 MaxJobsPerUser=2
sacctmgr -i modify qos batch-lowprio set MaxWall=24:00:00 MaxJobsPerUser=10
sacctmgr -i modify qos research set MaxWall=72:00:00
sacctmgr -i modify account research set qos+=research,interactive
sacctmgr -i modify account batch set qos+=batch-lowprio,interactive
sacctmgr -i modify account research set FairShare=500
sacctmgr -i modify account batch set FairShare=100
sacctmgr -i modify qos research set preempt=batch-lowprio
sacctmgr -i modify qos interactive set preempt=batch-lowprio
sacctmgr -i add qos debug-partition Priority=15000 MaxWall=00:30:00 Flags=DenyOnLimit,PartitionMaxNodes
`

func TestSmoke(t *testing.T) {
	h := newHarness(t, qosDemoConf)
	h.sacctmgr(qosDemoAcct)
	j := h.mustSubmit("charlie", "--qos=batch-lowprio --gres=gpu:8 --nodes=2 --time=04:00:00")
	h.expectState(j.ID, JobRunning, "")
	t.Log(h.nodes(j.ID))
	_, err := h.submit("bob", "--qos=interactive --gres=gpu:5 --nodes=1 --time=00:10:00")
	t.Log(submitError(err))
	h.advance(5 * time.Hour)
	h.expectState(j.ID, JobTimeout, "")
}
