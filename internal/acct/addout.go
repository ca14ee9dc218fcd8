package acct

import (
	"fmt"
	"sort"
	"strings"
)

// The blocks sacctmgr prints after an add: the settings given, one per
// line in sacctmgr's own order (not the command line's), each label
// padded to the width sacctmgr uses for it.

// settingLine is one printable setting: the spec key it comes from, the
// label sacctmgr prints and the label's width.
type settingLine struct {
	key, label string
	width      int
}

// assocSettingLines are the association settings of `add account` and
// `add user`, in sacctmgr's order. Most labels are 14 wide; a few are
// printed 25 wide, and MaxJobsAccrue is labelled MaxJobsPrioAcc.
var assocSettingLines = []settingLine{
	{"Shares", "Fairshare", 14}, {"GrpJobs", "GrpJobs", 14}, {"GrpJobsAccrue", "GrpJobsAccrue", 25},
	{"GrpSubmitJobs", "GrpSubmitJobs", 14}, {"GrpTRES", "GrpTRES", 14}, {"GrpTRESMins", "GrpTRESMins", 14},
	{"GrpTRESRunMins", "GrpTRESRunMins", 14}, {"GrpWall", "GrpWall", 14}, {"MaxJobs", "MaxJobs", 14},
	{"MaxJobsAccrue", "MaxJobsPrioAcc", 14}, {"MaxSubmitJobs", "MaxSubmitJobs", 14}, {"MaxTRES", "MaxTRES", 14},
	{"MaxTRESPerNode", "MaxTRESPerNode", 14}, {"MaxTRESMins", "MaxTRESMins", 14},
	{"MaxTRESRunMins", "MaxTRESRUNMins", 14}, {"MaxWall", "MaxWall", 14}, {"Parent", "Parent", 14},
	{"Priority", "Priority", 14}, {"QOS", "QOS", 14}, {"DefaultQOS", "DefQOS", 14},
}

// qosSettingLines are the settings of `add qos`, in sacctmgr's order.
var qosSettingLines = []settingLine{
	{"Description", "Description", 15}, {"Flags", "Flags", 25}, {"GraceTime", "GraceTime", 25},
	{"GrpJobs", "GrpJobs", 25}, {"GrpJobsAccrue", "GrpJobsAccrue", 25}, {"GrpSubmitJobs", "GrpSubmitJobs", 25},
	{"GrpTRES", "GrpTRES", 25}, {"GrpTRESMins", "GrpTRESMins", 25}, {"GrpTRESRunMins", "GrpTRESRunMins", 25},
	{"GrpWall", "GrpWall", 25}, {"MaxJobsAccruePerAccount", "MaxJobsAccruePerAccount", 25},
	{"MaxJobsAccruePerUser", "MaxJobsAccruePerUser", 25}, {"MaxJobsPerAccount", "MaxJobsPerAccount", 25},
	{"MaxJobsPerUser", "MaxJobsPerUser", 15}, {"MaxSubmitJobsPerAccount", "MaxSubmitJobsPerAccount", 25},
	{"MaxSubmitJobsPerUser", "MaxSubmitJobsPerUser", 25}, {"MaxTRESPerAccount", "MaxTRESPerAccount", 25},
	{"MaxTRES", "MaxTRESPerJob", 25}, {"MaxTRESPerNode", "MaxTRESPerNode", 25},
	{"MaxTRESPerUser", "MaxTRESPerUser", 25}, {"MinTRESPerJob", "MinTRESPerJob", 25},
	{"MaxTRESMins", "MaxTRESMins", 25}, {"MaxTRESRunMinsPerAccount", "MaxTRESRUNMinsPerAccount", 25},
	{"MaxTRESRunMinsPerUser", "MaxTRESRUNMinsPerUser", 25}, {"MaxWall", "MaxWall", 25},
	{"Preempt", "Preempt", 25}, {"PreemptMode", "PreemptMode", 25},
	{"PreemptExemptTime", "PreemptExemptTime", 25}, {"Priority", "Priority", 25},
	{"UsageFactor", "UsageFactor", 25}, {"UsageThreshold", "UsageThreshold", 25},
	{"LimitFactor", "LimitFactor", 25}, {"MinPrioThreshold", "MinPrioThresh", 25},
}

// printSettings prints the lines of table whose key was given in specs,
// with the value value returns.
func printSettings(r *Result, table []settingLine, specs []Spec, value func(key string) string) {
	for _, l := range table {
		if _, ok := specValue(specs, l.key); ok {
			r.printf("  %-*s= %s\n", l.width, l.label, value(l.key))
		}
	}
}

// hasAssocSettings reports whether specs set any association attribute.
func hasAssocSettings(specs []Spec) bool {
	for _, s := range specs {
		if isAssocKey(s.Key) {
			return true
		}
	}
	return false
}

// assocSettingValue prints one association setting as the add summary
// shows it: an unset limit as NONE, TRES lists by name, QOS lists sorted.
func assocSettingValue(st *State, a *Association, specs []Spec, parent string) func(string) string {
	return func(key string) string {
		if f, ok := assocCountFields()[key]; ok {
			return noneIfEmpty(formatLimit(*f(&a.AssocLimits)))
		}
		if f, ok := assocWallFields()[key]; ok {
			return noneIfEmpty(formatMinutes(*f(&a.AssocLimits)))
		}
		if f, ok := assocTRESFields()[key]; ok {
			return tresByName(*f(&a.AssocLimits))
		}
		switch key {
		case "Shares":
			if a.Shares == SharesParent {
				return "parent"
			}
			return fmt.Sprint(a.Shares)
		case "Priority":
			return noneIfEmpty(formatLimit(a.Priority))
		case "Parent":
			return parent
		case "DefaultQOS":
			return a.DefaultQOS
		case "QOS":
			return qosSettingValue(specs)
		}
		return ""
	}
}

// qosSettingValue is the QOS list as given, sorted by name, with the
// operator of `QOS+=` / `QOS-=` in front.
func qosSettingValue(specs []Spec) string {
	for _, s := range specs {
		if s.Key == "QOS" {
			names := splitList(strings.ToLower(s.Value))
			sort.Strings(names)
			op := ""
			if s.Op != '=' {
				op = string(s.Op)
			}
			return op + strings.Join(names, ",")
		}
	}
	return ""
}

// qosSettingValue prints one QOS setting as `add qos` shows it.
func qosAddValue(st *State, q *QOS) func(string) string {
	return func(key string) string {
		if f, ok := qosCountFields()[key]; ok {
			return noneIfEmpty(formatLimit(*f(q)))
		}
		if f, ok := qosWallFields()[key]; ok {
			return noneIfEmpty(formatMinutes(*f(q)))
		}
		if f, ok := qosTRESFields()[key]; ok {
			return tresByName(*f(q))
		}
		switch key {
		case "Description":
			return q.Description
		case "Flags":
			return q.Flags.String()
		case "Priority":
			if q.Priority <= 0 {
				return "NONE"
			}
			return fmt.Sprint(q.Priority)
		case "Preempt":
			p := append([]string{}, q.Preempt...)
			sort.Strings(p)
			return strings.Join(p, ",")
		case "PreemptMode":
			return preemptModeByName(q.PreemptMode)
		case "GraceTime":
			return fmt.Sprint(int64(q.GraceTime.Seconds()))
		case "PreemptExemptTime":
			return noneIfEmpty(formatDuration(q.PreemptExemptTime))
		case "UsageFactor":
			return fmt.Sprintf("%.4f", q.UsageFactor)
		case "UsageThreshold":
			return floatSetting(q.UsageThreshold)
		case "LimitFactor":
			return floatSetting(q.LimitFactor)
		}
		return ""
	}
}

func floatSetting(f float64) string {
	if f == UnsetFloat {
		return "NONE"
	}
	return fmt.Sprintf("%.4f", f)
}

// preemptModeByName lists the modes alphabetically, as the add summary
// does (GANG,SUSPEND).
func preemptModeByName(m PreemptMode) string {
	parts := strings.Split(m.String(), ",")
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "NONE"
	}
	return s
}

// tresByName prints a TRES list sorted by name, memory with a unit, as
// the add summary does (billing=3,cpu=2,mem=1G).
func tresByName(v tresVec) string {
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return joinTRES(keys, v)
}
