package priority

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
