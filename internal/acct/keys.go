package acct

import (
	"strings"
	"sync"
)

// keyAliases maps every lower-cased spelling sacctmgr accepts for a
// specification to its canonical key.
var keyAliases = sync.OnceValue(buildKeyAliases) // built on first use, not at every command's start

// legacyTRES() maps pre-TRES limit names (GrpCPUs, MaxNodes, ...) to the
// TRES limit and TRES they stand for, as sacctmgr still accepts them.
var legacyTRES = sync.OnceValue(func() map[string][2]string {
	return map[string][2]string{
		"grpcpus": {"GrpTRES", "cpu"}, "grpnodes": {"GrpTRES", "node"}, "grpmem": {"GrpTRES", "mem"},
		"grpcpumins": {"GrpTRESMins", "cpu"}, "grpcpurunmins": {"GrpTRESRunMins", "cpu"},
		"maxcpus": {"MaxTRES", "cpu"}, "maxnodes": {"MaxTRES", "node"}, "maxcpumins": {"MaxTRESMins", "cpu"},
		"maxcpusperjob": {"MaxTRES", "cpu"}, "maxnodesperjob": {"MaxTRES", "node"},
		"maxcpusperuser": {"MaxTRESPerUser", "cpu"}, "maxnodesperuser": {"MaxTRESPerUser", "node"},
		"maxcpuspu": {"MaxTRESPerUser", "cpu"}, "maxnodespu": {"MaxTRESPerUser", "node"},
	}
})

func buildKeyAliases() map[string]string {
	keyAliases := map[string]string{}
	for canon, aliases := range map[string][]string{
		"Name":                     {"names"},
		"Account":                  {"accounts", "acct", "accts"},
		"Cluster":                  {"clusters"},
		"User":                     {"users"},
		"Partition":                {"partitions"},
		"Parent":                   {"parents"},
		"Description":              {"descr", "desc", "descriptions"},
		"Organization":             {"org", "orgs", "organizations"},
		"DefaultAccount":           {"defaultacct", "defacct", "defaultaccounts", "defaultaccts"},
		"AdminLevel":               {"admin", "adminlevels"},
		"ID":                       {"ids"},
		"Format":                   {},
		"File":                     {},
		"Type":                     {"types"},
		"Shares":                   {"fairshare", "share", "fairshares"},
		"GrpJobs":                  {},
		"GrpJobsAccrue":            {},
		"GrpSubmitJobs":            {"grpsubmit"},
		"GrpTRES":                  {},
		"GrpTRESMins":              {},
		"GrpTRESRunMins":           {},
		"GrpWall":                  {"grpwallduration"},
		"MaxJobs":                  {},
		"MaxJobsAccrue":            {},
		"MaxSubmitJobs":            {"maxsubmit"},
		"MaxTRES":                  {"maxtresperjob", "maxtrespj"},
		"MaxTRESPerNode":           {"maxtrespn"},
		"MaxTRESMins":              {"maxtresminsperjob", "maxtresminspj"},
		"MaxTRESRunMins":           {},
		"MaxWall":                  {"maxwalldurationperjob", "maxwallduration"},
		"Priority":                 {},
		"QOS":                      {"qoslevel", "qoss"},
		"DefaultQOS":               {"defqos"},
		"MinPrioThreshold":         {"minpriothresh", "minpriothres"},
		"MaxJobsPerUser":           {"maxjobspu"},
		"MaxJobsPerAccount":        {"maxjobspa"},
		"MaxSubmitJobsPerUser":     {"maxsubmitjobspu", "maxsubmitpu", "maxsubmitperuser"},
		"MaxSubmitJobsPerAccount":  {"maxsubmitjobspa", "maxsubmitpa", "maxsubmitperaccount"},
		"MaxJobsAccruePerUser":     {"maxjobsaccruepu"},
		"MaxJobsAccruePerAccount":  {"maxjobsaccruepa"},
		"MaxTRESPerUser":           {"maxtrespu"},
		"MaxTRESPerAccount":        {"maxtrespa"},
		"MaxTRESRunMinsPerUser":    {"maxtresrunminspu"},
		"MaxTRESRunMinsPerAccount": {"maxtresrunminspa"},
		"MinTRESPerJob":            {"mintres", "mintrespj"},
		"Preempt":                  {},
		"PreemptMode":              {},
		"PreemptExemptTime":        {},
		"GraceTime":                {},
		"UsageFactor":              {},
		"UsageThreshold":           {"usagethres"},
		"LimitFactor":              {},
		"Flags":                    {"flag"},
	} {
		keyAliases[strings.ToLower(canon)] = canon
		for _, a := range aliases {
			keyAliases[a] = canon
		}
	}
	return keyAliases
}

// canonicalKey returns the canonical key for a typed specification name.
func canonicalKey(k string) (string, bool) {
	l := strings.ToLower(strings.TrimSpace(k))
	if c, ok := keyAliases()[l]; ok {
		return c, true
	}
	if lg, ok := legacyTRES()[l]; ok {
		return "legacy:" + l + ":" + lg[0] + ":" + lg[1], true
	}
	return "", false
}

// resolveLegacy turns a legacy key (GrpCPUs=10) into its TRES form
// (GrpTRES=cpu=10).
func resolveLegacy(s Spec) Spec {
	if !strings.HasPrefix(s.Key, "legacy:") {
		return s
	}
	parts := strings.SplitN(s.Key, ":", 4)
	return Spec{Key: parts[2], Op: s.Op, Value: parts[3] + "=" + s.Value}
}
