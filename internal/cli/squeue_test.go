package cli

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// fixtureNow is the controller clock of the fixtures (local time, so the
// rendered wall clock does not depend on TZ).
var fixtureNow = time.Date(2026, 1, 2, 10, 0, 0, 0, time.Local)

func fixtureAgo(d time.Duration) time.Time { return fixtureNow.Add(-d) }

// queueFixture is a small queue: running, pending for resources, held,
// an array with a throttle, a finished job and a ReqNodeNotAvail one.
func queueFixture() api.JobsResponse {
	base := func(id uint32, name, user, part, state, short string) api.JobInfo {
		return api.JobInfo{JobID: id, JobIDStr: fixtureID(id), ArrayTaskID: -1, Name: name, User: user, UID: 1000 + id%7,
			Group: "users", GID: 100, Account: "research", QOS: "normal", Partition: part, State: state,
			StateShort: short, SubmitTime: fixtureAgo(3 * time.Hour), TimeLimitSec: 7200, NumNodes: 1, NumCPUs: 1,
			NumTasks: 1, CPUsPerTask: 1, ExitCode: "0:0", WorkDir: "/home/" + user}
	}
	run := base(101, "train", "alice", "debug", "RUNNING", "R")
	run.StartTime, run.NodeList, run.NumNodes, run.NumCPUs, run.Priority = fixtureAgo(time.Hour+2*time.Minute+3*time.Second), "n[1-2]", 2, 8, 9000
	big := base(102, "big", "bob", "debug", "PENDING", "PD")
	big.Reason, big.Priority, big.ExpectedStart, big.SchedNodes, big.NumCPUs = "Resources", 500, fixtureNow.Add(time.Hour), "n3", 4
	held := base(103, "held", "alice", "gpu", "PENDING", "PD")
	held.Reason, held.Hold, held.TimeLimitSec = "JobHeldUser", "user", api.TimeInfinite
	arr := base(104, "sweep", "carol", "debug", "PENDING", "PD")
	arr.JobIDStr, arr.ArrayJobID, arr.ArrayTasks, arr.Reason, arr.Priority = "104_[3-5%2]", 104, "3-5%2", "JobArrayTaskLimit", 700
	arr.ArrayThrottle = 2
	task := base(108, "sweep", "carol", "debug", "RUNNING", "R")
	task.JobIDStr, task.ArrayJobID, task.ArrayTaskID, task.NodeList = "104_1", 104, 1, "n4"
	task.StartTime, task.TimeLimitSec, task.Priority = fixtureAgo(5*time.Minute), 1800, 700
	done := base(105, "done", "alice", "debug", "COMPLETED", "CD")
	done.StartTime, done.EndTime, done.NodeList = fixtureAgo(2*time.Hour), fixtureAgo(90*time.Minute), "n3"
	nodeWait := base(106, "pinned", "dave", "gpu", "PENDING", "PD")
	nodeWait.Reason, nodeWait.StateDesc, nodeWait.QOS, nodeWait.Account, nodeWait.Priority = "ReqNodeNotAvail",
		"ReqNodeNotAvail, UnavailableNodes:n6", "high", "physics", 800
	return api.JobsResponse{Now: fixtureNow, Jobs: []api.JobInfo{run, big, held, arr, done, nodeWait, task}}
}

// oracleQueueAt is when squeue ran on the oracle for TestSqueueOracle
// (local time, so the rendered wall clock does not depend on TZ).
var oracleQueueAt = time.Date(2026, 11, 26, 22, 51, 32, 0, time.Local)

func oracleClock(h, m, s int) time.Time { return time.Date(2026, 11, 26, h, m, s, 0, time.Local) }

// oracleQueueFixture is the queue Slurm 24.11 had when TestSqueueOracle's
// expectations were recorded, on 6 nodes (8 CPUs each) in partitions debug
// (n[1-4], MaxTime=60, default) and gpu (n[5-6]; n5 drained, n6 not
// responding). The oracle: `oracle.sh up --nodes 6` with SlurmdTimeout=10
// and those two PartitionName lines; accounts research (alice, bob,
// charlie) and physics (bob, dave), QOS high added to dave's; then
//
//	alice$ sbatch -J done --wrap 'srun hostname; sleep 2'      # 1, completed
//	bob$ sbatch -J fail -A physics --wrap 'sleep 1; exit 1'     # 2, failed
//	alice$ sbatch -J train -N2 -n16 -t 60 --wrap 'sleep 3000'  # 3, n[1-2]
//	charlie$ sbatch -J sweep --array=1-5%2 -t 30 ...            # 4: 4_1 (5), 4_2 (6) on n3
//	bob$ sbatch -J big -N2 -n16 -t 60 ...                      # 7, Resources
//	alice$ sbatch -J held -p gpu -H ...                        # 8
//	dave$ sbatch -J pinned -p gpu -q high -w n6 ...            # 9, ReqNodeNotAvail
//
// with the priorities, times and planned start squeue showed.
func oracleQueueFixture() api.JobsResponse {
	type who struct {
		user    string
		uid     uint32
		account string
	}
	users := map[string]who{"alice": {"alice", 1001, "research"}, "bob": {"bob", 1002, "research"},
		"charlie": {"charlie", 1003, "research"}, "dave": {"dave", 1004, "physics"}}
	job := func(id uint32, name, user, part, state, short string, submit time.Time) api.JobInfo {
		u := users[user]
		return api.JobInfo{JobID: id, JobIDStr: fixtureID(id), ArrayTaskID: -1, Name: name, User: user, UID: u.uid,
			Group: user, GID: u.uid, Account: u.account, QOS: "normal", Partition: part, State: state,
			StateShort: short, SubmitTime: submit, EligibleTime: submit, AccrueTime: submit, LastSchedEval: submit,
			TimeLimitSec: 3600, NumNodes: 1, NumCPUs: 1, NumTasks: 1, CPUsPerTask: 1, ExitCode: "0:0", Requeue: true,
			MinMemoryMB: 1000, MemPerCPU: true, ReqTRES: "cpu=1,mem=1000M,node=1,billing=1", AllocNode: "localhost",
			AllocSID: 4045, WorkDir: "/var/tmp/slurm-oracle-h1/jobs", StdErr: "/dev/null", StdIn: "/dev/null",
			StdOut: "/dev/null"}
	}
	ran := func(j *api.JobInfo, start, end time.Time, nodes string) {
		j.StartTime, j.EndTime, j.NodeList, j.BatchHost = start, end, nodes, nodes
		j.LastSchedEval, j.PreemptEligibleTime, j.AllocTRES = start, start, j.ReqTRES
	}
	done := job(1, "done", "alice", "debug", "COMPLETED", "CD", oracleClock(22, 50, 35))
	ran(&done, oracleClock(22, 50, 36), oracleClock(22, 50, 38), "n1")
	fail := job(2, "fail", "bob", "debug", "FAILED", "F", oracleClock(22, 50, 35))
	ran(&fail, oracleClock(22, 50, 36), oracleClock(22, 50, 37), "n1")
	fail.Account, fail.Reason, fail.ExitCode = "physics", "NonZeroExitCode", "1:0"
	train := job(3, "train", "alice", "debug", "RUNNING", "R", oracleClock(22, 51, 0))
	ran(&train, oracleClock(22, 51, 1), oracleClock(23, 51, 1), "n[1-2]")
	train.BatchHost, train.NumNodes, train.NumCPUs, train.NumTasks, train.Priority = "n1", 2, 16, 16, 625
	train.ReqTRES, train.AllocTRES = "cpu=16,mem=16000M,node=2,billing=16", "cpu=16,mem=16000M,node=2,billing=16"
	sweep := job(4, "sweep", "charlie", "debug", "PENDING", "PD", oracleClock(22, 51, 6))
	sweep.JobIDStr, sweep.ArrayJobID, sweep.ArrayTasks, sweep.ArrayThrottle = "4_[3-5%2]", 4, "3-5%2", 2
	sweep.Reason, sweep.Priority, sweep.TimeLimitSec, sweep.EligibleTime = "JobArrayTaskLimit", 33372, 1800, time.Time{}
	sweep.AccrueTime, sweep.LastSchedEval = oracleClock(22, 51, 7), oracleClock(22, 51, 7)
	jobs := []api.JobInfo{done, fail, train, sweep}
	for task := range int32(2) {
		t := job(5+uint32(task), "sweep", "charlie", "debug", "RUNNING", "R", oracleClock(22, 51, 6))
		t.JobIDStr, t.ArrayJobID, t.ArrayTaskID, t.ArrayThrottle = fmt.Sprintf("4_%d", task+1), 4, task+1, 2
		ran(&t, oracleClock(22, 51, 7), oracleClock(23, 21, 7), "n3")
		t.TimeLimitSec, t.Priority, t.EligibleTime, t.AccrueTime = 1800, 39, oracleClock(22, 51, 7), oracleClock(22, 51, 7)
		jobs = append(jobs, t)
	}
	big := job(7, "big", "bob", "debug", "PENDING", "PD", oracleClock(22, 51, 12))
	big.Reason, big.Priority, big.ExpectedStart, big.SchedNodes = "Resources", 50625, oracleClock(23, 21, 7), "n[3-4]"
	big.NumNodes, big.MaxNodes, big.NumCPUs, big.NumTasks = 2, 2, 16, 16
	big.ReqTRES, big.LastSchedEval = "cpu=16,mem=16000M,node=2,billing=16", oracleClock(22, 51, 29)
	held := job(8, "held", "alice", "gpu", "PENDING", "PD", oracleClock(22, 51, 12))
	held.Reason, held.Hold, held.TimeLimitSec = "JobHeldUser", "user", api.TimeInfinite
	pinned := job(9, "pinned", "dave", "gpu", "PENDING", "PD", oracleClock(22, 51, 12))
	pinned.Reason, pinned.StateDesc, pinned.QOS, pinned.Priority = "ReqNodeNotAvail",
		"ReqNodeNotAvail, UnavailableNodes:n6", "high", 83411
	pinned.TimeLimitSec, pinned.ReqNodes = api.TimeInfinite, "n6"
	jobs = append(jobs, big, held, pinned)
	return api.JobsResponse{Now: oracleQueueAt, Jobs: jobs}
}

// TestSqueueOracle: squeue's layouts, filters and sorts on
// oracleQueueFixture, each expectation what Slurm 24.11's squeue printed
// for the same command (at seconds after oracleQueueAt).
func TestSqueueOracle(t *testing.T) {
	cases := []struct {
		name string
		args []string
		at   int
		want string
	}{
		{"default", nil, 0, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"                 7     debug      big      bob PD       0:00      2 (Resources)\n" +
			"         4_[3-5%2]     debug    sweep  charlie PD       0:00      1 (JobArrayTaskLimit)\n" +
			"                 3     debug    train    alice  R       0:31      2 n[1-2]\n" +
			"               4_1     debug    sweep  charlie  R       0:25      1 n3\n" +
			"               4_2     debug    sweep  charlie  R       0:25      1 n3\n" +
			"                 9       gpu   pinned     dave PD       0:00      1 (ReqNodeNotAvail, UnavailableNodes:n6)\n" +
			"                 8       gpu     held    alice PD       0:00      1 (JobHeldUser)\n"},
		{"long", []string{"-l"}, 0, "Thu Nov 26 22:51:32 2026\n" +
			"             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES NODELIST(REASON)\n" +
			"                 7     debug      big      bob  PENDING       0:00   1:00:00      2 (Resources)\n" +
			"         4_[3-5%2]     debug    sweep  charlie  PENDING       0:00     30:00      1 (JobArrayTaskLimit)\n" +
			"                 3     debug    train    alice  RUNNING       0:31   1:00:00      2 n[1-2]\n" +
			"               4_1     debug    sweep  charlie  RUNNING       0:25     30:00      1 n3\n" +
			"               4_2     debug    sweep  charlie  RUNNING       0:25     30:00      1 n3\n" +
			"                 9       gpu   pinned     dave  PENDING       0:00 UNLIMITED      1 (ReqNodeNotAvail, UnavailableNodes:n6)\n" +
			"                 8       gpu     held    alice  PENDING       0:00 UNLIMITED      1 (JobHeldUser)\n"},
		{"noheader", []string{"-h"}, 0, "                 7     debug      big      bob PD       0:00      2 (Resources)\n" +
			"         4_[3-5%2]     debug    sweep  charlie PD       0:00      1 (JobArrayTaskLimit)\n" +
			"                 3     debug    train    alice  R       0:31      2 n[1-2]\n" +
			"               4_1     debug    sweep  charlie  R       0:25      1 n3\n" +
			"               4_2     debug    sweep  charlie  R       0:25      1 n3\n" +
			"                 9       gpu   pinned     dave PD       0:00      1 (ReqNodeNotAvail, UnavailableNodes:n6)\n" +
			"                 8       gpu     held    alice PD       0:00      1 (JobHeldUser)\n"},
		{"format", []string{"-o", "%.7i %.9P %.8j %.8u %.2t %.10M %.6D %R"}, 0, "  JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"      7     debug      big      bob PD       0:00      2 (Resources)\n" +
			"4_[3-5%     debug    sweep  charlie PD       0:00      1 (JobArrayTaskLimit)\n" +
			"      3     debug    train    alice  R       0:31      2 n[1-2]\n" +
			"    4_1     debug    sweep  charlie  R       0:25      1 n3\n" +
			"    4_2     debug    sweep  charlie  R       0:25      1 n3\n" +
			"      9       gpu   pinned     dave PD       0:00      1 (ReqNodeNotAvail, UnavailableNodes:n6)\n" +
			"      8       gpu     held    alice PD       0:00      1 (JobHeldUser)\n"},
		{"format-more", []string{"-o", "%i|%A|%F|%K|%a|%q|%T|%l|%L|%C|%r|%Q|%p|%y|%S|%V|%E"}, 0, "JOBID|JOBID|ARRAY_JOB_ID|ARRAY_TASK_ID|ACCOUNT|QOS|STATE|TIME_LIMIT|TIME_LEFT|CPUS|REASON|PRIORITY|PRIORITY|NICE|START_TIME|SUBMIT_TIME|DEPENDENCY\n" +
			"7|7|7|N/A|research|normal|PENDING|1:00:00|1:00:00|16|Resources|50625|0.00001178705134|0|2026-11-26T23:21:07|2026-11-26T22:51:12|(null)\n" +
			"4_[3-5%2]|4|4|3-5%2|research|normal|PENDING|30:00|30:00|1|JobArrayTaskLimit|33372|0.00000777002424|0|N/A|2026-11-26T22:51:06|(null)\n" +
			"3|3|3|N/A|research|normal|RUNNING|1:00:00|59:29|16|None|625|0.00000014551915|0|2026-11-26T22:51:01|2026-11-26T22:51:00|(null)\n" +
			"4_1|5|4|1|research|normal|RUNNING|30:00|29:35|1|None|39|0.00000000908040|0|2026-11-26T22:51:07|2026-11-26T22:51:06|(null)\n" +
			"4_2|6|4|2|research|normal|RUNNING|30:00|29:35|1|None|39|0.00000000908040|0|2026-11-26T22:51:07|2026-11-26T22:51:06|(null)\n" +
			"9|9|9|N/A|physics|high|PENDING|UNLIMITED|UNLIMITED|1|ReqNodeNotAvail, UnavailableNodes:n6|83411|0.00001942063682|0|N/A|2026-11-26T22:51:12|(null)\n" +
			"8|8|8|N/A|research|normal|PENDING|UNLIMITED|UNLIMITED|1|JobHeldUser|0|0.00000000000000|0|N/A|2026-11-26T22:51:12|(null)\n"},
		{"Format", []string{"-O", "JobID,Name:12,State:.10,TimeLimit,ReasonList"}, 0, "JOBID               NAME             STATETIME_LIMIT          NODELIST(REASON)    \n" +
			"7                   big            PENDING1:00:00             (Resources)         \n" +
			"4                   sweep          PENDING30:00               (JobArrayTaskLimit) \n" +
			"3                   train          RUNNING1:00:00             n[1-2]              \n" +
			"5                   sweep          RUNNING30:00               n3                  \n" +
			"6                   sweep          RUNNING30:00               n3                  \n" +
			"9                   pinned         PENDINGUNLIMITED           (ReqNodeNotAvail, Un\n" +
			"8                   held           PENDINGUNLIMITED           (JobHeldUser)       \n"},
		{"user", []string{"-u", "alice"}, 0, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"                 3     debug    train    alice  R       0:31      2 n[1-2]\n" +
			"                 8       gpu     held    alice PD       0:00      1 (JobHeldUser)\n"},
		{"states-all", []string{"-t", "all"}, 0, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"                 1     debug     done    alice CD       0:02      1 n1\n" +
			"                 2     debug     fail      bob  F       0:01      1 (NonZeroExitCode)\n" +
			"                 7     debug      big      bob PD       0:00      2 (Resources)\n" +
			"         4_[3-5%2]     debug    sweep  charlie PD       0:00      1 (JobArrayTaskLimit)\n" +
			"                 3     debug    train    alice  R       0:31      2 n[1-2]\n" +
			"               4_1     debug    sweep  charlie  R       0:25      1 n3\n" +
			"               4_2     debug    sweep  charlie  R       0:25      1 n3\n" +
			"                 9       gpu   pinned     dave PD       0:00      1 (ReqNodeNotAvail, UnavailableNodes:n6)\n" +
			"                 8       gpu     held    alice PD       0:00      1 (JobHeldUser)\n"},
		{"states-pd", []string{"-t", "PD"}, 0, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"                 7     debug      big      bob PD       0:00      2 (Resources)\n" +
			"         4_[3-5%2]     debug    sweep  charlie PD       0:00      1 (JobArrayTaskLimit)\n" +
			"                 9       gpu   pinned     dave PD       0:00      1 (ReqNodeNotAvail, UnavailableNodes:n6)\n" +
			"                 8       gpu     held    alice PD       0:00      1 (JobHeldUser)\n"},
		{"partition", []string{"-p", "gpu"}, 0, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"                 9       gpu   pinned     dave PD       0:00      1 (ReqNodeNotAvail, UnavailableNodes:n6)\n" +
			"                 8       gpu     held    alice PD       0:00      1 (JobHeldUser)\n"},
		{"account-qos", []string{"-A", "physics", "-q", "high"}, 0, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"                 9       gpu   pinned     dave PD       0:00      1 (ReqNodeNotAvail, UnavailableNodes:n6)\n"},
		{"jobs-array", []string{"-j", "4"}, 1, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"         4_[3-5%2]     debug    sweep  charlie PD       0:00      1 (JobArrayTaskLimit)\n" +
			"               4_2     debug    sweep  charlie  R       0:26      1 n3\n" +
			"               4_1     debug    sweep  charlie  R       0:26      1 n3\n"},
		{"jobs-task", []string{"-j", "4_4"}, 1, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"               4_4     debug    sweep  charlie PD       0:00      1 (JobArrayTaskLimit)\n"},
		{"expand-array", []string{"-r"}, 1, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"                 7     debug      big      bob PD       0:00      2 (Resources)\n" +
			"               4_3     debug    sweep  charlie PD       0:00      1 (JobArrayTaskLimit)\n" +
			"               4_4     debug    sweep  charlie PD       0:00      1 (JobArrayTaskLimit)\n" +
			"               4_5     debug    sweep  charlie PD       0:00      1 (JobArrayTaskLimit)\n" +
			"                 3     debug    train    alice  R       0:32      2 n[1-2]\n" +
			"               4_1     debug    sweep  charlie  R       0:26      1 n3\n" +
			"               4_2     debug    sweep  charlie  R       0:26      1 n3\n" +
			"                 9       gpu   pinned     dave PD       0:00      1 (ReqNodeNotAvail, UnavailableNodes:n6)\n" +
			"                 8       gpu     held    alice PD       0:00      1 (JobHeldUser)\n"},
		{"start", []string{"--start"}, 1, "             JOBID PARTITION     NAME     USER ST          START_TIME  NODES SCHEDNODES           NODELIST(REASON)\n" +
			"                 7     debug      big      bob PD 2026-11-26T23:21:07      2 n[3-4]               (Resources)\n" +
			"         4_[3-5%2]     debug    sweep  charlie PD                 N/A      1 (null)               (JobArrayTaskLimit)\n" +
			"                 8       gpu     held    alice PD                 N/A      1 (null)               (JobHeldUser)\n" +
			"                 9       gpu   pinned     dave PD                 N/A      1 (null)               (ReqNodeNotAvail, UnavailableNodes:n6)\n"},
		{"sort", []string{"--sort", "-p,i"}, 1, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"                 9       gpu   pinned     dave PD       0:00      1 (ReqNodeNotAvail, UnavailableNodes:n6)\n" +
			"                 7     debug      big      bob PD       0:00      2 (Resources)\n" +
			"         4_[3-5%2]     debug    sweep  charlie PD       0:00      1 (JobArrayTaskLimit)\n" +
			"                 3     debug    train    alice  R       0:32      2 n[1-2]\n" +
			"               4_1     debug    sweep  charlie  R       0:26      1 n3\n" +
			"               4_2     debug    sweep  charlie  R       0:26      1 n3\n" +
			"                 8       gpu     held    alice PD       0:00      1 (JobHeldUser)\n"},
		{"sort-start", []string{"-S", "S", "-o", "%i %t %S %e"}, 1, "JOBID ST START_TIME END_TIME\n3 R 2026-11-26T22:51:01 2026-11-26T23:51:01\n" +
			"4_1 R 2026-11-26T22:51:07 2026-11-26T23:21:07\n4_2 R 2026-11-26T22:51:07 2026-11-26T23:21:07\n" +
			"7 PD 2026-11-26T23:21:07 2026-11-27T00:21:07\n4_[3-5%2] PD N/A N/A\n8 PD N/A N/A\n9 PD N/A N/A\n"},
		{"sort-start-desc", []string{"-S", "-S", "-o", "%i %t %S %e"}, 1, "JOBID ST START_TIME END_TIME\n7 PD 2026-11-26T23:21:07 2026-11-27T00:21:07\n" +
			"4_1 R 2026-11-26T22:51:07 2026-11-26T23:21:07\n4_2 R 2026-11-26T22:51:07 2026-11-26T23:21:07\n" +
			"3 R 2026-11-26T22:51:01 2026-11-26T23:51:01\n4_[3-5%2] PD N/A N/A\n8 PD N/A N/A\n9 PD N/A N/A\n"},
		{"nodelist", []string{"-w", "n2"}, 1, "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n" +
			"                 3     debug    train    alice  R       0:32      2 n[1-2]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := parseSqueue(c.args)
			if err != nil {
				t.Fatal(err)
			}
			res := oracleQueueFixture()
			res.Now = res.Now.Add(time.Duration(c.at) * time.Second)
			out, err := RenderSqueue(res, o)
			if err != nil {
				t.Fatal(err)
			}
			if out != c.want {
				t.Errorf("squeue %q:\n%s\nwant (Slurm 24.11):\n%s", c.args, out, c.want)
			}
		})
	}
}

func TestSqueueErrors(t *testing.T) {
	for _, args := range [][]string{{"-O", "NoSuchField"}, {"-o", "%.10"}} {
		o, err := parseSqueue(args)
		if err == nil {
			_, err = RenderSqueue(queueFixture(), o)
		}
		if err == nil {
			t.Errorf("squeue %v: no error", args)
		}
	}
	if _, err := parseSqueue([]string{"--bogus"}); err == nil {
		t.Error("unknown option accepted")
	}
}

func TestFormatParser(t *testing.T) {
	// '-' is no flag: "%-8" is text, and so is the "j" after it (oracle)
	items, err := parseFormat("%.18i %-8j%%x %5P")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		if it.field == 0 {
			got = append(got, "lit:"+it.lit)
			continue
		}
		got = append(got, string(it.field)+":"+fixtureID(uint32(it.width))+map[bool]string{true: "R", false: "L"}[it.right])
	}
	want := "i:18R|lit: |lit:%-|lit:8j%x |P:5L"
	if strings.Join(got, "|") != want {
		t.Errorf("items %v, want %s", got, want)
	}
}

func fixtureID(id uint32) string { return strconv.FormatUint(uint64(id), 10) }

// FuzzSqueueFormat checks that no format string makes squeue panic.
func FuzzSqueueFormat(f *testing.F) {
	for _, s := range []string{squeueDefault, squeueLong, squeueStart, "%", "%.", "%#", "%5", "%%%i", "%.100000i"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o := &squeueOpts{format: s}
		RenderSqueue(queueFixture(), o)
	})
}

// TestSqueueIterate: -i SECONDS reports again every interval until
// interrupted, each report headed by the time; -h drops the time with the
// header; a zero or non-numeric interval is refused.
func TestSqueueIterate(t *testing.T) {
	t.Parallel()
	h := newCtlHarness(t, "")
	if rc, _, errs := h.run(runSbatch, "-H", "-J", "waits", "--wrap", "true"); rc != 0 {
		t.Fatalf("sbatch: %s", errs)
	}
	for _, tc := range []struct {
		args     []string
		headers  int // at least
		stampRow bool
	}{
		{[]string{"-i", "1"}, 2, true},
		{[]string{"--iterate=1", "-h", "-o", "%j"}, 0, false},
	} {
		env, out, _ := testEnv()
		env.Getenv = func(k string) string {
			if k == "SLUICE_SOCKET" {
				return h.sock
			}
			return ""
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		rc := runSqueue(ctx, env, tc.args)
		cancel()
		text := out.String()
		reports := strings.Count(text, "waits")
		if rc != 0 || reports < 2 || strings.Count(text, "JOBID") < tc.headers {
			t.Errorf("squeue %v: exit %d, %d reports:\n%s", tc.args, rc, reports, text)
		}
		first := strings.SplitN(text, "\n", 2)[0]
		_, err := time.ParseInLocation("Mon Jan _2 15:04:05 2006", first, time.Local)
		if (err == nil) != tc.stampRow {
			t.Errorf("squeue %v: first line %q (time stamp expected: %v)", tc.args, first, tc.stampRow)
		}
	}
	for _, bad := range []string{"0", "-2", "soon"} {
		if _, err := parseSqueue([]string{"-i", bad}); err == nil || err.Error() != "--iterate="+bad {
			t.Errorf("-i %s: %v", bad, err)
		}
	}
}

// TestSqueuePriorityDigits: %p is the priority over 2^32-1 with 14
// decimals, as Slurm 24.11 prints it (oracle: 101250 is 0.00002357410268,
// a held job's 0 is 0.00000000000000, 39 is 0.00000000908040).
func TestSqueuePriorityDigits(t *testing.T) {
	for prio, want := range map[uint32]string{101250: "0.00002357410268", 0: "0.00000000000000", 39: "0.00000000908040"} {
		j := api.JobInfo{Priority: prio}
		if got := squeueField(&j, 'p', time.Time{}); got != want {
			t.Errorf("priority %d: %%p %q, want %q", prio, got, want)
		}
	}
}

// TestSqueueLicensesAndTrailingBlanks: %W prints -L as written ((null)
// without licenses) and a line keeps its padding when the last field is
// empty (oracle: "3   PD " for -o '%i %.4t %N' on a pending job).
func TestSqueueLicensesAndTrailingBlanks(t *testing.T) {
	run := api.JobInfo{JobIDStr: "1", State: "RUNNING", StateShort: "R", Licenses: "zeta:1,matlab", NodeList: "n1"}
	pd := api.JobInfo{JobIDStr: "3", State: "PENDING", StateShort: "PD"}
	o, err := parseSqueue([]string{"-h", "-S", "i", "-o", "%i %.4t %W %N"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := RenderSqueue(api.JobsResponse{Now: fixtureNow, Jobs: []api.JobInfo{run, pd}}, o)
	if err != nil {
		t.Fatal(err)
	}
	want := "1    R zeta:1,matlab n1\n3   PD (null) \n"
	if out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

// TestSqueueArrayOrder: -S i lists an array's pending record after its
// running tasks; without -S, running tasks of one array tie in task order,
// newest record first when -j names the array (oracle, array-throttle
// scenario: squeue -j 1; TestSqueueOracle: squeue).
func TestSqueueArrayOrder(t *testing.T) {
	task := func(id uint32, tid int32, st string) api.JobInfo {
		return api.JobInfo{JobID: id, ArrayJobID: 1, ArrayTaskID: tid, JobIDStr: "1_" + strconv.Itoa(int(tid)), State: st,
			StateShort: map[string]string{"RUNNING": "R", "PENDING": "PD"}[st], Partition: "main"}
	}
	meta := task(1, -1, "PENDING")
	meta.JobIDStr = "1_[3-5%3]"
	jobs := []api.JobInfo{meta, task(3, 0, "RUNNING"), task(4, 1, "RUNNING"), task(9, 2, "RUNNING")}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-h", "-S", "i", "-o", "%i"}, "1_0\n1_1\n1_2\n1_[3-5%3]\n"},
		{[]string{"-h", "-o", "%i"}, "1_[3-5%3]\n1_0\n1_1\n1_2\n"},
		{[]string{"-h", "-o", "%i", "-j", "1"}, "1_[3-5%3]\n1_2\n1_1\n1_0\n"},
	} {
		o, err := parseSqueue(c.args)
		if err != nil {
			t.Fatal(err)
		}
		out, err := RenderSqueue(api.JobsResponse{Now: fixtureNow, Jobs: slices.Clone(jobs)}, o)
		if err != nil || out != c.want {
			t.Errorf("%v: %q %v, want %q", c.args, out, err, c.want)
		}
	}
}

// TestShowJobNarrowsToTask: scontrol show job 1_5 of a pending array
// record prints ArrayTaskId=5 (oracle, array-throttle scenario).
func TestShowJobNarrowsToTask(t *testing.T) {
	j := api.JobInfo{JobID: 1, ArrayJobID: 1, ArrayTaskID: -1, ArrayTasks: "3,5%3", ArrayThrottle: 3, Name: "arr",
		State: "PENDING", Reason: "JobArrayTaskLimit"}
	narrowToTask(&j, "1_5")
	line := JobRecordLines(&j, fixtureNow)[0]
	if want := "JobId=1 ArrayJobId=1 ArrayTaskId=5 ArrayTaskThrottle=3 JobName=arr"; line != want {
		t.Errorf("got %q, want %q", line, want)
	}
}

// TestSqueueUserAndLicenseFilters: --notme lists every user's jobs but the
// caller's, -L the jobs asking for one of the named licenses.
func TestSqueueUserAndLicenseFilters(t *testing.T) {
	res := queueFixture()
	res.Jobs[1].Licenses = "matlab:2,fluent"
	res.Jobs[3].Licenses = "fluent"
	for _, c := range []struct {
		args    []string
		notUser string
		want    string
	}{
		{[]string{"-h", "-o", "%i"}, "alice", "104_[3-5%2]\n102\n104_1\n106\n"},
		{[]string{"-h", "-o", "%i", "-L", "matlab"}, "", "102\n"},
		{[]string{"-h", "-o", "%i", "--licenses=fluent,abaqus"}, "", "104_[3-5%2]\n102\n"},
	} {
		o, err := parseSqueue(c.args)
		if err != nil {
			t.Fatal(err)
		}
		o.notUser = c.notUser
		out, err := RenderSqueue(res, o)
		if err != nil {
			t.Fatal(err)
		}
		if out != c.want {
			t.Errorf("squeue %v (not %q): got %q, want %q", c.args, c.notUser, out, c.want)
		}
	}
}

// TestSqueueNamedTasks: -j naming tasks of an array's pending record
// narrows the record to them, as Slurm 24.11's squeue printed on
// oracleQueueFixture's array 4 (pending 4_[3-5%2], running 4_1 and 4_2)
// with -o '%i %K %t'.
func TestSqueueNamedTasks(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-j", "4_3,4_5"}, "4_[3,5] 3,5 PD\n"},
		{[]string{"-j", "4_3,4_4"}, "4_[3-4] 3-4 PD\n"},
		{[]string{"-j", "4_5,4_3,4_4"}, "4_[3-5] 3-5 PD\n"},
		{[]string{"-j", "4_4,4"}, "4_4 4 PD\n4_1 1 R\n4_2 2 R\n"},
		{[]string{"-j", "4_1,4_4"}, "4_4 4 PD\n4_1 1 R\n"},
		{[]string{"-r", "-j", "4_3,4_5"}, "4_3 3 PD\n4_5 5 PD\n"},
	} {
		o, err := parseSqueue(append([]string{"-h", "-o", "%i %K %t"}, c.args...))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := RenderSqueue(oracleQueueFixture(), o); err != nil || got != c.want {
			t.Errorf("squeue %q: %q %v, want %q", c.args, got, err, c.want)
		}
	}
}

// TestSqueueEndedReasonList: %R of an ended job, as Slurm 24.11 printed
// them with squeue -t all -o '%i %j %t %R %r': a timed-out job its
// reason, a job cancelled while pending nothing, a completed job its nodes.
func TestSqueueEndedReasonList(t *testing.T) {
	jobs := []api.JobInfo{
		{JobID: 16, JobIDStr: "16", ArrayTaskID: -1, Name: "tmo", State: "TIMEOUT", StateShort: "TO",
			Reason: "TimeLimit", NodeList: "n4"},
		{JobID: 15, JobIDStr: "15", ArrayTaskID: -1, Name: "pdca", State: "CANCELLED", StateShort: "CA",
			Reason: "JobHeldUser"},
		{JobID: 1, JobIDStr: "1", ArrayTaskID: -1, Name: "done", State: "COMPLETED", StateShort: "CD", NodeList: "n1"},
	}
	o, err := parseSqueue([]string{"-t", "all", "-h", "-S", "i", "-o", "%i %j %t %R %r"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := RenderSqueue(api.JobsResponse{Now: oracleQueueAt, Jobs: jobs}, o)
	want := "1 done CD n1 None\n15 pdca CA  JobHeldUser\n16 tmo TO (TimeLimit) TimeLimit\n"
	if err != nil || got != want {
		t.Errorf("got %q %v, want %q", got, err, want)
	}
}

// TestSqueueBriefListing: squeue asks the controller for the brief record
// exactly when every column and sort key it prints is carried by it
// (api.BriefFields).
func TestSqueueBriefListing(t *testing.T) {
	cases := []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"-l"}, true},
		{[]string{"--start"}, true},
		{[]string{"-o", "%i %P %j %u %T %M %l %D %R %S %e %p"}, true},
		{[]string{"-o", "%i %C"}, false}, // CPUs come from the TRES
		{[]string{"-o", "%all"}, false},
		{[]string{"-O", "JobID,Name"}, false},
		{[]string{"-S", "C"}, false},
		{[]string{"-S", "-p,i"}, true},
	}
	for _, tc := range cases {
		o, err := parseSqueue(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := o.brief(); got != tc.want {
			t.Errorf("squeue %v: brief %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestBadJobState: squeue -t takes Slurm's state names and compact codes
// (any case) and "all"; anything else is refused before asking (oracle:
// squeue-filters, "Invalid job state specified: BOGUS").
func TestBadJobState(t *testing.T) {
	for _, c := range []struct{ list, bad string }{
		{"PD,R", ""}, {"pending,Running", ""}, {"all", ""}, {"cg,oom", ""},
		{"BOGUS", "BOGUS"}, {"R,nope", "nope"},
	} {
		if got := badJobState(c.list); got != c.bad {
			t.Errorf("badJobState(%q) = %q, want %q", c.list, got, c.bad)
		}
	}
}
