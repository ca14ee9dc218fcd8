package sched

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestPropertyNoOversubscriptionNoLimitExceeded: over random clusters,
// random jobs and random run times, after every scheduling cycle no node
// holds more than it has (CPUs times the OverSubscribe factor, memory,
// GRES) and no running set of jobs exceeds a QOS MaxJobsPerUser or
// GrpTRES cpu limit.
func TestPropertyNoOversubscriptionNoLimitExceeded(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nodes := rapid.IntRange(1, 6).Draw(rt, "nodes")
		cpus := rapid.SampledFrom([]int{2, 4, 8}).Draw(rt, "cpus")
		gpus := rapid.IntRange(0, 4).Draw(rt, "gpus")
		share := rapid.SampledFrom([]string{"NO", "FORCE:2"}).Draw(rt, "oversubscribe")
		unit := rapid.SampledFrom([]string{"CR_CPU", "CR_Core_Memory", "CR_CPU_Memory"}).Draw(rt, "select")
		gres := ""
		if gpus > 0 {
			gres = fmt.Sprintf(" Gres=gpu:%d", gpus)
		}
		conf := fmt.Sprintf(`ClusterName=p
SlurmctldHost=h
SelectTypeParameters=%s
GresTypes=gpu
AccountingStorageEnforce=limits,qos
NodeName=n[1-%d] CPUs=%d RealMemory=%d%s
PartitionName=p Nodes=ALL Default=YES OverSubscribe=%s
`, unit, nodes, cpus, 1000*cpus, gres, share)
		h := newHarness(rt, conf)
		maxJobs := rapid.IntRange(1, 5).Draw(rt, "maxjobs")
		grpCPU := rapid.IntRange(1, nodes*cpus).Draw(rt, "grpcpu")
		h.sacctmgr(fmt.Sprintf(`sacctmgr -i add account a
sacctmgr -i add user u1 DefaultAccount=a
sacctmgr -i add user u2 DefaultAccount=a
sacctmgr -i modify qos normal set MaxJobsPerUser=%d GrpTRES=cpu=%d`, maxJobs, grpCPU))
		njobs := rapid.IntRange(1, 25).Draw(rt, "jobs")
		for i := 0; i < njobs; i++ {
			user := rapid.SampledFrom([]string{"u1", "u2"}).Draw(rt, "user")
			opts := []string{fmt.Sprintf("-n %d", rapid.IntRange(1, cpus).Draw(rt, "n")),
				fmt.Sprintf("--time=%d", rapid.IntRange(1, 60).Draw(rt, "time")),
				fmt.Sprintf("--run=%d", rapid.IntRange(1, 60).Draw(rt, "run"))}
			if n := rapid.IntRange(0, 2).Draw(rt, "N"); n > 0 {
				opts = append(opts, fmt.Sprintf("--nodes=%d", n))
			}
			if gpus > 0 && rapid.Bool().Draw(rt, "gpu") {
				opts = append(opts, fmt.Sprintf("--gres=gpu:%d", rapid.IntRange(1, gpus).Draw(rt, "g")))
			}
			if rapid.Bool().Draw(rt, "mem") {
				opts = append(opts, fmt.Sprintf("--mem=%d", rapid.IntRange(1, 1000*cpus).Draw(rt, "memv")))
			}
			if rapid.IntRange(0, 9).Draw(rt, "excl") == 0 {
				opts = append(opts, "--exclusive")
			}
			if _, err := h.submit(user, strings.Join(opts, " ")); err != nil {
				continue // rejected requests are fine; accepted ones must run safely
			}
			checkInvariants(rt, h, maxJobs, grpCPU)
			h.advance(time.Duration(rapid.IntRange(0, 20).Draw(rt, "wait")) * time.Minute)
			checkInvariants(rt, h, maxJobs, grpCPU)
		}
		h.advance(48 * time.Hour)
		checkInvariants(rt, h, maxJobs, grpCPU)
	})
}

func checkInvariants(t *rapid.T, h *harness, maxJobs, grpCPU int) {
	cl := h.st.Cluster
	n := len(cl.Nodes)
	cpu := make([]int32, n)
	mem := make([]int64, n)
	gres := make([]int64, n*len(cl.GresKinds))
	perUser := map[string]int{}
	totalCPU := 0
	for _, j := range h.st.Jobs() {
		if !isActive(j) {
			continue
		}
		if j.State.Base() == JobRunning {
			perUser[j.User]++
		}
		for s, ni := range j.Alloc.Nodes {
			if j.State.Base() == JobRunning {
				cpu[ni] += j.Alloc.CPUs[s]
				totalCPU += int(j.Alloc.CPUs[s])
			}
			mem[ni] += j.Alloc.Mem[s]
		}
		for _, g := range j.Alloc.Gres {
			gres[int(j.Alloc.Nodes[g.Slot])*len(cl.GresKinds)+int(g.Kind)] += g.Count
		}
	}
	for i := range cl.Nodes {
		nd := &cl.Nodes[i]
		factor := int32(1)
		if p := &cl.Partitions[0]; p.OverSubscribe.Mode == OverSubscribeForce {
			factor = p.OverSubscribe.Count
		}
		if cpu[i] > nd.CPUs*factor || cpu[i] != nd.AllocCPUs {
			t.Fatalf("node %s: %d CPUs held (node says %d) of %d x%d", nd.Name, cpu[i], nd.AllocCPUs, nd.CPUs, factor)
		}
		if h.st.Config.ConsumeMemory && mem[i] > nd.RealMemory {
			t.Fatalf("node %s: %d MB held of %d", nd.Name, mem[i], nd.RealMemory)
		}
		for k := range cl.GresKinds {
			if g := gres[i*len(cl.GresKinds)+k]; g > nd.Gres[k] || g != nd.AllocGres[k] {
				t.Fatalf("node %s: %d GRES held of %d", nd.Name, g, nd.Gres[k])
			}
		}
	}
	for u, c := range perUser {
		if c > maxJobs {
			t.Fatalf("user %s runs %d jobs, MaxJobsPerUser=%d", u, c, maxJobs)
		}
	}
	if totalCPU > grpCPU {
		t.Fatalf("%d CPUs running, GrpTRES cpu=%d", totalCPU, grpCPU)
	}
}
