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
	sortJobs(jobs, "i", res.Now)
	m := dpMeta(ctx, env, cl, "squeue")
	dpWrite(env, f, dataparser.Jobs(jobs, res.Now, time.Time{}, dataparser.Cluster{Name: m.Cluster}), m)
	return 0
}
