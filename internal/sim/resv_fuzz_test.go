package sim

import (
	"testing"

	"github.com/sluice-hpc/sluice/internal/resv"
)

// FuzzParseReservations: a reservations file never panics the reader,
// and every line it accepts is a change (create, update or delete) with
// its line number.
func FuzzParseReservations(f *testing.F) {
	for _, s := range []string{
		"scontrol create reservation ReservationName=m StartTime=now+2hours Duration=1:00:00 Nodes=ALL Flags=MAINT Users=root\n",
		`{"ReservationName":"m","StartTime":7200,"Duration":"60","Nodes":"ALL","Flags":"MAINT","Users":"root"}`,
		"# c\n\ndelete ReservationName=m\n{\"x\":null}\n{",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		lines, err := parseReservations(s)
		if err != nil {
			return
		}
		for _, l := range lines {
			if l.Line < 1 || l.Cmd == nil || l.Cmd.Verb == resv.VerbShow {
				t.Fatalf("accepted %+v from %q", l, s)
			}
		}
	})
}
