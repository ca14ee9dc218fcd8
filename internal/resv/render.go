package resv

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/duration"
	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// timeLayout is how scontrol prints times (ISO 8601, local time).
const timeLayout = "2006-01-02T15:04:05"

// ShowOptions are the scontrol output switches that change the layout.
type ShowOptions struct {
	// OneLiner is `scontrol -o`: every field on one line.
	OneLiner bool
	// Loc is the time zone times are printed in (nil = UTC).
	Loc *time.Location
}

// State returns ACTIVE inside the window in effect at now, else INACTIVE.
func (r *Reservation) State(now time.Time) string {
	if r.Active(now) {
		return "ACTIVE"
	}
	return "INACTIVE"
}

// Show renders one reservation as `scontrol show reservation` prints it
// (Slurm 22.05's layout: five lines indented by three blanks, or one
// line with -o), at now (the window in effect and State depend on it).
func Show(r *Reservation, now time.Time, o ShowOptions) string {
	loc := o.Loc
	if loc == nil {
		loc = time.UTC
	}
	w := r.Window(now)
	dur := duration.Format(w.End.Sub(w.Start))
	if r.Duration == Infinite {
		dur = "UNLIMITED"
	}
	lines := []string{
		fmt.Sprintf("ReservationName=%s StartTime=%s EndTime=%s Duration=%s", r.Name,
			w.Start.In(loc).Format(timeLayout), w.End.In(loc).Format(timeLayout), dur),
		fmt.Sprintf("Nodes=%s NodeCnt=%d CoreCnt=%d Features=%s PartitionName=%s Flags=%s",
			hostlist.Compress(r.Nodes), len(r.Nodes), r.CoreCnt, null(r.Features), null(r.Partition), r.Flags),
		"TRES=" + r.tresString(),
		fmt.Sprintf("Users=%s Groups=%s Accounts=%s Licenses=%s State=%s BurstBuffer=%s",
			list(r.Users, r.UsersDenied), list(r.Groups, false), list(r.Accounts, r.AccountsDenied),
			licString(r.Licenses), r.State(now), null(r.BurstBuffer)),
		"MaxStartDelay=" + maxDelay(r.MaxStartDelay),
	}
	if r.Comment != "" {
		lines = append(lines, "Comment="+r.Comment)
	}
	if o.OneLiner {
		return strings.Join(lines, " ") + "\n"
	}
	return lines[0] + "\n   " + strings.Join(lines[1:], "\n   ") + "\n\n"
}

// ShowAll renders every reservation, or Slurm's "No reservations in the
// system" when there are none.
func ShowAll(rs []*Reservation, now time.Time, o ShowOptions) string {
	if len(rs) == 0 {
		return "No reservations in the system\n"
	}
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(Show(r, now, o))
	}
	return b.String()
}

// SinfoT renders `sinfo -T` (--reservation): one row per reservation
// with its name, state, window, duration and nodes.
func SinfoT(rs []*Reservation, now time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %8s %19s %19s %11s %s\n", "RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST")
	for _, r := range rs {
		w := r.Window(now)
		fmt.Fprintf(&b, "%-14s %8s %19s %19s %11s %s\n", r.Name, r.State(now), w.Start.In(loc).Format(timeLayout),
			w.End.In(loc).Format(timeLayout), duration.Format(w.End.Sub(w.Start)), hostlist.Compress(r.Nodes))
	}
	return b.String()
}

func null(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

func list(names []string, denied bool) string {
	if len(names) == 0 {
		return "(null)"
	}
	if !denied {
		return strings.Join(names, ",")
	}
	return "-" + strings.Join(names, ",-")
}

func licString(ls []License) string {
	if len(ls) == 0 {
		return "(null)"
	}
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.Name + ":" + strconv.FormatInt(l.Count, 10)
	}
	return strings.Join(parts, ",")
}

func maxDelay(d time.Duration) string {
	if d <= 0 {
		return "(null)"
	}
	return duration.Format(d)
}

// tresString is the reservation's TRES as Slurm prints it: cpu= the
// reserved cores, then license/NAME= counts.
func (r *Reservation) tresString() string {
	var parts []string
	if r.CoreCnt > 0 {
		parts = append(parts, "cpu="+strconv.Itoa(r.CoreCnt))
	}
	for _, l := range r.Licenses {
		parts = append(parts, "license/"+l.Name+"="+strconv.FormatInt(l.Count, 10))
	}
	return strings.Join(parts, ",")
}
