package priority

import (
	"math"
	"time"
)

// RunningJob is what usage accounting needs of a running (or just ended)
// job.
type RunningJob struct {
	// Assoc is the job's association index (NoAssoc: not charged).
	Assoc int
	// QOS and PartitionQOS name the QOS records charged besides the
	// associations ("" for none).
	QOS, PartitionQOS string
	// Start is when the job started; End is zero while it runs.
	Start, End time.Time
	// Billing is the job's billable TRES (see Billable); the allocated CPU
	// count when the partition has no TRESBillingWeights.
	Billing float64
	// Alloc is the allocated TRES, charged to the per-TRES usage.
	Alloc map[string]int64
}

// Decay multiplies every association's and QOS's usage by D^seconds, D =
// 1 - 0.693/half-life: the decay Slurm applies at each PriorityCalcPeriod
// for the time elapsed since the previous pass. Because D^a * D^b =
// D^(a+b), the decay over a span does not depend on how the span is cut
// into passes. QOS with NoDecay are left alone. Values are floored at the
// smallest normal double, as Slurm floors at DBL_MIN.
func (t *Tree) Decay(cfg *Config, seconds float64) {
	d := cfg.decayFactor()
	if d >= 1 || seconds <= 0 {
		return
	}
	f := math.Pow(d, seconds)
	if t.usagePacked() {
		t.decayPacked(f)
	} else {
		t.decayRecords(f)
	}
	for _, q := range t.QOS {
		if q.NoDecay {
			continue
		}
		q.UsageRaw = decayed(q.UsageRaw, f)
		q.UsedWall = decayed(q.UsedWall, f)
		for k, v := range q.UsageTRES {
			q.UsageTRES[k] = decayed(v, f)
		}
	}
}

// decayRecords is Decay on the records, keeping the packed mirror in step.
func (t *Tree) decayRecords(f float64) {
	mirror := t.flat.usageOK
	for i := range t.Assocs {
		a := &t.Assocs[i]
		a.UsageRaw = decayed(a.UsageRaw, f)
		a.UsedWall = decayed(a.UsedWall, f)
		if mirror {
			t.flat.mirror(i, a.UsageRaw, a.UsedWall)
		}
		if len(a.UsageTRES) == 0 {
			continue // most associations: no per-TRES usage, no map walk
		}
		for k, v := range a.UsageTRES {
			a.UsageTRES[k] = decayed(v, f)
		}
	}
}

func decayed(v, f float64) float64 {
	if v == 0 {
		return 0
	}
	v *= f
	if v < math.SmallestNonzeroFloat64*(1<<52) { // DBL_MIN
		return math.SmallestNonzeroFloat64 * (1 << 52)
	}
	return v
}

// Charge adds the usage of job j over [from, to] (bounded by its start and
// end) to its association and every ancestor up to root, to its QOS (times
// the QOS UsageFactor) and to its partition QOS. Like Slurm's
// _apply_new_usage, the run time is itself decayed within the interval:
// increment = run * D^run * billing (a NoDecay QOS gets run * billing).
// The decayed run time also accrues to UsedWall (grp_used_wall).
// Intervals shorter than one second charge nothing.
func (t *Tree) Charge(cfg *Config, j *RunningJob, from, to time.Time) {
	var m chargeMemo
	t.charge(cfg, j, from, to, &m)
}

// ChargeAll is Charge for every job of jobs, in order, over the same
// interval, each QOS looked up and the decay factor computed once: a
// simulation charges every running job at every PriorityCalcPeriod.
func (t *Tree) ChargeAll(cfg *Config, jobs []*RunningJob, from, to time.Time) {
	var m chargeMemo
	for _, j := range jobs {
		t.charge(cfg, j, from, to, &m)
	}
}

// chargeMemo remembers, for the jobs charged in one call (the QOS map and
// the configuration do not change meanwhile), the last QOS looked up by
// name and the decay factor (a Duration's Seconds is two divisions).
type chargeMemo struct {
	name string
	q    *QOSUsage
	ok   bool
	d    float64
	hasD bool
}

// decay is cfg.decayFactor(), computed once per call.
func (m *chargeMemo) decay(cfg *Config) float64 {
	if !m.hasD {
		m.d, m.hasD = cfg.decayFactor(), true
	}
	return m.d
}

func (m *chargeMemo) get(t *Tree, name string) *QOSUsage {
	if name == "" {
		return nil
	}
	if !m.ok || m.name != name {
		m.name, m.q, m.ok = name, t.QOS[name], true
	}
	return m.q
}

func (t *Tree) charge(cfg *Config, j *RunningJob, from, to time.Time, m *chargeMemo) {
	if j.Start.After(from) {
		from = j.Start
	}
	if !j.End.IsZero() && j.End.Before(to) {
		to = j.End
	}
	run := floorSeconds(to, from)
	if run < 1 {
		return
	}
	runDecay := run * t.decayOver(m.decay(cfg), run)
	factor := 1.0
	q := m.get(t, j.QOS)
	if q != nil && q.UsageFactor >= 0 {
		factor = q.UsageFactor
	}
	if j.Assoc >= 0 && j.Assoc < len(t.Assocs) {
		packed := t.usagePacked()
		for i := j.Assoc; i >= 0; i = t.Assocs[i].Parent {
			if packed {
				t.chargePacked(i, j, runDecay, factor)
				continue
			}
			a := &t.Assocs[i]
			a.UsageRaw += runDecay * j.Billing * factor
			a.UsedWall += runDecay
			t.flat.mirror(i, a.UsageRaw, a.UsedWall)
			a.UsageTRES = addTRES(a.UsageTRES, j, runDecay*factor)
		}
	}
	if q != nil {
		chargeQOS(q, j, run, runDecay, factor)
	}
	if j.PartitionQOS != "" && j.PartitionQOS != j.QOS {
		if pq := t.QOS[j.PartitionQOS]; pq != nil {
			chargeQOS(pq, j, run, runDecay, 1)
		}
	}
}

// decayOver is d^run. Every job running through a whole pass is charged
// the same run, so the last result is kept: a simulation charges every
// running job at every PriorityCalcPeriod.
func (t *Tree) decayOver(d, run float64) float64 {
	if p := &t.pow; !p.ok || p.d != d || p.run != run {
		*p = powMemo{d: d, run: run, v: math.Pow(d, run), ok: true}
	}
	return t.pow.v
}

// powMemo is the last d^run of decayOver.
type powMemo struct {
	d, run, v float64
	ok        bool
}

func chargeQOS(q *QOSUsage, j *RunningJob, run, runDecay, factor float64) {
	amount := runDecay
	if q.NoDecay {
		amount = run
	}
	q.UsageRaw += amount * j.Billing * factor
	q.UsedWall += amount
	q.UsageTRES = addTRES(q.UsageTRES, j, amount*factor)
}

func addTRES(m map[string]float64, j *RunningJob, mult float64) map[string]float64 {
	if len(j.Alloc) == 0 {
		return m
	}
	if m == nil {
		m = make(map[string]float64, len(j.Alloc))
	}
	for k, v := range j.Alloc {
		if k == "billing" && j.Billing > 0 {
			// the billing TRES accrues the billable value, weights
			// applied and unrounded, as Slurm's usage_tres_raw does
			m[k] += j.Billing * mult
			continue
		}
		m[k] += float64(v) * mult
	}
	return m
}

// ResetUsage zeroes the usage of every association and QOS
// (PriorityUsageResetPeriod).
func (t *Tree) ResetUsage() {
	for i := range t.Assocs {
		t.Assocs[i].UsageRaw, t.Assocs[i].UsedWall = 0, 0
		clear(t.Assocs[i].UsageTRES)
	}
	if f := &t.flat; f.usageOK {
		f.usageChanged()
		f.voidKept()
		clear(f.usage)
		clear(f.wall)
		f.wallLog = f.wallLog[:0]
		clear(f.wallAt)
		clear(f.usageAt)
		f.usageDirty = false // both zero
	}
	for _, q := range t.QOS {
		q.UsageRaw, q.UsedWall = 0, 0
		clear(q.UsageTRES)
	}
}

// LastResetBoundary returns the latest calendar boundary of period at or
// before now, in loc: local midnight (DAILY), Sunday 00:00 (WEEKLY), the
// 1st of the month (MONTHLY), of Jan/Apr/Jul/Oct (QUARTERLY) or of January
// (YEARLY). NONE and NOW have no boundary (zero time).
func LastResetBoundary(period ResetPeriod, now time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	n := now.In(loc)
	y, m, d := n.Date()
	switch period {
	case ResetDaily:
		return time.Date(y, m, d, 0, 0, 0, 0, loc)
	case ResetWeekly:
		return time.Date(y, m, d-int(n.Weekday()), 0, 0, 0, 0, loc)
	case ResetMonthly:
		return time.Date(y, m, 1, 0, 0, 0, 0, loc)
	case ResetQuarterly:
		return time.Date(y, m-(m-1)%3, 1, 0, 0, 0, 0, loc)
	case ResetYearly:
		return time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	}
	return time.Time{}
}

// ResetDue reports whether a usage reset boundary lies in (last, now].
// A zero last (first pass ever) resets only for NOW.
func ResetDue(period ResetPeriod, last, now time.Time, loc *time.Location) bool {
	if period == ResetNow {
		return last.IsZero()
	}
	if last.IsZero() {
		return false
	}
	b := LastResetBoundary(period, now, loc)
	return !b.IsZero() && b.After(last) && !b.After(now)
}

// Pass is one PriorityCalcPeriod step of Slurm's decay thread: reset the
// usage if a PriorityUsageResetPeriod boundary passed since last, decay all
// usage by D^(now-last), charge every running job for (last, now], then
// recompute fair-share. last is the previous pass (zero on the first pass:
// nothing is decayed or charged). Jobs that ended since last may be passed
// with their End set. Job priorities are refreshed by the caller with a
// Calculator afterwards, as Slurm does in the same pass.
func (t *Tree) Pass(cfg *Config, jobs []RunningJob, last, now time.Time, loc *time.Location) {
	if ResetDue(cfg.UsageResetPeriod, last, now, loc) {
		t.ResetUsage()
	}
	if !last.IsZero() && now.After(last) {
		t.Decay(cfg, floorSeconds(now, last))
		var m chargeMemo
		for i := range jobs {
			t.charge(cfg, &jobs[i], last, now, &m)
		}
	}
	t.Recompute(cfg)
}

// Billable is Slurm's billable TRES of an allocation
// (calc_job_billable_tres): without TRESBillingWeights the CPU count;
// otherwise the sum of weight*count, or with MAX_TRES the largest weighted
// node TRES (cpu, mem, node, gres/*) plus the sum of the global ones
// (license/, bb/), or with MAX_TRES_GRES the largest of cpu/mem/node plus
// the sum of the GRES and of the global ones.
func Billable(alloc map[string]int64, weights []TRESWeight, flags Flags) float64 {
	if len(weights) == 0 {
		return float64(alloc["cpu"])
	}
	var sum, maxNode, gres float64
	for _, w := range weights {
		v := w.Weight * float64(alloc[w.Name])
		switch {
		case isGlobalTRES(w.Name):
			sum += v
		case isGRES(w.Name) && flags&FlagMaxTRESGRES != 0:
			gres += v
		default:
			maxNode = math.Max(maxNode, v)
			if flags&(FlagMaxTRES|FlagMaxTRESGRES) == 0 {
				sum += v
			}
		}
	}
	if flags&(FlagMaxTRES|FlagMaxTRESGRES) != 0 {
		return maxNode + gres + sum
	}
	return sum
}

func isGlobalTRES(n string) bool {
	return len(n) > 8 && n[:8] == "license/" || len(n) > 3 && n[:3] == "bb/"
}

func isGRES(n string) bool { return len(n) > 5 && n[:5] == "gres/" }

// floorSeconds is math.Floor(a.Sub(b).Seconds()), the whole seconds
// Slurm's priority code works in. Times a whole number of seconds apart
// (every time of a simulation) take the integer difference of their Unix
// seconds, the same value without Sub's monotonic-clock and overflow
// handling: this runs for every pending job and running job at every
// PriorityCalcPeriod. Other differences go through Sub, whose float sum
// of seconds and nanoseconds can round up to the next second.
func floorSeconds(a, b time.Time) float64 {
	if s := a.Unix() - b.Unix(); a.Nanosecond() == b.Nanosecond() && s > -1<<32 && s < 1<<32 {
		return float64(s)
	}
	return math.Floor(a.Sub(b).Seconds())
}
