package ctld

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// partCmd runs one scontrol partition command as root (over the socket).
func (c *cluster) partCmd(verb string, words ...string) error {
	_, err := c.client.PartitionCommand(c.ctx(), api.PartitionCommandRequest{Verb: verb, Words: words})
	return err
}

// mustPart runs a partition command that must succeed.
func (c *cluster) mustPart(verb string, words ...string) {
	c.t.Helper()
	if err := c.partCmd(verb, words...); err != nil {
		c.t.Fatalf("%s %s: %v", verb, strings.Join(words, " "), err)
	}
}

// partition returns the partition record named name.
func (c *cluster) partition(name string) (api.PartitionRecord, bool) {
	c.t.Helper()
	res, err := c.client.Partitions(c.ctx())
	if err != nil {
		c.t.Fatal(err)
	}
	for _, p := range res.Partitions {
		if p.Name == name {
			return p, true
		}
	}
	return api.PartitionRecord{}, false
}

// partitionNames lists the partitions in order, the default marked '*'.
func (c *cluster) partitionNames() string {
	c.t.Helper()
	res, err := c.client.Partitions(c.ctx())
	if err != nil {
		c.t.Fatal(err)
	}
	var out []string
	for _, p := range res.Partitions {
		n := p.Name
		if p.Default {
			n += "*"
		}
		out = append(out, n)
	}
	return strings.Join(out, " ")
}

func inPart(names ...string) func(*api.JobSpec) {
	return func(s *api.JobSpec) { s.Partitions = names }
}

// TestPartitionCreateUpdateDelete: a partition made with scontrol create
// takes jobs at once, State=DOWN keeps its pending jobs pending with
// PartitionDown (UP starts them), INACTIVE refuses new jobs, and delete
// is refused while a job is pending in it, accepted once it is gone.
func TestPartitionCreateUpdateDelete(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b backend) {
		c := newCluster(t, b.open(t), clusterOpts{nodes: 2})
		c.mustPart(api.PartitionCreate, "PartitionName=gpu", "Nodes=n2", "MaxTime=30", "PriorityTier=5",
			"PriorityJobFactor=3", "AllowAccounts=ALL", "OverSubscribe=NO")
		p, ok := c.partition("gpu")
		if !ok || p.Nodes != "n2" || p.MaxTimeSec != 1800 || p.PriorityTier != 5 || p.PriorityJobFactor != 3 ||
			p.State != "UP" || p.TotalCPUs != 2 || p.Default {
			t.Fatalf("created partition: %+v", p)
		}
		if got := c.partitionNames(); got != "debug* gpu" {
			t.Fatalf("partitions: %q", got)
		}
		ran := c.submit(c.wrap("true", inPart("gpu")))
		if j := c.waitState(ran, "COMPLETED", 10*time.Second); j.NodeList != "n2" || j.Partition != "gpu" {
			t.Errorf("job in gpu ran on %q in %q", j.NodeList, j.Partition)
		}

		c.mustPart(api.PartitionUpdate, "PartitionName=gpu", "State=DOWN")
		waiting := c.submit(c.wrap("true", inPart("gpu")))
		c.eventually(5*time.Second, "job pending with PartitionDown", func() bool {
			j, _ := c.jobByID(waiting)
			return j.State == "PENDING" && j.Reason == "PartitionDown"
		})
		time.Sleep(100 * time.Millisecond) // a few scheduling cycles: it stays pending
		if j, _ := c.jobByID(waiting); j.State != "PENDING" {
			t.Fatalf("job in a DOWN partition: %s", j.State)
		}
		err := c.partCmd(api.PartitionDelete, "PartitionName=gpu")
		if err == nil || err.Error() != "Partition is in use" {
			t.Fatalf("delete with a pending job: %v", err)
		}
		c.mustPart(api.PartitionUpdate, "PartitionName=gpu", "State=UP")
		c.waitState(waiting, "COMPLETED", 10*time.Second)

		c.mustPart(api.PartitionUpdate, "PartitionName=gpu", "State=INACTIVE")
		_, err = c.client.Submit(c.ctx(), api.SubmitRequest{Spec: c.wrap("true", inPart("gpu"))})
		if err == nil || !strings.Contains(err.Error(), "Required partition not available (inactive or drain)") {
			t.Fatalf("submit to an INACTIVE partition: %v", err)
		}
		c.mustPart(api.PartitionDelete, "PartitionName=gpu")
		if _, ok := c.partition("gpu"); ok {
			t.Fatal("gpu still listed after delete")
		}
		_, err = c.client.Submit(c.ctx(), api.SubmitRequest{Spec: c.wrap("true", inPart("gpu"))})
		if err == nil || !strings.Contains(err.Error(), "Invalid partition name specified") {
			t.Fatalf("submit to a deleted partition: %v", err)
		}
		if j := c.job(ran); j.Partition != "" && j.Partition != "gpu" {
			t.Errorf("finished job's partition after delete: %q", j.Partition)
		}
		if err := c.partCmd(api.PartitionDelete, "PartitionName=gpu"); err == nil ||
			err.Error() != "Invalid partition name specified" {
			t.Errorf("delete twice: %v", err)
		}
	})
}

// TestPartitionAdminOnly: a plain user gets Slurm's access-denied error
// for every change (a malformed command still gets scontrol's usage
// message first); nothing changes.
func TestPartitionAdminOnly(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	before := c.partitionNames()
	cases := []struct {
		verb  string
		words []string
		code  int
		msg   string
	}{
		{api.PartitionCreate, []string{"PartitionName=mine", "Nodes=n1"}, http.StatusForbidden, "Access/permission denied"},
		{api.PartitionUpdate, []string{"PartitionName=debug", "State=DOWN"}, http.StatusForbidden, "Access/permission denied"},
		{api.PartitionDelete, []string{"PartitionName=debug"}, http.StatusForbidden, "Access/permission denied"},
		{api.PartitionUpdate, []string{"PartitionName=debug", "MaxTime=soon"}, http.StatusBadRequest,
			"Invalid input: MaxTime=soon\nRequest aborted"},
	}
	for _, tc := range cases {
		code, msg := c.as(alice, "POST", api.PathPartitionAdmin, api.PartitionCommandRequest{Verb: tc.verb, Words: tc.words}, nil)
		if code != tc.code || msg != tc.msg {
			t.Errorf("alice %s %v: %d %q, want %d %q", tc.verb, tc.words, code, msg, tc.code, tc.msg)
		}
	}
	if p, _ := c.partition("debug"); p.State != "UP" || c.partitionNames() != before {
		t.Errorf("a refused change changed the partitions: %q state %s", c.partitionNames(), p.State)
	}
}

// TestPartitionBadInput: malformed or invalid commands are refused with
// scontrol's and Slurm's messages and leave the partition as it was.
func TestPartitionBadInput(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2})
	want, _ := c.partition("debug")
	cases := []struct {
		verb  string
		words []string
		msg   string
	}{
		{api.PartitionUpdate, []string{"State=DOWN"}, "PartitionName must be given."},
		{api.PartitionCreate, []string{"PartitionName=DEFAULT", "Nodes=n1"}, `PartitionName cannot be "DEFAULT".`},
		{api.PartitionUpdate, []string{"PartitionName=debug", "State=SIDEWAYS"},
			"Invalid input: State=SIDEWAYS\nAcceptable State values are UP, DOWN, DRAIN and INACTIVE"},
		{api.PartitionUpdate, []string{"PartitionName=debug", "MaxNodes=-3"}, "Invalid input: MaxNodes=-3\nRequest aborted"},
		{api.PartitionUpdate, []string{"PartitionName=debug", "PriorityTier=70000"}, "Invalid input: PriorityTier=70000\nRequest aborted"},
		{api.PartitionUpdate, []string{"PartitionName=debug", "OverSubscribe=SOMETIMES"},
			"Invalid input: OverSubscribe=SOMETIMES\nRequest aborted"},
		{api.PartitionUpdate, []string{"PartitionName=debug", "Colour=blue"},
			"Update of this parameter is not supported: Colour=blue\nRequest aborted"},
		{api.PartitionUpdate, []string{"PartitionName=debug", "State=DOWN", "Nodes=n[1-9]"}, "Invalid node name specified"},
		{api.PartitionUpdate, []string{"PartitionName=nosuch", "State=DOWN"}, "Invalid partition name specified"},
		{api.PartitionCreate, []string{"PartitionName=debug", "Nodes=n1"}, "Invalid partition name specified"},
		{api.PartitionUpdate, []string{"PartitionName=debug", "MaxTime=10", "DefaultTime=20"}, "DefaultTime exceeds MaxTime"},
		{api.PartitionDelete, []string{"PartitionName=debug", "State=UP"}, "too many arguments for keyword"},
	}
	for _, tc := range cases {
		err := c.partCmd(tc.verb, tc.words...)
		if err == nil || err.Error() != tc.msg {
			t.Errorf("%s %v: %v, want %q", tc.verb, tc.words, err, tc.msg)
		}
	}
	if got, _ := c.partition("debug"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("partition changed by refused commands:\n%+v\nwant\n%+v", got, want)
	}
}

// TestPartitionChangesSurviveRestart: created, updated and deleted
// partitions (and the default moved with Default=YES) are the same after
// a restart, a pending job in a created partition is recovered, and
// slurm.conf wins for a partition whose definition changed in the file.
func TestPartitionChangesSurviveRestart(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b backend) {
		c := newCluster(t, b.open(t), clusterOpts{conf: twoPartConf})
		c.mustPart(api.PartitionCreate, "PartitionName=new", "Nodes=n[1-2]", "State=DOWN",
			"TRESBillingWeights=CPU=2.0")
		c.mustPart(api.PartitionUpdate, "PartitionName=debug", "MaxTime=1:00:00", "PriorityJobFactor=7")
		c.mustPart(api.PartitionUpdate, "PartitionName=batch", "MaxNodes=1", "Default=YES")
		c.mustResv("create", "reservation", "ReservationName=innew", "StartTime=now+1hour", "Duration=10",
			"PartitionName=new", "NodeCnt=1", "Users=root")
		waiting := c.submit(c.wrap("true", inPart("new")))
		c.eventually(5*time.Second, "job pending in new", func() bool {
			j, _ := c.jobByID(waiting)
			return j.Reason == "PartitionDown" && j.Partition == "new"
		})
		if got := c.partitionNames(); got != "debug batch* new" {
			t.Fatalf("before restart: %q", got)
		}
		before, _ := c.client.Partitions(c.ctx())

		c.ctl.Close()
		c.startController()
		after, _ := c.client.Partitions(c.ctx())
		if fmt.Sprint(after.Partitions) != fmt.Sprint(before.Partitions) {
			t.Fatalf("partitions after restart:\n%+v\nwant\n%+v", after.Partitions, before.Partitions)
		}
		j, ok := c.jobByID(waiting)
		if !ok || j.State != "PENDING" || j.Partition != "new" {
			t.Fatalf("pending job after restart: %+v", j)
		}
		if out, err := c.resvCmd("show", "reservation", "innew"); err != nil || !strings.Contains(out, "PartitionName=new") {
			t.Errorf("reservation in a created partition after restart: %q %v", out, err)
		}
		c.mustPart(api.PartitionUpdate, "PartitionName=new", "State=UP")
		c.waitState(waiting, "COMPLETED", 10*time.Second)

		// slurm.conf edited: batch's line changed, debug's did not.
		c.ctl.Close()
		cfg, _, err := conf.Parse(filepath.Join(c.dir, "slurm.conf"),
			[]byte(fmt.Sprintf(strings.Replace(twoPartConf, "batch Nodes=n2", "batch Nodes=n2 MaxTime=5", 1), c.dir)))
		if err != nil {
			t.Fatal(err)
		}
		c.cfg = cfg
		c.startController()
		if p, _ := c.partition("batch"); p.MaxNodes != -1 || p.MaxTimeSec != 300 {
			t.Errorf("batch after slurm.conf changed: MaxNodes %d MaxTime %d (want slurm.conf's)", p.MaxNodes, p.MaxTimeSec)
		}
		if p, _ := c.partition("debug"); p.MaxTimeSec != 3600 || p.PriorityJobFactor != 7 {
			t.Errorf("debug lost its scontrol change: %+v", p)
		}
		// batch's stored change (Default=YES) is gone with it: with no
		// default left, slurm.conf's (debug) is the default again.
		if got := c.partitionNames(); got != "debug* batch new" {
			t.Errorf("after conf change: %q", got)
		}
	})
}

// twoPartConf is a cluster with two partitions (%s = StateSaveLocation).
const twoPartConf = `ClusterName=test
SlurmctldHost=localhost
StateSaveLocation=%s
SlurmUser=root
SelectTypeParameters=CR_CPU
KillWait=1
SlurmdTimeout=2
ReturnToService=1
MinJobAge=300
NodeName=n[1-2] CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
PartitionName=batch Nodes=n2 State=UP
`

// TestPartitionDeleteRenumbers: deleting a partition before others keeps
// every other job in its own partition, live and after a restart.
func TestPartitionDeleteRenumbers(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{conf: twoPartConf})
	c.mustPart(api.PartitionUpdate, "PartitionName=batch", "State=DOWN")
	held := c.submit(c.wrap("true", inPart("batch")))
	c.mustPart(api.PartitionCreate, "PartitionName=tmp", "Nodes=n1")
	c.mustPart(api.PartitionDelete, "PartitionName=debug")
	c.mustPart(api.PartitionUpdate, "PartitionName=tmp", "Default=YES")
	if j, _ := c.jobByID(held); j.Partition != "batch" {
		t.Fatalf("job moved to %q by the delete", j.Partition)
	}
	c.ctl.Close()
	c.startController()
	if got := c.partitionNames(); got != "batch tmp*" {
		t.Fatalf("after restart: %q", got)
	}
	c.eventually(5*time.Second, "job pending in batch (PartitionDown) after restart", func() bool {
		j, _ := c.jobByID(held)
		return j.Partition == "batch" && j.Reason == "PartitionDown"
	})
}

// FuzzPartitionWords: no scontrol partition words make the parser panic;
// what it accepts is a partition the core can index (nodes in range,
// counts and times in their ranges).
func FuzzPartitionWords(f *testing.F) {
	for _, s := range []string{"Nodes=n[1-2] MaxTime=30 State=DOWN", "OverSubscribe=FORCE:3 PriorityTier=65533",
		"Nodes= AllowAccounts=ALL DenyQos=a,b", "MaxNodes=UNLIMITED DefaultTime=1-0 MaxTime=2-0", "Nodes=n[1-9]",
		"TRESBillingWeights=CPU=1.0,Mem=0.25G", "PreemptMode=REQUEUE,GANG", "DefMemPerCPU=100 MaxMemPerNode=INFINITE"} {
		f.Add(s)
	}
	cfg := testConf(f, f.TempDir(), 2, "")
	f.Fuzz(func(t *testing.T, line string) {
		cl, err := sched.ClusterFromConf(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ls := &loopState{st: sched.NewState(cl, sched.ConfigFromConf(cfg))}
		d := partDef{P: newPartition("fz")}
		if err := ls.applyPartitionWords(&d, strings.Fields(line)); err != nil {
			return
		}
		for _, n := range d.P.NodeList {
			if n < 0 || int(n) >= len(cl.Nodes) {
				t.Fatalf("%q: node index %d", line, n)
			}
		}
		if d.P.PriorityTier > 65533 || d.P.MaxNodes < -1 || d.P.MinNodes < 0 || d.P.MaxTime < 0 {
			t.Fatalf("%q: out of range: %+v", line, d.P)
		}
		if err := ls.st.AddPartition(d.P); err != nil {
			t.Fatalf("%q: accepted words the core refuses: %v", line, err)
		}
	})
}

// TestPartitionRecreatedInPlace: a slurm.conf partition deleted and
// created again goes back to its place among slurm.conf's partitions,
// before those made with scontrol, live and after a restart; jobs keep
// their partitions.
func TestPartitionRecreatedInPlace(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{conf: twoPartConf})
	c.mustPart(api.PartitionUpdate, "PartitionName=batch", "State=DOWN")
	held := c.submit(c.wrap("true", inPart("batch")))
	c.mustPart(api.PartitionCreate, "PartitionName=extra", "Nodes=n1", "State=DOWN")
	inExtra := c.submit(c.wrap("true", inPart("extra")))
	c.mustPart(api.PartitionDelete, "PartitionName=debug")
	c.mustPart(api.PartitionCreate, "PartitionName=debug", "Nodes=n2", "Default=YES")
	check := func(when string) {
		t.Helper()
		if got := c.partitionNames(); got != "debug* batch extra" {
			t.Errorf("%s: partitions %q", when, got)
		}
		for id, part := range map[uint32]string{held: "batch", inExtra: "extra"} {
			if j, _ := c.jobByID(id); j.Partition != part {
				t.Errorf("%s: job %d in %q, want %q", when, id, j.Partition, part)
			}
		}
	}
	check("live")
	c.ctl.Close()
	c.startController()
	check("after restart")
	if p, _ := c.partition("debug"); p.Nodes != "n2" {
		t.Errorf("recreated debug after restart: nodes %q", p.Nodes)
	}
}

// TestPartitionDefaultBeyondConf: making a partition created with scontrol
// the default needs the recovery hook (recover restores the partitions
// before the jobs): the default and its jobs survive a restart with
// accounting.
func TestPartitionDefaultBeyondConf(t *testing.T) {
	t.Parallel()
	store := acctStore(t, "test", `
add account a
add user root account=a`)
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2, acct: store})
	res, err := c.ctl.do(context.Background(), func(ls *loopState) (any, error) { return ls.prio.parts.early, nil })
	if err != nil {
		t.Fatal(err)
	}
	hook := res.(bool)
	err = c.partCmd(api.PartitionCreate, "PartitionName=new", "Nodes=ALL", "Default=YES", "State=DOWN")
	if !hook {
		t.Fatalf("recover did not restore the partitions before the jobs (the state.go hook); create answered %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	id := c.submit(c.wrap("true"))
	c.ctl.Close()
	c.startController()
	if j, ok := c.jobByID(id); !ok || j.Partition != "new" || c.partitionNames() != "debug new*" {
		t.Errorf("after restart: job %+v, partitions %q", j, c.partitionNames())
	}
}

// TestPartitionNodeSets: Slurm 24.11's scontrol show partition has
// NodeSets=ALL for a partition of Nodes=ALL and no NodeSets for a node
// list.
func TestPartitionNodeSets(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2, extra: "PartitionName=every Nodes=ALL State=UP\n"})
	if p, _ := c.partition("every"); p.NodeSets != "ALL" || p.Nodes != "n[1-2]" {
		t.Errorf("Nodes=ALL: NodeSets=%q Nodes=%q, want ALL and n[1-2]", p.NodeSets, p.Nodes)
	}
	if p, _ := c.partition("debug"); p.NodeSets != "" {
		t.Errorf("Nodes=n[1-2]: NodeSets=%q, want none", p.NodeSets)
	}
}

// TestNodeHostLoad: a registered node carries its host's load and free
// memory as its agent reports them (sinfo %O/%e, scontrol CPULoad= and
// FreeMem=, as slurmd reports them to Slurm's controller).
func TestNodeHostLoad(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	res, err := c.client.Nodes(c.ctx())
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Nodes[0]; !n.LoadKnown || n.FreeMem <= 0 || n.CPULoad < 0 {
		t.Errorf("n1: load known %v, CPULoad %v, FreeMem %d", n.LoadKnown, n.CPULoad, n.FreeMem)
	}
}
