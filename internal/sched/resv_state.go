package sched

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/resv"
)

// reservations are the cluster's advanced reservations (State.resvs):
// the records as scontrol shows them, each with its node set, plus the
// jobs held because their reservation was deleted or ended.
type reservations struct {
	list   []*resvEntry
	nextID int
	// deleted maps a job held by the end or deletion of its reservation
	// to that reservation's name (reason ReservationDeleted).
	deleted map[JobID]string
}

// resvEntry is one reservation with its nodes as a set over the cluster.
type resvEntry struct {
	R     *resv.Reservation
	nodes NodeSet
}

func (e *resvEntry) flex() bool  { return e.R.Flags&resv.FlagFlex != 0 }
func (e *resvEntry) maint() bool { return e.R.Flags&resv.FlagMaint != 0 }

// Reservations returns the reservations in creation order (the records
// are the state's own: callers must not modify them).
func (st *State) Reservations() []*resv.Reservation {
	out := make([]*resv.Reservation, len(st.resvs.list))
	for i, e := range st.resvs.list {
		out[i] = e.R
	}
	return out
}

// Reservation returns the reservation named name, or nil.
func (st *State) Reservation(name string) *resv.Reservation {
	if e := st.resvEntry(name); e != nil {
		return e.R
	}
	return nil
}

func (st *State) resvEntry(name string) *resvEntry {
	for _, e := range st.resvs.list {
		if e.R.Name == name {
			return e
		}
	}
	return nil
}

// ReservationCommand runs one scontrol reservation command (the words
// after "scontrol") at now and returns what scontrol prints on success:
// "Reservation created: NAME", "Reservation updated.", nothing for
// delete, the show layout for show. Only admins may change reservations.
// A rejected command changes nothing.
func (st *State) ReservationCommand(words []string, admin bool, now time.Time, loc *time.Location) (string, error) {
	cmd, err := resv.ParseCommand(words)
	if err != nil {
		return "", err
	}
	if cmd.Verb != resv.VerbShow && !admin {
		return "", resv.ErrNotPermitted
	}
	switch cmd.Verb {
	case resv.VerbCreate:
		r, err := st.CreateReservation(cmd, now, loc)
		if err != nil {
			return "", err
		}
		return "Reservation created: " + r.Name + "\n", nil
	case resv.VerbUpdate:
		if err := st.UpdateReservation(cmd, now, loc); err != nil {
			return "", err
		}
		return "Reservation updated.\n", nil
	case resv.VerbDelete:
		return "", st.DeleteReservation(cmd.Name, now)
	}
	o := resv.ShowOptions{Loc: loc}
	if cmd.Name != "" {
		r := st.Reservation(cmd.Name)
		if r == nil {
			return "", fmt.Errorf("Reservation %s not found", cmd.Name)
		}
		return resv.Show(r, now, o), nil
	}
	return resv.ShowAll(st.Reservations(), now, o), nil
}

// CreateReservation validates and adds a reservation (scontrol create
// reservation): names, times, the partition, users and accounts known to
// accounting, licenses within the configured counts, nodes chosen when
// only a count is given, and no busy nodes (unless IGNORE_JOBS) or
// overlap with another reservation (unless MAINT or OVERLAP). A rejected
// request changes nothing.
func (st *State) CreateReservation(cmd *resv.Command, now time.Time, loc *time.Location) (*resv.Reservation, error) {
	st.orderGen++ // the incremental queue (lazy_queue.go) is built again
	if cmd.Verb != resv.VerbCreate {
		return nil, resv.ErrInvalid
	}
	r, given, err := resv.Build(cmd, nil, now, loc)
	if err != nil {
		return nil, err
	}
	if r.Name == "" {
		r.Name = st.resvName(r)
	}
	if st.resvEntry(r.Name) != nil {
		return nil, resv.ErrNameDup
	}
	e, err := st.validateResv(r, given, nil, now)
	if err != nil {
		return nil, err
	}
	st.resvs.nextID++
	st.resvs.list = append(st.resvs.list, e)
	return e.R, nil
}

// resvName generates Slurm's default name: the first user (or account)
// and a sequence number, e.g. alan_6.
func (st *State) resvName(r *resv.Reservation) string {
	base := "resv"
	switch {
	case len(r.Users) > 0:
		base = r.Users[0]
	case len(r.Accounts) > 0:
		base = r.Accounts[0]
	case len(r.Groups) > 0:
		base = r.Groups[0]
	}
	for n := st.resvs.nextID + 1; ; n++ {
		name := base + "_" + strconv.Itoa(n)
		if st.resvEntry(name) == nil {
			return name
		}
	}
}

// UpdateReservation applies scontrol update reservation: the changed
// record is validated like a new one (against every other reservation).
func (st *State) UpdateReservation(cmd *resv.Command, now time.Time, loc *time.Location) error {
	st.orderGen++ // the incremental queue (lazy_queue.go) is built again
	old := st.resvEntry(cmd.Name)
	if old == nil {
		return resv.ErrInvalid
	}
	r, given, err := resv.Build(cmd, old.R, now, loc)
	if err != nil {
		return err
	}
	e, err := st.validateResv(r, given, old, now)
	if err != nil {
		return err
	}
	*old = *e
	st.moveResvEnds(old)
	return nil
}

// moveResvEnds gives the jobs running in e the end of their window as it
// is now (an update may have moved it): they are ended then.
func (st *State) moveResvEnds(e *resvEntry) {
	for _, j := range st.jobList {
		if !j.ResvEnd.IsZero() && e.confined() && st.jobRunsIn(j, e) {
			j.ResvEnd = e.R.Window(j.StartTime).End.Add(st.Config.ResvOverRun)
		}
	}
}

// DeleteReservation removes a reservation that no running job uses
// (else Slurm's "Reservation is in use"). Its pending jobs lose it: with
// no other reservation left they are held with reason ReservationDeleted,
// unless the reservation has NO_HOLD_JOBS_AFTER_END.
func (st *State) DeleteReservation(name string, now time.Time) error {
	e := st.resvEntry(name)
	if e == nil {
		return resv.ErrInvalid
	}
	for _, j := range st.jobList {
		if isActive(j) && st.jobRunsIn(j, e) {
			return resv.ErrBusy
		}
	}
	st.dropResv(e, now)
	return nil
}

// dropResv removes e and releases (or holds) its pending jobs.
func (st *State) dropResv(e *resvEntry, now time.Time) {
	st.orderGen++ // the incremental queue (lazy_queue.go) is built again
	st.resvs.list = slices.DeleteFunc(st.resvs.list, func(x *resvEntry) bool { return x == e })
	for _, j := range st.jobList {
		if j.State.Base() != JobPending || j.Req.Reservation == "" {
			continue
		}
		names := resvNames(j.Req.Reservation)
		if !slices.Contains(names, e.R.Name) {
			continue
		}
		names = slices.DeleteFunc(names, func(n string) bool { return n == e.R.Name })
		j.Req.Reservation = strings.Join(names, ",")
		if len(names) > 0 || e.R.Flags&resv.FlagNoHoldJobs != 0 {
			continue
		}
		if j.Hold == HoldNone {
			j.Hold = HoldUser
		}
		if st.resvs.deleted == nil {
			st.resvs.deleted = map[JobID]string{}
		}
		st.resvs.deleted[j.ID] = e.R.Name
		j.Reason, j.StateDesc = ReasonReservationDeleted, "Reservation "+e.R.Name+" was deleted"
	}
}

// PurgeReservations removes the one-off reservations that have ended by
// now (Slurm purges them at their end time) and the PURGE_COMP ones idle
// past their purge time, handling their pending jobs as a deletion does.
// It returns the removed records for accounting.
func (st *State) PurgeReservations(now time.Time) []*resv.Reservation {
	var out []*resv.Reservation
	for _, e := range slices.Clone(st.resvs.list) {
		if e.R.Expired(now) || st.purgeComp(e, now) {
			out = append(out, e.R)
			st.dropResv(e, now)
		}
	}
	return out
}

// purgeComp reports whether a PURGE_COMP reservation has been active
// and without jobs for its purge time.
func (st *State) purgeComp(e *resvEntry, now time.Time) bool {
	if e.R.Flags&resv.FlagPurgeComp == 0 {
		return false
	}
	w := e.R.Window(now)
	if !w.Contains(now) || now.Sub(w.Start) < e.R.PurgeComp {
		return false
	}
	for _, j := range st.jobList {
		if isActive(j) && st.jobRunsIn(j, e) || j.State.Base() == JobPending && slices.Contains(resvNames(j.Req.Reservation), e.R.Name) {
			return false
		}
		if j.State.Finished() && !j.EndTime.IsZero() && now.Sub(j.EndTime) < e.R.PurgeComp && st.jobRanIn(j, e) {
			return false
		}
	}
	return true
}

// RestoreReservation adds a stored reservation as it is (the controller
// recovering its state): only its node names are resolved.
func (st *State) RestoreReservation(r *resv.Reservation) error {
	st.orderGen++ // the incremental queue (lazy_queue.go) is built again
	if st.resvEntry(r.Name) != nil {
		return resv.ErrNameDup
	}
	ns, err := st.nodeSetOf(r.Nodes)
	if err != nil {
		return err
	}
	st.resvs.list = append(st.resvs.list, &resvEntry{R: r.Clone(), nodes: ns})
	st.resvs.nextID++
	return nil
}

// JobReservation returns the reservation job j runs (or ran) in: the one
// it asked for or a magnetic one whose nodes and window hold its start;
// "" when none.
func (st *State) JobReservation(j *Job) string {
	for _, e := range st.resvs.list {
		if st.jobRanIn(j, e) {
			return e.R.Name
		}
	}
	return ""
}

// jobRunsIn reports whether active job j runs inside reservation e.
func (st *State) jobRunsIn(j *Job, e *resvEntry) bool { return isActive(j) && st.jobRanIn(j, e) }

// jobRanIn reports whether job j started inside reservation e: on its
// nodes during a window, and either asking for it or attracted to it.
func (st *State) jobRanIn(j *Job, e *resvEntry) bool {
	if j.StartTime.IsZero() || len(j.Alloc.Nodes) == 0 {
		return false
	}
	asked := slices.Contains(resvNames(j.Req.Reservation), e.R.Name)
	if !asked && (e.R.Flags&resv.FlagMagnetic == 0 || !e.R.Allows(j.User, j.Account, []string{j.Group})) {
		return false
	}
	if !e.R.Window(j.StartTime).Contains(j.StartTime) && !e.flex() {
		return false
	}
	for _, n := range j.Alloc.Nodes {
		if e.nodes.Has(int(n)) {
			return true
		}
	}
	return asked && e.flex()
}

// resvNames splits a --reservation value.
func resvNames(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// nodeSetOf resolves node names to a set ("ALL" = every node).
func (st *State) nodeSetOf(names []string) (NodeSet, error) {
	cl := st.Cluster
	ns := NewNodeSet(len(cl.Nodes))
	for _, n := range names {
		if n == resv.AllNodes {
			for i := range cl.Nodes {
				ns.Set(i)
			}
			continue
		}
		i := cl.NodeIndex(n)
		if i < 0 {
			return nil, resv.ErrInvalidNode
		}
		ns.Set(int(i))
	}
	return ns, nil
}

// reservedLicenses returns, per cluster license, the count held by
// reservations active at now other than the ones in except.
func (st *State) reservedLicenses(now time.Time, except []*resvEntry) []int64 {
	out := make([]int64, len(st.Cluster.Licenses))
	for _, e := range st.resvs.list {
		if len(e.R.Licenses) == 0 || slices.Contains(except, e) || !e.R.Active(now) {
			continue
		}
		for _, l := range e.R.Licenses {
			if i := st.Cluster.LicenseIndex(l.Name); i >= 0 {
				out[i] += l.Count
			}
		}
	}
	return out
}

// Pending reasons of jobs whose reservation went away (Slurm's
// WAIT_RESV_DELETED and WAIT_RESV_INVALID).
const (
	ReasonReservationDeleted Reason = "ReservationDeleted"
	ReasonReservationInvalid Reason = "ReservationInvalid"
)

// checkReservation applies Slurm's submission checks of --reservation:
// every name must exist ("Requested reservation is invalid") and one of
// them must admit the job's user and account ("Access denied to
// requested reservation"); a QOS with RequiresReservation rejects a job
// without one (Slurm's "Invalid qos specification").
func (st *State) checkReservation(j *Job, _ Submitter) error {
	names := resvNames(j.Req.Reservation)
	if len(names) == 0 {
		if p := st.Policy; p != nil && j.qos >= 0 && int(j.qos) < len(p.QOS) && p.QOS[j.qos].Flags&QOSRequiresReservation != 0 {
			return reject(ErrInvalidQOS)
		}
		return nil
	}
	allowed := false
	for _, n := range names {
		e := st.resvEntry(n)
		if e == nil {
			return reject(resv.ErrInvalid)
		}
		if e.R.Flags&resv.FlagTimeFloat != 0 {
			return reject(resv.ErrInvalid) // floating reservations take no jobs
		}
		if e.R.Allows(j.User, j.Account, []string{j.Group}) {
			allowed = true
		}
	}
	if !allowed {
		return reject(resv.ErrAccess)
	}
	return nil
}

// ApplyReservationScript applies the commands of a reservation script
// (resv.ParseScript) at now, as the simulator does with its policy's
// reservations file; it stops at the first rejected command, naming its
// line (the commands before it stay applied).
func (st *State) ApplyReservationScript(lines []resv.ScriptLine, now time.Time, loc *time.Location) error {
	for _, l := range lines {
		var err error
		switch l.Cmd.Verb {
		case resv.VerbCreate:
			_, err = st.CreateReservation(l.Cmd, now, loc)
		case resv.VerbUpdate:
			err = st.UpdateReservation(l.Cmd, now, loc)
		case resv.VerbDelete:
			err = st.DeleteReservation(l.Cmd.Name, now)
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", l.Line, err)
		}
	}
	return nil
}

// ReservationRecords returns the accounting records (one per occurrence)
// of every reservation meeting [from, to), with the CPUs of its nodes:
// the input of resv.Utilization for sreport reservation utilization and
// the simulator's reserved-capacity report.
func (st *State) ReservationRecords(from, to time.Time) []resv.Record {
	var out []resv.Record
	for _, e := range st.resvs.list {
		var cpus int64
		for _, ni := range e.nodes.Indices(nil) {
			cpus += int64(st.Cluster.Nodes[ni].CPUs)
		}
		out = append(out, resv.Records(e.R, st.Cluster.Name, cpus, from, to)...)
	}
	return out
}

// ReservedNodes returns the nodes in a reservation active at now, and
// among them those in a MAINT one: sinfo shows such idle nodes as
// RESERVED (resv) and MAINT (maint).
func (st *State) ReservedNodes(now time.Time) (reserved, maint NodeSet) {
	n := len(st.Cluster.Nodes)
	reserved, maint = NewNodeSet(n), NewNodeSet(n)
	for _, e := range st.resvs.list {
		if !e.R.Active(now) {
			continue
		}
		reserved.Or(e.nodes)
		if e.maint() {
			maint.Or(e.nodes)
		}
	}
	return reserved, maint
}
