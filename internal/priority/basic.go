package priority

import "errors"

// basicTop is priority/basic's starting point (TOP_PRIORITY 0xffff0000):
// the first job gets one less.
const basicTop = 0xffff0000

// BasicAllocator hands out priority/basic priorities: FIFO by submit order.
// Each new job gets the lowest priority handed out so far minus one (never
// below 1); a positive nice lowers it further only if it stays above 0, a
// negative nice raises it. Held jobs get 0 and do not move the floor.
// The zero value is ready to use.
type BasicAllocator struct {
	lowest uint32
}

// Lowest returns the lowest priority handed out so far (for persistence).
func (b *BasicAllocator) Lowest() uint32 {
	if b.lowest == 0 {
		return basicTop
	}
	return b.lowest
}

// SetLowest restores the allocator state, e.g. from the lowest priority of
// the jobs recovered at restart.
func (b *BasicAllocator) SetLowest(p uint32) { b.lowest = p }

// Next returns the priority of a newly submitted job.
func (b *BasicAllocator) Next(nice int32, held bool, direct uint32) uint32 {
	if held {
		return 0
	}
	if direct > 0 {
		return direct
	}
	last := b.Lowest()
	p := uint32(1)
	if last >= 2 {
		p = last - 1
	}
	off := int64(nice)
	if off < 0 || int64(p) > off {
		np := int64(p) - off
		if np > MaxPriority {
			np = MaxPriority
		}
		p = uint32(np)
	}
	if p < b.Lowest() {
		b.lowest = p
	}
	return p
}

// NiceLimit is the largest |nice| Slurm accepts (NICE_OFFSET - 3).
const NiceLimit = 2147483645

// ErrNiceRange is returned for a nice value outside ±NiceLimit.
var ErrNiceRange = errors.New("Invalid nice value, must be between -2147483645 and 2147483645")

// ErrNicePermission is returned when an unprivileged user asks for a
// negative nice (Slurm's ESLURM_ACCESS_DENIED text).
var ErrNicePermission = errors.New("Access/permission denied")

// ValidateNice checks a --nice value: within ±NiceLimit, and negative only
// for operators, administrators and root.
func ValidateNice(nice int64, privileged bool) error {
	if nice > NiceLimit || nice < -NiceLimit {
		return ErrNiceRange
	}
	if nice < 0 && !privileged {
		return ErrNicePermission
	}
	return nil
}
