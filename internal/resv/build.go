package resv

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/duration"
	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// Given records which keys a command set, so that the cluster-level checks
// (node names, busy nodes, overlap) run only on what changed.
type Given map[string]bool

// AllNodes is the Nodes= value that reserves every node ("ALL").
const AllNodes = "ALL"

// Build applies the fields of cmd to base (nil for create) at now, in
// loc, and returns the new record and the keys it set. It checks what
// scontrol and slurmctld check without knowing the cluster: times, flags,
// counts, list syntax, end after start, and, for create, that a start
// time, an end or duration, users or accounts, and some resource are
// given. Nodes=ALL is kept as the single name "ALL" for the caller to
// resolve. base is never modified.
func Build(cmd *Command, base *Reservation, now time.Time, loc *time.Location) (*Reservation, Given, error) {
	r := &Reservation{Name: cmd.Name}
	if base != nil {
		r = base.Clone()
	}
	given := Given{}
	var startSet, endSet, durSet bool
	var end time.Time
	var dur time.Duration
	for _, f := range cmd.Fields {
		given[f.Key] = true
		var err error
		switch f.Key {
		case "StartTime":
			r.Start, err = parseWhen(f.Value, now, loc)
			startSet = true
		case "EndTime":
			end, err = parseWhen(f.Value, now, loc)
			endSet = true
		case "Duration":
			dur, err = parseDuration(f.Value)
			durSet = true
		case "Nodes":
			err = r.setNodes(f)
		case "NodeCnt":
			r.NodeCnt, err = parseCounts(f.Value)
		case "CoreCnt":
			r.CoreCnt, err = parseCounts(f.Value)
		case "PartitionName":
			r.Partition = f.Value
		case "Flags":
			err = r.setFlags(f, base != nil)
		case "Features":
			r.Features = f.Value
		case "Users":
			r.Users, r.UsersDenied, err = applyList(r.Users, r.UsersDenied, f, base != nil)
		case "Accounts":
			r.Accounts, r.AccountsDenied, err = applyList(r.Accounts, r.AccountsDenied, f, base != nil)
		case "Groups":
			var denied bool
			r.Groups, denied, err = applyList(r.Groups, false, f, base != nil)
			if denied {
				err = fmt.Errorf("groups cannot be denied")
			}
		case "Licenses":
			r.Licenses, err = ParseLicenses(f.Value)
		case "TRES":
			err = r.setTRES(f.Value)
		case "BurstBuffer":
			r.BurstBuffer = f.Value
		case "MaxStartDelay":
			r.MaxStartDelay, err = duration.Parse(f.Value)
		case "Comment":
			r.Comment = f.Value
		case "Skip":
			if base == nil || !base.Recurring() {
				return nil, nil, ErrInvalid
			}
			w := r.Window(now)
			nw := r.next(w)
			r.Start, r.End = nw.Start, nw.End
		case "Watts":
		}
		if err != nil {
			return nil, nil, fieldError(f, err)
		}
	}
	if base == nil && !startSet {
		return nil, nil, &UsageError{"StartTime must be specified.  No reservation created."}
	}
	if base == nil && !endSet && !durSet {
		return nil, nil, &UsageError{"Duration or EndTime must be specified.  No reservation created."}
	}
	if err := r.settleTimes(base, now, startSet, endSet, durSet, end, dur); err != nil {
		return nil, nil, err
	}
	if base == nil {
		if err := checkCreate(r, given); err != nil {
			return nil, nil, err
		}
	}
	if r.Flags&FlagPurgeComp != 0 && r.PurgeComp == 0 {
		r.PurgeComp = 5 * time.Minute
	}
	return r, given, nil
}

func fieldError(f Field, err error) error {
	switch err {
	case ErrInvalidTime, ErrInvalid, ErrInvalidLicenses, ErrInvalidNode:
		return err
	}
	if _, ok := err.(*UsageError); ok {
		return err
	}
	return &UsageError{fmt.Sprintf("Invalid %s value: %s", f.Key, f.Value)}
}

// parseWhen reads a StartTime/EndTime value; "now" is exact.
func parseWhen(v string, now time.Time, loc *time.Location) (time.Time, error) {
	t, err := duration.ParseTime(v, now, loc)
	if err != nil {
		return time.Time{}, ErrInvalidTime
	}
	return t, nil
}

// parseDuration reads Duration=: Slurm's time-limit syntax (a bare number
// is minutes) or UNLIMITED/INFINITE; seconds round up to the minute.
func parseDuration(v string) (time.Duration, error) {
	d, err := duration.Parse(v)
	if err != nil {
		return 0, ErrInvalidTime
	}
	if d == duration.Infinite {
		return Infinite, nil
	}
	return duration.RoundUpMinute(d), nil
}

// settleTimes fixes Start, End and Duration from what was given: an end
// time wins over the old duration, a duration over the old end, and the
// end must come after the start.
func (r *Reservation) settleTimes(base *Reservation, now time.Time, startSet, endSet, durSet bool, end time.Time, dur time.Duration) error {
	if base != nil && startSet && base.Active(now) && !r.Start.Equal(base.Start) {
		return ErrInvalidTime // "You cannot update the StartTime of a reservation in ACTIVE state"
	}
	switch {
	case durSet:
		r.Duration = dur
	case endSet:
		r.Duration = end.Sub(r.Start)
	case base != nil:
		r.Duration = base.Duration
	}
	if r.Duration == Infinite {
		r.End = r.Start.Add(unlimitedSpan)
	} else {
		r.End = r.Start.Add(r.Duration)
	}
	if (startSet || endSet || durSet) && r.Duration != Infinite && r.Duration <= 0 {
		return ErrInvalidTime
	}
	if r.Flags&FlagTimeFloat != 0 {
		if r.Recurring() {
			return ErrInvalid // "Repeating floating reservations are not supported"
		}
		if startSet || base == nil {
			r.FloatOffset = max(r.Start.Sub(now), 0)
		}
		if endSet && !durSet {
			r.FloatEnd = end
		}
	}
	return nil
}

// checkCreate applies scontrol's own checks of a create request.
func checkCreate(r *Reservation, given Given) error {
	switch {
	case len(r.Users) == 0 && len(r.Groups) == 0 && len(r.Accounts) == 0:
		return &UsageError{"Either Users/Groups and/or Accounts must be specified.  No reservation created."}
	case len(r.Nodes) == 0 && r.NodeCnt == 0 && r.CoreCnt == 0 && len(r.Licenses) == 0 && r.BurstBuffer == "" && r.Partition == "":
		return &UsageError{"Nodes, NodeCnt, CoreCnt, TRES, BurstBuffer, Licenses or PartitionName must be specified.  No reservation created."}
	case len(r.Nodes) == 0 && r.NodeCnt == 0 && r.CoreCnt == 0 && r.Partition == "" && r.Flags&FlagAnyNodes == 0:
		return &UsageError{"Licenses or BurstBuffer without nodes requires Flags=LICENSE_ONLY (ANY_NODES).  No reservation created."}
	}
	return nil
}

func (r *Reservation) setNodes(f Field) error {
	if strings.EqualFold(strings.TrimSpace(f.Value), AllNodes) {
		// slurmctld marks Nodes=ALL as named nodes, all of them (oracle:
		// Flags=MAINT,SPEC_NODES,ALL_NODES, no partition).
		r.Nodes = []string{AllNodes}
		r.Flags |= FlagSpecNodes | FlagAllNodes
		return nil
	}
	r.Flags &^= FlagAllNodes
	names, err := hostlist.Expand(f.Value)
	if err != nil {
		return ErrInvalidNode
	}
	switch f.Op {
	case '+':
		for _, n := range names {
			if !slices.Contains(r.Nodes, n) {
				r.Nodes = append(r.Nodes, n)
			}
		}
	case '-':
		r.Nodes = slices.DeleteFunc(r.Nodes, func(n string) bool { return slices.Contains(names, n) })
	default:
		r.Nodes = names
	}
	if len(names) > 0 {
		r.Flags |= FlagSpecNodes
	} else if f.Op == '=' {
		r.Flags &^= FlagSpecNodes
	}
	r.NodeCnt = len(r.Nodes)
	return nil
}

// setFlags applies Flags=, Flags+= or Flags-= (updates only for the
// last two; a create's Flags-= is an error).
func (r *Reservation) setFlags(f Field, update bool) error {
	fl, purge, err := ParseFlags(f.Value)
	if err != nil {
		return &UsageError{fmt.Sprintf("Invalid Flags value: %s", f.Value)}
	}
	if purge != "" {
		d, err := duration.Parse(purge)
		if err != nil {
			return ErrInvalidTime
		}
		r.PurgeComp = d
	}
	if update && fl&FlagTimeFloat != 0 && f.Op != '-' && r.Flags&FlagTimeFloat == 0 {
		return ErrInvalid // TIME_FLOAT cannot be added to an existing reservation
	}
	switch {
	case f.Op == '-':
		if !update {
			return &UsageError{"Flags-= is only valid for update"}
		}
		r.Flags &^= fl
	case f.Op == '+' || !update:
		r.Flags |= fl
	default:
		r.Flags = r.Flags&(FlagSpecNodes|FlagAllNodes|FlagTimeFloat) | fl
	}
	return nil
}

// applyList applies Users=/Accounts=/Groups= with their '-' (deny) and,
// on update, '+='/'-=' forms. Allowed and denied names cannot be mixed.
func applyList(cur []string, curDenied bool, f Field, update bool) ([]string, bool, error) {
	var names []string
	deny := 0
	for _, w := range strings.Split(f.Value, ",") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		if strings.HasPrefix(w, "-") {
			deny++
			w = w[1:]
		}
		if w == "" {
			return nil, false, &UsageError{"empty name in list"}
		}
		names = append(names, w)
	}
	if deny > 0 && deny != len(names) {
		return nil, false, ErrInvalid // mixing allowed and denied names
	}
	denied := deny > 0
	switch {
	case f.Op == '-' && !update:
		return names, true, nil // Users-=a,b on create: deny them
	case f.Op == '-':
		out := slices.DeleteFunc(slices.Clone(cur), func(n string) bool { return slices.Contains(names, n) })
		return out, curDenied && len(out) > 0, nil
	case f.Op == '+':
		if len(cur) > 0 && denied != curDenied {
			return nil, false, ErrInvalid
		}
		out := slices.Clone(cur)
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out, denied, nil
	}
	return names, denied, nil
}

// parseCounts reads NodeCnt=/CoreCnt=: one count or a comma list (summed),
// each with an optional k/K (x1024) suffix.
func parseCounts(v string) (int, error) {
	total := 0
	for _, w := range strings.Split(v, ",") {
		w = strings.TrimSpace(w)
		mult := 1
		if n := len(w); n > 0 && (w[n-1] == 'k' || w[n-1] == 'K') {
			mult, w = 1024, w[:n-1]
		}
		n, err := strconv.Atoi(w)
		if err != nil || n < 0 || n > 1<<24 {
			return 0, fmt.Errorf("bad count %q", w)
		}
		total += n * mult
		if total > 1<<26 {
			return 0, fmt.Errorf("count too large")
		}
	}
	return total, nil
}

// ParseLicenses reads a Licenses= value: `name[:count]` or `name[*count]`
// separated by commas (count 1 when omitted).
func ParseLicenses(v string) ([]License, error) {
	var out []License
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	for _, w := range strings.Split(v, ",") {
		w = strings.TrimSpace(w)
		name, cnt, has := strings.Cut(w, ":")
		if !has {
			name, cnt, has = strings.Cut(w, "*")
		}
		l := License{Name: name, Count: 1}
		if has {
			n, err := strconv.ParseInt(cnt, 10, 64)
			if err != nil || n < 0 {
				return nil, ErrInvalidLicenses
			}
			l.Count = n
		}
		if name == "" || strings.ContainsAny(name, " =|") {
			return nil, ErrInvalidLicenses
		}
		if i := slices.IndexFunc(out, func(o License) bool { return o.Name == name }); i >= 0 {
			out[i].Count += l.Count
			continue
		}
		out = append(out, l)
	}
	return out, nil
}

// setTRES reads TRES=: cpu= (cores), node= (nodes), license/NAME=,
// bb/NAME= (burst buffer).
func (r *Reservation) setTRES(v string) error {
	r.TRES = v
	for _, w := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(w), "=")
		if !ok {
			return fmt.Errorf("bad TRES %q", w)
		}
		lk := strings.ToLower(k)
		var err error
		switch {
		case lk == "cpu":
			r.CoreCnt, err = parseCounts(val)
		case lk == "node":
			r.NodeCnt, err = parseCounts(val)
		case strings.HasPrefix(lk, "license/"):
			n, perr := strconv.ParseInt(val, 10, 64)
			if perr != nil || n < 0 {
				return ErrInvalidLicenses
			}
			r.Licenses = append(r.Licenses, License{Name: k[len("license/"):], Count: n})
		case strings.HasPrefix(lk, "bb/"):
			r.BurstBuffer = k[3:] + ":" + val
		default:
			return fmt.Errorf("unsupported TRES %q", k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
