package ctld

import (
	"errors"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/tres"
)

// TestJobInfoSubmitShape: what scontrol show job, squeue %m and sacct's
// ReqTRES read of a job, as Slurm 24.11 records it at submission (oracle,
// DefMemPerCPU=1000): `sbatch -n3` has ReqTRES=cpu=3,mem=3000M,... and
// MinMemoryCPU=1000M; a held -N2 job NumNodes=2-2 NumTasks=2; -N2
// --ntasks-per-node=2 NumTasks=4, NtasksPerN 2, MinCPUsNode=2; -c2
// TresPerTask=cpu=2, --gpus=2 TresPerJob=gres/gpu:2. A job started at
// once shows its AccrueTime (its eligible time) and LastSchedEval.
func TestJobInfoSubmitShape(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2, extra: "DefMemPerCPU=100"})
	held := func(mods ...func(*api.JobSpec)) api.JobInfo {
		return c.job(c.submit(c.wrap("true", append(mods, func(s *api.JobSpec) { s.Hold = true })...)))
	}
	j := held(func(s *api.JobSpec) { s.NTasks = 2 })
	if j.ReqTRES != "cpu=2,mem=200M,node=1,billing=2" || j.MinMemoryMB != 100 || !j.MemPerCPU {
		t.Errorf("-n2: ReqTRES %q MinMemory %d perCPU %v, want cpu=2,mem=200M,node=1,billing=2 and 100 per CPU",
			j.ReqTRES, j.MinMemoryMB, j.MemPerCPU)
	}
	j = held(func(s *api.JobSpec) { s.MinNodes, s.MaxNodes = 2, 2 })
	if j.NumNodes != 2 || j.MaxNodes != 2 || j.NumTasks != 2 || j.NumCPUs != 2 {
		t.Errorf("-N2: nodes %d-%d tasks %d cpus %d, want 2-2, 2 tasks, 2 CPUs", j.NumNodes, j.MaxNodes, j.NumTasks, j.NumCPUs)
	}
	j = held(func(s *api.JobSpec) { s.MinNodes, s.MaxNodes, s.NTasksPerNode = 2, 2, 2 })
	if j.NumTasks != 4 || j.NTasksPerNode != 2 || j.MinCPUsNode != 2 {
		t.Errorf("-N2 --ntasks-per-node=2: tasks %d per node %d MinCPUsNode %d, want 4, 2, 2", j.NumTasks, j.NTasksPerNode, j.MinCPUsNode)
	}
	j = held(func(s *api.JobSpec) { s.CPUsPerTask = 2 })
	if j.TresPerTask != "cpu=2" || j.MinCPUsNode != 2 {
		t.Errorf("-c2: TresPerTask %q MinCPUsNode %d, want cpu=2 and 2", j.TresPerTask, j.MinCPUsNode)
	}
	id := c.submit(c.wrap("sleep 30"))
	r := c.waitState(id, "RUNNING", 10*time.Second)
	if r.AccrueTime.IsZero() || !r.AccrueTime.Equal(r.EligibleTime) || !r.LastSchedEval.Equal(r.StartTime) {
		t.Errorf("started job: AccrueTime %v EligibleTime %v LastSchedEval %v StartTime %v", r.AccrueTime, r.EligibleTime,
			r.LastSchedEval, r.StartTime)
	}
	c.control("cancel", idStr(id))
}

// TestUpdateHeldPriorityMessage: a priority set on a held job is refused
// with slurmctld's bare message (scontrol adds "for job 1"; oracle:
// "Job is in held state, pending scheduler release for job 1").
func TestUpdateHeldPriorityMessage(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Hold = true }))
	err := c.client.UpdateJob(c.ctx(), api.JobUpdateRequest{Job: idStr(id), Set: map[string]string{"Priority": "5000"}})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Message != "Job is in held state, pending scheduler release" || ae.Job != idStr(id) {
		t.Errorf("update Priority of a held job: %#v", err)
	}
}

// TestNodeCfgTRES: a node's CfgTRES shows its memory in the largest unit
// it reaches, two decimals when not whole (oracle: RealMemory=64000 with
// 8 CPUs and 4 GPUs is cpu=8,mem=62.50G,billing=8,gres/gpu=4).
func TestNodeCfgTRES(t *testing.T) {
	t.Parallel()
	cases := map[int64]string{64000: "cpu=8,mem=62.50G,billing=8,gres/gpu=4", 65536: "cpu=8,mem=64G,billing=8,gres/gpu=4",
		1000: "cpu=8,mem=1000M,billing=8,gres/gpu=4"}
	for mem, want := range cases {
		if got := nodeCfgTRES(tres.Vector{"cpu": 8, "mem": mem, "billing": 8, "gres/gpu": 4}); got != want {
			t.Errorf("RealMemory=%d: CfgTRES=%s, want %s", mem, got, want)
		}
	}
}

// TestUpdateCommentAndExtra: scontrol update job Comment= and Extra= set
// the texts squeue %k and scontrol show job print (Slurm 24.11 accepts
// both; the REST job update sends comment the same way), surviving a
// restart of the controller.
func TestUpdateCommentAndExtra(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Hold = true }))
	set := map[string]string{"Comment": "via update", "Extra": "tag=1"}
	if err := c.client.UpdateJob(c.ctx(), api.JobUpdateRequest{Job: idStr(id), Set: set}); err != nil {
		t.Fatal(err)
	}
	j := c.job(id)
	if j.Comment != "via update" || j.Extra == nil || *j.Extra != "tag=1" {
		t.Errorf("after update: Comment %q Extra %v", j.Comment, j.Extra)
	}
}
