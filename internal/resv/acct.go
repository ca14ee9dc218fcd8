package resv

import (
	"fmt"
	"strings"
	"time"
)

// Record is a reservation as accounting keeps it: one record per
// occurrence of a recurring reservation (Slurm's slurmdbd starts a new
// one each time the reservation rolls forward), with the CPUs it holds.
type Record struct {
	Cluster string
	Name    string
	Start   time.Time
	End     time.Time
	Nodes   []string
	Flags   Flags
	// CPUs is the number of CPUs the reservation holds (its TRES cpu).
	CPUs int64
}

// Records returns the accounting records of r's occurrences that meet
// [from, to), holding cpus CPUs.
func Records(r *Reservation, cluster string, cpus int64, from, to time.Time) []Record {
	var out []Record
	for _, w := range r.Occurrences(from, to, 10000) {
		out = append(out, Record{Cluster: cluster, Name: r.Name, Start: w.Start, End: w.End,
			Nodes: append([]string(nil), r.Nodes...), Flags: r.Flags, CPUs: cpus})
	}
	return out
}

// JobRun is what the utilization report needs of a job: the reservation
// it ran in (sacct --reservation), its run and its CPUs.
type JobRun struct {
	Reservation string
	Start, End  time.Time
	CPUs        int64
}

// UtilizationRow is one row of `sreport reservation utilization`: CPU
// seconds allocated to jobs inside the reservation's window and the
// reserved CPU seconds left idle.
type UtilizationRow struct {
	Record
	Allocated int64
	Idle      int64
}

// Utilization computes `sreport reservation utilization` for the records
// that meet [from, to): as Slurm documents, the period selects
// reservations but does not truncate their time. Allocated counts each
// job's CPUs over the part of its run inside the reservation's window;
// Idle is the rest of the reserved CPU time (never below zero).
func Utilization(recs []Record, jobs []JobRun, from, to time.Time) []UtilizationRow {
	var out []UtilizationRow
	for _, r := range recs {
		if !r.Start.Before(to) || !r.End.After(from) {
			continue
		}
		row := UtilizationRow{Record: r}
		for _, j := range jobs {
			if j.Reservation != r.Name {
				continue
			}
			s, e := later(j.Start, r.Start), earlier(j.End, r.End)
			if e.After(s) {
				row.Allocated += j.CPUs * int64(e.Sub(s)/time.Second)
			}
		}
		total := r.CPUs * int64(r.End.Sub(r.Start)/time.Second)
		row.Idle = max(total-row.Allocated, 0)
		out = append(out, row)
	}
	return out
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// FormatUtilization renders the report the way sreport prints it: a
// banner with the period and unit, then the Cluster, Name, Start, End,
// TRES Name, Allocated and Idle columns in CPU minutes (parsable with
// '|' separators when parsable is set, as -P).
func FormatUtilization(rows []UtilizationRow, from, to time.Time, parsable bool, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	var b strings.Builder
	head := []string{"Cluster", "Name", "Start", "End", "TRES Name", "Allocated", "Idle"}
	width := []int{9, 9, 19, 19, 14, 13, 13}
	cells := func(v []string) {
		if parsable {
			b.WriteString(strings.Join(v, "|") + "|\n")
			return
		}
		for i, s := range v {
			if len(s) > width[i] {
				s = s[:width[i]-1] + "+"
			}
			fmt.Fprintf(&b, "%*s ", width[i], s)
		}
		b.WriteString("\n")
	}
	if !parsable {
		line := strings.Repeat("-", 80) + "\n"
		b.WriteString(line)
		fmt.Fprintf(&b, "Reservation Utilization %s - %s\n", from.In(loc).Format(timeLayout), to.Add(-time.Second).In(loc).Format(timeLayout))
		b.WriteString("Usage reported in CPU Minutes\n")
		b.WriteString(line)
	}
	cells(head)
	if !parsable {
		dashes := make([]string, len(width))
		for i, w := range width {
			dashes[i] = strings.Repeat("-", w)
		}
		b.WriteString(strings.Join(dashes, " ") + " \n")
	}
	for _, r := range rows {
		cells([]string{r.Cluster, r.Name, r.Start.In(loc).Format(timeLayout), r.End.In(loc).Format(timeLayout), "cpu",
			fmt.Sprint(r.Allocated / 60), fmt.Sprint(r.Idle / 60)})
	}
	return b.String()
}
