package cli

import (
	"github.com/sluice-hpc/sluice/internal/restd"

	"bufio"
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-hpc/sluice/internal/acct"
)

// slurmOptionFiles are the options of Slurm 24.11's commands as their man
// pages list them (scripts/slurm-options.sh writes them). They tell a
// mistyped option from one Slurm has and Sluice does not implement, and
// docs/compatibility.md is generated from them and the parsers below
// (compat_test.go), so the table cannot drift from the code.
//
//go:embed slurmopts/*.txt
var slurmOptionFiles embed.FS

// SlurmOption is one option of a Slurm command: its names ("-A",
// "--account") and whether it takes a value ("=", optional "[=]", or "").
type SlurmOption struct {
	Names []string
	Arg   string
}

// Long is the option's long name ("--account"), else its short one.
func (o SlurmOption) Long() string {
	for _, n := range o.Names {
		if strings.HasPrefix(n, "--") {
			return n
		}
	}
	return o.Names[0]
}

// CompatCommands are the Slurm commands docs/compatibility.md covers, in
// its order.
var CompatCommands = []string{"sbatch", "srun", "salloc", "squeue", "sinfo", "scontrol", "scancel",
	"sacct", "sacctmgr", "sreport", "sprio", "sshare", "sdiag", "sstat", "sattach"}

// SlurmOptions returns command's options in its man page's order (nil for
// a command without a list).
func SlurmOptions(command string) []SlurmOption {
	data, err := slurmOptionFiles.ReadFile("slurmopts/" + command + ".txt")
	if err != nil {
		return nil
	}
	var out []SlurmOption
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		o := SlurmOption{}
		for _, suffix := range []string{"[=]", "="} {
			if strings.HasSuffix(line, suffix) {
				o.Arg, line = suffix, strings.TrimSuffix(line, suffix)
				break
			}
		}
		o.Names = strings.Fields(line)
		out = append(out, o)
	}
	return out
}

// slurmHasOption reports whether Slurm's command has the option opt
// ("--federation", "-F"), for the line that says Sluice lacks it.
func slurmHasOption(command, opt string) bool {
	for _, o := range SlurmOptions(command) {
		if slices.Contains(o.Names, opt) {
			return true
		}
	}
	return false
}

// notImplementedLine is the line Sluice adds under getopt's message when
// the option is one Slurm's command has.
func notImplementedLine(command, opt string) string {
	return fmt.Sprintf("%s: Sluice does not implement %s (see docs/compatibility.md)", command, opt)
}

// optionParsers parse a command's options without acting; the
// compatibility table asks them which of Slurm's options Sluice accepts,
// and whether it acts on them (noEffect: accepted so that scripts keep
// working, and recorded only).
var optionParsers = map[string]func(args []string) (noEffect bool, err error){
	"sbatch": parseSbatchNoEffect,
	"salloc": func(a []string) (bool, error) {
		req, _, err := parseSalloc(a)
		return err == nil && len(req.Ignored) > 0, err
	},
	"srun": func(a []string) (bool, error) {
		o, err := parseSrun(a)
		return err == nil && len(o.req.Ignored) > 0, err
	},
	"squeue": func(a []string) (bool, error) { _, err := parseSqueue(a); return false, err },
	"sinfo":  parseSinfoOptions,
	"scontrol": func(a []string) (bool, error) {
		a, _ = extractDataParserArgs(a) // --json, --yaml: cli/dataparser.go
		_, err := parseScontrolOptions(a)
		return false, err
	},
	"scancel":  func(a []string) (bool, error) { _, err := parseScancel(a); return false, err },
	"sacct":    func(a []string) (bool, error) { _, err := parseSacct(a); return false, err },
	"sacctmgr": func(a []string) (bool, error) { _, _, err := acct.ParseOptions(withoutHelp(a)); return false, err },
	"sreport":  func(a []string) (bool, error) { _, err := parseSreport(withoutHelp(a)); return false, err },
	"sprio":    func(a []string) (bool, error) { _, _, err := parseSprio(a); return false, err },
	"sshare":   func(a []string) (bool, error) { _, _, err := parseSshare(a); return false, err },
	"sdiag":    func(a []string) (bool, error) { _, err := parseSdiag(a); return false, err },
	"sstat":    func(a []string) (bool, error) { _, err := parseSstat(a); return false, err },
	"sattach": func(a []string) (bool, error) {
		_, err := parseSattach(append(slices.Clone(a), "1.0"))
		// stdin is not forwarded, and there is no debug output.
		ignored := len(a) > 0 && (strings.HasPrefix(a[0], "--input-filter") || a[0] == "-v" || a[0] == "--verbose")
		return ignored, err
	},
}

// withoutHelp drops -h/--help, which sacctmgr and sreport answer before
// parsing their other options.
func withoutHelp(args []string) []string {
	return slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "-h" || a == "--help" })
}

func parseSbatchNoEffect(a []string) (bool, error) {
	req, _, err := ParseSbatchOptions(a)
	return err == nil && len(req.Ignored) > 0, err
}

// parseSinfoOptions is parseSinfo with -T/--reservation, which sinfo
// answers before its other options (sinfoReservations).
func parseSinfoOptions(args []string) (bool, error) {
	if sinfoWantsReservations(args) {
		return false, nil
	}
	_, err := parseSinfo(args)
	return false, err
}

// Accepts reports whether Sluice's command takes option o under the name
// name: its parser does not call it unknown (a bad value still counts as
// accepted), and whether it has no effect there. -V/--version is
// answered before any parser (VersionRequested).
func Accepts(command string, o SlurmOption, name string) (accepted, noEffect bool) {
	parse := optionParsers[command]
	if parse == nil {
		return false, false
	}
	if name == "-V" || name == "--version" {
		return true, false
	}
	var args []string
	switch {
	case o.Arg == "=" && strings.HasPrefix(name, "--"):
		args = []string{name + "=1"}
	case o.Arg == "=":
		args = []string{name, "1"}
	default:
		args = []string{name}
	}
	noEffect, err := parse(args)
	return err == nil || !unknownOption(err), noEffect
}

// unknownOption reports whether err is a parser's "no such option".
func unknownOption(err error) bool {
	msg := err.Error()
	return unknownLong.MatchString(msg) || unknownShort.MatchString(msg) ||
		strings.Contains(msg, "unrecognized option") || strings.Contains(msg, "invalid option")
}

// compatNotes say how an option differs from Slurm's, or why it is not
// implemented, keyed "command --long-name".
var compatNotes = map[string]string{
	"srun --het-group": "Sluice has no heterogeneous jobs: refused with Slurm's words for a job of one component",
	"srun --mpi":       "types none only (`srun --mpi=list`); other types are refused with Slurm's words for a missing plugin",
	"srun --exact":     "steps share the allocation's CPUs; --exact sets SLURM_CPUS_ON_NODE and the CPUs --cpu-bind binds to",
	"srun --cpu-bind":  "cores and threads bind each task to its share of the job's cpuset (else the agent's CPUs); sockets and ldoms bind to all of them",
}

// compatNoEffect are options a command's parser takes and does nothing
// with, keyed "command --long-name", with the reason.
var compatNoEffect = map[string]string{}

func init() {
	for _, c := range []string{"squeue", "sinfo", "sacct", "sprio", "sshare", "scancel", "scontrol", "sacctmgr"} {
		compatNoEffect[c+" --verbose"] = "Sluice prints no debug output"
	}
	for _, c := range []string{"squeue", "sinfo"} {
		compatNoEffect[c+" --noconvert"] = "sizes are printed as recorded already"
	}
	for _, c := range []string{"squeue", "sinfo"} {
		compatNoEffect[c+" --hide"] = "hidden partitions are hidden by default already"
	}
	compatNoEffect["scancel --hurry"] = "no burst buffer to skip staging out"
	compatNoEffect["scancel --ctld"] = "requests always go to the controller"
	compatNoEffect["scontrol --all"] = "every partition is shown already"
	compatNoEffect["scancel --quiet"] = "Sluice's scancel prints no warnings to hide"
	for _, c := range []string{"squeue", "sinfo", "sacct", "sshare", "sdiag", "scontrol"} {
		for _, o := range []string{" --json", " --yaml"} {
			compatNotes[c+o] = "data_parser v0.0.42 only (docs/differences.md, --json and --yaml)"
		}
	}
}

// compatNoteAll are notes for an option under every command.
var compatNoteAll = map[string]string{
	"--json":       "not for this command (squeue, sinfo, sacct, sdiag, sshare and scontrol show have it)",
	"--yaml":       "not for this command (squeue, sinfo, sacct, sdiag, sshare and scontrol show have it)",
	"--clusters":   "one cluster per controller: no federation or multi-cluster operation",
	"--cluster":    "one cluster per controller: no federation or multi-cluster operation",
	"--federation": "one cluster per controller: no federation or multi-cluster operation",
	"--sibling":    "one cluster per controller: no federation or multi-cluster operation",
	"--local":      "one cluster per controller: no federation or multi-cluster operation",
}

func compatNote(command string, o SlurmOption) string {
	if n, ok := compatNotes[command+" "+o.Long()]; ok {
		return n
	}
	return compatNoteAll[o.Long()]
}

// CompatibilityTable renders docs/compatibility.md: for every command,
// each option of Slurm 24.11's man page and whether Sluice accepts it.
func CompatibilityTable() string {
	var b strings.Builder
	b.WriteString(`# Command-line compatibility with Slurm 24.11

Generated by ` + "`go test ./internal/cli -run TestCompatibilityTable -update-compat`" + ` from the
options of Slurm 24.11's man pages (` + "`internal/cli/slurmopts`, written by `scripts/slurm-options.sh`" + `)
and Sluice's own option parsers; a test fails when this file and the code disagree.
"implemented" means Sluice's parser accepts the option and acts on it; "accepted, no
effect" that it is taken (so that existing scripts keep working) and recorded only; how the output
compares with Slurm's is checked by the differential suite (` + "`test/oracle`" + `), whose
remaining differences are listed in [differences.md](differences.md). An option that is
not implemented is refused with Slurm's getopt message and one line naming this file.
`)
	for _, cmd := range CompatCommands {
		opts := SlurmOptions(cmd)
		counts := map[bool]int{}
		noEffect := 0
		var rows []string
		for _, o := range opts {
			status, ok := compatStatus(cmd, o)
			counts[ok]++
			if strings.HasPrefix(status, "accepted, no effect") {
				noEffect++
			}
			rows = append(rows, fmt.Sprintf("| `%s` | %s |", optionLabel(o), status))
		}
		fmt.Fprintf(&b, "\n## %s\n\n", cmd)
		if optionParsers[cmd] == nil {
			fmt.Fprintf(&b, "Sluice has no `%s` command yet (job-step work, issue 15).\n", cmd)
			continue
		}
		fmt.Fprintf(&b, "Of Slurm's %d options: %d implemented, %d accepted with no effect, %d not implemented.\n\n| option | status |\n|---|---|\n",
			len(opts), counts[true]-noEffect, noEffect, counts[false])
		b.WriteString(strings.Join(rows, "\n") + "\n")
	}
	b.WriteString(restd.CompatibilityMarkdown())
	return b.String()
}

// compatStatus is an option's status in the table, and whether Sluice
// accepts it under at least one of its names.
func compatStatus(cmd string, o SlurmOption) (string, bool) {
	var took, refused []string
	noEffect := false
	for _, n := range o.Names {
		if ok, ne := Accepts(cmd, o, n); ok {
			took = append(took, n)
			noEffect = noEffect || ne
		} else {
			refused = append(refused, n)
		}
	}
	note := compatNote(cmd, o)
	if why, ok := compatNoEffect[cmd+" "+o.Long()]; ok && len(took) > 0 {
		noEffect, note = true, why
	}
	status := "implemented"
	switch {
	case len(took) == 0:
		status = "not implemented"
	case noEffect:
		status = "accepted, no effect"
	case len(refused) > 0:
		status = fmt.Sprintf("implemented as `%s` only", strings.Join(took, "`, `"))
	case note != "":
		status = "differs"
	}
	if note != "" {
		status += ": " + note
	}
	return status, len(took) > 0
}

// optionLabel is how the table names an option: "-A, --account=".
func optionLabel(o SlurmOption) string {
	return strings.Join(o.Names, ", ") + o.Arg
}
