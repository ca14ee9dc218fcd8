package sched

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/resv"
	"pgregory.net/rapid"
)

// TestPropertyReservationsRespected: over random clusters, random
// reservations (one-off and DAILY, MAINT, FLEX, MAGNETIC, OVERLAP, denied
// users) and random jobs, some asking for a reservation, after every
// scheduling cycle no running job's planned run [start, start+limit)
// meets a window of a reservation on a node it holds unless the job may
// run there (it asked for that reservation, or the reservation is
// MAGNETIC and admits it); in particular no job runs into a MAINT window
// that is not its own. No node is oversubscribed either.
func TestPropertyReservationsRespected(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nodes := rapid.IntRange(2, 6).Draw(rt, "nodes")
		conf := fmt.Sprintf(`ClusterName=p
SlurmctldHost=h
SelectTypeParameters=CR_CPU
Licenses=lic:3
NodeName=n[1-%d] CPUs=2 RealMemory=1000
PartitionName=p Nodes=ALL Default=YES
`, nodes)
		h := newHarness(rt, conf)
		var names []string
		nres := rapid.IntRange(1, 4).Draw(rt, "reservations")
		for i := 0; i < nres; i++ {
			lo := rapid.IntRange(1, nodes).Draw(rt, "lo")
			hi := rapid.IntRange(lo, nodes).Draw(rt, "hi")
			flags := []string{}
			for _, f := range []string{"MAINT", "FLEX", "MAGNETIC", "DAILY", "OVERLAP"} {
				if rapid.IntRange(0, 3).Draw(rt, "flag") == 0 {
					flags = append(flags, f)
				}
			}
			users := rapid.SampledFrom([]string{"u1", "u2", "u1,u2", "-u3"}).Draw(rt, "users")
			line := fmt.Sprintf("create reservation ReservationName=r%d StartTime=now+%dminutes Duration=%d Nodes=n[%d-%d] Users=%s",
				i, rapid.IntRange(0, 300).Draw(rt, "start"), rapid.IntRange(10, 240).Draw(rt, "duration"), lo, hi, users)
			if len(flags) > 0 {
				line += " Flags=" + strings.Join(flags, ",")
			}
			if _, err := h.scontrol(line); err == nil {
				names = append(names, fmt.Sprintf("r%d", i))
			}
		}
		njobs := rapid.IntRange(1, 25).Draw(rt, "jobs")
		for i := 0; i < njobs; i++ {
			user := rapid.SampledFrom([]string{"u1", "u2", "u3"}).Draw(rt, "user")
			opts := []string{fmt.Sprintf("-n %d", rapid.IntRange(1, 2).Draw(rt, "n")),
				fmt.Sprintf("--run=%d", rapid.IntRange(1, 300).Draw(rt, "run"))}
			if rapid.IntRange(0, 5).Draw(rt, "unlimited") > 0 {
				opts = append(opts, fmt.Sprintf("--time=%d", rapid.IntRange(1, 300).Draw(rt, "time")))
			}
			if n := rapid.IntRange(0, 2).Draw(rt, "N"); n > 0 {
				opts = append(opts, fmt.Sprintf("-N %d", n))
			}
			if len(names) > 0 && rapid.Bool().Draw(rt, "inresv") {
				opts = append(opts, "--reservation="+rapid.SampledFrom(names).Draw(rt, "resv"))
			}
			if rapid.IntRange(0, 3).Draw(rt, "lic") == 0 {
				opts = append(opts, fmt.Sprintf("-L lic:%d", rapid.IntRange(1, 3).Draw(rt, "licn")))
			}
			if _, err := h.submitRL(user, strings.Join(opts, " ")); err != nil {
				continue
			}
			checkReservations(rt, h)
			h.advance(time.Duration(rapid.IntRange(0, 60).Draw(rt, "wait")) * time.Minute)
			checkReservations(rt, h)
		}
		for step := 0; step < 12; step++ {
			h.advance(time.Hour)
			checkReservations(rt, h)
		}
	})
}

// checkReservations asserts the reservation invariant on every running
// job, plus license and CPU accounting.
func checkReservations(t *rapid.T, h *harness) {
	st := h.st
	cpu := make([]int32, len(st.Cluster.Nodes))
	var lic int64
	for _, j := range st.Jobs() {
		if !isActive(j) {
			continue
		}
		for s, ni := range j.Alloc.Nodes {
			cpu[ni] += j.Alloc.CPUs[s]
		}
		for _, l := range j.Req.Licenses {
			lic += l.Count
		}
		end := j.EndTime
		if end.IsZero() {
			end = j.StartTime.Add(100 * 365 * 24 * time.Hour)
		}
		for _, e := range st.resvs.list {
			if mayUse(j, e) || !nodesMeet(j.Alloc.Nodes, e.nodes) {
				continue
			}
			if w := e.R.Occurrences(j.StartTime, end, 1); len(w) > 0 {
				t.Fatalf("job %d (%s, resv %q) on %v runs %v-%v into reservation %s window %v-%v (flags %s)", j.ID, j.User,
					j.Req.Reservation, st.Cluster.NodeNames(j.Alloc.Nodes), j.StartTime, end, e.R.Name, w[0].Start, w[0].End, e.R.Flags)
			}
		}
	}
	for i, n := range st.Cluster.Nodes {
		if cpu[i] > n.CPUs {
			t.Fatalf("node %s oversubscribed: %d of %d CPUs", n.Name, cpu[i], n.CPUs)
		}
	}
	if lic > 3 {
		t.Fatalf("%d licenses held of 3", lic)
	}
}

// mayUse reports whether job j may run in reservation e: it asked for it,
// or e is MAGNETIC and admits it.
func mayUse(j *Job, e *resvEntry) bool {
	if slices.Contains(resvNames(j.Req.Reservation), e.R.Name) {
		return true
	}
	return j.Req.Reservation == "" && e.R.Flags&resv.FlagMagnetic != 0 && e.R.Allows(j.User, j.Account, []string{j.Group})
}

func nodesMeet(nodes []int32, s NodeSet) bool {
	for _, n := range nodes {
		if s.Has(int(n)) {
			return true
		}
	}
	return false
}

// TestReservationRestore: a reservation restored from stored state (the
// controller's recovery) schedules like the original.
func TestReservationRestore(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=keep StartTime=now Duration=60 Nodes=node[1-3] Users=alice")
	saved := h.st.Reservation("keep").Clone()
	h2 := newHarness(t, resvConf)
	if err := h2.st.RestoreReservation(saved); err != nil {
		t.Fatal(err)
	}
	j := h2.mustSubmitRL("bob", "-N 2 --exclusive --time=10")
	h2.expectState(j.ID, JobPending, ReasonReqNodeNotAvail) // one node outside it (oracle)
	if err := h2.st.RestoreReservation(saved); err == nil {
		t.Fatal("restored twice")
	}
}
