package acct

import (
	"sort"
	"strconv"
	"strings"
	"sync"
)

func qosStr(f func(q *QOS) string) func(r row) string {
	return func(r row) string {
		if r.q == nil {
			return ""
		}
		return f(r.q)
	}
}

func qosCount(key string, wall bool) func(r row) string {
	if wall {
		get := qosWallFields()[key]
		return qosStr(func(q *QOS) string { return formatMinutes(*get(q)) })
	}
	get := qosCountFields()[key]
	return qosStr(func(q *QOS) string { return formatLimit(*get(q)) })
}

func qosVec(key string) func(r row) string {
	get := qosTRESFields()[key]
	return func(r row) string {
		if r.q == nil {
			return ""
		}
		return formatTRES(r.st, *get(r.q))
	}
}

// qosCols() are the columns of `show qos`, with Slurm's headers and widths.
var qosCols = sync.OnceValue(func() map[string]colDef {
	return map[string]colDef{
		"name":        {"Name", 10, qosStr(func(q *QOS) string { return q.Name })},
		"description": {"Descr", 11, qosStr(func(q *QOS) string { return q.Description })},
		"id":          {"ID", 6, qosStr(func(q *QOS) string { return strconv.FormatInt(q.ID, 10) })},
		"priority":    {"Priority", 10, qosStr(func(q *QOS) string { return strconv.FormatInt(q.Priority, 10) })},
		"gracetime":   {"GraceTime", 10, qosStr(func(q *QOS) string { return formatDuration(q.GraceTime) })},
		"preempt": {"Preempt", 10, func(r row) string {
			if r.q == nil {
				return ""
			}
			// by name, whatever the QOS ids or the order of the edits
			// (oracle, sacctmgr-modify-more: Preempt=low then +=normal
			// prints low,normal; normal has id 1)
			return strings.Join(sortedNames(r.q.Preempt), ",")
		}},
		"preemptexempttime": {"PreemptExemptTime", 19, qosStr(func(q *QOS) string { return formatDuration(q.PreemptExemptTime) })},
		"preemptmode":       {"PreemptMode", 11, qosStr(func(q *QOS) string { return q.PreemptMode.String() })},
		"flags":             {"Flags", 40, qosStr(func(q *QOS) string { return q.Flags.String() })},
		"usagethres":        {"UsageThres", 10, qosStr(func(q *QOS) string { return formatFloat(q.UsageThreshold) })},
		"usagefactor":       {"UsageFactor", 11, qosStr(func(q *QOS) string { return formatFloat(q.UsageFactor) })},
		"limitfactor":       {"LimitFactor", 11, qosStr(func(q *QOS) string { return formatFloat(q.LimitFactor) })},
		"grptres":           {"GrpTRES", 13, qosVec("GrpTRES")},
		"grptresmins":       {"GrpTRESMins", 13, qosVec("GrpTRESMins")},
		"grptresrunmins":    {"GrpTRESRunMins", 13, qosVec("GrpTRESRunMins")},
		"grpjobs":           {"GrpJobs", 7, qosCount("GrpJobs", false)},
		"grpjobsaccrue":     {"GrpJobsAccrue", 13, qosCount("GrpJobsAccrue", false)},
		"grpsubmit":         {"GrpSubmit", 9, qosCount("GrpSubmitJobs", false)},
		"grpwall":           {"GrpWall", 11, qosCount("GrpWall", true)},
		"maxtres":           {"MaxTRES", 13, qosVec("MaxTRES")},
		"maxtrespernode":    {"MaxTRESPerNode", 14, qosVec("MaxTRESPerNode")},
		"maxtresmins":       {"MaxTRESMins", 13, qosVec("MaxTRESMins")},
		"maxwall":           {"MaxWall", 11, qosCount("MaxWall", true)},
		"maxtrespu":         {"MaxTRESPU", 13, qosVec("MaxTRESPerUser")},
		"maxjobspu":         {"MaxJobsPU", 9, qosCount("MaxJobsPerUser", false)},
		"maxsubmitpu":       {"MaxSubmitPU", 11, qosCount("MaxSubmitJobsPerUser", false)},
		"maxtrespa":         {"MaxTRESPA", 13, qosVec("MaxTRESPerAccount")},
		"maxjobspa":         {"MaxJobsPA", 9, qosCount("MaxJobsPerAccount", false)},
		"maxsubmitpa":       {"MaxSubmitPA", 11, qosCount("MaxSubmitJobsPerAccount", false)},
		"maxjobsaccruepu":   {"MaxJobsAccruePU", 15, qosCount("MaxJobsAccruePerUser", false)},
		"maxjobsaccruepa":   {"MaxJobsAccruePA", 15, qosCount("MaxJobsAccruePerAccount", false)},
		"maxtresrunminspu":  {"MaxTRESRunMinsPU", 16, qosVec("MaxTRESRunMinsPerUser")},
		"maxtresrunminspa":  {"MaxTRESRunMinsPA", 16, qosVec("MaxTRESRunMinsPerAccount")},
		"mintres":           {"MinTRES", 13, qosVec("MinTRESPerJob")},
		"minpriothres":      {"MinPrioThres", 12, qosCount("MinPrioThreshold", false)},
	}
})

// qosColAliases() are the other spellings format= accepts for QOS columns.
var qosColAliases = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"descr": "description", "usagethreshold": "usagethres", "grpsubmitjobs": "grpsubmit",
		"maxtresperjob": "maxtres", "maxtrespj": "maxtres", "maxtrespn": "maxtrespernode",
		"maxtresminsperjob": "maxtresmins", "maxwalldurationperjob": "maxwall",
		"maxtresperuser": "maxtrespu", "maxjobsperuser": "maxjobspu", "maxsubmitjobsperuser": "maxsubmitpu",
		"maxsubmitjobspu": "maxsubmitpu", "maxtresperaccount": "maxtrespa", "maxjobsperaccount": "maxjobspa",
		"maxsubmitjobsperaccount": "maxsubmitpa", "maxsubmitjobspa": "maxsubmitpa", "mintresperjob": "mintres",
		"maxtresrunminsperuser": "maxtresrunminspu", "maxtresrunminsperaccount": "maxtresrunminspa",
		"qos": "name", "minpriothreshold": "minpriothres",
	}
})

// sortedNames is a sorted copy of names.
func sortedNames(names []string) []string {
	out := append([]string{}, names...)
	sort.Strings(out)
	return out
}

func qosRows(p *Policy, cmd *Command) ([]row, error) {
	if err := checkKeys(cmd.Where, false, "ID"); err != nil {
		return nil, err
	}
	names := lowerNames(cmd.Names)
	ids := specValues(cmd.Where, "ID", false)
	var out []row
	for _, n := range p.QOSNames() {
		q := p.QOS(n)
		if matchAny(names, q.Name) && matchAny(ids, strconv.FormatInt(q.ID, 10)) {
			out = append(out, row{st: p.st, q: q})
		}
	}
	return out, nil
}
