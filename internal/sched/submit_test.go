package sched

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

func TestSubmitRejections(t *testing.T) {
	const extra = `AccountingStorageEnforce=associations,limits,qos
EnforcePartLimits=ALL
PartitionName=short Nodes=node[1-2] MaxTime=30 AllowAccounts=acme
`
	cases := []struct {
		name string
		user string
		opts string
		want error
	}{
		{"unknown partition", "u1", "-p nosuch", ErrInvalidPartition},
		{"user not in the account", "u1", "-A other", ErrInvalidAccount},
		{"unknown user", "nobody", "", ErrInvalidAccount},
		{"QOS not allowed for the association", "u1", "--qos=special", ErrInvalidQOS},
		{"unknown QOS", "u1", "--qos=nosuch", ErrInvalidQOS},
		{"time over partition MaxTime with EnforcePartLimits=ALL", "u1", "-p short --time=1:00:00", ErrInvalidTimeLimit},
		{"account not allowed in partition", "u2", "-p short --time=10", ErrInvalidAccount},
		{"more CPUs than any node", "u1", "-n 1 -c 8", ErrNodeConfig},
		{"GRES no node has", "u1", "--gres=gpu:1", ErrInvalidGres},
		{"bad dependency", "u1", "-d afterok:", ErrDependency},
		{"bad array", "u1", "--array=3-1", ErrInvalidArray},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, cpuConf(2, 4, extra))
			h.sacctmgr(`sacctmgr -i add account acme
sacctmgr -i add account other
sacctmgr -i add account elsewhere
sacctmgr -i add user u1 DefaultAccount=acme
sacctmgr -i add user u2 DefaultAccount=elsewhere
sacctmgr -i add qos special`)
			_, err := h.submit(c.user, c.opts)
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			t.Logf("sbatch: error: Batch job submission failed: %v", err)
		})
	}
}

func TestNoDefaultPartition(t *testing.T) {
	h := newHarness(t, `ClusterName=n
SlurmctldHost=h
NodeName=n1 CPUs=1 RealMemory=100
PartitionName=p Nodes=n1
`)
	_, err := h.submit("u", "--time=10")
	if !errors.Is(err, ErrNoDefaultPartition) || err.Error() != "No partition specified or system default partition" {
		t.Fatalf("err %v", err)
	}
}

// TestEnforcePartLimits: NO accepts and pends, ANY accepts when one of
// the requested partitions fits, ALL rejects unless all do.
func TestEnforcePartLimits(t *testing.T) {
	for _, c := range []struct {
		mode, opts string
		reject     bool
	}{
		{"NO", "-p short --time=1:00:00", false},
		{"ANY", "-p short --time=1:00:00", true},
		{"ANY", "-p short,batch --time=1:00:00", false},
		{"ALL", "-p short,batch --time=1:00:00", true},
	} {
		h := newHarness(t, cpuConf(2, 4, "EnforcePartLimits="+c.mode+"\nPartitionName=short Nodes=node[1-2] MaxTime=30\n"))
		j, err := h.submit("u", c.opts)
		if c.reject != (err != nil) {
			t.Fatalf("%s %s: err %v", c.mode, c.opts, err)
		}
		if err == nil && c.opts == "-p short --time=1:00:00" {
			h.expectState(j.ID, JobPending, ReasonPartitionTimeLimit)
		}
	}
}

// TestDenyOnLimitOffAcceptsAndPends: without DenyOnLimit a job over a
// per-job QOS maximum is accepted and pends with the limit's reason.
func TestDenyOnLimitOffAcceptsAndPends(t *testing.T) {
	h := newHarness(t, cpuConf(2, 8, "AccountingStorageEnforce=limits,qos"))
	h.sacctmgr(`sacctmgr -i add account acme
sacctmgr -i add user u DefaultAccount=acme
sacctmgr -i modify qos normal set MaxTRESPerJob=cpu=4 MaxWall=60`)
	j := h.mustSubmit("u", "-n 6 --time=10")
	h.expectState(j.ID, JobPending, "QOSMaxCpuPerJobLimit")
	k := h.mustSubmit("u", "-n 1 --time=2:00:00")
	h.expectState(k.ID, JobPending, ReasonQOSMaxWallDurationPerJobLimit)
	// With DenyOnLimit the same requests are rejected with the reason.
	h.sacctmgr("sacctmgr -i modify qos normal set Flags=DenyOnLimit")
	_, err := h.submit("u", "-n 6 --time=10")
	var se *SubmitError
	if !errors.As(err, &se) || se.Reason != "QOSMaxCpuPerJobLimit" || !errors.Is(err, ErrAccountingPolicy) {
		t.Fatalf("DenyOnLimit: %v", err)
	}
}

// TestFirstDefinerWins: the partition QOS's GrpTRES node limit is the one
// enforced even though the job QOS sets a stricter one (expect test21.34),
// unless the job QOS has OverPartQOS.
func TestFirstDefinerWins(t *testing.T) {
	conf := cpuConf(4, 1, "AccountingStorageEnforce=limits,qos\nPartitionName=pq Nodes=node[1-4] QOS=partqos\n")
	setup := func(flags string) *harness {
		h := noBackfill(newHarness(t, conf))
		h.sacctmgr(`sacctmgr -i add qos partqos GrpTRES=node=3
sacctmgr -i add qos jobqos GrpTRES=node=1 ` + flags + `
sacctmgr -i add account acme
sacctmgr -i add user u DefaultAccount=acme
sacctmgr -i modify user u set qos+=jobqos`)
		return h
	}
	h := setup("")
	var last *Job
	for i := 0; i < 4; i++ {
		last = h.mustSubmit("u", "-p pq --qos=jobqos -n 1 --time=10")
	}
	if n := h.countState(JobRunning, nil); n != 3 {
		t.Fatalf("partition QOS GrpNodes=3 first: %d running", n)
	}
	h.expectState(last.ID, JobPending, "QOSGrpNodeLimit")
	h = setup("Flags=OverPartQOS")
	for i := 0; i < 2; i++ {
		last = h.mustSubmit("u", "-p pq --qos=jobqos -n 1 --time=10")
	}
	if n := h.countState(JobRunning, nil); n != 1 {
		t.Fatalf("OverPartQOS: %d running, want the job QOS's 1", n)
	}
	h.expectState(last.ID, JobPending, "QOSGrpNodeLimit")
}

// TestAssocGrpLimitsAtEveryLevel: an account's GrpTRES limits every user
// below it.
func TestAssocGrpLimitsAtEveryLevel(t *testing.T) {
	h := noBackfill(newHarness(t, cpuConf(4, 4, "AccountingStorageEnforce=limits")))
	h.sacctmgr(`sacctmgr -i add account acme GrpTRES=cpu=6
sacctmgr -i add user u1 DefaultAccount=acme
sacctmgr -i add user u2 DefaultAccount=acme GrpTRES=cpu=100`)
	h.mustSubmit("u1", "-n 4 --time=10")
	j := h.mustSubmit("u2", "-n 4 --time=10")
	h.expectState(j.ID, JobPending, "AssocGrpCpuLimit")
	k := h.mustSubmit("u2", "-n 2 --time=10")
	h.expectState(k.ID, JobRunning, "")
}

func TestOperatorOnlyOptions(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, ""))
	for _, opts := range []string{"--nice=-5 --time=10"} {
		if _, err := h.submit("u", opts); err == nil || err.Error() != "Access/permission denied" {
			t.Fatalf("%s: %v", opts, err)
		}
	}
	if _, err := h.submit("u", "--nice=2147483646 --time=10"); err == nil ||
		err.Error() != "Invalid nice value, must be between -2147483645 and 2147483645" {
		t.Fatalf("nice range: %v", err)
	}
	req := Request{Priority: 7, TimeLimit: 10 * time.Minute}
	if j, err := h.st.Submit(req, Submitter{User: "u"}, h.now); err != nil || j.DirectPriority || j.Req.Priority != 0 {
		t.Fatalf("--priority by a user is ignored, the job accepted: %v %+v", err, j)
	}
	j, err := h.st.Submit(req, Submitter{User: "root", Admin: true}, h.now)
	if err != nil || j.Priority != 7 || !j.DirectPriority {
		t.Fatalf("--priority by an operator: %v %+v", err, j)
	}
}

// TestPartitionStatesAtSubmit: DOWN takes jobs (they pend), DRAIN and
// INACTIVE refuse them with Slurm's message (oracle, 24.11).
func TestPartitionStatesAtSubmit(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, `PartitionName=down Nodes=node1 State=DOWN
PartitionName=drain Nodes=node1 State=DRAIN
PartitionName=off Nodes=node1 State=INACTIVE`))
	j := h.mustSubmit("u", "-p down --time=10")
	h.expectState(j.ID, JobPending, ReasonPartitionDown)
	for _, p := range []string{"drain", "off"} {
		if _, err := h.submit("u", "-p "+p+" --time=10"); !errors.Is(err, ErrPartInactive) ||
			err.Error() != "Required partition not available (inactive or drain)" {
			t.Fatalf("%s: %v", p, err)
		}
	}
	k := h.mustSubmit("u", "-p drain,batch --time=10")
	h.expectState(k.ID, JobRunning, "")
}

// TestMaxMemLimits: --mem over MaxMemPerNode is refused; --mem-per-cpu
// over MaxMemPerCPU raises the CPUs per task instead.
func TestMaxMemLimits(t *testing.T) {
	h := newHarness(t, cpuConf(1, 8, "PartitionName=m Nodes=node1 MaxMemPerNode=4000 MaxMemPerCPU=1000"))
	if _, err := h.submit("u", "-p m --mem=5000 --time=10"); !errors.Is(err, ErrMemory) ||
		err.Error() != "Memory required by task is not available" {
		t.Fatalf("--mem over MaxMemPerNode: %v", err)
	}
	j := h.mustSubmit("u", "-p m -n 2 --mem-per-cpu=2500 --time=10")
	if j.Req.CPUsPerTask != 3 || j.Req.MemPerCPU != 834 {
		t.Fatalf("cpus-per-task %d mem-per-cpu %d, want 3 and 834", j.Req.CPUsPerTask, j.Req.MemPerCPU)
	}
	h.expectState(j.ID, JobRunning, "")
	if j.Alloc.CPUs[0] != 6 {
		t.Fatalf("allocated %d CPUs", j.Alloc.CPUs[0])
	}
}

// TestJobCountsBeforePerJobTRES: a pending job's limits are judged in
// slurmctld's order, job counts before per-job TRES, against the jobs
// running when the pass reaches it (oracle, partition-qos and by hand: a
// -n 6 job over MaxTRESPerJob=cpu=4 shows QOSMaxJobsPerUserLimit while
// the user's one allowed job runs, QOSMaxCpuPerJobLimit once it ended or
// when the pass judged it before that job started).
func TestJobCountsBeforePerJobTRES(t *testing.T) {
	conf := cpuConf(4, 8, "AccountingStorageEnforce=limits,qos\nPartitionName=capped Nodes=node[1-4] QOS=partcap\n")
	limits := `sacctmgr -i add qos partcap MaxJobsPerUser=1 MaxTRESPerJob=cpu=4
sacctmgr -i add account research
sacctmgr -i add user alice Account=research`
	t.Run("judged while the allowed job runs, then after it", func(t *testing.T) {
		h := newHarness(t, conf)
		h.sacctmgr(limits)
		h.mustSubmit("alice", "-p capped --time=10 --run=1")
		big := h.mustSubmit("alice", "-p capped -n 6 --time=10")
		h.expectState(big.ID, JobPending, ReasonQOSMaxJobsPerUserLimit)
		h.advance(2 * time.Minute) // the allowed job ended
		h.schedule()
		h.expectState(big.ID, JobPending, "QOSMaxCpuPerJobLimit")
	})
	t.Run("judged first in a main pass", func(t *testing.T) {
		// sched/builtin: no backfill pass judging it again at once (the
		// controller runs backfill on its bf_interval cadence).
		h := newHarness(t, "SchedulerType=sched/builtin\n"+conf)
		h.sacctmgr(limits)
		big := h.queue("alice", "-p capped -n 6 --time=10")
		h.queue("alice", "-p capped --time=10")
		second := h.queue("alice", "-p capped --time=10")
		h.schedule()
		h.expectState(big.ID, JobPending, "QOSMaxCpuPerJobLimit")
		h.expectState(second.ID, JobPending, ReasonQOSMaxJobsPerUserLimit)
	})
}

// TestDependencyReasonAtSubmit: a job with dependencies pends with reason
// Dependency from its submission, before any scheduling pass (oracle,
// dependencies scenario).
func TestDependencyReasonAtSubmit(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, ""))
	first := h.mustSubmit("u", "--time=10")
	spec, _ := h.parseOpts("--time=10 -d afterok:" + fixtureJobID(first.ID))
	spec.User = "u"
	req, err := RequestFromSpec(&spec, h.now, time.UTC, &h.st.Config)
	if err != nil {
		t.Fatal(err)
	}
	j, err := h.st.Submit(req, Submitter{User: "u"}, h.now)
	if err != nil || j.Reason != ReasonDependency {
		t.Fatalf("reason %q, err %v; want Dependency", j.Reason, err)
	}
}

func fixtureJobID(id JobID) string { return strconv.FormatUint(uint64(id), 10) }

// TestBeginTimeReasonAtSubmit: a job whose begin time is ahead pends with
// BeginTime from its submission, before any pass (oracle, holds-begin:
// "2 PD BeginTime" a second after `sbatch --begin=now+600`).
func TestBeginTimeReasonAtSubmit(t *testing.T) {
	h := newHarness(t, cpuConf(1, 4, ""))
	spec, _ := h.parseOpts("--time=10 --begin=now+600")
	spec.User = "u"
	req, err := RequestFromSpec(&spec, h.now, time.UTC, &h.st.Config)
	if err != nil {
		t.Fatal(err)
	}
	j, err := h.st.Submit(req, Submitter{User: "u"}, h.now)
	if err != nil || j.Reason != ReasonBeginTime {
		t.Fatalf("reason %q, err %v; want BeginTime", j.Reason, err)
	}
}
