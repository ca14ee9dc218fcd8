package sched

import (
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/priority"
)

// TestPrioritizerOrdersByQOS: with PriorityWeightQOS the research QOS job
// (priority 10000) outranks the batch-lowprio one (100) and is started
// first when one slot frees.
func TestPrioritizerOrdersByQOS(t *testing.T) {
	h := noBackfill(newHarness(t, qosDemoConf))
	h.sacctmgr(qosDemoAcct)
	c, _, err := conf.Parse("slurm.conf", []byte(qosDemoConf))
	if err != nil {
		t.Fatal(err)
	}
	pcfg, err := priority.ConfigFrom(c)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := priority.FromPolicy(acct.NewPolicy(h.acct.Clone()), "slurm-qos-demo")
	if err != nil {
		t.Fatal(err)
	}
	tree.Recompute(&pcfg)
	calc := priority.NewCalculator(&pcfg, priority.ClusterFrom(c), tree)
	pz := NewPrioritizer(calc, tree)
	h.mustSubmit("alice", "--qos=research --gres=gpu:8 --nodes=2 --time=1:00:00 --run=10")
	low := h.mustSubmit("charlie", "--qos=batch-lowprio --gres=gpu:8 --nodes=2 --time=1:00:00")
	high := h.mustSubmit("alice", "--qos=research --gres=gpu:8 --nodes=2 --time=1:00:00")
	pz.Update(h.st, h.now)
	var pj priority.Job
	h.st.PriorityJob(high, high.Partitions[0], tree, &pj)
	t.Logf("%+v", calc.Explain(&pj, h.now))
	if high.Priority <= low.Priority {
		t.Fatalf("research %d <= batch-lowprio %d", high.Priority, low.Priority)
	}
	t.Logf("research job priority %d, batch-lowprio job priority %d", high.Priority, low.Priority)
	h.advance(10 * time.Minute)
	h.expectState(high.ID, JobRunning, "")
	h.expectState(low.ID, JobPending, ReasonResources)
}
