package sched

import (
	"math/rand"
	"slices"
	"testing"
	"time"
)

// TestSortQueueIsTheStableSort: sortQueue, which lays the queue out in
// the last cycle's order before an insertion sort, gives exactly the
// stable sort of the gate's order, over cycles whose priorities change a
// little or a lot, with jobs that have several equal records (ties) and
// jobs that come and go.
func TestSortQueueIsTheStableSort(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	st := &State{}
	base := time.Unix(1e9, 0)
	var jobs []*Job
	for id := 1; id <= 300; id++ {
		jobs = append(jobs, &Job{ID: JobID(id), SubmitTime: base.Add(time.Duration(r.Intn(50)) * time.Second)})
	}
	for cycle := 0; cycle < 60; cycle++ {
		var q []QueueRec
		for _, j := range jobs {
			if r.Intn(10) == 0 {
				continue // not pending this cycle
			}
			if cycle%7 == 0 || r.Intn(20) == 0 {
				j.Priority = uint32(r.Intn(40)) // reshuffle: many inversions
			} else if r.Intn(4) == 0 {
				j.Priority++ // drift
			}
			for part := int32(0); part < int32(1+r.Intn(3)); part++ {
				q = append(q, QueueRec{Job: j, Part: part, Priority: j.Priority, Tier: uint16(r.Intn(2)),
					slot: int32(j.ID), sub: uint16(part)}) // as gate numbers a job's records
			}
		}
		want := slices.Clone(q)
		slices.SortStableFunc(want, compareRecs)
		c := &Cycle{State: st, Queue: q}
		c.sortQueue()
		if !slices.Equal(c.Queue, want) {
			t.Fatalf("cycle %d: sortQueue differs from the stable sort", cycle)
		}
	}
}
