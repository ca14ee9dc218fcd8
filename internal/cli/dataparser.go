package cli

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/dataparser"
)

// dpFlags holds --json[=PARSER] and --yaml[=PARSER], the data_parser
// outputs of squeue, sinfo, sacct, sdiag, sshare and scontrol show.
type dpFlags struct {
	json, yaml string
	fs         *pflag.FlagSet
}

// dpBare stands for a bare --json (pflag needs a non-empty default for an
// option whose argument is optional, as Slurm's getopt optional_argument).
const dpBare = "\x00"

// addDataParserFlags registers --json and --yaml on fs.
func addDataParserFlags(fs *pflag.FlagSet) *dpFlags {
	d := &dpFlags{fs: fs}
	fs.StringVar(&d.json, "json", "", "")
	fs.StringVar(&d.yaml, "yaml", "", "")
	fs.Lookup("json").NoOptDefVal = dpBare
	fs.Lookup("yaml").NoOptDefVal = dpBare
	return d
}

// format returns the output asked for; ok is false without --json/--yaml.
func (d *dpFlags) format() (f dataparser.Format, ok bool) {
	if d == nil {
		return f, false
	}
	switch {
	case d.yaml != "":
		return dataparser.Format{Mime: dataparser.MimeYAML, Spec: strings.TrimPrefix(d.yaml, dpBare)}, true
	case d.json != "":
		return dataparser.Format{Mime: dataparser.MimeJSON, Spec: strings.TrimPrefix(d.json, dpBare)}, true
	}
	return f, false
}

// dpStart checks the parser asked for. It returns (f, true, -1) when the
// command is to print its data_parser reply, (_, true, rc) when it is done
// (--json=list, or an unknown parser: Slurm's messages, and the exit
// status that command gives, failRC), and ok = false without --json/--yaml.
func dpStart(env *Env, cmd string, d *dpFlags, failRC int) (f dataparser.Format, ok bool, rc int) {
	f, ok = d.format()
	if !ok {
		return f, false, -1
	}
	done, err := f.Select(cmd, env.Stdout, env.Stderr)
	switch {
	case err != nil:
		return f, true, failRC
	case done:
		return f, true, 0
	}
	return f, true, -1
}

// dpMeta gathers the envelope's meta: the invoking user, and the cluster's
// name and accounting storage from the controller's configuration.
func dpMeta(ctx context.Context, env *Env, cl *api.Client, command ...string) dataparser.Meta {
	m := dataparser.Meta{
		Command: command,
		User:    userName(env.UID),
		Group:   groupName(uint32(env.GID)),
		Release: SlurmVersion,
	}
	if cl == nil {
		return m
	}
	if cfg, err := cl.Config(ctx); err == nil {
		for _, e := range cfg.Entries {
			switch e.Key {
			case "ClusterName":
				m.Cluster = e.Value
			case "AccountingStorageType":
				m.AccountingStorage = e.Value
			}
		}
	}
	return m
}

// dpWrite prints a reply: data with its envelope, in format f.
func dpWrite(env *Env, f dataparser.Format, data dataparser.Obj, m dataparser.Meta, w ...dataparser.Warning) {
	env.Stdout.Write(f.Encode(dataparser.Envelope(data, m, w...)))
}

// extractDataParserArgs takes --json[=X] and --yaml[=X] out of a command
// line wherever they are (scontrol accepts them after its command, as
// getopt permutes Slurm's arguments).
func extractDataParserArgs(args []string) ([]string, *dpFlags) {
	var d *dpFlags
	rest := args[:0:0]
	for _, a := range args {
		name, val, _ := strings.Cut(a, "=")
		if name != "--json" && name != "--yaml" {
			rest = append(rest, a)
			continue
		}
		if d == nil {
			d = &dpFlags{}
		}
		if val == "" {
			val = dpBare
		}
		d.json, d.yaml = "", ""
		if name == "--json" {
			d.json = val
		} else {
			d.yaml = val
		}
	}
	return rest, d
}

// squeueDataParser prints squeue --json/--yaml: the jobs squeue's filters
// select (without -t, the active ones), one record per job or array
// task, in job id order.
func squeueDataParser(ctx context.Context, env *Env, cl *api.Client, o *squeueOpts, f dataparser.Format, res api.JobsResponse) int {
	jobs, err := filterJobs(res.Jobs, o)
	if err != nil {
		return Errorf(env, "squeue", "%v", err)
	}
	sortJobs(jobs, "i", res.Now, false)
	m := dpMeta(ctx, env, cl, clientCommand("squeue", o.args)...)
	dpWrite(env, f, dataparser.Jobs(jobs, res.Now, lastBackfill(ctx, cl), dataparser.Cluster{Name: m.Cluster}), m)
	return 0
}

// lastBackfill is when the backfill scheduler last ran (last_backfill),
// zero before its first cycle or when the statistics cannot be read.
func lastBackfill(ctx context.Context, cl *api.Client) time.Time {
	st, err := cl.Sdiag(ctx)
	if err != nil {
		return time.Time{}
	}
	return st.BfLastCycleWhen
}

// sinfoDataParser prints sinfo --json/--yaml for the partitions sinfo
// would show (-p, and Hidden ones only to root or with -a).
func sinfoDataParser(ctx context.Context, env *Env, cl *api.Client, f dataparser.Format, nodes api.NodesResponse, parts api.PartitionsResponse, o *sinfoOpts) int {
	var shown []api.PartitionRecord
	for _, p := range parts.Partitions {
		if o.parts != "" && !inList(o.parts, p.Name) || o.parts == "" && o.hideHidden && p.Hidden {
			continue
		}
		shown = append(shown, p)
	}
	dpWrite(env, f, dataparser.Sinfo(sinfoStateNodes(nodes.Nodes, o.states), shown, nodeStateValue), dpMeta(ctx, env, cl, clientCommand("sinfo", o.args)...))
	return 0
}

// sinfoStateNodes keeps the nodes -t asks for: Slurm 24.11's sinfo --json
// -t drain lists only the drained and draining nodes' groups (oracle,
// json-nodes).
func sinfoStateNodes(nodes []api.NodeRecord, states string) []api.NodeRecord {
	out := nodes[:0:0]
	for i := range nodes {
		if stateWanted(&nodes[i], states) {
			out = append(out, nodes[i])
		}
	}
	return out
}

// scontrolShowDataParser prints scontrol show job|node|partition|
// reservation|license --json/--yaml. ok is false for the entities whose
// data_parser output Slurm 24.11 has not (config prints as text).
func (s *scontrolRun) showDataParser(f dataparser.Format, what, name string, words []string) (rc int, ok bool) {
	m := dpMeta(s.ctx, s.env, s.cl, words[:len(words)-1]...)
	c := dataparser.Cluster{Name: m.Cluster}
	var data dataparser.Obj
	var warn []dataparser.Warning
	switch {
	case strings.HasPrefix(what, "job"):
		q := api.JobQuery{}
		if name != "" {
			q.IDs = []string{name}
		}
		res, err := s.cl.Jobs(s.ctx, q)
		if err != nil {
			return clientError(s.env, "scontrol", err), true
		}
		sortJobs(res.Jobs, "i", res.Now, false)
		data = dataparser.Jobs(res.Jobs, res.Now, lastBackfill(s.ctx, s.cl), c)
	case strings.HasPrefix(what, "node"):
		res, err := s.cl.Nodes(s.ctx)
		if err != nil {
			return clientError(s.env, "scontrol", err), true
		}
		nodes := res.Nodes[:0:0]
		for _, n := range res.Nodes {
			if name == "" || n.Name == name {
				nodes = append(nodes, n)
			}
		}
		data = dataparser.Nodes(nodes, res.Now)
	case strings.HasPrefix(what, "partition"):
		res, err := s.cl.Partitions(s.ctx)
		if err != nil {
			return clientError(s.env, "scontrol", err), true
		}
		parts := res.Partitions[:0:0]
		for _, p := range res.Partitions {
			if name == "" || p.Name == name {
				parts = append(parts, p)
			}
		}
		data = dataparser.Partitions(parts, res.Now)
	default:
		return s.showDataParserMore(f, what, name, m)
	}
	dpWrite(s.env, f, data, m, warn...)
	return 0, true
}

// showDataParserMore is scontrol show reservation|license --json/--yaml,
// read back from the controller's one-line text. Zero licenses is a
// warning, as Slurm's "Zero licenses to dump".
func (s *scontrolRun) showDataParserMore(f dataparser.Format, what, name string, m dataparser.Meta) (int, bool) {
	var data dataparser.Obj
	var warn []dataparser.Warning
	now := time.Now()
	switch {
	case len(what) >= 3 && strings.HasPrefix("reservations", what), what == "resv":
		words := []string{"show", "reservation"}
		if name != "" {
			words = append(words, name)
		}
		res, err := s.cl.ReservationCommand(s.ctx, api.ResvCommandRequest{Words: words, OneLiner: true})
		if err != nil {
			return clientError(s.env, "scontrol", err), true
		}
		recs := dataparser.Records(res.Text)
		if strings.HasPrefix(res.Text, "No reservations") {
			recs = nil
		}
		data = dataparser.Reservations(recs, now)
	case strings.HasPrefix(what, "lic"):
		// Slurm 24.11 dumps every license whatever name is given (oracle).
		res, err := s.cl.Licenses(s.ctx, "", true)
		if err != nil {
			return clientError(s.env, "scontrol", err), true
		}
		recs := dataparser.Records(res.Text)
		if len(recs) == 0 || recs[0]["LicenseName"] == "" {
			recs = nil
			warn = append(warn, dataparser.Warning{Description: "Zero licenses to dump"})
		}
		data = dataparser.Licenses(recs, now)
	default:
		return 0, false
	}
	dpWrite(s.env, f, data, m, warn...)
	return 0, true
}

// sacctDataParser prints sacct --json/--yaml: the runs sacct's options
// select, each with its steps (none with -X), in sacct's order.
func sacctDataParser(ctx context.Context, env *Env, cl *api.Client, f dataparser.Format, res api.AcctResponse, o *sacctOpts, args []string) int {
	rows, err := sacctSelect(res, o, env.UID, time.Local)
	if err != nil {
		return Errorf(env, "sacct", "%v", err)
	}
	sacctSortBySubmit(rows)
	var jobs []dataparser.AcctJob
	for _, r := range rows {
		if r.Step == "" {
			jobs = append(jobs, dataparser.AcctJob{Job: r.AcctRecord, Group: groupName(r.GID)})
			continue
		}
		if n := len(jobs); n > 0 && jobs[n-1].Job.JobID == r.JobID {
			jobs[n-1].Steps = append(jobs[n-1].Steps, r.AcctRecord)
		}
	}
	m := dpMeta(ctx, env, cl, clientCommand("sacct", args)...)
	dpWrite(env, f, dataparser.Accounting(jobs, res.Cluster, res.Now), m)
	return 0
}

// sshareDataParser prints sshare --json/--yaml: the rows sshare would
// show (-a, -A, -u), read from the controller's parsable sshare rows.
func sshareDataParser(ctx context.Context, env *Env, cl *api.Client, f dataparser.Format, req api.SshareRequest, args []string) int {
	req = api.SshareRequest{All: req.All, Parsable2: true, NoHeader: true, Format: dataparser.ShareFields,
		Accounts: req.Accounts, Users: req.Users}
	text, err := cl.Sshare(ctx, req)
	if err != nil {
		return clientError(env, "sshare", err)
	}
	tree := ""
	if len(req.Accounts) > 0 {
		// The accounts' parents may be outside the rows asked for.
		full := api.SshareRequest{All: true, Parsable2: true, NoHeader: true, Format: dataparser.ShareFields}
		if tree, err = cl.Sshare(ctx, full); err != nil {
			return clientError(env, "sshare", err)
		}
	}
	dpWrite(env, f, dataparser.SharesIn(text, tree), dpMeta(ctx, env, cl, clientCommand("sshare", args)...))
	return 0
}

// clientCommand is meta.command of squeue, sinfo, sacct, sdiag and
// sshare: Slurm 24.11 records the command line without its last word
// ("squeue --json" gives ["squeue"], "sacct --json -a" ["sacct", "--json"]).
func clientCommand(name string, args []string) []string {
	return append([]string{name}, args[:max(len(args)-1, 0)]...)
}
