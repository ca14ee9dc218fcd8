package conf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/duration"
)

// infinite is the UNLIMITED time value shared with internal/duration.
const infinite = duration.Infinite

// maxIncludeDepth stops Include loops.
const maxIncludeDepth = 16

// Options tunes how a configuration is read.
type Options struct {
	// ReadFile reads Include files (and gres.conf). Nil forbids includes,
	// which is what fuzzing and in-memory tests want.
	ReadFile func(path string) ([]byte, error)
	// GresConf is the gres.conf to read after slurm.conf: "" for none.
	GresConf string
	// CgroupConf is the cgroup.conf to read after slurm.conf: "" for none.
	CgroupConf string
}

// Load reads a slurm.conf file, its Include files, and the gres.conf next
// to it if there is one (as Slurm's daemons do). The error, when not nil,
// is an ErrorList whose messages start with "FILE:LINE:".
func Load(path string) (*Config, []Warning, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, ErrorList{{Pos: Pos{path, 0}, Msg: readError(err)}}
	}
	opts := Options{ReadFile: os.ReadFile}
	gres := filepath.Join(filepath.Dir(path), "gres.conf")
	if st, err := os.Stat(gres); err == nil && st.Mode().IsRegular() {
		opts.GresConf = gres
	}
	cg := filepath.Join(filepath.Dir(path), "cgroup.conf")
	if st, err := os.Stat(cg); err == nil && st.Mode().IsRegular() {
		opts.CgroupConf = cg
	}
	return ParseOptions(path, data, opts)
}

// Parse reads a slurm.conf held in memory; name is used in messages and to
// resolve relative Include paths, which are read from disk.
func Parse(name string, data []byte) (*Config, []Warning, error) {
	return ParseOptions(name, data, Options{ReadFile: os.ReadFile})
}

// ParseOptions is Parse with explicit options.
func ParseOptions(name string, data []byte, opts Options) (*Config, []Warning, error) {
	p := newParser(name, opts)
	p.file(name, data, 0)
	p.finish()
	if p.cfg.Gres == nil && opts.GresConf != "" && opts.ReadFile != nil && len(p.errs) == 0 {
		p.loadGres(opts.GresConf)
	}
	if opts.CgroupConf != "" && opts.ReadFile != nil && len(p.errs) == 0 {
		p.loadCgroup(opts.CgroupConf)
	}
	if p.cfg.Cgroup == nil {
		p.cfg.Cgroup = DefaultCgroupConf()
	}
	p.sortWarnings()
	if len(p.errs) > 0 {
		return nil, p.warns, p.errs
	}
	return p.cfg, p.warns, nil
}

// sortWarnings puts warnings in reading order (files in the order they were
// read, then by line), whichever pass produced them.
func (p *parser) sortWarnings() {
	sort.SliceStable(p.warns, func(i, j int) bool {
		a, b := p.warns[i].Pos, p.warns[j].Pos
		if fa, fb := p.fileOrder[a.File], p.fileOrder[b.File]; fa != fb {
			return fa < fb
		}
		return a.Line < b.Line
	})
}

func readError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("cannot read: %v", pe.Err)
	}
	return err.Error()
}

// parser carries the state of one load.
type parser struct {
	cfg   *Config
	opts  Options
	errs  ErrorList
	warns []Warning

	// seen records where each cluster key was last set.
	seen           map[string]pair
	nodeDefaults   []pair
	partDefaults   []pair
	parts          []*partSpec
	nodeSets       []nodeSetSpec
	downs          []downSpec
	controlAddr    string
	preemptTypePos Pos
	preemptModePos Pos
	preemptModeBad bool
	gresChecks     []gresCheck
	fileOrder      map[string]int
	firstPos       Pos
}

func newParser(name string, opts Options) *parser {
	return &parser{
		cfg:       defaultConfig(name),
		opts:      opts,
		seen:      map[string]pair{},
		fileOrder: map[string]int{},
		firstPos:  Pos{name, 1},
	}
}

// defaultConfig returns a Config holding Slurm's defaults.
func defaultConfig(path string) *Config {
	return &Config{
		Path:                 path,
		SlurmctldPort:        6817,
		SlurmctldPortCount:   1,
		SlurmdPort:           6818,
		StateSaveLocation:    "/var/spool/slurmctld",
		SlurmUser:            "root",
		SlurmdSpoolDir:       "/var/spool/slurmd",
		SelectType:           "select/cons_tres",
		SelectTypeParameters: SelectTypeParameters{Unit: "Core", Memory: true},
		Priority: PriorityConfig{
			Type:                     "priority/multifactor",
			DecayHalfLife:            7 * 24 * time.Hour,
			CalcPeriod:               5 * time.Minute,
			MaxAge:                   7 * 24 * time.Hour,
			UsageResetPeriod:         ResetNone,
			FairShareDampeningFactor: 1,
		},
		Preempt:                PreemptConfig{Type: "preempt/none"},
		SchedulerType:          "sched/backfill",
		SchedulerParameters:    defaultSchedulerParameters(),
		SchedulerTimeSlice:     30 * time.Second,
		Accounting:             AccountingConfig{Port: 6819, TRES: append([]string(nil), defaultTrackedTRES...)},
		KillWait:               30 * time.Second,
		JobAcctGatherFrequency: 30 * time.Second,
		MinJobAge:              300 * time.Second,
		MaxJobCount:            10000,
		MaxArraySize:           1001,
		FirstJobId:             1,
		MaxJobId:               67043328,
		MessageTimeout:         10 * time.Second,
		SlurmdTimeout:          300 * time.Second,
		SlurmctldTimeout:       120 * time.Second,
		ResumeTimeout:          60 * time.Second,
		JobRequeue:             true,
		EnforcePartLimits:      EnforcePartNo,
		MaxTasksPerNode:        512,
		MaxStepCount:           40000,
		TmpFS:                  "/tmp",
		MailProg:               "/bin/mail",
		Unused:                 map[string]UnusedKey{},
		Set:                    map[string]string{},
		nodeIndex:              map[string]*Node{},
		partIndex:              map[string]*Partition{},
	}
}

func (p *parser) errorf(pos Pos, key, format string, a ...any) {
	if len(p.errs) < maxErrors {
		p.errs = append(p.errs, &Error{Pos: pos, Key: key, Msg: fmt.Sprintf(format, a...)})
	}
}

func (p *parser) addErr(e *Error) {
	if len(p.errs) < maxErrors {
		p.errs = append(p.errs, e)
	}
}

func (p *parser) warnf(pr pair, format string, a ...any) {
	p.warns = append(p.warns, Warning{Pos: pr.Pos, Key: pr.Key, Msg: fmt.Sprintf(format, a...)})
}

// file parses one file's statements, following Include lines.
func (p *parser) file(name string, data []byte, depth int) {
	if _, ok := p.fileOrder[name]; !ok {
		p.fileOrder[name] = len(p.fileOrder)
	}
	for _, st := range lex(name, data, p.addErr) {
		if st.Include != "" {
			p.include(st, depth)
			continue
		}
		p.statement(st)
	}
}

// include reads an Include file: %c is the cluster name, a relative path
// is relative to the including file's directory (slurm.conf(5)).
func (p *parser) include(st stmt, depth int) {
	if p.opts.ReadFile == nil {
		p.errorf(st.Pos, "Include", "includes are not allowed here")
		return
	}
	if depth >= maxIncludeDepth {
		p.errorf(st.Pos, "Include", "includes nested deeper than %d (loop?)", maxIncludeDepth)
		return
	}
	path := strings.ReplaceAll(st.Include, "%c", p.cfg.ClusterName)
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(st.Pos.File), path)
	}
	data, err := p.opts.ReadFile(path)
	if err != nil {
		p.errorf(st.Pos, "Include", "%s: %s", path, readError(err))
		return
	}
	p.file(path, data, depth+1)
}

// statement dispatches on the line's first key.
func (p *parser) statement(st stmt) {
	switch strings.ToLower(st.Pairs[0].Key) {
	case "nodename":
		p.nodeLine(st)
	case "partitionname":
		p.partitionLine(st)
	case "nodeset":
		p.nodeSetLine(st)
	case "downnodes":
		p.downNodesLine(st)
	case "frontendname":
		p.keepUnused(st.Pairs[0], "FrontendName")
	default:
		for _, pr := range st.Pairs {
			p.clusterPair(pr)
		}
	}
}

// clusterPair applies one cluster key.
func (p *parser) clusterPair(pr pair) {
	lk := strings.ToLower(pr.Key)
	if k, ok := clusterKeys()[lk]; ok {
		if prev, dup := p.seen[lk]; dup && prev.Value != pr.Value && lk != "slurmctldhost" {
			p.warnf(pr, "set again (previously %s at %s); the last value is used", quote(prev.Value), prev.Pos)
		}
		p.seen[lk] = pr
		p.cfg.Set[k.name] = pr.Value
		if err := k.set(p, pr); err != nil {
			p.errorf(pr.Pos, k.name, "%v", err)
		}
		return
	}
	if name, ok := lookupUnused(lk); ok {
		p.keepUnused(pr, name)
		return
	}
	if isLineKey(lk) {
		p.errorf(pr.Pos, pr.Key, "must start its line")
		return
	}
	p.errorf(pr.Pos, pr.Key, "unrecognized key (not a slurm.conf parameter)")
}

// keepUnused records a known Slurm key without effect, with a warning.
func (p *parser) keepUnused(pr pair, name string) {
	p.cfg.Unused[name] = UnusedKey{Key: name, Value: pr.Value, Pos: pr.Pos}
	p.cfg.Set[name] = pr.Value
	p.warnf(pr, "not used by Sluice (kept, ignored)")
}

func lookupUnused(lk string) (string, bool) {
	k, ok := unusedIndex()[lk]
	return k, ok
}

// unusedIndex maps lower-cased known-but-unused keys to their spelling.
var unusedIndex = sync.OnceValue(func() map[string]string {
	m := make(map[string]string, len(knownUnusedKeys))
	for _, k := range knownUnusedKeys {
		m[strings.ToLower(k)] = k
	}
	return m
})

func isLineKey(lk string) bool {
	switch lk {
	case "nodename", "partitionname", "nodeset", "downnodes", "frontendname":
		return true
	}
	return false
}

// finish resolves what depends on the whole file: controller defaults,
// partitions' node lists, DownNodes, and cross-key consistency.
func (p *parser) finish() {
	c := p.cfg
	if c.ClusterName == "" {
		p.warns = append(p.warns, Warning{Pos: p.firstPos, Key: "ClusterName", Msg: `not set; using "cluster"`})
		c.ClusterName = "cluster"
	}
	if p.controlAddr != "" && len(c.SlurmctldHosts) > 0 {
		c.SlurmctldHosts[0].Addr = p.controlAddr
	}
	if c.SchedulerParameters.BfMaxTime == 0 {
		c.SchedulerParameters.BfMaxTime = c.SchedulerParameters.BfInterval
	}
	if c.SchedulerParameters.MaxArrayTasks == 0 {
		c.SchedulerParameters.MaxArrayTasks = c.MaxArraySize
	}
	if mst := c.MessageTimeout / 2; c.SchedulerParameters.MaxSchedTime > mst && mst >= time.Second {
		c.SchedulerParameters.MaxSchedTime = mst
	}
	if len(c.SlurmctldHosts) == 0 {
		p.warns = append(p.warns, Warning{Pos: p.firstPos, Key: "SlurmctldHost", Msg: `not set; using "localhost"`})
		c.SlurmctldHosts = []ControllerHost{{Name: "localhost", Addr: "localhost"}}
	}
	for _, g := range p.gresChecks {
		if err := p.checkNodeGres(g.gres); err != nil {
			p.errorf(g.head.Pos, "NodeName="+g.head.Value, "Gres: %v", err)
		}
	}
	if err := c.Accounting.finish(c.StateSaveLocation); err != nil {
		p.errorf(p.seen["accountingstoragetype"].Pos, "AccountingStorageLoc", "%v", err)
	}
	p.checkWeights()
	p.checkPreempt()
	p.resolveNodeSets()
	p.resolvePartitions()
	p.resolveDownNodes()
}

// checkWeights rejects a PriorityWeightTRES naming a TRES that is not
// tracked, as slurmctld does ("TRES weight '...' is not a configured TRES
// type"): GRES, licenses and burst buffers must be in AccountingStorageTRES.
// The same holds for a partition's TRESBillingWeights.
func (p *parser) checkWeights() {
	for _, name := range p.cfg.Priority.WeightTRES.Names() {
		if !containsFold(p.cfg.Accounting.TRES, name) {
			p.errorf(p.seen["priorityweighttres"].Pos, "PriorityWeightTRES",
				"TRES weight '%s' is not a configured TRES type (add it to AccountingStorageTRES)", name)
		}
	}
	for _, s := range p.parts {
		for _, name := range s.p.BillingWeights.Names() {
			if !containsFold(p.cfg.Accounting.TRES, name) {
				p.errorf(s.p.Pos, "PartitionName="+s.p.Name+": TRESBillingWeights",
					"TRES weight '%s' is not a configured TRES type (add it to AccountingStorageTRES)", name)
			}
		}
	}
}

// checkPreempt applies slurm.conf(5)'s rules: preemption needs a mode other
// than OFF, and SUSPEND at the cluster level needs GANG.
func (p *parser) checkPreempt() {
	pc := p.cfg.Preempt
	if p.preemptModeBad {
		return
	}
	if pc.Type != "preempt/none" && pc.Mode == PreemptOff {
		pos := p.preemptModePos
		if pos.File == "" {
			pos = p.preemptTypePos
		}
		p.errorf(pos, "PreemptMode", "PreemptType=%s is not compatible with PreemptMode=OFF", pc.Type)
	}
	if pc.Mode.Has(PreemptSuspend) && !pc.Mode.Has(PreemptGang) {
		p.errorf(p.preemptModePos, "PreemptMode", "SUSPEND needs GANG at the cluster level (PreemptMode=SUSPEND,GANG)")
	}
}
