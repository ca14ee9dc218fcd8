package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestListPidsMessages: scontrol listpids' argument parsing and what it
// prints for a node's steps, as Slurm 24.11 does (oracle): "*" and no
// argument list every step, "2." is step 0 and "2.-1" step 4294967295,
// the batch step answers to its number, a node not found is "(null)", and
// a step id that does not parse prints its complaint and an empty list
// that succeeds.
func TestListPidsMessages(t *testing.T) {
	steps := []api.StepPids{
		{JobID: 2, Step: "batch", Pids: []api.StepPid{{PID: 6257, Local: 0, Global: 0}, {PID: 6262, Local: -1, Global: -1}}},
		{JobID: 2, Step: "0", Pids: []api.StepPid{{PID: 6320, Local: 0, Global: 0}, {PID: 6321, Local: 1, Global: 1}}},
	}
	const head = "PID      JOBID    STEPID   LOCALID GLOBALID\n"
	batch := "6257     2        batch    0       0        \n6262     2        batch    -       -        \n"
	step0 := "6320     2        0        0       0        \n6321     2        0        1       1        \n"
	cases := []struct {
		args     []string
		node     string
		steps    []api.StepPids
		out, err string
		rc       int
	}{
		{nil, "n1", steps, head + batch + step0, "", 0},
		{[]string{"*", "n1"}, "n1", steps, head + batch + step0, "", 0},
		{[]string{"2", "n1"}, "n1", steps, head + batch + step0, "", 0},
		{[]string{"2.0", "n1"}, "n1", steps, head + step0, "", 0},
		{[]string{"2.", "n1"}, "n1", steps, head + step0, "", 0},
		{[]string{"2.4294967291", "n1"}, "n1", steps, head + batch, "", 0},
		{[]string{"2.1", "n1"}, "n1", steps, "", "StepId=2.1 does not exist on node n1.\n", 1},
		{[]string{"2.-1", "n1"}, "n1", steps, "", "StepId=2.4294967295 does not exist on node n1.\n", 1},
		{[]string{"7", "n1"}, "n1", steps, "", "There are no steps for job 7 on node n1.\n", 1},
		{[]string{"", "n1"}, "n1", steps, "", "There are no steps for job 0 on node n1.\n", 1},
		{[]string{"7", "n3"}, "n3", nil, "", "JobId=7 does not exist on node n3.\n", 1},
		{[]string{"7"}, "", nil, "", "JobId=7 does not exist on node (null).\n", 1},
		{nil, "", nil, "", "No job steps exist on this node.\n", 1},
		{[]string{"2.batch", "n1"}, "n1", steps, head, "\"2.batch\" does not look like a stepid\n", 0},
		{[]string{"2_1", "n1"}, "n1", steps, "", "\"2_1\" does not look like a jobid\n", 1},
		{[]string{"2+0"}, "n1", steps, "", "\"2+0\" does not look like a jobid\n", 1},
		{[]string{"1", "2", "3"}, "n1", steps, "", "too many arguments for keyword:listpids\n", 1},
	}
	for _, tc := range cases {
		var out, errb bytes.Buffer
		rc := listPidsOn(&out, &errb, tc.args, func(listPidsQuery) (string, []api.StepPids, int) { return tc.node, tc.steps, -1 })
		if rc != tc.rc || out.String() != tc.out || errb.String() != tc.err {
			t.Errorf("listpids %s: exit %d, stdout:\n%sstderr: %q\nwant exit %d, stdout:\n%sstderr: %q",
				strings.Join(tc.args, " "), rc, out.String(), errb.String(), tc.rc, tc.out, tc.err)
		}
	}
}
