package acct

import (
	"sort"
	"strconv"
	"strings"
	"sync"
)

// row is one line of show output: whichever records the entity has.
type row struct {
	st    *State
	a, e  *Association // raw and effective association
	par   *Association
	q     *QOS
	u     *User
	acct  *Account
	t     *TRESRecord
	depth int
}

// colDef is one column sacctmgr can print: its header, default width
// (Slurm's) and how to get its value.
type colDef struct {
	header string
	width  int
	get    func(r row) string
}

func assocVec(get func(*AssocLimits) *tresVec, eff bool) func(r row) string {
	return func(r row) string {
		a := r.a
		if eff {
			a = r.e
		}
		if a == nil {
			return ""
		}
		return formatTRES(r.st, *get(&a.AssocLimits))
	}
}

func assocCount(get func(*AssocLimits) *Limit, eff, wall bool) func(r row) string {
	return func(r row) string {
		a := r.a
		if eff {
			a = r.e
		}
		if a == nil {
			return ""
		}
		if wall {
			return formatMinutes(*get(&a.AssocLimits))
		}
		return formatLimit(*get(&a.AssocLimits))
	}
}

// legacyAssoc shows one TRES of a TRES limit (MaxCPUs = MaxTRES cpu).
func legacyAssoc(get func(*AssocLimits) *tresVec, key string, eff bool) func(r row) string {
	return func(r row) string {
		a := r.a
		if eff {
			a = r.e
		}
		if a == nil {
			return ""
		}
		if v, ok := (*get(&a.AssocLimits))[key]; ok {
			return strconv.FormatInt(v, 10)
		}
		return ""
	}
}

func fld(f map[string]func(*AssocLimits) *tresVec, k string) func(*AssocLimits) *tresVec { return f[k] }

// assocCols() are the association columns (show assoc, user -s, account
// -s, cluster), keyed by lower-cased name.
var assocCols = sync.OnceValue(func() map[string]colDef {
	return map[string]colDef{
		"cluster": {"Cluster", 10, func(r row) string { return assocStr(r, func(a *Association) string { return a.Cluster }) }},
		"account": {"Account", 10, func(r row) string {
			if r.a == nil && r.acct != nil {
				return r.acct.Name
			}
			return assocStr(r, func(a *Association) string { return a.Account })
		}},
		"user": {"User", 10, func(r row) string {
			if r.a == nil && r.u != nil {
				return r.u.Name
			}
			return assocStr(r, func(a *Association) string { return a.User })
		}},
		"partition": {"Partition", 10, func(r row) string { return assocStr(r, func(a *Association) string { return a.Partition }) }},
		"share":     {"Share", 9, func(r row) string { return assocStr(r, sharesString) }},
		"priority": {"Priority", 10, func(r row) string {
			return assocStr(r, func(a *Association) string { return formatLimit(r.e.Priority) })
		}},
		"grpjobs":        {"GrpJobs", 7, assocCount(assocCountFields()["GrpJobs"], false, false)},
		"grpjobsaccrue":  {"GrpJobsAccrue", 13, assocCount(assocCountFields()["GrpJobsAccrue"], false, false)},
		"grpsubmit":      {"GrpSubmit", 9, assocCount(assocCountFields()["GrpSubmitJobs"], false, false)},
		"grpwall":        {"GrpWall", 11, assocCount(assocWallFields()["GrpWall"], false, true)},
		"grptres":        {"GrpTRES", 13, assocVec(fld(assocTRESFields(), "GrpTRES"), false)},
		"grptresmins":    {"GrpTRESMins", 13, assocVec(fld(assocTRESFields(), "GrpTRESMins"), false)},
		"grptresrunmins": {"GrpTRESRunMins", 13, assocVec(fld(assocTRESFields(), "GrpTRESRunMins"), false)},
		"maxjobs":        {"MaxJobs", 7, assocCount(assocCountFields()["MaxJobs"], true, false)},
		"maxjobsaccrue":  {"MaxJobsAccrue", 13, assocCount(assocCountFields()["MaxJobsAccrue"], true, false)},
		"maxsubmit":      {"MaxSubmit", 9, assocCount(assocCountFields()["MaxSubmitJobs"], true, false)},
		"maxwall":        {"MaxWall", 11, assocCount(assocWallFields()["MaxWall"], true, true)},
		"maxtres":        {"MaxTRES", 13, assocVec(fld(assocTRESFields(), "MaxTRES"), true)},
		"maxtrespernode": {"MaxTRESPerNode", 14, assocVec(fld(assocTRESFields(), "MaxTRESPerNode"), true)},
		"maxtresmins":    {"MaxTRESMins", 13, assocVec(fld(assocTRESFields(), "MaxTRESMins"), true)},
		"maxtresrunmins": {"MaxTRESRunMins", 13, assocVec(fld(assocTRESFields(), "MaxTRESRunMins"), true)},
		"minpriothres":   {"MinPrioThres", 12, assocCount(assocCountFields()["MinPrioThreshold"], true, false)},
		"maxcpus":        {"MaxCPUs", 8, legacyAssoc(fld(assocTRESFields(), "MaxTRES"), "cpu", true)},
		"maxnodes":       {"MaxNodes", 8, legacyAssoc(fld(assocTRESFields(), "MaxTRES"), "node", true)},
		"maxcpumins":     {"MaxCPUMins", 11, legacyAssoc(fld(assocTRESFields(), "MaxTRESMins"), "cpu", true)},
		"grpcpus":        {"GrpCPUs", 8, legacyAssoc(fld(assocTRESFields(), "GrpTRES"), "cpu", false)},
		"grpnodes":       {"GrpNodes", 8, legacyAssoc(fld(assocTRESFields(), "GrpTRES"), "node", false)},
		"grpmem":         {"GrpMem", 7, legacyAssoc(fld(assocTRESFields(), "GrpTRES"), "mem", false)},
		"grpcpumins":     {"GrpCPUMins", 11, legacyAssoc(fld(assocTRESFields(), "GrpTRESMins"), "cpu", false)},
		"qos": {"QOS", 20, func(r row) string {
			return assocStr(r, func(*Association) string { return strings.Join(r.e.QOS, ",") })
		}},
		"defaultqos": {"Def QOS", 9, func(r row) string { return assocStr(r, func(*Association) string { return r.e.DefaultQOS }) }},
		"id": {"ID", 6, func(r row) string {
			return assocStr(r, func(a *Association) string { return strconv.FormatInt(a.ID, 10) })
		}},
		"parentid": {"Par ID", 6, func(r row) string {
			return assocStr(r, func(a *Association) string {
				if a.ParentID == 0 {
					return ""
				}
				return strconv.FormatInt(a.ParentID, 10)
			})
		}},
		"parentname": {"Par Name", 10, func(r row) string {
			if r.a == nil || r.a.IsUser() || r.par == nil {
				return ""
			}
			return r.par.Account
		}},
	}
})

var assocColAliases = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"fairshare": "share", "shares": "share", "acct": "account", "grpsubmitjobs": "grpsubmit",
		"maxsubmitjobs": "maxsubmit", "maxtresperjob": "maxtres", "maxtrespj": "maxtres",
		"maxtrespn": "maxtrespernode", "maxwalldurationperjob": "maxwall", "maxtresminsperjob": "maxtresmins",
		"defqos": "defaultqos", "qoslevel": "qos", "users": "user", "accounts": "account", "clusters": "cluster",
		"associd": "id", "parent": "parentname", "partitions": "partition", "minpriothreshold": "minpriothres",
		"grpwallduration": "grpwall",
	}
})

func assocStr(r row, f func(*Association) string) string {
	if r.a == nil {
		return ""
	}
	return f(r.a)
}

func sharesString(a *Association) string {
	if a.Shares == SharesParent {
		return "parent"
	}
	return strconv.FormatInt(a.Shares, 10)
}

// entityCols() are the non-association columns of users, accounts,
// clusters and TRES.
var entityCols = sync.OnceValue(func() map[string]colDef {
	return map[string]colDef{
		"defaultaccount": {"Def Acct", 10, func(r row) string { return userStr(r, func(u *User) string { return u.DefaultAccount }) }},
		"adminlevel":     {"Admin", 9, func(r row) string { return userStr(r, func(u *User) string { return u.AdminLevel.String() }) }},
		"description":    {"Descr", 20, func(r row) string { return acctStr(r, func(a *Account) string { return a.Description }) }},
		"organization":   {"Org", 20, func(r row) string { return acctStr(r, func(a *Account) string { return a.Organization }) }},
		"controlhost":    {"ControlHost", 15, func(r row) string { return clusterOf(r).ControlHost }},
		"controlport":    {"ControlPort", 12, func(r row) string { return strconv.Itoa(clusterOf(r).ControlPort) }},
		"rpc":            {"RPC", 5, func(r row) string { return strconv.Itoa(clusterOf(r).RPC) }},
		"type":           {"Type", 8, func(r row) string { return tresStr(r, func(t *TRESRecord) string { return t.Type }) }},
		"name":           {"Name", 15, func(r row) string { return tresStr(r, func(t *TRESRecord) string { return t.Name }) }},
	}
})

var entityColAliases = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"defaultacct": "defaultaccount", "defacct": "defaultaccount", "admin": "adminlevel",
		"descr": "description", "org": "organization",
	}
})

// clusterOf returns the cluster of an association row (an empty one
// when the row has none).
func clusterOf(r row) *Cluster {
	if r.a == nil || r.st == nil || r.st.Clusters[r.a.Cluster] == nil {
		return &Cluster{}
	}
	return r.st.Clusters[r.a.Cluster]
}

func userStr(r row, f func(*User) string) string {
	if r.u == nil {
		return ""
	}
	return f(r.u)
}

func acctStr(r row, f func(*Account) string) string {
	if r.acct == nil {
		return ""
	}
	return f(r.acct)
}

func tresStr(r row, f func(*TRESRecord) string) string {
	if r.t == nil {
		return ""
	}
	return f(r.t)
}

// Default column lists of each show command, as sacctmgr prints them.
var (
	defaultAssocCols     = "Cluster,Account,User,Partition,Share,Priority,GrpJobs,GrpTRES,GrpSubmit,GrpWall,GrpTRESMins,MaxJobs,MaxTRES,MaxTRESPerNode,MaxSubmit,MaxWall,MaxTRESMins,QOS,DefaultQOS,GrpTRESRunMins"
	defaultUserCols      = "User,DefaultAccount,Admin"
	defaultUserAssocCols = "User,DefaultAccount,Admin,Cluster,Account,Partition,Share,Priority,MaxJobs,MaxNodes,MaxCPUs,MaxSubmit,MaxWall,MaxCPUMins,QOS,DefaultQOS"
	defaultAcctCols      = "Account,Descr,Org"
	defaultAcctAssocCols = "Account,Descr,Org,Cluster,ParentName,User,Share,Priority,GrpJobs,GrpTRES,GrpSubmit,GrpWall,GrpTRESMins,MaxJobs,MaxTRES,MaxTRESPerNode,MaxSubmit,MaxWall,MaxTRESMins,QOS,DefaultQOS"
	defaultClusterCols   = "Cluster,ControlHost,ControlPort,RPC,Share,GrpJobs,GrpTRES,GrpSubmit,MaxJobs,MaxTRES,MaxSubmit,MaxWall,QOS,DefaultQOS"
	defaultQOSCols       = "Name,Priority,GraceTime,Preempt,PreemptExemptTime,PreemptMode,Flags,UsageThres,UsageFactor,GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJobs,GrpSubmit,GrpWall,MaxTRES,MaxTRESPerNode,MaxTRESMins,MaxWall,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxTRESPA,MaxJobsPA,MaxSubmitPA,MinTRES"
	defaultTRESCols      = "Type,Name,ID"
)

// lookupCol finds a column by name for an entity.
func lookupCol(ent Entity, name string) (colDef, bool) {
	n := strings.ToLower(name)
	if ent == EntQOS {
		if a, ok := qosColAliases()[n]; ok {
			n = a
		}
		c, ok := qosCols()[n]
		return c, ok
	}
	if ent == EntTRES && n == "id" {
		return colDef{"ID", 6, func(r row) string {
			return tresStr(r, func(t *TRESRecord) string { return strconv.FormatInt(t.ID, 10) })
		}}, true
	}
	if a, ok := entityColAliases()[n]; ok {
		n = a
	}
	if c, ok := entityCols()[n]; ok {
		return c, true
	}
	if ent == EntCluster && n == "cluster" {
		return colDef{"Cluster", 10, func(r row) string { return assocStr(r, func(a *Association) string { return a.Cluster }) }}, true
	}
	if a, ok := assocColAliases()[n]; ok {
		n = a
	}
	c, ok := assocCols()[n]
	return c, ok
}

// Show renders a show/list command from a policy snapshot.
func Show(p *Policy, cmd *Command, o Options) (string, error) {
	cols, err := showColumns(cmd, o)
	if err != nil {
		return "", err
	}
	rows, err := showRows(p, cmd, o)
	if err != nil {
		return "", err
	}
	return render(cols, rows, o, cmd.Tree && cmd.Entity == EntAssoc), nil
}

type column struct {
	colDef
	w    int
	left bool
	key  string
	// sized is set when format= gave the width (%N).
	sized bool
}

func showColumns(cmd *Command, o Options) ([]column, error) {
	spec := cmd.Format
	if len(spec) == 0 {
		for _, n := range strings.Split(defaultCols(cmd, o), ",") {
			spec = append(spec, Column{Name: n})
		}
	}
	var out []column
	for _, c := range spec {
		d, ok := lookupCol(cmd.Entity, c.Name)
		if !ok {
			return nil, errorf("Unknown field '%s'", c.Name)
		}
		col := column{colDef: d, w: d.width, key: strings.ToLower(c.Name)}
		if c.Width != 0 {
			col.w, col.left, col.sized = abs(c.Width), c.Width < 0, true
		}
		out = append(out, col)
	}
	return out, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func defaultCols(cmd *Command, o Options) string {
	withAssoc := cmd.WithAssoc || o.WithAssoc
	switch cmd.Entity {
	case EntUser:
		if withAssoc {
			return defaultUserAssocCols
		}
		return defaultUserCols
	case EntAccount:
		if withAssoc {
			return defaultAcctAssocCols
		}
		return defaultAcctCols
	case EntCluster:
		return defaultClusterCols
	case EntQOS:
		return defaultQOSCols
	case EntTRES:
		return defaultTRESCols
	}
	return defaultAssocCols
}

// render lays rows out as sacctmgr does: fixed-width right-justified
// fields (a '+' marks a truncated value) with a header and a dashed rule,
// or '|'-separated with -p/-P.
func render(cols []column, rows []row, o Options, tree bool) string {
	var b strings.Builder
	parsable := o.Parsable || o.Parsable2
	for i := range cols {
		if tree && isTreeCol(cols[i]) {
			// sacctmgr left-justifies the indented tree in 20 columns.
			cols[i].left, cols[i].w = true, 20
		}
	}
	line := func(vals []string) {
		for i, v := range vals {
			if parsable {
				b.WriteString(v)
				if i < len(vals)-1 || o.Parsable {
					b.WriteByte('|')
				}
				continue
			}
			b.WriteString(pad(v, cols[i].w, cols[i].left))
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	if !o.NoHeader {
		hdr := make([]string, len(cols))
		rule := make([]string, len(cols))
		for i, c := range cols {
			hdr[i] = c.header
			if !parsable && len(hdr[i]) > c.w {
				hdr[i] = hdr[i][:c.w]
			}
			rule[i] = strings.Repeat("-", c.w)
		}
		line(hdr)
		if !parsable {
			line(rule)
		}
	}
	for _, r := range rows {
		vals := make([]string, len(cols))
		for i, c := range cols {
			vals[i] = c.get(r)
			if tree && isTreeCol(c) {
				vals[i] = strings.Repeat(" ", r.depth) + vals[i]
			}
		}
		line(vals)
	}
	return b.String()
}

// isTreeCol reports whether c is the account column a tree indents:
// sacctmgr does not indent one given a width with %N.
func isTreeCol(c column) bool {
	return (c.key == "account" || c.key == "acct") && !c.sized
}

// pad fits v into w characters, truncating with a trailing '+'.
func pad(v string, w int, left bool) string {
	if len(v) > w {
		if w <= 0 {
			return ""
		}
		return v[:w-1] + "+"
	}
	if left {
		return v + strings.Repeat(" ", w-len(v))
	}
	return strings.Repeat(" ", w-len(v)) + v
}

// showRows selects the records a show command prints.
func showRows(p *Policy, cmd *Command, o Options) ([]row, error) {
	switch cmd.Entity {
	case EntQOS:
		return qosRows(p, cmd)
	case EntTRES:
		return tresRows(p, cmd)
	case EntUser:
		return userRows(p, cmd, cmd.WithAssoc || o.WithAssoc)
	case EntAccount:
		return accountRows(p, cmd, cmd.WithAssoc || o.WithAssoc)
	case EntCluster:
		return clusterRows(p, cmd)
	}
	return assocRows(p, cmd)
}

func (p *Policy) row(a *Association) row {
	r := row{st: p.st, a: a, e: p.Effective(a), par: p.Parent(a), depth: p.Depth(a)}
	if a.IsUser() {
		r.u = p.User(a.User)
	}
	r.acct = p.Account(a.Account)
	return r
}

func assocRows(p *Policy, cmd *Command) ([]row, error) {
	if err := checkKeys(cmd.Where, false, "Cluster", "Account", "User", "Partition", "ID", "Parent", "QOS"); err != nil {
		return nil, err
	}
	f, err := filterFrom(cmd.Where)
	if err != nil {
		return nil, err
	}
	f.users = append(f.users, cmd.Names...)
	parents := specValues(cmd.Where, "Parent", true)
	qos := specValues(cmd.Where, "QOS", true)
	var out []row
	for _, a := range p.Associations() {
		if !f.match(a) {
			continue
		}
		r := p.row(a)
		if len(parents) > 0 && (r.par == nil || !contains(parents, r.par.Account)) {
			continue
		}
		if len(qos) > 0 && !anyIn(qos, r.e.QOS) {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

func anyIn(want, have []string) bool {
	for _, w := range want {
		if contains(have, w) {
			return true
		}
	}
	return false
}

func userRows(p *Policy, cmd *Command, withAssoc bool) ([]row, error) {
	if err := checkKeys(cmd.Where, false, "Cluster", "Account", "Partition", "DefaultAccount", "AdminLevel", "User"); err != nil {
		return nil, err
	}
	users, err := matchUsers(p.st, cmd.Names, cmd.Where)
	if err != nil {
		return nil, err
	}
	var out []row
	if !withAssoc {
		for _, u := range users {
			out = append(out, row{st: p.st, u: u})
		}
		return out, nil
	}
	f, _ := filterFrom(cmd.Where)
	f.onlyUsers = true
	for _, u := range users {
		f.users = []string{u.Name}
		for _, a := range p.Associations() {
			if f.match(a) {
				out = append(out, p.row(a))
			}
		}
	}
	return out, nil
}

func accountRows(p *Policy, cmd *Command, withAssoc bool) ([]row, error) {
	if err := checkKeys(cmd.Where, false, "Cluster", "Account", "Description", "Organization", "Parent"); err != nil {
		return nil, err
	}
	accts := matchAccounts(p.st, cmd.Names, cmd.Where)
	var out []row
	if !withAssoc {
		for _, a := range accts {
			out = append(out, row{st: p.st, acct: a})
		}
		return out, nil
	}
	clusters := specValues(cmd.Where, "Cluster", true)
	for _, acct := range accts {
		for _, a := range p.Associations() {
			if a.Account == acct.Name && matchAny(clusters, a.Cluster) {
				out = append(out, p.row(a))
			}
		}
	}
	return out, nil
}

func clusterRows(p *Policy, cmd *Command) ([]row, error) {
	if err := checkKeys(cmd.Where, false, "Cluster"); err != nil {
		return nil, err
	}
	names := append(lowerNames(cmd.Names), specValues(cmd.Where, "Cluster", true)...)
	var cs []string
	for c := range p.st.Clusters {
		if matchAny(names, c) {
			cs = append(cs, c)
		}
	}
	sort.Strings(cs)
	var out []row
	for _, c := range cs {
		if root := p.Root(c); root != nil {
			out = append(out, p.row(root))
		}
	}
	return out, nil
}

func tresRows(p *Policy, cmd *Command) ([]row, error) {
	if err := checkKeys(cmd.Where, false, "Type", "ID"); err != nil {
		return nil, err
	}
	types := specValues(cmd.Where, "Type", true)
	ids := specValues(cmd.Where, "ID", false)
	var ts []*TRESRecord
	for _, t := range p.st.TRES {
		if matchAny(types, t.Type) && matchAny(ids, strconv.FormatInt(t.ID, 10)) &&
			(len(cmd.Names) == 0 || contains(cmd.Names, t.Name) || contains(cmd.Names, t.Key())) {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].ID < ts[j].ID })
	out := make([]row, len(ts))
	for i, t := range ts {
		out[i] = row{st: p.st, t: t}
	}
	return out, nil
}
