package noded

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadHostLoad: the 1-minute load average and MemFree in MB, the
// figures Slurm 24.11's slurmd reports (on the oracle's host CPULoad and
// FreeMem followed /proc/loadavg and MemFree); nil when /proc cannot be
// read.
func TestReadHostLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if readHostLoad(dir) != nil {
		t.Error("no /proc files: want nil")
	}
	write("loadavg", "5.20 5.08 3.26 1/1386 26164\n")
	write("meminfo", "MemTotal:       24684092 kB\nMemFree:        10735948 kB\nMemAvailable:   23154104 kB\n")
	l := readHostLoad(dir)
	if l == nil || l.CPULoad != 5.20 || l.FreeMemMB != 10484 {
		t.Errorf("got %+v, want load 5.20 and 10484 MB free", l)
	}
}
