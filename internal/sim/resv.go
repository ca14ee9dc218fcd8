package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/resv"
)

// Reservations in a simulated policy (issue 8): a file of `scontrol
// create reservation` lines (Setup.Reservations) is applied at the
// trace's time 0, through the core's own ApplyReservationScript, so a
// maintenance window or a team's booking shapes the replay exactly as it
// would the controller. Times such as now+2hours count from the trace's
// start. The engine is woken at every window boundary (a job held back
// by a MAINT window starts when it ends), ended reservations are purged
// as time advances, and the report shows the reserved capacity and how
// much of it stayed idle.

// resvHorizon is how long after the last submission the engine is still
// woken at reservation boundaries: a recurring reservation would
// otherwise wake a queue that can never drain forever.
const resvHorizon = 30 * 24 * 3600

// resvPolicy is the Core with the policy's reservations: it purges ended
// ones before each pass, notes the reservation each job starts in, and
// asks the engine to wake at the next window boundary.
type resvPolicy struct {
	*Core
	horizon int64
	// runs maps a trace job id to the reservation its last start was in.
	runs map[int64]string
	// history holds the records of reservations purged so far.
	history []resv.Record
}

// withReservations applies the setup's reservations file to core and
// returns the policy the engine should drive; rp is nil when the setup
// has no reservations (the Core is then driven as it is).
func withReservations(core *Core, setup Setup, tr *Trace) (Policy, *resvPolicy, error) {
	if setup.Reservations == "" {
		return core, nil, nil
	}
	data, err := os.ReadFile(setup.Reservations)
	if err != nil {
		return nil, nil, fmt.Errorf("reservations: %w", err)
	}
	lines, err := parseReservations(string(data))
	if err != nil {
		return nil, nil, fmt.Errorf("reservations %s: %w", setup.Reservations, err)
	}
	if err := core.st.ApplyReservationScript(lines, core.at(0), time.UTC); err != nil {
		return nil, nil, fmt.Errorf("reservations %s: %w", setup.Reservations, err)
	}
	var last int64
	for i := range tr.Jobs {
		last = max(last, tr.Jobs[i].Submit)
	}
	rp := &resvPolicy{Core: core, horizon: last + resvHorizon, runs: map[int64]string{}}
	return rp, rp, nil
}

// parseReservations reads a reservations file: `scontrol create
// reservation ...` lines (resv.ParseScript's format) or, one a line,
// JSON objects of the same keys, which create a reservation:
// {"ReservationName":"maint","StartTime":7200,"Duration":"1:00:00",
// "Nodes":"ALL","Flags":"MAINT","Users":"root"}. A number for StartTime
// or EndTime is seconds from the trace's start; other values are written
// as scontrol takes them. Errors name the line.
func parseReservations(text string) ([]resv.ScriptLine, error) {
	var out []resv.ScriptLine
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var words []string
		if strings.HasPrefix(line, "{") {
			w, err := jsonReservation(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
			words = w
		} else {
			words = resv.SplitLine(line)
			if len(words) > 0 && strings.EqualFold(words[0], "scontrol") {
				words = words[1:]
			}
		}
		cmd, err := resv.ParseCommand(words)
		if err == nil && cmd.Verb == resv.VerbShow {
			err = &resv.UsageError{Msg: "show is not a reservation change"}
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out = append(out, resv.ScriptLine{Line: i + 1, Cmd: cmd})
	}
	return out, nil
}

// jsonReservation turns one JSON reservation into scontrol's words.
func jsonReservation(line string) ([]string, error) {
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	words := []string{"create", "reservation"}
	for _, k := range keys {
		var v string
		switch x := m[k].(type) {
		case string:
			v = x
		case json.Number:
			v = x.String()
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && (strings.EqualFold(k, "StartTime") || strings.EqualFold(k, "EndTime")) {
				v = "now+" + strconv.FormatInt(n, 10) + "seconds"
			}
		case bool:
			v = strconv.FormatBool(x)
		default:
			return nil, fmt.Errorf("%s: a string or a number is needed", k)
		}
		words = append(words, k+"="+v)
	}
	return words, nil
}

// Schedule implements Policy: purge, one core pass, note the starts in a
// reservation, wake at the next boundary.
func (p *resvPolicy) Schedule(now int64, backfill bool) Decisions {
	t := p.at(now)
	p.purge(t)
	d := p.Core.Schedule(now, backfill)
	for _, s := range d.Starts {
		if sid, ok := p.ids.toSched(s.ID); ok {
			if j := p.st.Job(sid); j != nil {
				if name := p.st.JobReservation(j); name != "" {
					p.runs[s.ID] = name
				}
			}
		}
	}
	if w, ok := p.nextBoundary(t); ok && w > now && w <= p.horizon {
		d.Wake = append(d.Wake, w)
	}
	return d
}

// purge removes the reservations that ended by t, keeping their records.
func (p *resvPolicy) purge(t time.Time) {
	if len(p.st.Reservations()) == 0 {
		return
	}
	cpus := map[string]int64{}
	for _, r := range p.st.ReservationRecords(time.Time{}, t.Add(time.Second)) {
		cpus[r.Name] = r.CPUs
	}
	for _, r := range p.st.PurgeReservations(t) {
		p.history = append(p.history, resv.Records(r, p.st.Cluster.Name, cpus[r.Name], r.Start, t.Add(time.Second))...)
	}
}

// nextBoundary is the next start or end of a reservation window after t,
// in seconds from the trace's start.
func (p *resvPolicy) nextBoundary(t time.Time) (int64, bool) {
	var next time.Time
	for _, r := range p.st.Reservations() {
		w := r.Window(t)
		b := w.End
		if w.Start.After(t) {
			b = w.Start
		}
		if b.After(t) && (next.IsZero() || b.Before(next)) {
			next = b
		}
	}
	if next.IsZero() {
		return 0, false
	}
	return next.Unix() - p.epoch, true
}

// ResvReport is a policy's reserved capacity: one row per reservation
// window (occurrence) met by the replay, with the CPU time jobs used
// inside it and the reserved CPU time left idle.
type ResvReport struct {
	Windows []ResvWindow `json:"windows"`
	// ReservedCPUSeconds is the CPU time held by the windows, IdleCPUSeconds
	// the part no job in the reservation used.
	ReservedCPUSeconds int64 `json:"reserved_cpu_s"`
	IdleCPUSeconds     int64 `json:"idle_cpu_s"`
	// IdleShare is IdleCPUSeconds / ReservedCPUSeconds; CapacityShare is
	// ReservedCPUSeconds over the cluster's CPU time in the replay.
	IdleShare     float64 `json:"idle_share"`
	CapacityShare float64 `json:"capacity_share"`
}

// ResvWindow is one reservation occurrence (times in seconds from the
// trace's start).
type ResvWindow struct {
	Name      string `json:"name"`
	Start     int64  `json:"start"`
	End       int64  `json:"end"`
	Flags     string `json:"flags,omitempty"`
	CPUs      int64  `json:"cpus"`
	Allocated int64  `json:"allocated_cpu_s"`
	Idle      int64  `json:"idle_cpu_s"`
}

// report computes the reserved capacity over the replay [0, end of the
// last job] from the reservation records and the jobs that started in
// them (resv.Utilization, the computation of sreport reservation
// utilization).
func (p *resvPolicy) report(results []JobResult) *ResvReport {
	if p == nil {
		return nil
	}
	var end int64
	for i := range results {
		end = max(end, results[i].End, results[i].Submit)
	}
	from, to := p.at(0), p.at(end+1)
	recs := append(append([]resv.Record(nil), p.history...), p.st.ReservationRecords(from, to)...)
	var jobs []resv.JobRun
	for i := range results {
		r := &results[i]
		name, ok := p.runs[r.ID]
		if !ok || r.Start < 0 {
			continue
		}
		e := r.End
		if e < 0 {
			e = end
		}
		jobs = append(jobs, resv.JobRun{Reservation: name, Start: p.at(r.Start), End: p.at(e), CPUs: r.CPUs})
	}
	out := &ResvReport{}
	for _, row := range resv.Utilization(recs, jobs, from, to) {
		w := ResvWindow{Name: row.Name, Start: row.Start.Unix() - p.epoch, End: row.End.Unix() - p.epoch,
			CPUs: row.CPUs, Allocated: row.Allocated, Idle: row.Idle}
		if row.Flags != 0 {
			w.Flags = row.Flags.String()
		}
		out.Windows = append(out.Windows, w)
		out.ReservedCPUSeconds += row.Allocated + row.Idle
		out.IdleCPUSeconds += row.Idle
	}
	if out.ReservedCPUSeconds > 0 {
		out.IdleShare = float64(out.IdleCPUSeconds) / float64(out.ReservedCPUSeconds)
	}
	if total := p.capa.CPUs * max(end, 1); total > 0 {
		out.CapacityShare = float64(out.ReservedCPUSeconds) / float64(total)
	}
	return out
}

// ReservationSummary is the text summary of a run's reservations ("" when
// it has none): reserved capacity and its idle share, then one line per
// window.
func ReservationSummary(r Run) string {
	rr := r.Reservations
	if rr == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nReservations (%s): %d windows, %.1f CPU-hours reserved (%.1f%% of capacity), %.1f%% of it idle\n",
		r.Name, len(rr.Windows), float64(rr.ReservedCPUSeconds)/3600, rr.CapacityShare*100, rr.IdleShare*100)
	for _, w := range rr.Windows {
		fmt.Fprintf(&b, "  %-16s t=%d..%d s  %d CPUs  flags=%s  allocated %.1f CPU-h  idle %.1f CPU-h\n",
			w.Name, w.Start, w.End, w.CPUs, nullFlags(w.Flags), float64(w.Allocated)/3600, float64(w.Idle)/3600)
	}
	return b.String()
}

func nullFlags(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

// writeReservations adds the reserved-capacity table to the HTML report
// (nothing when no policy has reservations).
func writeReservations(b *strings.Builder, runs []Run) {
	has := false
	for _, r := range runs {
		has = has || r.Reservations != nil
	}
	if !has {
		return
	}
	b.WriteString("<h2>Reservations</h2>\n<table><tr><th>policy</th><th>reservation</th><th>start (s)</th><th>end (s)</th><th>flags</th><th>CPUs</th><th>allocated CPU-h</th><th>idle CPU-h</th><th>idle share</th></tr>\n")
	for _, r := range runs {
		if r.Reservations == nil {
			continue
		}
		for _, w := range r.Reservations.Windows {
			share := 0.0
			if t := w.Allocated + w.Idle; t > 0 {
				share = float64(w.Idle) / float64(t)
			}
			fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%s</td><td>%d</td><td>%.1f</td><td>%.1f</td><td>%s</td></tr>\n",
				esc(r.Name), esc(w.Name), w.Start, w.End, esc(nullFlags(w.Flags)), w.CPUs, float64(w.Allocated)/3600,
				float64(w.Idle)/3600, fmtPct(share*100))
		}
		fmt.Fprintf(b, "<tr><td>%s</td><td><b>total</b></td><td></td><td></td><td></td><td></td><td>%.1f</td><td>%.1f</td><td>%s</td></tr>\n",
			esc(r.Name), float64(r.Reservations.ReservedCPUSeconds-r.Reservations.IdleCPUSeconds)/3600,
			float64(r.Reservations.IdleCPUSeconds)/3600, fmtPct(r.Reservations.IdleShare*100))
	}
	b.WriteString("</table>\n<p class=\"note\">Reserved capacity is the CPU time the reservation windows hold; idle is the part no job running in the reservation used.</p>\n")
}
