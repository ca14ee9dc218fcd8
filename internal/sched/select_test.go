package sched

import (
	"slices"
	"testing"
)

// gpuConf is a small GPU cluster: two a100 nodes with 8 GPUs, one with 4
// GPUs (Weight 1 means it is tried first), one untyped 2-GPU node.
const gpuConf = `ClusterName=g
SlurmctldHost=h
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
NodeName=a[1-2] CPUs=32 ThreadsPerCore=2 RealMemory=64000 Gres=gpu:a100:8 Weight=10
NodeName=small1 CPUs=16 RealMemory=32000 Gres=gpu:a100:4 Weight=10
NodeName=plain1 CPUs=8 RealMemory=16000 Gres=gpu:2 Weight=20
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE DefMemPerCPU=1000
`

func TestSelection(t *testing.T) {
	cases := []struct {
		name      string
		conf      string
		before    []string // jobs started first (options)
		opts      string
		wantNodes []string
		wantCPUs  []int32
		wantMem   []int64
	}{
		{name: "one GPU on the smallest node of the lowest weight", conf: gpuConf, opts: "-n 1 --gres=gpu:a100:1 --mem=100",
			wantNodes: []string{"small1"}, wantCPUs: []int32{1}, wantMem: []int64{100}},
		{name: "best fit keeps the 8-GPU nodes whole", conf: gpuConf, opts: "--gres=gpu:4",
			wantNodes: []string{"small1"}, wantCPUs: []int32{1}, wantMem: []int64{1000}},
		{name: "typed request only on a100 nodes, CR_Core rounds to whole cores", conf: gpuConf, opts: "--gres=gpu:a100:8 --mem=10",
			wantNodes: []string{"a1"}, wantCPUs: []int32{2}, wantMem: []int64{10}},
		{name: "lower weight wins over a better fit", conf: gpuConf, opts: "--gres=gpu:2 --mem=10",
			wantNodes: []string{"small1"}, wantCPUs: []int32{1}, wantMem: []int64{10}},
		{name: "untyped request may use any type, best fit after weight", conf: gpuConf,
			before: []string{"--gres=gpu:a100:4 --mem=10"}, opts: "--gres=gpu:8 --mem=10",
			wantNodes: []string{"a1"}, wantCPUs: []int32{2}, wantMem: []int64{10}},
		{name: "mem per cpu default of the partition", conf: gpuConf, opts: "-n 4 -w a2",
			wantNodes: []string{"a2"}, wantCPUs: []int32{4}, wantMem: []int64{4000}},
		{name: "multi-node with gres per node", conf: gpuConf, opts: "--nodes=2 --gres=gpu:a100:8 --mem=10",
			wantNodes: []string{"a1", "a2"}, wantCPUs: []int32{2, 2}, wantMem: []int64{10, 10}},
		{name: "exclusive takes the whole node", conf: gpuConf, opts: "--exclusive --nodelist=a1",
			wantNodes: []string{"a1"}, wantCPUs: []int32{32}, wantMem: []int64{32000}},
		{name: "tasks spread over nodes", conf: cpuConf(4, 4, ""), opts: "-n 10",
			wantNodes: []string{"node1", "node2", "node3"}, wantCPUs: []int32{4, 4, 2}},
		{name: "ntasks-per-node", conf: cpuConf(4, 4, ""), opts: "--nodes=2 --ntasks-per-node=3 -c 1",
			wantNodes: []string{"node1", "node2"}, wantCPUs: []int32{3, 3}},
		{name: "constraint", conf: cpuConf(2, 4, "NodeName=f1 CPUs=4 RealMemory=100 Features=ib,fast\nPartitionName=all Nodes=ALL"),
			opts: "-p all -C ib&fast", wantNodes: []string{"f1"}, wantCPUs: []int32{1}},
		{name: "whole-node memory by default with CR_Core_Memory", conf: `ClusterName=m
SlurmctldHost=h
SelectTypeParameters=CR_Core_Memory
NodeName=m[1-2] CPUs=8 RealMemory=8000
PartitionName=p Nodes=ALL Default=YES`, before: []string{"-n 1"}, opts: "-n 1",
			wantNodes: []string{"m2"}, wantCPUs: []int32{1}, wantMem: []int64{8000}},
		{name: "OverSubscribe=FORCE:2 shares CPUs", conf: `ClusterName=o
SlurmctldHost=h
SelectTypeParameters=CR_CPU
NodeName=o1 CPUs=4 RealMemory=8000
PartitionName=p Nodes=ALL Default=YES OverSubscribe=FORCE:2`, before: []string{"-n 4"}, opts: "-n 4",
			wantNodes: []string{"o1"}, wantCPUs: []int32{4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.conf)
			for _, b := range c.before {
				h.expectState(h.mustSubmit("u", b+" --time=10").ID, JobRunning, "")
			}
			j := h.mustSubmit("u", c.opts+" --time=10")
			h.expectState(j.ID, JobRunning, "")
			if got := h.nodes(j.ID); !slices.Equal(got, c.wantNodes) {
				t.Fatalf("nodes %v, want %v", got, c.wantNodes)
			}
			if !slices.Equal(j.Alloc.CPUs, c.wantCPUs) {
				t.Fatalf("cpus %v, want %v", j.Alloc.CPUs, c.wantCPUs)
			}
			if c.wantMem != nil && !slices.Equal(j.Alloc.Mem, c.wantMem) {
				t.Fatalf("mem %v, want %v", j.Alloc.Mem, c.wantMem)
			}
		})
	}
}

// TestNoSharingWithoutOverSubscribe: a node whose CPUs are taken is not
// used again; a waiting job gets Resources.
func TestNoSharingWithoutOverSubscribe(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, ""))
	a := h.mustSubmit("u", "-n 4 --time=10")
	b := h.mustSubmit("u", "-n 1 --time=10")
	h.expectState(a.ID, JobRunning, "")
	h.expectState(b.ID, JobPending, ReasonResources)
	n := &h.st.Cluster.Nodes[0]
	if n.State.Base() != NodeAllocated || n.State.Short() != "alloc" {
		t.Fatalf("node state %s", n.State)
	}
}

func TestNodeStates(t *testing.T) {
	h := newHarness(t, cpuConf(2, 4, ""))
	if err := h.st.SetNodeState("node1", NodeIdle|NodeFlagDrain, "maintenance", h.now); err != nil {
		t.Fatal(err)
	}
	j := h.mustSubmit("u", "-n 1 --time=10")
	if got := h.nodes(j.ID); !slices.Equal(got, []string{"node2"}) {
		t.Fatalf("job placed on %v, a drained node must take no job", got)
	}
	if s := h.st.Cluster.Nodes[0].State.Short(); s != "drain" {
		t.Fatalf("drained idle node shows %q", s)
	}
	if s := h.st.Cluster.Nodes[1].State.Short(); s != "mix" {
		t.Fatalf("half-used node shows %q", s)
	}
	_ = h.st.SetNodeState("node2", NodeMixed|NodeFlagDrain, "", h.now)
	if s := h.st.Cluster.Nodes[1].State.Short(); s != "drng" {
		t.Fatalf("draining busy node shows %q", s)
	}
	_ = h.st.SetNodeState("node1", NodeDown, "dead", h.now)
	_ = h.st.SetNodeState("node2", NodeDown, "dead", h.now)
	k := h.mustSubmit("u", "-n 1 --time=10")
	h.expectState(k.ID, JobPending, ReasonNodesDown)
}

// TestCapacityReasons: Slurm 24.11 (oracle, node-states): a job needing
// more nodes than are neither DOWN nor drained (a draining node counts)
// pends on "Nodes required for job are DOWN, DRAINED or reserved for jobs
// in higher priority partitions"; one needing more usable nodes or CPUs
// than the partition has, even idle, on "ReqNodeNotAvail, May be
// reserved for other job"; one that fits the idle usable nodes on
// Resources.
func TestCapacityReasons(t *testing.T) {
	h := noBackfill(newHarness(t, cpuConf(3, 4, "")))
	run := h.mustSubmit("u", "-w node1 -n 2 --time=10")
	_ = h.st.SetNodeState("node1", NodeMixed|NodeFlagDrain, "disk check", h.now) // draining
	_ = h.st.SetNodeState("node3", NodeDown, "broken", h.now)
	two := h.mustSubmit("u", "-N 2 --time=10")
	three := h.mustSubmit("u", "-N 3 --time=10")
	cpus := h.mustSubmit("u", "-n 6 --time=10")
	h.mustSubmit("u", "-n 4 --time=10") // fills node2
	fits := h.mustSubmit("u", "-n 3 --time=10")
	h.schedule()
	for _, c := range []struct {
		j      *Job
		reason Reason
		desc   string
	}{
		{two, ReasonReqNodeNotAvail, "ReqNodeNotAvail, May be reserved for other job"},
		{three, ReasonNodesDown, "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"},
		{cpus, ReasonReqNodeNotAvail, "ReqNodeNotAvail, May be reserved for other job"},
		{fits, ReasonResources, ""},
	} {
		j := h.job(c.j.ID)
		if j.State.Base() != JobPending || j.Reason != c.reason || j.StateDesc != c.desc {
			t.Errorf("job %d: %s %s %q, want PENDING %s %q", j.ID, j.State, j.Reason, j.StateDesc, c.reason, c.desc)
		}
	}
	h.expectState(run.ID, JobRunning, "")
}

// TestMultiNodeNeedsRoomyNodes: when the best-fitting nodes are too small
// together, the job takes roomier ones rather than pending.
func TestMultiNodeNeedsRoomyNodes(t *testing.T) {
	h := newHarness(t, cpuConf(4, 8, ""))
	h.mustSubmit("u", "-n 7 -w node1 --time=10")
	h.mustSubmit("u", "-n 7 -w node2 --time=10")
	j := h.mustSubmit("u", "--nodes=2 -n 12 --time=10")
	h.expectState(j.ID, JobRunning, "")
	if got := h.nodes(j.ID); !slices.Equal(got, []string{"node3", "node4"}) {
		t.Fatalf("nodes %v", got)
	}
}

// TestGPUOptions: --gpus-per-task, --cpus-per-gpu and --mem-per-gpu size
// the per-node request from the GPUs.
func TestGPUOptions(t *testing.T) {
	h := newHarness(t, gpuConf)
	j := h.queue("u", "-n 2 --gpus-per-task=2 --cpus-per-gpu=3 --mem-per-gpu=1000 --time=10")
	h.schedule()
	h.expectState(j.ID, JobRunning, "")
	var gpus int64
	for _, g := range j.Alloc.Gres {
		gpus += g.Count
	}
	if len(j.Alloc.Nodes) != 1 || gpus != 4 || j.Alloc.CPUs[0] != 12 || j.Alloc.Mem[0] != 4000 {
		t.Fatalf("nodes %v gpus %d cpus %v mem %v, want 1 node, 4 GPUs, 12 CPUs, 4000 MB",
			h.nodes(j.ID), gpus, j.Alloc.CPUs, j.Alloc.Mem)
	}
}

// TestExclusiveUser: in an ExclusiveUser partition a node runs jobs of
// one user at a time; the same user may share it.
func TestExclusiveUser(t *testing.T) {
	h := newHarness(t, `ClusterName=x
SlurmctldHost=h
SelectTypeParameters=CR_CPU
NodeName=n[1-2] CPUs=4 RealMemory=1000
PartitionName=p Nodes=ALL Default=YES ExclusiveUser=YES
`)
	a := h.mustSubmit("alice", "-n 1 --time=10")
	a2 := h.mustSubmit("alice", "-n 1 --time=10")
	b := h.mustSubmit("bob", "-n 1 --time=10")
	c := h.mustSubmit("carol", "-n 1 --time=10")
	if !slices.Equal(h.nodes(a.ID), h.nodes(a2.ID)) {
		t.Fatalf("alice's jobs on %v and %v", h.nodes(a.ID), h.nodes(a2.ID))
	}
	if slices.Equal(h.nodes(a.ID), h.nodes(b.ID)) {
		t.Fatalf("bob shares alice's node %v", h.nodes(b.ID))
	}
	h.expectState(c.ID, JobPending, ReasonResources)
}

// TestTaskAndGPUSplit: how a multi-node job's CPUs and --gpus total fall
// on its nodes, as the oracle (Slurm 24.11, four idle nodes of 8 CPUs and
// 4 GPUs, scontrol show job -d) placed them.
func TestTaskAndGPUSplit(t *testing.T) {
	conf := `ClusterName=o
SlurmctldHost=h
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
NodeName=n[1-4] CPUs=8 RealMemory=64000 Gres=gpu:4
PartitionName=main Nodes=ALL Default=YES DefMemPerCPU=1000
`
	cases := []struct {
		opts     string
		wantCPUs []int32
		wantGPUs []int64
	}{
		{"-N 2 -n 12", []int32{8, 4}, []int64{0, 0}},
		{"-N 2 -n 5", []int32{4, 1}, []int64{0, 0}},
		{"-N 3 -n 10", []int32{8, 1, 1}, []int64{0, 0, 0}},
		{"-N 2 -n 9", []int32{8, 1}, []int64{0, 0}},
		{"-N 2 -n 12 --gpus=2", []int32{6, 6}, []int64{1, 1}},
		{"-n 12 --gpus=2", []int32{6, 6}, []int64{1, 1}},
		{"-n 12 --gpus=3", []int32{8, 4}, []int64{2, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.opts, func(t *testing.T) {
			h := newHarness(t, conf)
			j := h.mustSubmit("u", tc.opts+" --time=10")
			h.expectState(j.ID, JobRunning, "")
			gpus := make([]int64, len(j.Alloc.Nodes))
			for _, g := range j.Alloc.Gres {
				gpus[g.Slot] += g.Count
			}
			if !slices.Equal(j.Alloc.CPUs, tc.wantCPUs) || !slices.Equal(gpus, tc.wantGPUs) {
				t.Fatalf("CPUs %v GPUs %v on %v, want CPUs %v GPUs %v", j.Alloc.CPUs, gpus, h.nodes(j.ID), tc.wantCPUs, tc.wantGPUs)
			}
		})
	}
}
