package sim

import (
	"fmt"
	"math"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Transform is a workload transformation applied to a trace before a
// replay, the standard ways of building heavier workloads from a recorded
// one (Feitelson's "Workload Modeling for Computer Systems Performance
// Evaluation", ch. 9): compress the inter-arrival times to raise the
// offered load, scale the machine and every job's size by the same factor,
// and concatenate copies of the trace to make it longer.
type Transform struct {
	// TimeScale divides every submit time (1 = unchanged; 2 = arrivals
	// twice as dense, twice the offered load). Runtimes are unchanged.
	TimeScale float64
	// ScaleCluster multiplies the machine size of an SWF header
	// (MaxNodes, MaxProcs) and every job's task and node counts
	// (1 = unchanged). A --conf given with it must describe the scaled
	// machine.
	ScaleCluster int
	// Repeat concatenates this many copies of the trace (1 = one); copy
	// k is submitted k spans later and its ids are offset by k times the
	// largest id rounded up to a power of ten.
	Repeat int
}

// Identity reports whether t changes nothing.
func (t Transform) Identity() bool {
	return (t.TimeScale == 0 || t.TimeScale == 1) && t.ScaleCluster <= 1 && t.Repeat <= 1
}

// Validate checks the factors as the command line gives them (each at
// least its identity's value).
func (t Transform) Validate() error {
	switch {
	case !(t.TimeScale > 0) || math.IsInf(t.TimeScale, 0):
		return fmt.Errorf("--time-scale %v: give a positive factor", t.TimeScale)
	case t.ScaleCluster < 1:
		return fmt.Errorf("--scale-cluster %d: give a factor of 1 or more", t.ScaleCluster)
	case t.Repeat < 1:
		return fmt.Errorf("--repeat %d: give a count of 1 or more", t.Repeat)
	}
	return nil
}

// Apply returns a transformed copy of tr (tr itself when t is the
// identity). The result stays sorted by submit time.
func (t Transform) Apply(tr *Trace) *Trace {
	if t.Identity() || len(tr.Jobs) == 0 {
		return tr
	}
	out := *tr
	reps := max(t.Repeat, 1)
	k := max(t.ScaleCluster, 1)
	out.MaxNodes, out.MaxProcs = tr.MaxNodes*k, tr.MaxProcs*k
	scale := t.TimeScale
	if scale == 0 {
		scale = 1
	}
	first, last := tr.Jobs[0].Submit, tr.Jobs[len(tr.Jobs)-1].Submit
	span := int64(math.Ceil(float64(last-first)/scale)) + 1
	idStep := idStride(tr)
	out.Jobs = make([]Job, 0, reps*len(tr.Jobs))
	scaled := map[*api.JobSpec]*api.JobSpec{} // the copies share specs as the original jobs do
	for r := range reps {
		for i := range tr.Jobs {
			j := tr.Jobs[i] // a copy sharing the job's spec, read-only
			j.Submit = first + int64(math.Floor(float64(j.Submit-first)/scale)) + int64(r)*span
			j.ID += int64(r) * idStep
			j.JobSpec = scaledSpec(j.JobSpec, k, scaled)
			out.Jobs = append(out.Jobs, j)
		}
	}
	return &out
}

// scaledSpec is spec with its size multiplied by k (scaleSpec), one copy
// per original spec (memo).
func scaledSpec(spec *api.JobSpec, k int, memo map[*api.JobSpec]*api.JobSpec) *api.JobSpec {
	if k <= 1 {
		return spec
	}
	if s, ok := memo[spec]; ok {
		return s
	}
	s := *spec
	scaleSpec(&s, k)
	memo[spec] = &s
	return &s
}

// idStride is the id offset between copies: the largest id rounded up to
// a power of ten, so a copy's ids read as the original's with a prefix.
func idStride(tr *Trace) int64 {
	var top int64
	for i := range tr.Jobs {
		top = max(top, tr.Jobs[i].ID)
	}
	s := int64(10)
	for s <= top {
		s *= 10
	}
	return s
}

// scaleSpec multiplies a job's size by k: its tasks and node counts
// (per-node requests such as --gres or --mem are per node, unchanged;
// a total --gpus is not scaled).
func scaleSpec(s *api.JobSpec, k int) {
	s.NTasks *= k
	s.MinNodes *= k
	s.MaxNodes *= k
}

// OfferedLoad is the work the trace's jobs ask for (CPUs x runtime) over
// the capacity the machine offers between the first and last submit: the
// load the arrivals put on the machine, above 1 when the queue can only
// grow.
func OfferedLoad(tr *Trace, cpus int64) float64 {
	if len(tr.Jobs) < 2 || cpus <= 0 {
		return 0
	}
	span := tr.Jobs[len(tr.Jobs)-1].Submit - tr.Jobs[0].Submit
	if span <= 0 {
		return 0
	}
	var work float64
	for i := range tr.Jobs {
		j := &tr.Jobs[i]
		run := j.Runtime
		if run == RunToLimit || j.TimeLimitSec > 0 && run > j.TimeLimitSec {
			run = j.TimeLimitSec
		}
		work += float64(max(run, 0)) * float64(j.CPUCount())
	}
	return work / (float64(span) * float64(cpus))
}
