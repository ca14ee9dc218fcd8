package oracle

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A Scenario is one recorded terminal session: configuration lines for
// slurm.conf, then steps played in order as given users.
type Scenario struct {
	Name  string   // file name without .scn
	Title string   // the first comment line
	Conf  []string // slurm.conf lines merged into the base (oracle.sh --conf-extra rules)
	Nodes int      // nodes n1..nN of the base configuration (oracle.sh up --nodes), 4 by default
	Steps []Step
	Text  string // the file's bytes, hashed into the golden file
}

// StepKind says what a step does.
type StepKind int

const (
	// Run runs a shell command line as a user; its stdout, stderr and exit
	// status are the three compared points.
	Run StepKind = iota
	// Sleep waits on both sides; nothing is compared.
	Sleep
	// Wait polls `squeue -h -j ID -o %T` as root until the job reaches a
	// state ("gone": no longer listed); whether it did is one point.
	Wait
	// Sync sleeps until 50 ms past the next whole second of the wall
	// clock. slurmctld runs the scheduling pass a submission waits for on
	// its whole-second background tick (and Sluice's ctld on the same
	// cadence), so steps after a sync meet the same phase of that tick on
	// both sides instead of whatever phase the previous steps left.
	Sync
	// Rest sends one request to the cluster's REST API (slurmrestd on the
	// oracle, `sluice up --rest-listen` on Sluice) as a user, with the
	// X-SLURM-USER-NAME and X-SLURM-USER-TOKEN headers of a token made for
	// that user (oracle.sh token USER, scontrol token username=USER). The
	// reply's body is the step's stdout, its HTTP status the exit point.
	Rest
)

// Step is one line of a scenario.
type Step struct {
	Line   int // line number in the scenario file
	Kind   StepKind
	User   string        // Run: the user, root by default
	Cmd    string        // Run: the command line, given to sh -c
	Dur    time.Duration // Sleep: how long; Wait: the timeout
	JobID  string        // Wait: the job
	State  string        // Wait: the state to reach, or "gone"
	Method string        // Rest: GET, POST, DELETE ...
	Path   string        // Rest: the request's path and query
	Body   string        // Rest: the request's body (JSON), @STATE@ the side's state directory
	Masks  []string      // Run: extra normalisations for this step (see Normalize)
	Sort   bool          // Run: compare stdout with its lines sorted
	// JSON is "@json [PATTERN...]": stdout is compared through its JSON
	// view (jsonview.go); JSONPaths are the patterns.
	JSON      bool
	JSONPaths []string
}

// REST reports whether the scenario sends REST requests (its cluster
// must serve the API).
func (sc *Scenario) REST() bool {
	for _, st := range sc.Steps {
		if st.Kind == Rest {
			return true
		}
	}
	return false
}

// Sleeps is the time the scenario's sleep steps take.
func (sc *Scenario) Sleeps() time.Duration {
	var d time.Duration
	for _, st := range sc.Steps {
		if st.Kind == Sleep {
			d += st.Dur
		}
	}
	return d
}

// Compared reports whether the step records a result (a command or a
// wait); sleep and sync steps only pass time.
func (s Step) Compared() bool { return s.Kind == Run || s.Kind == Wait || s.Kind == Rest }

// Printed reports whether the step's stdout and stderr are compared (a
// command or a request; a wait has only its exit).
func (s Step) Printed() bool { return s.Kind == Run || s.Kind == Rest }

// Title of a step as printed in the golden file and the diff.
func (s Step) String() string {
	switch s.Kind {
	case Sleep:
		return fmt.Sprintf("sleep %g", s.Dur.Seconds())
	case Wait:
		return fmt.Sprintf("wait %s %s", s.JobID, s.State)
	case Sync:
		return "sync"
	case Rest:
		return strings.TrimSpace(fmt.Sprintf("[%s] rest %s %s %s", s.User, s.Method, s.Path, s.Body))
	}
	return fmt.Sprintf("[%s] %s", s.User, s.Cmd)
}

var (
	runLine  = regexp.MustCompile(`^([a-z][a-z0-9_-]*)?\$ (.+)$`)
	userName = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	stateArg = regexp.MustCompile(`^([A-Z_]+|gone)$`)
)

// MaxNodes is the largest cluster a scenario may ask for.
const MaxNodes = 16

// knownMasks are the per-step normalisations a scenario may ask for with
// "@mask NAME".
var knownMasks = map[string]bool{"durations": true, "numbers": true}

// ParseScenario reads a scenario. The format is a terminal session:
//
//	# title line
//	nodes 2                           the cluster has nodes n1 and n2 (default 4)
//	conf PreemptMode=SUSPEND,GANG     a slurm.conf line for this scenario
//	$ sacctmgr -i add account a       run as root
//	alice$ sbatch --wrap 'sleep 30'   run as alice (through sh -c)
//	sleep 5                           wait 5 s on both sides
//	wait 1 RUNNING                    poll until job 1 is RUNNING (60 s), "wait 1 gone 90"
//	@sort                             the next command's stdout is compared sorted
//	@mask durations                   the next command's H:MM:SS values are masked
//	@json jobs[].job_state            the next command's JSON stdout is compared through a view (jsonview.go)
//	rest alice GET /slurm/v0.0.42/jobs       a REST request as alice (body after the path, @STATE@ in it
//	                                  the side's state directory); @sort, @mask and @json apply to it
//
// Errors name the file and the line.
func ParseScenario(name, text string) (*Scenario, error) {
	sc := &Scenario{Name: name, Text: text, Nodes: 4}
	var pendingMasks, pendingJSONPaths []string
	pendingSort, pendingJSON := false, false
	s := bufio.NewScanner(strings.NewReader(text))
	s.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimRight(s.Text(), " \t\r")
		errf := func(format string, a ...any) error {
			return fmt.Errorf("%s.scn:%d: %s", name, n, fmt.Sprintf(format, a...))
		}
		switch {
		case line == "":
		case strings.HasPrefix(line, "#"):
			if sc.Title == "" && len(sc.Steps) == 0 {
				sc.Title = strings.TrimSpace(strings.TrimPrefix(line, "#"))
			}
		case strings.HasPrefix(line, "conf "):
			if len(sc.Steps) > 0 {
				return nil, errf("conf lines come before the first step")
			}
			sc.Conf = append(sc.Conf, strings.TrimSpace(line[5:]))
		case strings.HasPrefix(line, "nodes "):
			n, err := strconv.Atoi(strings.TrimSpace(line[6:]))
			if err != nil || n < 1 || n > MaxNodes || len(sc.Steps) > 0 {
				return nil, errf("nodes: want a number of nodes from 1 to %d before the first step", MaxNodes)
			}
			sc.Nodes = n
		case line == "@sort":
			pendingSort = true
		case line == "@json" || strings.HasPrefix(line, "@json "):
			pendingJSON, pendingJSONPaths = true, strings.Fields(line[5:])
		case strings.HasPrefix(line, "@mask "):
			for _, m := range strings.Fields(line[6:]) {
				if !knownMasks[m] {
					return nil, errf("unknown mask %q (known: %s)", m, strings.Join(sortedKeys(knownMasks), ", "))
				}
				pendingMasks = append(pendingMasks, m)
			}
		case strings.HasPrefix(line, "sleep "):
			d, err := parseSeconds(line[6:])
			if err != nil {
				return nil, errf("sleep: %v", err)
			}
			sc.Steps = append(sc.Steps, Step{Line: n, Kind: Sleep, Dur: d})
		case line == "sync":
			sc.Steps = append(sc.Steps, Step{Line: n, Kind: Sync})
		case strings.HasPrefix(line, "rest "):
			st, err := parseRest(line[5:])
			if err != nil {
				return nil, errf("rest: %v", err)
			}
			st.Line, st.Masks, st.Sort, st.JSON, st.JSONPaths = n, pendingMasks, pendingSort, pendingJSON, pendingJSONPaths
			pendingMasks, pendingSort, pendingJSON, pendingJSONPaths = nil, false, false, nil
			sc.Steps = append(sc.Steps, st)
		case strings.HasPrefix(line, "wait "):
			st, err := parseWait(line[5:])
			if err != nil {
				return nil, errf("wait: %v", err)
			}
			st.Line = n
			sc.Steps = append(sc.Steps, st)
		default:
			m := runLine.FindStringSubmatch(line)
			if m == nil {
				return nil, errf("not a step: %q (want USER$ COMMAND, $ COMMAND, rest, sleep, sync, wait, conf, @sort, @mask, @json or #)", line)
			}
			user := m[1]
			if user == "" {
				user = "root"
			}
			sc.Steps = append(sc.Steps, Step{Line: n, Kind: Run, User: user, Cmd: m[2], Masks: pendingMasks, Sort: pendingSort,
				JSON: pendingJSON, JSONPaths: pendingJSONPaths})
			pendingMasks, pendingSort, pendingJSON, pendingJSONPaths = nil, false, false, nil
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("%s.scn: %w", name, err)
	}
	if pendingSort || pendingJSON || len(pendingMasks) > 0 {
		return nil, fmt.Errorf("%s.scn: @sort, @mask or @json at the end applies to no command", name)
	}
	if len(sc.Steps) == 0 {
		return nil, fmt.Errorf("%s.scn: no steps", name)
	}
	return sc, nil
}

func parseSeconds(s string) (time.Duration, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f <= 0 || f > 600 {
		return 0, fmt.Errorf("want seconds between 0 and 600, got %q", s)
	}
	return time.Duration(f * float64(time.Second)), nil
}

var restMethod = regexp.MustCompile(`^(GET|POST|DELETE|PUT|PATCH)$`)

// parseRest reads "USER METHOD PATH [BODY]".
func parseRest(s string) (Step, error) {
	f := strings.SplitN(strings.TrimSpace(s), " ", 4)
	if len(f) < 3 || !userName.MatchString(f[0]) || !restMethod.MatchString(f[1]) || !strings.HasPrefix(f[2], "/") {
		return Step{}, fmt.Errorf("want USER METHOD /PATH [BODY], got %q", s)
	}
	st := Step{Kind: Rest, User: f[0], Method: f[1], Path: f[2]}
	if len(f) == 4 {
		st.Body = strings.TrimSpace(f[3])
	}
	return st, nil
}

func parseWait(s string) (Step, error) {
	f := strings.Fields(s)
	if len(f) < 2 || len(f) > 3 {
		return Step{}, fmt.Errorf("want JOBID STATE [TIMEOUT], got %q", s)
	}
	if _, err := strconv.ParseUint(strings.ReplaceAll(f[0], "_", ""), 10, 32); err != nil {
		return Step{}, fmt.Errorf("bad job id %q", f[0])
	}
	if !stateArg.MatchString(f[1]) {
		return Step{}, fmt.Errorf("bad state %q (a squeue %%T state such as RUNNING, or gone)", f[1])
	}
	st := Step{Kind: Wait, JobID: f[0], State: f[1], Dur: 60 * time.Second}
	if len(f) == 3 {
		d, err := parseSeconds(f[2])
		if err != nil {
			return Step{}, err
		}
		st.Dur = d
	}
	return st, nil
}

func sortedKeys(m map[string]bool) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// LoadScenarios reads every DIR/*.scn, sorted by name; a non-empty only
// keeps the named ones.
func LoadScenarios(dir string, only []string) ([]*Scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.scn"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	keep := map[string]bool{}
	for _, o := range only {
		keep[o] = true
	}
	var out []*Scenario
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".scn")
		if len(keep) > 0 && !keep[name] {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		sc, err := ParseScenario(name, string(b))
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	for o := range keep {
		found := false
		for _, sc := range out {
			found = found || sc.Name == o
		}
		if !found {
			return nil, fmt.Errorf("no scenario %q in %s", o, dir)
		}
	}
	return out, nil
}
