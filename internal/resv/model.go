package resv

import (
	"math"
	"strings"
	"time"
)

// Infinite is Duration=UNLIMITED (the same value as duration.Infinite).
const Infinite time.Duration = math.MaxInt64

// unlimitedSpan is how long an UNLIMITED reservation lasts in practice:
// Slurm sets its end one year after its start.
const unlimitedSpan = 365 * 24 * time.Hour

// License is a reserved license count (Licenses=matlab:2).
type License struct {
	Name  string
	Count int64
}

// Reservation is one advanced reservation as scontrol shows it. Start and
// End are the first occurrence for a recurring reservation (Window gives
// the one in effect at a time) and, for TIME_FLOAT, End is unused: the
// start stays FloatOffset ahead of now.
type Reservation struct {
	// Name is ReservationName.
	Name string
	// Start and End are StartTime and EndTime; Duration is End-Start, or
	// Infinite for Duration=UNLIMITED (End is then a year after Start).
	Start    time.Time
	End      time.Time
	Duration time.Duration
	// Nodes are the reserved nodes (expanded, in cluster order); NodeCnt
	// their number (the requested count until nodes are chosen).
	Nodes   []string
	NodeCnt int
	// CoreCnt is the reserved core count (Sluice reserves whole nodes; see
	// docs/differences.md).
	CoreCnt int
	// Features is Features= (nodes chosen for a count must have them).
	Features string
	// Partition is PartitionName= ("" = none given).
	Partition string
	// Flags is Flags=.
	Flags Flags
	// Users and Accounts are the access lists; a Denied list holds names
	// given with '-' (every other user or account may use it).
	Users          []string
	UsersDenied    bool
	Accounts       []string
	AccountsDenied bool
	// Groups is Groups= (members of these groups may use it).
	Groups []string
	// Licenses are the reserved licenses.
	Licenses []License
	// TRES is TRES= as given (cpu=, node=, license/...).
	TRES string
	// BurstBuffer is BurstBuffer= as given.
	BurstBuffer string
	// MaxStartDelay is MaxStartDelay= (0 = unset).
	MaxStartDelay time.Duration
	// PurgeComp is the idle time after which a PURGE_COMP reservation is
	// purged (Slurm's default is 5 minutes).
	PurgeComp time.Duration
	// FloatOffset is, for TIME_FLOAT, how far ahead of now the start stays;
	// FloatEnd, when set (EndTime= given), is the fixed end the floating
	// start moves towards (the reservation expires once it is reached).
	FloatOffset time.Duration
	FloatEnd    time.Time
	// Comment is Comment=.
	Comment string
}

// Clone returns a deep copy.
func (r *Reservation) Clone() *Reservation {
	c := *r
	c.Nodes = append([]string(nil), r.Nodes...)
	c.Users = append([]string(nil), r.Users...)
	c.Accounts = append([]string(nil), r.Accounts...)
	c.Groups = append([]string(nil), r.Groups...)
	c.Licenses = append([]License(nil), r.Licenses...)
	return &c
}

// span is the reservation's length (a year for UNLIMITED).
func (r *Reservation) span() time.Duration {
	if r.Duration == Infinite || r.Duration <= 0 && r.End.IsZero() {
		return unlimitedSpan
	}
	if r.Duration > 0 {
		return r.Duration
	}
	return r.End.Sub(r.Start)
}

// Window is one occurrence of a reservation: [Start, End).
type Window struct {
	Start, End time.Time
}

// Contains reports whether t is inside the window.
func (w Window) Contains(t time.Time) bool { return !t.Before(w.Start) && t.Before(w.End) }

// Overlaps reports whether [s, e) meets the window.
func (w Window) Overlaps(s, e time.Time) bool { return s.Before(w.End) && w.Start.Before(e) }

// Recurring reports whether the reservation repeats.
func (r *Reservation) Recurring() bool { return r.Flags&Repeating != 0 }

// Window returns the occurrence in effect at now: the current one if now
// is inside it, else the next one. A recurring reservation rolls forward
// exactly as Slurm moves its start and end once an occurrence is over;
// a TIME_FLOAT reservation starts FloatOffset after now. For a one-off
// reservation that has ended it returns its only window (see Expired).
func (r *Reservation) Window(now time.Time) Window {
	if r.Flags&FlagTimeFloat != 0 {
		s := now.Add(r.FloatOffset)
		if !r.FloatEnd.IsZero() {
			return Window{s, later(s, r.FloatEnd)}
		}
		return Window{s, s.Add(r.span())}
	}
	w := Window{r.Start, r.Start.Add(r.span())}
	if !r.Recurring() || now.Before(w.End) {
		return w
	}
	w = r.skipAhead(w, now)
	for i := 0; i < 10000 && !now.Before(w.End); i++ {
		w = r.next(w)
	}
	return w
}

// skipAhead moves w forward by whole periods (whole weeks for WEEKDAY and
// WEEKEND, whose pattern repeats weekly) while it stays before now, so
// that an old recurring reservation costs no more than a new one.
func (r *Reservation) skipAhead(w Window, now time.Time) Window {
	gap := now.Sub(w.End)
	if gap <= 0 {
		return w
	}
	d := w.End.Sub(w.Start)
	switch {
	case r.Flags&FlagHourly != 0:
		k := int64(gap / time.Hour)
		s := w.Start.Add(time.Duration(k) * time.Hour)
		return Window{s, s.Add(d)}
	case r.Flags&FlagDaily != 0:
		s := w.Start.AddDate(0, 0, int(gap/(24*time.Hour)))
		return Window{s, s.Add(d)}
	default:
		s := w.Start.AddDate(0, 0, 7*int(gap/(7*24*time.Hour)))
		return Window{s, s.Add(d)}
	}
}

// next returns the occurrence after w.
func (r *Reservation) next(w Window) Window {
	d := w.End.Sub(w.Start)
	s := w.Start
	switch {
	case r.Flags&FlagHourly != 0:
		s = s.Add(time.Hour)
	case r.Flags&FlagDaily != 0:
		s = s.AddDate(0, 0, 1)
	case r.Flags&FlagWeekly != 0:
		s = s.AddDate(0, 0, 7)
	case r.Flags&FlagWeekday != 0:
		s = s.AddDate(0, 0, 1)
		for s.Weekday() == time.Saturday || s.Weekday() == time.Sunday {
			s = s.AddDate(0, 0, 1)
		}
	case r.Flags&FlagWeekend != 0:
		s = s.AddDate(0, 0, 1)
		for s.Weekday() != time.Saturday && s.Weekday() != time.Sunday {
			s = s.AddDate(0, 0, 1)
		}
	default:
		return Window{w.End.Add(unlimitedSpan * 100), w.End.Add(unlimitedSpan * 100)}
	}
	return Window{s, s.Add(d)}
}

// Occurrences returns the windows that meet [from, until), in time order
// (at most max of them; a recurring reservation has many).
func (r *Reservation) Occurrences(from, until time.Time, max int) []Window {
	var out []Window
	w := r.Window(from)
	for len(out) < max && w.Start.Before(until) {
		if w.End.After(from) {
			out = append(out, w)
		}
		if !r.Recurring() || r.Flags&FlagTimeFloat != 0 {
			break
		}
		w = r.next(w)
	}
	return out
}

// Active reports whether now is inside the reservation's window (State=ACTIVE).
func (r *Reservation) Active(now time.Time) bool { return r.Window(now).Contains(now) }

// Expired reports whether a one-off reservation has ended: Slurm purges
// it then. Recurring and floating reservations never expire.
func (r *Reservation) Expired(now time.Time) bool {
	if r.Flags&FlagTimeFloat != 0 {
		return !r.FloatEnd.IsZero() && !now.Add(r.FloatOffset).Before(r.FloatEnd)
	}
	if r.Recurring() {
		return false
	}
	return !now.Before(r.Window(now).End)
}

// UserAllowed reports whether user may use the reservation by the Users
// list alone (true when the list is empty).
func (r *Reservation) UserAllowed(user string) bool {
	return listAllows(r.Users, r.UsersDenied, user)
}

// AccountAllowed reports whether account may use the reservation by the
// Accounts list alone (true when the list is empty).
func (r *Reservation) AccountAllowed(account string) bool {
	return listAllows(r.Accounts, r.AccountsDenied, account)
}

// Allows reports Slurm's access rule: when both Users (or Groups) and
// Accounts are given a job must match both; a denied list admits everyone
// else; a reservation with neither admits nobody (Slurm requires one).
func (r *Reservation) Allows(user, account string, groups []string) bool {
	userList := len(r.Users) > 0 || len(r.Groups) > 0
	if !userList && len(r.Accounts) == 0 {
		return false
	}
	if len(r.Users) > 0 && !r.UserAllowed(user) {
		return false
	}
	if len(r.Users) == 0 && len(r.Groups) > 0 && !anyIn(r.Groups, groups) {
		return false
	}
	return len(r.Accounts) == 0 || r.AccountAllowed(account)
}

func listAllows(list []string, denied bool, name string) bool {
	if len(list) == 0 {
		return true
	}
	in := false
	for _, n := range list {
		if n == name || strings.EqualFold(n, "ALL") && !denied {
			in = true
			break
		}
	}
	return in != denied
}

func anyIn(list, names []string) bool {
	for _, a := range list {
		for _, b := range names {
			if a == b {
				return true
			}
		}
	}
	return false
}
