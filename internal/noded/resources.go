package noded

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// hostCPUs is the number of CPUs this process may use (the affinity mask,
// like slurmd -C inside a cpuset).
func hostCPUs() int { return runtime.NumCPU() }

// hostMemoryMB reads MemTotal from ROOT/proc/meminfo, in megabytes
// (slurmd's RealMemory).
func hostMemoryMB(root string) int64 {
	if root == "" {
		root = "/"
	}
	f, err := os.Open(filepath.Join(root, "proc", "meminfo"))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			return kb / 1024
		}
	}
	return 0
}
