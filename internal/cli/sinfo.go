package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/duration"
	"github.com/sluice-hpc/sluice/internal/hostlist"
)

func init() {
	Register(Command{Name: "sinfo", Summary: "view partitions and nodes", Link: true, Run: runSinfo})
}

// Slurm's sinfo layouts (sinfo.1, SEMANTICS §3.3), as Slurm 24.11 prints
// them: one space before the -s node list and the -N -l CPU count
// left-justified. "#" (not valid in a user's format) is the width of the
// longest value, at least sinfoFitMin's.
const (
	sinfoDefault  = "%#P %.5a %.10l %.6D %.6t %N"
	sinfoSummary  = "%#P %.5a %.10l %.16F %N"
	sinfoLong     = "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %.11i %N"
	sinfoNode     = "%#N %.6D %#P %6t"
	sinfoNodeLong = "%#N %.6D %#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E"
	sinfoReasons  = "%20E %9u %19H %N"
)

type sinfoOpts struct {
	noHeader, long, nodeMode, summary, reasons, help, all bool
	format, fields, parts, states, nodes                  string
	// badFields are the -O names sinfo does not know.
	badFields []string
	// hideHidden leaves out Hidden partitions not named by -p: Slurm's
	// sinfo does for a user other than root without -a.
	hideHidden bool
	// dead (-d) keeps only nodes not responding, responding (-r) only
	// the others; usage is --usage.
	dead, responding, usage bool
	// exact (-e) groups only nodes of identical CPUs, memory and disk;
	// otherwise sinfo shows the group's least with a "+" ("8+").
	exact bool
	// sort is -S/--sort; iterate -i/--iterate (0 = once).
	sort    string
	iterate time.Duration
	// dp is --json/--yaml (cli/dataparser.go), args the command line
	// (its meta.command).
	dp   *dpFlags
	args []string
}

func parseSinfo(args []string) (*sinfoOpts, error) {
	o := &sinfoOpts{args: args}
	fs := pflag.NewFlagSet("sinfo", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVarP(&o.noHeader, "noheader", "h", false, "")
	fs.BoolVarP(&o.long, "long", "l", false, "")
	fs.BoolVarP(&o.nodeMode, "Node", "N", false, "")
	fs.BoolVarP(&o.summary, "summarize", "s", false, "")
	fs.BoolVarP(&o.reasons, "list-reasons", "R", false, "")
	fs.BoolVar(&o.help, "help", false, "")
	fs.BoolVarP(&o.all, "all", "a", false, "")
	fs.StringVarP(&o.format, "format", "o", "", "")
	fs.StringVarP(&o.fields, "Format", "O", "", "")
	fs.StringVarP(&o.parts, "partition", "p", "", "")
	fs.StringVarP(&o.states, "states", "t", "", "")
	fs.StringVarP(&o.nodes, "nodes", "n", "", "")
	fs.BoolVarP(&o.dead, "dead", "d", false, "")
	fs.BoolVarP(&o.responding, "responding", "r", false, "")
	fs.BoolVar(&o.usage, "usage", false, "")
	fs.BoolVarP(&o.exact, "exact", "e", false, "")
	fs.StringVarP(&o.sort, "sort", "S", "", "")
	var iterate string
	fs.StringVarP(&iterate, "iterate", "i", "", "")
	// Accepted with nothing to change: memory is printed in MB as
	// configured (--noconvert), hidden partitions are hidden already
	// (--hide), and there is no debug output (-v).
	fs.Bool("noconvert", false, "")
	fs.Bool("hide", false, "")
	fs.CountP("verbose", "v", "")
	o.dp = addDataParserFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unrecognized argument %q", fs.Arg(0))
	}
	var err error
	if o.iterate, err = parseIterate(iterate); err != nil {
		// sinfo's wording (squeue's differs).
		return nil, fmt.Errorf("Error: invalid entry for %v", err)
	}
	return o, checkSinfoStates(o.states)
}

// forUser sets what uid may see: a user other than root sees Hidden
// partitions only with -a.
func (o *sinfoOpts) forUser(uid int) { o.hideHidden = !o.all && uid != 0 }

func runSinfo(ctx context.Context, env *Env, args []string) int {
	if sinfoWantsReservations(args) {
		return sinfoReservations(ctx, env) // -T: scontrol_resv.go
	}
	o, err := parseSinfo(args)
	if err != nil {
		if _, getopt := optionMessage("sinfo", err); getopt {
			return OptionError(env, "sinfo", err)
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			Errorf(env, "sinfo", "%s", line)
		}
		return 1
	}
	if o.help || o.usage {
		fmt.Fprintln(env.Stdout, "Usage: sinfo [-N] [-l] [-s] [-R] [-d|-r] [-o format] [-O fields] [-p partitions] [-t states] [-n nodes] [-h]")
		return 0
	}
	if _, ok, rc := dpStart(env, "sinfo", o.dp, 1); ok && rc >= 0 {
		return rc
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "sinfo", err)
	}
	o.forUser(env.UID)
	return iterateReports(ctx, env, o.iterate, !o.noHeader, func() int { return sinfoOnce(ctx, env, cl, o) })
}

// sinfoOnce gathers and prints one report.
func sinfoOnce(ctx context.Context, env *Env, cl *api.Client, o *sinfoOpts) int {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	nodes, err := cl.Nodes(ctx)
	if err != nil {
		return clientError(env, "sinfo", err)
	}
	parts, err := cl.Partitions(ctx)
	if err != nil {
		return clientError(env, "sinfo", err)
	}
	if f, ok := o.dp.format(); ok {
		return sinfoDataParser(ctx, env, cl, f, nodes, parts, o)
	}
	out, err := RenderSinfo(nodes, parts, o)
	if err != nil {
		return Errorf(env, "sinfo", "%v", err)
	}
	fmt.Fprint(env.Stdout, out)
	for _, f := range o.badFields {
		Errorf(env, "sinfo", "Invalid job format specification: %s", f)
	}
	if o.fields == "" {
		if items, err := sinfoItems(o); err == nil {
			for range badSpecs(items) {
				// sinfo's own wording, without its name (oracle)
				fmt.Fprintln(env.Stderr, "Invalid node format specification: -")
			}
		}
	}
	return 0
}

// sinfoRow is one node seen in one partition.
type sinfoRow struct {
	n    *api.NodeRecord
	p    *api.PartitionRecord
	pi   int      // the partition's configuration order
	list []string // grouped node names
	// members are the grouped nodes (for the A/I/O/T counts).
	members []*api.NodeRecord
}

// RenderSinfo prints nodes and partitions the way sinfo does. Unknown
// -O field names are left out and listed in o.badFields.
func RenderSinfo(nodes api.NodesResponse, parts api.PartitionsResponse, o *sinfoOpts) (string, error) {
	items, err := sinfoItems(o)
	if err != nil {
		return "", err
	}
	rows, err := sinfoRows(nodes, parts, o)
	if err != nil {
		return "", err
	}
	if !o.nodeMode {
		rows = groupRows(items, rows, o.summary, o.exact)
	}
	sortSinfoRows(rows, o.nodeMode)
	if o.sort != "" {
		sortSinfoBy(rows, o.sort) // sinfo_sort.go
	}
	fitWidths(items, rows, o.nodeMode)
	var b strings.Builder
	if o.long {
		b.WriteString(nodes.Now.Local().Format("Mon Jan 02 15:04:05 2006") + "\n")
	}
	headers := sinfoHeaders
	if o.fields != "" {
		headers = sinfoFieldHeaders
	}
	if !o.noHeader {
		b.WriteString(renderLine(items, func(c byte) string { return headers[c] }) + "\n")
	}
	for i := range rows {
		b.WriteString(renderLine(items, func(c byte) string { return sinfoField(&rows[i], c) }) + "\n")
	}
	return b.String(), nil
}

// sinfoItems parses the layout: -O, -o or the one of the options.
func sinfoItems(o *sinfoOpts) ([]fmtItem, error) {
	if o.fields != "" {
		items, bad := parseSinfoFields(o.fields)
		o.badFields = bad
		return items, nil
	}
	format := o.format
	switch {
	case format != "":
	case o.reasons:
		format = sinfoReasons
	case o.summary:
		format = sinfoSummary
	case o.nodeMode && o.long:
		format = sinfoNodeLong
	case o.nodeMode:
		format = sinfoNode
	case o.long:
		format = sinfoLong
	default:
		format = sinfoDefault
	}
	return parseFormat(format)
}

// sinfoFitMin is the least width of a "#" field: Slurm sizes its built-in
// layouts to at least 9 characters ("PARTITION").
var sinfoFitMin = map[byte]int{'P': 9, 'N': 9}

// fitWidths sizes the "#" fields to the longest value; with -N the
// partition is right-justified, as Slurm's node layouts print it.
func fitWidths(items []fmtItem, rows []sinfoRow, nodeMode bool) {
	for i := range items {
		if !items[i].fit {
			continue
		}
		w := max(sinfoFitMin[items[i].field], len(sinfoHeaders[items[i].field]))
		for _, r := range rows {
			w = max(w, len(sinfoField(&r, items[i].field)))
		}
		items[i].width = w
		items[i].right = items[i].right || nodeMode && items[i].field == 'P'
	}
}

// sortSinfoRows applies sinfo's default sort: "N" (node name) with -N,
// else "#P,-t": partitions in configuration order, then node states in
// decreasing order of Slurm's node_state value (base state, then flags:
// drained before mixed before allocated before idle).
func sortSinfoRows(rows []sinfoRow, nodeMode bool) {
	if nodeMode {
		slices.SortStableFunc(rows, func(a, b sinfoRow) int { return cmpNodeOrder(a.n.Name, b.n.Name) })
		return
	}
	slices.SortStableFunc(rows, func(a, b sinfoRow) int {
		if a.pi != b.pi {
			return a.pi - b.pi
		}
		return int(nodeStateValue(b.n)) - int(nodeStateValue(a.n))
	})
}

// cmpNodeOrder orders node names as sinfo -N does: n2 before n10.
func cmpNodeOrder(a, b string) int {
	ia, ib := strings.IndexAny(a, "0123456789"), strings.IndexAny(b, "0123456789")
	if ia > 0 && ia == ib && a[:ia] == b[:ib] {
		na, ea := strconv.Atoi(a[ia:])
		nb, eb := strconv.Atoi(b[ib:])
		if ea == nil && eb == nil && na != nb {
			return na - nb
		}
	}
	return strings.Compare(a, b)
}

// Slurm's node_state encoding (slurm.h): the base state in the low bits,
// flags above; sinfo's "-t" sort compares the whole value.
var (
	nodeStateBase = map[string]uint32{"UNKNOWN": 0, "DOWN": 1, "IDLE": 2, "ALLOCATED": 3, "MIXED": 5, "FUTURE": 6,
		"RESERVED": 2, "MAINT": 2}
	nodeStateFlag = map[string]uint32{"RESERVED": 0x20, "DRAIN": 0x200, "COMPLETING": 0x400, "NOT_RESPONDING": 0x800,
		"POWERED_DOWN": 0x1000, "FAIL": 0x2000, "MAINT": 0x8000, "MAINTENANCE": 0x8000}
)

func nodeStateValue(n *api.NodeRecord) uint32 {
	var v uint32
	for i, part := range strings.Split(n.State, "+") {
		if i == 0 {
			v = nodeStateBase[part]
			if part == "RESERVED" || part == "MAINT" {
				v |= nodeStateFlag[part]
			}
			continue
		}
		v |= nodeStateFlag[part]
	}
	if strings.HasSuffix(n.StateShort, "*") {
		v |= nodeStateFlag["NOT_RESPONDING"]
	}
	return v
}

func sinfoRows(nodes api.NodesResponse, parts api.PartitionsResponse, o *sinfoOpts) ([]sinfoRow, error) {
	byName := map[string]*api.NodeRecord{}
	for i := range nodes.Nodes {
		byName[nodes.Nodes[i].Name] = &nodes.Nodes[i]
	}
	var want map[string]bool
	if o.nodes != "" {
		names, err := hostlist.Expand(o.nodes)
		if err != nil {
			return nil, fmt.Errorf("invalid node list %q", o.nodes)
		}
		want = map[string]bool{}
		for _, n := range names {
			want[n] = true
		}
	}
	var rows []sinfoRow
	for pi := range parts.Partitions {
		p := &parts.Partitions[pi]
		if o.parts != "" && !inList(o.parts, p.Name) || o.parts == "" && o.hideHidden && p.Hidden {
			continue
		}
		if want != nil && !o.nodeMode && !o.reasons && !slices.ContainsFunc(p.NodeNames, func(n string) bool { return want[n] }) {
			// a partition none of whose nodes -n names still shows, with
			// no nodes and state n/a (oracle: sinfo-filters, -n n9)
			rows = append(rows, sinfoRow{n: &api.NodeRecord{StateShort: "n/a", StateLong: "n/a"}, p: p, pi: pi})
			continue
		}
		for _, name := range p.NodeNames {
			n := byName[name]
			if n == nil || want != nil && !want[name] || !stateWanted(n, o.states) {
				continue
			}
			if dead := strings.HasSuffix(n.StateShort, "*"); o.dead && !dead || o.responding && dead {
				continue
			}
			if o.reasons && n.Reason == "" {
				continue
			}
			rows = append(rows, sinfoRow{n: n, p: p, pi: pi, list: []string{name}, members: []*api.NodeRecord{n}})
		}
	}
	if o.reasons {
		// -R lists each node once, whatever its partitions.
		seen := map[string]bool{}
		out := rows[:0]
		for _, r := range rows {
			if !seen[r.n.Name] {
				seen[r.n.Name] = true
				out = append(out, r)
			}
		}
		rows = out
	}
	return rows, nil
}

// sinfoStates are the node states sinfo -t accepts (sinfo(1)); those a
// Sluice node never has (CLOUD, POWER_*, REBOOT_*, NPC, PERFCTRS) are
// valid and match nothing.
var sinfoStates = []string{"ALLOC", "ALLOCATED", "CLOUD", "COMP", "COMPLETING", "DOWN", "DRAIN", "DRAINED", "DRAINING",
	"FAIL", "FUTURE", "FUTR", "IDLE", "MAINT", "MIX", "MIXED", "NO_RESPOND", "NPC", "PERFCTRS", "PLANNED", "POWER_DOWN",
	"POWERING_DOWN", "POWERED_DOWN", "POWERING_UP", "REBOOT_ISSUED", "REBOOT_REQUESTED", "RESV", "RESERVED", "UNK",
	"UNKNOWN"}

// sinfoStateHelp is the list sinfo's refusal of a -t state prints, as
// Slurm 24.11 words it (oracle: sinfo-filters); sinfoStates is what -t
// accepts.
const sinfoStateHelp = "unknown,down,idle,allocated,?,mixed,future,drain,drained,draining,no_respond,reserved," +
	"planned,blocked,cloud,completing,powering_down,powered_down,power_down,powering_up,fail,maint,reboot,reboot^"

// checkSinfoStates validates -t: states separated by ',' (any) or '&'
// (all), as sinfo's "Bad state string" error.
func checkSinfoStates(states string) error {
	if states == "" {
		return nil
	}
	for _, s := range strings.FieldsFunc(states, func(r rune) bool { return r == ',' || r == '&' }) {
		u := strings.ToUpper(strings.TrimSpace(s))
		if u != "ALL" && u != "RESPONDING" && !slices.Contains(sinfoStates, u) {
			return fmt.Errorf("Bad state string: \"%s\"\nvalid states: %s", s, sinfoStateHelp)
		}
	}
	return nil
}

// stateWanted applies sinfo -t: a node matches a ','-list when it has
// one of the states, an '&'-list when it has all of them. A state is the
// node's base state (IDLE, MIXED, ALLOCATED, DOWN, FUTURE, UNKNOWN; see
// nodeHasState) or one of its flags (DRAIN, FAIL, COMPLETING, NO_RESPOND,
// PLANNED, MAINT, RESERVED), whether it responds or not, as sinfo(1) says.
func stateWanted(n *api.NodeRecord, states string) bool {
	if states == "" {
		return true
	}
	have := nodeStateSet(n)
	all := strings.Contains(states, "&")
	sep := ","
	if all {
		sep = "&"
	}
	for _, s := range strings.Split(strings.ToUpper(states), sep) {
		ok := nodeHasState(have, strings.TrimSpace(s))
		if all && !ok {
			return false
		}
		if !all && ok {
			return true
		}
	}
	return all
}

// nodeStateSet is the set of base states and flags of a node record.
func nodeStateSet(n *api.NodeRecord) map[string]bool {
	have := map[string]bool{}
	for i, part := range strings.Split(n.State, "+") {
		switch {
		case i == 0 && part == "RESERVED", i == 0 && part == "MAINT":
			have["IDLE"] = true // an idle node shown by its reservation
		case part == "MAINTENANCE":
			part = "MAINT"
		}
		have[part] = true
	}
	if strings.HasSuffix(n.StateShort, "*") {
		have["NOT_RESPONDING"] = true
	}
	return have
}

// nodeHasState reports whether the state set has sinfo state s. A
// draining or drained node is selected by its base state too, and a mixed
// node by alloc (Slurm 24.11: -t idle lists a drained idle node, -t alloc
// a mixed one, -t mix&drain a draining mixed one).
func nodeHasState(have map[string]bool, s string) bool {
	busy := have["ALLOCATED"] || have["MIXED"]
	switch s {
	case "ALL":
		return true
	case "ALLOC", "ALLOCATED":
		return busy
	case "MIX", "MIXED":
		return have["MIXED"]
	case "IDLE":
		return have["IDLE"]
	case "DOWN", "FUTURE", "UNKNOWN", "PLANNED", "FAIL":
		return have[s]
	case "FUTR":
		return have["FUTURE"]
	case "UNK":
		return have["UNKNOWN"]
	case "DRAIN":
		return have["DRAIN"]
	case "DRAINED":
		return have["DRAIN"] && !busy
	case "DRAINING":
		return have["DRAIN"] && busy
	case "COMP", "COMPLETING":
		return have["COMPLETING"]
	case "MAINT":
		return have["MAINT"]
	case "RESV", "RESERVED":
		return have["RESERVED"]
	case "NO_RESPOND":
		return have["NOT_RESPONDING"]
	case "RESPONDING":
		return !have["NOT_RESPONDING"]
	}
	return false
}

// groupRows merges the nodes of a partition whose printed fields (other
// than node lists) are equal, as sinfo does.
func groupRows(items []fmtItem, rows []sinfoRow, summary, exact bool) []sinfoRow {
	var out []sinfoRow
	idx := map[string]int{}
	for _, r := range rows {
		var key strings.Builder
		key.WriteString(r.p.Name + "\x00")
		for _, it := range items {
			if it.field == 0 || it.field == 'N' || it.field == 'D' || it.field == 'F' || it.field == 'A' || it.field == 'C' || it.field == 'n' || it.field == 'o' {
				continue
			}
			if summary && (it.field == 't' || it.field == 'T') {
				continue
			}
			if !exact && (it.field == 'c' || it.field == 'm' || it.field == 'd') {
				continue // shown as the group's least, "8+"
			}
			key.WriteString(sinfoField(&r, it.field) + "\x00")
		}
		if i, ok := idx[key.String()]; ok {
			out[i].list = append(out[i].list, r.list...)
			out[i].members = append(out[i].members, r.members...)
			continue
		}
		idx[key.String()] = len(out)
		out = append(out, sinfoRow{n: r.n, p: r.p, pi: r.pi, list: append([]string(nil), r.list...), members: append([]*api.NodeRecord(nil), r.members...)})
	}
	return out
}

var sinfoHeaders = map[byte]string{
	'P': "PARTITION", 'R': "PARTITION", 'a': "AVAIL", 'l': "TIMELIMIT", 'L': "DEFAULTTIME", 'D': "NODES",
	't': "STATE", 'T': "STATE", 'N': "NODELIST", 'c': "CPUS", 'C': "CPUS(A/I/O/T)", 'F': "NODES(A/I/O/T)",
	'm': "MEMORY", 'e': "FREE_MEM", 'z': "S:C:T", 'd': "TMP_DISK", 'w': "WEIGHT", 'f': "AVAIL_FEATURES",
	'b': "ACTIVE_FEATURES", 'E': "REASON", 'u': "USER", 'H': "TIMESTAMP", 'G': "GRES", 's': "JOB_SIZE",
	'r': "ROOT", 'h': "OVERSUBS", 'g': "GROUPS", 'O': "CPU_LOAD", 'n': "HOSTNAMES", 'o': "NODE_ADDR",
	'A': "NODES(A/I)", 'B': "MAX_CPUS_PER_NODE", 'U': "USER",
	'X': "SOCKETS", 'Y': "CORES", 'Z': "THREADS", 'i': "RESERVATION", 'p': "PRIO_TIER", 'V': "VERSION",
}

// sinfoField renders one %-field of a (group of) node(s).
func sinfoField(r *sinfoRow, c byte) string {
	n, p := r.n, r.p
	switch c {
	case 'P':
		if p.Default {
			return p.Name + "*"
		}
		return p.Name
	case 'R':
		return p.Name
	case 'a':
		return map[string]string{"UP": "up", "DOWN": "down", "DRAIN": "drain", "INACTIVE": "inactive"}[p.State]
	case 'l':
		return sinfoTime(p.MaxTimeSec)
	case 'L':
		if p.DefaultTimeSec <= 0 {
			return "n/a"
		}
		return sinfoTime(p.DefaultTimeSec)
	case 'D':
		return strconv.Itoa(len(r.list))
	case 't':
		return n.StateShort
	case 'T':
		return n.StateLong
	case 'N', 'n', 'o':
		return hostlist.Compress(r.list)
	case 'c':
		return leastPlus(r.members, func(n *api.NodeRecord) int64 { return int64(n.CPUs) })
	case 'C', 'F':
		return aiot(r.members, c == 'C')
	case 'm':
		return leastPlus(r.members, func(n *api.NodeRecord) int64 { return n.RealMemory })
	case 'e':
		if !n.LoadKnown {
			return "N/A"
		}
		return strconv.FormatInt(n.FreeMem, 10) // the host's, as slurmd reports it
	case 'z':
		return fmt.Sprintf("%d:%d:%d", n.Sockets, n.Cores, n.Threads)
	case 'd':
		return "0"
	case 'w':
		return strconv.FormatUint(uint64(n.Weight), 10)
	case 'f', 'b':
		return orNull(n.Features)
	case 'E':
		if n.Reason == "" {
			return "none" // sinfo's %E, unlike scontrol's Reason=None
		}
		return n.Reason
	case 'u':
		return orUnknown(n.ReasonUser)
	case 'H':
		if n.ReasonTime.IsZero() {
			return "Unknown"
		}
		return slurmTime(n.ReasonTime)
	case 'G':
		return orNull(n.Gres)
	case 's':
		lo := max(p.MinNodes, 1)
		if p.MaxNodes < 0 {
			return strconv.Itoa(int(lo)) + "-infinite"
		}
		return fmt.Sprintf("%d-%d", lo, p.MaxNodes)
	case 'r':
		return lowerYesNo(p.RootOnly)
	case 'h':
		return p.OverSubscribe
	case 'g':
		if p.AllowGroups == "ALL" {
			return "all"
		}
		return p.AllowGroups
	case 'O':
		if !n.LoadKnown {
			return "N/A"
		}
		return strconv.FormatFloat(n.CPULoad, 'f', 2, 64)
	case 'X':
		return strconv.Itoa(n.Sockets)
	case 'Y':
		return strconv.Itoa(n.Cores)
	case 'Z':
		return strconv.Itoa(n.Threads)
	case 'i':
		return "" // no node reservation (Slurm 24.11's sinfo -l leaves it blank)
	case 'p':
		return strconv.Itoa(int(p.PriorityTier))
	case 'V':
		return orNA(n.Version)
	case 'A':
		aiot := strings.Split(aiot(r.members, false), "/")
		return aiot[0] + "/" + aiot[1]
	case 'B':
		return countOrUnlimited(p.MaxCPUsPerNode)
	case 'U':
		return orUnknown(n.ReasonUser)
	}
	return sinfoExtraField(r, c)
}

// sinfoExtraField renders the -O fields that -o has no letter for.
func sinfoExtraField(r *sinfoRow, c byte) string {
	switch c {
	case sfAllocMem:
		return strconv.FormatInt(r.n.AllocMem, 10)
	case sfGresUsed:
		return orNull(r.n.GresUsed)
	case sfStateComplete:
		return strings.ToLower(r.n.State)
	case sfPreemptMode:
		return r.p.PreemptMode
	case sfPriorityJobFactor:
		return strconv.Itoa(int(r.p.PriorityJobFactor))
	case sfComment, sfExtra:
		return "(null)"
	case sfAllocNodes:
		return "all"
	case sfCluster:
		return "N/A"
	}
	return ""
}

// aiot prints sinfo's allocated/idle/other/total counts of nodes (%F)
// or CPUs (%C); "other" is down, drained, failing or unknown. A node
// that is only not responding ("idle*" after scontrol's resume, before
// slurmctld's ping) counts by its base state, as Slurm 24.11 does.
func aiot(nodes []*api.NodeRecord, cpus bool) string {
	var a, i, o, t int
	for _, n := range nodes {
		other := strings.HasPrefix(n.StateShort, "down") || strings.HasPrefix(n.StateShort, "drain") ||
			strings.HasPrefix(n.StateShort, "fail") || strings.HasPrefix(n.StateShort, "unk")
		if cpus {
			t += n.CPUs
			switch {
			case other:
				o += n.CPUs - n.AllocCPUs
				a += n.AllocCPUs
			default:
				a += n.AllocCPUs
				i += n.CPUs - n.AllocCPUs
			}
			continue
		}
		t++
		switch {
		case other:
			o++
		case n.AllocCPUs > 0 || n.Jobs > 0:
			a++
		default:
			i++
		}
	}
	return fmt.Sprintf("%d/%d/%d/%d", a, i, o, t)
}

func sinfoTime(sec int64) string {
	if sec == api.TimeInfinite || sec <= 0 {
		return "infinite"
	}
	return duration.FormatElapsed(time.Duration(sec) * time.Second)
}

func orUnknown(s string) string {
	if s == "" {
		return "Unknown"
	}
	return s
}

func lowerYesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
