package cli

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// stepsFixture is the oracle's situation: alice's job 1 on n[1-2], its
// batch step since 23:14:50 and step 0 (3 tasks) since 23:14:51, seen at
// 23:14:55 (sbatch -N2 -n3 --wrap 'srun -n3 sleep 100').
func stepsFixture() api.StepsResponse {
	t0 := time.Date(2026, 11, 26, 23, 14, 50, 0, time.Local)
	base := api.StepInfo{JobID: 1, JobIDStr: "1", Partition: "main", User: "alice", UID: 1001,
		TimeLimitSec: api.TimeInfinite, State: "RUNNING"}
	batch, step := base, base
	batch.Step, batch.Name, batch.Start, batch.NTasks, batch.NodeList = "batch", "batch", t0, 1, "n1"
	step.Step, step.Name, step.Start, step.NTasks, step.NodeList = "0", "sleep", t0.Add(time.Second), 3, "n[1-2]"
	return api.StepsResponse{Now: t0.Add(5 * time.Second), Steps: []api.StepInfo{batch, step}}
}

// TestSqueueSteps: squeue -s as Slurm 24.11 printed it (oracle commands
// in each case): layout, step letters, -O step fields, unknown letters
// printed as written and reported, a step list.
func TestSqueueSteps(t *testing.T) {
	cases := []struct {
		args      []string
		want      string
		bad       []string
		listError string
	}{
		{[]string{"-s"}, "         STEPID     NAME PARTITION     USER      TIME NODELIST\n" +
			"            1.0    sleep      main    alice      0:04 n[1-2]\n        1.batch    batch      main    alice      0:05 n1\n", nil, ""},
		{[]string{"-s", "-o", "%i|%j|%P|%u|%M|%l|%N|%A|%b|%U|%S"}, "STEPID|NAME|PARTITION|USER|TIME|TIME_LIMIT|NODELIST|TASKS|TRES_PER_JOB|UID|START_TIME\n" +
			"1.0|sleep|main|alice|0:04|UNLIMITED|n[1-2]|3|(null)|1001|2026-11-26T23:14:51\n" +
			"1.batch|batch|main|alice|0:05|UNLIMITED|n1|1|(null)|1001|2026-11-26T23:14:50\n", nil, ""},
		{[]string{"-s", "-h", "-o", "%i %t %a"}, "1.0 %t %a\n1.batch %t %a\n", []string{"t", "a"}, ""},
		{[]string{"-s", "-h", "-O", "StepId,StepName,NumTasks,StepState,NodeList"},
			"1.0                 sleep               3                   RUNNING             \n" +
				"1.batch             batch               1                   RUNNING             \n", []string{"NodeList"}, ""},
		{[]string{"--steps=1.0", "-h"}, "            1.0    sleep      main    alice      0:04 n[1-2]\n", nil, ""},
		{[]string{"-s", "9.0", "-h"}, "", nil, ""},
		{[]string{"--steps=1"}, "", nil, "Invalid job_step id: 1.??"},
	}
	for _, c := range cases {
		o, err := parseSqueue(c.args)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		want, err := parseStepList(o.steps)
		if c.listError != "" {
			if err == nil || err.Error() != c.listError {
				t.Errorf("%v: %v, want %q", c.args, err, c.listError)
			}
			continue
		}
		got, bad := RenderSqueueSteps(stepsFixture(), o, want)
		if got != c.want || strings.Join(bad, ",") != strings.Join(c.bad, ",") {
			t.Errorf("squeue %q:\n%s(bad %v)\nwant:\n%s(bad %v)", c.args, got, bad, c.want, c.bad)
		}
	}
}

// TestSqueueModes: --only-job-state prints the id and state only, also
// with -o (oracle: `squeue --only-job-state` "JOBID ST", pending first);
// -P lists a pending multi-partition job once per partition.
func TestSqueueModes(t *testing.T) {
	now := time.Date(2026, 11, 26, 23, 19, 54, 0, time.Local)
	onlyState := api.JobsResponse{Now: now, Jobs: []api.JobInfo{
		{JobID: 1, JobIDStr: "1", Partition: "main", State: "RUNNING", StateShort: "R", StartTime: now, Priority: 156},
		{JobID: 2, JobIDStr: "2", Partition: "main", State: "PENDING", StateShort: "PD", Reason: "JobHeldUser"},
	}}
	jobs := api.JobsResponse{Now: now, Jobs: []api.JobInfo{
		{JobID: 1, JobIDStr: "1", Name: "wrap", User: "alice", Partition: "main", State: "RUNNING", StateShort: "R", StartTime: now.Add(-2 * time.Second), NumNodes: 4, NodeList: "n[1-4]", Priority: 156},
		{JobID: 2, JobIDStr: "2", Name: "wrap", User: "bob", Partition: "main,second", State: "PENDING", StateShort: "PD", Reason: "JobHeldUser", NumNodes: 1},
	}}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--only-job-state"}, "             JOBID ST\n                 2 PD\n                 1  R\n"},
		{[]string{"--only-job-state", "-o", "%i %u", "-h", "-j", "2"}, "                 2 PD\n"},
		{[]string{"-P", "-h", "-o", "%i %P %t"}, "1 main R\n2 main PD\n2 second PD\n"},
		{[]string{"-h", "-o", "%i %P %t"}, "1 main R\n2 main,second PD\n"},
	} {
		o, err := parseSqueue(c.args)
		if err != nil {
			t.Fatal(err)
		}
		res := jobs
		if o.onlyState {
			res = onlyState
		}
		got, err := RenderSqueue(res, o)
		if o.perPartition || !o.onlyState {
			got = sortedLines(got) // the order of multi-partition rows is not the point here
		}
		if err != nil || got != c.want {
			t.Errorf("squeue %q:\n%s\nwant:\n%s (%v)", c.args, got, c.want, err)
		}
	}
}

func sortedLines(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}
