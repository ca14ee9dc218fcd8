package dataparser

import (
	"strconv"
	"strings"
)

// ShareFields are the sshare -o fields Shares reads, in this order
// (sshare -a -P -n -o ...).
var ShareFields = []string{"ID", "Cluster", "Account", "User", "Partition", "RawShares", "NormShares",
	"RawUsage", "NormUsage", "EffectvUsage", "FairShare", "LevelFS", "GrpTRESRaw", "TRESRunMins"}

// Shares is the data of `sshare --json` (v0.0.42's SHARES_RESP) from the
// controller's sshare rows in ShareFields order: one record per
// association, a user's named by the user and typed USER, an account's
// by the account and typed ASSOCIATION; parent is the enclosing account.
func Shares(text string) Obj { return SharesIn(text, "") }

// SharesIn is Shares for rows that may leave out an account's parent
// (sshare -A physics): tree, the rows of the whole tree, names it (oracle:
// sshare --json -A physics gives physics the parent science).
func SharesIn(text, tree string) Obj {
	above := accountParents(tree)
	list := []any{}
	var parents []string // accounts by depth
	for _, line := range strings.Split(text, "\n") {
		c := strings.Split(line, "|")
		if len(c) < len(ShareFields) {
			continue
		}
		acct := strings.TrimLeft(c[2], " ")
		depth := len(c[2]) - len(acct)
		name, typ := acct, "ASSOCIATION"
		if c[3] != "" {
			name, typ = c[3], "USER"
		}
		parent := ""
		if typ == "USER" {
			parent = acct
		} else {
			parents = append(parents[:min(depth, len(parents))], acct)
			if depth > 0 && depth-1 < len(parents) {
				parent = parents[depth-1]
			}
			if p, ok := above[acct]; ok && (parent == "" || parent == acct) {
				parent = p
			}
		}
		list = append(list, Obj{
			{"id", atoi(c[0])},
			{"cluster", c[1]},
			{"name", name},
			{"parent", parent},
			{"partition", c[4]},
			{"shares_normalized", floatNum(c[6])},
			{"shares", sharesNum(c[5])},
			{"tres", Obj{
				{"run_seconds", tresNums(c[13], 60)},
				{"group_minutes", tresUnlimited(c[12])},
				{"usage", tresFloats(c[12])},
			}},
			{"effective_usage", floatNum(c[9])},
			{"usage_normalized", floatNum(c[8])},
			{"usage", atoi(c[7])},
			{"fairshare", Obj{{"factor", floatNum(c[10])}, {"level", floatNum(c[11])}}},
			{"type", Strings(typ)},
		})
	}
	return Obj{{"shares", Obj{{"shares", list}, {"total_shares", 0}}}}
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n
}

// floatNum is a float cell: blank is unset.
func floatNum(s string) NumF {
	if s == "" {
		return NumF{}
	}
	if s == "inf" {
		return NumF{Inf: true}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return NF(f)
}

// sharesNum is RawShares: blank (root) unset, "parent" infinite.
func sharesNum(s string) Num {
	switch s {
	case "":
		return Unset()
	case "parent":
		return Infinite()
	}
	return N(atoi(s))
}

// tresPairs splits "cpu=1,mem=2" keeping the order.
func tresPairs(s string) (names []string, vals []int64) {
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			names = append(names, k)
			vals = append(vals, atoi(v))
		}
	}
	return names, vals
}

func tresNums(s string, mult int64) []any {
	names, vals := tresPairs(s)
	out := []any{}
	for i, n := range names {
		out = append(out, Obj{{"name", n}, {"value", N(vals[i] * mult)}})
	}
	return out
}

// tresUnlimited is group_minutes: no GrpTRESMins limit on any TRES.
func tresUnlimited(s string) []any {
	names, _ := tresPairs(s)
	out := []any{}
	for _, n := range names {
		out = append(out, Obj{{"name", n}, {"value", Infinite()}})
	}
	return out
}

func tresFloats(s string) []any {
	names, vals := tresPairs(s)
	out := []any{}
	for i, n := range names {
		out = append(out, Obj{{"name", n}, {"value", Float(vals[i] * 60)}})
	}
	return out
}

// accountParents maps each account of sshare rows to its enclosing
// account, by the indentation of the Account column.
func accountParents(text string) map[string]string {
	out := map[string]string{}
	var parents []string
	for _, line := range strings.Split(text, "\n") {
		c := strings.Split(line, "|")
		if len(c) < len(ShareFields) || c[3] != "" {
			continue
		}
		acct := strings.TrimLeft(c[2], " ")
		depth := len(c[2]) - len(acct)
		parents = append(parents[:min(depth, len(parents))], acct)
		if depth > 0 && depth-1 < len(parents) {
			out[acct] = parents[depth-1]
		}
	}
	return out
}
