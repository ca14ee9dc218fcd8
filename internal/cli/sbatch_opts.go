package cli

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
)

// SbatchRequest is what an sbatch command line plus its script's #SBATCH
// directives resolve to: the job spec sent to the controller and the options
// that only change how the client behaves.
type SbatchRequest struct {
	// Spec is the job submission.
	Spec api.JobSpec
	// Parsable is --parsable: print only "jobid[;cluster]".
	Parsable bool
	// Wait is --wait/-W: return only when the job ends.
	Wait bool
	// TestOnly is --test-only: report the expected start, submit nothing.
	TestOnly bool
	// Quiet is --quiet/-Q.
	Quiet bool
	// Verbose counts --verbose/-v.
	Verbose int
	// Help, Usage and Version are --help/-h, --usage and --version/-V.
	Help, Usage, Version bool
	// Clusters is --clusters/-M as written.
	Clusters string
	// NoShell, Bell and NoBell are salloc's --no-shell, --bell and
	// --no-bell (sallocOptions), which sbatch does not take.
	NoShell, Bell, NoBell bool
	// Ignored lists the accepted options that Sluice does not act on
	// (e.g. --distribution), so the CLI can say so with -v.
	Ignored []string
}

// sbatchWrapHeader starts the script sbatch writes for --wrap, as Slurm does.
const sbatchWrapHeader = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n"

// ParseSbatch resolves an sbatch invocation the way Slurm's sbatch does:
// options on the command line up to the first non-option (the script name;
// the rest are the script's arguments), then the script's #SBATCH lines
// parsed with the very same option set, command-line values winning over
// directives. load returns a script's text by name ("" = standard input);
// it is not called for --wrap, --help, --usage or --version.
func ParseSbatch(args []string, load func(name string) (string, error)) (*SbatchRequest, error) {
	return ParseSbatchEnv(args, nil, load)
}

// ParseSbatchEnv is ParseSbatch with sbatch's input environment variables
// (SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ...; see sbatchEnvOptions) read through
// lookup (nil reads none). Slurm's precedence: the command line overrides
// the environment, which overrides the script's #SBATCH directives.
func ParseSbatchEnv(args []string, lookup func(string) (string, bool), load func(name string) (string, error)) (*SbatchRequest, error) {
	first, rest, err := parseSbatchArgs(&SbatchRequest{}, args)
	if err != nil {
		return nil, err
	}
	if first.Help || first.Usage || first.Version {
		return first, nil
	}
	script, name, err := sbatchScript(first, rest, load)
	if err != nil {
		return nil, err
	}
	var dirs []Directive
	if first.Spec.Wrap == "" {
		if dirs, err = SbatchDirectives(script); err != nil {
			return nil, err
		}
	}
	envArgs := SbatchEnvArgs(lookup)
	req := first
	// Without directives or environment the first pass is the answer;
	// otherwise the layers are applied again, lowest precedence first.
	if len(dirs) > 0 || len(envArgs) > 0 {
		if req, err = sbatchLayers(dirs, envArgs, args); err != nil {
			return nil, err
		}
	}
	req.Spec.Script = script
	if first.Spec.Wrap == "" {
		req.Spec.ScriptName = name
		if len(rest) > 1 {
			req.Spec.ScriptArgs = append([]string(nil), rest[1:]...)
		}
	}
	if req.Spec.Name == "" {
		req.Spec.Name = defaultJobName(req.Spec.Wrap, name)
	}
	return req, nil
}

// sbatchLayers applies the directives, then the environment's options,
// then the command line to a fresh request: a later layer's value wins.
func sbatchLayers(dirs []Directive, envArgs []EnvArg, args []string) (*SbatchRequest, error) {
	req := &SbatchRequest{}
	for _, d := range dirs {
		if _, extra, err := parseSbatchArgs(req, d.Args); err != nil {
			return nil, fmt.Errorf("line %d: %w", d.Line, err)
		} else if len(extra) > 0 {
			return nil, fmt.Errorf("line %d: invalid directive argument %q", d.Line, extra[0])
		}
	}
	for _, e := range envArgs {
		if _, _, err := parseSbatchArgs(req, []string{e.Arg}); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Var, err)
		}
	}
	if _, _, err := parseSbatchArgs(req, args); err != nil {
		return nil, err
	}
	return req, nil
}

// ParseSbatchOptions parses sbatch options only (no script is read), as the
// simulator's UB events reader needs; the remaining positional arguments
// (script name and its arguments) are returned.
func ParseSbatchOptions(args []string) (*SbatchRequest, []string, error) {
	return parseSbatchArgs(&SbatchRequest{}, args)
}

func sbatchScript(first *SbatchRequest, rest []string, load func(string) (string, error)) (script, name string, err error) {
	if first.Spec.Wrap != "" {
		if len(rest) > 0 {
			return "", "", fmt.Errorf("script arguments not permitted with --wrap option")
		}
		return sbatchWrapHeader + first.Spec.Wrap + "\n", "", nil
	}
	if len(rest) > 0 {
		name = rest[0]
	}
	script, err = load(name)
	if err != nil {
		return "", "", err
	}
	if !strings.HasPrefix(script, "#!") {
		return "", "", fmt.Errorf("This does not look like a batch script.  The first line must start with #! followed by the path to an interpreter.")
	}
	return script, name, nil
}

func defaultJobName(wrap, script string) string {
	switch {
	case wrap != "":
		return "wrap"
	case script == "":
		return "sbatch"
	}
	return path.Base(script)
}

// Directive is one #SBATCH line of a batch script, split into arguments.
type Directive struct {
	// Line is the 1-based line number in the script.
	Line int
	// Args are the line's options, split like a shell would.
	Args []string
}

// SbatchDirectives returns the #SBATCH lines of a script. Like Slurm it
// reads only the leading block of comments and blank lines: the first
// command ends the directives. A "#" after whitespace starts a comment.
func SbatchDirectives(script string) ([]Directive, error) {
	var out []Directive
	for i, line := range strings.Split(script, "\n") {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if !strings.HasPrefix(t, "#") {
			break
		}
		rest, ok := strings.CutPrefix(t, "#SBATCH")
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		args, err := shellSplit(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if len(args) > 0 {
			out = append(out, Directive{Line: i + 1, Args: args})
		}
	}
	return out, nil
}

// shellSplit splits a directive like a POSIX shell would split words:
// single and double quotes group, backslash escapes, an unquoted # that
// starts a word begins a comment.
func shellSplit(s string) ([]string, error) {
	var (
		out     []string
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote != 0:
			if r == quote {
				quote = 0
			} else if r == '\\' && quote == '"' {
				escaped = true
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return out, nil
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

// parseSbatchArgs applies args to req with a fresh sbatch flag set and
// returns the positional arguments: parsing stops at the script name.
func parseSbatchArgs(req *SbatchRequest, args []string) (*SbatchRequest, []string, error) {
	fs := newSbatchFlagSet(req)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	return req, fs.Args(), nil
}

// optValue is a pflag.Value that hands the option's text to a setter, so
// every sbatch option writes straight into the request it is bound to.
type optValue struct {
	set    func(string) error
	isBool bool
	last   string
}

func (v *optValue) String() string { return v.last }
func (v *optValue) Type() string {
	if v.isBool {
		return "bool"
	}
	return "string"
}
func (v *optValue) Set(s string) error { v.last = s; return v.set(s) }

// IsBoolFlag lets pflag accept the flag without a value.
func (v *optValue) IsBoolFlag() bool { return v.isBool }

type sbatchFlags struct {
	fs  *pflag.FlagSet
	req *SbatchRequest
}

// opt defines an option taking a value; noOpt, when non-empty, makes the
// value optional (Slurm's optional_argument) and is used when it is absent.
func (f sbatchFlags) opt(long, short, noOpt string, set func(string) error) {
	fl := f.fs.VarPF(&optValue{set: set}, long, short, "")
	fl.NoOptDefVal = noOpt
}

// flag defines an option without a value.
func (f sbatchFlags) flag(long, short string, set func()) {
	fl := f.fs.VarPF(&optValue{set: func(string) error { set(); return nil }, isBool: true}, long, short, "")
	fl.NoOptDefVal = "true"
}

// ignored defines a valid sbatch option that Sluice accepts and records
// without acting on it, so existing scripts keep working.
func (f sbatchFlags) ignored(long, short, noOpt string) {
	f.opt(long, short, noOpt, func(string) error {
		f.req.Ignored = append(f.req.Ignored, long)
		return nil
	})
}

func newSbatchFlagSet(req *SbatchRequest) *pflag.FlagSet {
	fs := pflag.NewFlagSet("sbatch", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	fs.SortFlags = false
	fs.Usage = func() {}
	fs.SetOutput(discard{})
	f := sbatchFlags{fs: fs, req: req}
	defineJobOptions(f, &req.Spec)
	defineResourceOptions(f, &req.Spec)
	defineIOOptions(f, &req.Spec)
	defineClientOptions(f, req)
	return fs
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func str(dst *string) func(string) error {
	return func(s string) error { *dst = s; return nil }
}

func posInt(name string, dst *int) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return fmt.Errorf("invalid --%s argument: %s", name, s)
		}
		*dst = n
		return nil
	}
}

func defineJobOptions(f sbatchFlags, s *api.JobSpec) {
	f.opt("job-name", "J", "", str(&s.Name))
	f.opt("partition", "p", "", func(v string) error { s.Partitions = splitList(v); return nil })
	f.opt("account", "A", "", str(&s.Account))
	f.opt("qos", "q", "", str(&s.QOS))
	f.opt("uid", "", "", func(v string) error { return setID(v, &s.UID, &s.User) })
	f.opt("gid", "", "", func(v string) error { return setID(v, &s.GID, &s.Group) })
	f.opt("time", "t", "", func(v string) error { return setTime("time", v, &s.TimeLimitSec) })
	f.opt("time-min", "", "", func(v string) error { return setTime("time-min", v, &s.TimeMinSec) })
	f.opt("begin", "b", "", func(v string) error { return setBegin(v, &s.Begin) })
	f.opt("deadline", "", "", str(&s.Deadline))
	f.opt("dependency", "d", "", str(&s.Dependency))
	f.opt("kill-on-invalid-dep", "", "", func(v string) error {
		if !strings.EqualFold(v, "yes") && !strings.EqualFold(v, "no") {
			return fmt.Errorf("Invalid --kill-on-invalid-dep specification")
		}
		s.KillOnInvalidDep = strings.ToLower(v)
		return nil
	})
	f.opt("nice", "", "100", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n > 2147483645 || n < -2147483645 {
			return fmt.Errorf("Invalid nice value, must be between -2147483645 and 2147483645")
		}
		s.Nice = &n
		return nil
	})
	f.opt("priority", "", "", func(v string) error {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return fmt.Errorf("Invalid priority value: %s", v)
		}
		p := uint32(n)
		s.Priority = &p
		return nil
	})
	f.flag("hold", "H", func() { s.Hold = true })
	f.opt("array", "a", "", str(&s.Array))
	f.flag("requeue", "", func() { t := true; s.Requeue = &t })
	f.flag("no-requeue", "", func() { t := false; s.Requeue = &t })
	f.opt("reservation", "", "", str(&s.Reservation))
	f.opt("wckey", "", "", str(&s.WCKey))
	f.opt("comment", "", "", str(&s.Comment))
	f.opt("extra", "", "", func(v string) error { s.Extra = &v; return nil })
	f.opt("mail-type", "", "", str(&s.MailType))
	f.opt("mail-user", "", "", str(&s.MailUser))
	f.opt("signal", "", "", func(v string) error { return setSignal(v, &s.Signal) })
	f.opt("wrap", "", "", str(&s.Wrap))
	for _, o := range []struct{ long, short, noOpt string }{
		{"distribution", "m", ""}, {"hint", "", ""}, {"profile", "", ""},
		{"propagate", "", "ALL"}, {"get-user-env", "", "yes"},
		{"acctg-freq", "", ""}, {"cpu-freq", "", ""}, {"gpu-bind", "", ""}, {"gpu-freq", "", ""},
		{"mcs-label", "", ""}, {"network", "", ""}, {"power", "", ""}, {"switches", "", ""},
		{"thread-spec", "", ""}, {"core-spec", "S", ""}, {"tmp", "", ""}, {"cluster-constraint", "", ""},
		{"bb", "", ""}, {"bbf", "", ""}, {"container", "", ""}, {"delay-boot", "", ""},
		{"export-file", "", ""}, {"batch", "", ""}, {"no-kill", "k", "on"}, {"overcommit", "O", "true"},
		{"spread-job", "", "true"}, {"use-min-nodes", "", "true"}, {"reboot", "", "true"},
		{"ignore-pbs", "", "true"}, {"sockets-per-node", "", ""}, {"cores-per-socket", "", ""},
		{"threads-per-core", "", ""}, {"ntasks-per-core", "", ""}, {"ntasks-per-socket", "", ""},
		{"ntasks-per-gpu", "", ""}, {"extra-node-info", "B", ""}, {"gres-flags", "", ""},
		{"mem-bind", "", ""}, {"segment", "", ""}, {"resv-ports", "", "0"}, {"wait-all-nodes", "", ""},
	} {
		f.ignored(o.long, o.short, o.noOpt)
	}
}

func defineResourceOptions(f sbatchFlags, s *api.JobSpec) {
	f.opt("nodes", "N", "", func(v string) error { return setNodes(v, s) })
	f.opt("ntasks", "n", "", posInt("ntasks", &s.NTasks))
	f.opt("cpus-per-task", "c", "", posInt("cpus-per-task", &s.CPUsPerTask))
	f.opt("ntasks-per-node", "", "", posInt("ntasks-per-node", &s.NTasksPerNode))
	f.opt("mincpus", "", "", posInt("mincpus", &s.MinCPUsPerNode))
	f.opt("cpus-per-gpu", "", "", posInt("cpus-per-gpu", &s.CPUsPerGPU))
	f.opt("mem", "", "", func(v string) error {
		s.MemPerNodeSet = true
		return setMem("mem", v, &s.MemPerNodeMB)
	})
	f.opt("mem-per-cpu", "", "", func(v string) error { return setMem("mem-per-cpu", v, &s.MemPerCPUMB) })
	f.opt("mem-per-gpu", "", "", func(v string) error { return setMem("mem-per-gpu", v, &s.MemPerGPUMB) })
	f.opt("gres", "", "", str(&s.Gres))
	f.opt("gpus", "G", "", str(&s.GPUs))
	f.opt("gpus-per-node", "", "", str(&s.GPUsPerNode))
	f.opt("gpus-per-task", "", "", str(&s.GPUsPerTask))
	f.opt("licenses", "L", "", str(&s.Licenses))
	f.opt("exclusive", "", "node", func(v string) error {
		switch v {
		case "node", "user", "mcs", "topo":
			s.Exclusive = v
			return nil
		}
		return fmt.Errorf("invalid exclusive option %s", v)
	})
	f.flag("oversubscribe", "s", func() { s.OverSubscribe = true })
	f.flag("contiguous", "", func() { s.Contiguous = true })
	f.opt("constraint", "C", "", str(&s.Constraint))
	f.opt("prefer", "", "", str(&s.Prefer))
	f.opt("nodelist", "w", "", str(&s.NodeList))
	f.opt("exclude", "x", "", str(&s.Exclude))
}

func defineIOOptions(f sbatchFlags, s *api.JobSpec) {
	f.opt("output", "o", "", str(&s.Output))
	f.opt("error", "e", "", str(&s.Error))
	f.opt("input", "i", "", str(&s.Input))
	f.opt("open-mode", "", "", str(&s.OpenMode))
	f.opt("chdir", "D", "", str(&s.WorkDir))
	f.opt("export", "", "", str(&s.Export))
}

func defineClientOptions(f sbatchFlags, r *SbatchRequest) {
	f.flag("parsable", "", func() { r.Parsable = true })
	f.flag("wait", "W", func() { r.Wait = true })
	f.flag("test-only", "", func() { r.TestOnly = true })
	f.flag("quiet", "Q", func() { r.Quiet = true })
	f.flag("verbose", "v", func() { r.Verbose++ })
	f.flag("help", "h", func() { r.Help = true })
	f.flag("usage", "", func() { r.Usage = true })
	f.flag("version", "V", func() { r.Version = true })
	f.opt("clusters", "M", "", str(&r.Clusters))
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// setID stores --uid/--gid: a number goes to id, a name to name.
func setID(v string, id **uint32, name *string) error {
	if v == "" {
		return fmt.Errorf("invalid user or group id %q", v)
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		u := uint32(n)
		*id = &u
		return nil
	}
	*name = v
	return nil
}

// setNodes parses --nodes=min[-max].
func setNodes(v string, s *api.JobSpec) error {
	lo, hi, ranged := strings.Cut(strings.TrimSpace(v), "-")
	minN, err := strconv.Atoi(lo)
	if err != nil || minN < 0 {
		return fmt.Errorf("invalid node count `%s'", v)
	}
	maxN := minN
	if ranged {
		if maxN, err = strconv.Atoi(hi); err != nil || maxN < minN {
			return fmt.Errorf("invalid node count `%s'", v)
		}
	}
	s.MinNodes, s.MaxNodes = minN, maxN
	s.ZeroNodes = maxN == 0
	return nil
}

// setMem parses a memory size: a number with an optional K, M (default), G
// or T suffix, powers of 1024, into megabytes (K rounds up, as Slurm does).
func setMem(opt, v string, dst *int64) error {
	mb, err := ParseMemMB(v)
	if err != nil {
		return fmt.Errorf("invalid --%s specification", opt)
	}
	*dst = mb
	return nil
}

// ParseMemMB parses Slurm's memory size syntax ("500G", "187000M", "4096",
// "2T", "512K") into megabytes.
func ParseMemMB(v string) (int64, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, errors.New("empty memory size")
	}
	mult := 1.0
	switch v[len(v)-1] {
	case 'k', 'K':
		mult = 1.0 / 1024
	case 'm', 'M':
	case 'g', 'G':
		mult = 1024
	case 't', 'T':
		mult = 1024 * 1024
	default:
		if v[len(v)-1] < '0' || v[len(v)-1] > '9' {
			return 0, fmt.Errorf("invalid memory size %q", v)
		}
		v += "M"
	}
	n, err := strconv.ParseFloat(v[:len(v)-1], 64)
	if err != nil || n < 0 || n > 1e15 {
		return 0, fmt.Errorf("invalid memory size %q", v)
	}
	mb := n * mult
	r := int64(mb)
	if float64(r) < mb {
		r++
	}
	return r, nil
}

func setTime(opt, v string, dst *int64) error {
	sec, err := ParseTimeLimit(v)
	if err != nil {
		return fmt.Errorf("Invalid --%s specification", opt)
	}
	*dst = sec
	return nil
}

// ParseTimeLimit parses Slurm's time-limit syntax into seconds: "minutes",
// "minutes:seconds", "hours:minutes:seconds", "days-hours",
// "days-hours:minutes", "days-hours:minutes:seconds"; UNLIMITED and INFINITE
// give api.TimeInfinite. (internal/duration will own this; kept here until
// it lands so the parser does not wait on it.)
func ParseTimeLimit(v string) (int64, error) {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "unlimited", "infinite", "-1":
		return api.TimeInfinite, nil
	case "":
		return 0, errors.New("empty time")
	}
	days, hadDays := int64(0), false
	if d, rest, ok := strings.Cut(v, "-"); ok {
		hadDays = true
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("invalid time %q", v)
		}
		days, v = n, rest
	}
	parts := strings.Split(v, ":")
	if len(parts) > 3 {
		return 0, fmt.Errorf("invalid time %q", v)
	}
	nums := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || n > 1<<40 {
			return 0, fmt.Errorf("invalid time %q", v)
		}
		nums[i] = n
	}
	var h, m, s int64
	switch {
	case hadDays || len(parts) == 3:
		h = nums[0]
		if len(nums) > 1 {
			m = nums[1]
		}
		if len(nums) > 2 {
			s = nums[2]
		}
	case len(nums) == 2:
		m, s = nums[0], nums[1]
	default:
		m = nums[0]
	}
	return days*86400 + h*3600 + m*60 + s, nil
}

// envOption maps one of sbatch's input environment variables to the
// option it stands for (man sbatch, INPUT ENVIRONMENT VARIABLES).
type envOption struct {
	// Vars are the variable names, the first one found wins
	// (SBATCH_CLUSTERS before SLURM_CLUSTERS).
	Vars []string
	// Long is the option's long name.
	Long string
	// Kind says how the value is read.
	Kind envKind
}

type envKind int

const (
	// envValue passes the value as the option's argument; an empty value
	// sets nothing.
	envValue envKind = iota
	// envFlag is an option without argument: set by an empty value,
	// "yes" or a non-zero number; any other value leaves it unset.
	envFlag
	// envOptional is an option whose argument is optional (--exclusive,
	// --no-kill, --get-user-env): an empty value or "yes" gives the bare
	// option, anything else is the argument.
	envOptional
	// envZeroOne is SBATCH_DEBUG: 1 enables, 0 disables (leaves unset).
	envZeroOne
)

// sbatchEnvOptions lists the input environment variables sbatch reads, in
// the man page's order.
var sbatchEnvOptions = []envOption{
	{[]string{"SBATCH_ACCOUNT"}, "account", envValue},
	{[]string{"SBATCH_ACCTG_FREQ"}, "acctg-freq", envValue},
	{[]string{"SBATCH_ARRAY_INX"}, "array", envValue},
	{[]string{"SBATCH_BATCH"}, "batch", envValue},
	{[]string{"SBATCH_CLUSTERS", "SLURM_CLUSTERS"}, "clusters", envValue},
	{[]string{"SBATCH_CONSTRAINT"}, "constraint", envValue},
	{[]string{"SBATCH_CONTAINER"}, "container", envValue},
	{[]string{"SBATCH_CORE_SPEC"}, "core-spec", envValue},
	{[]string{"SBATCH_CPUS_PER_GPU"}, "cpus-per-gpu", envValue},
	{[]string{"SBATCH_DEBUG"}, "verbose", envZeroOne},
	{[]string{"SBATCH_DELAY_BOOT"}, "delay-boot", envValue},
	{[]string{"SBATCH_DISTRIBUTION"}, "distribution", envValue},
	{[]string{"SBATCH_ERROR"}, "error", envValue},
	{[]string{"SBATCH_EXCLUSIVE"}, "exclusive", envOptional},
	{[]string{"SBATCH_EXPORT"}, "export", envValue},
	{[]string{"SBATCH_GET_USER_ENV"}, "get-user-env", envOptional},
	{[]string{"SBATCH_GPU_BIND"}, "gpu-bind", envValue},
	{[]string{"SBATCH_GPU_FREQ"}, "gpu-freq", envValue},
	{[]string{"SBATCH_GPUS"}, "gpus", envValue},
	{[]string{"SBATCH_GPUS_PER_NODE"}, "gpus-per-node", envValue},
	{[]string{"SBATCH_GPUS_PER_TASK"}, "gpus-per-task", envValue},
	{[]string{"SBATCH_GRES"}, "gres", envValue},
	{[]string{"SBATCH_GRES_FLAGS"}, "gres-flags", envValue},
	{[]string{"SBATCH_HINT", "SLURM_HINT"}, "hint", envValue},
	{[]string{"SBATCH_IGNORE_PBS"}, "ignore-pbs", envFlag},
	{[]string{"SBATCH_INPUT"}, "input", envValue},
	{[]string{"SBATCH_JOB_NAME"}, "job-name", envValue},
	{[]string{"SBATCH_MEM_BIND"}, "mem-bind", envValue},
	{[]string{"SBATCH_MEM_PER_CPU"}, "mem-per-cpu", envValue},
	{[]string{"SBATCH_MEM_PER_GPU"}, "mem-per-gpu", envValue},
	{[]string{"SBATCH_MEM_PER_NODE"}, "mem", envValue},
	{[]string{"SBATCH_NETWORK"}, "network", envValue},
	{[]string{"SBATCH_NO_KILL"}, "no-kill", envOptional},
	{[]string{"SBATCH_NO_REQUEUE"}, "no-requeue", envFlag},
	{[]string{"SBATCH_OPEN_MODE"}, "open-mode", envValue},
	{[]string{"SBATCH_OUTPUT"}, "output", envValue},
	{[]string{"SBATCH_OVERCOMMIT"}, "overcommit", envFlag},
	{[]string{"SBATCH_PARTITION"}, "partition", envValue},
	{[]string{"SBATCH_POWER"}, "power", envValue},
	{[]string{"SBATCH_PROFILE"}, "profile", envValue},
	{[]string{"SBATCH_QOS"}, "qos", envValue},
	{[]string{"SBATCH_REQ_SWITCH"}, "switches", envValue},
	{[]string{"SBATCH_REQUEUE"}, "requeue", envFlag},
	{[]string{"SBATCH_RESERVATION"}, "reservation", envValue},
	{[]string{"SBATCH_SIGNAL"}, "signal", envValue},
	{[]string{"SBATCH_SPREAD_JOB"}, "spread-job", envFlag},
	{[]string{"SBATCH_THREAD_SPEC"}, "thread-spec", envValue},
	{[]string{"SBATCH_THREADS_PER_CORE"}, "threads-per-core", envValue},
	{[]string{"SBATCH_TIMELIMIT"}, "time", envValue},
	{[]string{"SBATCH_USE_MIN_NODES"}, "use-min-nodes", envFlag},
	{[]string{"SBATCH_WAIT"}, "wait", envFlag},
	{[]string{"SBATCH_WAIT_ALL_NODES"}, "wait-all-nodes", envValue},
	{[]string{"SBATCH_WCKEY"}, "wckey", envValue},
}

// EnvArg is one option taken from the environment: the variable it came
// from (for error messages) and the option as a command-line argument.
type EnvArg struct {
	Var string
	Arg string
}

// SbatchEnvArgs turns the input environment variables that lookup finds
// into sbatch options, ready to be parsed between the script's directives
// and the command line. lookup nil reads nothing.
func SbatchEnvArgs(lookup func(string) (string, bool)) []EnvArg {
	if lookup == nil {
		return nil
	}
	var out []EnvArg
	for _, o := range sbatchEnvOptions {
		for _, name := range o.Vars {
			v, ok := lookup(name)
			if !ok {
				continue
			}
			if arg, set := o.arg(v); set {
				out = append(out, EnvArg{Var: name, Arg: arg})
			}
			break
		}
	}
	return out
}

// arg is the option for value v, and whether v sets it at all.
func (o envOption) arg(v string) (string, bool) {
	switch o.Kind {
	case envFlag:
		return "--" + o.Long, envEnables(v)
	case envOptional:
		if t := strings.TrimSpace(v); t == "" || strings.EqualFold(t, "yes") {
			return "--" + o.Long, true
		}
		return "--" + o.Long + "=" + v, true
	case envZeroOne:
		return "--" + o.Long, strings.TrimSpace(v) == "1"
	}
	if v == "" {
		return "", false
	}
	return "--" + o.Long + "=" + v, true
}

// envEnables reads a flag option's variable as Slurm does: empty, "yes"
// or a non-zero number enable it.
func envEnables(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" || strings.EqualFold(v, "yes") {
		return true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return err == nil && n != 0
}
