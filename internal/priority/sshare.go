package priority

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// SshareOptions are sshare's command-line options.
type SshareOptions struct {
	// All is -a, Long is -l, UsersOnly is -U, NoHeader is -n, Partition is -m.
	All, Long, UsersOnly, NoHeader, Partition bool
	// Parsable is -p ('|' after every field), Parsable2 is -P (no
	// trailing '|').
	Parsable, Parsable2 bool
	// Accounts (-A) and Users (-u) filter rows.
	Accounts, Users []string
	// Format is -o: field names, each optionally `%width`.
	Format []string
	// InvokingUser is whose user rows plain sshare shows.
	InvokingUser string
	// Cluster is the cluster name for the Cluster field.
	Cluster string

	indentFrom int // the depth printed flush left (sshareTop)
}

// sshareField is one sshare column: name and Slurm's width (negative =
// left-justified).
type sshareField struct {
	name  string
	width int
}

var sshareFields = []sshareField{
	{"Account", -20}, {"User", 10}, {"RawShares", 10}, {"NormShares", 11}, {"RawUsage", 11},
	{"NormUsage", 11}, {"EffectvUsage", 13}, {"FairShare", 10}, {"LevelFS", 10},
	{"GrpTRESMins", 30}, {"TRESRunMins", 30}, {"GrpTRESRaw", 30}, {"Partition", 12},
	{"Cluster", 10}, {"ID", 6},
}

// sshareColumns picks the columns: -o, or the default/long lists (long
// adds NormUsage, LevelFS under Fair Tree, GrpTRESMins and TRESRunMins;
// -m adds Partition after User).
func sshareColumns(cfg *Config, opt SshareOptions) ([]sshareField, error) {
	names := []string{"Account", "User", "RawShares", "NormShares", "RawUsage", "EffectvUsage", "FairShare"}
	if opt.Long {
		names = []string{"Account", "User", "RawShares", "NormShares", "RawUsage", "NormUsage", "EffectvUsage", "FairShare"}
		if cfg.Flags.FairTree() {
			names = append(names, "LevelFS")
		}
		names = append(names, "GrpTRESMins", "TRESRunMins")
	}
	if opt.Partition {
		names = slices.Insert(names, 2, "Partition")
	}
	if len(opt.Format) > 0 {
		names = opt.Format
	}
	out := make([]sshareField, 0, len(names))
	for _, n := range names {
		f, err := lookupSshareField(n)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// lookupSshareField resolves `name[%width]`, case-insensitively, allowing
// a unique prefix as Slurm's format parsers do.
func lookupSshareField(spec string) (sshareField, error) {
	name, width, hasWidth := strings.Cut(strings.TrimSpace(spec), "%")
	var found []sshareField
	for _, f := range sshareFields {
		if strings.EqualFold(f.name, name) {
			found = []sshareField{f}
			break
		}
		if name != "" && len(name) < len(f.name) && strings.EqualFold(f.name[:len(name)], name) {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		return sshareField{}, fmt.Errorf("Invalid field requested: %q", name)
	}
	f := found[0]
	if hasWidth {
		w, err := strconv.Atoi(width)
		if err != nil || abs(w) > maxFieldWidth {
			return sshareField{}, fmt.Errorf("Invalid field requested: %q", spec)
		}
		f.width = w
	}
	return f, nil
}

// FormatSshare renders sshare output from a recomputed tree: the tree in
// display order, account rows indented one space per depth, user rows
// showing their account indented one more. The user filter (-u, or the
// invoking user without -a) removes only user rows; -A keeps rows whose
// account is listed; -U drops account rows.
func FormatSshare(tr *Tree, cfg *Config, opt SshareOptions) (string, error) {
	tr.syncRecords()
	tr.SyncUsage()
	cols, err := sshareColumns(cfg, opt)
	if err != nil {
		return "", err
	}
	users := opt.Users
	if len(users) == 0 && !opt.All {
		users = []string{opt.InvokingUser}
	}
	var b strings.Builder
	if !opt.NoHeader {
		writeSshareLine(&b, cols, opt, func(f sshareField) string { return f.name })
		if !opt.Parsable && !opt.Parsable2 {
			for _, f := range cols {
				w := abs(f.width)
				b.WriteString(strings.Repeat("-", w))
				b.WriteByte(' ')
			}
			b.WriteByte('\n')
		}
	}
	var keep []int
	for _, i := range tr.Order() {
		if sshareKeep(&tr.Assocs[i], users, opt) {
			keep = append(keep, i)
		}
	}
	opt.indentFrom = sshareTop(tr, keep, opt)
	for _, i := range keep {
		writeSshareLine(&b, cols, opt, func(f sshareField) string { return sshareCell(tr, cfg, i, f.name, opt) })
	}
	return b.String(), nil
}

// sshareTop is the depth printed without indentation: the root's, or with
// -A the shallowest listed account's (oracle, acct-shows: "sshare -A
// physics -a" prints physics flush left and its users one space in).
func sshareTop(tr *Tree, keep []int, opt SshareOptions) int {
	if len(opt.Accounts) == 0 || len(keep) == 0 {
		return 0
	}
	top := tr.Assocs[keep[0]].depth
	for _, i := range keep {
		top = min(top, tr.Assocs[i].depth)
	}
	return top
}

func sshareKeep(a *Assoc, users []string, opt SshareOptions) bool {
	if len(opt.Accounts) > 0 && !slices.Contains(opt.Accounts, a.Account) {
		return false
	}
	if !a.IsUser() {
		return !opt.UsersOnly
	}
	return len(users) == 0 || slices.Contains(users, a.User)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// writeSshareLine prints one line the way Slurm's print_fields does: each
// field padded to its width and followed by a space, or '|'-separated
// when parsable (with a trailing '|' for -p, none for -P). Overlong
// strings are cut with a trailing '+'.
func writeSshareLine(b *strings.Builder, cols []sshareField, opt SshareOptions, cell func(sshareField) string) {
	for k, f := range cols {
		v := cell(f)
		switch {
		case opt.Parsable2:
			b.WriteString(v)
			if k < len(cols)-1 {
				b.WriteByte('|')
			}
		case opt.Parsable:
			b.WriteString(v)
			b.WriteByte('|')
		default:
			w := abs(f.width)
			if w > 0 && len(v) > w {
				v = v[:w-1] + "+"
			}
			b.WriteString(justify(v, w, f.width > 0))
			b.WriteByte(' ')
		}
	}
	b.WriteByte('\n')
}

func sshareCell(tr *Tree, cfg *Config, i int, name string, opt SshareOptions) string {
	a := &tr.Assocs[i]
	isRoot := i == 0
	switch name {
	case "Account":
		return strings.Repeat(" ", max(a.depth-opt.indentFrom, 0)) + a.Account
	case "User":
		return a.User
	case "RawShares":
		switch {
		case isRoot:
			return ""
		case a.SharesFromParent():
			return "parent"
		}
		return strconv.FormatUint(uint64(a.RawShares), 10)
	case "NormShares":
		return fmtDouble(a.NormShares)
	case "RawUsage":
		return strconv.FormatUint(uint64(a.UsageRaw), 10)
	case "NormUsage":
		if a.AwaitingPass || isRoot {
			// not computed before the next PriorityCalcPeriod pass; the
			// root row's is blank (Slurm 24.11 oracle, Fair Tree and
			// classic)
			return ""
		}
		return fmtDouble(a.NormUsage)
	case "EffectvUsage":
		return fmtDouble(a.EffectvUsage)
	case "FairShare":
		return sshareFairShare(a, cfg, isRoot)
	case "LevelFS":
		if isRoot || !cfg.Flags.FairTree() || a.LevelFS == fsParentLevelFS {
			return ""
		}
		return fmtDouble(a.LevelFS)
	case "GrpTRESMins":
		return limitString(a.GrpTRESMins)
	case "TRESRunMins":
		return tresList(tr, func(n string) int64 { return a.TRESRunMins[n] })
	case "GrpTRESRaw":
		return tresList(tr, func(n string) int64 { return int64(a.UsageTRES[n] / 60) })
	case "Partition":
		return a.Partition
	case "Cluster":
		return opt.Cluster
	case "ID":
		return strconv.FormatUint(uint64(a.ID), 10)
	}
	return ""
}

// fmtDouble prints %f, and `inf` for infinity as Slurm's sshare does.
func fmtDouble(v float64) string {
	if math.IsInf(v, 1) {
		return "inf"
	}
	return strconv.FormatFloat(v, 'f', 6, 64)
}

// tresList prints name=value for every configured TRES, as sshare prints
// TRESRunMins and GrpTRESRaw.
func tresList(tr *Tree, val func(string) int64) string {
	names := tr.TRESNames
	if len(names) == 0 {
		names = DefaultTRESNames
	}
	parts := make([]string, len(names))
	for k, n := range names {
		parts[k] = n + "=" + strconv.FormatInt(val(n), 10)
	}
	return strings.Join(parts, ",")
}

// limitString prints the set limits as name=value in Slurm's TRES order.
func limitString(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.SortFunc(names, compareTRES)
	parts := make([]string, len(names))
	for k, n := range names {
		parts[k] = n + "=" + strconv.FormatInt(m[n], 10)
	}
	return strings.Join(parts, ",")
}

// compareTRES orders TRES names as Slurm prints them: the built-in ones
// first in their fixed order, then the rest by name.
func compareTRES(a, b string) int {
	ra, rb := slices.Index(DefaultTRESNames, a), slices.Index(DefaultTRESNames, b)
	switch {
	case ra >= 0 && rb >= 0:
		return ra - rb
	case ra >= 0:
		return -1
	case rb >= 0:
		return 1
	}
	return strings.Compare(a, b)
}

// sshareFairShare is an association's FairShare cell: users only under
// Fair Tree; every row under classic fair share (NO_FAIR_TREE), where
// Slurm prints an account's 2^(-EffectvUsage/NormShares) too, root's
// included (oracle: root 0.500000, an account with EffectvUsage 1 and
// NormShares 0.6 0.314980).
func sshareFairShare(a *Assoc, cfg *Config, isRoot bool) string {
	switch {
	case a.IsUser():
		return fmtDouble(a.FairShare)
	case cfg.Flags&FlagNoFairTree == 0:
		return ""
	case isRoot:
		if a.NormShares <= 0 {
			return fmtDouble(0)
		}
		return fmtDouble(math.Exp2(-a.EffectvUsage / a.NormShares))
	}
	return fmtDouble(a.FairShare)
}
