package dataparser

import (
	"math"
	"time"
)

// Field is one member of an object.
type Field struct {
	Key string
	Val any
}

// Obj is an object whose members keep their order: Slurm prints fields in
// its parser's order, not sorted.
type Obj []Field

// Get returns the value of key (nil when absent).
func (o Obj) Get(key string) any {
	for _, f := range o {
		if f.Key == key {
			return f.Val
		}
	}
	return nil
}

// Num is data_parser's optional integer (UINT32_NO_VAL, UINT64_NO_VAL,
// INFINITE...): {"set": bool, "infinite": bool, "number": n}.
type Num struct {
	Set, Inf bool
	N        int64
}

// NumF is the same for a float (billable_tres, shares_normalized ...).
type NumF struct {
	Set, Inf bool
	N        float64
}

// Float is a double printed as Slurm prints doubles (0.0, 4.0,
// 0.99999899999999997), never as an integer.
type Float float64

// N returns a set number.
func N[T int | int32 | int64 | uint16 | uint32 | uint64](v T) Num { return Num{Set: true, N: int64(v)} }

// Unset is a number that was not given (NO_VAL).
func Unset() Num { return Num{} }

// Infinite is an unlimited number (INFINITE).
func Infinite() Num { return Num{Inf: true} }

// NF returns a set float number.
func NF(v float64) NumF { return NumF{Set: true, N: v} }

// Time is a time stamp as data_parser prints it: set, with 0 for a zero
// time (Slurm prints 0 for "not yet").
func Time(t time.Time) Num {
	if t.IsZero() {
		return N(0)
	}
	return N(t.Unix())
}

// Minutes is a time limit in seconds as Slurm's minutes: UNLIMITED and
// INFINITE are {set false, infinite true}, "not given" unset.
func Minutes(sec int64) Num {
	switch {
	case sec < 0:
		return Infinite()
	case sec == 0:
		return Unset()
	}
	return N(int64(math.Ceil(float64(sec) / 60)))
}

// Strings converts a list of names (flags, states) to a value that prints
// as an array, empty included.
func Strings(s ...string) []any {
	out := make([]any, 0, len(s))
	for _, v := range s {
		out = append(out, v)
	}
	return out
}
