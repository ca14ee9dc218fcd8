package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/sluice-hpc/sluice/internal/sched"
)

// maxJobCountReason is the rejection of a job submitted while the
// controller holds MaxJobCount jobs.
var maxJobCountReason = sched.ErrMaxJobCount.Error()

// SlowdownBound is the τ of the bounded slowdown: runs shorter than 10 s
// count as 10 s, so tiny jobs do not dominate the mean (Feitelson's usual
// threshold, the one the traces' README uses).
const SlowdownBound = 10

// Stats are the wait-time figures of a group of started jobs, in seconds.
type Stats struct {
	Jobs       int     `json:"jobs"`
	Started    int     `json:"started"`
	WaitMean   float64 `json:"wait_mean"`
	WaitMedian float64 `json:"wait_median"`
	WaitP25    float64 `json:"wait_p25"`
	WaitP75    float64 `json:"wait_p75"`
	WaitP95    float64 `json:"wait_p95"`
	WaitMax    float64 `json:"wait_max"`
	// ResponseMean is the mean of end - submit.
	ResponseMean float64 `json:"response_mean"`
	// BoundedSlowdown is the mean of max(1, (wait+run)/max(run, τ)).
	BoundedSlowdown float64 `json:"bounded_slowdown"`
	// CPUHours is the CPU time the group received.
	CPUHours float64 `json:"cpu_hours"`
}

// Share compares what an account received with its target.
type Share struct {
	Account string `json:"account"`
	// NormShares is the account's configured share of the cluster.
	NormShares float64 `json:"norm_shares"`
	// Delivered is its fraction of the CPU time (GPU time on GPU
	// clusters) delivered inside the measuring window.
	Delivered float64 `json:"delivered"`
}

// Point is one bucket of the time series: mean values over [T, T+width).
type Point struct {
	T       int64   `json:"t"`
	CPUUtil float64 `json:"cpu_util"`
	GPUUtil float64 `json:"gpu_util,omitempty"`
	Pending float64 `json:"pending"`
}

// Metrics are the figures of one simulated run.
type Metrics struct {
	Jobs      int `json:"jobs_in_trace"`
	Started   int `json:"started"`
	Completed int `json:"completed"`
	Timeout   int `json:"timeout"`
	Rejected  int `json:"rejected"`
	// RejectReasons counts the rejected jobs by the submission error the
	// simulated controller gave them ("MaxJobCount limit reached", "Requested
	// node configuration is not available", ...).
	RejectReasons map[string]int `json:"reject_reasons,omitempty"`
	// NeverStarted counts jobs still pending at the end.
	NeverStarted int `json:"never_started"`
	// PeakPending is the most jobs waiting at once (the series shows
	// bucket means).
	PeakPending int64 `json:"peak_pending"`
	Preemptions int   `json:"preemptions"`
	// BackfillFraction is the fraction of started jobs started by backfill.
	BackfillFraction float64 `json:"backfill_fraction"`
	// Makespan is last end - first submit, in seconds.
	Makespan int64 `json:"makespan"`
	// Window is [first submit, last submit]: utilization, offered load and
	// delivered shares are measured inside it.
	WindowStart int64 `json:"window_start"`
	WindowEnd   int64 `json:"window_end"`
	// CPUUtilization and GPUUtilization are the mean allocated fractions
	// inside the window; OfferedLoad is the work in the trace (CPUs x run
	// time, capped at the limit) over the window's capacity.
	CPUUtilization float64 `json:"cpu_utilization"`
	GPUUtilization float64 `json:"gpu_utilization,omitempty"`
	OfferedLoad    float64 `json:"offered_load"`

	Overall     Stats            `json:"overall"`
	ByAccount   map[string]Stats `json:"by_account"`
	ByUser      map[string]Stats `json:"by_user"`
	ByQOS       map[string]Stats `json:"by_qos,omitempty"`
	ByPartition map[string]Stats `json:"by_partition,omitempty"`
	Shares      []Share          `json:"shares"`
	Series      []Point          `json:"series"`
}

// Capacity is the cluster's size for utilization.
type Capacity struct {
	CPUs, GPUs int64
}

// seriesBuckets is the resolution of the report's time series.
const seriesBuckets = 400

// Compute folds a run's job results and samples into Metrics. normShares
// gives each account's target share (nil: no share table).
func Compute(jobs []JobResult, samples []Sample, capa Capacity, normShares map[string]float64, preemptions int) Metrics {
	m := Metrics{Jobs: len(jobs), Preemptions: preemptions,
		ByAccount: map[string]Stats{}, ByUser: map[string]Stats{}, ByQOS: map[string]Stats{}, ByPartition: map[string]Stats{}}
	if len(jobs) == 0 {
		return m
	}
	m.WindowStart, m.WindowEnd = jobs[0].Submit, jobs[0].Submit
	for i := range jobs {
		m.WindowStart = min(m.WindowStart, jobs[i].Submit)
		m.WindowEnd = max(m.WindowEnd, jobs[i].Submit)
	}
	m.countStates(jobs)
	groups := groupJobs(jobs)
	fill := func(dst map[string]Stats, src map[string][]*JobResult) {
		for k, v := range src {
			dst[k] = statsOf(v)
		}
	}
	// The overall and per-user statistics (half of the sorting) on
	// another core: a replay leaves it idle, and these only read the
	// groups and write their own fields.
	var wg sync.WaitGroup
	wg.Go(func() {
		m.Overall = statsOf(groups.all)
		fill(m.ByUser, groups.user)
	})
	fill(m.ByAccount, groups.account)
	fill(m.ByQOS, groups.qos)
	fill(m.ByPartition, groups.partition)
	m.utilization(jobs, samples, capa)
	m.Shares = shares(jobs, m.WindowStart, m.WindowEnd, capa.GPUs > 0, normShares)
	wg.Wait()
	return m
}

func (m *Metrics) countStates(jobs []JobResult) {
	backfilled := 0
	var lastEnd int64
	for i := range jobs {
		r := &jobs[i]
		switch r.State {
		case "COMPLETED":
			m.Completed++
		case "TIMEOUT":
			m.Timeout++
		case "REJECTED":
			m.Rejected++
			if m.RejectReasons == nil {
				m.RejectReasons = map[string]int{}
			}
			m.RejectReasons[r.Reject]++
		case "PENDING":
			m.NeverStarted++
		}
		if r.Start >= 0 {
			m.Started++
			if r.Backfill {
				backfilled++
			}
		}
		lastEnd = max(lastEnd, r.End)
	}
	if m.Started > 0 {
		m.BackfillFraction = float64(backfilled) / float64(m.Started)
	}
	m.Makespan = max(lastEnd-m.WindowStart, 0)
}

type jobGroups struct {
	all                           []*JobResult
	account, user, qos, partition map[string][]*JobResult
}

func groupJobs(jobs []JobResult) jobGroups {
	g := jobGroups{account: map[string][]*JobResult{}, user: map[string][]*JobResult{}, qos: map[string][]*JobResult{}, partition: map[string][]*JobResult{}}
	for i := range jobs {
		r := &jobs[i]
		g.all = append(g.all, r)
		add := func(m map[string][]*JobResult, k string) {
			if k != "" {
				m[k] = append(m[k], r)
			}
		}
		add(g.account, r.Account)
		add(g.user, r.User)
		add(g.qos, r.QOS)
		add(g.partition, r.Partition)
	}
	return g
}

// statsOf computes wait figures over the group's started jobs.
func statsOf(group []*JobResult) Stats {
	s := Stats{Jobs: len(group)}
	var waits []float64
	var resp, bsld float64
	for _, r := range group {
		if r.Start < 0 {
			continue
		}
		wait := float64(r.Start - r.Submit)
		waits = append(waits, wait)
		if r.End >= 0 {
			run := float64(r.End - r.Start)
			resp += float64(r.End - r.Submit)
			bsld += math.Max(1, (wait+run)/math.Max(run, SlowdownBound))
			s.CPUHours += run * float64(r.CPUs) / 3600
		}
	}
	s.Started = len(waits)
	if s.Started == 0 {
		return s
	}
	sort.Float64s(waits)
	var sum float64
	for _, w := range waits {
		sum += w
	}
	n := float64(len(waits))
	s.WaitMean, s.ResponseMean, s.BoundedSlowdown = sum/n, resp/n, bsld/n
	s.WaitMedian, s.WaitP25, s.WaitP75, s.WaitP95 = quantile(waits, 0.5), quantile(waits, 0.25), quantile(waits, 0.75), quantile(waits, 0.95)
	s.WaitMax = waits[len(waits)-1]
	return s
}

// quantile is the nearest-rank quantile of sorted values.
func quantile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// utilization integrates the samples over the window and the offered work
// of the trace, and builds the bucketed series over [window start, last
// end].
func (m *Metrics) utilization(jobs []JobResult, samples []Sample, capa Capacity) {
	w0, w1 := m.WindowStart, m.WindowEnd
	span := float64(w1 - w0)
	var work float64
	for i := range jobs {
		if r := &jobs[i]; r.Start >= 0 && r.End >= 0 {
			work += float64(r.End-r.Start) * float64(r.CPUs)
		}
	}
	if capa.CPUs > 0 && span > 0 {
		m.OfferedLoad = work / (float64(capa.CPUs) * span)
		cpu, gpu, _ := integrate(samples, w0, w1)
		m.CPUUtilization = cpu / (float64(capa.CPUs) * span)
		if capa.GPUs > 0 {
			m.GPUUtilization = gpu / (float64(capa.GPUs) * span)
		}
	}
	m.Series = series(samples, w0, w0+max(m.Makespan, 1), capa)
	for i := range samples {
		m.PeakPending = max(m.PeakPending, samples[i].Pending)
	}
}

// integrate returns the time integrals of allocated CPUs, GPUs and pending
// jobs over [a, b).
func integrate(samples []Sample, a, b int64) (cpu, gpu, pend float64) {
	for i, s := range samples {
		if s.T >= b {
			break
		}
		end := b
		if i+1 < len(samples) {
			end = min(samples[i+1].T, b)
		}
		start := max(s.T, a)
		if end <= start {
			continue
		}
		d := float64(end - start)
		cpu += d * float64(s.CPUs)
		gpu += d * float64(s.GPUs)
		pend += d * float64(s.Pending)
	}
	return
}

func series(samples []Sample, a, b int64, capa Capacity) []Point {
	width := max((b-a+seriesBuckets-1)/seriesBuckets, 1)
	var out []Point
	k := 0
	for t := a; t < b; t += width {
		for k+1 < len(samples) && samples[k+1].T <= t {
			k++
		}
		cpu, gpu, pend := integrate(samples[k:], t, min(t+width, b))
		d := float64(min(t+width, b) - t)
		p := Point{T: t, Pending: pend / d}
		if capa.CPUs > 0 {
			p.CPUUtil = cpu / d / float64(capa.CPUs)
		}
		if capa.GPUs > 0 {
			p.GPUUtil = gpu / d / float64(capa.GPUs)
		}
		out = append(out, p)
	}
	return out
}

// shares computes each account's fraction of the CPU (or GPU) time
// delivered inside [a, b], next to its NormShares.
func shares(jobs []JobResult, a, b int64, gpus bool, norm map[string]float64) []Share {
	used := map[string]float64{}
	var total float64
	for i := range jobs {
		r := &jobs[i]
		if r.Start < 0 || r.Account == "" {
			continue
		}
		end := r.End
		if end < 0 {
			end = b
		}
		d := float64(min(end, b) - max(r.Start, a))
		if d <= 0 {
			continue
		}
		amount := float64(r.CPUs)
		if gpus {
			amount = float64(r.GPUs)
		}
		used[r.Account] += d * amount
		total += d * amount
	}
	names := map[string]bool{}
	for k := range used {
		names[k] = true
	}
	for k := range norm {
		names[k] = true
	}
	var out []Share
	for k := range names {
		s := Share{Account: k, NormShares: norm[k]}
		if total > 0 {
			s.Delivered = used[k] / total
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Account < out[j].Account })
	return out
}

// RejectSummary describes the rejected jobs by reason, most frequent
// first (ties by reason): "3643 (MaxJobCount limit reached: 3640; Requested
// node configuration is not available: 3)"; "" when none was rejected.
// A replay that hits Slurm's default MaxJobCount of 10,000 says so, with
// the way out.
func (m *Metrics) RejectSummary() string {
	if m.Rejected == 0 {
		return ""
	}
	reasons := make([]string, 0, len(m.RejectReasons))
	for r := range m.RejectReasons {
		reasons = append(reasons, r)
	}
	slices.SortFunc(reasons, func(a, b string) int {
		if c := cmp.Compare(m.RejectReasons[b], m.RejectReasons[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%s: %d", r, m.RejectReasons[r])
	}
	return fmt.Sprintf("%d (%s)", m.Rejected, strings.Join(parts, "; "))
}

// MaxJobCountHint is the advice printed when jobs were rejected because
// the simulated controller held MaxJobCount jobs (Slurm's default is
// 10,000): "" when none was.
func (m *Metrics) MaxJobCountHint() string {
	if m.RejectReasons[maxJobCountReason] == 0 {
		return ""
	}
	return "the simulated controller held MaxJobCount jobs (Slurm's default is 10000); raise MaxJobCount in slurm.conf to replay them"
}
