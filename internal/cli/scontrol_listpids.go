package cli

// scontrol listpids [JOBID[.STEPID]] [NODENAME]: the processes of the job
// steps running on a node, which Slurm's scontrol reads from the
// slurmstepds of its own host (or of NODENAME's slurmd where several run
// on one host). Sluice asks the controller, which asks the node's agent.
// The messages, their stream and exit codes are Slurm 24.11's (oracle).

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Slurm's step ids of the batch and extern steps (SLURM_BATCH_SCRIPT,
// SLURM_EXTERN_CONT), which "JOB.STEP" may give as numbers.
const (
	batchStepID  = 0xfffffffb
	externStepID = 0xfffffffc
)

// listPidsQuery is what listpids was asked: every step (all), a job's
// steps, or one step; badStep is a step id that did not parse, for which
// Slurm prints its complaint and an empty list that succeeds.
type listPidsQuery struct {
	all     bool
	job     uint32
	step    *uint32
	badStep bool
	node    string
}

// parseListPids reads listpids' arguments; the error is Slurm's message.
func parseListPids(args []string) (listPidsQuery, error) {
	var q listPidsQuery
	switch {
	case len(args) > 2:
		return q, fmt.Errorf("too many arguments for keyword:listpids")
	case len(args) == 2:
		q.node = args[1]
	}
	if len(args) == 0 || args[0] == "*" {
		q.all = true
		return q, nil
	}
	jobPart, stepPart, hasStep := strings.Cut(args[0], ".")
	job, ok := parseCNumber(jobPart)
	if !ok {
		return q, fmt.Errorf("%q does not look like a jobid", args[0])
	}
	q.job = job
	if hasStep {
		step, ok := parseCNumber(stepPart)
		if !ok {
			q.badStep = true
			return q, fmt.Errorf("%q does not look like a stepid", args[0])
		}
		q.step = &step
	}
	return q, nil
}

// parseCNumber reads a number as Slurm's strtol and a cast to uint32 do
// there: "" is 0 and "-1" is 4294967295.
func parseCNumber(s string) (uint32, bool) {
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return uint32(n), true
}

// stepNumber is a step's id as Slurm numbers it.
func stepNumber(step string) uint32 {
	switch step {
	case "batch":
		return batchStepID
	case "extern":
		return externStepID
	}
	n, _ := strconv.ParseUint(step, 10, 32)
	return uint32(n)
}

const listPidsHeader = "PID      JOBID    STEPID   LOCALID GLOBALID\n"

// renderListPids prints the steps q asks for among the node's steps, or
// Slurm's message for none, and returns the exit code. node is the node's
// name ("" when the client's host is no node: Slurm prints "(null)").
func renderListPids(stdout, stderr io.Writer, q listPidsQuery, node string, steps []api.StepPids) int {
	if node == "" {
		node = "(null)"
	}
	var picked []api.StepPids
	for _, s := range steps {
		if q.all || s.JobID == q.job && (q.step == nil || stepNumber(s.Step) == *q.step) {
			picked = append(picked, s)
		}
	}
	switch {
	case len(picked) > 0:
	case q.all:
		fmt.Fprintln(stderr, "No job steps exist on this node.")
		return 1
	case q.step != nil:
		fmt.Fprintf(stderr, "StepId=%d.%d does not exist on node %s.\n", q.job, *q.step, node)
		return 1
	case len(steps) == 0:
		fmt.Fprintf(stderr, "JobId=%d does not exist on node %s.\n", q.job, node)
		return 1
	default:
		fmt.Fprintf(stderr, "There are no steps for job %d on node %s.\n", q.job, node)
		return 1
	}
	var b strings.Builder
	b.WriteString(listPidsHeader)
	for _, s := range picked {
		for _, p := range s.Pids {
			local, global := "-", "-"
			if p.Local >= 0 {
				local, global = strconv.Itoa(p.Local), strconv.Itoa(p.Global)
			}
			fmt.Fprintf(&b, "%-8d %-8d %-8s %-7s %-8s \n", p.PID, s.JobID, s.Step, local, global)
		}
	}
	io.WriteString(stdout, b.String())
	return 0
}

// listPids runs scontrol listpids.
func (s *scontrolRun) listPids(args []string) int {
	return listPidsOn(s.env.Stdout, s.env.Stderr, args, func(q listPidsQuery) (string, []api.StepPids, int) {
		res, err := s.cl.ListPids(s.ctx, api.ListPidsRequest{Node: q.node, Host: shortHostname()})
		if err != nil {
			return "", nil, clientError(s.env, "scontrol", err)
		}
		if res.Error != "" {
			fmt.Fprintf(s.env.Stderr, "scontrol: error: %s\n", res.Error)
		}
		return res.Node, res.Steps, -1
	})
}

// listPidsOn parses args, asks fetch for the node's steps (or the exit
// code of its failure, -1 when none) and prints them; it returns the exit
// code.
func listPidsOn(stdout, stderr io.Writer, args []string, fetch func(listPidsQuery) (string, []api.StepPids, int)) int {
	q, err := parseListPids(args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		if q.badStep {
			// Slurm goes on with an empty list and succeeds (oracle:
			// "scontrol listpids 1.x n1").
			fmt.Fprint(stdout, listPidsHeader)
			return 0
		}
		return 1
	}
	node, steps, rc := fetch(q)
	if rc >= 0 {
		return rc
	}
	return renderListPids(stdout, stderr, q, node, steps)
}
