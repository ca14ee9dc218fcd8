package dataparser

import (
	"sort"
	"strings"
)

// AccountFields are the sacctmgr show account fields Accounts reads, in
// this order.
var AccountFields = []string{"Account", "Descr", "Org"}

// Accounts is the data of slurmrestd's /slurmdb/v0.0.42/accounts (v0.0.42's
// ACCOUNT records) from sacctmgr -P show account rows of AccountFields.
// Associations and coordinators print empty, as slurmrestd lists them
// without the with_assocs and with_coords flags.
func Accounts(rows [][]string) Obj {
	list := []any{}
	for _, r := range rows {
		list = append(list, Obj{
			{"associations", []any{}},
			{"coordinators", []any{}},
			{"description", r[1]},
			{"name", r[0]},
			{"organization", r[2]},
			{"flags", []any{}},
		})
	}
	return Obj{{"accounts", list}}
}

// UserFields are the sacctmgr show user fields Users reads.
var UserFields = []string{"User", "DefaultAccount", "AdminLevel"}

// Users is the data of /slurmdb/v0.0.42/users (USER records) from
// sacctmgr -P show user rows of UserFields.
func Users(rows [][]string) Obj {
	list := []any{}
	for _, r := range rows {
		admin := r[2]
		if admin == "" {
			admin = "None"
		}
		list = append(list, Obj{
			{"administrator_level", Strings(strings.Split(admin, ",")...)},
			{"associations", []any{}},
			{"coordinators", []any{}},
			// slurmdbd fills the default account from the
			// associations, which /users lists only with its
			// with_assocs flag: "" otherwise (oracle, 24.11).
			{"default", Obj{{"account", ""}, {"wckey", ""}}},
			{"flags", Strings("NONE")},
			{"name", r[0]},
			{"old_name", ""},
			{"wckeys", []any{}},
		})
	}
	return Obj{{"users", list}}
}

// QOSFields are the sacctmgr show qos fields QOS reads, in this order.
var QOSFields = []string{"Name", "Descr", "ID", "Priority", "GraceTime", "Preempt", "PreemptExemptTime", "PreemptMode",
	"Flags", "UsageThres", "UsageFactor", "LimitFactor", "GrpTRES", "GrpTRESMins", "GrpTRESRunMins", "GrpJobs",
	"GrpJobsAccrue", "GrpSubmit", "GrpWall", "MaxTRES", "MaxTRESPerNode", "MaxTRESMins", "MaxWall", "MaxTRESPU",
	"MaxJobsPU", "MaxSubmitPU", "MaxTRESPA", "MaxJobsPA", "MaxSubmitPA", "MaxJobsAccruePU", "MaxJobsAccruePA",
	"MaxTRESRunMinsPU", "MaxTRESRunMinsPA", "MinTRES", "MinPrioThres"}

// qosFlags are data_parser's names of sacctmgr's QOS flags.
var qosFlags = map[string]string{
	"DenyOnLimit": "DENY_LIMIT", "EnforceUsageThreshold": "ENFORCE_USAGE_THRESHOLD", "NoDecay": "NO_DECAY",
	"NoReserve": "NO_RESERVE", "OverPartQOS": "OVERRIDE_PARTITION_QOS", "PartitionMaxNodes": "PARTITION_MAXIMUM_NODE",
	"PartitionMinNodes": "PARTITION_MINIMUM_NODE", "PartitionTimeLimit": "PARTITION_TIME_LIMIT",
	"RequiresReservation": "REQUIRED_RESERVATION", "UsageFactorSafe": "USAGE_FACTOR_SAFE", "Relative": "RELATIVE",
}

// QOS is the data of /slurmdb/v0.0.42/qos (v0.0.42's QOS records) from
// sacctmgr -P show qos rows of QOSFields: each limit where slurmdbd's
// parser puts it (oracle, Slurm 24.11), an unset one as infinite.
func QOS(rows [][]string) Obj {
	list := []any{}
	for _, r := range rows {
		v := map[string]string{}
		for i, f := range QOSFields {
			v[f] = r[i]
		}
		list = append(list, qosRecord(v))
	}
	return Obj{{"qos", list}}
}

func qosRecord(v map[string]string) Obj {
	flags := []any{}
	for _, f := range splitNonEmpty(v["Flags"]) {
		if n, ok := qosFlags[f]; ok {
			flags = append(flags, n)
		} else {
			flags = append(flags, strings.ToUpper(f))
		}
	}
	mode := []any{"DISABLED"}
	if m := v["PreemptMode"]; m != "" && m != "cluster" && m != "off" {
		mode = Strings(strings.Split(strings.ToUpper(m), ",")...)
	}
	return Obj{
		{"description", v["Descr"]},
		{"flags", flags},
		{"id", atoi(v["ID"])},
		{"limits", qosLimits(v)},
		{"name", v["Name"]},
		{"preempt", Obj{{"list", Strings(splitNonEmpty(v["Preempt"])...)}, {"mode", mode},
			{"exempt_time", limitSeconds(v["PreemptExemptTime"])}}},
		{"priority", N(atoi(v["Priority"]))},
		{"usage_factor", limitFloat(v["UsageFactor"])},
		{"usage_threshold", limitFloat(v["UsageThres"])},
	}
}

func qosLimits(v map[string]string) Obj {
	tres := func(k string) []any { return TRESList(v[k], false) }
	count := func(k string) Num { return limitCount(v[k]) }
	per := func(acct, user string) Obj { return Obj{{"account", count(acct)}, {"user", count(user)}} }
	return Obj{
		{"grace_time", int64(limitSeconds(v["GraceTime"]).N)},
		{"max", Obj{
			{"active_jobs", Obj{{"accruing", count("GrpJobsAccrue")}, {"count", count("GrpJobs")}}},
			{"jobs", Obj{{"count", count("GrpSubmit")}, {"active_jobs", Obj{{"per", per("MaxJobsPA", "MaxJobsPU")}}},
				{"per", per("MaxSubmitPA", "MaxSubmitPU")}}},
			{"tres", Obj{
				{"total", tres("GrpTRES")},
				{"minutes", Obj{{"total", tres("GrpTRESMins")}, {"per", Obj{{"qos", tres("GrpTRESRunMins")},
					{"job", tres("MaxTRESMins")}, {"account", tres("MaxTRESRunMinsPA")}, {"user", tres("MaxTRESRunMinsPU")}}}}},
				{"per", Obj{{"account", tres("MaxTRESPA")}, {"job", tres("MaxTRES")}, {"node", tres("MaxTRESPerNode")},
					{"user", tres("MaxTRESPU")}}},
			}},
			{"wall_clock", Obj{{"per", Obj{{"qos", wallMinutes(v["GrpWall"])}, {"job", wallMinutes(v["MaxWall"])}}}}},
			{"accruing", Obj{{"per", per("MaxJobsAccruePA", "MaxJobsAccruePU")}}},
		}},
		{"factor", limitFloat(v["LimitFactor"])},
		{"min", Obj{{"priority_threshold", count("MinPrioThres")}, {"tres", Obj{{"per", Obj{{"job", tres("MinTRES")}}}}}}},
	}
}

// splitNonEmpty splits a comma list, none for "".
func splitNonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// limitCount is a count limit: unset ("") is infinite, as slurmdbd
// prints an unlimited QOS limit.
func limitCount(s string) Num {
	if s == "" {
		return Infinite()
	}
	return N(atoi(s))
}

// limitFloat is a float limit ("" infinite).
func limitFloat(s string) NumF {
	if s == "" {
		return NumF{Inf: true}
	}
	return floatNum(s)
}

// wallMinutes and limitSeconds read sacctmgr's [D-]HH:MM:SS.
func wallMinutes(s string) Num {
	n := limitSeconds(s)
	if n.Set {
		n.N /= 60
	}
	return n
}

func limitSeconds(s string) Num {
	if s == "" {
		return Infinite()
	}
	var days, h, m, sec int64
	rest := s
	if d, r, ok := strings.Cut(s, "-"); ok {
		days, rest = atoi(d), r
	}
	p := strings.Split(rest, ":")
	for len(p) < 3 {
		p = append([]string{"0"}, p...)
	}
	h, m, sec = atoi(p[0]), atoi(p[1]), atoi(p[2])
	return N(((days*24+h)*60+m)*60 + sec)
}

// AssocFields are the sacctmgr show assoc fields Associations reads.
var AssocFields = []string{"Cluster", "Account", "User", "Partition", "ParentName", "Share", "Priority", "QOS", "DefaultQOS",
	"GrpJobs", "GrpJobsAccrue", "GrpSubmit", "GrpWall", "GrpTRES", "GrpTRESMins", "GrpTRESRunMins", "MaxJobs",
	"MaxJobsAccrue", "MaxSubmit", "MaxWall", "MaxTRES", "MaxTRESPerNode", "MaxTRESMins", "MinPrioThres"}

// Associations is the data of /slurmdb/v0.0.42/associations (ASSOC
// records) from sacctmgr -P show assoc rows of AssocFields, in lineage
// order as slurmdbd lists them; defaults maps each user to its default
// account. Each limit is where slurmdbd's parser puts it (oracle, 24.11).
func Associations(rows [][]string, defaults map[string]string) Obj {
	parent := map[string]string{}
	for _, r := range rows {
		if r[2] == "" {
			parent[r[1]] = r[4]
		}
	}
	type rec struct {
		lineage string
		o       Obj
	}
	var recs []rec
	for _, r := range rows {
		v := map[string]string{}
		for i, f := range AssocFields {
			v[f] = r[i]
		}
		lin := accountLineage(v["Account"], parent)
		isDefault := v["ParentName"] != ""
		parentAcct := v["ParentName"]
		if v["User"] != "" {
			lin += "0-" + v["User"] + "/"
			isDefault, parentAcct = defaults[v["User"]] == v["Account"], ""
		}
		recs = append(recs, rec{lin, assocRecord(v, lin, parentAcct, isDefault)})
	}
	sort.SliceStable(recs, func(a, b int) bool { return recs[a].lineage < recs[b].lineage })
	list := []any{}
	for _, r := range recs {
		list = append(list, r.o)
	}
	return Obj{{"associations", list}}
}

// accountLineage is "/a/b/" for account b under a under root ("/" for root).
func accountLineage(acct string, parent map[string]string) string {
	lin := "/"
	for a, n := acct, 0; a != "" && a != "root" && n < 64; a, n = parent[a], n+1 {
		lin = "/" + a + lin
	}
	return lin
}

func assocRecord(v map[string]string, lineage, parentAcct string, isDefault bool) Obj {
	tres := func(k string) []any { return TRESList(v[k], false) }
	count := func(k string) Num { return limitCount(v[k]) }
	shares := atoi(v["Share"])
	if v["Share"] == "parent" || v["Share"] == "" {
		shares = 1
	}
	return Obj{
		{"accounting", []any{}},
		{"account", v["Account"]},
		{"cluster", v["Cluster"]},
		{"comment", ""},
		{"default", Obj{{"qos", v["DefaultQOS"]}}},
		{"flags", []any{}},
		{"max", Obj{
			{"jobs", Obj{
				{"per", Obj{{"count", count("GrpJobs")}, {"accruing", count("GrpJobsAccrue")}, {"submitted", count("GrpSubmit")},
					{"wall_clock", wallMinutes(v["MaxWall"])}}},
				{"active", count("MaxJobs")}, {"accruing", count("MaxJobsAccrue")}, {"total", count("MaxSubmit")},
			}},
			{"tres", Obj{
				{"total", tres("GrpTRES")},
				{"group", Obj{{"minutes", tres("GrpTRESMins")}, {"active", tres("GrpTRESRunMins")}}},
				{"minutes", Obj{{"total", []any{}}, {"per", Obj{{"job", tres("MaxTRESMins")}}}}},
				{"per", Obj{{"job", tres("MaxTRES")}, {"node", tres("MaxTRESPerNode")}}},
			}},
			{"per", Obj{{"account", Obj{{"wall_clock", wallMinutes(v["GrpWall"])}}}}},
		}},
		{"id", 0},
		{"is_default", isDefault},
		{"lineage", lineage},
		{"min", Obj{{"priority_threshold", count("MinPrioThres")}}},
		{"parent_account", parentAcct},
		{"partition", v["Partition"]},
		{"priority", count("Priority")},
		{"qos", Strings(splitNonEmpty(v["QOS"])...)},
		{"shares_raw", shares},
		{"user", v["User"]},
	}
}
