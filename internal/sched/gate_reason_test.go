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
