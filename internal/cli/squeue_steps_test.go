package cli

import (
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
