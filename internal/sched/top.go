package sched

import "slices"

// Top is Slurm's scontrol top: the listed pending jobs move to the top of
// their user's queue in the same partition, account and QOS, by nice
// values, so that the user's priorities add up as before. Checked on the
// oracle (scenario scontrol-top):
//
//   - the group is the pending jobs of the first listed job's user,
//     partitions, account and QOS with a priority above 0 (a job at 0 is
//     held and keeps its place); listed jobs outside it are left alone;
//   - the listed jobs, in their order, take the group's highest
//     priorities (top 5,4 with 156, 98, 58 in the group: job 5 gets 156,
//     job 4 98);
//   - the others give up what the listed jobs gained, shared evenly in
//     job id order, the remainder on the last (117 over two jobs: 58, 59).
//
// It changes Req.Nice and Priority and returns the jobs changed.
func (st *State) Top(ids []JobID) []*Job {
	var first *Job
	for _, id := range ids {
		if j := st.jobs[id]; j != nil && j.State.Base() == JobPending {
			first = j
			break
		}
	}
	if first == nil {
		return nil
	}
	var top, others []*Job
	for _, id := range ids {
		if j := st.jobs[id]; j != nil && topGroup(first, j) && !slices.Contains(top, j) {
			top = append(top, j)
		}
	}
	for _, j := range st.jobList {
		if topGroup(first, j) && !slices.Contains(top, j) {
			others = append(others, j)
		}
	}
	if len(top) == 0 || len(others) == 0 {
		return nil
	}
	return topNice(top, others)
}

// topGroup reports whether pending job j is in first's scontrol top group.
func topGroup(first, j *Job) bool {
	return j.State.Base() == JobPending && j.Priority > 0 && j.UID == first.UID &&
		slices.Equal(j.Partitions, first.Partitions) && j.Account == first.Account && j.QOS == first.QOS
}

// topNice gives the listed jobs the group's highest priorities in order
// and takes what they gained from the others, by nice.
func topNice(top, others []*Job) []*Job {
	prios := make([]int64, 0, len(top)+len(others))
	for _, j := range append(slices.Clone(top), others...) {
		prios = append(prios, int64(j.Priority))
	}
	slices.SortFunc(prios, func(a, b int64) int { return int(b - a) })
	var gained int64
	var changed []*Job
	for k, j := range top {
		if d := prios[k] - int64(j.Priority); d != 0 {
			raise(j, d)
			gained += d
			changed = append(changed, j)
		}
	}
	if gained == 0 {
		return changed
	}
	slices.SortFunc(others, func(a, b *Job) int { return int(a.ID) - int(b.ID) })
	n := int64(len(others))
	for k, j := range others {
		share := gained*int64(k+1)/n - gained*int64(k)/n
		if share != 0 {
			raise(j, -share)
			changed = append(changed, j)
		}
	}
	return changed
}

// raise adds d to j's priority now, by nice: Slurm sets the priority at
// once, 0 included (a job pushed to 0 shows 0 and counts as held until
// the next recalculation brings it back to at least 1).
func raise(j *Job, d int64) {
	j.Req.Nice -= int32(d)
	j.Priority = uint32(max(int64(j.Priority)+d, 0))
	for k, p := range j.PartPriority {
		j.PartPriority[k] = uint32(max(int64(p)+d, 0))
	}
}
