package sched

import (
	"fmt"
	"sort"
)

// State is the live scheduling state the drivers own: the cluster, the
// accounting policy snapshot, every job not yet purged, and the running
// usage counters the limits gate checks. One goroutine owns it (the
// controller's event loop or the simulator); the core only reads it in
// Schedule and changes it in the lifecycle methods and Apply.
type State struct {
	// Cluster is the cluster's shape and the nodes' live state.
	Cluster *Cluster
	// Config is the configuration the lifecycle methods use.
	Config Config
	// Policy is the accounting policy (associations, QOS, limits); nil
	// means no accounting: every job is accepted in the "normal" QOS.
	Policy *Policy
	// NextJobID is the id the next submitted job gets.
	NextJobID JobID
	// Usage, when set, is the decayed usage that GrpTRESMins and GrpWall
	// are checked against (TreeUsage over the priority plugin's tree).
	Usage UsageSource

	jobs    map[JobID]*Job
	jobList []*Job // every job, ascending id
	// arrayJobs counts the jobs of jobList that are array records (a job
	// gets its ArrayInfo before addJob), so a cycle without any skips
	// indexing them.
	arrayJobs int
	usage     usage
	// cycUse keeps the buffers of the last cycle's usage view for the next
	// (taken by newCycle, given back by Schedule).
	cycUse *cycleUsage
	bufs   cycleBufs
	// orderPass counts the cycles' queue sorts (queue.go).
	orderPass uint32
	// bfSlabs are the backfill maps' node-set slabs (backfill_map.go).
	bfSlabs bfSlabs
	// ntCache are backfill's node types (backfill.go).
	ntCache nodeTypeCache
	// shapes are backfill's shape classes (backfill_shapes.go).
	shapes shapeCache
	// masks are the constraint masks by expression (gate.go).
	masks maskCache
	sel   *selector // submit-time selection (cached)
	empty *Avail    // the cluster with every node free (cached)
	// everFit remembers canEverFit answers by shape (unusableDesc,
	// checkFits), and shapeGen counts the changes that can change such an
	// answer (job and partition updates) so that it is asked again after
	// them.
	everFit  everFitCache
	shapeGen uint64
	// lazy is the queue kept across cycles (lazy_queue.go); orderGen
	// counts the changes that void it (holds, requeues, node, policy and
	// reservation changes), prioGen the calls of OrderChanged (the queued
	// jobs' priorities moved: the kept queue is sorted again).
	lazy              lazyQueue
	orderGen, prioGen uint64
	// availDirty are the nodes whose allocations changed since the last
	// cycle, availAll set when nodes changed otherwise (state, suspend):
	// a cycle with Config.IncrementalQueue refills its free view from
	// them only (Avail.refill). The drivers change nodes through the
	// State's methods only under that flag.
	availDirty []int32
	availAll   bool

	// resvs are the advanced reservations (resv_state.go).
	resvs reservations
}

// NewState returns an empty state for cluster c.
func NewState(c *Cluster, cfg Config) *State {
	first := cfg.FirstJobID
	if first == 0 {
		first = 1
	}
	return &State{Cluster: c, Config: cfg, NextJobID: first, jobs: map[JobID]*Job{}}
}

// Job returns the job with id, or nil.
func (st *State) Job(id JobID) *Job { return st.jobs[id] }

// Jobs returns every job in ascending id order. The slice is the state's
// own: callers must not modify it.
func (st *State) Jobs() []*Job { return st.jobList }

// addJob inserts j keeping jobList sorted by id.
func (st *State) addJob(j *Job) {
	st.jobs[j.ID] = j
	if j.Array != nil {
		st.arrayJobs++
	}
	n := len(st.jobList)
	if n == 0 || st.jobList[n-1].ID < j.ID {
		st.jobList = append(st.jobList, j)
		return
	}
	i := sort.Search(n, func(i int) bool { return st.jobList[i].ID >= j.ID })
	st.jobList = append(st.jobList, nil)
	copy(st.jobList[i+1:], st.jobList[i:])
	st.jobList[i] = j
}

// Purge forgets finished jobs that ended before cutoff (MinJobAge): the
// controller calls it once they are in accounting.
func (st *State) Purge(cutoff func(j *Job) bool) int {
	out := st.jobList[:0]
	n := 0
	for _, j := range st.jobList {
		if j.State.Finished() && j.State&JobFlagCompleting == 0 && cutoff(j) {
			delete(st.jobs, j.ID)
			if j.Array != nil {
				st.arrayJobs--
			}
			n++
			continue
		}
		out = append(out, j)
	}
	for i := len(out); i < len(st.jobList); i++ {
		st.jobList[i] = nil
	}
	st.jobList = out
	return n
}

// lookupJob returns the job or Slurm's "Invalid job id specified" error.
func (st *State) lookupJob(id JobID) (*Job, error) {
	j := st.jobs[id]
	if j == nil {
		return nil, fmt.Errorf("job %d: %w", id, ErrInvalidJobID)
	}
	return j, nil
}
