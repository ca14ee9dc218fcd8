package priority

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Type selects the priority plugin (slurm.conf PriorityType).
type Type int

const (
	// Multifactor is priority/multifactor, Slurm's default since 23.11.
	Multifactor Type = iota
	// Basic is priority/basic: FIFO by submit order.
	Basic
)

// Flags are slurm.conf PriorityFlags bits.
type Flags uint32

const (
	// FlagAccrueAlways makes jobs accrue age from submit time, ignoring
	// holds, dependencies and begin times (ACCRUE_ALWAYS).
	FlagAccrueAlways Flags = 1 << iota
	// FlagSmallRelativeToTime divides the job size by the time limit
	// (SMALL_RELATIVE_TO_TIME).
	FlagSmallRelativeToTime
	// FlagCalculateRunning recomputes running jobs too (CALCULATE_RUNNING).
	FlagCalculateRunning
	// FlagDepthOblivious selects the depth-oblivious classic variant
	// (DEPTH_OBLIVIOUS); it implies no Fair Tree.
	FlagDepthOblivious
	// FlagNoFairTree selects the classic fair-share algorithm (NO_FAIR_TREE).
	FlagNoFairTree
	// FlagIncrOnly only stores a recomputed priority if it is larger
	// (INCR_ONLY).
	FlagIncrOnly
	// FlagMaxTRES bills the max of the node TRES instead of their sum
	// (MAX_TRES).
	FlagMaxTRES
	// FlagNoNormalAssoc uses the raw association priority (NO_NORMAL_ASSOC).
	FlagNoNormalAssoc
	// FlagNoNormalPart uses the raw partition PriorityJobFactor
	// (NO_NORMAL_PART).
	FlagNoNormalPart
	// FlagNoNormalQOS uses the raw QOS priority (NO_NORMAL_QOS).
	FlagNoNormalQOS
	// FlagNoNormalTRES uses raw TRES counts (NO_NORMAL_TRES).
	FlagNoNormalTRES
	// FlagMaxTRESGRES bills max of cpu/mem/node plus the sum of GRES
	// (MAX_TRES_GRES, Slurm 25.05+).
	FlagMaxTRESGRES
)

// FlagNoNormalAll is NO_NORMAL_ALL: every NO_NORMAL_* flag.
const FlagNoNormalAll = FlagNoNormalAssoc | FlagNoNormalPart | FlagNoNormalQOS | FlagNoNormalTRES

var flagNames = []struct {
	name string
	flag Flags
}{
	{"ACCRUE_ALWAYS", FlagAccrueAlways},
	{"SMALL_RELATIVE_TO_TIME", FlagSmallRelativeToTime},
	{"CALCULATE_RUNNING", FlagCalculateRunning},
	{"DEPTH_OBLIVIOUS", FlagDepthOblivious},
	{"NO_FAIR_TREE", FlagNoFairTree},
	{"INCR_ONLY", FlagIncrOnly},
	{"MAX_TRES", FlagMaxTRES},
	{"MAX_TRES_GRES", FlagMaxTRESGRES},
	{"NO_NORMAL_ALL", FlagNoNormalAll},
	{"NO_NORMAL_ASSOC", FlagNoNormalAssoc},
	{"NO_NORMAL_PART", FlagNoNormalPart},
	{"NO_NORMAL_QOS", FlagNoNormalQOS},
	{"NO_NORMAL_TRES", FlagNoNormalTRES},
}

// ParseFlags parses a PriorityFlags value (comma separated, case
// insensitive). FAIR_TREE is accepted and ignored: it is the default unless
// NO_FAIR_TREE or DEPTH_OBLIVIOUS is given, as in Slurm's read_config.
func ParseFlags(s string) (Flags, error) {
	var f Flags
	for _, tok := range strings.Split(s, ",") {
		tok = strings.ToUpper(strings.TrimSpace(tok))
		if tok == "" || tok == "FAIR_TREE" {
			continue
		}
		found := false
		for _, fn := range flagNames {
			if fn.name == tok {
				f |= fn.flag
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("invalid PriorityFlags %q", tok)
		}
	}
	return f, nil
}

// FairTree reports whether the Fair Tree algorithm is in use: the default,
// unless NO_FAIR_TREE or DEPTH_OBLIVIOUS is set.
func (f Flags) FairTree() bool { return f&(FlagNoFairTree|FlagDepthOblivious) == 0 }

// ResetPeriod is slurm.conf PriorityUsageResetPeriod.
type ResetPeriod int

const (
	// ResetNone never resets usage (the default).
	ResetNone ResetPeriod = iota
	// ResetNow resets usage once, when the configuration is loaded.
	ResetNow
	// ResetDaily resets at local midnight.
	ResetDaily
	// ResetWeekly resets on Sunday at 00:00 local time.
	ResetWeekly
	// ResetMonthly resets on the 1st of each month at 00:00.
	ResetMonthly
	// ResetQuarterly resets on Jan, Apr, Jul and Oct 1st at 00:00.
	ResetQuarterly
	// ResetYearly resets on Jan 1st at 00:00.
	ResetYearly
)

var resetNames = []string{"NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"}

// String returns the slurm.conf spelling of the period.
func (r ResetPeriod) String() string {
	if r >= 0 && int(r) < len(resetNames) {
		return resetNames[r]
	}
	return "NONE"
}

// ParseResetPeriod parses PriorityUsageResetPeriod (case insensitive).
func ParseResetPeriod(s string) (ResetPeriod, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	if u == "" {
		return ResetNone, nil
	}
	for i, n := range resetNames {
		if n == u {
			return ResetPeriod(i), nil
		}
	}
	return ResetNone, fmt.Errorf("invalid PriorityUsageResetPeriod %q", s)
}

// TRESWeight is one PriorityWeightTRES entry: a canonical TRES name
// ("cpu", "mem", "gres/gpu") and its weight per base unit.
type TRESWeight struct {
	Name   string
	Weight float64
}

// ParseTRESWeights parses PriorityWeightTRES / TRESBillingWeights:
// `CPU=1000,Mem=2000,GRES/gpu=4000`. Names are canonicalised (type lower
// case), values are doubles, and a unit suffix (K, M, G, T, P) divides the
// weight by that multiple of the TRES base unit (MB for mem), as Slurm's
// slurm_get_tres_weight_array does: `Mem=2G` is 2/1024 per MB.
func ParseTRESWeights(s string) ([]TRESWeight, error) {
	var out []TRESWeight
	for _, tok := range strings.Split(s, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		name, val, ok := strings.Cut(tok, "=")
		if !ok || name == "" || val == "" {
			return nil, fmt.Errorf("invalid TRES weight %q", tok)
		}
		name = canonicalTRES(name)
		w, err := parseWeightValue(name, val)
		if err != nil {
			return nil, fmt.Errorf("invalid TRES weight %q: %w", tok, err)
		}
		out = append(out, TRESWeight{Name: name, Weight: w})
	}
	return out, nil
}

func canonicalTRES(name string) string {
	typ, rest, has := strings.Cut(strings.TrimSpace(name), "/")
	typ = strings.ToLower(typ)
	if !has {
		return typ
	}
	return typ + "/" + rest
}

func parseWeightValue(name, val string) (float64, error) {
	mult := 1.0
	last := val[len(val)-1]
	if shift := strings.IndexByte("KMGTP", byte(strings.ToUpper(string(last))[0])); shift >= 0 && (last < '0' || last > '9') {
		mult = math.Pow(1024, float64(shift+1))
		if name == "mem" {
			mult /= 1024 * 1024 // base unit of mem is MB
		}
		val = val[:len(val)-1]
	}
	w, err := strconv.ParseFloat(val, 64)
	if err != nil || math.IsNaN(w) || math.IsInf(w, 0) {
		return 0, fmt.Errorf("bad number %q", val)
	}
	return w / mult, nil
}

// Config is the priority part of slurm.conf.
type Config struct {
	Type Type
	// Weights (PriorityWeight*). A zero weight means the factor is not
	// even computed, as in Slurm.
	WeightAge, WeightAssoc, WeightFairshare, WeightJobSize, WeightPartition, WeightQOS uint32
	// WeightTRES is PriorityWeightTRES, in configured order.
	WeightTRES []TRESWeight
	// WeightTRESString is the raw PriorityWeightTRES text (sprio -w shows it).
	WeightTRESString string
	Flags            Flags
	// MaxAge is PriorityMaxAge (default 7 days).
	MaxAge time.Duration
	// DecayHalfLife is PriorityDecayHalfLife (default 7 days; 0 = no decay).
	DecayHalfLife time.Duration
	// CalcPeriod is PriorityCalcPeriod (default 5 minutes).
	CalcPeriod time.Duration
	// FavorSmall is PriorityFavorSmall.
	FavorSmall bool
	// UsageResetPeriod is PriorityUsageResetPeriod.
	UsageResetPeriod ResetPeriod
	// DampeningFactor is FairShareDampeningFactor (classic only; default 1).
	DampeningFactor uint16
}

// DefaultConfig returns Slurm's defaults: multifactor, every weight 0,
// half-life and max age 7 days, calc period 5 minutes, Fair Tree.
func DefaultConfig() Config {
	return Config{
		Type:            Multifactor,
		MaxAge:          7 * 24 * time.Hour,
		DecayHalfLife:   7 * 24 * time.Hour,
		CalcPeriod:      5 * time.Minute,
		DampeningFactor: 1,
	}
}

// decayFactor is Slurm's per-second decay factor D = 1 - 0.693/half-life
// (a first-order approximation of 2^(-1/half-life)); 1 when there is no
// half-life.
func (c *Config) decayFactor() float64 {
	hl := c.DecayHalfLife.Seconds()
	if hl <= 0 {
		return 1
	}
	return 1 - 0.693/hl
}
