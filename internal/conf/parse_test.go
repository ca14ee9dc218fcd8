package conf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/duration"
)

// TestBrokenConfigs: each broken config gives one error line naming file,
// line and key (the issue's acceptance list first).
func TestBrokenConfigs(t *testing.T) {
	nodes := minimal + cpuNodes("n", 4, 8)
	for _, tc := range []struct {
		name, text, want string
	}{
		{"unknown partition node", nodes + "PartitionName=p Nodes=n[1-5]\n", `t.conf:4: PartitionName=p: Nodes: unknown node "n5"`},
		{"bad time", nodes + "PartitionName=p Nodes=ALL MaxTime=1-2-3\n", `t.conf:4: PartitionName=p: MaxTime: invalid time "1-2-3"`},
		{"missing =", nodes + "PriorityWeightAge 1000\n", `t.conf:4: PriorityWeightAge: missing '='`},
		{"unclosed [", nodes + "PartitionName=p Nodes=n[1-3\n", `t.conf:4: Nodes: unclosed '['`},
		{"unknown key", nodes + "Frobnicate=3\n", `t.conf:4: Frobnicate: unrecognized key`},
		{"bad integer", nodes + "PriorityWeightAge=lots\n", `t.conf:4: PriorityWeightAge: invalid number "lots"`},
		{"bad node key", minimal + "NodeName=x CPUz=4\n", `t.conf:3: NodeName=x: CPUz: unrecognized key`},
		{"bad node cpus", minimal + "NodeName=x CPUs=-4\n", `t.conf:3: NodeName=x: CPUs: value -4 out of range`},
		{"unclosed quote", nodes + "DownNodes=n1 Reason=\"broken fan\n", `t.conf:4: Reason: unclosed '"'`},
		{"bad preempt mode", nodes + "PreemptType=preempt/qos\nPreemptMode=SUSPEND,REQUEUE\n", `t.conf:5: PreemptMode: invalid PreemptMode`},
		{"preempt off", nodes + "PreemptType=preempt/qos\n", `t.conf:4: PreemptMode: PreemptType=preempt/qos is not compatible with PreemptMode=OFF`},
		{"suspend without gang", nodes + "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND\n", `t.conf:5: PreemptMode: SUSPEND needs GANG`},
		{"gres not in GresTypes", minimal + gpuNodes("g", 2, 4, ""), `t.conf:3: NodeName=g[1-2]: Gres: GRES "gpu" is not listed in GresTypes`},
		{"bad oversubscribe", nodes + "PartitionName=p Nodes=ALL OverSubscribe=MAYBE\n", `t.conf:4: PartitionName=p: OverSubscribe: invalid value "MAYBE"`},
		{"bad usage reset", nodes + "PriorityUsageResetPeriod=HOURLY\n", `t.conf:4: PriorityUsageResetPeriod: invalid value "HOURLY"`},
		{"bad storage type", nodes + "AccountingStorageType=accounting_storage/oracle\n", `t.conf:4: AccountingStorageType: invalid value`},
		{"bad TRES weight", nodes + "PriorityWeightTRES=CPU=1,frob=2\n", `t.conf:4: PriorityWeightTRES: TRES weight 'frob=2'`},
		{"bad enforce", nodes + "AccountingStorageEnforce=limits,quotas\n", `t.conf:4: AccountingStorageEnforce: invalid flag "quotas"`},
		{"bad select param", nodes + "SelectTypeParameters=CR_Core,CR_CPU\n", `t.conf:4: SelectTypeParameters:`},
		{"bad sched number", nodes + "SchedulerParameters=bf_window=soon\n", `t.conf:4: SchedulerParameters: option bf_window: invalid number`},
		{"node ALL", minimal + "NodeName=ALL CPUs=1\n", `t.conf:3: NodeName: invalid node name "ALL"`},
		{"node key on cluster line", nodes + "CPUs=4\n", `t.conf:4: CPUs: unrecognized key`},
		{"error on continued line", nodes + "PartitionName=p \\\n  Nodes=ALL \\\n  MaxNodes=many\n", `t.conf:6: PartitionName=p: MaxNodes: invalid number "many"`},
		{"nodehostname count", minimal + "NodeName=n[1-3] NodeHostname=h[1-2]\n", `t.conf:3: NodeName=n[1-3]: NodeHostname names 2 hosts, NodeName 3`},
		{"bad default time", nodes + "PartitionName=p Nodes=ALL DefaultTime=soon\n", `t.conf:4: PartitionName=p: DefaultTime: invalid time "soon"`},
		// Issue 17: Slurm refuses to start ("fatal: Duplicated NodeName n1
		// in the config file"); the first line used to be kept silently.
		{"duplicate node", nodes + "NodeName=n1 CPUs=4\n", `t.conf:4: NodeName=n1: Duplicated NodeName n1 in the config file (first defined at t.conf:3)`},
		{"include refused", minimal + "Include other.conf\n", `t.conf:3: Include: includes are not allowed here`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := parseFail(t, tc.text)
			if strings.Contains(msg, "\n") {
				t.Errorf("want one error line, got:\n%s", msg)
			}
			if !strings.HasPrefix(msg, tc.want) && !strings.Contains(msg, tc.want) {
				t.Errorf("error = %q\nwant it to contain %q", msg, tc.want)
			}
			if !strings.HasPrefix(msg, "t.conf:") {
				t.Errorf("error %q does not start with FILE:LINE", msg)
			}
		})
	}
}

// TestNoCascade: a node line with a bad value reports that value only; the
// partitions naming its nodes do not fail too.
func TestNoCascade(t *testing.T) {
	for _, text := range []string{
		minimal + "NodeName=n[1-4] CPUs=four\nPartitionName=p Nodes=n[1-4]\n",
		minimal + "NodeName=n[1-4] Gres=gpu:[2\nPartitionName=p Nodes=n[1-4]\n",
	} {
		msg := parseFail(t, text)
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "t.conf:3:") {
			t.Errorf("want one error at line 3, got:\n%s", msg)
		}
	}
}

// TestSeveralErrorsAllReported: parsing goes on after an error.
func TestSeveralErrorsAllReported(t *testing.T) {
	msg := parseFail(t, minimal+"Foo=1\nBar=2\nNodeName=x CPUs=a\n")
	lines := strings.Split(msg, "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "t.conf:3:") || !strings.HasPrefix(lines[2], "t.conf:5:") {
		t.Errorf("errors:\n%s", msg)
	}
}

// TestLexing covers comments, continuation, case-insensitive keys, quoted
// values, spaces around "=", and "\#".
func TestLexing(t *testing.T) {
	c, _ := parseOK(t, "\ufeff"+`# comment line
clustername=Lab   # trailing comment
SLURMCTLDHOST=ctl(10.0.0.1)
SchedulerParameters=bf_max_job_test=1000,bf_resolution=600,\
bf_max_time=60,bf_continue,bf_window=2880
NodeName = n[1-2] CPUs=4 Features=a,b \
   State=UNKNOWN
DownNodes=n2 State=DRAIN Reason="fan \#3 broken"
PartitionName=p Nodes=ALL Default=yes TRESBillingWeights="CPU=1.0,Mem=0.25G"
`)
	if c.ClusterName != "lab" {
		t.Errorf("ClusterName = %q (Slurm lower-cases it)", c.ClusterName)
	}
	if len(c.SlurmctldHosts) != 1 || c.SlurmctldHosts[0] != (ControllerHost{"ctl", "10.0.0.1"}) {
		t.Errorf("SlurmctldHosts = %+v", c.SlurmctldHosts)
	}
	sp := c.SchedulerParameters
	if sp.BfMaxJobTest != 1000 || sp.BfMaxTime != 60*time.Second || !sp.BfContinue || sp.BfWindow != 2880*time.Minute {
		t.Errorf("continued SchedulerParameters = %+v", sp)
	}
	if w := c.Partition("p").BillingWeights; w["cpu"] != 1 || w["mem"] != 0.25/1024 {
		t.Errorf("quoted TRESBillingWeights = %v", w)
	}
	n2 := c.Node("n2")
	if n2 == nil || n2.State != "DRAIN" || n2.Reason != "fan #3 broken" || len(n2.Features) != 2 {
		t.Errorf("n2 = %+v", n2)
	}
}

// TestLinePositions: a key on a continuation line is reported at its own
// physical line, and included files at theirs.
func TestIncludes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("lab_nodes.conf", "NodeName=n[1-4] CPUs=8\n")
	write("parts.conf", "PartitionName=p Nodes=n[1-4] Default=YES\nPartitionName=q Nodes=n9\n")
	main := write("slurm.conf", "ClusterName=lab\nInclude %c_nodes.conf\ninclude "+filepath.Join(dir, "parts.conf")+"\n")
	_, _, err := Load(main)
	if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, "parts.conf")+":2: PartitionName=q: Nodes: unknown node") {
		t.Fatalf("error = %v", err)
	}
	write("parts.conf", "PartitionName=p Nodes=n[1-4] Default=YES\n")
	c, _, err := Load(main)
	if err != nil || len(c.Nodes) != 4 || c.DefaultPartition != "p" {
		t.Fatalf("c=%v err=%v", c, err)
	}
	write("loop.conf", "Include loop.conf\n")
	_, _, err = Load(filepath.Join(dir, "loop.conf"))
	if err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("include loop: %v", err)
	}
	_, _, err = Load(write("missing.conf", "Include nowhere.conf\n"))
	if err == nil || !strings.Contains(err.Error(), "missing.conf:1: Include:") {
		t.Errorf("missing include: %v", err)
	}
}

// TestUnusedKeysWarn: a key Slurm knows but Sluice ignores is kept and
// reported with its position.
func TestUnusedKeysWarn(t *testing.T) {
	c, w := parseOK(t, minimal+"TaskPlugin=task/cgroup\nproctracktype=proctrack/cgroup\n"+cpuNodes("n", 1, 1)+"PartitionName=p Nodes=ALL\n")
	if c.Unused["TaskPlugin"].Value != "task/cgroup" || c.Unused["ProctrackType"].Pos.Line != 4 {
		t.Errorf("Unused = %+v", c.Unused)
	}
	if !hasWarning(w, "t.conf:3: TaskPlugin: not used by Sluice") {
		t.Errorf("warnings = %v", w)
	}
}

// TestDefaults: a bare config carries Slurm's documented defaults.
func TestDefaults(t *testing.T) {
	c, w := parseOK(t, "NodeName=n1\nPartitionName=p Nodes=n1\n")
	if !hasWarning(w, "ClusterName", "not set") {
		t.Errorf("no ClusterName warning: %v", w)
	}
	n := c.Node("n1")
	if n.CPUs != 1 || n.RealMemory != 1 || n.Weight != 1 || n.State != "UNKNOWN" {
		t.Errorf("node defaults = %+v", n)
	}
	p := c.Partition("p")
	if p.MaxTime != duration.Infinite || p.PriorityTier != 1 || p.PriorityJobFactor != 1 || p.State != "UP" ||
		p.MaxNodes != Unlimited || p.OverSubscribe != (OverSubscribe{OverSubscribeNo, 1}) || p.Default {
		t.Errorf("partition defaults = %+v", p)
	}
	if c.DefaultPartition != "" {
		t.Errorf("no Default=YES, yet default partition %q", c.DefaultPartition)
	}
	pr := c.Priority
	if pr.Type != "priority/multifactor" || pr.DecayHalfLife != 7*24*time.Hour || pr.CalcPeriod != 5*time.Minute ||
		pr.MaxAge != 7*24*time.Hour || pr.UsageResetPeriod != ResetNone || !pr.Flags.FairTree() || pr.WeightAge != 0 {
		t.Errorf("priority defaults = %+v", pr)
	}
	sp := c.SchedulerParameters
	if sp.BfMaxJobTest != 500 || sp.BfInterval != 30*time.Second || sp.BfMaxTime != 30*time.Second ||
		sp.BfResolution != time.Minute || sp.BfWindow != 24*time.Hour || sp.DefaultQueueDepth != 100 ||
		sp.SchedInterval != time.Minute || sp.BatchSchedDelay != 3*time.Second || sp.BfMaxJobArrayResv != 20 ||
		sp.MaxSchedTime != 2*time.Second || sp.MaxArrayTasks != 1001 {
		t.Errorf("scheduler defaults = %+v", sp)
	}
	if c.SchedulerType != "sched/backfill" || c.SelectType != "select/cons_tres" || c.SelectTypeParameters.String() != "CR_CORE_MEMORY" ||
		c.Preempt.Type != "preempt/none" || c.Preempt.Mode != PreemptOff || c.SchedulerTimeSlice != 30*time.Second ||
		c.MaxJobCount != 10000 || c.MinJobAge != 300*time.Second || c.MaxArraySize != 1001 || !c.JobRequeue ||
		c.EnforcePartLimits != EnforcePartNo || c.KillWait != 30*time.Second || c.FirstJobId != 1 ||
		c.SlurmctldPort != 6817 || c.SlurmdPort != 6818 {
		t.Errorf("cluster defaults = %+v", c)
	}
	if c.Accounting.Store != StoreSQLite || c.Accounting.Loc != "/var/spool/slurmctld/sluice.db" || c.Accounting.Enforce != 0 {
		t.Errorf("accounting defaults = %+v", c.Accounting)
	}
}

// TestNodeDefaultsAccumulate: each NodeName=DEFAULT line adds to or
// replaces earlier defaults, and a node line overrides them.
func TestNodeDefaultsAccumulate(t *testing.T) {
	c, _ := parseOK(t, minimal+`GresTypes=gpu
NodeName=DEFAULT Sockets=2 CoresPerSocket=8 RealMemory=64000
NodeName=a1
NodeName=DEFAULT ThreadsPerCore=2 Gres=gpu:2
NodeName=b1
NodeName=b2 Gres=gpu:v100:4 Sockets=1
NodeName=c1 CPUs=12
NodeName=d1 Boards=2 Sockets=2 CoresPerSocket=4 ThreadsPerCore=1
NodeName=DEFAULT State=DRAIN
NodeName=e1 CPUs=16 CoresPerSocket=4 ThreadsPerCore=1
PartitionName=p Nodes=ALL Default=YES
`)
	for _, tc := range []struct {
		name          string
		cpus, sockets int
		gpus          int64
		mem           int64
		state         string
	}{
		{"a1", 16, 2, 0, 64000, "UNKNOWN"},
		{"b1", 32, 2, 2, 64000, "UNKNOWN"},
		{"b2", 16, 1, 4, 64000, "UNKNOWN"},
		{"c1", 12, 2, 2, 64000, "UNKNOWN"},
		{"d1", 16, 4, 2, 64000, "UNKNOWN"},
		{"e1", 16, 2, 2, 64000, "DRAIN"}, // Sockets=2 comes from the DEFAULT line
	} {
		n := c.Node(tc.name)
		if n == nil || n.CPUs != tc.cpus || n.Sockets != tc.sockets || n.GresCount("gpu", "") != tc.gpus || n.RealMemory != tc.mem || n.State != tc.state {
			t.Errorf("%s = %+v\nwant cpus %d sockets %d gpus %d mem %d state %s", tc.name, n, tc.cpus, tc.sockets, tc.gpus, tc.mem, tc.state)
		}
	}
}

// TestPartitionKeys covers DEFAULT lines, legacy Priority, OverSubscribe
// forms, lists, and the default-partition rule (the last Default=YES wins).
func TestPartitionKeys(t *testing.T) {
	c, w := parseOK(t, minimal+cpuNodes("n", 8, 4)+`PartitionName=DEFAULT State=UP MaxTime=1-0 DefaultTime=30 AllowQos=normal
PartitionName=a Nodes=n[1-4] Default=YES Priority=10 OverSubscribe=FORCE
PartitionName=b Nodes=n[3-8],n1 PriorityTier=5 PriorityJobFactor=7 OverSubscribe=YES:2 AllowQos=ALL
PartitionName=DEFAULT MaxTime=UNLIMITED
PartitionName=c Nodes=ALL Default=YES Hidden=YES GraceTime=120 PreemptMode=CANCEL AllowAccounts=x,y DenyAccounts=z \
  OverSubscribe=EXCLUSIVE MaxNodes=2 MinNodes=1 DefMemPerCPU=2048 MaxMemPerCPU=4096 QOS=part State=DRAIN \
  TRESBillingWeights=CPU=1.0,Mem=0.25G
PartitionName=d Nodes= State=INACTIVE
PartitionName=e Nodes=n1 MaxTime=1:30
`)
	if e := c.Partition("e"); e.MaxTime != 2*time.Minute {
		t.Errorf("MaxTime=1:30 (min:sec) = %v, want rounded up to 2m", e.MaxTime)
	}
	a, b, cc, d := c.Partition("a"), c.Partition("b"), c.Partition("c"), c.Partition("d")
	if c.DefaultPartition != "c" || a.Default || !cc.Default || !hasWarning(w, "changing default partition from a to c") {
		t.Errorf("default = %q a.Default=%v warnings %v", c.DefaultPartition, a.Default, w)
	}
	if a.PriorityTier != 10 || a.PriorityJobFactor != 10 || a.OverSubscribe != (OverSubscribe{OverSubscribeForce, 4}) ||
		a.MaxTime != 24*time.Hour || a.DefaultTime != 30*time.Minute || len(a.AllowQos) != 1 {
		t.Errorf("a = %+v", a)
	}
	if b.PriorityTier != 5 || b.PriorityJobFactor != 7 || b.OverSubscribe != (OverSubscribe{OverSubscribeYes, 2}) ||
		b.AllowQos != nil || strings.Join(b.Nodes, ",") != "n3,n4,n5,n6,n7,n8,n1" {
		t.Errorf("b = %+v", b)
	}
	if cc.MaxTime != duration.Infinite || len(cc.Nodes) != 8 || !cc.Hidden || cc.GraceTime != 2*time.Minute ||
		!cc.HasPreemptMode || cc.PreemptMode != PreemptCancel || cc.OverSubscribe.Mode != OverSubscribeExclusive ||
		cc.MaxNodes != 2 || cc.DefMemPerCPU != 2048 || cc.QOS != "part" || cc.State != "DRAIN" || len(cc.DenyAccounts) != 1 {
		t.Errorf("c = %+v", cc)
	}
	// billing over 8 nodes x (4 CPU, 1000 MB): 32*1.0 + 8000*0.25/1024 = 33.95 -> 33
	if got := c.PartitionTRES(cc)["billing"]; got != 33 {
		t.Errorf("c billing = %d, want 33", got)
	}
	if len(d.Nodes) != 0 || d.State != "INACTIVE" {
		t.Errorf("d = %+v", d)
	}
}

// TestValueSets covers the flag sets and enums.
func TestValueSets(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{"OFF", "OFF", false}, {"requeue", "REQUEUE", false}, {"SUSPEND,GANG", "GANG,SUSPEND", false},
		{"CANCEL,WITHIN", "CANCEL,WITHIN", false}, {"GANG", "GANG", false}, {"PRIORITY,REQUEUE", "REQUEUE,PRIORITY", false},
		{"OFF,GANG", "", true}, {"SUSPEND,CANCEL", "", true}, {"KILL", "", true},
	} {
		m, err := ParsePreemptMode(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && m.String() != tc.want) {
			t.Errorf("PreemptMode %q = %v, %v; want %q bad=%v", tc.in, m, err, tc.want, tc.bad)
		}
	}
	for _, tc := range []struct {
		in   string
		want EnforceFlags
	}{
		{"limits", EnforceLimits | EnforceAssociations},
		{"safe", EnforceSafe | EnforceLimits | EnforceAssociations},
		{"associations,limits,qos", EnforceAssociations | EnforceLimits | EnforceQOS},
		{"all", EnforceAssociations | EnforceLimits | EnforceQOS | EnforceSafe | EnforceWCKeys},
		{"nojobs", EnforceNoJobs | EnforceNoSteps},
	} {
		if e, err := parseEnforce(tc.in); err != nil || e != tc.want {
			t.Errorf("Enforce %q = %v (%v), want %v", tc.in, e, err, tc.want)
		}
	}
	f, err := parsePriorityFlags("DEPTH_OBLIVIOUS,NO_NORMAL_ALL,max_tres")
	if err != nil || f.FairTree() || !f.Has(FlagNoNormalQOS|FlagNoNormalPart|FlagMaxTRES|FlagNoFairTree) {
		t.Errorf("PriorityFlags = %v %v", f, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"CR_Core_Memory", "CR_CORE_MEMORY"}, {"CR_CPU", "CR_CPU"}, {"CR_Socket_Memory,CR_LLN", "CR_SOCKET_MEMORY,CR_LLN"},
		{"CR_Memory", "CR_MEMORY"}, {"CR_CPU_Memory,CR_ONE_TASK_PER_CORE", "CR_CPU_MEMORY,CR_ONE_TASK_PER_CORE"},
	} {
		s, err := parseSelectTypeParameters(tc.in)
		if err != nil || s.String() != tc.want {
			t.Errorf("SelectTypeParameters %q = %q (%v), want %q", tc.in, s, err, tc.want)
		}
	}
	l, err := parseLicenses("matlab:4,ansys:2,foo")
	if err != nil || len(l) != 3 || l[0] != (License{"matlab", 4}) || l[2] != (License{"foo", 1}) {
		t.Errorf("Licenses = %v %v", l, err)
	}
}

// TestNodeGres covers the Gres forms of node lines.
func TestNodeGres(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []GresSpec
		bad  bool
	}{
		{"gpu:8", []GresSpec{{"gpu", "", 8, false}}, false},
		{"gpu:a100:8", []GresSpec{{"gpu", "a100", 8, false}}, false},
		{"gpu:a100:8(S:0-1)", []GresSpec{{"gpu", "a100", 8, false}}, false},
		{"gpu:a100:4(S:0),gpu:h100:4(S:1)", []GresSpec{{"gpu", "a100", 4, false}, {"gpu", "h100", 4, false}}, false},
		{"gpu:2,mps:200", []GresSpec{{"gpu", "", 2, false}, {"mps", "", 200, false}}, false},
		{"bandwidth:lustre:no_consume:4G", []GresSpec{{"bandwidth", "lustre", 4 << 30, true}}, false},
		{"gpu", []GresSpec{{"gpu", "", 1, false}}, false},
		{"GPU:A100:2", []GresSpec{{"gpu", "a100", 2, false}}, false},
		{"gpu:a100:x", nil, true},
		{"gpu:a:b:c:d", nil, true},
		{":4", nil, true},
	} {
		g, err := parseNodeGres(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("Gres %q: err %v, bad=%v", tc.in, err, tc.bad)
			continue
		}
		if !tc.bad && !equalGres(g, tc.want) {
			t.Errorf("Gres %q = %+v, want %+v", tc.in, g, tc.want)
		}
	}
}

func equalGres(a, b []GresSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAccountingStore: Sluice's store choice in Slurm's vocabulary.
func TestAccountingStore(t *testing.T) {
	base := minimal + "StateSaveLocation=/srv/state\n"
	c, _ := parseOK(t, base)
	if c.Accounting.Store != StoreSQLite || c.Accounting.Loc != "/srv/state/sluice.db" {
		t.Errorf("default store = %+v", c.Accounting)
	}
	c, _ = parseOK(t, base+"AccountingStorageType=accounting_storage/pgsql\nAccountingStorageLoc=postgres://u:p@db/sluice\n")
	if c.Accounting.Store != StorePostgres || c.Accounting.Loc != "postgres://u:p@db/sluice" {
		t.Errorf("pgsql store = %+v", c.Accounting)
	}
	c, w := parseOK(t, base+"AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageEnforce=associations,limits,qos\n")
	if c.Accounting.Store != StoreSQLite || !hasWarning(w, "t.conf:4: AccountingStorageType", "SQLite") || !c.Accounting.Enforce.Has(EnforceQOS) {
		t.Errorf("slurmdbd = %+v %v", c.Accounting, w)
	}
	c, _ = parseOK(t, base+"AccountingStorageTRES=gres/gpu,license/matlab\nAccountingStorageLoc=/tmp/x.db\n")
	if c.Accounting.Loc != "/tmp/x.db" || strings.Join(c.Accounting.TRES, ",") != "cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu,license/matlab" {
		t.Errorf("tracked TRES = %v loc %s", c.Accounting.TRES, c.Accounting.Loc)
	}
}

// TestSchedulerParameters: typed options, kept extras, and Slurm's
// out-of-range handling (warning, default kept).
func TestSchedulerParameters(t *testing.T) {
	var warns []string
	s, err := parseSchedulerParameters("bf_interval=60,bf_window=99999,max_rpc_cnt=150,frobnicate,default_queue_depth=50,bf_yield_sleep=100000", func(m string) { warns = append(warns, m) })
	if err != nil {
		t.Fatal(err)
	}
	if s.BfInterval != time.Minute || s.BfMaxTime != time.Minute || s.BfWindow != 24*time.Hour || s.DefaultQueueDepth != 50 || s.BfYieldSleep != 100*time.Millisecond {
		t.Errorf("parsed = %+v", s)
	}
	if s.Other["max_rpc_cnt"] != "150" || len(s.Unused) != 2 {
		t.Errorf("other = %v unused %v", s.Other, s.Unused)
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "bf_window") || !strings.Contains(warns[1], "frobnicate") {
		t.Errorf("warnings = %v", warns)
	}
	s, _ = parseSchedulerParameters("bf_interval=-1", func(string) {})
	if !s.BackfillDisabled {
		t.Errorf("bf_interval=-1 should disable backfill")
	}
}

// TestCrossKeyChecks: rules that involve several keys, whatever their order.
func TestCrossKeyChecks(t *testing.T) {
	nodes := minimal + cpuNodes("n", 2, 4) + "PartitionName=p Nodes=ALL\n"
	msg := parseFail(t, nodes+"PriorityWeightTRES=CPU=1,GRES/gpu=100\n")
	if !strings.HasPrefix(msg, "t.conf:5: PriorityWeightTRES: TRES weight 'gres/gpu' is not a configured TRES type") {
		t.Errorf("untracked weight: %s", msg)
	}
	parseOK(t, nodes+"PriorityWeightTRES=CPU=1,GRES/gpu=100\nAccountingStorageTRES=gres/gpu\n")
	msg = parseFail(t, minimal+cpuNodes("n", 2, 4)+"PartitionName=p Nodes=ALL TRESBillingWeights=CPU=1,license/matlab=5\n")
	if !strings.HasPrefix(msg, "t.conf:4: PartitionName=p: TRESBillingWeights: TRES weight 'license/matlab' is not a configured TRES type") {
		t.Errorf("untracked billing weight: %s", msg)
	}
	// GresTypes may follow the node lines that use it.
	c, _ := parseOK(t, minimal+gpuNodes("g", 2, 4, "a100")+"GresTypes=gpu\n")
	if c.TotalTRES()["gres/gpu:a100"] != 8 {
		t.Errorf("TRES = %s", c.TotalTRES())
	}
	msg = parseFail(t, nodes+"AccountingStorageType=accounting_storage/pgsql\n")
	if !strings.HasPrefix(msg, "t.conf:5: AccountingStorageLoc: accounting_storage/pgsql needs AccountingStorageLoc") {
		t.Errorf("pgsql without loc: %s", msg)
	}
	c, _ = parseOK(t, nodes+"AccountingStorageType=accounting_storage/pgsql\nAccountingStorageHost=db1\nAccountingStorageUser=slurm\n")
	if c.Accounting.Loc != "postgres://slurm@db1:5432/sluice" {
		t.Errorf("built DSN = %q", c.Accounting.Loc)
	}
	_, w := parseOK(t, "ClusterName=x\n"+cpuNodes("n", 1, 1))
	if !hasWarning(w, "SlurmctldHost", "localhost") {
		t.Errorf("warnings = %v", w)
	}
}

// TestNodeSetsAndDownNodes: NodeSet names usable in Nodes=, DownNodes
// applied to the nodes' state.
func TestNodeSetsAndDownNodes(t *testing.T) {
	c, _ := parseOK(t, minimal+`NodeName=a[1-3] CPUs=4 Features=fast
NodeName=b[1-2] CPUs=4
NodeSet=fastset Feature=fast
NodeSet=bs Nodes=b[1-2]
DownNodes=b2 State=DRAIN Reason="disk"
PartitionName=p Nodes=fastset,bs Default=YES
`)
	if got := strings.Join(c.Partition("p").Nodes, ","); got != "a1,a2,a3,b1,b2" {
		t.Errorf("p nodes = %s", got)
	}
	if n := c.Node("b2"); n.State != "DRAIN" || n.Reason != "disk" || len(c.DownNodes) != 1 {
		t.Errorf("b2 = %+v", n)
	}
	msg := parseFail(t, minimal+"NodeName=a1\nDownNodes=a9\n")
	if !strings.HasPrefix(msg, `t.conf:4: DownNodes: unknown node "a9"`) {
		t.Errorf("DownNodes error: %s", msg)
	}
}

// TestNodeAddresses: NodeHostname and NodeAddr ranges pair up with NodeName.
func TestNodeAddresses(t *testing.T) {
	c, _ := parseOK(t, minimal+"NodeName=lx[0-2] NodeHostname=host[10-12] NodeAddr=10.0.0.[1-3] Port=7000\n")
	n := c.Node("lx2")
	if n == nil || n.Hostname != "host12" || n.Addr != "10.0.0.3" || n.Port != 7000 {
		t.Errorf("lx2 = %+v", n)
	}
	c, _ = parseOK(t, minimal+"NodeName=a NodeHostname=a.example.org\n")
	if n := c.Node("a"); n.Addr != "a.example.org" {
		t.Errorf("NodeAddr defaults to NodeHostname: %+v", n)
	}
}

// TestGresConfCounts: gres.conf counts that disagree with a node's Gres=
// are reported once per GRES name, at the gres.conf line.
func TestGresConfCounts(t *testing.T) {
	dir := t.TempDir()
	slurm := filepath.Join(dir, "slurm.conf")
	writeFile(t, slurm, minimal+"GresTypes=gpu\n"+gpuNodes("g", 4, 4, "a100")+"PartitionName=p Nodes=ALL\n")
	writeFile(t, filepath.Join(dir, "gres.conf"), "NodeName=g[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-3]\nNodeName=g[3-4] Name=gpu Count=2\n")
	c, w, err := Load(slurm)
	if err != nil || c.Gres == nil {
		t.Fatal(err)
	}
	if !hasWarning(w, "gres.conf:2: Name=gpu: gres.conf gives node g3 2 gpu, slurm.conf Gres= says 4") || hasWarning(w, "node g1") {
		t.Errorf("warnings = %v", w)
	}
	writeFile(t, filepath.Join(dir, "gres.conf"), "Name=mps Count=100\n")
	_, _, err = Load(slurm)
	if err == nil || !strings.Contains(err.Error(), `gres.conf:1: Name: GRES "mps" is not listed in slurm.conf GresTypes`) {
		t.Errorf("mps not in GresTypes: %v", err)
	}
}

// writeFile writes a test file or fails the test.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLiteralConfig: helpers work on a Config built as a literal, as other
// packages' tests do.
func TestLiteralConfig(t *testing.T) {
	c := &Config{
		Nodes:      []*Node{{Name: "a", CPUs: 4, RealMemory: 100, Gres: []GresSpec{{Name: "gpu", Type: "a100", Count: 2}}}},
		Partitions: []*Partition{{Name: "p", Nodes: []string{"a"}}},
	}
	if c.Node("a") == nil || c.Partition("p") == nil || c.PartitionTRES(c.Partition("p")).String() != "cpu=4,mem=100M,node=1,billing=4,gres/gpu=2,gres/gpu:a100=2" {
		t.Errorf("literal config: node %v partition %v TRES %s", c.Node("a"), c.Partition("p"), c.PartitionTRES(c.Partitions[0]))
	}
}

// TestClusterKeys: typed cluster keys read their documented units.
func TestClusterKeys(t *testing.T) {
	c, _ := parseOK(t, minimal+`SlurmctldPort=6817-6820
SlurmdPort=7003
EnforcePartLimits=YES
OverTimeLimit=UNLIMITED
ResvOverRun=15
KillWait=45
MinJobAge=3600
MaxJobCount=50000
MaxArraySize=20001
FirstJobId=65536
InactiveLimit=120
SchedulerTimeSlice=60
JobRequeue=0
DefMemPerCPU=2048
Licenses=matlab:4,ansys:2
PriorityWeightAge=1000
PriorityDecayHalfLife=14-0
PriorityCalcPeriod=1
PriorityUsageResetPeriod=monthly
PriorityFavorSmall=YES
PreemptExemptTime=300
SchedulerParameters=bf_interval=60,sched_interval=30,bf_max_job_user=20
`)
	if c.SlurmctldPort != 6817 || c.SlurmctldPortCount != 4 || c.SlurmdPort != 7003 || c.EnforcePartLimits != EnforcePartAll ||
		c.OverTimeLimit != duration.Infinite || c.ResvOverRun != 15*time.Minute || c.KillWait != 45*time.Second || c.MinJobAge != time.Hour ||
		c.MaxJobCount != 50000 || c.MaxArraySize != 20001 || c.FirstJobId != 65536 || c.InactiveLimit != 2*time.Minute ||
		c.SchedulerTimeSlice != time.Minute || c.JobRequeue || c.DefMemPerCPU != 2048 || len(c.Licenses) != 2 {
		t.Errorf("cluster keys = %+v", c)
	}
	if c.TotalTRES()["license/matlab"] != 4 {
		t.Errorf("licenses in TRES: %s", c.TotalTRES())
	}
	p := c.Priority
	if p.WeightAge != 1000 || p.DecayHalfLife != 14*24*time.Hour || p.CalcPeriod != time.Minute ||
		p.UsageResetPeriod != ResetMonthly || !p.FavorSmall {
		t.Errorf("priority = %+v", p)
	}
	// slurm.conf(5): PreemptExemptTime takes Slurm time strings; a bare number is minutes.
	if c.Preempt.ExemptTime != 5*time.Hour {
		t.Errorf("PreemptExemptTime=300 = %v, want 5h", c.Preempt.ExemptTime)
	}
	if s := c.SchedulerParameters; s.BfInterval != time.Minute || s.BfMaxTime != time.Minute || s.SchedInterval != 30*time.Second || s.BfMaxJobUser != 20 {
		t.Errorf("sched = %+v", s)
	}
}

// TestPrologFlags: Contain, or X11 which implies it, makes jobs
// contained (an extern step each); other documented flags are accepted;
// an unknown one is an error that names the file and line.
func TestPrologFlags(t *testing.T) {
	for _, tc := range []struct {
		flags   string
		contain bool
	}{
		{"Contain", true}, {"alloc,contain", true}, {"X11", true}, {"Alloc,Serial", false}, {"NoHold", false},
	} {
		c, _ := parseOK(t, minimal+"PrologFlags="+tc.flags+"\n")
		if c.ContainJobs() != tc.contain {
			t.Errorf("PrologFlags=%s: ContainJobs %v, want %v", tc.flags, c.ContainJobs(), tc.contain)
		}
	}
	if c, _ := parseOK(t, minimal); c.ContainJobs() {
		t.Error("no PrologFlags: jobs contained")
	}
	if msg := parseFail(t, minimal+"PrologFlags=Contain,Bogus\n"); !strings.Contains(msg, "t.conf:3") || !strings.Contains(msg, `"Bogus"`) {
		t.Errorf("error %q, want file:line and the bad flag", msg)
	}
}
