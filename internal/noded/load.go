package noded

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
)

// procFS is where hostLoad reads the kernel's figures (a test points it
// elsewhere).
var procFS = "/proc"

// hostLoad reads what slurmd reports of its host: the 1-minute load
// average (/proc/loadavg) and MemFree in MB (/proc/meminfo); nil where
// they cannot be read.
func hostLoad() *api.HostLoad {
	return readHostLoad(procFS)
}

func readHostLoad(dir string) *api.HostLoad {
	avg, err := os.ReadFile(dir + "/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(avg))
	if len(f) == 0 {
		return nil
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return nil
	}
	mem, err := os.ReadFile(dir + "/meminfo")
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(mem))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != "MemFree" {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return nil
		}
		return &api.HostLoad{CPULoad: load, FreeMemMB: kb / 1024}
	}
	return nil
}
