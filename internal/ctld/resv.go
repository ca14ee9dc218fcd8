package ctld

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/resv"
	"github.com/sluice-hpc/sluice/internal/sched"
	"github.com/sluice-hpc/sluice/internal/tres"
)

// Advanced reservations and licenses in the controller (issue 8): the
// scontrol reservation commands run the core's ReservationCommand on the
// event loop, the reservations are stored (one ctld_meta row, written
// before the command is answered) and restored before the jobs on
// recovery, a timer purges ended reservations, and the reservation each
// job ran in is remembered for sacct --reservation and sreport
// reservation utilization.

// resvMetaKey is the ctld_meta row holding resvBook as JSON.
const resvMetaKey = "reservations"

// resvBook is the controller's reservation bookkeeping (loop-owned).
type resvBook struct {
	// Runs maps "JOBID.RESTART" to the reservation that run started in,
	// so that sacct keeps showing it after the job and the reservation
	// are purged.
	Runs map[string]string `json:"runs,omitempty"`
	// History holds the accounting records of reservations that ended or
	// were deleted (sreport reservation utilization reads them).
	History []resv.Record `json:"history,omitempty"`
	// Resvs are the live reservations (written on every change).
	Resvs []*resv.Reservation `json:"resvs,omitempty"`

	saved string // the JSON last stored
	// outside holds the runs seen started outside any reservation, so a
	// tick does not look at them again (memory only, reset when large).
	outside map[string]struct{}
	// next is the next window start or end: the scheduler runs when it
	// passes (a job waiting for a window starts at once).
	next time.Time
	// nodes caches ReservedNodes for one second of node listings (sinfo
	// asks for every node in one call); cleared by every change.
	nodes *reservedNodes
}

// reservedNodes is a cached ReservedNodes answer.
type reservedNodes struct {
	at              int64 // Unix second
	reserved, maint sched.NodeSet
}

// resvState is the loop's reservation bookkeeping (created on first use).
func (ls *loopState) resvState() *resvBook {
	if ls.c.resvBook == nil {
		ls.c.resvBook = &resvBook{Runs: map[string]string{}}
	}
	return ls.c.resvBook
}

func runKey(id uint32, restart int) string {
	return strconv.FormatUint(uint64(id), 10) + "." + strconv.Itoa(restart)
}

// registerResv adds the reservation and license endpoints to the client
// API (called from clientMux).
func (c *Controller) registerResv(mux *http.ServeMux) {
	mux.HandleFunc("POST "+api.PathReservations, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.ResvCommandRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		setRPC(ctx, resvRPC(req.Words))
		return c.do(ctx, func(ls *loopState) (any, error) { return ls.reservationCommand(w, req) })
	}))
	mux.HandleFunc("GET "+api.PathResvSinfo, c.endpoint(func(ctx context.Context, _ Who, _ *http.Request) (any, error) {
		return c.do(ctx, func(ls *loopState) (any, error) {
			return api.TextResponse{Text: resv.SinfoT(ls.st.Reservations(), ls.c.now(), time.Local)}, nil
		})
	}))
	mux.HandleFunc("GET "+api.PathLicenses, c.endpoint(func(ctx context.Context, _ Who, r *http.Request) (any, error) {
		q := r.URL.Query()
		return c.do(ctx, func(ls *loopState) (any, error) {
			text := sched.FormatLicenses(ls.st.Licenses(ls.c.now()), q.Get("name"), q.Get("oneliner") == "1")
			return api.TextResponse{Text: text}, nil
		})
	}))
	mux.HandleFunc("GET "+api.PathResvUtilization, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		return c.resvUtilization(ctx, w, r)
	}))
}

// reservationCommand runs one scontrol reservation command. Changes are
// admin-only (Slurm's "Access/permission denied"), stored before the
// answer, and make the scheduler run again.
func (ls *loopState) reservationCommand(w Who, req api.ResvCommandRequest) (api.TextResponse, error) {
	now := ls.c.now()
	cmd, err := resv.ParseCommand(req.Words)
	if err != nil {
		return api.TextResponse{}, resvError(err)
	}
	if cmd.Verb == resv.VerbShow {
		return ls.showReservations(cmd.Name, req.OneLiner, now)
	}
	if !ls.isAdmin(w) {
		return api.TextResponse{}, &apiErr{status: http.StatusForbidden, msg: resv.ErrNotPermitted.Error()}
	}
	before := ls.resvJobs()
	var gone *resv.Reservation
	if cmd.Verb == resv.VerbDelete {
		gone = ls.st.Reservation(cmd.Name)
		if gone != nil {
			gone = gone.Clone()
		}
	}
	out, err := ls.st.ReservationCommand(req.Words, true, now, time.Local)
	if err != nil {
		return api.TextResponse{}, resvError(err)
	}
	if gone != nil {
		ls.recordEnded(gone, now)
	}
	ls.touchResvJobs(before)
	ls.wantSched = true
	if err := ls.saveResv(); err != nil {
		return api.TextResponse{}, api.Errorf(http.StatusInternalServerError, "Unable to save state: %v", err)
	}
	return api.TextResponse{Text: out}, nil
}

// ResvUsageReason marks an API error that is scontrol's own usage message
// (printed as it is, without "Error creating the reservation: ").
const ResvUsageReason = "usage"

// resvError maps a core error to the API: usage mistakes keep their text
// and are marked, the rest are Slurm's messages.
func resvError(err error) error {
	var ue *resv.UsageError
	if errors.As(err, &ue) {
		return &apiErr{status: http.StatusBadRequest, msg: ue.Msg, reason: ResvUsageReason}
	}
	return &apiErr{status: http.StatusBadRequest, msg: err.Error()}
}

// showReservations renders scontrol show reservation [NAME].
func (ls *loopState) showReservations(name string, oneLiner bool, now time.Time) (api.TextResponse, error) {
	o := resv.ShowOptions{OneLiner: oneLiner, Loc: time.Local}
	if name == "" {
		return api.TextResponse{Text: resv.ShowAll(ls.st.Reservations(), now, o)}, nil
	}
	r := ls.st.Reservation(name)
	if r == nil {
		return api.TextResponse{}, &apiErr{status: http.StatusNotFound, msg: "Reservation " + name + " not found"}
	}
	return api.TextResponse{Text: resv.Show(r, now, o)}, nil
}

// resvJobState is what a reservation change may alter in a job: a
// pending one's reservation, hold and reason, a running one's end.
type resvJobState struct {
	resv    string
	hold    sched.Hold
	reason  sched.Reason
	resvEnd time.Time
}

// resvJobs snapshots the pending jobs that name a reservation and the
// jobs that run in one.
func (ls *loopState) resvJobs() map[sched.JobID]resvJobState {
	out := map[sched.JobID]resvJobState{}
	for _, j := range ls.st.Jobs() {
		if j.State.Base() == sched.JobPending && j.Req.Reservation != "" || !j.ResvEnd.IsZero() {
			out[j.ID] = resvJobState{j.Req.Reservation, j.Hold, j.Reason, j.ResvEnd}
		}
	}
	return out
}

// touchResvJobs marks changed the jobs a deletion or purge released or
// held, or whose reservation's end an update moved (their stored record
// must show it after a restart).
func (ls *loopState) touchResvJobs(before map[sched.JobID]resvJobState) {
	for id, was := range before {
		j := ls.st.Job(id)
		if j == nil {
			continue
		}
		if j.Req.Reservation != was.resv || j.Hold != was.hold || j.Reason != was.reason || !j.ResvEnd.Equal(was.resvEnd) {
			ls.touch(j, "reservation", string(j.Reason))
		}
	}
}

// resvTick runs every timer tick: it remembers the reservation of every
// job that started in one and purges the reservations that ended.
func (ls *loopState) resvTick(now time.Time) {
	if len(ls.st.Reservations()) == 0 {
		return
	}
	b := ls.resvState()
	if !b.next.IsZero() && !now.Before(b.next) {
		ls.wantSched = true
	}
	b.next = nextBoundary(ls.st.Reservations(), now)
	changed := ls.recordRuns()
	before := ls.resvJobs()
	cpus := map[string]int64{}
	for _, rec := range ls.st.ReservationRecords(time.Time{}, now.Add(time.Second)) {
		cpus[rec.Name] = rec.CPUs
	}
	for _, r := range ls.st.PurgeReservations(now) {
		b.History = append(b.History, resv.Records(r, ls.c.cfg.ClusterName, cpus[r.Name], r.Start, now.Add(time.Second))...)
		ls.c.log.Info("reservation purged", "reservation", r.Name)
		changed = true
	}
	if changed {
		ls.touchResvJobs(before)
		ls.wantSched = true
		if err := ls.saveResv(); err != nil {
			ls.c.log.Error("cannot store reservations", "err", err)
		}
	}
}

// nextBoundary is the earliest window start or end after now (zero when
// none).
func nextBoundary(rs []*resv.Reservation, now time.Time) time.Time {
	var next time.Time
	for _, r := range rs {
		w := r.Window(now)
		b := w.End
		if w.Start.After(now) {
			b = w.Start
		}
		if b.After(now) && (next.IsZero() || b.Before(next)) {
			next = b
		}
	}
	return next
}

// recordRuns notes the reservation of each started run not noted yet.
func (ls *loopState) recordRuns() bool {
	b := ls.resvState()
	jobs := ls.st.Jobs()
	if b.outside == nil || len(b.outside) > 2*len(jobs)+1024 {
		b.outside = map[string]struct{}{}
	}
	changed := false
	for _, j := range jobs {
		if j.StartTime.IsZero() {
			continue
		}
		k := runKey(uint32(j.ID), int(j.RestartCount))
		if _, ok := b.Runs[k]; ok {
			continue
		}
		if _, ok := b.outside[k]; ok {
			continue
		}
		if name := ls.st.JobReservation(j); name != "" {
			b.Runs[k] = name
			changed = true
		} else if !isActive(j) {
			b.outside[k] = struct{}{} // a run that ended outside stays outside
		}
	}
	return changed
}

// recordEnded keeps the accounting record of a deleted reservation that
// had begun: it ends at the deletion.
func (ls *loopState) recordEnded(r *resv.Reservation, now time.Time) {
	if !r.Start.Before(now) {
		return
	}
	var cpus int64
	for _, n := range r.Nodes {
		if i := ls.st.Cluster.NodeIndex(n); i >= 0 {
			cpus += int64(ls.st.Cluster.Nodes[i].CPUs)
		}
	}
	b := ls.resvState()
	for _, rec := range resv.Records(r, ls.c.cfg.ClusterName, cpus, r.Start, now) {
		if rec.End.After(now) {
			rec.End = now
		}
		b.History = append(b.History, rec)
	}
}

// saveResv stores the reservations and the bookkeeping when they changed
// (its own transaction, before the batch's answers go out).
func (ls *loopState) saveResv() error {
	b := ls.resvState()
	b.nodes = nil
	b.Resvs = ls.st.Reservations()
	data, err := json.Marshal(b)
	b.Resvs = nil
	if err != nil {
		return fmt.Errorf("encode reservations: %w", err)
	}
	if string(data) == b.saved {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ls.c.store.Commit(ctx, &Batch{Meta: map[string]string{resvMetaKey: string(data)}}); err != nil {
		return err
	}
	b.saved = string(data)
	return nil
}

// restoreResv puts the stored reservations back into a fresh state; it
// runs before the jobs are replayed, so that jobs naming a reservation
// are accepted again.
func (ls *loopState) restoreResv(meta map[string]string) {
	data := meta[resvMetaKey]
	if data == "" {
		return
	}
	var b resvBook
	if err := json.Unmarshal([]byte(data), &b); err != nil {
		ls.c.log.Error("unreadable reservations left in the store", "err", err)
		return
	}
	for _, r := range b.Resvs {
		if err := ls.st.RestoreReservation(r); err != nil {
			ls.c.log.Error("cannot restore reservation", "reservation", r.Name, "err", err)
		}
	}
	b.Resvs = nil
	if b.Runs == nil {
		b.Runs = map[string]string{}
	}
	b.saved = data
	ls.c.resvBook = &b
}

// startResvTimer runs resvTick on the loop every TickInterval until the
// controller stops.
func (c *Controller) startResvTimer() {
	c.onLoopEvery(c.opts.TickInterval, func(ls *loopState, now time.Time) { ls.resvTick(now) })
}

// resvJobInfo fills what scontrol show job prints of licenses and
// reservations: Licenses= as requested and Reservation= the one the job
// runs in (a magnetic one included), else the one it asked for.
func (ls *loopState) resvJobInfo(j *sched.Job, info *api.JobInfo) {
	if len(j.Req.Licenses) > 0 {
		info.Licenses = j.Req.LicenseSpec
		if info.Licenses == "" {
			info.Licenses = sched.FormatLicenseReq(j.Req.Licenses)
		}
	}
	if name := ls.st.JobReservation(j); name != "" {
		info.Reservation = name
	}
	info.ReqTRES = ls.licenseTRES(info.ReqTRES, j)
	if info.AllocTRES != "" {
		info.AllocTRES = ls.licenseTRES(info.AllocTRES, j)
	}
}

// licenseTRES adds j's licenses to a TRES string when accounting tracks
// them (AccountingStorageTRES=license/NAME), as Slurm's job TRES do.
func (ls *loopState) licenseTRES(s string, j *sched.Job) string {
	if len(j.Req.Licenses) == 0 || s == "" {
		return s
	}
	v, err := tres.Parse(s)
	if err != nil {
		return s
	}
	added := false
	for _, l := range j.Req.Licenses {
		if name := "license/" + l.Name; slices.Contains(ls.c.cfg.Accounting.TRES, name) {
			v[name] += l.Count
			added = true
		}
	}
	if !added {
		return s
	}
	return v.String()
}

// resvNodeState shows idle nodes of an active reservation as RESERVED
// (sinfo resv), of a MAINT one as MAINT (sinfo maint), and busy nodes in
// a MAINT reservation with sinfo's '$' suffix, as Slurm does.
func (ls *loopState) resvNodeState(i int, rec *api.NodeRecord) {
	if len(ls.st.Reservations()) == 0 {
		return
	}
	b := ls.resvState()
	now := ls.c.now()
	if b.nodes == nil || b.nodes.at != now.Unix() {
		r, m := ls.st.ReservedNodes(now)
		b.nodes = &reservedNodes{at: now.Unix(), reserved: r, maint: m}
	}
	reserved, maint := b.nodes.reserved, b.nodes.maint
	if !reserved.Has(i) {
		return
	}
	n := &ls.st.Cluster.Nodes[i]
	idle := n.State.Base() == sched.NodeIdle && n.State&(sched.NodeFlagDrain|sched.NodeFlagFail) == 0
	switch {
	case idle && maint.Has(i):
		rec.State, rec.StateShort, rec.StateLong = "MAINT", "maint", "maintenance"
	case idle:
		rec.State, rec.StateShort, rec.StateLong = "RESERVED", "resv", "reserved"
	case maint.Has(i):
		rec.State += "+MAINT"
		rec.StateShort += "$"
		rec.StateLong += "$"
	default:
		rec.State += "+RESERVED"
	}
	if n.State.Has(sched.NodeFlagNoRespond) && idle {
		rec.StateShort += "*"
		rec.StateLong += "*"
	}
}

// annotateResv sets Reservation on accounting records (sacct
// --reservation): the reservation a run started in, or for a pending
// job the one it asked for.
func (c *Controller) annotateResv(ctx context.Context, recs []api.AcctRecord) {
	res, err := c.do(ctx, func(ls *loopState) (any, error) {
		if ls.recordRuns() {
			_ = ls.saveResv()
		}
		m := map[string]string{}
		for k, v := range ls.resvState().Runs {
			m[k] = v
		}
		for _, j := range ls.st.Jobs() {
			if j.State.Base() == sched.JobPending && j.Req.Reservation != "" {
				m[runKey(uint32(j.ID), int(j.RestartCount))] = j.Req.Reservation
			}
		}
		return m, nil
	})
	if err != nil {
		return
	}
	m := res.(map[string]string)
	for i := range recs {
		if name, ok := m[runKey(recs[i].JobID, recs[i].Restart)]; ok {
			recs[i].Reservation = name
		}
	}
}

// resvUtilization answers sreport reservation utilization: the records
// of the reservations meeting the period (live and ended ones) with the
// CPU time the jobs that ran in them used.
func (c *Controller) resvUtilization(ctx context.Context, w Who, r *http.Request) (any, error) {
	q := r.URL.Query()
	start, err1 := strconv.ParseInt(q.Get("start"), 10, 64)
	end, err2 := strconv.ParseInt(q.Get("end"), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return nil, &apiErr{status: http.StatusBadRequest, msg: "Invalid time specification"}
	}
	from, to := time.Unix(start, 0), time.Unix(end, 0)
	acct, err := c.accounting(ctx, w)
	if err != nil {
		return nil, err
	}
	res, err := c.do(ctx, func(ls *loopState) (any, error) {
		recs := slices.Clone(ls.resvState().History)
		return append(recs, ls.st.ReservationRecords(from, to)...), nil
	})
	if err != nil {
		return nil, err
	}
	now := c.now()
	var jobs []resv.JobRun
	for _, a := range acct.Records {
		if a.Reservation == "" || a.Step != "" || a.Start.IsZero() {
			continue
		}
		e := a.End
		if e.IsZero() {
			e = now
		}
		jobs = append(jobs, resv.JobRun{Reservation: a.Reservation, Start: a.Start, End: e, CPUs: tresCPUs(a.AllocTRES)})
	}
	rows := resv.Utilization(res.([]resv.Record), jobs, from, to)
	return api.TextResponse{Text: resv.FormatUtilization(rows, from, to, q.Get("parsable") == "1", time.Local)}, nil
}

// tresCPUs reads the cpu count of an AllocTRES string.
func tresCPUs(s string) int64 {
	v, err := tres.Parse(s)
	if err != nil {
		return 0
	}
	return v["cpu"]
}
