//go:build !linux

package cli

// hugeHeap reports false: transparent huge pages are a Linux feature.
func hugeHeap(int) bool { return false }
