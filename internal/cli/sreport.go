package cli

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/duration"
)

func init() {
	Register(Command{Name: "sreport", Summary: "usage reports from the accounting records (cluster utilization, account/user usage, top users)", Link: true, Run: runSreport})
}

const sreportUsage = `Usage: sreport [-t Minutes|Hours|Seconds|Percent|MinPer|HourPer|SecPer] [-p|-P] [-n] REPORT [OPTIONS]
Reports:
  cluster utilization              [start=TIME] [end=TIME] [format=FIELDS]
  cluster AccountUtilizationByUser [accounts=LIST] [users=LIST] [start=] [end=] [format=]
  user topusage                    [topcount=N] [accounts=LIST] [users=LIST] [start=] [end=] [format=]
Default period: yesterday 00:00:00 to 23:59:59. Usage is CPU time.
`

// sreportOpts are sreport's options and the report's keywords.
type sreportOpts struct {
	unit                string
	parsable, parsable2 bool
	noHeader            bool
	report              string // "cluster utilization", ...
	start, end          string
	format              []string
	accounts, users     []string
	topCount            int
	// plannedDown is the PlannedDown CPU time of the period (the
	// controller's node history, like AcctResponse.DownCPUSeconds).
	plannedDown int64
	// warnings are what sreport prints on stderr and goes on after
	// (an unknown unit, a bad time, an unknown condition); exit is the
	// status it then ends with.
	warnings []string
	exit     int
}

// sreportRefusal is a report request sreport refuses before printing
// anything; its text goes to stderr as it stands (no "sreport: error:").
type sreportRefusal struct{ text string }

func (e *sreportRefusal) Error() string { return e.text }

// sreportUnits maps -t values to the header's words.
var sreportUnits = []struct{ name, header string }{
	{"Seconds", "CPU Seconds"}, {"Minutes", "CPU Minutes"}, {"Hours", "CPU Hours"},
	{"Percent", "Percentage of Total"}, {"SecPer", "CPU Seconds/Percentage of Total"},
	{"MinPer", "CPU Minutes/Percentage of Total"}, {"HourPer", "CPU Hours/Percentage of Total"},
}

func parseSreport(args []string) (*sreportOpts, error) {
	o := &sreportOpts{unit: "Minutes", topCount: 10}
	var words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-t" || a == "--time":
			if i+1 >= len(args) {
				return nil, fmt.Errorf("option '%s' requires an argument", a)
			}
			o.unit = args[i+1]
			i++
		case strings.HasPrefix(a, "--time="):
			o.unit = strings.TrimPrefix(a, "--time=")
		case a == "-P" || a == "--parsable2":
			o.parsable2 = true
		case a == "-p" || a == "--parsable":
			o.parsable = true
		case a == "-n" || a == "--noheader":
			o.noHeader = true
		case strings.HasPrefix(a, "-") && a != "-":
			return nil, fmt.Errorf("unrecognized option '%s'", a)
		default:
			words = append(words, a)
		}
	}
	unit, err := sreportUnit(o.unit)
	if err != nil {
		// sreport says so (without a newline) and reports in minutes.
		o.warnings = append(o.warnings, err.Error())
		unit = "Minutes"
	}
	o.unit = unit
	return o, o.parseWords(words)
}

// sreportUnit resolves a case-insensitive, possibly abbreviated unit.
func sreportUnit(s string) (string, error) {
	for _, u := range sreportUnits {
		if strings.EqualFold(u.name, s) {
			return u.name, nil
		}
	}
	for _, u := range sreportUnits {
		if len(s) > 0 && len(s) < len(u.name) && strings.EqualFold(u.name[:len(s)], s) {
			return u.name, nil
		}
	}
	return "", fmt.Errorf("unknown time format %s", s)
}

func (o *sreportOpts) parseWords(words []string) error {
	var kind []string
	for _, w := range words {
		k, v, isKV := strings.Cut(w, "=")
		if !isKV {
			kind = append(kind, strings.ToLower(w))
			continue
		}
		switch strings.ToLower(k) {
		case "start", "end":
			if _, err := duration.ParseTimePast(v, time.Now(), time.Local); err != nil {
				// sreport says so and keeps its default period.
				o.warnings = append(o.warnings, "Invalid time specification (pos=0): "+v+"\n")
			} else if strings.EqualFold(k, "start") {
				o.start = v
			} else {
				o.end = v
			}
		case "format":
			o.format = strings.Split(v, ",")
		case "accounts", "account", "acct", "accts":
			o.accounts = strings.Split(strings.ToLower(v), ",") // stored lowercase, as in Slurm
		case "users", "user":
			o.users = strings.Split(v, ",")
		case "topcount":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("invalid TopCount %q", v)
			}
			o.topCount = n
		case "cluster", "clusters", "tree", "group":
		default:
			// sreport says so and still prints the report, then exits 1.
			o.warnings = append(o.warnings, " Unknown condition: "+w+"\nUse keyword set to modify value\n")
			o.exit = 1
		}
	}
	if len(kind) == 0 {
		return fmt.Errorf("a report is needed: cluster utilization, cluster AccountUtilizationByUser or user topusage")
	}
	valid, ok := sreportReports[kind[0]]
	switch {
	case !ok:
		return &sreportRefusal{"invalid keyword: " + kind[0] + "\n"}
	case len(kind) < 2:
		return &sreportRefusal{"too few arguments for keyword:" + kind[0] + "\n"}
	}
	switch {
	case kind[0] == "cluster" && strings.HasPrefix("utilization", kind[1]) && len(kind[1]) >= 2:
		o.report = "cluster utilization"
	case kind[0] == "cluster" && (kind[1] == "accountutilizationbyuser" || kind[1] == "aubu"):
		o.report = "cluster accountutilizationbyuser"
	case kind[0] == "user" && (kind[1] == "topusage" || kind[1] == "top"):
		o.report = "user topusage"
	default:
		return &sreportRefusal{fmt.Sprintf("Not valid report %s\nValid %s reports are, %s\n", kind[1], kind[0], valid)}
	}
	return nil
}

// sreportReports are sreport's report families and, as sreport lists
// them when asked for one it does not have, their reports (oracle,
// Slurm 24.11; docs/compatibility.md says which Sluice implements).
var sreportReports = map[string]string{
	"cluster": `"AccountUtilizationByUser", "AccountUtilizationByQOS", "UserUtilizationByAccount", ` +
		`"UserUtilizationByWckey", "Utilization", and "WCKeyUtilizationByUser"`,
	"user":        `"Top"`,
	"job":         `"SizesByAccount, SizesByAccountAndWcKey, and  SizesByWckey"`,
	"reservation": `"Utilization"`,
}

func runSreport(ctx context.Context, env *Env, args []string) int {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "help" {
			fmt.Fprint(env.Stdout, sreportUsage)
			return 0
		}
	}
	if rc, ok := sreportReservation(ctx, env, args); ok {
		return rc // reservation utilization: scontrol_resv.go
	}
	o, err := parseSreport(args)
	var refusal *sreportRefusal
	if errors.As(err, &refusal) {
		fmt.Fprint(env.Stderr, refusal.text)
		return 1
	}
	if err != nil {
		return Errorf(env, "sreport", "%v", err)
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "sreport", err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := cl.Accounting(ctx)
	if err != nil {
		return clientError(env, "sreport", err)
	}
	if o.report == "cluster utilization" {
		start, end, err := sreportPeriod(o, res.Now, time.Local)
		if err != nil {
			return Errorf(env, "sreport", "%v", err)
		}
		if from, to := sreportRolledUp(res, start, end); to.After(from) {
			nu, err := cl.NodeUsage(ctx, from, to)
			if err != nil {
				return clientError(env, "sreport", err)
			}
			res.DownCPUSeconds, o.plannedDown = nu.DownCPUSeconds, nu.PlannedDownCPUSeconds
		}
	}
	out, err := RenderSreport(res, o, time.Local, properName)
	if err != nil {
		return Errorf(env, "sreport", "%v", err)
	}
	for _, w := range o.warnings {
		fmt.Fprint(env.Stderr, w)
	}
	fmt.Fprint(env.Stdout, out)
	return o.exit
}

// properName is the user's full name from the password database.
func properName(login string) string {
	if u, err := user.Lookup(login); err == nil {
		name, _, _ := strings.Cut(u.Name, ",")
		return name
	}
	return ""
}

// sreportPeriod returns [start, end): default yesterday.
func sreportPeriod(o *sreportOpts, now time.Time, loc *time.Location) (time.Time, time.Time, error) {
	n := now.In(loc)
	today := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	start, end := today.AddDate(0, 0, -1), today
	if o.start != "" {
		t, err := duration.ParseTimePast(o.start, now, loc)
		if err != nil {
			return start, end, fmt.Errorf("Invalid start time %s", o.start)
		}
		start = t
	}
	if o.end != "" {
		t, err := duration.ParseTimePast(o.end, now, loc)
		if err != nil {
			return start, end, fmt.Errorf("Invalid end time %s", o.end)
		}
		end = t
	}
	if o.start != "" && o.end == "" && !end.After(start) {
		end = now // start=today: up to now
	}
	if end.After(now) {
		end = now.Truncate(time.Second)
	}
	if !end.After(start) {
		return start, end, fmt.Errorf("start time %s is not before end time %s", start.Format(time.DateTime), end.Format(time.DateTime))
	}
	return start, end, nil
}

// cpuSeconds is the CPU time a run used inside [start, end).
func cpuSeconds(r *api.AcctRecord, start, end, now time.Time) int64 {
	if r.Step != "" || r.Start.IsZero() {
		return 0
	}
	e := r.End
	if e.IsZero() {
		e = now
	}
	s := r.Start
	if s.Before(start) {
		s = start
	}
	if e.After(end) {
		e = end
	}
	if !e.After(s) {
		return 0
	}
	return int64(e.Sub(s)/time.Second) * tresOf(r.AllocTRES, "cpu")
}

// sreportValue prints CPU-seconds v in the unit (total is 100%).
func sreportValue(unit string, v, total int64) string {
	pct := func() string {
		if total <= 0 {
			return "0.00%"
		}
		return fmt.Sprintf("%.2f%%", float64(v)*100/float64(total))
	}
	switch unit {
	case "Seconds":
		return strconv.FormatInt(v, 10)
	case "Minutes":
		return strconv.FormatInt(v/60, 10)
	case "Hours":
		return strconv.FormatInt(v/3600, 10)
	case "Percent":
		return pct()
	case "SecPer":
		return fmt.Sprintf("%d(%s)", v, pct())
	case "MinPer":
		return fmt.Sprintf("%d(%s)", v/60, pct())
	}
	return fmt.Sprintf("%d(%s)", v/3600, pct())
}

// sreportCol is one report column: header and width (negative = left).
type sreportCol struct {
	key, header string
	width       int
}

// RenderSreport computes and prints one report.
func RenderSreport(res api.AcctResponse, o *sreportOpts, loc *time.Location, proper func(string) string) (string, error) {
	start, end, err := sreportPeriod(o, res.Now, loc)
	if err != nil {
		return "", err
	}
	secs := int64(end.Sub(start) / time.Second)
	var unitHeader string
	for _, u := range sreportUnits {
		if u.name == o.unit {
			unitHeader = u.header
		}
	}
	span := start.In(loc).Format("2006-01-02T15:04:05") + " - " + end.Add(-time.Second).In(loc).Format("2006-01-02T15:04:05")
	var title string
	var cols []sreportCol
	var rows []map[string]string
	from, to := sreportRolledUp(res, start, end)
	switch o.report {
	case "cluster utilization":
		title = "Cluster Utilization " + span
		cols, rows = sreportUtilization(res, o, from, to)
	case "cluster accountutilizationbyuser":
		title = fmt.Sprintf("Cluster/Account/User Utilization %s (%d secs)", span, secs)
		cols, rows = sreportAccounts(res, o, from, to, proper)
	default:
		title = fmt.Sprintf("Top %d Users %s (%d secs)", o.topCount, span, secs)
		cols, rows = sreportTop(res, o, from, to, proper)
	}
	if !to.After(from) {
		// Nothing rolled up in the period: Slurm prints the headers only,
		// cluster utilization in its fixed 8-wide layout (oracle).
		rows = nil
		if o.report == "cluster utilization" {
			cols = sreportEmptyUtilization
		}
	}
	if strings.HasSuffix(o.unit, "Per") {
		// "123(45.67%)" needs room, as sreport widens time fields.
		for i := range cols {
			if c := cols[i].key; c != "Cluster" && c != "Accounts" && c != "Login" && c != "Proper" && c != "Account" && c != "Energy" {
				cols[i].width = 20
			}
		}
	}
	var b strings.Builder
	if !o.noHeader {
		line := strings.Repeat("-", 80)
		fmt.Fprintf(&b, "%s\n%s\nUsage reported in %s\n%s\n", line, title, unitHeader, line)
	}
	cols, err = sreportFormat(cols, o.format)
	if err != nil {
		// sreport prints its title block and two empty lines, exit 1.
		o.warnings, o.exit = append(o.warnings, err.Error()), 1
		return b.String() + "\n\n", nil
	}
	sc := sacctOpts{parsable: o.parsable, parsable2: o.parsable2}
	fields := make([]sacctField, len(cols))
	for i, c := range cols {
		fields[i] = sacctField{name: c.header, width: c.width}
	}
	if !o.noHeader {
		sacctLine(&b, fields, &sc, func(f sacctField) string {
			if w := sacctAbs(f.width); !o.parsable && !o.parsable2 && len(f.name) > w {
				return f.name[:w] // sreport cuts a long header, with no '+'
			}
			return f.name
		})
		if !o.parsable && !o.parsable2 {
			sacctLine(&b, fields, &sc, func(f sacctField) string { return strings.Repeat("-", sacctAbs(f.width)) })
		}
	}
	for _, r := range rows {
		i := 0
		sacctLine(&b, fields, &sc, func(sacctField) string { v := r[cols[i].key]; i++; return v })
	}
	return b.String(), nil
}

// sreportRolledUp is the part of [start, end) sreport has data for:
// slurmdbd rolls usage up at the end of each hour, from the time the
// cluster registered, so the current hour and any time before the
// cluster existed report nothing (oracle: a fresh cluster asked for
// 2020-01-01 prints headers only). Sluice sums the same hours from its
// job and node history when asked instead of storing rollup tables.
func sreportRolledUp(res api.AcctResponse, start, end time.Time) (time.Time, time.Time) {
	if !res.Registered.IsZero() && res.Registered.After(start) {
		start = res.Registered
	}
	if rolled := res.Now.Truncate(time.Hour); end.After(rolled) {
		end = rolled
	}
	return start, end
}

// sreportEmptyUtilization is cluster utilization's header with no rows.
var sreportEmptyUtilization = []sreportCol{{"Cluster", "Cluster", 9}, {"Allocated", "Allocated", 8}, {"Down", "Down", 8},
	{"PlannedDown", "Planned", 8}, {"Idle", "Idle", 8}, {"Planned", "Planned", 8}, {"Reported", "Reported", 8}}

// sreportFormat applies format= (field names, optional %width).
func sreportFormat(cols []sreportCol, format []string) ([]sreportCol, error) {
	if len(format) == 0 {
		return cols, nil
	}
	var out []sreportCol
	for _, f := range format {
		name, width, hasWidth := strings.Cut(strings.TrimSpace(f), "%")
		found := false
		all := append(slices.Clone(cols), sreportExtraCols...)
		// An exact name wins over an abbreviation ("Planned" is not
		// "PlannedDown").
		if i := slices.IndexFunc(all, func(c sreportCol) bool { return strings.EqualFold(c.key, name) }); i > 0 {
			all[0], all[i] = all[i], all[0]
		}
		for _, c := range all {
			if strings.EqualFold(c.key, name) || len(name) >= 3 && strings.HasPrefix(strings.ToLower(c.key), strings.ToLower(name)) {
				if hasWidth {
					w, err := strconv.Atoi(width)
					if err != nil || w == 0 {
						return nil, fmt.Errorf("Invalid field width %q", f)
					}
					c.width = w
				}
				out, found = append(out, c), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf(" Unknown field '%s'\n", strings.ToLower(name))
		}
	}
	return out, nil
}

// sreportExtraCols are fields format= may add to the default ones.
var sreportExtraCols = []sreportCol{
	{"OverCommitted", "Over Comm", 9}, {"TresCount", "TRES Count", 10}, {"TresName", "TRES Name", 14},
	{"Energy", "Energy", 8}, {"Cluster", "Cluster", 9},
}

func sreportUtilization(res api.AcctResponse, o *sreportOpts, start, end time.Time) ([]sreportCol, []map[string]string) {
	var alloc int64
	for i := range res.Records {
		alloc += cpuSeconds(&res.Records[i], start, end, res.Now)
	}
	reported := res.ClusterCPUs * int64(end.Sub(start)/time.Second)
	alloc = min(alloc, reported)
	down := min(res.DownCPUSeconds, reported-alloc)
	plnd := min(o.plannedDown, reported-alloc-down)
	// Planned is the time eligible jobs waited while CPUs were neither
	// allocated nor down, at most what was left; the rest of the waiting
	// is OverCommitted (sreport(1)).
	waiting := waitingCPUSeconds(res, start, end)
	planned := min(waiting, reported-alloc-down-plnd)
	over := waiting - planned
	idle := reported - alloc - down - plnd - planned
	v := func(x int64) string { return sreportValue(o.unit, x, reported) }
	cols := []sreportCol{{"Cluster", "Cluster", 9}, {"Allocated", "Allocated", 13}, {"Down", "Down", 13},
		{"PlannedDown", "PLND Down", 10}, {"Idle", "Idle", 13}, {"Planned", "Planned", 13}, {"Reported", "Reported", 13}}
	row := map[string]string{"Cluster": res.Cluster, "Allocated": v(alloc), "Down": v(down), "PlannedDown": v(plnd),
		"Idle": v(idle), "Planned": v(planned), "Reported": v(reported), "OverCommitted": v(over),
		"TresCount": strconv.FormatInt(res.ClusterCPUs, 10), "TresName": "cpu", "Energy": "0"}
	return cols, []map[string]string{row}
}

// waitingCPUSeconds is the CPU time eligible jobs spent waiting inside
// [start, end): from eligibility (a run with no eligible time never was)
// to its start, its end if it never started, or now if still pending,
// times the CPUs requested.
func waitingCPUSeconds(res api.AcctResponse, start, end time.Time) int64 {
	var total int64
	for i := range res.Records {
		r := &res.Records[i]
		if r.Step != "" || r.Eligible.IsZero() {
			continue
		}
		to := r.Start
		if to.IsZero() {
			to = r.End
		}
		if to.IsZero() {
			to = res.Now
		}
		s, e := r.Eligible, to
		if s.Before(start) {
			s = start
		}
		if e.After(end) {
			e = end
		}
		if e.After(s) {
			total += int64(e.Sub(s)/time.Second) * tresOf(r.ReqTRES, "cpu")
		}
	}
	return total
}

// usageKey is a (account, user) pair.
type usageKey struct{ account, user string }

func sreportUse(res api.AcctResponse, o *sreportOpts, start, end time.Time) map[usageKey]int64 {
	use := map[usageKey]int64{}
	for i := range res.Records {
		r := &res.Records[i]
		if len(o.accounts) > 0 && !sacctIn(o.accounts, r.Account) || len(o.users) > 0 && !sacctIn(o.users, r.User) {
			continue
		}
		if s := cpuSeconds(r, start, end, res.Now); s > 0 {
			use[usageKey{r.Account, r.User}] += s
		}
	}
	return use
}

// sreportAccounts is AccountUtilizationByUser: a root row with the
// total, then each account (alphabetically) followed by its users
// (highest usage first). Sluice's records carry the job's account, not
// the account tree, so accounts are listed flat under root.
func sreportAccounts(res api.AcctResponse, o *sreportOpts, start, end time.Time, proper func(string) string) ([]sreportCol, []map[string]string) {
	use := sreportUse(res, o, start, end)
	total := res.ClusterCPUs * int64(end.Sub(start)/time.Second)
	perAcct := map[string]int64{}
	var sum int64
	for k, v := range use {
		perAcct[k.account] += v
		sum += v
	}
	v := func(x int64) string { return sreportValue(o.unit, x, total) }
	row := func(acct, login string, x int64) map[string]string {
		p := ""
		if login != "" {
			p = proper(login)
		}
		return map[string]string{"Cluster": res.Cluster, "Accounts": acct, "Login": login, "Proper": p, "Used": v(x),
			"Energy": "0", "TresCount": strconv.FormatInt(res.ClusterCPUs, 10), "TresName": "cpu"}
	}
	rows := []map[string]string{row("root", "", sum)}
	accts := make([]string, 0, len(perAcct))
	for a := range perAcct {
		accts = append(accts, a)
	}
	sort.Strings(accts)
	for _, a := range accts {
		if a == "root" || a == "" {
			continue
		}
		rows = append(rows, row(a, "", perAcct[a]))
		var users []usageKey
		for k := range use {
			if k.account == a {
				users = append(users, k)
			}
		}
		sort.Slice(users, func(i, j int) bool {
			if use[users[i]] != use[users[j]] {
				return use[users[i]] > use[users[j]]
			}
			return users[i].user < users[j].user
		})
		for _, k := range users {
			rows = append(rows, row(a, k.user, use[k]))
		}
	}
	cols := []sreportCol{{"Cluster", "Cluster", 9}, {"Accounts", "Account", 15}, {"Login", "Login", 9},
		{"Proper", "Proper Name", 15}, {"Used", "Used", 8}, {"Energy", "Energy", 8}}
	return cols, rows
}

// sreportTop is user topusage: the topcount (user, account) pairs with
// the most CPU time, highest first.
func sreportTop(res api.AcctResponse, o *sreportOpts, start, end time.Time, proper func(string) string) ([]sreportCol, []map[string]string) {
	use := sreportUse(res, o, start, end)
	total := res.ClusterCPUs * int64(end.Sub(start)/time.Second)
	keys := make([]usageKey, 0, len(use))
	for k := range use {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if use[keys[i]] != use[keys[j]] {
			return use[keys[i]] > use[keys[j]]
		}
		return keys[i].user+"/"+keys[i].account < keys[j].user+"/"+keys[j].account
	})
	if len(keys) > o.topCount {
		keys = keys[:o.topCount]
	}
	var rows []map[string]string
	for _, k := range keys {
		rows = append(rows, map[string]string{"Cluster": res.Cluster, "Login": k.user, "Proper": proper(k.user),
			"Account": k.account, "Used": sreportValue(o.unit, use[k], total), "Energy": "0"})
	}
	cols := []sreportCol{{"Cluster", "Cluster", 9}, {"Login", "Login", 9}, {"Proper", "Proper Name", 15},
		{"Account", "Account", 15}, {"Used", "Used", 8}, {"Energy", "Energy", 8}}
	return cols, rows
}
