package noded

// Task CPU binding (srun --cpu-bind) with the semantics of Slurm's
// task/affinity plugin: each task of a step is bound to its share of the
// CPUs the step may use on this node (cores, threads), to all of them
// (sockets, ldoms: Sluice knows no socket or NUMA layout), to the CPU its
// local id picks from map_cpu:, or to the mask mask_cpu: gives it. The
// mask is set on the agent's thread that forks the task, so the task and
// everything it starts inherit it before its first instruction.

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/sluice-hpc/sluice/internal/api"
)

// stepCPUSet returns the CPUs the step may use here: the job's cpuset
// when its cgroup has one, else the CPUs the agent itself may run on.
func (r *stepRun) stepCPUSet() []int {
	if r.cgroup != "" {
		for _, f := range []string{"cpuset.cpus.effective", "cpuset.cpus"} {
			if data, err := os.ReadFile(filepath.Join(r.cgroup, f)); err == nil {
				if cpus := parseCPUList(strings.TrimSpace(string(data))); len(cpus) > 0 {
					return cpus
				}
			}
		}
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var out []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// parseCPUList parses a kernel CPU list ("0-3,8").
func parseCPUList(s string) []int {
	var out []int
	for _, p := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(p, "-")
		lo, err := strconv.Atoi(a)
		if err != nil {
			continue
		}
		hi := lo
		if isRange {
			if hi, err = strconv.Atoi(b); err != nil {
				continue
			}
		}
		for c := lo; c <= hi; c++ {
			out = append(out, c)
		}
	}
	return out
}

// taskCPUs returns the CPUs task (local id local) is bound to under b, or
// nil for no binding; an error says why the binding cannot be made.
func taskCPUs(b *api.CPUBind, avail []int, local, perTask, ntasksHere int) ([]int, error) {
	if b == nil || len(b.Types) == 0 || b.Has("none") && len(b.Types) == 1 || len(avail) == 0 {
		return nil, nil
	}
	list := strings.Split(b.List, ",")
	switch {
	case b.Has("map_cpu:"):
		c, err := strconv.Atoi(list[local%len(list)])
		if err != nil || !containsInt(avail, c) {
			return nil, fmt.Errorf("CPU %s of map_cpu is not one of the step's CPUs %s", list[local%len(list)], cpuListString(avail))
		}
		return []int{c}, nil
	case b.Has("mask_cpu:"):
		m, ok := new(big.Int).SetString(list[local%len(list)], 16)
		if !ok {
			return nil, fmt.Errorf("bad mask_cpu mask %s", list[local%len(list)])
		}
		var out []int
		for c := 0; c < m.BitLen(); c++ {
			if m.Bit(c) == 1 && containsInt(avail, c) {
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("mask 0x%s has none of the step's CPUs %s", list[local%len(list)], cpuListString(avail))
		}
		return out, nil
	case b.Has("cores") || b.Has("threads") || b.Has("rank_ldom"):
		n := max(perTask, 1)
		if ntasksHere*n > len(avail) {
			n = max(len(avail)/max(ntasksHere, 1), 1)
		}
		start := (local * n) % len(avail)
		return append([]int(nil), avail[start:min(start+n, len(avail))]...), nil
	}
	// sockets, ldoms: the whole set.
	return append([]int(nil), avail...), nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// cpuMaskHex prints CPUs as task/affinity's verbose line does ("0x3").
func cpuMaskHex(cpus []int) string {
	m := new(big.Int)
	for _, c := range cpus {
		m.SetBit(m, c, 1)
	}
	return "0x" + strings.ToUpper(m.Text(16))
}

func cpuListString(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// withAffinity runs start (which forks the task) on a thread bound to
// cpus, then gives the thread its mask back; nil cpus: start as it is.
func withAffinity(cpus []int, start func() error) error {
	if len(cpus) == 0 {
		return start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return start()
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return &affinityError{err}
	}
	err := start()
	unix.SchedSetaffinity(0, &old)
	return err
}

// affinityError is a binding the kernel refused; the task starts unbound.
type affinityError struct{ err error }

func (e *affinityError) Error() string { return "sched_setaffinity: " + e.err.Error() }
