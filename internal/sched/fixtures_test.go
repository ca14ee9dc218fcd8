package sched

// Copies of the acceptance fixtures (shared/fixtures), inlined so the tests
// run from any checkout.

const qosDemoConf = `# One gpu partition on two 8-GPU nodes (16 GPUs); QOS preemption with REQUEUE.
ClusterName=slurm-qos-demo
SlurmctldHost=head
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageTRES=gres/gpu
AccountingStorageEnforce=associations,limits,qos

PriorityType=priority/multifactor
PriorityWeightAge=1000
PriorityWeightFairshare=100000
PriorityWeightQOS=10000
PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=4000
PriorityDecayHalfLife=7-0

PreemptType=preempt/qos
PreemptMode=REQUEUE
SchedulerType=sched/backfill

NodeName=gpu-st-g6-48xl-[1-2] CPUs=192 RealMemory=760000 Gres=gpu:8 State=UNKNOWN
PartitionName=gpu Nodes=gpu-st-g6-48xl-[1-2] Default=YES MaxTime=INFINITE State=UP
`

const qosDemoAcct = `# Research owns most of the cluster; interactive is capped; batch-lowprio is preemptible.
sacctmgr -i add account research Description="Research team" Organization=acme
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

const partitionPrioConf = `# Two partitions over the same node; the high tier suspends the low one (gang scheduling).
ClusterName=ack
SlurmctldHost=ctl
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
PriorityType=priority/multifactor
PreemptType=preempt/partition_prio
PreemptMode=SUSPEND,GANG
NodeName=slurm-test-worker-cpu-0 CPUs=4 RealMemory=8000
PartitionName=debug Nodes=ALL Default=YES PriorityTier=1 OverSubscribe=FORCE:1 State=UP
PartitionName=hipri Nodes=ALL PriorityTier=2 OverSubscribe=NO State=UP
`
