package cli

import (
	"context"
	"fmt"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"io"
	"math"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/duration"
)

func init() {
	Register(Command{Name: "squeue", Summary: "view the job queue", Link: true, Run: runSqueue})
}

// Slurm's squeue layouts (squeue.1, SEMANTICS §3.2).
const (
	squeueDefault = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
	squeueLong    = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
	squeueStart   = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
)

type squeueOpts struct {
	noHeader, long, start, array, me, help, all bool
	// notMe is --notme: every user's jobs but the caller's; usage is
	// --usage.
	notMe, usage                              bool
	format, formatLong, sortKeys              string
	users, accounts, qos, parts, states, jobs string
	nodes, names, resv, licenses              string
	// iterate is -i/--iterate: report again every iterate (0 = once).
	iterate time.Duration
	// notUser is the user --notme leaves out.
	notUser string
	// steps is -s/--steps[=LIST] ("*": every step); stepMode says it
	// was given (squeue_steps.go).
	steps    string
	stepMode bool
	// onlyState is --only-job-state, perPartition -P/--priority
	// (squeue_modes.go).
	onlyState, perPartition bool
	// dp is --json/--yaml (cli/dataparser.go), args the command line
	// (its meta.command).
	dp   *dpFlags
	args []string
}

func parseSqueue(args []string) (*squeueOpts, error) {
	o := &squeueOpts{args: args}
	fs := pflag.NewFlagSet("squeue", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVarP(&o.noHeader, "noheader", "h", false, "")
	fs.BoolVarP(&o.long, "long", "l", false, "")
	fs.BoolVar(&o.start, "start", false, "")
	fs.BoolVarP(&o.array, "array", "r", false, "")
	fs.BoolVar(&o.me, "me", false, "")
	fs.BoolVarP(&o.all, "all", "a", false, "")
	fs.BoolVar(&o.help, "help", false, "")
	fs.StringVarP(&o.format, "format", "o", "", "")
	fs.StringVarP(&o.formatLong, "Format", "O", "", "")
	fs.StringVarP(&o.sortKeys, "sort", "S", "", "")
	fs.StringVarP(&o.users, "user", "u", "", "")
	fs.StringVarP(&o.accounts, "account", "A", "", "")
	fs.StringVarP(&o.qos, "qos", "q", "", "")
	fs.StringVarP(&o.parts, "partition", "p", "", "")
	fs.StringVarP(&o.states, "states", "t", "", "")
	fs.StringVarP(&o.jobs, "jobs", "j", "", "")
	fs.StringVarP(&o.nodes, "nodelist", "w", "", "")
	fs.StringVarP(&o.names, "name", "n", "", "")
	fs.StringVarP(&o.resv, "reservation", "R", "", "")
	fs.StringVarP(&o.licenses, "licenses", "L", "", "")
	fs.BoolVar(&o.notMe, "notme", false, "")
	fs.BoolVar(&o.usage, "usage", false, "")
	// Accepted with nothing to change: memory is printed as requested
	// (--noconvert), hidden partitions' jobs are hidden already (--hide),
	// and there is no debug output (-v).
	fs.Bool("noconvert", false, "")
	fs.Bool("hide", false, "")
	fs.CountP("verbose", "v", "")
	var iterate string
	fs.StringVarP(&iterate, "iterate", "i", "", "")
	fs.StringVarP(&o.steps, "steps", "s", "", "")
	fs.Lookup("steps").NoOptDefVal = "*"
	fs.BoolVar(&o.onlyState, "only-job-state", false, "")
	fs.BoolVarP(&o.perPartition, "priority", "P", false, "")
	o.dp = addDataParserFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.stepMode = fs.Changed("steps")
	// Account and QOS names are case-insensitive (stored lowercase), as in Slurm.
	o.accounts, o.qos = strings.ToLower(o.accounts), strings.ToLower(o.qos)
	if fs.NArg() > 0 {
		if o.stepMode && o.steps == "*" {
			o.steps = fs.Arg(0) // squeue -s 3.0: the list after a space
		} else if o.jobs == "" && !strings.HasPrefix(fs.Arg(0), "-") {
			o.jobs = fs.Arg(0) // squeue JOBID, as `squeue -j`
		} else {
			return nil, fmt.Errorf("unrecognized argument %q", fs.Arg(0))
		}
	}
	var err error
	o.iterate, err = parseIterate(iterate)
	return o, err
}

// parseIterate reads -i SECONDS (a positive whole number, as squeue's
// "--iterate=VALUE" error says otherwise).
func parseIterate(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("--iterate=%s", v)
	}
	return time.Duration(n) * time.Second, nil
}

func runSqueue(ctx context.Context, env *Env, args []string) int {
	o, err := parseSqueue(args)
	if err != nil {
		return OptionError(env, "squeue", err)
	}
	if o.help || o.usage {
		fmt.Fprintln(env.Stdout, "Usage: squeue [-A account] [-j jobs] [-L licenses] [-l] [--me|--notme] [-o format] [-O fields] [-p part] [-q qos] [-r] [-S sort] [--start] [-t states] [-u users] [-w nodes] [-h]")
		return 0
	}
	if _, ok, rc := dpStart(env, "squeue", o.dp, 1); ok && rc >= 0 {
		return rc
	}
	if bad := badJobState(o.states); bad != "" {
		fmt.Fprintf(env.Stderr, "squeue: error: Invalid job state specified: %s\nsqueue: error: Valid job states include: %s\n\n",
			bad, strings.Join(squeueStateNames, ","))
		return 1
	}
	for _, u := range splitComma(o.users) {
		if _, ok := unknownUser([]string{u}); !ok {
			fmt.Fprintf(env.Stderr, "squeue: error: Invalid user: %s\n\n", u) // and lists no job (oracle)
		}
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "squeue", err)
	}
	if rc := checkNodeNames(ctx, env, cl, o.nodes); rc != 0 {
		return rc
	}
	if o.me {
		o.users = userName(env.UID)
	}
	if o.notMe {
		o.notUser = userName(env.UID)
	}
	if o.stepMode {
		return iterateReports(ctx, env, o.iterate, !o.noHeader, func() int { return squeueStepsOnce(ctx, env, cl, o) })
	}
	if items, err := parseFormat(o.layout()); err == nil && o.formatLong == "" {
		for range badSpecs(items) {
			fmt.Fprintln(env.Stderr, "squeue: error: Invalid job format specification: -")
		}
	}
	if o.iterate == 0 {
		// One listing and exit: no collection is worth its cost below
		// 1 GiB (100,000 jobs decode to about 100 MB).
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
		return squeueOnce(ctx, env, cl, o)
	}
	return iterateReports(ctx, env, o.iterate, !o.noHeader, func() int { return squeueOnce(ctx, env, cl, o) })
}

// iterateReports runs report once, or with -i every interval until
// interrupted, each report headed by the time (ctime's layout) unless -h
// and followed by a blank line, as squeue and sinfo do.
func iterateReports(ctx context.Context, env *Env, every time.Duration, header bool, report func() int) int {
	if every == 0 {
		return report()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if header {
			fmt.Fprintln(env.Stdout, time.Now().Format("Mon Jan _2 15:04:05 2006"))
		}
		if rc := report(); rc != 0 {
			return rc
		}
		fmt.Fprintln(env.Stdout)
		select {
		case <-ctx.Done():
			return 0
		case <-t.C:
		}
	}
}

// squeueOnce gathers and prints the queue once.
func squeueOnce(ctx context.Context, env *Env, cl *api.Client, o *squeueOpts) int {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := cl.Jobs(ctx, api.JobQuery{Filter: o.listFilter(), Brief: o.brief()})
	if err != nil {
		return clientError(env, "squeue", err)
	}
	if unknownSingleJob(res.Jobs, o.jobs) {
		// squeue -j ID loads that one job: one the controller no longer
		// knows is an error (a loop waiting for a job to leave ends).
		fmt.Fprintln(env.Stderr, "slurm_load_jobs error: Invalid job id specified")
		return 1
	}
	if f, ok := o.dp.format(); ok {
		return squeueDataParser(ctx, env, cl, o, f, res)
	}
	out, err := RenderSqueue(res, o)
	if err != nil {
		return Errorf(env, "squeue", "%v", err)
	}
	fmt.Fprint(env.Stdout, out)
	return 0
}

// unknownSingleJob reports whether jobs names one job id (no list) that no
// record in memory matches, whatever its state.
func unknownSingleJob(all []api.JobInfo, jobs string) bool {
	if jobs == "" || strings.Contains(jobs, ",") {
		return false
	}
	for i := range all {
		if api.JobNamed(&all[i], jobs) {
			return false
		}
	}
	return true
}

// RenderSqueue prints the queue the way squeue does for the given options.
func RenderSqueue(res api.JobsResponse, o *squeueOpts) (string, error) {
	jobs, err := filterJobs(res.Jobs, o)
	if err != nil {
		return "", err
	}
	if o.array {
		jobs = expandArrays(jobs)
	}
	if o.perPartition {
		jobs = perPartition(jobs) // squeue_modes.go
	}
	sortJobs(jobs, o.sortOrder(), res.Now, len(splitComma(o.jobs)) == 1)
	if o.formatLong != "" {
		return renderFields(jobs, o.formatLong, !o.noHeader, res.Now)
	}
	items, err := parseFormat(o.layout())
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if o.long && o.format == "" {
		b.WriteString(res.Now.Local().Format("Mon Jan 02 15:04:05 2006") + "\n")
	}
	if !o.noHeader {
		b.WriteString(renderLine(items, func(c byte) string { return squeueHeaders[c] }) + "\n")
	}
	for i := range jobs {
		j := &jobs[i]
		b.WriteString(renderLine(items, func(c byte) string { return squeueField(j, c, res.Now) }) + "\n")
	}
	return b.String(), nil
}

// sortOrder is -S, else squeue's default order.
func (o *squeueOpts) sortOrder() string {
	switch {
	case o.sortKeys != "":
		return o.sortKeys
	case o.start:
		return "S"
	}
	return "P,t,-p"
}

// layout is the -o format, else the one -l or --start select.
func (o *squeueOpts) layout() string {
	switch {
	case o.onlyState:
		return squeueOnlyState // squeue_modes.go
	case o.format == "%all":
		return squeueAll
	case o.format != "":
		return o.format
	case o.start:
		return squeueStart
	case o.long:
		return squeueLong
	}
	return squeueDefault
}

// brief reports whether every column and sort key o prints is one a
// brief listing carries (api.BriefFields): the usual layouts are, and
// the controller then skips the TRES, paths and other strings they do
// not show.
func (o *squeueOpts) brief() bool {
	if _, ok := o.dp.format(); ok || o.formatLong != "" {
		return false // --json/--yaml print whole records
	}
	items, err := parseFormat(o.layout())
	if err != nil {
		return false
	}
	for _, it := range items {
		if it.field != 0 && !strings.ContainsRune(api.BriefFields, rune(it.field)) {
			return false
		}
	}
	for _, k := range splitComma(o.sortOrder()) {
		if k = strings.TrimLeft(k, "+-"); k != "" && !strings.ContainsRune(api.BriefFields, rune(k[0])) {
			return false
		}
	}
	return true
}

// listFilter is o's job selection, which the controller applies before
// it renders and sends the jobs and the client applies again (the same
// api.JobMatcher) to what comes back.
func (o *squeueOpts) listFilter() api.ListFilter {
	return api.ListFilter{Jobs: o.jobs, Users: o.users, NotUser: o.notUser, Accounts: o.accounts, QOS: o.qos,
		Partitions: o.parts, Names: o.names, Nodes: o.nodes, Reservations: o.resv, Licenses: o.licenses,
		States: o.states, Pending: o.start}
}

func filterJobs(all []api.JobInfo, o *squeueOpts) ([]api.JobInfo, error) {
	m, err := o.listFilter().Matcher()
	if err != nil {
		return nil, err
	}
	// Most listings keep every job the controller sent (it filtered
	// already) as it is: those are returned without a copy.
	k := 0
	for k < len(all) && m.Match(&all[k]) && !namesTasksOf(&all[k], o.jobs) {
		k++
	}
	if k == len(all) {
		return all, nil
	}
	out := append(make([]api.JobInfo, 0, len(all)), all[:k]...)
	for i := k; i < len(all); i++ {
		j := &all[i]
		switch {
		case !m.Match(j):
		case namesTasksOf(j, o.jobs):
			out = append(out, pendingTasks(*j, namedTasks(*j, o.jobs))...)
		default:
			out = append(out, *j)
		}
	}
	return out, nil
}

// namesTasksOf reports whether the -j list names tasks of j, an array's
// pending record, one by one ("4_4"): squeue then shows only those.
func namesTasksOf(j *api.JobInfo, list string) bool {
	return list != "" && len(namedTasks(*j, list)) > 0
}

var compactStates = map[string]string{"PD": "PENDING", "R": "RUNNING", "S": "SUSPENDED", "CG": "COMPLETING",
	"CD": "COMPLETED", "CA": "CANCELLED", "F": "FAILED", "TO": "TIMEOUT", "NF": "NODE_FAIL", "PR": "PREEMPTED",
	"BF": "BOOT_FAIL", "DL": "DEADLINE", "OOM": "OUT_OF_MEMORY", "CF": "CONFIGURING", "RQ": "REQUEUED"}

func splitComma(s string) []string { return api.SplitList(s) }

func inList(list string, vals ...string) bool { return api.InList(list, vals...) }

// namedTasks is the tasks of an array's pending record that the -j list
// names one by one ("12_4"), in increasing order.
func namedTasks(j api.JobInfo, list string) []int32 {
	if j.ArrayJobID == 0 || j.ArrayTaskID >= 0 {
		return nil
	}
	var tasks []int32
	for _, id := range splitComma(list) {
		base, task, hasTask := strings.Cut(id, "_")
		n, err := strconv.ParseUint(base, 10, 32)
		if err != nil || !hasTask || uint64(j.ArrayJobID) != n {
			continue
		}
		t, err := strconv.Atoi(task)
		if err == nil && api.TaskInSet(j.ArrayTasks, t) && !slices.Contains(tasks, int32(t)) {
			tasks = append(tasks, int32(t))
		}
	}
	slices.Sort(tasks)
	return tasks
}

// pendingTasks narrows an array's pending record to the tasks -j names,
// even when -j names the whole array too (Slurm 24.11: squeue -j 4_4
// prints "4_4", -j 4_3,4_5 "4_[3,5]" without the throttle, -j 4_4,4
// "4_4" and the running tasks).
func pendingTasks(j api.JobInfo, tasks []int32) []api.JobInfo {
	if len(tasks) == 1 {
		j.ArrayTaskID, j.JobIDStr = tasks[0], fmt.Sprintf("%d_%d", j.ArrayJobID, tasks[0])
		return []api.JobInfo{j}
	}
	j.ArrayTasks, j.ArrayThrottle = foldTasks(tasks), 0
	j.JobIDStr = fmt.Sprintf("%d_[%s]", j.ArrayJobID, j.ArrayTasks)
	return []api.JobInfo{j}
}

// foldTasks writes increasing task ids as Slurm's set: "3-5", "3,5".
func foldTasks(tasks []int32) string {
	var parts []string
	for i := 0; i < len(tasks); {
		k := i
		for k+1 < len(tasks) && tasks[k+1] == tasks[k]+1 {
			k++
		}
		if k > i {
			parts = append(parts, fmt.Sprintf("%d-%d", tasks[i], tasks[k]))
		} else {
			parts = append(parts, strconv.Itoa(int(tasks[i])))
		}
		i = k + 1
	}
	return strings.Join(parts, ",")
}

// expandArrays is squeue -r: one line per pending array task.
func expandArrays(jobs []api.JobInfo) []api.JobInfo {
	var out []api.JobInfo
	for _, j := range jobs {
		if j.ArrayJobID == 0 || j.ArrayTaskID >= 0 || j.ArrayTasks == "" {
			out = append(out, j)
			continue
		}
		set, _, _ := strings.Cut(j.ArrayTasks, "%")
		for _, r := range strings.Split(set, ",") {
			lo, hi, isRange := strings.Cut(r, "-")
			a, _ := strconv.Atoi(lo)
			b := a
			if isRange {
				b, _ = strconv.Atoi(hi)
			}
			for t := a; t <= b; t++ {
				c := j
				c.ArrayTaskID = int32(t)
				c.JobIDStr = fmt.Sprintf("%d_%d", j.ArrayJobID, t)
				out = append(out, c)
			}
		}
	}
	return out
}

// sortJobs applies squeue's --sort keys (a leading '-' reverses a key);
// ties list the newest job first, as Slurm 24.11's squeue does (checked on
// the oracle: held jobs 1-4 of equal priority print 4, 3, 2, 1).
func sortJobs(jobs []api.JobInfo, keys string, now time.Time, byID bool) {
	type key struct {
		field byte
		desc  bool
	}
	var ks []key
	for _, k := range splitComma(keys) {
		desc := strings.HasPrefix(k, "-")
		if k = strings.TrimLeft(k, "+-"); k != "" {
			ks = append(ks, key{k[0], desc})
		}
	}
	// Sort indices, then move each record once to its place: a record is
	// about a kilobyte, and a stable sort of 100,000 of them moves each
	// many times.
	idx := make([]int32, len(jobs))
	for i := range idx {
		idx[i] = int32(i)
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ja, jb := &jobs[idx[a]], &jobs[idx[b]]
		for _, k := range ks {
			if k.field == 'S' {
				// no start time (N/A) sorts last either way (oracle:
				// -S S and -S -S both list the unplanned jobs last)
				if za, zb := startOf(ja).IsZero(), startOf(jb).IsZero(); za != zb {
					return zb
				}
			}
			if c := compareJobs(ja, jb, k.field, now); c != 0 {
				return c < 0 != k.desc
			}
			if k.field == 'S' {
				// equal start times (N/A included) list the older job
				// first whichever the direction (oracle: -S S and -S -S
				// both print unplanned jobs 8, 9, 11, 12, 13)
				return startTie(ja, jb)
			}
		}
		return tieOrder(ja, jb, byID)
	})
	permute(jobs, idx)
}

// permute puts jobs[idx[i]] at i, following each cycle of the
// permutation (idx is consumed).
func permute(jobs []api.JobInfo, idx []int32) {
	for i := range idx {
		if idx[i] < 0 || int(idx[i]) == i {
			continue
		}
		tmp := jobs[i]
		j := i
		for {
			k := int(idx[j])
			idx[j] = -1
			if k == i {
				jobs[j] = tmp
				break
			}
			jobs[j] = jobs[k]
			j = k
		}
	}
}

// tieOrder puts the newer job record first (oracle: -S t lists held jobs
// 13, 12, 11). The tasks of one array keep their task order (oracle: 4_1
// before 4_2, ids 5 and 6; squeue -r expands a record in order), except
// that the running tasks of the one array -j names come newest first, as
// slurmctld returns a single job's records (oracle: squeue -j 1 lists 1_2,
// 1_1, 1_0; squeue -j 4_4,4 lists 4_1, 4_2). Running jobs that are not
// array tasks come oldest first (oracle: jobs 1, 2 and 7, started
// together at equal priority, list 1, 2, 7 where pending jobs 11, 12, 13
// list 13, 12, 11).
func tieOrder(a, b *api.JobInfo, byID bool) bool {
	if a.JobID == b.JobID {
		return taskKey(a) < taskKey(b)
	}
	if a.ArrayJobID != 0 && a.ArrayJobID == b.ArrayJobID && !byID {
		return taskKey(a) < taskKey(b)
	}
	if a.State == "RUNNING" && b.State == "RUNNING" && a.ArrayJobID == 0 && b.ArrayJobID == 0 {
		return a.JobID < b.JobID
	}
	return a.JobID > b.JobID
}

// startTie orders jobs of equal start time by job id, an expanded
// record's tasks in task order.
func startTie(a, b *api.JobInfo) bool {
	if a.JobID == b.JobID {
		return a.ArrayTaskID < b.ArrayTaskID
	}
	return a.JobID < b.JobID
}

// jobOrder orders by array job id (job id), then task id; an array's
// pending record (no task id) after its tasks, as Slurm sorts the
// record's task id NO_VAL (oracle: -S i lists 1_0, 1_1, 1_[2-5%2]).
func jobOrder(a, b *api.JobInfo) int {
	ka, kb := a.JobID, b.JobID
	if a.ArrayJobID != 0 {
		ka = a.ArrayJobID
	}
	if b.ArrayJobID != 0 {
		kb = b.ArrayJobID
	}
	if ka != kb {
		return cmpNum(int64(ka), int64(kb))
	}
	return cmpNum(taskKey(a), taskKey(b))
}

// taskKey is a record's task id for sorting, an array's pending record last.
func taskKey(j *api.JobInfo) int64 {
	if j.ArrayJobID != 0 && j.ArrayTaskID < 0 {
		return math.MaxInt64
	}
	return int64(j.ArrayTaskID)
}

func cmpNum(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareJobs(a, b *api.JobInfo, k byte, now time.Time) int {
	switch k {
	case 'i', 'A', 'F':
		return jobOrder(a, b)
	case 'p', 'Q':
		return cmpNum(int64(a.Priority), int64(b.Priority))
	case 'S':
		return cmpNum(startOf(a).UnixNano(), startOf(b).UnixNano())
	case 'V':
		return cmpNum(a.SubmitTime.UnixNano(), b.SubmitTime.UnixNano())
	case 'e':
		return cmpNum(a.EndTime.UnixNano(), b.EndTime.UnixNano())
	case 'M':
		return cmpNum(int64(timeUsed(a, now)), int64(timeUsed(b, now)))
	case 'l':
		return cmpNum(a.TimeLimitSec, b.TimeLimitSec)
	case 'D':
		return cmpNum(int64(a.NumNodes), int64(b.NumNodes))
	case 'C':
		return cmpNum(int64(a.NumCPUs), int64(b.NumCPUs))
	case 'y':
		return cmpNum(int64(a.Nice), int64(b.Nice))
	}
	return strings.Compare(squeueField(a, k, now), squeueField(b, k, now))
}

func startOf(j *api.JobInfo) time.Time {
	if !j.StartTime.IsZero() {
		return j.StartTime
	}
	return j.ExpectedStart
}

// timeUsed is %M: how long the job has run, suspended time excluded.
func timeUsed(j *api.JobInfo, now time.Time) time.Duration {
	if j.StartTime.IsZero() || j.State == "PENDING" {
		return 0
	}
	end := now
	switch {
	case j.State == "SUSPENDED" && !j.SuspendTime.IsZero():
		end = j.SuspendTime
	case !j.EndTime.IsZero() && j.State != "RUNNING":
		end = j.EndTime
	}
	d := end.Sub(j.StartTime) - time.Duration(j.SuspendedSec)*time.Second
	if j.State == "SUSPENDED" {
		d = end.Sub(j.StartTime) - time.Duration(j.SuspendedSec)*time.Second
	}
	return max(d, 0).Truncate(time.Second)
}

func limitString(sec int64) string {
	if sec == api.TimeInfinite || sec <= 0 {
		return "UNLIMITED"
	}
	return duration.FormatElapsed(time.Duration(sec) * time.Second)
}

var squeueHeaders = map[byte]string{
	'i': "JOBID", 'A': "JOBID", 'F': "ARRAY_JOB_ID", 'K': "ARRAY_TASK_ID", 'P': "PARTITION", 'j': "NAME",
	'u': "USER", 'U': "UID", 'g': "GROUP", 'G': "GROUP", 'a': "ACCOUNT", 'q': "QOS", 't': "ST", 'T': "STATE",
	'M': "TIME", 'l': "TIME_LIMIT", 'L': "TIME_LEFT", 'D': "NODES", 'C': "CPUS", 'R': "NODELIST(REASON)",
	'r': "REASON", 'p': "PRIORITY", 'Q': "PRIORITY", 'S': "START_TIME", 'e': "END_TIME", 'V': "SUBMIT_TIME",
	'y': "NICE", 'E': "DEPENDENCY", 'v': "RESERVATION", 'Y': "SCHEDNODES", 'N': "NODELIST", 'm': "MIN_MEMORY",
	'c': "MIN_CPUS", 'o': "COMMAND", 'Z': "WORK_DIR", 'f': "FEATURES", 'n': "REQ_NODES", 'x': "EXC_NODES",
	'b': "TRES_PER_NODE", 'k': "COMMENT", 'B': "EXEC_HOST", 'h': "OVER_SUBSCRIBE", 'O': "CONTIGUOUS",
	'd': "MIN_TMP_DISK", 'w': "WCKEY", 'z': "S:C:T", 'H': "SOCKETS_PER_NODE", 'I': "CORES_PER_SOCKET",
	'J': "THREADS_PER_CORE", 'W': "LICENSES", 'X': "CORE_SPEC",
}

// squeueField renders one %-field of a job.
func squeueField(j *api.JobInfo, c byte, now time.Time) string {
	switch c {
	case 'd':
		return "0" // no --tmp requirement is kept
	case 'w':
		return "(null)" // no WCKey in the job record
	case 'z':
		return "*:*:*" // no -B sockets:cores:threads request
	case 'H', 'I', 'J':
		return "*"
	case 'X':
		return "N/A"
	case 'i':
		return j.JobIDStr
	case 'A':
		return strconv.FormatUint(uint64(j.JobID), 10)
	case 'F':
		if j.ArrayJobID != 0 {
			return strconv.FormatUint(uint64(j.ArrayJobID), 10)
		}
		return strconv.FormatUint(uint64(j.JobID), 10)
	case 'K':
		switch {
		case j.ArrayJobID == 0:
			return "N/A"
		case j.ArrayTaskID >= 0:
			return strconv.Itoa(int(j.ArrayTaskID))
		}
		return j.ArrayTasks
	case 'P':
		return j.Partition
	case 'j':
		return printable(j.Name)
	case 'u':
		return j.User
	case 'U':
		return strconv.FormatUint(uint64(j.UID), 10)
	case 'g':
		return j.Group
	case 'G':
		return strconv.FormatUint(uint64(j.GID), 10)
	case 'a':
		return j.Account
	case 'q':
		return j.QOS
	case 't':
		return j.StateShort
	case 'T':
		return j.State
	case 'M':
		return duration.FormatElapsed(timeUsed(j, now))
	case 'l':
		return limitString(j.TimeLimitSec)
	case 'L':
		if j.TimeLimitSec <= 0 {
			return "UNLIMITED"
		}
		if j.State == "PENDING" {
			return limitString(j.TimeLimitSec)
		}
		return duration.FormatElapsed(max(time.Duration(j.TimeLimitSec)*time.Second-timeUsed(j, now), 0))
	case 'D':
		return strconv.Itoa(j.NumNodes)
	case 'C':
		return strconv.Itoa(j.NumCPUs)
	case 'R':
		if j.State == "PENDING" {
			if j.StateDesc != "" {
				return "(" + j.StateDesc + ")"
			}
			return "(" + j.Reason + ")"
		}
		// A failed or timed-out job shows its reason, any other its nodes,
		// none for a job cancelled while pending (oracle: "F
		// (NonZeroExitCode)", "TO (TimeLimit)", "CA " and "CD n1").
		if j.State == "FAILED" || j.State == "TIMEOUT" {
			return "(" + noneIfEmpty(j.Reason) + ")"
		}
		return j.NodeList
	case 'r':
		// A state description (requeued in held state, a failed launch,
		// kept by a job cancelled while pending) stands in for the reason.
		if j.StateDesc != "" {
			return j.StateDesc
		}
		return noneIfEmpty(j.Reason)
	case 'p':
		return strconv.FormatFloat(float64(j.Priority)/4294967295.0, 'f', 14, 64) // Slurm's %.14f
	case 'Q':
		return strconv.FormatUint(uint64(j.Priority), 10)
	case 'S':
		if t := startOf(j); !t.IsZero() {
			return slurmTime(t)
		}
		return "N/A"
	case 'e':
		return endString(j)
	case 'V':
		return slurmTime(j.SubmitTime)
	case 'y':
		return strconv.Itoa(int(j.Nice))
	case 'E':
		return orNull(j.Dependency)
	case 'v':
		return orNull(j.Reservation)
	case 'W':
		return orNull(j.Licenses)
	case 'Y':
		return orNull(j.SchedNodes)
	case 'N':
		return j.NodeList
	case 'B':
		if j.BatchHost == "" {
			return "n/a" // oracle: a pending job's EXEC_HOST
		}
		return j.BatchHost
	case 'm':
		if j.MinMemoryMB == 0 {
			return "0"
		}
		return strconv.FormatInt(j.MinMemoryMB, 10) + "M"
	case 'c':
		return strconv.Itoa(j.CPUsPerTask)
	case 'o':
		return j.Command
	case 'Z':
		return j.WorkDir
	case 'f':
		return orNull(j.Features)
	case 'n':
		return j.ReqNodes
	case 'x':
		return j.ExcNodes
	case 'b':
		return orNA(j.TresPerNode)
	case 'k':
		return orNull(printable(j.Comment))
	case 'h':
		if j.Exclusive {
			return "NO"
		}
		return "OK"
	case 'O':
		return "0"
	}
	return ""
}

// endString is %e: the end time, or the start (for a pending job the
// expected start) plus the time limit, as Slurm prints a planned job's
// end (oracle: START_TIME 16:43:35, END_TIME 16:46:35 for -t 3).
func endString(j *api.JobInfo) string {
	if !j.EndTime.IsZero() {
		return slurmTime(j.EndTime)
	}
	if s := startOf(j); !s.IsZero() && j.TimeLimitSec > 0 {
		return slurmTime(s.Add(time.Duration(j.TimeLimitSec) * time.Second))
	}
	return "N/A"
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "None"
	}
	return s
}

func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

func orNA(s string) string {
	if s == "" {
		return "N/A"
	}
	return s
}

// ---- %-format engine shared by squeue and sinfo ----

// fmtItem is one element of a %-format: literal text, or a field with an
// optional width and justification (`%.18i` right, `%-8j`/`%8j` left).
type fmtItem struct {
	lit   string
	field byte
	width int
	right bool
	// fit is sinfo's `%#P`: the width of the longest value.
	fit bool
	// bad marks a literal that was a field with '-' for its type: Slurm's
	// clients have no '-' flag, print "%-" (and the text after it) as it
	// is and complain (oracle: squeue -o '%-6j' prints "%-6j").
	bad bool
}

// badSpecs is how many '-' field types a format holds.
func badSpecs(items []fmtItem) int {
	n := 0
	for _, it := range items {
		if it.bad {
			n++
		}
	}
	return n
}

// maxFieldWidth caps a field width (a typo must not allocate gigabytes).
const maxFieldWidth = 1024

// parseFormat splits a Slurm %-format string.
func parseFormat(s string) ([]fmtItem, error) {
	var out []fmtItem
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			lit.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			lit.WriteByte('%')
			i++
			continue
		}
		if lit.Len() > 0 {
			out = append(out, fmtItem{lit: lit.String()})
			lit.Reset()
		}
		it := fmtItem{}
		i++
		if i < len(s) && s[i] == '.' {
			it.right = true
			i++
		}
		if i < len(s) && s[i] == '#' {
			it.fit = true
			i++
		}
		at := i
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i > start {
			it.width, _ = strconv.Atoi(s[start:i])
			it.width = min(it.width, maxFieldWidth)
		}
		if i >= len(s) {
			return nil, fmt.Errorf("invalid format %q: missing field type", s)
		}
		if s[i] == '-' {
			// the spec so far is text; what follows is read on as text
			out = append(out, fmtItem{lit: "%" + s[at-boolInt(it.right)-boolInt(it.fit):i+1], bad: true})
			continue
		}
		it.field = s[i]
		out = append(out, it)
	}
	if lit.Len() > 0 {
		out = append(out, fmtItem{lit: lit.String()})
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// renderRow renders one line with its trailing blanks cut (sinfo).
func renderRow(items []fmtItem, value func(byte) string) string {
	return strings.TrimRight(renderLine(items, value), " ")
}

// renderLine renders one line of squeue or sinfo; values are padded to
// the width and cut when longer, as Slurm's clients do, and the last
// field keeps its padding (oracle: `squeue -o '%i %.4t %N'` prints
// "3   PD " for a pending job, sinfo -N "STATE ").
// writeSqueueLine is renderLine for one job, written straight into b
// (100,000 lines make no intermediate strings).
func writeSqueueLine(b *strings.Builder, items []fmtItem, j *api.JobInfo, now time.Time) {
	for _, it := range items {
		if it.field == 0 {
			b.WriteString(it.lit)
			continue
		}
		v := squeueField(j, it.field, now)
		switch {
		case it.width <= 0:
			b.WriteString(v)
		case len(v) > it.width:
			b.WriteString(v[:it.width])
		case it.right:
			writeSpaces(b, it.width-len(v))
			b.WriteString(v)
		default:
			b.WriteString(v)
			writeSpaces(b, it.width-len(v))
		}
	}
	b.WriteByte('\n')
}

const spaces = "                                                                "

func writeSpaces(b *strings.Builder, n int) {
	for n > len(spaces) {
		b.WriteString(spaces)
		n -= len(spaces)
	}
	b.WriteString(spaces[:n])
}

func renderLine(items []fmtItem, value func(byte) string) string {
	var b strings.Builder
	for _, it := range items {
		if it.field == 0 {
			b.WriteString(it.lit)
			continue
		}
		b.WriteString(pad(value(it.field), it.width, it.right))
	}
	return b.String()
}

func pad(v string, width int, right bool) string {
	if width <= 0 {
		return v
	}
	if len(v) > width {
		return v[:width]
	}
	if right {
		return strings.Repeat(" ", width-len(v)) + v
	}
	return v + strings.Repeat(" ", width-len(v))
}

// squeueAll is what -o %all prints: every field letter but %s, a to z
// then A to Z, unpadded and separated by '|' (oracle).
var squeueAll = func() string {
	var f []string
	for _, r := range "abcdefghijklmnopqrtuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" {
		f = append(f, "%"+string(r))
	}
	return strings.Join(f, "|")
}()

// squeueFields maps -O names to %-letters.
var squeueFields = map[string]byte{
	"jobid": 'A', "jobarrayid": 'i', "arrayjobid": 'F', "arraytaskid": 'K', "partition": 'P', "name": 'j',
	"username": 'u', "userid": 'U', "groupname": 'g', "groupid": 'G', "account": 'a', "qos": 'q',
	"statecompact": 't', "state": 'T', "timeused": 'M', "timelimit": 'l', "timeleft": 'L', "numnodes": 'D',
	"numcpus": 'C', "reasonlist": 'R', "reason": 'r', "priority": 'p', "prioritylong": 'Q', "starttime": 'S',
	"endtime": 'e', "submittime": 'V', "nice": 'y', "dependency": 'E', "reservation": 'v', "schednodes": 'Y',
	"nodelist": 'N', "minmemory": 'm', "mincpus": 'c', "command": 'o', "workdir": 'Z', "feature": 'f',
	"reqnodes": 'n', "excnodes": 'x', "tres-per-node": 'b', "comment": 'k', "batchhost": 'B',
}

var squeueFieldHeaders = map[string]string{"jobarrayid": "JOBID", "statecompact": "ST", "prioritylong": "PRIORITY",
	"username": "USER", "numnodes": "NODES", "numcpus": "CPUS", "reasonlist": "NODELIST(REASON)"}

// renderFields is squeue -O: "name[:[.]width]" items, 20 wide by default.
func renderFields(jobs []api.JobInfo, spec string, header bool, now time.Time) (string, error) {
	type col struct {
		c      byte
		head   string
		width  int
		right  bool
		suffix string
	}
	var cols []col
	for _, f := range splitComma(spec) {
		name, w, _ := strings.Cut(f, ":")
		c, ok := squeueFields[strings.ToLower(name)]
		if !ok {
			return "", fmt.Errorf("Invalid job format specification: %s", name)
		}
		head := squeueFieldHeaders[strings.ToLower(name)]
		if head == "" {
			head = squeueHeaders[c]
		}
		cl := col{c: c, head: head, width: 20}
		if strings.HasPrefix(w, ".") {
			cl.right, w = true, w[1:]
		}
		num := strings.TrimRightFunc(w, func(r rune) bool { return r < '0' || r > '9' })
		if n, err := strconv.Atoi(num); err == nil {
			cl.width, cl.suffix = n, w[len(num):]
		}
		cols = append(cols, cl)
	}
	var b strings.Builder
	line := func(v func(col) string) {
		var l strings.Builder
		for _, c := range cols {
			l.WriteString(pad(v(c), c.width, c.right) + c.suffix)
		}
		b.WriteString(l.String() + "\n") // -O keeps its padding (oracle)
	}
	if header {
		line(func(c col) string { return c.head })
	}
	for i := range jobs {
		line(func(c col) string { return squeueField(&jobs[i], c.c, now) })
	}
	return b.String(), nil
}

// squeueStateNames are the job states squeue -t accepts by name, in the
// order its error lists them (oracle).
var squeueStateNames = []string{"pending", "running", "suspended", "completed", "cancelled", "failed", "timeout",
	"node_fail", "preempted", "boot_fail", "deadline", "out_of_memory", "completing", "configuring", "resizing",
	"resv_del_hold", "requeued", "requeue_fed", "requeue_hold", "revoked", "signaling", "special_exit", "stage_out", "stopped"}

// squeueStateCodes are the compact forms -t also accepts.
var squeueStateCodes = []string{"PD", "R", "S", "CD", "CA", "F", "TO", "NF", "PR", "BF", "DL", "OOM", "CG", "CF",
	"RS", "RD", "RF", "RH", "RQ", "RV", "SI", "SE", "SO", "ST"}

// badJobState returns the first -t entry squeue does not know ("" if
// none).
func badJobState(list string) string {
	for _, s := range splitComma(list) {
		if !strings.EqualFold(s, "all") && !slices.ContainsFunc(squeueStateNames, func(n string) bool { return strings.EqualFold(n, s) }) &&
			!slices.Contains(squeueStateCodes, strings.ToUpper(s)) {
			return s
		}
	}
	return ""
}

// checkNodeNames refuses a -w list naming a node the cluster does not
// have, as squeue does before listing (oracle: "Invalid node name n9").
func checkNodeNames(ctx context.Context, env *Env, cl *api.Client, list string) int {
	if list == "" {
		return 0
	}
	names, err := hostlist.Expand(list)
	if err != nil {
		return 0 // the controller answers an unreadable list
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := cl.Nodes(ctx)
	if err != nil {
		return clientError(env, "squeue", err)
	}
	known := map[string]bool{}
	for i := range res.Nodes {
		known[res.Nodes[i].Name] = true
	}
	for _, n := range names {
		if !known[n] {
			return Errorf(env, "squeue", "Invalid node name %s", n)
		}
	}
	return 0
}
