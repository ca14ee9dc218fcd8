package sched

import "testing"

// TestPartitionGateDescriptions: what squeue shows for jobs a partition
// keeps pending, as Slurm 24.11 shows it (oracle, partition-access and
// node-states scenarios): an account not allowed is PartitionConfig, a
// QOS not allowed names the partition's list, a partition without a
// usable node has the reason's text with spaces, and a job too big for
// the nodes left up is "ReqNodeNotAvail, May be reserved for other job".
func TestPartitionGateDescriptions(t *testing.T) {
	const extra = `AccountingStorageEnforce=associations,limits,qos
PartitionName=resonly Nodes=node[1-2] AllowAccounts=research
PartitionName=qosonly Nodes=node[1-2] AllowQos=normal
`
	h := newHarness(t, cpuConf(2, 4, extra))
	h.sacctmgr(`sacctmgr -i add account research
sacctmgr -i add account batch
sacctmgr -i add qos other
sacctmgr -i add user alice Account=research QOS=normal,other
sacctmgr -i add user bob Account=batch`)
	cases := []struct {
		user, opts string
		reason     Reason
		desc       string
	}{
		{"bob", "-p resonly --time=10", ReasonPartitionConfig, ""},
		{"alice", "-p qosonly --qos=other --time=10", ReasonQOSNotAllowed,
			"Job's QOS not permitted to use this partition (qosonly allows normal not other)"},
	}
	for _, c := range cases {
		j := h.mustSubmit(c.user, c.opts)
		h.expectState(j.ID, JobPending, c.reason)
		if got := h.job(j.ID).StateDesc; got != c.desc {
			t.Errorf("%s %s: description %q, want %q", c.user, c.opts, got, c.desc)
		}
	}
}

func TestNodeUnavailableDescriptions(t *testing.T) {
	h := newHarness(t, cpuConf(2, 4, ""))
	if err := h.st.SetNodeState("node1", NodeIdle|NodeFlagDrain, "disk check", h.now); err != nil {
		t.Fatal(err)
	}
	// Oracle (2 nodes): n1 drained and idle, sbatch -N2 pends on "Nodes
	// required for job are DOWN, DRAINED or reserved for jobs in higher
	// priority partitions", and still after n2 goes down.
	want := "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
	j := h.mustSubmit("u", "-N 2 --time=10")
	h.expectState(j.ID, JobPending, ReasonNodesDown)
	if got := h.job(j.ID).StateDesc; got != want {
		t.Errorf("one node drained: %q, want %q", got, want)
	}
	small := h.mustSubmit("u", "-N 1 --time=10")
	h.expectState(small.ID, JobRunning, "") // the partition is not blocked
	_ = h.st.SetNodeState("node2", NodeDown, "broken", h.now)
	h.schedule()
	h.expectState(j.ID, JobPending, ReasonNodesDown)
	if got := h.job(j.ID).StateDesc; got != want {
		t.Errorf("no node up: %q, want %q", got, want)
	}
}

// TestUnusableDescRemembered: the answer "could it ever run on the nodes
// left up" is remembered for a blocked job (everFitCache) but asked again
// when the job is updated or the nodes left up change. Nodes 1 and 2
// have 2 CPUs, node 3 has 8 and is draining; every node is busy. A job
// of four tasks on one node can never run on nodes 1 or 2
// (ReqNodeNotAvail); updated to two tasks it waits for Resources; back
// to four it cannot run again; with node 3 resumed it waits for
// Resources.
func TestUnusableDescRemembered(t *testing.T) {
	h := newHarness(t, `ClusterName=test
SlurmctldHost=head
SelectTypeParameters=CR_CPU
NodeName=node[1-2] CPUs=2 RealMemory=16000
NodeName=node3 CPUs=8 RealMemory=16000
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`)
	for _, n := range []string{"node1", "node2", "node3"} {
		h.mustSubmit("u", "-w "+n+" --exclusive --time=1:00:00")
	}
	if err := h.st.SetNodeState("node3", NodeAllocated|NodeFlagDrain, "maint", h.now); err != nil {
		t.Fatal(err)
	}
	j := h.mustSubmit("u", "-N 1 -n 4 --time=10")
	h.schedule()
	h.expectState(j.ID, JobPending, ReasonReqNodeNotAvail)
	h.schedule() // remembered
	h.expectState(j.ID, JobPending, ReasonReqNodeNotAvail)
	update := func(tasks int32) {
		if err := h.st.Update(j.ID, JobUpdate{NTasks: &tasks}, true, h.now); err != nil {
			t.Fatal(err)
		}
		h.schedule()
	}
	update(2)
	h.expectState(j.ID, JobPending, ReasonResources)
	update(4)
	h.expectState(j.ID, JobPending, ReasonReqNodeNotAvail)
	if err := h.st.SetNodeState("node3", NodeAllocated, "", h.now); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	h.expectState(j.ID, JobPending, ReasonResources)
}

// TestEverFitRememberedByShape: the answer "could this request ever run"
// is remembered by job shape (everFitCache), for submissions as for the
// blocked job of a pass, and asked again when a partition changes. Three
// 4-CPU nodes: -N 2 is accepted, -N 4 refused, -N 2 accepted again (a
// remembered answer per shape); once batch keeps only node1, -N 2 is
// refused.
func TestEverFitRememberedByShape(t *testing.T) {
	h := newHarness(t, `ClusterName=test
SlurmctldHost=head
SelectTypeParameters=CR_CPU
NodeName=node[1-3] CPUs=4 RealMemory=16000
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`)
	for _, c := range []struct {
		opts string
		ok   bool
	}{{"-N 2 --time=10", true}, {"-N 4 --time=10", false}, {"-N 2 --time=10", true}, {"-N 1 -n 4 --time=10", true}, {"-N 1 -n 5 --time=10", false}} {
		if _, err := h.submit("u", c.opts); (err == nil) != c.ok {
			t.Fatalf("%s: err %v, want accepted %v", c.opts, err, c.ok)
		}
	}
	p := h.st.Cluster.Partitions[0]
	p.NodeList = []int32{0}
	if err := h.st.ReplacePartition(p); err != nil {
		t.Fatal(err)
	}
	if _, err := h.submit("u", "-N 2 --time=10"); err == nil {
		t.Fatal("-N 2 on a one-node partition accepted: a stale remembered answer")
	}
}
