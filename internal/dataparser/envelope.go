package dataparser

import (
	"fmt"
	"io"
	"strings"
)

// Version is the data_parser Sluice writes: the newest Slurm 24.11 serves.
const Version = "v0.0.42"

// Meta is what the envelope says about the reply: who asked, with which
// command, and which cluster and Slurm release answered.
type Meta struct {
	// Command is meta.command. Slurm 24.11's clients record the command's
	// words after the options except the last one ("scontrol show job 12"
	// gives ["show", "job"], "scontrol show job" ["show"]); squeue, sinfo,
	// sacct, sdiag and sshare record their own name.
	Command []string
	// User and Group are the invoking user's names.
	User, Group string
	// Cluster is ClusterName; Release is the Slurm release Sluice speaks
	// ("24.11.5").
	Cluster, Release string
	// AccountingStorage is AccountingStorageType ("accounting_storage/slurmdbd").
	AccountingStorage string
	// PluginType, PluginName and Source are slurmrestd's: the openapi
	// plugin that answered ("openapi/slurmctld") and the client's
	// address; the commands leave them empty, as Slurm's do.
	PluginType, PluginName, Source string
	// DataParser is the data_parser version named in meta ("" for
	// Version): slurmrestd names the version of the path asked.
	DataParser string
}

// Error is one member of the envelope's "errors" array: slurmrestd's
// description, Slurm's error number and its text, and where it arose.
type Error struct {
	Description string
	Number      int
	Error       string
	Source      string
}

// Warning is one member of the envelope's "warnings" array.
type Warning struct {
	Description, Source string
}

// Envelope appends meta, errors and warnings to a reply's data, in the
// order Slurm prints them.
func Envelope(data Obj, m Meta, warnings ...Warning) Obj {
	return EnvelopeErrors(data, m, nil, warnings)
}

// EnvelopeErrors is Envelope with errors (slurmrestd's failed requests).
func EnvelopeErrors(data Obj, m Meta, errs []Error, warnings []Warning) Obj {
	major, minor, micro := splitRelease(m.Release)
	cmd := Strings(m.Command...)
	parser := m.DataParser
	if parser == "" {
		parser = Version
	}
	meta := Obj{
		{"plugin", Obj{{"type", m.PluginType}, {"name", m.PluginName}, {"data_parser", "data_parser/" + parser}, {"accounting_storage", m.AccountingStorage}}},
		{"client", Obj{{"source", m.Source}, {"user", m.User}, {"group", m.Group}}},
		{"command", cmd},
		{"slurm", Obj{
			{"version", Obj{{"major", major}, {"micro", micro}, {"minor", minor}}},
			{"release", m.Release},
			{"cluster", m.Cluster},
		}},
	}
	warn := []any{}
	for _, w := range warnings {
		warn = append(warn, Obj{{"description", w.Description}, {"source", w.Source}})
	}
	errList := []any{}
	for _, e := range errs {
		errList = append(errList, Obj{{"description", e.Description}, {"error_number", e.Number}, {"error", e.Error}, {"source", e.Source}})
	}
	if len(data) == 0 {
		// slurmrestd's reply without data (a call that failed before
		// dumping any, or an update that answers none) puts errors and
		// warnings first (oracle: job/submit of a bad partition,
		// reservation/NAME of an unknown one, node/NAME updates,
		// reconfigure).
		return Obj{{"errors", errList}, {"warnings", warn}, {"meta", meta}}
	}
	out := append(Obj{}, data...)
	return append(out, Field{"meta", meta}, Field{"errors", errList}, Field{"warnings", warn})
}

func splitRelease(r string) (major, minor, micro string) {
	p := strings.SplitN(r, ".", 3)
	for len(p) < 3 {
		p = append(p, "0")
	}
	return p[0], p[1], p[2]
}

// Format is an output a command was asked for with --json or --yaml.
type Format struct {
	// Mime is "application/json" or "application/x-yaml" (what Slurm's
	// error messages call them).
	Mime string
	// Spec is the option's argument ("" for a bare --json).
	Spec string
}

// JSONFormat and YAMLFormat are the two outputs.
const (
	MimeJSON = "application/json"
	MimeYAML = "application/x-yaml"
)

// Encode writes v in the format.
func (f Format) Encode(v any) []byte {
	if f.Mime == MimeYAML {
		return YAML(v)
	}
	return JSON(v)
}

// Select checks the option's argument the way Slurm's clients load the
// data_parser plugin: "" or "v0.0.42" (with or without "data_parser/",
// and with "+flag" suffixes) selects this parser; "list" prints the parsers
// there are (done = true, exit 0); anything else is an unknown plugin
// (err != nil: the caller prints it and exits with its command's status).
func (f Format) Select(cmd string, stdout, stderr io.Writer) (done bool, err error) {
	spec, _, _ := strings.Cut(f.Spec, "+")
	spec = strings.TrimPrefix(spec, "data_parser/")
	switch spec {
	case "", Version:
		return false, nil
	case "list":
		fmt.Fprintln(stderr, "Possible data_parser plugins:")
		fmt.Fprintln(stdout, "data_parser/"+Version)
		return true, nil
	}
	fmt.Fprintf(stderr, "%s: error: load_plugins: unable to find plugin: data_parser/%s\n", cmd, spec)
	fmt.Fprintf(stderr, "%s: error: data_parser_g_new: failure loading plugins: Plugin has invalid format or unable to be loaded\n", cmd)
	fmt.Fprintf(stderr, "%s: error: %s output not supported by data_parser/%s\n", cmd, f.Mime, Version)
	return false, fmt.Errorf("data_parser/%s not found", spec)
}
