package cli

// srun's step options with Slurm 24.11's semantics and words: --cpu-bind,
// -m/--distribution, --mpi, --multi-prog, -K/--kill-on-bad-exit and
// --het-group (checked against real Slurm, test/oracle/scenarios/srun-options.scn).

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
)

// srunFatal is an option error srun reports with its own lines and exit
// status (Slurm's srun exits 255 for some, 1 for most).
type srunFatal struct {
	lines []string
	code  int
}

func (e *srunFatal) Error() string { return strings.Join(e.lines, "\n") }

// cpuBindOrder is the order in which Slurm prints binding types
// (SLURM_CPU_BIND_TYPE "cores,none" for --cpu-bind=none,cores).
var cpuBindOrder = []string{"threads", "cores", "sockets", "ldoms", "none", "rank_ldom",
	"map_cpu:", "mask_cpu:", "map_ldom:", "mask_ldom:"}

// cpuBindWords are --cpu-bind's keywords and their abbreviations.
var cpuBindWords = map[string]string{"q": "quiet", "quiet": "quiet", "v": "verbose", "verbose": "verbose",
	"no": "none", "none": "none", "rank": "rank", "rank_ldom": "rank_ldom", "sockets": "sockets",
	"cores": "cores", "threads": "threads", "ldoms": "ldoms", "help": "help"}

var cpuBindListItem = regexp.MustCompile(`^(0[xX])?[0-9a-fA-F]+$`)

// parseCPUBind parses --cpu-bind's comma separated words as Slurm does:
// map_cpu:/mask_cpu:/map_ldom:/mask_ldom: take the list that follows
// (hex masks lose their 0x); rank is obsolete and ignored with a notice.
// It returns nil for no binding to apply and nothing to set.
func parseCPUBind(v string, notice func(string)) (*api.CPUBind, error) {
	b := &api.CPUBind{}
	types := map[string]bool{}
	var list []string
	inList := false
	for _, w := range strings.Split(v, ",") {
		if inList && cpuBindListItem.MatchString(w) {
			list = append(list, strings.TrimPrefix(strings.TrimPrefix(w, "0x"), "0X"))
			continue
		}
		inList = false
		if k, rest, ok := strings.Cut(w, ":"); ok && (k == "map_cpu" || k == "mask_cpu" || k == "map_ldom" || k == "mask_ldom") {
			if !cpuBindListItem.MatchString(rest) {
				return nil, cpuBindError(w)
			}
			types[k+":"], inList = true, true
			list = append(list, strings.TrimPrefix(strings.TrimPrefix(rest, "0x"), "0X"))
			continue
		}
		switch word := cpuBindWords[w]; word {
		case "":
			return nil, cpuBindError(w)
		case "help":
			return nil, &srunFatal{lines: []string{cpuBindHelp}, code: 1}
		case "quiet":
			b.Verbose = false
		case "verbose":
			b.Verbose = true
		case "rank":
			notice("srun: Ignoring --cpu-bind=rank. Rank binding is obsolete.")
		default:
			types[word] = true
		}
	}
	for _, t := range cpuBindOrder {
		if types[t] {
			b.Types = append(b.Types, t)
		}
	}
	b.List = strings.Join(list, ",")
	if !b.Verbose && len(b.Types) == 0 {
		return nil, nil
	}
	return b, nil
}

func cpuBindError(w string) error {
	return &srunFatal{lines: []string{fmt.Sprintf("srun: error: unrecognized --cpu-bind argument %q", w),
		"srun: fatal: Failed to parse --cpu-bind= values."}, code: 1}
}

// cpuBindHelp is what --cpu-bind=help prints (srun(1) lists the same).
const cpuBindHelp = `CPU bind options:
    --cpu-bind=         Bind tasks to CPUs
        q[uiet]         quietly bind before task runs (default)
        v[erbose]       verbosely report binding before task runs
        no[ne]          don't bind tasks to CPUs (default)
        rank            bind by task rank
        map_cpu:<list>  specify a CPU ID binding for each task
                        where <list> is <cpuid1>,<cpuid2>,...<cpuidN>
        mask_cpu:<list> specify a CPU ID binding mask for each task
                        where <list> is <mask1>,<mask2>,...<maskN>
        rank_ldom       bind task by rank to CPUs in a NUMA locality domain
        map_ldom:<list> specify a NUMA locality domain ID for each task
                        where <list> is <ldom1>,<ldom2>,...<ldomN>
        mask_ldom:<list>specify a NUMA locality domain ID mask for each task
                        where <list> is <mask1>,<mask2>,...<maskN>
        sockets         auto-generated masks bind to sockets
        cores           auto-generated masks bind to cores
        threads         auto-generated masks bind to threads
        ldoms           auto-generated masks bind to NUMA locality domains
        help            show this help message`

// parseDistribution checks -m/--distribution: block, cyclic, plane=N or
// arbitrary for the nodes, then up to two of block|cyclic|fcyclic for
// sockets and cores, then ,Pack or ,NoPack. It returns SLURM_DISTRIBUTION's
// value (plane=N is "plane", Pack in lower case).
func parseDistribution(v string) (string, int, error) {
	bad := &srunFatal{lines: []string{"srun: error: Invalid --distribution specification"}, code: 255}
	main, pack, _ := strings.Cut(v, ",")
	parts := strings.Split(main, ":")
	if len(parts) > 3 {
		return "", 0, bad
	}
	first, plane := parts[0], 0
	if n, ok := strings.CutPrefix(first, "plane="); ok {
		k, err := strconv.Atoi(n)
		if err != nil || k <= 0 {
			return "", 0, bad
		}
		first, plane = "plane", k
	}
	switch first {
	case "block", "cyclic", "plane", "arbitrary", "*":
	default:
		return "", 0, bad
	}
	for _, p := range parts[1:] {
		switch p {
		case "block", "cyclic", "fcyclic", "*":
		default:
			return "", 0, bad
		}
	}
	out := strings.Join(append([]string{first}, parts[1:]...), ":")
	switch strings.ToLower(pack) {
	case "":
	case "pack", "nopack":
		out += "," + strings.ToLower(pack)
	default:
		return "", 0, bad
	}
	return out, plane, nil
}

// arbitraryError is -m arbitrary: tasks are placed by a host list
// (SLURM_HOSTFILE) that Sluice's steps do not take; srun's words for an
// empty one.
func arbitraryError(ntasks int) error {
	return &srunFatal{lines: []string{fmt.Sprintf("srun: error: You asked for %d tasks but hostlist specified 0 nodes", max(ntasks, 1))}, code: 1}
}

// srunMPITypes are the --mpi types Sluice's srun supports (--mpi=list).
var srunMPITypes = []string{"none", "pmi2"}

// srunMPIList is --mpi=list's output, as Slurm's srun prints it, with
// Sluice's plugin types.
func srunMPIList() string {
	return "MPI plugin types are...\n\t" + strings.Join(srunMPITypes, "\n\t") + "\n"
}

// checkMPI refuses an --mpi type Sluice does not have with srun's lines.
func checkMPI(t string) error {
	for _, k := range srunMPITypes {
		if t == k {
			return nil
		}
	}
	return &srunFatal{lines: []string{
		"srun: error: Couldn't find the specified plugin name for mpi/" + t + " looking at all files",
		"srun: error: cannot find mpi plugin for mpi/" + t,
		"srun: error: MPI: Cannot create context for mpi/" + t,
		"srun: error: MPI: Unable to load any plugin",
		"srun: error: Invalid MPI type '" + t + "', --mpi=list for acceptable types"}, code: 1}
}

// hetGroupError is srun's answer to --het-group: Sluice has no
// heterogeneous jobs, so every job is what Slurm calls a job with one
// component (offset 0).
func hetGroupError(v string) error {
	n, err := strconv.Atoi(strings.SplitN(strings.SplitN(v, ",", 2)[0], "-", 2)[0])
	if err == nil && n > 0 {
		return &srunFatal{lines: []string{fmt.Sprintf("srun: error: Requested het-group offset exceeds highest hetjob index (%d > 0)", n)}, code: 1}
	}
	return &srunFatal{lines: []string{"srun: error: No directives to start application on any available hetjob components"}, code: 1}
}

// readMultiProg reads --multi-prog's configuration file: "#" in column one
// is a comment; each line is task ranks ("0,2-3" or "*"), the program and
// its arguments, split on white space, single quotes keeping theirs.
func readMultiProg(cwd, file string, extra []string) (*api.MultiProg, error) {
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &srunFatal{lines: []string{"srun: error: Could not open multi_prog config file " + file}, code: 1}
	}
	defer f.Close()
	m := &api.MultiProg{File: file, Extra: extra}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "#") {
			continue
		}
		words := multiProgWords(text)
		if len(words) == 0 {
			continue
		}
		bad := &srunFatal{lines: []string{fmt.Sprintf("srun: error: Line %d of configuration file %s invalid", line, file)}, code: 1}
		if len(words) < 2 {
			return nil, bad
		}
		rec := api.MultiProgLine{Line: line, Argv: words[1:]}
		if words[0] == "*" {
			rec.All = true
		} else if rec.Ranks, err = multiProgRanks(words[0]); err != nil {
			return nil, bad
		}
		m.Records = append(m.Records, rec)
	}
	return m, nil
}

// multiProgWords splits a line on white space; single quotes group.
func multiProgWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, in = !quoted, true
		case !quoted && (r == ' ' || r == '\t'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// multiProgRanks parses "0,2-3".
func multiProgRanks(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(p, "-")
		lo, err := strconv.Atoi(a)
		if err != nil || lo < 0 {
			return nil, fmt.Errorf("bad rank %q", p)
		}
		hi := lo
		if isRange {
			if hi, err = strconv.Atoi(b); err != nil || hi < lo {
				return nil, fmt.Errorf("bad range %q", p)
			}
		}
		for t := lo; t <= hi; t++ {
			out = append(out, t)
		}
	}
	return out, nil
}

// srunMPIType is the step's MPI type: --mpi, else SLURM_MPI_TYPE from the
// environment, else slurm.conf's MpiDefault, as srun chooses it; "" when
// none is named anywhere.
func srunMPIType(env *Env, opt string) string {
	if opt != "" {
		return opt
	}
	if v := env.Getenv("SLURM_MPI_TYPE"); v != "" {
		return v
	}
	if cfg, _, err := conf.Load(confPath(env)); err == nil {
		if u, ok := cfg.Unused["MpiDefault"]; ok {
			return strings.ToLower(u.Value)
		}
	}
	return ""
}

// confKillOnBadExit is slurm.conf's KillOnBadExit, srun's default for -K
// (SLURM_KILL_BAD_EXIT in the environment wins, as in Slurm).
func confKillOnBadExit(env *Env) bool {
	if v := env.Getenv("SLURM_KILL_BAD_EXIT"); v != "" {
		return v != "0"
	}
	if cfg, _, err := conf.Load(confPath(env)); err == nil {
		if u, ok := cfg.Unused["KillOnBadExit"]; ok {
			return u.Value == "1"
		}
	}
	return false
}
