package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/duration"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/tres"
)

func init() {
	Register(Command{Name: "sacct", Summary: "job accounting records (one per run of a job, and its steps)", Link: true, Run: runSacct})
}

const sacctUsage = `Usage: sacct [-a] [-D] [-X] [-u USERS] [-A ACCOUNTS] [-j JOBS] [-s STATES]
             [-S START] [-E END] [-b | -l | -o FIELDS] [-p | -P] [-n]
Shows the accounting records of jobs: the latest run of each job in the
window (with -D every run: a requeued job has one record per run, the
earlier ones PREEMPTED or REQUEUED) and, without -X, one line per step. Default window: since 00:00 today (since now with -s);
no window with -j. Fields: sacct --helpformat.
`

// sacctOpts are sacct's options.
type sacctOpts struct {
	allUsers, allocs, brief, long   bool
	duplicates                      bool
	parsable, parsable2, noHeader   bool
	helpFormat, help                bool
	users, accounts, jobs, states   []string
	partitions, names, reservations []string
	start, end, format, delimiter   string
	// qos (-q), groups (-g) and nodes (-N) select jobs by their QOS,
	// group name or gid, and any node they ran on; limitMin/limitMax
	// (-k/-K) by their time limit; usage is --usage.
	qos, groups        []string
	nodes              string
	limitMin, limitMax string
	usage              bool
	// truncate (-T) cuts Start and End to the -S/-E window.
	truncate bool
	// noconvert prints memory usage in bytes (--noconvert).
	noconvert bool
	// units is --units=[KMGTP]: ReqMem in that unit.
	units string
	// dp is --json/--yaml (cli/dataparser.go).
	dp *dpFlags
}

func parseSacct(args []string) (*sacctOpts, error) {
	o := &sacctOpts{}
	fs := pflag.NewFlagSet("sacct", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVarP(&o.allUsers, "allusers", "a", false, "")
	fs.BoolVarP(&o.allocs, "allocations", "X", false, "")
	fs.BoolVarP(&o.duplicates, "duplicates", "D", false, "")
	fs.BoolVarP(&o.brief, "brief", "b", false, "")
	fs.BoolVarP(&o.long, "long", "l", false, "")
	fs.BoolVarP(&o.parsable, "parsable", "p", false, "")
	fs.BoolVarP(&o.parsable2, "parsable2", "P", false, "")
	fs.BoolVarP(&o.noHeader, "noheader", "n", false, "")
	fs.BoolVarP(&o.helpFormat, "helpformat", "e", false, "")
	fs.BoolVarP(&o.help, "help", "h", false, "")
	fs.StringSliceVarP(&o.users, "user", "u", nil, "")
	fs.StringSliceVar(&o.users, "uid", nil, "")
	fs.StringSliceVarP(&o.accounts, "accounts", "A", nil, "")
	fs.StringSliceVarP(&o.jobs, "jobs", "j", nil, "")
	fs.StringSliceVarP(&o.states, "state", "s", nil, "")
	fs.StringSliceVarP(&o.partitions, "partition", "r", nil, "")
	fs.StringSliceVar(&o.names, "name", nil, "")
	fs.StringSliceVar(&o.reservations, "reservation", nil, "")
	fs.StringVarP(&o.start, "starttime", "S", "", "")
	fs.StringVarP(&o.end, "endtime", "E", "", "")
	fs.StringVarP(&o.format, "format", "o", "", "")
	fs.StringVar(&o.delimiter, "delimiter", "|", "")
	fs.StringSliceVarP(&o.qos, "qos", "q", nil, "")
	fs.StringSliceVarP(&o.groups, "gid", "g", nil, "")
	fs.StringSliceVar(&o.groups, "group", nil, "")
	fs.StringVarP(&o.nodes, "nodelist", "N", "", "")
	fs.StringVarP(&o.limitMin, "timelimit-min", "k", "", "")
	fs.StringVarP(&o.limitMax, "timelimit-max", "K", "", "")
	fs.BoolVar(&o.usage, "usage", false, "")
	fs.BoolVarP(&o.truncate, "truncate", "T", false, "")
	fs.BoolVar(&o.noconvert, "noconvert", false, "")
	fs.StringVar(&o.units, "units", "", "")
	// Accepted with nothing to change: there is no debug output.
	fs.CountP("verbose", "v", "")
	o.dp = addDataParserFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	for i, q := range o.qos {
		o.qos[i] = strings.ToLower(q)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unrecognized argument %q", fs.Arg(0))
	}
	for i, a := range o.accounts {
		o.accounts[i] = strings.ToLower(a) // stored lowercase, as in Slurm
	}
	return o, nil
}

func runSacct(ctx context.Context, env *Env, args []string) int {
	o, err := parseSacct(args)
	if err != nil {
		return OptionError(env, "sacct", err)
	}
	switch {
	case o.help || o.usage:
		fmt.Fprint(env.Stdout, sacctUsage)
		return 0
	case o.helpFormat:
		fmt.Fprintln(env.Stdout, sacctHelpFormat())
		return 0
	}
	// An unknown data_parser is reported and sacct exits 0 (oracle).
	if _, ok, rc := dpStart(env, "sacct", o.dp, 0); ok && rc >= 0 {
		return rc
	}
	if u, ok := unknownUser(o.users); !ok {
		return Errorf(env, "sacct", "Invalid user id: %s", u)
	}
	if strings.Trim(o.units, "kmgtpKMGTP") != "" || len(o.units) > 1 {
		fmt.Fprintf(env.Stderr, "sacct: error: Invalid unit type '%s'. Possible options are 'KMGTP'\nsacct: fatal: Invalid unit type\n", o.units)
		return 1
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "sacct", err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := cl.Accounting(ctx)
	if err != nil {
		return clientError(env, "sacct", err)
	}
	if f, ok := o.dp.format(); ok {
		return sacctDataParser(ctx, env, cl, f, res, o, args)
	}
	out, err := RenderSacct(res, o, env.UID, time.Local)
	if err != nil {
		return Errorf(env, "sacct", "%v", err)
	}
	fmt.Fprint(env.Stdout, out)
	return 0
}

// sacctField is one sacct column: its name, Slurm's default width
// (negative = left-justified) and how to compute its value.
type sacctField struct {
	name  string
	width int
	value func(r *sacctRow) string
}

// sacctRow is a record with what its columns need besides itself.
type sacctRow struct {
	api.AcctRecord
	now time.Time
	loc *time.Location
	// cpus is the allocated CPU count (a step inherits its job's).
	cpus    int64
	cluster string
	// noconvert: memory usage in bytes (--noconvert).
	noconvert bool
	units     string
}

// sacctFields are the fields sacct knows (sacct --helpformat).
var sacctFields = []sacctField{
	{"Account", 10, func(r *sacctRow) string { return r.Account }},
	{"AdminComment", 15, blankField},
	{"AllocCPUS", 10, func(r *sacctRow) string { return strconv.FormatInt(r.cpus, 10) }},
	{"AllocNodes", 10, func(r *sacctRow) string { return strconv.FormatInt(tresOf(r.AllocTRES, "node"), 10) }},
	{"AllocTRES", 10, func(r *sacctRow) string { return tresByName(r.AllocTRES) }},
	{"AssocID", 7, blankField},
	{"AveCPU", 10, usageField("AveCPU")},
	{"AveCPUFreq", 10, usageField("AveCPUFreq")},
	{"AveDiskRead", 14, usageField("AveDiskRead")},
	{"AveDiskWrite", 14, usageField("AveDiskWrite")},
	{"AvePages", 10, usageField("AvePages")},
	{"AveRSS", 10, usageField("AveRSS")},
	{"AveVMSize", 10, usageField("AveVMSize")},
	{"BlockID", 16, blankField},
	{"Cluster", 10, func(r *sacctRow) string { return r.cluster }},
	{"Comment", 14, blankField}, // stored only with AccountingStoreFlags=job_comment
	{"Constraints", 19, blankField},
	{"ConsumedEnergy", 14, usageField("ConsumedEnergy")},
	{"ConsumedEnergyRaw", 17, usageField("ConsumedEnergyRaw")},
	{"Container", 19, blankField},
	{"CPUTime", 10, func(r *sacctRow) string { return duration.Format(r.elapsed() * time.Duration(r.cpus)) }},
	{"CPUTimeRAW", 10, func(r *sacctRow) string { return strconv.FormatInt(int64(r.elapsed().Seconds())*r.cpus, 10) }},
	{"DBIndex", 21, blankField},
	{"DerivedExitCode", 15, func(r *sacctRow) string { return r.derivedExitCode() }},
	{"Elapsed", 10, func(r *sacctRow) string { return duration.Format(r.elapsed()) }},
	{"ElapsedRaw", 10, func(r *sacctRow) string { return strconv.FormatInt(int64(r.elapsed().Seconds()), 10) }},
	{"Eligible", 19, func(r *sacctRow) string { return r.timeStr(r.Eligible) }},
	{"End", 19, func(r *sacctRow) string { return r.timeStr(r.End) }},
	{"ExitCode", 8, func(r *sacctRow) string { return r.ExitCode }},
	{"Extra", 14, blankField},
	{"FailedNode", 8, blankField},
	{"Flags", 19, blankField},
	{"GID", 6, onJobLine(func(r *sacctRow) string { return strconv.FormatUint(uint64(r.GID), 10) })},
	{"Group", 9, onJobLine(func(r *sacctRow) string { return groupName(r.GID) })},
	{"JobID", -12, func(r *sacctRow) string { return r.jobID() }},
	{"JobIDRaw", -12, func(r *sacctRow) string { return r.jobIDRaw() }},
	{"JobName", 10, func(r *sacctRow) string { return printable(r.Name) }},
	{"Layout", 9, func(r *sacctRow) string { return r.layout() }},
	{"Licenses", 10, blankField},
	{"MaxDiskRead", 12, usageField("MaxDiskRead")},
	{"MaxDiskReadNode", 15, usageField("MaxDiskReadNode")},
	{"MaxDiskReadTask", 15, usageField("MaxDiskReadTask")},
	{"MaxDiskWrite", 12, usageField("MaxDiskWrite")},
	{"MaxDiskWriteNode", 16, usageField("MaxDiskWriteNode")},
	{"MaxDiskWriteTask", 16, usageField("MaxDiskWriteTask")},
	{"MaxPages", 8, usageField("MaxPages")},
	{"MaxPagesNode", 12, usageField("MaxPagesNode")},
	{"MaxPagesTask", 14, usageField("MaxPagesTask")},
	{"MaxRSS", 10, usageField("MaxRSS")},
	{"MaxRSSNode", 10, usageField("MaxRSSNode")},
	{"MaxRSSTask", 10, usageField("MaxRSSTask")},
	{"MaxVMSize", 10, usageField("MaxVMSize")},
	{"MaxVMSizeNode", 14, usageField("MaxVMSizeNode")},
	{"MaxVMSizeTask", 14, usageField("MaxVMSizeTask")},
	{"McsLabel", 12, blankField},
	{"MinCPU", 10, usageField("MinCPU")},
	{"MinCPUNode", 10, usageField("MinCPUNode")},
	{"MinCPUTask", 10, usageField("MinCPUTask")},
	{"NCPUS", 10, func(r *sacctRow) string { return strconv.FormatInt(r.cpus, 10) }},
	{"NNodes", 8, func(r *sacctRow) string { return strconv.FormatInt(r.nNodes(), 10) }},
	{"NodeList", 15, func(r *sacctRow) string { return r.nodeList() }}, // right-justified, as on the oracle
	{"NTasks", 8, func(r *sacctRow) string { return r.nTasks() }},
	{"Partition", 10, onJobLine(func(r *sacctRow) string { return r.Partition })},
	{"Planned", 10, onJobLine(func(r *sacctRow) string { return duration.Format(r.reserved()) })},
	{"PlannedCPU", 10, onJobLine(func(r *sacctRow) string { return duration.Format(r.reserved() * time.Duration(r.reqCPUs())) })},
	{"PlannedCPURAW", 13, onJobLine(func(r *sacctRow) string { return strconv.FormatInt(int64(r.reserved().Seconds())*r.reqCPUs(), 10) })},
	{"Priority", 10, blankField},
	{"QOS", 10, onJobLine(func(r *sacctRow) string { return r.QOS })},
	{"QOSRAW", 6, blankField},
	{"QOSREQ", 10, blankField},
	{"Reason", 22, onJobLine(func(r *sacctRow) string { return r.reason() })},
	{"ReqCPUFreq", 10, func(r *sacctRow) string { return r.cpuFreq() }},
	{"ReqCPUFreqGov", 13, func(r *sacctRow) string { return r.cpuFreq() }},
	{"ReqCPUFreqMax", 13, func(r *sacctRow) string { return r.cpuFreq() }},
	{"ReqCPUFreqMin", 13, func(r *sacctRow) string { return r.cpuFreq() }},
	{"ReqCPUS", 8, func(r *sacctRow) string { return strconv.FormatInt(tresOf(r.ReqTRES, "cpu"), 10) }},
	{"ReqMem", 10, onJobLine(func(r *sacctRow) string { return reqMem(r.ReqTRES, r.units) })},
	{"ReqNodes", 8, func(r *sacctRow) string { return strconv.FormatInt(tresOf(r.ReqTRES, "node"), 10) }},
	{"ReqTRES", 10, onJobLine(func(r *sacctRow) string { return tresByName(r.ReqTRES) })},
	{"Reservation", 20, func(r *sacctRow) string { return r.Reservation }},
	{"ReservationId", 8, blankField},
	{"Restarts", 8, onJobLine(func(r *sacctRow) string { return strconv.Itoa(r.Restart) })},
	{"SLUID", 14, blankField},
	{"Start", 19, func(r *sacctRow) string { return r.startStr() }},
	{"State", 10, func(r *sacctRow) string { return r.State }},
	{"StdErr", 20, blankField},
	{"StdIn", 20, blankField},
	{"StdOut", 20, blankField},
	{"Submit", 19, func(r *sacctRow) string { return r.timeStr(r.Submit) }},
	{"SubmitLine", 20, blankField},
	{"Suspended", 10, func(r *sacctRow) string { return duration.Format(time.Duration(r.SuspendedSec) * time.Second) }},
	{"SystemComment", 15, blankField},
	{"SystemCPU", 10, usageField("SystemCPU")},
	{"Timelimit", 10, func(r *sacctRow) string { return r.timelimit() }},
	{"TimelimitRaw", 10, func(r *sacctRow) string { return r.timelimitRaw() }},
	{"TotalCPU", 10, usageField("TotalCPU")},
	{"TRESUsageInAve", 14, usageField("TRESUsageInAve")},
	{"TRESUsageInMax", 14, usageField("TRESUsageInMax")},
	{"TRESUsageInMaxNode", 18, usageField("TRESUsageInMaxNode")},
	{"TRESUsageInMaxTask", 18, usageField("TRESUsageInMaxTask")},
	{"TRESUsageInMin", 14, usageField("TRESUsageInMin")},
	{"TRESUsageInMinNode", 18, usageField("TRESUsageInMinNode")},
	{"TRESUsageInMinTask", 18, usageField("TRESUsageInMinTask")},
	{"TRESUsageInTot", 14, usageField("TRESUsageInTot")},
	{"TRESUsageOutAve", 15, usageField("TRESUsageOutAve")},
	{"TRESUsageOutMax", 15, usageField("TRESUsageOutMax")},
	{"TRESUsageOutMaxNode", 19, usageField("TRESUsageOutMaxNode")},
	{"TRESUsageOutMaxTask", 19, usageField("TRESUsageOutMaxTask")},
	{"TRESUsageOutMin", 15, usageField("TRESUsageOutMin")},
	{"TRESUsageOutMinNode", 19, usageField("TRESUsageOutMinNode")},
	{"TRESUsageOutMinTask", 19, usageField("TRESUsageOutMinTask")},
	{"TRESUsageOutTot", 15, usageField("TRESUsageOutTot")},
	{"UID", 6, onJobLine(func(r *sacctRow) string { return strconv.FormatUint(uint64(r.UID), 10) })},
	{"User", 9, onJobLine(func(r *sacctRow) string { return r.User })},
	{"UserCPU", 10, usageField("UserCPU")},
	{"WCKey", 10, blankField},
	{"WCKeyID", 10, onJobLine(func(*sacctRow) string { return "0" })},
	{"WorkDir", 20, onJobLine(func(r *sacctRow) string { return r.WorkDir })},
}

// blankField is a field Sluice keeps no data for; Slurm prints it empty
// for a cluster that does not set it (oracle: AdminComment, Extra, ...).
func blankField(*sacctRow) string { return "" }

// onJobLine prints f on a job's own line only: Slurm's step lines leave
// user, group, partition, QOS, limits and the like empty (oracle: 1.batch
// and 1.0 have no User, GID, Partition, QOS, Timelimit, WorkDir).
func onJobLine(f func(*sacctRow) string) func(*sacctRow) string {
	return func(r *sacctRow) string {
		if r.Step != "" {
			return ""
		}
		return f(r)
	}
}

// Field lists of the built-in layouts (sacct.h).
const (
	sacctDefaultFields = "jobid,jobname,partition,account,alloccpus,state,exitcode"
	sacctBriefFields   = "jobid,state,exitcode"
	// sacctLongFields is -l's list as Slurm 24.11's sacct prints it (oracle: sacct -l -j 1).
	sacctLongFields = "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss," +
		"maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,mincputask,avecpu," +
		"ntasks,alloccpus,elapsed,state,exitcode,avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,reqmem," +
		"consumedenergy,maxdiskread,maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode," +
		"maxdiskwritetask,avediskwrite,reqtres,alloctres,tresusageinave,tresusageinmax,tresusageinmaxnode," +
		"tresusageinmaxtask,tresusageinmin,tresusageinminnode,tresusageinmintask,tresusageintot,tresusageoutmax," +
		"tresusageoutmaxnode,tresusageoutmaxtask,tresusageoutave,tresusageouttot"
)

func sacctHelpFormat() string {
	var b strings.Builder
	for i, f := range sacctFields {
		// Four names a line, each in 20 columns but the last in 19.
		if i%4 == 3 || i == len(sacctFields)-1 {
			fmt.Fprintf(&b, "%-19s\n", f.name)
		} else {
			fmt.Fprintf(&b, "%-20s", f.name)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// lookupSacctField resolves `name[%[-]width]` case-insensitively.
func lookupSacctField(spec string) (sacctField, error) {
	name, width, hasWidth := strings.Cut(strings.TrimSpace(spec), "%")
	for _, f := range sacctFields {
		if !strings.EqualFold(f.name, name) {
			continue
		}
		if hasWidth {
			w, err := strconv.Atoi(width)
			if err != nil || w == 0 || w > 1000 || w < -1000 {
				return f, fmt.Errorf("Invalid field width %q", spec)
			}
			// The width's sign decides: %3 right-justifies even JobID,
			// whose default is left (oracle: jobid%3 printed "  1").
			f.width = w
		}
		return f, nil
	}
	return sacctField{}, fmt.Errorf("Invalid field requested: %q", name)
}

func (r *sacctRow) jobID() string {
	id := strconv.FormatUint(uint64(r.JobID), 10)
	if r.ArrayJobID != 0 && r.ArrayTaskID >= 0 {
		id = fmt.Sprintf("%d_%d", r.ArrayJobID, r.ArrayTaskID)
	}
	if r.Step != "" {
		id += "." + r.Step
	}
	return id
}

// layout is Layout: empty on a job's line, Unknown on its batch step,
// Block on a task step (oracle).
func (r *sacctRow) layout() string {
	switch r.Step {
	case "":
		return ""
	case "batch", "extern":
		return "Unknown"
	}
	return "Block"
}

// cpuFreq is ReqCPUFreq (and Gov, Max, Min): Unknown when no --cpu-freq
// was given, 0 on a batch step (oracle).
func (r *sacctRow) cpuFreq() string {
	if r.Step == "batch" {
		return "0"
	}
	return "Unknown"
}

// reason is Reason on a job's line: None once it started (oracle); a job
// that never started keeps no reason in its record.
func (r *sacctRow) reason() string {
	if r.Start.IsZero() {
		return ""
	}
	return "None"
}

// reqCPUs is the CPUs the job asked for.
func (r *sacctRow) reqCPUs() int64 { return tresOf(r.ReqTRES, "cpu") }

// groupName is the group of gid, else the number.
func groupName(gid uint32) string {
	id := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	return id
}

// derivedExitCode is DerivedExitCode: a job's highest step exit code, set
// by sjobexitmod only; Slurm records 0:0 for every job (oracle: COMPLETED,
// FAILED 7:0, CANCELLED, TIMEOUT and a job killed by SIGKILL all showed
// 0:0) and nothing for a step.
func (r *sacctRow) derivedExitCode() string {
	if r.Step != "" {
		return ""
	}
	return "0:0"
}

// nTasks is NTasks: a step's task count, blank on a job's record (oracle:
// "1 ... " blank, "1.batch ... 1", "1.0 ... 4").
func (r *sacctRow) nTasks() string {
	if r.NTasks == 0 {
		return ""
	}
	return strconv.Itoa(r.NTasks)
}

func (r *sacctRow) jobIDRaw() string {
	id := strconv.FormatUint(uint64(r.JobID), 10)
	if r.Step != "" {
		id += "." + r.Step
	}
	return id
}

// elapsed is Elapsed: the run's wall time less the time it spent
// suspended (oracle: started 16:37:15, suspended 60 s, cancelled 16:40:10
// showed Elapsed 00:01:55 and Suspended 00:01:00; CPUTime follows it).
// tresByName lists a TRES string's entries sorted by name, as sacct
// prints AllocTRES and ReqTRES (oracle: billing=2,cpu=2,gres/gpu=1,
// mem=2000M,node=1, where scontrol shows cpu=2,mem=2000M,node=1,
// billing=2,gres/gpu=1).
func tresByName(s string) string {
	if s == "" {
		return s
	}
	parts := strings.Split(s, ",")
	slices.SortStableFunc(parts, func(a, b string) int {
		ka, _, _ := strings.Cut(a, "=")
		kb, _, _ := strings.Cut(b, "=")
		return strings.Compare(ka, kb)
	})
	return strings.Join(parts, ",")
}

func (r *sacctRow) elapsed() time.Duration {
	if r.Start.IsZero() {
		return 0
	}
	end := r.End
	if end.IsZero() {
		end = r.now
	}
	return max(wholeSeconds(r.Start, end)-time.Duration(r.SuspendedSec)*time.Second, 0)
}

// wholeSeconds is to-from as slurmdbd counts it, in whole seconds of the
// clock (time_t): a job eligible at :35.9 and started at :37.0 waited 2 s.
func wholeSeconds(from, to time.Time) time.Duration {
	return time.Duration(to.Unix()-from.Unix()) * time.Second
}

// reserved is the time the job waited from eligibility to start.
func (r *sacctRow) reserved() time.Duration {
	from := r.Eligible
	if from.IsZero() {
		from = r.Submit
	}
	to := r.Start
	if to.IsZero() {
		to = r.now
		if !r.End.IsZero() {
			to = r.End
		}
	}
	if from.IsZero() || r.Step != "" {
		return 0
	}
	return max(wholeSeconds(from, to), 0)
}

func (r *sacctRow) timeStr(t time.Time) string {
	if t.IsZero() {
		return "Unknown"
	}
	return t.In(r.loc).Format("2006-01-02T15:04:05")
}

// startStr is the Start column: None for a job that ended without
// starting (cancelled while pending, failed at submission), as sacct
// prints it; Unknown while it has not started yet.
func (r *sacctRow) startStr() string {
	if r.Start.IsZero() && !r.End.IsZero() && r.Step == "" {
		return "None"
	}
	return r.timeStr(r.Start)
}

// nNodes is the record's node count: its TRES, else (a step's record,
// which carries none) the nodes of its node list, as sacct shows a step's.
func (r *sacctRow) nNodes() int64 {
	n := max(tresOf(r.AllocTRES, "node"), tresOf(r.ReqTRES, "node"))
	if n == 0 && r.Step != "" && r.NodeList != "" {
		if names, err := hostlist.Expand(r.NodeList); err == nil {
			n = int64(len(names))
		}
	}
	return n
}

func (r *sacctRow) nodeList() string {
	if r.NodeList == "" {
		return "None assigned"
	}
	return r.NodeList
}

func (r *sacctRow) timelimit() string {
	if r.Step != "" {
		return ""
	}
	if r.TimeLimitSec == api.TimePartitionLimit {
		return "Partition_Limit"
	}
	if r.TimeLimitSec == api.TimeInfinite || r.TimeLimitSec < 0 {
		return "UNLIMITED"
	}
	return duration.Format(time.Duration(r.TimeLimitSec) * time.Second)
}

func (r *sacctRow) timelimitRaw() string {
	if r.Step != "" {
		return ""
	}
	if r.TimeLimitSec == api.TimePartitionLimit {
		return "Partition_Limit"
	}
	if r.TimeLimitSec == api.TimeInfinite || r.TimeLimitSec < 0 {
		return "UNLIMITED"
	}
	return strconv.FormatInt(r.TimeLimitSec/60, 10)
}

// tresOf reads one count out of a TRES string ("cpu=2,mem=1G,node=1").
func tresOf(s, name string) int64 {
	v, err := tres.Parse(s)
	if err != nil {
		return 0
	}
	return v[name]
}

// reqMem prints the requested memory as sacct does ("1000M").
// reqMem is the requested memory: in the largest unit that keeps it
// whole (2048M prints 2G, 2000M stays 2000M), or in --units's unit, with
// two decimals where it is not whole (oracle: sacct-filters).
func reqMem(s, units string) string {
	m := tresOf(s, "mem")
	if m <= 0 {
		return "0"
	}
	const suffixes = "MGTP"
	if units == "" {
		k := 0
		for m%1024 == 0 && k < len(suffixes)-1 {
			m /= 1024
			k++
		}
		return strconv.FormatInt(m, 10) + suffixes[k:k+1]
	}
	if units == "K" {
		return strconv.FormatInt(m*1024, 10) + "K"
	}
	v := float64(m)
	for _, u := range suffixes {
		if string(u) == units {
			if v == math.Trunc(v) {
				return strconv.FormatInt(int64(v), 10) + units
			}
			return strconv.FormatFloat(v, 'f', 2, 64) + units
		}
		v /= 1024
	}
	return strconv.FormatInt(m, 10) + "M"
}

// sacctStates maps sacct's -s codes to long state names.
var sacctStates = map[string]string{
	"BF": "BOOT_FAIL", "CA": "CANCELLED", "CD": "COMPLETED", "DL": "DEADLINE", "F": "FAILED",
	"NF": "NODE_FAIL", "OOM": "OUT_OF_MEMORY", "PD": "PENDING", "PR": "PREEMPTED", "R": "RUNNING",
	"RQ": "REQUEUED", "RS": "RESIZING", "RV": "REVOKED", "S": "SUSPENDED", "TO": "TIMEOUT",
}

func sacctStateName(s string) (string, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	if long, ok := sacctStates[u]; ok {
		return long, nil
	}
	for _, long := range sacctStates {
		if u == long || u == "CANCELED" && long == "CANCELLED" {
			return long, nil
		}
	}
	return "", fmt.Errorf("Invalid state: %s", s)
}

// sacctWindow returns the selection window: -S (default 00:00 today,
// or now with -s; none with -j) to -E (default now; with -s the start:
// oracle, `sacct -s CD -S now-1hour` listed nothing, `-s R -S now-10second`
// the jobs running 10 s ago; none with -j alone).
func sacctWindow(o *sacctOpts, now time.Time, loc *time.Location) (time.Time, time.Time, error) {
	var from, to time.Time
	switch {
	case o.start != "":
		t, err := duration.ParseTimePast(o.start, now, loc)
		if err != nil {
			return from, to, fmt.Errorf("Invalid time specification (-S): %s", o.start)
		}
		from = t
	case len(o.states) > 0:
		from = now
	case len(o.jobs) == 0:
		n := now.In(loc)
		from = time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	}
	switch {
	case o.end != "":
		t, err := duration.ParseTimePast(o.end, now, loc)
		if err != nil {
			return from, to, fmt.Errorf("Invalid time specification (-E): %s", o.end)
		}
		to = t
	case len(o.states) > 0:
		to = from
	case len(o.jobs) == 0 || o.start != "":
		to = now // -j alone selects regardless of time, a job eligible later too
	}
	return from, to, nil
}

// RenderSacct selects the records o asks for (as seen by uid) and prints
// them in sacct's layout.
func RenderSacct(res api.AcctResponse, o *sacctOpts, uid int, loc *time.Location) (string, error) {
	fields, err := sacctColumns(o)
	if err != nil {
		return "", err
	}
	rows, err := sacctSelect(res, o, uid, loc)
	if err != nil {
		return "", err
	}
	sacctSortBySubmit(rows)
	var b strings.Builder
	if !o.noHeader {
		sacctLine(&b, fields, o, func(f sacctField) string { return sacctHeader(f, o) })
		if !o.parsable && !o.parsable2 {
			sacctLine(&b, fields, o, func(f sacctField) string { return strings.Repeat("-", sacctAbs(f.width)) })
		}
	}
	for i := range rows {
		r := &rows[i]
		sacctLine(&b, fields, o, func(f sacctField) string { return f.value(r) })
	}
	return b.String(), nil
}

// sacctSortBySubmit orders the runs by submit time, each followed by its
// steps, as Slurm's sacct lists them: a requeued job's later run (submitted
// at the requeue) comes after the jobs submitted before it (oracle: sacct
// -D listed 1..9, then job 1's second run, then 10). The tasks of an array
// share its submit time and come by task id (oracle: 1_0 ... 1_3, though
// 1_3 kept the array's job id 1). Rows come in job id, run, step order, so
// a step follows its run's record.
func sacctSortBySubmit(rows []sacctRow) {
	type key struct {
		submit time.Time
		task   int64
	}
	keyOf := func(r *sacctRow) key {
		k := key{submit: r.Submit, task: 1 << 32} // no task: after the tasks
		if r.ArrayJobID != 0 && r.ArrayTaskID >= 0 {
			k.task = int64(r.ArrayTaskID)
		}
		return k
	}
	keys := make(map[*sacctRow]key, len(rows))
	var parent *sacctRow
	for i := range rows {
		r := &rows[i]
		switch {
		case r.Step == "":
			parent = r
			keys[r] = keyOf(r)
		case parent != nil && parent.JobID == r.JobID:
			keys[r] = keys[parent]
		default:
			keys[r] = keyOf(r)
		}
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ka, kb := keys[&rows[a]], keys[&rows[b]]
		if c := ka.submit.Compare(kb.submit); c != 0 {
			return c
		}
		return cmp.Compare(ka.task, kb.task)
	})
	sorted := make([]sacctRow, len(rows))
	for i, k := range idx {
		sorted[i] = rows[k]
	}
	copy(rows, sorted)
}

// delim is the -p/-P separator: --delimiter, '|' by default.
func (o *sacctOpts) delim() string {
	if o.delimiter == "" {
		return "|"
	}
	return o.delimiter
}

func sacctAbs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// sacctColumns picks -o, -b, -l or the default field list.
func sacctColumns(o *sacctOpts) ([]sacctField, error) {
	list := sacctDefaultFields
	switch {
	case o.format != "":
		list = o.format
	case o.brief:
		list = sacctBriefFields
	case o.long:
		list = sacctLongFields
	}
	var out []sacctField
	for _, spec := range strings.Split(list, ",") {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		f, err := lookupSacctField(spec)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// sacctHeader is a column's header: cut to the column's width without the
// '+' that marks a cut value ("TimelimitR"), as sacct prints it.
func sacctHeader(f sacctField, o *sacctOpts) string {
	if w := sacctAbs(f.width); !o.parsable && !o.parsable2 && len(f.name) > w {
		return f.name[:w]
	}
	return f.name
}

// sacctLine prints one line: fixed-width cells each followed by a space
// (overlong values end in '+'), or '|'-separated with -p/-P.
func sacctLine(b *strings.Builder, fields []sacctField, o *sacctOpts, cell func(sacctField) string) {
	for i, f := range fields {
		v := cell(f)
		switch {
		case o.parsable2:
			b.WriteString(v)
			if i < len(fields)-1 {
				b.WriteString(o.delim())
			}
		case o.parsable:
			b.WriteString(v)
			b.WriteString(o.delim())
		default:
			w := sacctAbs(f.width)
			if len(v) > w {
				v = v[:w-1] + "+"
			}
			if f.width < 0 {
				fmt.Fprintf(b, "%-*s ", w, v)
			} else {
				fmt.Fprintf(b, "%*s ", w, v)
			}
		}
	}
	b.WriteByte('\n')
}

// sacctSelect filters the records: user (own jobs unless -a, -u or
// root), accounts, partitions, names, job ids, states, the time window
// and -X (no steps).
func sacctSelect(res api.AcctResponse, o *sacctOpts, uid int, loc *time.Location) ([]sacctRow, error) {
	from, to, err := sacctWindow(o, res.Now, loc)
	if err != nil {
		return nil, err
	}
	states := map[string]bool{}
	for _, s := range o.states {
		long, err := sacctStateName(s)
		if err != nil {
			return nil, err
		}
		states[long] = true
	}
	sel, err := newSacctJobFilter(o)
	if err != nil {
		return nil, err
	}
	cpus := map[uint32]int64{}
	for _, r := range res.Records {
		if r.Step == "" {
			cpus[r.JobID] = tresOf(r.AllocTRES, "cpu")
		}
	}
	// A step goes with its run: selected by the run's name, times and state.
	type runKey struct {
		job     uint32
		restart int
	}
	runs := map[runKey]bool{}
	jobs := map[uint32]bool{}
	for i := range res.Records {
		r := &res.Records[i]
		if r.Step == "" && (len(o.names) == 0 || sacctIn(o.names, r.Name)) && sacctInWindow(r, states, from, to) &&
			sel.keep(r) {
			runs[runKey{r.JobID, r.Restart}], jobs[r.JobID] = true, true
		}
	}
	var out []sacctRow
	for _, r := range res.Records {
		if !sacctKeep(&r, o, uid) {
			continue
		}
		switch r.Step {
		case "":
			if !runs[runKey{r.JobID, r.Restart}] {
				continue
			}
		case "batch", "extern":
			if !runs[runKey{r.JobID, r.Restart}] {
				continue
			}
		default:
			if !jobs[r.JobID] {
				continue
			}
		}
		row := sacctRow{AcctRecord: r, now: res.Now, loc: loc, cluster: res.Cluster, cpus: tresOf(r.AllocTRES, "cpu"),
			noconvert: o.noconvert, units: strings.ToUpper(o.units)}
		if o.truncate {
			row.truncateTo(from, to)
		}
		if r.Step != "" && row.cpus == 0 {
			row.cpus = cpus[r.JobID] // srun steps carry no TRES: the job's CPUs
		}
		out = append(out, row)
	}
	if !o.duplicates {
		out = sacctLatestRuns(out)
	}
	return out, nil
}

// truncateTo is -T: a run that started before the window starts at its
// start, one that ended (or still runs) after its end ends there, so that
// Elapsed and CPUTime count the window's share only (sacct(1)).
func (r *sacctRow) truncateTo(from, to time.Time) {
	if !r.Start.IsZero() && !from.IsZero() && r.Start.Before(from) {
		r.Start = from
	}
	if to.IsZero() || r.Start.IsZero() {
		return
	}
	if r.End.IsZero() && r.now.After(to) || r.End.After(to) {
		r.End = to
	}
}

// sacctJobFilter selects job records by QOS (-q), group (-g), node (-N)
// and time limit (-k/-K).
type sacctJobFilter struct {
	o                  *sacctOpts
	nodes              map[string]bool
	limitMin, limitMax int64 // seconds, -1 when not given
}

func newSacctJobFilter(o *sacctOpts) (*sacctJobFilter, error) {
	f := &sacctJobFilter{o: o, limitMin: -1, limitMax: -1}
	if o.nodes != "" {
		names, err := hostlist.Expand(o.nodes)
		if err != nil {
			return nil, fmt.Errorf("Invalid node list: %s", o.nodes)
		}
		f.nodes = map[string]bool{}
		for _, n := range names {
			f.nodes[n] = true
		}
	}
	for _, l := range []struct {
		v   string
		dst *int64
	}{{o.limitMin, &f.limitMin}, {o.limitMax, &f.limitMax}} {
		if l.v == "" {
			continue
		}
		d, err := duration.Parse(l.v)
		if err != nil {
			return nil, fmt.Errorf("Invalid time limit specification: %s", l.v)
		}
		*l.dst = int64(d / time.Second)
	}
	return f, nil
}

// keep reports whether job record r passes the filters.
func (f *sacctJobFilter) keep(r *api.AcctRecord) bool {
	o := f.o
	if len(o.qos) > 0 && !sacctIn(o.qos, r.QOS) {
		return false
	}
	if len(o.groups) > 0 && !sacctIn(o.groups, strconv.FormatUint(uint64(r.GID), 10)) && !sacctIn(o.groups, groupName(r.GID)) {
		return false
	}
	if f.nodes != nil && !f.ranOn(r.NodeList) {
		return false
	}
	limit := r.TimeLimitSec
	if limit == api.TimeInfinite || limit < 0 {
		limit = math.MaxInt64
	}
	// -k alone selects that exact limit, -k with -K the range; -K alone
	// selects nothing out (oracle: sacct-filters)
	switch {
	case f.limitMin < 0:
		return true
	case f.limitMax < 0:
		return limit == f.limitMin
	}
	return limit >= f.limitMin && limit <= f.limitMax
}

// ranOn reports whether a node list holds one of the -N nodes.
func (f *sacctJobFilter) ranOn(list string) bool {
	names, err := hostlist.Expand(list)
	if err != nil {
		return false
	}
	for _, n := range names {
		if f.nodes[n] {
			return true
		}
	}
	return false
}

// sacctLatestRuns keeps, of each job, only its latest run among the
// selected records and that run's steps, as sacct does without -D: a
// requeued job shows its PENDING record once it is eligible, and its last
// PREEMPTED or REQUEUED run before (the window ends at now, so a record
// eligible later is not selected; oracle: plain sacct showed the
// preempted run, sacct -j the PENDING one).
func sacctLatestRuns(rows []sacctRow) []sacctRow {
	latest := map[uint32]*sacctRow{}
	for i := range rows {
		r := &rows[i]
		if l := latest[r.JobID]; r.Step == "" && (l == nil || r.Restart > l.Restart) {
			latest[r.JobID] = r
		}
	}
	out := rows[:0:0]
	for _, r := range rows {
		l := latest[r.JobID]
		switch {
		case l == nil:
		case r.Step == "" || r.Step == "batch" || r.Step == "extern":
			if r.Restart != l.Restart {
				continue
			}
		case l.Start.IsZero() || r.Start.Before(l.Start):
			continue // a numbered step of an earlier run
		}
		out = append(out, r)
	}
	return out
}

func sacctKeep(r *api.AcctRecord, o *sacctOpts, uid int) bool {
	if o.allocs && r.Step != "" {
		return false
	}
	switch {
	case len(o.users) > 0:
		if !sacctIn(o.users, r.User, strconv.FormatUint(uint64(r.UID), 10)) {
			return false
		}
	case !o.allUsers && uid != 0 && int(r.UID) != uid:
		return false
	}
	if len(o.accounts) > 0 && !sacctIn(o.accounts, r.Account) {
		return false
	}
	if len(o.partitions) > 0 && !sacctIn(o.partitions, r.Partition) {
		return false
	}
	if len(o.reservations) > 0 && !sacctIn(o.reservations, r.Reservation) {
		return false
	}
	return len(o.jobs) == 0 || sacctJobMatch(r, o.jobs)
}

// sacctInWindow selects a run by the window [from, to] and the -s states,
// as slurmdbd does: without states, a run eligible by the window's end
// that had not ended before its start (a job never eligible, held or
// waiting on a dependency, is in no window; oracle: a held job cancelled
// was listed by -j only); with states, a run that was in one of them
// during the window (PENDING and RUNNING by its times, whatever its state
// now; an end state by its end time inside the window). No window (-j
// alone): every run.
func sacctInWindow(r *api.AcctRecord, states map[string]bool, from, to time.Time) bool {
	state := ""
	if f := strings.Fields(r.State); len(f) > 0 {
		state = f[0]
	}
	if len(states) == 0 {
		if from.IsZero() && to.IsZero() {
			return true
		}
		return !r.Eligible.IsZero() && (to.IsZero() || !r.Eligible.After(to)) && (r.End.IsZero() || !r.End.Before(from))
	}
	if from.IsZero() && to.IsZero() {
		return states[state]
	}
	for s := range states {
		if sacctWasIn(r, s, state, from, to) {
			return true
		}
	}
	return false
}

// sacctWasIn reports whether run r was in state s during [from, to].
func sacctWasIn(r *api.AcctRecord, s, state string, from, to time.Time) bool {
	overlaps := func(a, b time.Time) bool { // [a, b) with b zero = still on
		return !a.IsZero() && !a.After(to) && (b.IsZero() || !b.Before(from))
	}
	switch s {
	case "PENDING":
		end := r.Start
		if end.IsZero() {
			end = r.End
		}
		return overlaps(r.Eligible, end)
	case "RUNNING":
		return overlaps(r.Start, r.End)
	case "SUSPENDED":
		return (state == s || r.SuspendedSec > 0) && overlaps(r.Start, r.End)
	}
	return state == s && !r.End.IsZero() && !r.End.Before(from) && !r.End.After(to)
}

// sacctJobMatch reports whether r is one of the -j ids: "12" (the job,
// all tasks of array 12, and their steps), "12_3", "12.batch", "12.0".
func sacctJobMatch(r *api.AcctRecord, ids []string) bool {
	for _, id := range ids {
		base, step, hasStep := strings.Cut(strings.TrimSpace(id), ".")
		if hasStep && step != r.Step {
			continue
		}
		job, task, hasTask := strings.Cut(base, "_")
		n, err := strconv.ParseUint(job, 10, 32)
		if err != nil {
			continue
		}
		if hasTask {
			t, err := strconv.Atoi(task)
			if err == nil && r.ArrayJobID == uint32(n) && r.ArrayTaskID == int32(t) {
				return true
			}
			continue
		}
		if r.JobID == uint32(n) || r.ArrayJobID == uint32(n) {
			return true
		}
	}
	return false
}

// sacctIn reports whether any of vals is in list (case-sensitive, as
// Slurm's name lists).
func sacctIn(list []string, vals ...string) bool {
	for _, l := range list {
		for _, v := range vals {
			if strings.TrimSpace(l) == v {
				return true
			}
		}
	}
	return false
}

// unknownUser returns the first name of -u that is neither a uid nor a
// user of this host: sacct refuses it before asking anything.
func unknownUser(names []string) (string, bool) {
	for _, n := range names {
		if _, err := strconv.ParseUint(n, 10, 32); err == nil {
			continue
		}
		if _, err := user.Lookup(n); err != nil {
			return n, false
		}
	}
	return "", true
}
