package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/duration"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/spf13/pflag"
)

func init() {
	Register(Command{Name: "scontrol", Summary: "view and modify jobs, nodes, partitions; get tokens", Link: true, Run: runScontrol})
}

const scontrolUsage = `Usage: scontrol COMMAND
  show job [ID] | show node [NAME] | show partition [NAME] | show config
  update JobId=ID Partition= TimeLimit= QOS= Nice= SiteFactor= Priority= Name=
  update NodeName=NODES State=DRAIN|RESUME|DOWN|UNDRAIN Reason="..."
  hold|uhold|release|requeue|requeuehold|suspend|resume|top JOB_LIST
  write batch_script JOBID [FILE|-] | wait_job JOBID | notify JOBID MESSAGE | setdebug LEVEL
  show daemons | show step(s) [ID] | show assoc_mgr [users=U,..] [accounts=A,..] [qos=Q,..] [flags=users,assoc,qos]
  token [lifespan=SECONDS] [username=USER]
  create partition PartitionName=P Nodes=... [K=V...] | update PartitionName=P K=V... | delete PartitionName=P
  create reservation K=V... | update ReservationName=R K=V... | delete ReservationName=R
  show reservation [NAME] | show licenses [NAME] | show hostnames|hostlist|hostlistsorted LIST
  listpids [JOBID[.STEPID]] [NODENAME]
  reconfigure
  ping | version
`

// scontrolOptions are scontrol's options before its command.
type scontrolOptions struct{ oneLiner, details, help bool }

// parseScontrolOptions reads the options that come before scontrol's
// command (getopt permutes nothing there: "show job -d" is not -d).
func parseScontrolOptions(opts []string) (scontrolOptions, error) {
	var o scontrolOptions
	fs := pflag.NewFlagSet("scontrol", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVarP(&o.oneLiner, "oneliner", "o", false, "")
	fs.BoolVarP(&o.details, "details", "d", false, "")
	fs.BoolVarP(&o.help, "help", "h", false, "")
	fs.BoolP("all", "a", false, "")
	fs.BoolP("verbose", "v", false, "")
	fs.BoolP("quiet", "Q", false, "")
	return o, fs.Parse(opts)
}

func runScontrol(ctx context.Context, env *Env, args []string) int {
	args, dp := extractDataParserArgs(args) // --json, --yaml: cli/dataparser.go
	if _, ok, rc := dpStart(env, "scontrol", dp, 1); ok && rc >= 0 {
		return rc
	}
	var opts []string
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		opts, args = append(opts, args[0]), args[1:]
	}
	so, err := parseScontrolOptions(opts)
	if err != nil {
		return OptionError(env, "scontrol", err)
	}
	if so.help {
		fmt.Fprint(env.Stdout, scontrolUsage)
		return 0
	}
	oneLiner, details := so.oneLiner, so.details
	if len(args) == 0 {
		fmt.Fprint(env.Stdout, scontrolUsage)
		return 1
	}
	cmd := strings.ToLower(args[0])
	if cmd == "version" || cmd == "-v" {
		fmt.Fprintln(env.Stdout, VersionLine())
		return 0
	}
	if cmd == "show" && len(args) > 1 {
		if code, ok := showHostlist(env, args[1:]); ok {
			return code
		}
		if strings.HasPrefix("daemons", strings.ToLower(args[1])) && len(args[1]) >= 2 {
			return showDaemons(env) // scontrol_admin.go: read from slurm.conf
		}
	}
	cl, err := controllerClient(env)
	if err != nil {
		return clientError(env, "scontrol", err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	s := &scontrolRun{env: env, cl: cl, ctx: ctx, oneLiner: oneLiner, details: details}
	switch cmd {
	case "show":
		if f, ok := dp.format(); ok && len(args) > 1 {
			if rc, ok := s.showDataParser(f, strings.ToLower(args[1]), strings.Join(args[2:min(len(args), 3)], ""), args); ok {
				return rc
			}
		}
		return s.show(args[1:])
	case "create", "delete":
		if words, ok := partitionWords(args[1:]); ok {
			return s.partition(cmd, words)
		}
		return s.reservation(args) // scontrol_resv.go
	case "update":
		return s.update(args[1:])
	case "hold", "uhold", "release", "requeue", "requeuehold", "suspend", "resume", "top":
		return s.control(cmd, args[1:])
	case "write":
		return s.writeBatchScript(args[1:]) // scontrol_admin.go
	case "wait_job":
		return s.waitJob(args[1:])
	case "notify":
		return s.notify(args[1:])
	case "setdebug":
		return s.setDebug(args[1:])
	case "token":
		return s.token(args[1:])
	case "ping":
		w, err := cl.Ping(ctx)
		if err != nil {
			fmt.Fprintln(env.Stdout, "Slurmctld(primary) at localhost is DOWN")
			return 1
		}
		fmt.Fprintf(env.Stdout, "Slurmctld(primary) at %s is UP\n", w.Cluster)
		if w.StateSave != "" {
			// Up but unable to store anything: said, and not exit 0.
			fmt.Fprintf(env.Stdout, "Slurmctld(primary) at %s: %s\n", w.Cluster, w.StateSave)
			return 1
		}
		return 0
	}
	if isAbbrev(cmd, "listpids", 1) { // "l" is listpids too (oracle)
		return s.listPids(args[1:]) // scontrol_listpids.go
	}
	if isAbbrev(cmd, "reconfigure", 3) {
		return s.reconfigure()
	}
	return Errorf(env, "scontrol", "Invalid command: %s", args[0])
}

// isAbbrev says whether word is full or a prefix of it at least min long
// (scontrol takes "reconfig" for "reconfigure").
func isAbbrev(word, full string, min int) bool {
	return len(word) >= min && strings.HasPrefix(full, word)
}

// reconfigure asks the controller to reread slurm.conf: silent on
// success as in Slurm; "slurm_reconfigure error: ..." otherwise (a
// configuration the controller cannot start on is "Unspecified error",
// its reason in the controller's log). Keys only a restart can change
// are named on stderr, where Slurm leaves them to its log.
func (s *scontrolRun) reconfigure() int {
	r, err := s.cl.Reconfigure(s.ctx)
	var ae *api.Error
	if errors.As(err, &ae) {
		fmt.Fprintf(s.env.Stderr, "slurm_reconfigure error: %s\n", ae.Message)
		return 1
	}
	if err != nil {
		return clientError(s.env, "scontrol", err)
	}
	for _, k := range r.RestartNeeded {
		fmt.Fprintf(s.env.Stderr, "scontrol: warning: %s changed: it takes effect when the controller is restarted\n", k)
	}
	return 0
}

type scontrolRun struct {
	env      *Env
	cl       *api.Client
	ctx      context.Context
	oneLiner bool
	// details is -d: Sluice's priority breakdown and why-pending lines
	// are added to scontrol show job.
	details bool
}

// print writes records, one attribute line each (or one line with -o),
// each followed by a blank line.
func (s *scontrolRun) print(records [][]string) {
	for _, r := range records {
		if s.oneLiner {
			fmt.Fprintln(s.env.Stdout, strings.Join(r, " "))
			continue
		}
		fmt.Fprint(s.env.Stdout, strings.Join(r, "\n   ")+"\n\n")
	}
}

// printTrailed writes job records as Slurm 24.11 ends them: a
// last line of three blanks before the blank line, a trailing blank on
// the one-line form (oracle: "StdOut=/dev/null\n   \n\n").
func (s *scontrolRun) printTrailed(records [][]string) {
	for _, r := range records {
		if s.oneLiner {
			fmt.Fprintln(s.env.Stdout, strings.Join(r, " ")+" ")
			continue
		}
		fmt.Fprint(s.env.Stdout, strings.Join(r, "\n   ")+"\n   \n\n")
	}
}

func (s *scontrolRun) show(args []string) int {
	if len(args) == 0 {
		return Errorf(s.env, "scontrol", "show: an entity (job, node, partition, config) is required")
	}
	what := strings.ToLower(args[0])
	name := ""
	if len(args) > 1 {
		name = args[1]
	}
	switch {
	case strings.HasPrefix(what, "job"):
		q := api.JobQuery{Detail: s.details}
		if name != "" {
			q.IDs = []string{name}
		}
		res, err := s.cl.Jobs(s.ctx, q)
		if err != nil {
			var ae *api.Error
			if errors.As(err, &ae) && ae.Status == 404 {
				fmt.Fprintf(s.env.Stderr, "slurm_load_jobs error: %s\n", ae.Message)
				return 1
			}
			return clientError(s.env, "scontrol", err)
		}
		if len(res.Jobs) == 0 {
			fmt.Fprintln(s.env.Stdout, "No jobs in the system")
			return 0
		}
		var recs [][]string
		for i := range res.Jobs {
			narrowToTask(&res.Jobs[i], name)
			recs = append(recs, JobRecordLines(&res.Jobs[i], res.Now))
		}
		s.printTrailed(recs)
	case what == "step" || what == "steps":
		return s.showSteps(name) // scontrol_admin.go
	case strings.HasPrefix(what, "node"):
		res, err := s.cl.Nodes(s.ctx)
		if err != nil {
			return clientError(s.env, "scontrol", err)
		}
		var recs [][]string
		for i := range res.Nodes {
			if name == "" || res.Nodes[i].Name == name {
				recs = append(recs, NodeRecordLines(&res.Nodes[i]))
			}
		}
		if len(recs) == 0 {
			fmt.Fprintf(s.env.Stderr, "Node %s not found\n", name)
			return 1
		}
		s.print(recs)
	case strings.HasPrefix(what, "partition"):
		res, err := s.cl.Partitions(s.ctx)
		if err != nil {
			return clientError(s.env, "scontrol", err)
		}
		billing, _ := s.cl.PartitionBilling(s.ctx) // older controllers: no weights shown
		var recs [][]string
		for i := range res.Partitions {
			if p := &res.Partitions[i]; name == "" || p.Name == name {
				lines := PartitionRecordLines(p)
				if w := billing.Weights[p.Name]; w != "" {
					lines = append(lines, "TRESBillingWeights="+w)
				}
				recs = append(recs, lines)
			}
		}
		if len(recs) == 0 {
			fmt.Fprintf(s.env.Stderr, "Partition %s not found\n", name)
			return 1
		}
		s.print(recs)
	case len(what) >= 3 && strings.HasPrefix("reservations", what), what == "resv":
		return s.reservation(append([]string{"show"}, args[:min(len(args), 2)]...)) // scontrol_resv.go
	case strings.HasPrefix(what, "lic"):
		return s.showLicenses(name) // scontrol_resv.go
	case strings.HasPrefix(what, "assoc"):
		return s.showAssocMgr(args[1:]) // scontrol_admin.go
	case strings.HasPrefix(what, "config"):
		res, err := s.cl.Config(s.ctx)
		if err != nil {
			return clientError(s.env, "scontrol", err)
		}
		fmt.Fprintf(s.env.Stdout, "Configuration data as of %s\n", slurmTime(res.Now))
		for _, e := range res.Entries {
			fmt.Fprintf(s.env.Stdout, "%-23s = %s\n", e.Key, e.Value)
		}
		// Slurm then prints its MPI plugins' own settings (Sluice has no
		// such plugins) and whether the controllers answer.
		if res.Controller != "" {
			fmt.Fprintf(s.env.Stdout, "\nSlurmctld(primary) at %s is UP\n", res.Controller)
		}
	default:
		return Errorf(s.env, "scontrol", "Invalid entity %s for keyword show", args[0])
	}
	return 0
}

// showHostlist is scontrol show hostnames|hostlistsorted [LIST], which
// needs no controller: the names of a host list one a line, or the sorted
// compressed list (the list defaults to $SLURM_JOB_NODELIST). As Slurm
// 24.11's scontrol, a bad or empty list is reported and exits 0 (oracle).
// ok is false for any other entity.
func showHostlist(env *Env, args []string) (code int, ok bool) {
	what := strings.ToLower(args[0])
	if what != "hostnames" && what != "hostlist" && what != "hostlistsorted" {
		return 0, false
	}
	list := env.Getenv("SLURM_JOB_NODELIST")
	if len(args) > 1 {
		list = args[1]
	}
	names, err := hostlist.Expand(list)
	switch {
	case err != nil:
		var re *hostlist.RangeError
		if errors.As(err, &re) {
			// Slurm's parser names the range first (oracle).
			Errorf(env, "scontrol", "_parse_single_range: Invalid range: `%s'", re.Range)
		}
		fmt.Fprintf(env.Stderr, "Invalid hostlist: %s\n", list)
		return 0, true
	case len(names) == 0:
		Errorf(env, "scontrol", "host list is empty")
		return 0, true
	case what == "hostnames":
		for _, n := range names {
			fmt.Fprintln(env.Stdout, n)
		}
	case what == "hostlist":
		fmt.Fprintln(env.Stdout, hostlist.Join(names))
	default:
		fmt.Fprintln(env.Stdout, hostlist.JoinSorted(names))
	}
	return 0, true
}

// kvArgs parses KEY=VALUE words (values may have been quoted by the shell).
func kvArgs(args []string) ([][2]string, error) {
	var out [][2]string
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("Invalid input: %s", a)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

func (s *scontrolRun) update(args []string) int {
	kvs, err := kvArgs(args)
	if err != nil || len(kvs) == 0 {
		if err == nil {
			err = errors.New("update: nothing to update")
		}
		return Errorf(s.env, "scontrol", "%v", err)
	}
	key := strings.ToLower(kvs[0][0])
	switch key {
	case "reservationname", "reservation":
		return s.reservation(append([]string{"update"}, args...)) // scontrol_resv.go
	case "partitionname":
		return s.partition(api.PartitionUpdate, args)
	case "jobid", "job":
		set := map[string]string{}
		for _, kv := range kvs[1:] {
			set[kv[0]] = kv[1]
		}
		var code int
		for _, id := range splitComma(kvs[0][1]) {
			if err := s.cl.UpdateJob(s.ctx, api.JobUpdateRequest{Job: id, Set: set}); err != nil {
				code = updateJobError(s.env, err)
			}
		}
		return code
	case "nodename", "node":
		return s.updateNode(kvs)
	}
	return Errorf(s.env, "scontrol", "Invalid input: %s", args[0])
}

// updateNode runs scontrol update NodeName=... State=... Reason=...; it
// refuses a bad state, an unknown key or a missing reason itself and
// slurmctld's refusals as "slurm_update error: MSG", as Slurm 24.11's
// scontrol does.
func (s *scontrolRun) updateNode(kvs [][2]string) int {
	req := api.NodeUpdateRequest{Nodes: kvs[0][1]}
	for _, kv := range kvs[1:] {
		switch strings.ToLower(kv[0]) {
		case "state":
			state, ok := nodeUpdateState(kv[1])
			if !ok {
				fmt.Fprintf(s.env.Stderr, "Invalid input: %s=%s\nRequest aborted\n"+
					"Valid states are: NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN\n"+
					"Not all states are valid given a node's prior state\n", kv[0], kv[1])
				return 1
			}
			req.State = state
		case "reason":
			req.Reason = kv[1]
		default:
			fmt.Fprintf(s.env.Stderr, "Update of this parameter is not supported: %s=%s\nRequest aborted\n", kv[0], kv[1])
			return 1
		}
	}
	if (req.State == "DRAIN" || req.State == "DOWN" || req.State == "FAIL") && req.Reason == "" {
		fmt.Fprintln(s.env.Stderr, "You must specify a reason when DOWNING or DRAINING a node. Request denied")
		return 1
	}
	if err := s.cl.UpdateNode(s.ctx, req); err != nil {
		var ae *api.Error
		if !errors.As(err, &ae) {
			return clientError(s.env, "scontrol", err)
		}
		fmt.Fprintf(s.env.Stderr, "slurm_update error: %s\n", ae.Message)
		return 1
	}
	return 0
}

// nodeUpdateStates are the State= values scontrol update node takes: the
// node states and the update-only ones (scontrol(1)).
var nodeUpdateStates = []string{"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE", "NORESP", "DRAIN",
	"FAIL", "RESUME", "POWER_DOWN", "POWER_UP", "UNDRAIN", "CANCEL_REBOOT", "POWER_DOWN_ASAP", "POWER_DOWN_FORCE"}

// nodeUpdateState resolves a State= value: Slurm's scontrol takes any
// case-insensitive abbreviation of at least 3 characters ("dow", "mix").
func nodeUpdateState(v string) (string, bool) {
	u := strings.ToUpper(v)
	if len(u) < 3 {
		return "", false
	}
	for _, st := range nodeUpdateStates {
		if strings.HasPrefix(st, u) {
			return st, true
		}
	}
	return "", false
}

// partitionWords recognises a partition command's words after the verb:
// "partition PartitionName=P ..." or "PartitionName=P ..." (as Slurm's
// scontrol, which tells the entity by its first key).
func partitionWords(args []string) ([]string, bool) {
	if len(args) == 0 {
		return nil, false
	}
	if strings.EqualFold(args[0], "partition") || strings.EqualFold(args[0], "partitionname") {
		rest := args[1:]
		if len(rest) > 0 && !strings.Contains(rest[0], "=") {
			rest = append([]string{"PartitionName=" + rest[0]}, rest[1:]...) // delete partition NAME
		}
		return rest, true
	}
	k, _, _ := strings.Cut(args[0], "=")
	return args, strings.EqualFold(k, "PartitionName")
}

// partition runs scontrol create|update|delete partition. The controller
// checks the words, the caller's privileges and applies the change; a
// refusal prints Slurm's line ("Error creating the partition: ...",
// "slurm_update error: ...", "delete_partition PartitionName=P: ...") and
// a malformed command scontrol's "scontrol: error: ..." lines; both exit 1.
func (s *scontrolRun) partition(verb string, words []string) int {
	if _, err := s.cl.PartitionCommand(s.ctx, api.PartitionCommandRequest{Verb: verb, Words: words}); err != nil {
		var ae *api.Error
		if !errors.As(err, &ae) {
			return clientError(s.env, "scontrol", err)
		}
		if ae.Reason == api.PartitionUsageReason {
			for _, line := range strings.Split(ae.Message, "\n") {
				Errorf(s.env, "scontrol", "%s", line)
			}
			return 1
		}
		switch verb {
		case api.PartitionCreate:
			fmt.Fprintf(s.env.Stderr, "Error creating the partition: %s\n", ae.Message)
		case api.PartitionUpdate:
			fmt.Fprintf(s.env.Stderr, "slurm_update error: %s\n", ae.Message)
		default:
			fmt.Fprintf(s.env.Stderr, "delete_partition %s: %s\n", strings.Join(words, " "), ae.Message)
		}
		return 1
	}
	return 0
}

func (s *scontrolRun) control(op string, args []string) int {
	var jobs []string
	for _, a := range args {
		jobs = append(jobs, splitComma(a)...)
	}
	if len(jobs) == 0 {
		return Errorf(s.env, "scontrol", "%s: a job list is required", op)
	}
	res, err := s.cl.Control(s.ctx, api.JobControlRequest{Op: op, Jobs: jobs})
	if err != nil {
		return clientError(s.env, "scontrol", err)
	}
	// scontrol prints "ERROR for job N" without its name; a hold or
	// release (an update of the job in Slurm) adds "slurm_suspend error:".
	// (Checked on Slurm 24.11 for hold, uhold, release, requeue and
	// requeuehold; suspend and resume keep the "scontrol: error:" form.)
	last := ""
	for _, r := range res.Results {
		if r.Error == "" {
			continue
		}
		last = r.Error
		if op == api.OpSuspend || op == api.OpResume {
			Errorf(s.env, "scontrol", "%s for job %s", r.Error, r.Job)
			continue
		}
		fmt.Fprintf(s.env.Stderr, "%s for job %s\n", r.Error, r.Job)
	}
	if last == "" {
		return 0
	}
	if op == api.OpHold || op == api.OpUHold || op == api.OpRelease {
		fmt.Fprintf(s.env.Stderr, "slurm_suspend error: %s\n", last)
	}
	return 1
}

func (s *scontrolRun) token(args []string) int {
	kvs, err := kvArgs(args)
	if err != nil {
		return Errorf(s.env, "scontrol", "%v", err)
	}
	var req api.TokenRequest
	for _, kv := range kvs {
		switch strings.ToLower(kv[0]) {
		case "lifespan":
			n, err := strconv.ParseInt(kv[1], 10, 64)
			if err != nil || n <= 0 {
				return Errorf(s.env, "scontrol", "Invalid lifespan: %s", kv[1])
			}
			req.LifespanSec = n
		case "username":
			req.Username = kv[1]
		default:
			return Errorf(s.env, "scontrol", "Invalid input: %s=%s", kv[0], kv[1])
		}
	}
	res, err := s.cl.Token(s.ctx, req)
	var ae *api.Error
	if errors.As(err, &ae) { // scontrol 24.11's words for a refused token (oracle)
		return Errorf(s.env, "scontrol", "slurm_fetch_token: error with request: %s", ae.Message)
	}
	if err != nil {
		return clientError(s.env, "scontrol", err)
	}
	fmt.Fprintf(s.env.Stdout, "SLURM_JWT=%s\n", res.Token)
	return 0
}

// ---- record renderers (scontrol show ...) ----

func idName(name string, id uint32) string { return fmt.Sprintf("%s(%d)", name, id) }

func timeOrNone(t time.Time, none string) string {
	if t.IsZero() {
		return none
	}
	return slurmTime(t)
}

func limitOrUnlimited(sec int64) string {
	if sec == api.TimeInfinite || sec <= 0 {
		return "UNLIMITED"
	}
	return duration.Format(time.Duration(sec) * time.Second)
}

// narrowToTask shows a pending array record asked for by one of its
// tasks (scontrol show job 1_5) as that task: Slurm prints
// ArrayTaskId=5, not the record's 3,5%3 (oracle, array-throttle).
func narrowToTask(j *api.JobInfo, name string) {
	_, task, ok := strings.Cut(name, "_")
	if !ok || j.ArrayJobID == 0 || j.ArrayTaskID >= 0 {
		return
	}
	if t, err := strconv.Atoi(task); err == nil && t >= 0 {
		j.ArrayTaskID = int32(t)
	}
}

// JobRecordLines renders scontrol show job's attribute lines in Slurm
// 24.11's order, plus, when the job carries them (scontrol -d), Sluice's
// priority breakdown and why-pending sentence.
func JobRecordLines(j *api.JobInfo, now time.Time) []string {
	lines := []string{jobIDLine(j)}
	requeue := 0
	if j.Requeue {
		requeue = 1
	}
	lines = append(lines,
		fmt.Sprintf("UserId=%s GroupId=%s MCS_label=N/A", idName(j.User, j.UID), idName(j.Group, j.GID)),
		fmt.Sprintf("Priority=%d Nice=%d Account=%s QOS=%s", j.Priority, j.Nice, orNull(j.Account), j.QOS),
		fmt.Sprintf("JobState=%s Reason=%s Dependency=%s", j.State, jobReason(j), orNull(j.Dependency)),
		fmt.Sprintf("Requeue=%d Restarts=%d BatchFlag=1 Reboot=0 ExitCode=%s", requeue, j.RestartCount, j.ExitCode),
		fmt.Sprintf("RunTime=%s TimeLimit=%s TimeMin=N/A", duration.Format(timeUsed(j, now)), limitOrUnlimited(j.TimeLimitSec)),
		fmt.Sprintf("SubmitTime=%s EligibleTime=%s", slurmTime(j.SubmitTime), timeOrNone(j.EligibleTime, "Unknown")),
		fmt.Sprintf("AccrueTime=%s", timeOrNone(j.AccrueTime, "Unknown")),
		fmt.Sprintf("StartTime=%s EndTime=%s Deadline=N/A", timeOrNone(startOf(j), "Unknown"), jobEnd(j)))
	if !j.PreemptEligibleTime.IsZero() {
		// Slurm's line for a job started in a cluster with preemption.
		lines = append(lines, fmt.Sprintf("PreemptEligibleTime=%s PreemptTime=%s", slurmTime(j.PreemptEligibleTime),
			timeOrNone(j.PreemptTime, "None")))
	}
	lines = append(lines,
		fmt.Sprintf("SuspendTime=%s SecsPreSuspend=%d LastSchedEval=%s Scheduler=Main", timeOrNone(j.SuspendTime, "None"),
			secsPreSuspend(j), timeOrNone(j.LastSchedEval, "Unknown")),
		fmt.Sprintf("Partition=%s AllocNode:Sid=%s:%d", j.Partition, orNull(j.AllocNode), j.AllocSID),
	)
	if j.Reservation != "" {
		lines = append(lines, "Reservation="+j.Reservation)
	}
	lines = append(lines,
		fmt.Sprintf("ReqNodeList=%s ExcNodeList=%s", orNull(j.ReqNodes), orNull(j.ExcNodes)),
		nodeListLine(j),
	)
	if j.BatchHost != "" {
		lines = append(lines, "BatchHost="+j.BatchHost)
	}
	lines = append(lines, jobResourceLines(j)...)
	lines = append(lines,
		fmt.Sprintf("OverSubscribe=%s Contiguous=0 Licenses=%s Network=(null)", squeueField(j, 'h', now), orNull(j.Licenses)),
		"Command="+orNull(j.Command),
		"WorkDir="+j.WorkDir,
	)
	if j.Comment != "" {
		lines = append(lines, "Comment="+printable(j.Comment)+" ") // Slurm ends this line with a blank
	}
	if j.Extra != nil {
		// --extra, even empty, after Comment= and with its trailing blank (oracle).
		lines = append(lines, "Extra="+printable(*j.Extra)+" ")
	}
	lines = append(lines, "StdErr="+j.StdErr, "StdIn="+j.StdIn, "StdOut="+j.StdOut)
	lines = append(lines, jobTresPerLines(j)...)
	if j.KillOnInvalidDep != "" {
		// Slurm 24.11's own spelling of the key.
		lines = append(lines, "KillOInInvalidDependent="+j.KillOnInvalidDep)
	}
	return append(lines, jobDetailLines(j)...)
}

// jobIDLine is the record's first line: JobId=, the array ids, JobName=.
func jobIDLine(j *api.JobInfo) string {
	line := fmt.Sprintf("JobId=%d", j.JobID)
	if j.ArrayJobID != 0 {
		task := j.ArrayTasks
		if j.ArrayTaskID >= 0 {
			task = strconv.Itoa(int(j.ArrayTaskID))
		}
		line += fmt.Sprintf(" ArrayJobId=%d ArrayTaskId=%s", j.ArrayJobID, task)
		if j.ArrayThrottle > 0 {
			line += fmt.Sprintf(" ArrayTaskThrottle=%d", j.ArrayThrottle) // on every task, as Slurm
		}
	}
	return line + " JobName=" + printable(j.Name)
}

func jobReason(j *api.JobInfo) string {
	if j.StateDesc != "" {
		// scontrol prints the description as one word:
		// Reason=job_requeued_in_held_state.
		return strings.ReplaceAll(j.StateDesc, " ", "_")
	}
	return noneIfEmpty(j.Reason)
}

// jobResourceLines are NumNodes= to DelayBoot=: a pending job shows its
// node range (NumNodes=2-2) and AllocTRES=(null), as Slurm 24.11.
func jobResourceLines(j *api.JobInfo) []string {
	nodes := strconv.Itoa(j.NumNodes)
	if j.State == "PENDING" && j.MaxNodes > 0 {
		nodes += "-" + strconv.Itoa(max(j.MaxNodes, j.NumNodes))
	}
	mem := "0"
	if j.MinMemoryMB > 0 {
		mem = strconv.FormatInt(j.MinMemoryMB, 10) + "M"
	}
	memKey := "MinMemoryNode"
	if j.MemPerCPU {
		memKey = "MinMemoryCPU"
	}
	return []string{
		fmt.Sprintf("NumNodes=%s NumCPUs=%d NumTasks=%s CPUs/Task=%d ReqB:S:C:T=0:0:*:*", nodes, j.NumCPUs, numTasks(j), j.CPUsPerTask),
		"ReqTRES=" + orNull(j.ReqTRES),
		"AllocTRES=" + orNull(j.AllocTRES),
		fmt.Sprintf("Socks/Node=* NtasksPerN:B:S:C=%d:0:*:* CoreSpec=*", j.NTasksPerNode),
		fmt.Sprintf("MinCPUsNode=%d %s=%s MinTmpDiskNode=0", max(j.MinCPUsNode, 1), memKey, mem),
		fmt.Sprintf("Features=%s DelayBoot=00:00:00", orNull(j.Features)),
	}
}

// numTasks is NumTasks=: N/A for a job that ended pending without -n
// (the controller sends 0).
func numTasks(j *api.JobInfo) string {
	if j.NumTasks <= 0 {
		return "N/A"
	}
	return strconv.Itoa(j.NumTasks)
}

// jobTresPerLines are TresPerJob=, TresPerNode=, TresPerTask= (Slurm's order).
func jobTresPerLines(j *api.JobInfo) []string {
	var lines []string
	for _, kv := range [][2]string{{"TresPerJob", j.TresPerJob}, {"TresPerNode", j.TresPerNode}, {"TresPerTask", j.TresPerTask}} {
		if kv[1] != "" {
			lines = append(lines, kv[0]+"="+kv[1])
		}
	}
	return lines
}

// jobDetailLines are Sluice's additions, sent only for scontrol -d.
func jobDetailLines(j *api.JobInfo) []string {
	var lines, terms []string
	for _, t := range j.PriorityTerms {
		terms = append(terms, fmt.Sprintf("%s=%.0f(%.4f*%.0f)", t.Name, t.Contribution, t.Factor, t.Weight))
	}
	if len(terms) > 0 {
		lines = append(lines, "PriorityFactors="+strings.Join(terms, " "))
	}
	if j.PrioritySummary != "" {
		lines = append(lines, "PriorityExplain="+j.PrioritySummary)
	}
	if j.WhyPending != "" {
		lines = append(lines, "WhyPending="+j.WhyPending)
	}
	return lines
}

// nodeListLine is NodeList=: empty for a job without nodes (pending, or
// ended pending) in Slurm 24.11, a pending one's followed by
// SchedNodeList= once backfill has planned it (oracle).
func nodeListLine(j *api.JobInfo) string {
	if j.State != "PENDING" {
		return "NodeList=" + j.NodeList
	}
	if j.SchedNodes != "" {
		return "NodeList= SchedNodeList=" + j.SchedNodes
	}
	return "NodeList="
}

// jobEnd is EndTime=: for a pending job the end of its expected start's
// run (backfill's plan), Unknown before backfill has planned it (oracle).
func jobEnd(j *api.JobInfo) string {
	e := endString(j)
	if e == "N/A" {
		return "Unknown"
	}
	return e
}

// NodeRecordLines renders scontrol show node in Slurm 24.11's layout
// (oracle): the blanks ending the first, OS= and Partitions= lines,
// ResumeAfterTime=, the power line, then a line of three blanks and the
// reason ("AveWatts=0\n   \n   Reason=baddisk [root@...]\n\n"); Arch=
// and OS= as the node's agent reports them.
func NodeRecordLines(n *api.NodeRecord) []string {
	parts := append([]string(nil), n.Partitions...)
	sort.Strings(parts)
	first := "NodeName=" + n.Name
	if n.Arch != "" {
		first += " Arch=" + n.Arch
	}
	lines := []string{
		fmt.Sprintf("%s CoresPerSocket=%d ", first, n.Cores),
		fmt.Sprintf("CPUAlloc=%d CPUEfctv=%d CPUTot=%d CPULoad=%s", n.AllocCPUs, n.CPUs, n.CPUs, nodeLoad(n)),
		"AvailableFeatures=" + orNull(n.Features),
		"ActiveFeatures=" + orNull(n.Features),
		"Gres=" + orNull(n.Gres),
		fmt.Sprintf("NodeAddr=%s NodeHostName=%s Version=%s", orNA(n.Addr), orNA(n.Hostname), orNA(n.Version)),
	}
	if n.OS != "" {
		lines = append(lines, "OS="+n.OS+" ")
	}
	lines = append(lines,
		fmt.Sprintf("RealMemory=%d AllocMem=%d FreeMem=%s Sockets=%d Boards=1", n.RealMemory, n.AllocMem, nodeFreeMem(n), n.Sockets),
		fmt.Sprintf("State=%s ThreadsPerCore=%d TmpDisk=0 Weight=%d Owner=N/A MCS_label=N/A", n.State, n.Threads, n.Weight),
		"Partitions="+strings.Join(parts, ",")+" ",
		fmt.Sprintf("BootTime=%s SlurmdStartTime=%s", timeOrNone(n.BootTime, "None"), timeOrNone(n.BootTime, "None")),
		fmt.Sprintf("LastBusyTime=%s ResumeAfterTime=None", timeOrNone(n.LastHeard, "Unknown")),
		"CfgTRES="+n.CfgTRES,
		"AllocTRES="+n.AllocTRES,
		"CurrentWatts=0 AveWatts=0",
		"", // Slurm's line of three blanks, before the reason
	)
	if n.Reason != "" {
		lines = append(lines, fmt.Sprintf("Reason=%s [%s@%s]", n.Reason, orUnknown(n.ReasonUser), timeOrNone(n.ReasonTime, "Unknown")))
	}
	return lines
}

func upperYesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

func countOrUnlimited(n int32) string {
	if n < 0 {
		return "UNLIMITED"
	}
	return strconv.Itoa(int(n))
}

func memOrUnlimited(n int64) string {
	if n <= 0 {
		return "UNLIMITED"
	}
	return strconv.FormatInt(n, 10)
}

// nodeLoad and nodeFreeMem are the host's figures its agent reported
// (CPULoad=5.20, FreeMem=10657), N/A before it did.
func nodeLoad(n *api.NodeRecord) string {
	if !n.LoadKnown {
		return "N/A"
	}
	return strconv.FormatFloat(n.CPULoad, 'f', 2, 64)
}

func nodeFreeMem(n *api.NodeRecord) string {
	if !n.LoadKnown {
		return "N/A"
	}
	return strconv.FormatInt(n.FreeMem, 10)
}

// PartitionRecordLines renders scontrol show partition.
func PartitionRecordLines(p *api.PartitionRecord) []string {
	def := "NONE"
	if p.DefaultTimeSec > 0 {
		def = limitOrUnlimited(p.DefaultTimeSec)
	}
	qos := p.QOS
	if qos == "" {
		qos = "N/A"
	}
	memLine := "DefMemPerNode=UNLIMITED MaxMemPerNode=" + memOrUnlimited(p.MaxMemPerNode)
	if p.DefMemPerCPU > 0 {
		memLine = fmt.Sprintf("DefMemPerCPU=%d MaxMemPerNode=%s", p.DefMemPerCPU, memOrUnlimited(p.MaxMemPerNode))
	}
	lines := []string{
		"PartitionName=" + p.Name,
		fmt.Sprintf("AllowGroups=%s AllowAccounts=%s AllowQos=%s", p.AllowGroups, p.AllowAccounts, p.AllowQOS),
		fmt.Sprintf("AllocNodes=ALL Default=%s QoS=%s", upperYesNo(p.Default), qos),
		fmt.Sprintf("DefaultTime=%s DisableRootJobs=NO ExclusiveUser=%s ExclusiveTopo=NO GraceTime=%d Hidden=%s", def,
			upperYesNo(p.ExclusiveUser), p.GraceTimeSec, upperYesNo(p.Hidden)),
		fmt.Sprintf("MaxNodes=%s MaxTime=%s MinNodes=%d LLN=NO MaxCPUsPerNode=%s MaxCPUsPerSocket=UNLIMITED",
			countOrUnlimited(p.MaxNodes), limitOrUnlimited(p.MaxTimeSec), p.MinNodes, countOrUnlimited(p.MaxCPUsPerNode)),
		"Nodes=" + p.Nodes,
		fmt.Sprintf("PriorityJobFactor=%d PriorityTier=%d RootOnly=%s ReqResv=NO OverSubscribe=%s",
			p.PriorityJobFactor, p.PriorityTier, upperYesNo(p.RootOnly), p.OverSubscribe),
		"OverTimeLimit=NONE PreemptMode=" + p.PreemptMode,
		fmt.Sprintf("State=%s TotalCPUs=%d TotalNodes=%d SelectTypeParameters=NONE", p.State, p.TotalCPUs, p.TotalNodes),
		"JobDefaults=(null)",
		memLine,
		"TRES=" + p.TRES,
	}
	if p.NodeSets != "" {
		// Slurm 24.11 shows the node sets of Nodes= (ALL included)
		// before the node list.
		lines = slices.Insert(lines, 5, "NodeSets="+p.NodeSets)
	}
	return lines
}

// secsPreSuspend is SecsPreSuspend: the seconds the job had run when it
// was last suspended (Slurm keeps it after the resume: a job run 5 s,
// suspended 60 s and resumed shows SuspendTime=<resume> SecsPreSuspend=5).
// SuspendTime is the last suspend or resume, SuspendedSec the time spent
// suspended before it. slurmctld counts whole seconds of time_t, so a job
// started at :00.9 and suspended at :03.1 ran 3 s, not 2.
func secsPreSuspend(j *api.JobInfo) int64 {
	if j.SuspendTime.IsZero() || j.StartTime.IsZero() {
		return 0
	}
	return max(j.SuspendTime.Unix()-j.StartTime.Unix()-j.SuspendedSec, 0)
}

// updateJobError prints a refusal of scontrol update job as Slurm 24.11's
// scontrol does: "MSG for job 12" (after "scontrol: error: DETAIL" when
// slurmctld sent one), "12_0-9: MSG (DETAIL)" for an array; a bad
// KEY=VALUE as "scontrol: error: MSG".
func updateJobError(env *Env, err error) int {
	var ae *api.Error
	if errors.As(err, &ae) && strings.HasPrefix(ae.Message, "Update of this parameter is not supported") {
		fmt.Fprintln(env.Stderr, ae.Message) // and "Request aborted"
		return 1
	}
	if !errors.As(err, &ae) || ae.Job == "" {
		return clientError(env, "scontrol", err)
	}
	if strings.Contains(ae.Job, "_") {
		msg := ae.Message
		if ae.Detail != "" {
			msg += " (" + ae.Detail + ")"
		}
		fmt.Fprintf(env.Stderr, "%s: %s\n", ae.Job, msg)
		return 1
	}
	if ae.Detail != "" {
		Errorf(env, "scontrol", "%s", ae.Detail)
	}
	fmt.Fprintf(env.Stderr, "%s for job %s\n", ae.Message, ae.Job)
	return 1
}
