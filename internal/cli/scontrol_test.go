package cli

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestScontrolShowOracle: scontrol show job, node and partition on
// oracleQueueFixture and oracleClusterFixture, each expectation what Slurm
// 24.11 printed for the same command (scontrol show job 7, job 3, job 4
// (its first record, the pending one), node n5, partition debug). The
// node's expectation leaves out Port=18105 (the oracle's slurmd port;
// Sluice nodes have none) and shows SlurmdStartTime as BootTime (Sluice
// reports one boot time).
func TestScontrolShowOracle(t *testing.T) {
	q := oracleQueueFixture()
	job := func(id uint32) *api.JobInfo {
		for i := range q.Jobs {
			if q.Jobs[i].JobID == id {
				return &q.Jobs[i]
			}
		}
		t.Fatalf("no job %d", id)
		return nil
	}
	nodes, parts := oracleClusterFixture()
	cases := []struct {
		name    string
		record  []string
		trailed bool   // job records end with a line of three blanks
		skip    string // a difference from Slurm not fixed yet
		want    string
	}{
		{"job-pending", JobRecordLines(job(7), oracleQueueAt.Add(3*time.Second)), true,
			"Slurm prints Scheduler=Backfill:* for a job backfill last evaluated; Sluice always prints Scheduler=Main",
			"JobId=7 JobName=big\n   UserId=bob(1002) GroupId=bob(1002) MCS_label=N/A\n" +
				"   Priority=50625 Nice=0 Account=research QOS=normal\n" +
				"   JobState=PENDING Reason=Resources Dependency=(null)\n" +
				"   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n" +
				"   RunTime=00:00:00 TimeLimit=01:00:00 TimeMin=N/A\n" +
				"   SubmitTime=2026-11-26T22:51:12 EligibleTime=2026-11-26T22:51:12\n   AccrueTime=2026-11-26T22:51:12\n" +
				"   StartTime=2026-11-26T23:21:07 EndTime=2026-11-27T00:21:07 Deadline=N/A\n" +
				"   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-26T22:51:29 Scheduler=Backfill:*\n" +
				"   Partition=debug AllocNode:Sid=localhost:4045\n   ReqNodeList=(null) ExcNodeList=(null)\n" +
				"   NodeList= SchedNodeList=n[3-4]\n" +
				"   NumNodes=2-2 NumCPUs=16 NumTasks=16 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n" +
				"   ReqTRES=cpu=16,mem=16000M,node=2,billing=16\n   AllocTRES=(null)\n" +
				"   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n" +
				"   MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0\n   Features=(null) DelayBoot=00:00:00\n" +
				"   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n   Command=(null)\n" +
				"   WorkDir=/var/tmp/slurm-oracle-h1/jobs\n   StdErr=/dev/null\n   StdIn=/dev/null\n" +
				"   StdOut=/dev/null\n   \n\n"},
		{"job-running", JobRecordLines(job(3), oracleQueueAt.Add(3*time.Second)), true, "",
			"JobId=3 JobName=train\n   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A\n" +
				"   Priority=625 Nice=0 Account=research QOS=normal\n   JobState=RUNNING Reason=None Dependency=(null)\n" +
				"   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n" +
				"   RunTime=00:00:34 TimeLimit=01:00:00 TimeMin=N/A\n" +
				"   SubmitTime=2026-11-26T22:51:00 EligibleTime=2026-11-26T22:51:00\n   AccrueTime=2026-11-26T22:51:00\n" +
				"   StartTime=2026-11-26T22:51:01 EndTime=2026-11-26T23:51:01 Deadline=N/A\n" +
				"   PreemptEligibleTime=2026-11-26T22:51:01 PreemptTime=None\n" +
				"   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-26T22:51:01 Scheduler=Main\n" +
				"   Partition=debug AllocNode:Sid=localhost:4045\n   ReqNodeList=(null) ExcNodeList=(null)\n" +
				"   NodeList=n[1-2]\n   BatchHost=n1\n" +
				"   NumNodes=2 NumCPUs=16 NumTasks=16 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n" +
				"   ReqTRES=cpu=16,mem=16000M,node=2,billing=16\n   AllocTRES=cpu=16,mem=16000M,node=2,billing=16\n" +
				"   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n" +
				"   MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0\n   Features=(null) DelayBoot=00:00:00\n" +
				"   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n   Command=(null)\n" +
				"   WorkDir=/var/tmp/slurm-oracle-h1/jobs\n   StdErr=/dev/null\n   StdIn=/dev/null\n" +
				"   StdOut=/dev/null\n   \n\n"},
		{"job-array", JobRecordLines(job(4), oracleQueueAt.Add(3*time.Second)), true, "",
			"JobId=4 ArrayJobId=4 ArrayTaskId=3-5%2 ArrayTaskThrottle=2 JobName=sweep\n" +
				"   UserId=charlie(1003) GroupId=charlie(1003) MCS_label=N/A\n" +
				"   Priority=33372 Nice=0 Account=research QOS=normal\n" +
				"   JobState=PENDING Reason=JobArrayTaskLimit Dependency=(null)\n" +
				"   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n" +
				"   RunTime=00:00:00 TimeLimit=00:30:00 TimeMin=N/A\n" +
				"   SubmitTime=2026-11-26T22:51:06 EligibleTime=Unknown\n   AccrueTime=2026-11-26T22:51:07\n" +
				"   StartTime=Unknown EndTime=Unknown Deadline=N/A\n" +
				"   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-26T22:51:07 Scheduler=Main\n" +
				"   Partition=debug AllocNode:Sid=localhost:4045\n   ReqNodeList=(null) ExcNodeList=(null)\n" +
				"   NodeList=\n   NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n" +
				"   ReqTRES=cpu=1,mem=1000M,node=1,billing=1\n   AllocTRES=(null)\n" +
				"   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n" +
				"   MinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0\n   Features=(null) DelayBoot=00:00:00\n" +
				"   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n   Command=(null)\n" +
				"   WorkDir=/var/tmp/slurm-oracle-h1/jobs\n   StdErr=/dev/null\n   StdIn=/dev/null\n" +
				"   StdOut=/dev/null\n   \n\n"},
		{"node-drain", NodeRecordLines(&nodes.Nodes[4]), false, "",
			"NodeName=n5 Arch=x86_64 CoresPerSocket=8 \n   CPUAlloc=0 CPUEfctv=8 CPUTot=8 CPULoad=3.15\n" +
				"   AvailableFeatures=(null)\n   ActiveFeatures=(null)\n   Gres=gpu:4\n" +
				"   NodeAddr=127.0.0.1 NodeHostName=n5 Version=24.11.5\n" +
				"   OS=Linux 6.18.44-fc-v657 #1 SMP PREEMPT_DYNAMIC @0 \n" +
				"   RealMemory=64000 AllocMem=0 FreeMem=16620 Sockets=1 Boards=1\n" +
				"   State=IDLE+DRAIN ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n   Partitions=gpu \n" +
				"   BootTime=2026-11-26T16:30:10 SlurmdStartTime=2026-11-26T16:30:10\n" +
				"   LastBusyTime=2026-11-26T22:50:29 ResumeAfterTime=None\n" +
				"   CfgTRES=cpu=8,mem=62.50G,billing=8,gres/gpu=4\n   AllocTRES=\n   CurrentWatts=0 AveWatts=0\n   \n" +
				"   Reason=bad disk [root@2026-11-26T22:50:34]\n\n"},
		{"partition", PartitionRecordLines(&parts.Partitions[0]), false, "",
			"PartitionName=debug\n   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n" +
				"   AllocNodes=ALL Default=YES QoS=N/A\n" +
				"   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO ExclusiveTopo=NO GraceTime=0 Hidden=NO\n" +
				"   MaxNodes=UNLIMITED MaxTime=01:00:00 MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED MaxCPUsPerSocket=UNLIMITED\n" +
				"   Nodes=n[1-4]\n   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO\n" +
				"   OverTimeLimit=NONE PreemptMode=REQUEUE\n" +
				"   State=UP TotalCPUs=32 TotalNodes=4 SelectTypeParameters=NONE\n   JobDefaults=(null)\n" +
				"   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n" +
				"   TRES=cpu=32,mem=250G,node=4,billing=32,gres/gpu=16\n\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.skip != "" {
				t.Skip(c.skip)
			}
			env, out, _ := testEnv()
			s := &scontrolRun{env: env}
			if c.trailed {
				s.printTrailed([][]string{c.record})
			} else {
				s.print([][]string{c.record})
			}
			if out.String() != c.want {
				t.Errorf("got:\n%s\nwant (Slurm 24.11):\n%s", out, c.want)
			}
		})
	}
}

// TestScontrolDetailLines: with -d the controller adds Sluice's priority
// breakdown and why-pending sentence after StdOut= (a deliberate
// addition, docs/differences.md; Slurm has no such lines).
func TestScontrolDetailLines(t *testing.T) {
	big := oracleQueueFixture().Jobs[6]
	big.PriorityTerms = []api.PriorityTerm{{Name: "age", Factor: 0.25, Weight: 1000, Contribution: 250},
		{Name: "jobsize", Factor: 0.5, Weight: 500, Contribution: 250}}
	big.PrioritySummary = "age and jobsize contribute equally (250 each)"
	big.WhyPending = "The job is next in line."
	lines := JobRecordLines(&big, oracleQueueAt)
	want := []string{"StdOut=/dev/null", "PriorityFactors=age=250(0.2500*1000) jobsize=250(0.5000*500)",
		"PriorityExplain=age and jobsize contribute equally (250 each)", "WhyPending=The job is next in line."}
	if got := lines[len(lines)-4:]; !slices.Equal(got, want) {
		t.Errorf("last lines %q, want %q", got, want)
	}
}

func TestScontrolArgErrors(t *testing.T) {
	if _, err := kvArgs([]string{"JobId=5", "TimeLimit"}); err == nil {
		t.Error("a word without '=' accepted")
	}
	env, _, errb := testEnv()
	if code := runScontrol(t.Context(), env, []string{"--bogus"}); code != 1 || !strings.Contains(errb.String(), "unrecognized option") {
		t.Errorf("scontrol --bogus: %d %q", code, errb.String())
	}
}

// TestE2EScontrolPartition administers a partition on a real cluster
// with scontrol and checks what scontrol, sinfo, sbatch and squeue see at
// once, and Slurm's error lines and exit codes for refused commands.
func TestE2EScontrolPartition(t *testing.T) {
	t.Parallel()
	c := upCluster(t, 2, "")
	steps := []struct {
		name    string
		args    []string
		rc      int
		out     string // substring of stdout
		errText string // exact stderr
	}{
		{"create", []string{"scontrol", "create", "PartitionName=gpu", "Nodes=ALL", "MaxTime=30", "PriorityTier=2",
			"TRESBillingWeights=CPU=2.0,Mem=0.5G"}, 0, "", ""},
		{"show", []string{"scontrol", "show", "partition", "gpu"}, 0, "MaxNodes=UNLIMITED MaxTime=00:30:00", ""},
		{"show weights", []string{"scontrol", "show", "partition", "gpu"}, 0, "\n   TRESBillingWeights=CPU=2.0,Mem=0.5G\n", ""},
		{"sinfo sees it", []string{"sinfo", "-h", "-p", "gpu", "-o", "%P %a %l"}, 0, "gpu up 30:00", ""},
		{"create twice", []string{"scontrol", "create", "partition", "PartitionName=gpu"}, 1, "",
			"Error creating the partition: Invalid partition name specified\n"},
		{"bad time", []string{"scontrol", "update", "PartitionName=gpu", "MaxTime=soon"}, 1, "",
			"scontrol: error: Invalid input: MaxTime=soon\nscontrol: error: Request aborted\n"},
		{"bad node", []string{"scontrol", "update", "PartitionName=gpu", "Nodes=nope1"}, 1, "",
			"slurm_update error: Invalid node name specified\n"},
		{"no name", []string{"scontrol", "update", "PartitionName=", "State=UP"}, 1, "",
			"scontrol: error: PartitionName must be given.\n"},
		{"down", []string{"scontrol", "update", "PartitionName=gpu", "State=DOWN"}, 0, "", ""},
		{"show down", []string{"scontrol", "-o", "show", "partition", "gpu"}, 0, "State=DOWN", ""},
	}
	for _, s := range steps {
		rc, out, errs := c.run(s.args[0], s.args[1:]...)
		if rc != s.rc || !strings.Contains(out, s.out) || errs != s.errText {
			t.Errorf("%s: %v: exit %d stdout %q stderr %q; want exit %d, stdout with %q, stderr %q",
				s.name, s.args, rc, out, errs, s.rc, s.out, s.errText)
		}
	}
	id := c.submit("-p", "gpu", "--wrap", "true")
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, out, _ := c.run("squeue", "-h", "-j", id, "-o", "%P %T %r")
		if strings.TrimSpace(out) == "gpu PENDING PartitionDown" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("squeue for a job in a DOWN partition: %q", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rc, _, errs := c.run("scontrol", "delete", "PartitionName=gpu"); rc != 1 ||
		errs != "delete_partition PartitionName=gpu: Partition is in use\n" {
		t.Errorf("delete while in use: %d %q", rc, errs)
	}
	if rc, _, errs := c.run("scontrol", "update", "PartitionName=gpu", "State=UP"); rc != 0 {
		t.Fatalf("state up: %s", errs)
	}
	c.waitState(id, "COMPLETED")
	if rc, _, errs := c.run("scontrol", "delete", "PartitionName=gpu"); rc != 0 || errs != "" {
		t.Errorf("delete: %d %q", rc, errs)
	}
	if rc, _, errs := c.run("scontrol", "show", "partition", "gpu"); rc != 1 || errs != "Partition gpu not found\n" {
		t.Errorf("show a deleted partition: %d %q", rc, errs)
	}
}

// TestScontrolSuspendedJobTimes: oracle (gang suspension): a job started
// 16:37:15, suspended 16:37:20, showed at 16:37:29 RunTime=00:00:05
// SuspendTime=16:37:20 SecsPreSuspend=5; resumed 16:38:20, at 16:40:10
// RunTime=00:01:55 SuspendTime=16:38:20 SecsPreSuspend=5.
func TestScontrolSuspendedJobTimes(t *testing.T) {
	at := func(hms string) time.Time {
		tm, _ := time.Parse("15:04:05", hms)
		return time.Date(2026, 11, 26, tm.Hour(), tm.Minute(), tm.Second(), 0, time.Local)
	}
	j := queueFixture().Jobs[0]
	j.StartTime, j.State, j.SuspendTime, j.SuspendedSec = at("16:37:15"), "SUSPENDED", at("16:37:20"), 0
	check := func(now time.Time, want ...string) {
		t.Helper()
		out := strings.Join(JobRecordLines(&j, now), "\n")
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", j.State, w, out)
			}
		}
	}
	check(at("16:37:29"), "RunTime=00:00:05 ", "SuspendTime=2026-11-26T16:37:20 SecsPreSuspend=5 LastSchedEval=")
	j.State, j.SuspendTime, j.SuspendedSec = "RUNNING", at("16:38:20"), 60
	check(at("16:40:10"), "RunTime=00:01:55 ", "SuspendTime=2026-11-26T16:38:20 SecsPreSuspend=5 LastSchedEval=")
}

// TestScontrolPreemptTimes: with preemption, a started job shows
// "PreemptEligibleTime=<start+exempt> PreemptTime=<time or None>" after
// its StartTime line (oracle, preempt/qos); a job that never started, or
// one in a cluster without preemption, shows no such line.
func TestScontrolPreemptTimes(t *testing.T) {
	j := queueFixture().Jobs[0]
	j.PreemptEligibleTime = time.Date(2026, 11, 26, 16, 52, 54, 0, time.Local)
	lines := JobRecordLines(&j, j.StartTime.Add(time.Minute))
	for i, l := range lines {
		if strings.HasPrefix(l, "PreemptEligibleTime=") {
			if l != "PreemptEligibleTime=2026-11-26T16:52:54 PreemptTime=None" || !strings.HasPrefix(lines[i-1], "StartTime=") {
				t.Errorf("line %d %q after %q", i, l, lines[i-1])
			}
			j.PreemptEligibleTime = time.Time{}
		}
	}
	if !j.PreemptEligibleTime.IsZero() {
		t.Fatalf("no PreemptEligibleTime line in\n%s", strings.Join(lines, "\n"))
	}
	if out := strings.Join(JobRecordLines(&j, j.StartTime), "\n"); strings.Contains(out, "PreemptEligibleTime") {
		t.Errorf("a job without PreemptEligibleTime shows the line:\n%s", out)
	}
}

// TestUpdateJobErrorLines: scontrol update job prints slurmctld's refusal
// as Slurm 24.11's scontrol does (golden lines from the oracle).
func TestUpdateJobErrorLines(t *testing.T) {
	cases := []struct {
		err  *api.Error
		want string
	}{
		{&api.Error{Message: "Invalid user id", Job: "111"}, "Invalid user id for job 111\n"},
		{&api.Error{Message: "Invalid user id", Job: "110_0-9"}, "110_0-9: Invalid user id\n"},
		{&api.Error{Message: "Requested operation not supported on this system", Job: "111",
			Detail: "Update of ArrayTaskThrottle is only allowed on ArrayJobId"},
			"scontrol: error: Update of ArrayTaskThrottle is only allowed on ArrayJobId\n" +
				"Requested operation not supported on this system for job 111\n"},
		{&api.Error{Message: "Requested operation not supported on this system", Job: "110_5",
			Detail: "Update of ArrayTaskThrottle is only allowed on ArrayJobId"},
			"110_5: Requested operation not supported on this system (Update of ArrayTaskThrottle is only allowed on ArrayJobId)\n"},
		{&api.Error{Message: "Invalid ArrayTaskThrottle value"}, "scontrol: error: Invalid ArrayTaskThrottle value\n"},
	}
	for _, c := range cases {
		env, _, errb := testEnv()
		if code := updateJobError(env, c.err); code != 1 || errb.String() != c.want {
			t.Errorf("%+v: %d %q, want %q", c.err, code, errb.String(), c.want)
		}
	}
}

// TestScontrolShowJobOracleLayout: scontrol show job's lines as Slurm
// 24.11 prints them (oracle): ReqTRES/AllocTRES, the Socks/Node line,
// MinCPUsNode of --ntasks-per-node, Comment= and Extra= with their trailing blank,
// TresPerJob/TresPerNode/TresPerTask after StdOut=, a pending job's node
// range and AllocTRES=(null); each record ends with a line of three
// blanks and a blank line (one-line form: a trailing blank). Sluice's
// priority lines only come with -d (the controller fills them then).
func TestScontrolShowJobOracleLayout(t *testing.T) {
	at := time.Date(2026, 11, 26, 17, 33, 2, 0, time.Local)
	run := api.JobInfo{JobID: 4, Name: "wrap", User: "alice", UID: 1001, Group: "alice", GID: 1001, Priority: 646,
		Account: "research", QOS: "normal", State: "RUNNING", Requeue: true, ExitCode: "0:0", TimeLimitSec: api.TimeInfinite,
		SubmitTime: at.Add(-time.Second), EligibleTime: at.Add(-time.Second), AccrueTime: at.Add(-time.Second),
		StartTime: at, LastSchedEval: at, PreemptEligibleTime: at, Partition: "main", AllocNode: "localhost", AllocSID: 13244,
		NodeList: "n[1-2]", BatchHost: "n1", NumNodes: 2, MaxNodes: 2, NumCPUs: 4, NumTasks: 4, CPUsPerTask: 1,
		NTasksPerNode: 2, MinCPUsNode: 2, MinMemoryMB: 700, MemPerCPU: true,
		ReqTRES: "cpu=4,mem=2800M,node=2,billing=4,gres/gpu=2", AllocTRES: "cpu=4,mem=2800M,node=2,billing=4,gres/gpu=2",
		Command: "(null)", WorkDir: "/var/tmp/jobs", Comment: "x", Extra: ptr("e=1 f"), StdOut: "/dev/null", StdErr: "/dev/null", StdIn: "/dev/null",
		TresPerJob: "gres/gpu:2", TresPerNode: "gres/gpu:1", TresPerTask: "cpu=2"}
	want := `JobId=4 JobName=wrap
   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A
   Priority=646 Nice=0 Account=research QOS=normal
   JobState=RUNNING Reason=None Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=00:00:02 TimeLimit=UNLIMITED TimeMin=N/A
   SubmitTime=2026-11-26T17:33:01 EligibleTime=2026-11-26T17:33:01
   AccrueTime=2026-11-26T17:33:01
   StartTime=2026-11-26T17:33:02 EndTime=Unknown Deadline=N/A
   PreemptEligibleTime=2026-11-26T17:33:02 PreemptTime=None
   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-11-26T17:33:02 Scheduler=Main
   Partition=main AllocNode:Sid=localhost:13244
   ReqNodeList=(null) ExcNodeList=(null)
   NodeList=n[1-2]
   BatchHost=n1
   NumNodes=2 NumCPUs=4 NumTasks=4 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   ReqTRES=cpu=4,mem=2800M,node=2,billing=4,gres/gpu=2
   AllocTRES=cpu=4,mem=2800M,node=2,billing=4,gres/gpu=2
   Socks/Node=* NtasksPerN:B:S:C=2:0:*:* CoreSpec=*
   MinCPUsNode=2 MinMemoryCPU=700M MinTmpDiskNode=0
   Features=(null) DelayBoot=00:00:00
   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)
   Command=(null)
   WorkDir=/var/tmp/jobs
   Comment=x 
   Extra=e=1 f 
   StdErr=/dev/null
   StdIn=/dev/null
   StdOut=/dev/null
   TresPerJob=gres/gpu:2
   TresPerNode=gres/gpu:1
   TresPerTask=cpu=2
   

`
	env, out, _ := testEnv()
	s := &scontrolRun{env: env}
	s.printTrailed([][]string{JobRecordLines(&run, at.Add(2*time.Second))})
	if out.String() != want {
		t.Errorf("running job:\n%s\nwant:\n%s", out, want)
	}
	out.Reset()
	s.oneLiner = true
	s.printTrailed([][]string{{"JobId=4 JobName=wrap", "StdOut=/dev/null"}})
	if out.String() != "JobId=4 JobName=wrap StdOut=/dev/null \n" {
		t.Errorf("one line: %q", out)
	}

	// A held job submitted with -N2 (oracle job 2 above).
	held := run
	held.State, held.Reason, held.Priority, held.NodeList, held.BatchHost, held.AllocTRES = "PENDING", "JobHeldUser", 0, "", "", ""
	held.NumCPUs, held.NumTasks, held.NTasksPerNode, held.MinCPUsNode, held.MinMemoryMB = 2, 2, 0, 1, 1000
	held.ReqTRES = "cpu=2,mem=2000M,node=2,billing=2"
	lines := strings.Join(JobRecordLines(&held, at), "\n")
	for _, w := range []string{"\nNumNodes=2-2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\nReqTRES=cpu=2,mem=2000M,node=2,billing=2\nAllocTRES=(null)\n",
		"\nMinCPUsNode=1 MinMemoryCPU=1000M MinTmpDiskNode=0\n"} {
		if !strings.Contains(lines, w) {
			t.Errorf("held job: no %q in\n%s", w, lines)
		}
	}
	if strings.Contains(lines, "PriorityFactors") || strings.Contains(lines, "WhyPending") {
		t.Errorf("Sluice's detail lines without -d:\n%s", lines)
	}
}

// TestScontrolShowHostnames: scontrol show hostnames expands a host list
// one name a line without a controller (oracle: 'n[1-3],n4' gives n1..n4;
// a bad list is reported, exit 0).
func TestScontrolShowHostnames(t *testing.T) {
	env, out, errb := testEnv()
	if code := runScontrol(t.Context(), env, []string{"show", "hostnames", "n[1-3],n4"}); code != 0 || out.String() != "n1\nn2\nn3\nn4\n" {
		t.Errorf("show hostnames: %d %q %q", code, out, errb)
	}
	out.Reset()
	if code := runScontrol(t.Context(), env, []string{"show", "hostlistsorted", "n3,n1,n2"}); code != 0 || out.String() != "n[1-3]\n" {
		t.Errorf("show hostlistsorted: %d %q %q", code, out, errb)
	}
	if code := runScontrol(t.Context(), env, []string{"show", "hostnames", "n[1-"}); code != 0 || errb.String() != "Invalid hostlist: n[1-\n" {
		t.Errorf("show hostnames n[1-: %d %q", code, errb)
	}
}

// TestScontrolShowPartitionOracle: a partition of Nodes=ALL as Slurm
// 24.11's scontrol show partition prints it (oracle, 4 nodes of 8 CPUs).
func TestScontrolShowPartitionOracle(t *testing.T) {
	p := api.PartitionRecord{Name: "main", Default: true, State: "UP", MaxTimeSec: api.TimeInfinite, Nodes: "n[1-4]",
		NodeSets: "ALL", TotalCPUs: 32, TotalNodes: 4, MaxNodes: -1, MaxCPUsPerNode: -1, PriorityJobFactor: 1,
		PriorityTier: 1, OverSubscribe: "NO", PreemptMode: "REQUEUE", AllowAccounts: "ALL", AllowQOS: "ALL",
		AllowGroups: "ALL", TRES: "cpu=32,mem=250G,node=4,billing=32,gres/gpu=16"}
	want := `PartitionName=main
   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL
   AllocNodes=ALL Default=YES QoS=N/A
   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO ExclusiveTopo=NO GraceTime=0 Hidden=NO
   MaxNodes=UNLIMITED MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED MaxCPUsPerSocket=UNLIMITED
   NodeSets=ALL
   Nodes=n[1-4]
   PriorityJobFactor=1 PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO
   OverTimeLimit=NONE PreemptMode=REQUEUE
   State=UP TotalCPUs=32 TotalNodes=4 SelectTypeParameters=NONE
   JobDefaults=(null)
   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED
   TRES=cpu=32,mem=250G,node=4,billing=32,gres/gpu=16`
	if got := strings.Join(PartitionRecordLines(&p), "\n   "); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestSecsPreSuspend: whole seconds of the clock, as slurmctld's time_t
// arithmetic gives them (oracle, preempt-suspend-gang: started just
// before a tick, suspended three ticks later, SecsPreSuspend=3).
func TestSecsPreSuspend(t *testing.T) {
	start := time.Date(2026, 11, 26, 10, 0, 0, 900_000_000, time.UTC)
	for _, c := range []struct {
		suspend   time.Duration
		suspended int64
		want      int64
	}{
		{2200 * time.Millisecond, 0, 3},
		{2000 * time.Millisecond, 0, 2},
		{65 * time.Second, 60, 5},
	} {
		j := &api.JobInfo{StartTime: start, SuspendTime: start.Add(c.suspend), SuspendedSec: c.suspended}
		if got := secsPreSuspend(j); got != c.want {
			t.Errorf("suspended after %s (%d s suspended before): %d, want %d", c.suspend, c.suspended, got, c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
