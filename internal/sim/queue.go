package sim

import (
	"cmp"
	"slices"

	"github.com/sluice-hpc/sluice/internal/priority"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// The simulator keeps, between priority recalculations, what a refresh
// and the skip tests read of every pending and running job, so that the
// work of one PriorityCalcPeriod is a linear scan instead of sorting the
// queue (with a map lookup per comparison) and looking associations up by
// name: on SDSC-SP2 the recalculation runs 188,000 times.

// queued is a pending job as the simulator's queue holds it: the job,
// its fair-share association, the least CPUs and GPUs it can start with
// and its duration as backfill plans it in its first partition (fixed at
// submit: the simulator never changes a request or a partition), and,
// under multifactor priority, what the Calculator reads of it (refresh
// brings up to date the fields a pending job's state changes).
type queued struct {
	j          *sched.Job
	assoc      int
	cpus, gpus int64
	dur        int64 // sched.PlanDuration, ns
	pj         *priority.Job
}

// running is a running job charged at every recalculation.
type running struct {
	id sched.JobID
	rj *priority.RunningJob
}

// cmpJobs is the part of Slurm's queue order a recalculation can change:
// priority (descending), submit time, id. It is a total order (ids are
// unique), so every sort of the same jobs gives the same sequence.
func cmpJobs(a, b *sched.Job) int {
	if a.Priority != b.Priority {
		if a.Priority > b.Priority {
			return -1
		}
		return 1
	}
	if r := a.SubmitTime.Compare(b.SubmitTime); r != 0 {
		return r
	}
	return cmp.Compare(a.ID, b.ID)
}

func cmpQueued(a, b queued) int { return cmpJobs(a.j, b.j) }

// queued makes a submitted job's queue entry (what the priority of a
// submission is computed from, too).
func (c *Core) queued(j *sched.Job) queued {
	q := queued{j: j, assoc: c.assocIndex(j, firstPartition(c.st, j)), cpus: int64(requestCPUs(&j.Req)), gpus: requestGPUs(&j.Req)}
	if len(j.Partitions) > 0 {
		q.dur = int64(sched.PlanDuration(j.TimeLimit, &c.st.Cluster.Partitions[j.Partitions[0]]))
	}
	if c.pcfg.Type != priority.Basic {
		q.pj = new(priority.Job)
		c.fillPriorityJobAssoc(j, q.assoc, q.pj)
	}
	return q
}

// enqueue adds a pending job at its place in the queue order (by its
// priority: the entry's priority.Job is filled before it is known).
func (c *Core) enqueue(q queued) {
	if q.pj != nil {
		q.pj.Priority = q.j.Priority
	}
	k, _ := slices.BinarySearchFunc(c.queue, q, cmpQueued)
	c.queue = slices.Insert(c.queue, k, q)
}

// dequeue removes a job that left the pending state. Jobs mostly leave
// near the head (they start in queue order): the shorter side of the
// queue is moved, so that a start on a queue of 80,000 jobs does not move
// all of them (it was a fifth of a deep-queue replay).
func (c *Core) dequeue(id sched.JobID) {
	for k := range c.queue {
		if c.queue[k].j.ID != id {
			continue
		}
		if k < len(c.queue)/2 {
			copy(c.queue[1:k+1], c.queue[:k])
			c.queue[0] = queued{}
			c.queue = c.queue[1:]
		} else {
			c.queue = slices.Delete(c.queue, k, k+1)
		}
		return
	}
}

// queueInOrder reports whether the queue is in order under the jobs'
// current priorities: since the order is total, exactly whether sorting
// it again would give the same sequence.
func (c *Core) queueInOrder() bool {
	for k := 1; k < len(c.queue); k++ {
		if cmpJobs(c.queue[k-1].j, c.queue[k].j) >= 0 {
			return false
		}
	}
	return true
}

// addRunning records a started job for usage charging, keeping the list
// in job id order (the order charges are added in, as before).
func (c *Core) addRunning(id sched.JobID, rj *priority.RunningJob) {
	k, _ := slices.BinarySearchFunc(c.runs, id, func(r running, id sched.JobID) int { return cmp.Compare(r.id, id) })
	c.runs = slices.Insert(c.runs, k, running{id: id, rj: rj})
}

// removeRunning removes and returns a job's running record (nil if none).
func (c *Core) removeRunning(id sched.JobID) *priority.RunningJob {
	k, ok := slices.BinarySearchFunc(c.runs, id, func(r running, id sched.JobID) int { return cmp.Compare(r.id, id) })
	if !ok {
		return nil
	}
	rj := c.runs[k].rj
	c.runs = slices.Delete(c.runs, k, k+1)
	return rj
}

// firstPartition is the name of the job's first partition, the one its
// priority is computed for.
func firstPartition(st *sched.State, j *sched.Job) string {
	if len(j.Partitions) > 0 {
		return st.Cluster.Partitions[j.Partitions[0]].Name
	}
	return ""
}
