package cli

import (
	"bytes"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// thpMode returns the kernel's transparent huge page mode for anonymous
// memory: "always", "madvise" or "never" ("" when unknown).
func thpMode() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	i, j := bytes.IndexByte(b, '['), bytes.IndexByte(b, ']')
	if i < 0 || j < i {
		return ""
	}
	return string(b[i+1 : j])
}

// hugeHeap makes the heap's next n bytes (its pages for a replay) come in
// transparent huge pages, and reports whether the heap gets them. A fresh
// 4 KiB page costs a fault, and on this project's virtual machines a
// fault costs 11-14 µs: a replay of SDSC-SP2 took 12,000 of them, about
// 0.15 s of its 1.4 s. A 2 MiB page costs one fault for 512 pages.
//
// Under THP mode "always" the heap gets huge pages anyway. Under
// "madvise" only a mapping marked MADV_HUGEPAGE does, and Go's runtime no
// longer marks its heap: so n bytes of heap are mapped ahead by one
// allocation (never touched, so neither zeroed nor resident), the
// arena's mapping is marked, and a collection frees the allocation for
// the heap to grow into. The mark holds as long as the runtime does not
// map that range again, which it does only for address space it has not
// mapped yet: past the n bytes, the heap gets 4 KiB pages again.
func hugeHeap(n int) bool {
	switch thpMode() {
	case "always":
		return true
	case "madvise":
	default:
		return false
	}
	if !markHeapAhead(n) {
		return false
	}
	runtime.GC() // frees the allocation (its last reference is gone)
	return true
}

// markHeapAhead maps n bytes of heap and marks MADV_HUGEPAGE the range
// from the start of their first arena (64 MiB aligned, as the runtime
// places arenas) to their end.
func markHeapAhead(n int) bool {
	b := make([]byte, n)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	const arena, huge = 64 << 20, 2 << 20
	base := start &^ (arena - 1)
	end := (start + uintptr(n) + huge - 1) &^ (huge - 1)
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, base, end-base, syscall.MADV_HUGEPAGE)
	runtime.KeepAlive(b)
	// ENOMEM: part of the range is not mapped (the marks on the rest hold)
	return errno == 0 || errno == syscall.ENOMEM
}
