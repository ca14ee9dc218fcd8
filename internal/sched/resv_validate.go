package sched

import (
	"slices"
	"time"

	"github.com/sluice-hpc/sluice/internal/resv"
)

// validateResv checks record r (new, or an update of old) against the
// cluster and the other reservations and resolves its nodes. It returns
// the entry to store; nothing is changed on error.
func (st *State) validateResv(r *resv.Reservation, given resv.Given, old *resvEntry, now time.Time) (*resvEntry, error) {
	cl := st.Cluster
	part := int32(-1)
	if r.Partition != "" {
		if part = cl.PartitionIndex(r.Partition); part < 0 {
			return nil, resv.ErrInvalidPartition
		}
	}
	if err := st.checkResvAccess(r); err != nil {
		return nil, err
	}
	if err := st.checkResvLicenses(r, old, now); err != nil {
		return nil, err
	}
	e := &resvEntry{R: r}
	switch {
	case len(r.Nodes) > 0 && (old == nil || given["Nodes"]):
		ns, err := st.resvNodesNamed(r, part)
		if err != nil {
			return nil, err
		}
		e.nodes = ns
		if err := st.checkResvNodes(e, old, now); err != nil {
			return nil, err
		}
	case (r.NodeCnt > 0 || r.CoreCnt > 0) && (old == nil || given["NodeCnt"] || given["CoreCnt"] || given["TRES"]):
		ns, err := st.selectResvNodes(e, old, part, now)
		if err != nil {
			return nil, err
		}
		e.nodes = ns
	case old != nil:
		e.nodes = old.nodes.Clone()
		if given["StartTime"] || given["Duration"] || given["EndTime"] || given["Flags"] {
			if err := st.checkResvNodes(e, old, now); err != nil {
				return nil, err
			}
		}
	case part >= 0 && r.Flags&resv.FlagAnyNodes == 0:
		e.nodes = cl.Partitions[part].Nodes.Clone()
		if err := st.checkResvNodes(e, old, now); err != nil {
			return nil, err
		}
	default:
		e.nodes = NewNodeSet(len(cl.Nodes))
	}
	r.Nodes = cl.NodeNames(e.nodes.Indices(nil))
	r.NodeCnt = len(r.Nodes)
	if r.CoreCnt == 0 {
		for _, ni := range e.nodes.Indices(nil) {
			r.CoreCnt += int(cl.Nodes[ni].Cores())
		}
	}
	if r.Partition == "" && len(r.Nodes) > 0 && cl.DefaultPartition >= 0 && r.Flags&resv.FlagSpecNodes == 0 {
		r.Partition = cl.Partitions[cl.DefaultPartition].Name
	}
	return e, nil
}

// checkResvAccess rejects users and accounts accounting does not know
// (when there is accounting): Slurm's "Invalid user id" and "Invalid
// account or account/partition combination specified".
func (st *State) checkResvAccess(r *resv.Reservation) error {
	p := st.Policy
	if p == nil {
		return nil
	}
	for _, u := range r.Users {
		if _, ok := p.Users[u]; !ok && u != "root" {
			return resv.ErrInvalidUser
		}
	}
	for _, a := range r.Accounts {
		if !slices.ContainsFunc(p.Assocs, func(ap AssocPolicy) bool { return ap.Account == a }) {
			return resv.ErrInvalidAccount
		}
	}
	return nil
}

// checkResvLicenses rejects unknown licenses and counts above what is
// configured, counting the other reservations that overlap in time.
func (st *State) checkResvLicenses(r *resv.Reservation, old *resvEntry, now time.Time) error {
	cl := st.Cluster
	for _, l := range r.Licenses {
		i := cl.LicenseIndex(l.Name)
		if i < 0 {
			return resv.ErrInvalidLicenses
		}
		total := l.Count
		for _, o := range st.resvs.list {
			if o == old || !resvTimesOverlap(r, o.R, now) {
				continue
			}
			for _, ol := range o.R.Licenses {
				if ol.Name == l.Name {
					total += ol.Count
				}
			}
		}
		if total > cl.Licenses[i].Total {
			return resv.ErrInvalidLicenses
		}
	}
	return nil
}

// resvNodesNamed resolves Nodes= ("ALL": every node, or the partition's
// with PART_NODES).
func (st *State) resvNodesNamed(r *resv.Reservation, part int32) (NodeSet, error) {
	if len(r.Nodes) == 1 && r.Nodes[0] == resv.AllNodes && part >= 0 && r.Flags&resv.FlagPartNodes != 0 {
		return st.Cluster.Partitions[part].Nodes.Clone(), nil
	}
	return st.nodeSetOf(r.Nodes)
}

// checkResvNodes rejects nodes that another reservation holds at an
// overlapping time (unless this one is MAINT or OVERLAP) and nodes with
// running jobs expected to run past the start (unless IGNORE_JOBS).
func (st *State) checkResvNodes(e *resvEntry, old *resvEntry, now time.Time) error {
	if e.R.Flags&(resv.FlagMaint|resv.FlagOverlap) == 0 {
		for _, o := range st.resvs.list {
			if o != old && o.nodes.Intersects(e.nodes) && resvTimesOverlap(e.R, o.R, now) {
				return resv.ErrOverlap
			}
		}
	}
	if e.R.Flags&resv.FlagIgnoreJobs == 0 {
		busy := st.busyAt(e.R.Window(now).Start, old)
		if busy.Intersects(e.nodes) {
			return resv.ErrNodesBusy
		}
	}
	return nil
}

// busyAt returns the nodes running jobs are expected to hold at t (an
// UNLIMITED job holds its nodes forever). Jobs running inside old (the
// reservation being updated) do not count.
func (st *State) busyAt(t time.Time, old *resvEntry) NodeSet {
	ns := NewNodeSet(len(st.Cluster.Nodes))
	for _, j := range st.jobList {
		if !isActive(j) || (!j.EndTime.IsZero() && !j.EndTime.After(t)) {
			continue
		}
		if old != nil && st.jobRunsIn(j, old) {
			continue
		}
		for _, n := range j.Alloc.Nodes {
			ns.Set(int(n))
		}
	}
	return ns
}

// selectResvNodes picks nodes for NodeCnt=/CoreCnt=: usable nodes of the
// partition (or the default one) with the Features, held by no
// overlapping reservation and not busy at the start, lowest Weight first
// then configuration order; Slurm's "Requested nodes are busy" when too
// few remain. A core count takes whole nodes until it is covered.
func (st *State) selectResvNodes(e *resvEntry, old *resvEntry, part int32, now time.Time) (NodeSet, error) {
	cl := st.Cluster
	n := len(cl.Nodes)
	cand := NewNodeSet(n)
	switch {
	case part >= 0:
		cand.CopyFrom(cl.Partitions[part].Nodes)
	case cl.DefaultPartition >= 0:
		cand.CopyFrom(cl.Partitions[cl.DefaultPartition].Nodes)
	default:
		for i := 0; i < n; i++ {
			cand.Set(i)
		}
	}
	for i := 0; i < n; i++ {
		if !cl.Nodes[i].Usable() {
			cand.Clear(i)
		}
	}
	if e.R.Features != "" {
		cand.And(constraintMask(cl, e.R.Features))
	}
	if e.R.Flags&(resv.FlagMaint|resv.FlagOverlap) == 0 {
		for _, o := range st.resvs.list {
			if o != old && resvTimesOverlap(e.R, o.R, now) {
				cand.AndNot(o.nodes)
			}
		}
	}
	if e.R.Flags&resv.FlagIgnoreJobs == 0 {
		cand.AndNot(st.busyAt(e.R.Window(now).Start, old))
	}
	idx := cand.Indices(nil)
	slices.SortStableFunc(idx, func(a, b int32) int { return int(cl.Nodes[a].Weight) - int(cl.Nodes[b].Weight) })
	out := NewNodeSet(n)
	nodes, cores := 0, 0
	for _, i := range idx {
		if e.R.NodeCnt > 0 && nodes >= e.R.NodeCnt || e.R.NodeCnt == 0 && cores >= e.R.CoreCnt {
			break
		}
		out.Set(int(i))
		nodes++
		cores += int(cl.Nodes[i].Cores())
	}
	if e.R.NodeCnt > 0 && nodes < e.R.NodeCnt || cores < e.R.CoreCnt {
		return nil, resv.ErrNodesBusy
	}
	return out, nil
}

// resvTimesOverlap reports whether two reservations' windows meet within
// the next 400 days (recurring ones compared occurrence by occurrence).
func resvTimesOverlap(a, b *resv.Reservation, now time.Time) bool {
	until := now.Add(400 * 24 * time.Hour)
	wa := a.Occurrences(now, until, 500)
	wb := b.Occurrences(now, until, 500)
	i, k := 0, 0
	for i < len(wa) && k < len(wb) {
		if wa[i].Overlaps(wb[k].Start, wb[k].End) {
			return true
		}
		if wa[i].End.Before(wb[k].End) {
			i++
		} else {
			k++
		}
	}
	return false
}
