package acct

import (
	"sort"
	"strconv"
	"strings"
)

// applyAssocSpecs writes the association attributes among specs (shares,
// limits, QOS, DefaultQOS, Priority) to a; other keys are ignored here.
func applyAssocSpecs(st *State, a *Association, specs []Spec) error {
	for _, s := range specs {
		if err := applyAssocSpec(st, a, s); err != nil {
			return err
		}
	}
	return checkDefaultQOS(st, a)
}

func applyAssocSpec(st *State, a *Association, s Spec) error {
	if s.Op != '=' && s.Key != "QOS" {
		return errorf("Invalid operator '%c=' for %s", s.Op, s.Key)
	}
	if f, ok := assocCountFields()[s.Key]; ok {
		return setCount(f(&a.AssocLimits), s)
	}
	if f, ok := assocWallFields()[s.Key]; ok {
		return setWall(f(&a.AssocLimits), s)
	}
	if f, ok := assocTRESFields()[s.Key]; ok {
		return setTRES(st, f(&a.AssocLimits), s)
	}
	switch s.Key {
	case "Shares":
		return setShares(a, s.Value)
	case "Priority":
		return setCount(&a.Priority, s)
	case "DefaultQOS":
		return setDefaultQOS(st, a, s.Value)
	case "QOS":
		return setAssocQOS(st, a, s)
	}
	return nil
}

func setCount(p *Limit, s Spec) error {
	v, err := parseCount(s.Key, s.Value)
	if err != nil {
		return errorf("%v", err)
	}
	*p = v
	return nil
}

func setWall(p *Limit, s Spec) error {
	v, err := parseWallMinutes(s.Key, s.Value)
	if err != nil {
		return errorf("%v", err)
	}
	*p = v
	return nil
}

func setTRES(st *State, p *tresVec, s Spec) error {
	up, err := parseTRES(s.Key, s.Value)
	if err != nil {
		return errorf("%v", err)
	}
	for k := range up.set {
		st.EnsureTRES(k)
	}
	*p = up.apply(*p)
	return nil
}

// setShares parses FairShare=N|parent; -1 restores the default share.
func setShares(a *Association, v string) error {
	if strings.EqualFold(v, "parent") {
		a.Shares = SharesParent
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil || n < -1 || n > 1<<31:
		return errorf("Invalid value for FairShare: '%s'", v)
	case n == -1:
		a.Shares = DefaultShares
	default:
		a.Shares = n
	}
	return nil
}

func setDefaultQOS(st *State, a *Association, v string) error {
	v = strings.ToLower(strings.TrimSpace(v))
	if v == "" || v == "-1" {
		a.DefaultQOS = ""
		return nil
	}
	if st.QOS[v] == nil {
		return badQOS(st, v)
	}
	a.DefaultQOS = v
	return nil
}

// badQOS is sacctmgr's error for a QOS name that does not exist; it
// lists the QOS in the order they were created (Slurm 24.11).
func badQOS(st *State, name string) error {
	qs := make([]*QOS, 0, len(st.QOS))
	for _, q := range st.QOS {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].ID < qs[j].ID })
	names := make([]string, len(qs))
	for i, q := range qs {
		names[i] = q.Name
	}
	return errorf("You gave a bad qos '%s'. Valid QOS's are %s", name, strings.Join(names, ","))
}

// effectiveQOS returns the QOS list a inherits when it has none of its own.
func effectiveQOS(st *State, a *Association) []string {
	for cur, n := a, 0; cur != nil && n <= len(st.Assocs); cur, n = st.Assocs[cur.ParentID], n+1 {
		if cur.QOS != nil {
			return cur.QOS
		}
	}
	return nil
}

// setAssocQOS handles QOS=a,b (replace), QOS+=a (add to the current,
// possibly inherited, list) and QOS-=a (remove), as sacctmgr documents.
func setAssocQOS(st *State, a *Association, s Spec) error {
	v := strings.TrimSpace(s.Value)
	if s.Op == '=' && v == "-1" {
		a.QOS = nil // back to inheriting from the parent
		return nil
	}
	if s.Op == '=' && (v == "" || v == "''" || v == `""`) {
		a.QOS = []string{} // explicitly no QOS
		return nil
	}
	names, err := qosNames(st, v)
	if err != nil {
		return err
	}
	a.QOS = editList(effectiveQOS(st, a), names, s.Op)
	return nil
}

// qosNames parses a comma separated QOS list; every name must exist.
func qosNames(st *State, v string) ([]string, error) {
	if v == "-1" {
		return nil, nil
	}
	names := lowerNames(splitList(v))
	for _, n := range names {
		if st.QOS[n] == nil {
			return nil, badQOS(st, n)
		}
	}
	return names, nil
}

// editList applies =, += or -= to a sorted name list.
func editList(cur, names []string, op byte) []string {
	set := map[string]bool{}
	if op != '=' {
		for _, n := range cur {
			set[n] = true
		}
	}
	for _, n := range names {
		set[n] = op != '-'
	}
	out := []string{}
	for n, in := range set {
		if in {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// checkDefaultQOS rejects a DefaultQOS the association may not use.
func checkDefaultQOS(st *State, a *Association) error {
	if a.DefaultQOS == "" {
		return nil
	}
	for _, q := range effectiveQOS(st, a) {
		if q == a.DefaultQOS {
			return nil
		}
	}
	return errorf("Default QOS '%s' is not in the allowed QOS list of %s", a.DefaultQOS, assocName(a))
}

// assocName names an association in messages: C = c A = a U = u P = p.
func assocName(a *Association) string {
	s := "C = " + a.Cluster + " A = " + a.Account
	if a.User != "" {
		s += " U = " + a.User
	}
	if a.Partition != "" {
		s += " P = " + a.Partition
	}
	return s
}

// applyQOSSpecs writes QOS attributes to q.
func applyQOSSpecs(st *State, q *QOS, specs []Spec, r *Result) error {
	for _, s := range specs {
		err := applyQOSSpec(st, q, s)
		if err == errPreemptCluster {
			r.Warnings = append(r.Warnings, "Preempt=cluster names no QOS; ignored (the preempt mode is set with PreemptMode=)")
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func applyQOSSpec(st *State, q *QOS, s Spec) error {
	if s.Op != '=' && s.Key != "Flags" && s.Key != "Preempt" {
		return errorf("Invalid operator '%c=' for %s", s.Op, s.Key)
	}
	if f, ok := qosCountFields()[s.Key]; ok {
		return setCount(f(q), s)
	}
	if f, ok := qosWallFields()[s.Key]; ok {
		return setWall(f(q), s)
	}
	if f, ok := qosTRESFields()[s.Key]; ok {
		return setTRES(st, f(q), s)
	}
	switch s.Key {
	case "Description":
		q.Description = s.Value
	case "Priority":
		n, err := strconv.ParseInt(s.Value, 10, 64)
		if err != nil || n < -1 || n > 1<<32 {
			return errorf("Invalid value for Priority: '%s'", s.Value)
		}
		q.Priority = max(n, 0)
	case "Flags":
		return setQOSFlags(q, s)
	case "Preempt":
		return setPreempt(st, q, s)
	case "PreemptMode":
		return setPreemptMode(q, s.Value)
	case "GraceTime", "PreemptExemptTime":
		return setQOSSeconds(q, s)
	case "UsageFactor", "UsageThreshold", "LimitFactor":
		return setQOSFloat(q, s)
	default:
		return errorf("Unknown option: %s=%s", s.Key, s.Value)
	}
	return nil
}

func setQOSFlags(q *QOS, s Spec) error {
	var f QOSFlags
	for _, n := range splitList(s.Value) {
		if strings.EqualFold(n, "none") || n == "-1" {
			continue
		}
		found := false
		for _, fn := range qosFlagNames {
			if strings.EqualFold(fn.name, n) {
				f |= fn.flag
				found = true
			}
		}
		if !found {
			// sacctmgr's text, on stdout (oracle: sacctmgr-modify-more)
			return outErr(" Unknown QOS flag used in:\n  '" + s.Value + "'\n Valid QOS flags are\n" +
				"  'DenyOnLimit,EnforceUsageThreshold,NoReserve,PartitionMaxNodes,PartitionMinNodes,OverPartQOS," +
				"PartitionTimeLimit,RequiresReservation,NoDecay,Relative,UsageFactorSafe'")
		}
	}
	switch s.Op {
	case '+':
		q.Flags |= f
	case '-':
		q.Flags &^= f
	default:
		q.Flags = f
	}
	return nil
}

// setPreempt edits the Preempt list. A QOS may not preempt itself.
// `Preempt=cluster`, which published walkthroughs write meaning the
// default preempt mode, names no QOS: it is ignored with a warning (see
// docs/differences.md).
func setPreempt(st *State, q *QOS, s Spec) error {
	val := s.Value
	if strings.EqualFold(val, "cluster") && st.QOS["cluster"] == nil {
		return errPreemptCluster
	}
	if val == "''" || val == `""` {
		val = ""
	}
	names, err := qosNames(st, val)
	if err != nil {
		return err
	}
	q.Preempt = editList(q.Preempt, names, s.Op)
	if len(q.Preempt) == 0 {
		q.Preempt = nil
	}
	if preemptsItself(st, q) {
		return errorf("QOS Preemption loop detected\n Error with request: QOS Preemption loop detected")
	}
	return nil
}

// preemptsItself reports whether q can reach itself through the Preempt
// lists (slurmdbd refuses such a loop, of any length).
func preemptsItself(st *State, q *QOS) bool {
	seen := map[string]bool{}
	todo := append([]string{}, q.Preempt...)
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if n == q.Name {
			return true
		}
		if seen[n] || st.QOS[n] == nil {
			continue
		}
		seen[n] = true
		todo = append(todo, st.QOS[n].Preempt...)
	}
	return false
}

// errPreemptCluster signals the ignored `Preempt=cluster`.
var errPreemptCluster = &Error{Msg: "preempt=cluster"}

func setPreemptMode(q *QOS, v string) error {
	var m PreemptMode
	for _, n := range splitList(v) {
		if strings.EqualFold(n, "cluster") {
			continue
		}
		found := false
		for _, pm := range preemptModeNames {
			if strings.EqualFold(pm.name, n) {
				m |= pm.mode
				found = true
			}
		}
		if !found {
			return errorf("Invalid PreemptMode '%s'", n)
		}
	}
	if b := m.Base(); b&(b-1) != 0 {
		return errorf("Invalid PreemptMode '%s': more than one of OFF, CANCEL, REQUEUE, SUSPEND", v)
	}
	q.PreemptMode = m
	return nil
}

// setQOSSeconds reads GraceTime (a bare number is seconds) and
// PreemptExemptTime (a time string, where a bare number is minutes, as
// Slurm 24.11 reads it: PreemptExemptTime=30 shows 00:30:00).
func setQOSSeconds(q *QOS, s Spec) error {
	secs, err := parseTimeSeconds(s.Value, s.Key == "PreemptExemptTime")
	if err != nil {
		return errorf("Invalid value for %s: '%s'", s.Key, s.Value)
	}
	d := secondsDuration(secs)
	if s.Key == "GraceTime" {
		q.GraceTime = max(d, 0)
	} else {
		q.PreemptExemptTime = d
	}
	return nil
}

func setQOSFloat(q *QOS, s Spec) error {
	f, err := parseFloat(s.Key, s.Value)
	if err != nil {
		return errorf("%v", err)
	}
	switch s.Key {
	case "UsageFactor":
		if f < 0 {
			f = 1
		}
		q.UsageFactor = f
	case "UsageThreshold":
		if f > 1 {
			return errorf("Invalid value for UsageThreshold: '%s' (0..1)", s.Value)
		}
		q.UsageThreshold = f
	case "LimitFactor":
		q.LimitFactor = f
	}
	return nil
}
