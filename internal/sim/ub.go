package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// ReadUBEvents parses the UB Slurm simulator's events format, one job per
// line:
//
//	-dt <submit s> -e submit_batch_job | -sim-walltime <run s> <sbatch options> pseudo.job
//
// The sbatch options go through the same parser as `sbatch` (parse), so
// QOS, partitions, memory, GRES and constraints come through. A
// -sim-walltime of -1 runs until the time limit; 0 ends at once. Jobs are
// numbered by line order (their trace IDs).
func ReadUBEvents(r io.Reader, parse SbatchParser) (*Trace, error) {
	if parse == nil {
		return nil, errors.New("UB events format needs the sbatch option parser")
	}
	t := newTrace("ub", r)
	err := lines(r, func(n int, line string) {
		if s := strings.TrimSpace(line); s == "" || s[0] == '#' {
			return
		}
		t.Records++
		j, err := ubLine(line, parse)
		if err != nil {
			t.bad(n, "%v", err)
			return
		}
		j.ID = int64(t.Records)
		j.Line = n
		t.add(&j)
	})
	if err != nil {
		return t, err
	}
	return t.finish()
}

func ubLine(line string, parse SbatchParser) (Job, error) {
	left, right, ok := strings.Cut(line, "|")
	if !ok {
		return Job{}, errors.New("no '|' between event and job")
	}
	var j Job
	lf := strings.Fields(left)
	sawSubmit := false
	for i := 0; i+1 < len(lf); i += 2 {
		switch lf[i] {
		case "-dt":
			dt, err := strconv.ParseFloat(lf[i+1], 64)
			if err != nil || dt < 0 || dt > 1e12 || math.IsNaN(dt) {
				return Job{}, fmt.Errorf("-dt %q: not a time", lf[i+1])
			}
			j.Submit = int64(dt)
		case "-e":
			if lf[i+1] != "submit_batch_job" {
				return Job{}, fmt.Errorf("unsupported event %q", lf[i+1])
			}
			sawSubmit = true
		default:
			return Job{}, fmt.Errorf("unknown event option %q", lf[i])
		}
	}
	if !sawSubmit {
		return Job{}, errors.New("missing -e submit_batch_job")
	}
	rf := strings.Fields(right)
	if len(rf) < 2 || rf[0] != "-sim-walltime" {
		return Job{}, errors.New("job part must start with -sim-walltime")
	}
	wt, err := strconv.ParseFloat(rf[1], 64)
	if err != nil || wt < -1 || wt > 1e12 || math.IsNaN(wt) {
		return Job{}, fmt.Errorf("-sim-walltime %q: not a duration", rf[1])
	}
	j.Runtime = int64(wt)
	if wt < 0 {
		j.Runtime = RunToLimit
	}
	spec, rest, err := parse(rf[2:])
	if err != nil {
		return Job{}, err
	}
	if len(rest) == 0 {
		return Job{}, errors.New("no script name after the options")
	}
	j.JobSpec = &spec
	j.GPUs = gpusOf(j.JobSpec)
	return j, nil
}

// gpusOf derives a job's total GPU count from --gpus, --gpus-per-node and
// --gres (gpu[:type]:N per node).
func gpusOf(s *api.JobSpec) int64 {
	gpus, perNode, gres, nodes := s.GPUs, s.GPUsPerNode, s.Gres, max(s.MinNodes, 1)
	if n := lastCount(gpus); n > 0 {
		return n
	}
	if n := lastCount(perNode); n > 0 {
		return n * int64(nodes)
	}
	var total int64
	for _, g := range splitComma(gres) {
		name, rest, _ := strings.Cut(g, ":")
		if name == "gpu" {
			total += lastCount(rest) * int64(nodes)
			if rest == "" {
				total += int64(nodes)
			}
		}
	}
	return total
}

// lastCount reads the count at the end of "N", "type:N".
func lastCount(s string) int64 {
	if s == "" {
		return 0
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		s = s[i+1:]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// ReadJSONL parses Sluice's own trace format: one JSON object per line
// with the trace fields (id, submit, runtime, status, recorded_wait) and any
// api.JobSpec field inlined (docs/trace-format.md). Unknown fields are
// errors, so a typo is reported rather than silently ignored. A missing or
// zero id becomes the line number.
func ReadJSONL(r io.Reader) (*Trace, error) {
	t := newTrace("jsonl", r)
	seen := map[int64]int{}
	err := lines(r, func(n int, line string) {
		s := strings.TrimSpace(line)
		if s == "" || s[0] == '#' {
			return
		}
		t.Records++
		var j Job
		dec := json.NewDecoder(bytes.NewReader([]byte(s)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			t.bad(n, "%v", err)
			return
		}
		if j.ID == 0 {
			j.ID = int64(n)
		}
		if j.JobSpec == nil { // no spec field on the line
			j.JobSpec = &api.JobSpec{}
		}
		if err := checkJSONLJob(&j, seen, n); err != nil {
			t.bad(n, "%v", err)
			return
		}
		seen[j.ID] = n
		j.GPUs = gpusOf(j.JobSpec)
		j.Line = n
		t.add(&j)
	})
	if err != nil {
		return t, err
	}
	return t.finish()
}

func checkJSONLJob(j *Job, seen map[int64]int, n int) error {
	switch {
	case j.Submit < 0:
		return fmt.Errorf("submit %d is negative", j.Submit)
	case j.Runtime < RunToLimit:
		return fmt.Errorf("runtime %d: want seconds >= 0 or -1 (until the time limit)", j.Runtime)
	case j.NTasks < 0 || j.MinNodes < 0 || j.CPUsPerTask < 0:
		return errors.New("negative resource count")
	}
	if prev, dup := seen[j.ID]; dup {
		return fmt.Errorf("id %d already used on line %d", j.ID, prev)
	}
	return nil
}
