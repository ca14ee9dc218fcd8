package tres

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Weights maps canonical TRES names to weights, as given by a partition's
// TRESBillingWeights or by PriorityWeightTRES. A weight applies per base unit of the
// TRES (per CPU, per megabyte of mem, per GPU).
type Weights map[string]float64

// ParseWeights reads `CPU=1.0,Mem=0.25G,GRES/gpu=2.0`: names are case-insensitive and
// must be a TRES type Slurm knows (short forms like `gpu` are not accepted, as Slurm
// rejects them); the value is a decimal number, negative allowed; a K/M/G/T/P suffix
// divides the weight by that multiple relative to the TRES's base unit, so `Mem=0.25G`
// is 0.25/1024 per megabyte and `CPU=1K` is 1/1024 per CPU (slurm.conf(5)
// TRESBillingWeights, Slurm's slurm_get_tres_weight_array). An empty string gives no
// weights.
func ParseWeights(s string) (Weights, error) {
	w := Weights{}
	for item := range strings.SplitSeq(s, ",") {
		item = trimAll(item)
		if item == "" {
			continue
		}
		raw, val, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("TRES weight '%s' is not NAME=WEIGHT", item)
		}
		name, err := CanonicalName(raw, false)
		if err != nil {
			return nil, fmt.Errorf("TRES weight '%s' is not a configured TRES type", item)
		}
		if w[name], err = parseWeight(name, trimAll(val)); err != nil {
			return nil, fmt.Errorf("TRES weight '%s': %w", item, err)
		}
	}
	return w, nil
}

// parseWeight reads a weight with its optional unit suffix.
func parseWeight(name, s string) (float64, error) {
	power := 0
	if n := len(s); n > 0 {
		if p, ok := unitPower()[upper(s[n-1])]; ok {
			s, power = s[:n-1], p
		}
	}
	if s == "" || strings.ContainsAny(s, "xXpP_infINFnN") {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if power == 0 {
		return f, nil
	}
	base := 0
	if isSized(name) {
		base = 2 // megabytes
	}
	return f / math.Pow(1024, float64(power-base)), nil
}

// Names returns the weighted names in Slurm's TRES order.
func (w Weights) Names() []string {
	names := make([]string, 0, len(w))
	for k := range w {
		names = append(names, k)
	}
	SortNames(names)
	return names
}

// BillingFlags selects how Billing combines weighted TRES (slurm.conf PriorityFlags).
type BillingFlags uint8

const (
	// MaxTRES is PriorityFlags=MAX_TRES: the largest weighted per-node TRES (cpu, mem,
	// node, any GRES) plus the sum of the weighted global TRES (licenses, ...).
	MaxTRES BillingFlags = 1 << iota
	// MaxTRESGres is PriorityFlags=MAX_TRES_GRES (Slurm 25.05+): the largest of weighted
	// cpu, mem and node, plus the sum of weighted GRES and global TRES.
	MaxTRESGres
)

// Billing computes an allocation's billable TRES (Slurm's calc_job_billable_tres).
// Without weights it is the allocated CPU count (slurm.conf(5): "If TRESBillingWeights
// is not defined then the job is billed against the total number of allocated CPUs").
// Otherwise each weighted TRES contributes weight × allocated count, an untyped GRES
// counting its typed allocations too, and the contributions are summed, or combined as
// flags says. Terms are added in Slurm's TRES order so the result is reproducible.
// Example (slurm.conf(5)): 1 CPU, 8G, CPU=1.0,Mem=0.25G,GRES/gpu=2.0 => 3.0; with
// MaxTRES => 2.0.
func Billing(alloc Vector, w Weights, flags BillingFlags) float64 {
	if len(w) == 0 {
		return float64(alloc[CPU])
	}
	var peak, sum float64
	for _, name := range w.Names() {
		term := w[name] * float64(alloc.Count(name))
		if inMax(name, flags) {
			peak = max(peak, term)
		} else {
			sum += term
		}
	}
	return peak + sum
}

// inMax reports whether name takes part in the maximum under flags.
func inMax(name string, flags BillingFlags) bool {
	switch {
	case flags&MaxTRESGres != 0:
		return name == CPU || name == Mem || name == Node
	case flags&MaxTRES != 0:
		return IsNodeTRES(name)
	}
	return false
}
