package sched

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// classConf has kinds of identical nodes (1-CPU ones, 4-CPU ones with
// more or less memory, 4-CPU ones with GPUs) in runs that meet inside a
// 64-node word, so that class runs break on other classes of as many
// CPUs and on busy nodes.
const classConf = `ClusterName=test
SlurmctldHost=head
SchedulerType=sched/builtin
SelectTypeParameters=CR_CPU_Memory
GresTypes=gpu
NodeName=a[1-40] CPUs=1 RealMemory=1000
NodeName=b[1-30] CPUs=4 RealMemory=4000
NodeName=c[1-20] CPUs=4 RealMemory=1000
NodeName=a[41-100] CPUs=1 RealMemory=1000
NodeName=g[1-6] CPUs=4 RealMemory=4000 Gres=gpu:2
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=small Nodes=a[1-100] MaxTime=INFINITE State=UP
`

// TestClassFitSameAsNodeByNode: on random occupancies of a cluster of
// several node kinds, multi-node selection that decides once per class
// of idle identical nodes (classes.go), or at once when every free node
// of the partition is such a node (fitTwins, the 1-CPU partition with
// busy nodes full), picks the same allocation as the node-by-node
// selection, for random CPU-only shapes.
func TestClassFitSameAsNodeByNode(t *testing.T) {
	defer func() { classFitOff = false }()
	r := rand.New(rand.NewSource(5))
	runs, twins := 0, 0
	for _, conf := range []string{classConf, cpuConf(150, 4, "")} {
		h := newHarness(t, conf)
		cl, cfg := h.st.Cluster, h.st.Config
		sel := newSelector(cl, &cfg)
		for trial := 0; trial < 600; trial++ {
			mask := cl.Partitions[r.Intn(len(cl.Partitions))].Nodes
			av := randomOccupancy(r, cl)
			if first, _ := av.twinRun(mask); first >= 0 {
				twins++
			}
			s := randomCPUShape(r)
			classFitOff = true
			want, wok := sel.fitMany(&Job{}, &s, av, mask)
			classFitOff = false
			got, gok := sel.fitMany(&Job{}, &s, av, mask)
			if wok != gok || !reflect.DeepEqual(want, got) {
				t.Fatalf("trial %d, shape %+v:\nnode by node %v %+v\nby class     %v %+v", trial, s, wok, want, gok, got)
			}
			if gok {
				runs++
			}
		}
	}
	if runs == 0 || twins == 0 {
		t.Fatalf("%d trials placed their job, %d on twins only: the test checks too little", runs, twins)
	}
	t.Logf("%d placements equal, %d trials on twins only", runs, twins)
}

// randomOccupancy returns a free view of cl where a random share of the
// nodes hold some CPUs and memory (or, half the time, all their CPUs).
func randomOccupancy(r *rand.Rand, cl *Cluster) *Avail {
	av := NewAvail(cl)
	busy, full := r.Float64(), r.Intn(2) == 0
	for i := range av.CPUs {
		if r.Float64() < busy {
			av.Jobs[i] = 1
			av.CPUs[i] = int32(r.Intn(int(cl.Nodes[i].CPUs) + 1))
			av.Mem[i] = int64(r.Intn(int(cl.Nodes[i].RealMemory) + 1))
			if full {
				av.CPUs[i] = 0
			}
			av.updateFree(i)
		}
	}
	return av
}

// randomCPUShape draws a CPU-only multi-node request.
func randomCPUShape(r *rand.Rand) shape {
	s := shape{minNodes: int32(1 + r.Intn(8)), tasks: int32(1 + r.Intn(150)), cpusPerTask: int32(1 + r.Intn(2)),
		share: 1, memPerCPU: int64(r.Intn(3) * 400)}
	s.maxNodes = max(s.minNodes, s.tasks)
	if r.Intn(3) == 0 {
		s.tasksPerNode = int32(1 + r.Intn(4))
		s.minNodes = max(s.minNodes, (s.tasks+s.tasksPerNode-1)/s.tasksPerNode)
		s.maxNodes = s.minNodes
	}
	if r.Intn(4) == 0 {
		s.maxNodes = s.minNodes + int32(r.Intn(4)) // -N min-max
	}
	return s
}

// TestClassFitSameSchedules: two States driven by the same random
// submissions and ends on classConf, one selecting node by node, start
// the same jobs on the same nodes at the same times (with the free view
// refilled from the changed nodes, and the starts Apply confirms not
// refilled, see avail_confirm.go).
func TestClassFitSameSchedules(t *testing.T) {
	defer func() { classFitOff = false }()
	rapid.Check(t, func(rt *rapid.T) {
		plain, class := newHarness(t, classConf), newHarness(t, classConf)
		plain.st.Config.IncrementalQueue, class.st.Config.IncrementalQueue = true, true
		both := func(f func(h *harness)) {
			classFitOff = true
			f(plain)
			classFitOff = false
			f(class)
			sameJobs(rt, plain, class)
		}
		for s, steps := 0, rapid.IntRange(1, 50).Draw(rt, "steps"); s < steps; s++ {
			switch rapid.IntRange(0, 4).Draw(rt, "action") {
			case 0, 1, 2:
				opts := classJobOpts(rt)
				both(func(h *harness) {
					if _, err := h.submit("u", opts); err != nil {
						rt.Logf("%s: %v", opts, err)
					}
				})
			case 3:
				d := time.Duration(rapid.IntRange(1, 120).Draw(rt, "minutes")) * time.Minute
				both(func(h *harness) { h.advance(d) })
			case 4:
				id := JobID(rapid.IntRange(1, len(plain.st.Jobs())+1).Draw(rt, "cancel"))
				both(func(h *harness) { _ = h.st.Cancel(id, h.now); h.schedule() })
			}
		}
	})
}

// classJobOpts draws sbatch options for TestClassFitSameSchedules.
func classJobOpts(rt *rapid.T) string {
	n := rapid.IntRange(1, 120).Draw(rt, "n")
	opts := fmt.Sprintf("-n %d --time=%d --run=%d:00", n, rapid.IntRange(10, 90).Draw(rt, "limit"),
		rapid.IntRange(1, 90).Draw(rt, "run"))
	if rapid.Bool().Draw(rt, "N") {
		opts += fmt.Sprintf(" -N %d", rapid.IntRange(1, n).Draw(rt, "nodes"))
	}
	switch rapid.IntRange(0, 5).Draw(rt, "extra") {
	case 0:
		opts += " -p small"
	case 1:
		opts += " --mem-per-cpu=600"
	case 2:
		opts += " --ntasks-per-node=2"
	case 3:
		opts += " --gres=gpu:1"
	}
	return opts
}

// TestUnappliedStartRefilled: the free view's nodes of a start left out
// of the plan applied are refilled from the State at the next cycle,
// while those of the applied starts are not read again: the view equals
// a full fill.
func TestUnappliedStartRefilled(t *testing.T) {
	h := newHarness(t, cpuConf(8, 4, "SchedulerType=sched/builtin\n"))
	h.st.Config.IncrementalQueue = true
	h.queue("u", "-N 3 -n 12 --time=60") // the first cycle fills the view
	h.schedule()
	for i := 0; i < 6; i++ {
		h.queue("u", "-N 2 -n 6 --time=60")
	}
	p := Schedule(h.st, h.now, h.st.Config)
	if len(p.Starts) < 2 {
		t.Fatalf("%d starts: the test needs two", len(p.Starts))
	}
	p.Starts = p.Starts[:len(p.Starts)-1] // the last start is not applied
	h.st.Apply(&p)
	got := newCycle(h.st, h.now, h.st.Config).Avail
	want := NewAvail(h.st.Cluster)
	if !reflect.DeepEqual(got.CPUs, want.CPUs) || !reflect.DeepEqual(got.Mem, want.Mem) ||
		!reflect.DeepEqual(got.Jobs, want.Jobs) || !reflect.DeepEqual(got.Free, want.Free) ||
		!reflect.DeepEqual(got.byFree, want.byFree) || !reflect.DeepEqual(got.pristine, want.pristine) {
		t.Fatalf("refilled view: free CPUs %v, full fill %v", got.CPUs, want.CPUs)
	}
	if len(got.touched) != 0 || got.stamp == nil {
		t.Fatal("the view was not refilled")
	}
}

// TestEndedJobReleasedInView: an ended job's resources go back to the
// kept free view directly (avail_confirm.go); the next cycle's view
// equals a full fill, a draining node that fell idle included (no longer
// alive, so refilled).
func TestEndedJobReleasedInView(t *testing.T) {
	h := newHarness(t, cpuConf(4, 2, "SchedulerType=sched/builtin\n"))
	h.st.Config.IncrementalQueue = true
	j := h.queue("u", "-N 3 -n 6 --time=60")
	h.schedule()
	if err := h.st.SetNodeState("node1", NodeIdle|NodeFlagDrain, "test", h.now); err != nil {
		t.Fatal(err)
	}
	h.schedule() // a full fill (node change), then the view is kept
	if err := h.st.End(j.ID, JobCompleted, 0, h.now); err != nil {
		t.Fatal(err)
	}
	if len(h.st.availDirty) != 1 {
		t.Fatalf("dirty nodes %v: want the draining node only", h.st.availDirty)
	}
	got := newCycle(h.st, h.now, h.st.Config).Avail
	want := NewAvail(h.st.Cluster)
	if !reflect.DeepEqual(got.CPUs, want.CPUs) || !reflect.DeepEqual(got.Mem, want.Mem) ||
		!reflect.DeepEqual(got.Jobs, want.Jobs) || !reflect.DeepEqual(got.Free, want.Free) ||
		!reflect.DeepEqual(got.byFree, want.byFree) || !reflect.DeepEqual(got.pristine, want.pristine) ||
		!reflect.DeepEqual(got.alive, want.alive) || !reflect.DeepEqual(got.Usable, want.Usable) {
		t.Fatalf("view after the end: free CPUs %v alive %v, full fill %v alive %v", got.CPUs, got.alive, want.CPUs, want.alive)
	}
}

// TestWordEditsSameAsNodeByNode: taking and releasing random
// allocations (Avail.change, which writes each 64-node word once) leaves
// the free set, the free-CPU buckets and the pristine set as setting
// each node alone does.
func TestWordEditsSameAsNodeByNode(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	h := newHarness(t, cpuConf(300, 4, ""))
	cl := h.st.Cluster
	av := NewAvail(cl)
	var held []Alloc
	for step := 0; step < 500; step++ {
		if len(held) > 0 && r.Intn(2) == 0 {
			k := r.Intn(len(held))
			av.Release(&held[k])
			held = append(held[:k], held[k+1:]...)
		} else if al := randomAlloc(r, av); len(al.Nodes) > 0 {
			av.Take(&al)
			held = append(held, al)
		}
		ref := NewAvail(cl)
		copy(ref.CPUs, av.CPUs)
		copy(ref.Mem, av.Mem)
		copy(ref.Jobs, av.Jobs)
		for i := range ref.CPUs {
			ref.updateFree(i)
		}
		if !reflect.DeepEqual(av.Free, ref.Free) || !reflect.DeepEqual(av.byFree, ref.byFree) ||
			!reflect.DeepEqual(av.bucketOf, ref.bucketOf) || !reflect.DeepEqual(av.pristine, ref.pristine) {
			t.Fatalf("step %d: sets differ from node-by-node updates", step)
		}
	}
}

// randomAlloc draws an allocation of some free CPUs and memory of random
// free nodes of av, in node order.
func randomAlloc(r *rand.Rand, av *Avail) Alloc {
	var al Alloc
	for i := range av.CPUs {
		if av.CPUs[i] > 0 && r.Intn(3) == 0 {
			al.Nodes = append(al.Nodes, int32(i))
			al.CPUs = append(al.CPUs, int32(1+r.Intn(int(av.CPUs[i]))))
			al.Mem = append(al.Mem, int64(r.Intn(100)))
		}
	}
	return al
}
