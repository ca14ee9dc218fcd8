package noded

// Confinement with cgroup v1 controllers (memory, cpuset, devices), for
// hosts that mount them (v1 only, or hybrid with an empty v2 hierarchy
// beside them), and the choice of the CPUs a job is bound to. A job's v1
// directories are DIR/sluice/NODE_HASH/job_ID under the agent's own cgroup
// of each controller, as Slurm's task/cgroup makes
// /sys/fs/cgroup/memory/slurm/uid_U/job_J.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/sluice-hpc/sluice/internal/api"
)

// v1Controllers are the v1 controllers Sluice confines jobs with.
var v1Controllers = []string{"memory", "cpuset", "devices"}

// cgroupV1Mounts finds the mount point of each v1 controller in
// /proc/self/mountinfo ("cgroup" file systems; the super options name the
// controllers).
func cgroupV1Mounts() map[string]string {
	out := map[string]string{}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 || qf[0] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(qf[2], ",") {
			if contains(v1Controllers, opt) {
				out[opt] = pf[4]
			}
		}
	}
	return out
}

// ownV1Paths reads the agent's own cgroup of each v1 controller from
// /proc/self/cgroup ("4:memory:/a/b").
func ownV1Paths() map[string]string {
	out := map[string]string{}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			out[c] = f[2]
		}
	}
	return out
}

// setupV1 prepares the agent's base directory in each mounted v1
// controller (root only); leaf is the agent's own name under sluice/.
func setupV1(leaf string) map[string]string {
	if os.Geteuid() != 0 {
		return nil
	}
	mounts, own := cgroupV1Mounts(), ownV1Paths()
	out := map[string]string{}
	for _, c := range v1Controllers {
		m, ok := mounts[c]
		if !ok {
			continue
		}
		base := filepath.Join(m, own[c], "sluice", leaf)
		if err := mkdirV1(c, base); err != nil {
			continue
		}
		out[c] = base
	}
	return out
}

// mkdirV1 creates dir and its missing parents; a v1 cpuset directory
// starts with no CPUs and memory nodes, so each new one gets its parent's.
func mkdirV1(ctrl, dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := mkdirV1(ctrl, filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if ctrl == "cpuset" {
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(filepath.Dir(dir), f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
	}
	return nil
}

// createV1 makes a job's v1 directories and applies the constraints; it
// returns the directories made.
func (m *cgroupManager) createV1(id uint32, c *api.CgroupConstraints, nodeMB int64, cpus []int, hide []string) []string {
	if c == nil || c.Plugin == "cgroup/v2" || c.Plugin == "disabled" {
		return nil
	}
	var dirs []string
	name := "job_" + itoa(id)
	if base, ok := m.v1["memory"]; ok && c.RAM {
		if limit := c.RAMLimitBytes(nodeMB); limit > 0 {
			dir := filepath.Join(base, name)
			if mkdirV1("memory", dir) == nil {
				os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(strconv.FormatInt(limit, 10)), 0)
				if c.Swap {
					swap := limit + int64(float64(c.MemLimitMB)*c.AllowedSwapPercent/100)<<20
					os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(strconv.FormatInt(swap, 10)), 0)
				}
				dirs = append(dirs, dir)
			}
		}
	}
	if base, ok := m.v1["cpuset"]; ok && c.Cores && len(cpus) > 0 {
		dir := filepath.Join(base, name)
		if mkdirV1("cpuset", dir) == nil {
			if os.WriteFile(filepath.Join(dir, "cpuset.cpus"), []byte(cpuList(cpus)), 0) == nil {
				dirs = append(dirs, dir)
			} else {
				os.Remove(dir)
			}
		}
	}
	if base, ok := m.v1["devices"]; ok && c.Devices && len(hide) > 0 {
		dir := filepath.Join(base, name)
		if mkdirV1("devices", dir) == nil {
			for _, dev := range hide {
				if rule := deviceRule(dev); rule != "" {
					os.WriteFile(filepath.Join(dir, "devices.deny"), []byte(rule), 0)
				}
			}
			dirs = append(dirs, dir)
		}
	}
	return dirs
}

// deviceRule is the devices.deny rule of a device file ("c 195:1 rwm").
func deviceRule(path string) string {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return ""
	}
	kind := "c"
	if st.Mode&syscall.S_IFMT == syscall.S_IFBLK {
		kind = "b"
	}
	return fmt.Sprintf("%s %d:%d rwm", kind, unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))
}

// joinV1 moves pid into the v1 directories (a v1 hierarchy has no clone3
// into a cgroup: the process is moved right after its start).
func joinV1(dirs []string, pid int) {
	for _, d := range dirs {
		os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(itoa(pid)), 0)
	}
}

// cgroupV1OOM reports whether the OOM killer killed a process in a v1
// memory directory (memory.oom_control oom_kill, Linux 4.13+).
func cgroupV1OOM(dirs []string) bool {
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, "memory.oom_control"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
				return true
			}
		}
	}
	return false
}

// cpuList prints CPU ids as a cpuset list ("0-3,6").
func cpuList(ids []int) string {
	s := append([]int(nil), ids...)
	sort.Ints(s)
	var parts []string
	for i := 0; i < len(s); {
		k := i
		for k+1 < len(s) && s[k+1] == s[k]+1 {
			k++
		}
		if k > i {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[k]))
		} else {
			parts = append(parts, strconv.Itoa(s[i]))
		}
		i = k + 1
	}
	return strings.Join(parts, ",")
}

// allowedCPUs are the CPU ids the agent may hand out: its own affinity.
func allowedCPUs() []int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	var out []int
	for i := 0; i < 1024; i++ {
		if set.IsSet(i) {
			out = append(out, i)
		}
	}
	return out
}

// pickCPUs chooses n CPU ids among host for a job: the least used first
// (by the jobs in use, which maps job ids to their CPUs), then the lowest
// id, as Slurm's select plugin fills cores in order. A node configured
// with more CPUs than the host has shares them.
func pickCPUs(n int, host []int, use map[uint32][]int) []int {
	if n <= 0 || len(host) == 0 {
		return nil
	}
	count := map[int]int{}
	for _, ids := range use {
		for _, id := range ids {
			count[id]++
		}
	}
	order := append([]int(nil), host...)
	sort.SliceStable(order, func(i, j int) bool { return count[order[i]] < count[order[j]] })
	n = min(n, len(order))
	out := append([]int(nil), order[:n]...)
	sort.Ints(out)
	return out
}

// hiddenGPUs are the device files of the node's GPUs not in allocated
// (indices), which ConstrainDevices denies to the job.
func (a *Agent) hiddenGPUs(allocated []int) []string {
	var out []string
	for _, g := range a.info.Resources.GPUs {
		if g.File != "" && !slices.Contains(allocated, g.Index) {
			out = append(out, g.File)
		}
	}
	return out
}

// oomKills counts the OOM kills in a job's cgroups (v2 memory.events,
// v1 memory.oom_control).
func oomKills(v2 string, v1 []string) int64 {
	var n int64
	files := []string{}
	if v2 != "" {
		files = append(files, filepath.Join(v2, "memory.events"))
	}
	for _, d := range v1 {
		files = append(files, filepath.Join(d, "memory.oom_control"))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if fl := strings.Fields(line); len(fl) == 2 && fl[0] == "oom_kill" {
				v, _ := strconv.ParseInt(fl[1], 10, 64)
				n += v
			}
		}
	}
	return n
}

// startInCgroups runs start (a fork and exec) so that the new process is
// in the v1 directories dirs before it runs a single instruction of its
// program: a v1 hierarchy has no clone3 into a cgroup, and a process moved
// after its start would leave outside whatever it forked at once (a batch
// script's first command). The child is started traced (PTRACE_TRACEME,
// so it stops at its exec), moved, and let go; the thread that forks it
// is its tracer, hence locked. Without v1 directories start runs as is.
func startInCgroups(dirs []string, start func(traced bool) (int, error)) (int, error) {
	if len(dirs) == 0 {
		return start(false)
	}
	if !canTrace() {
		// No ptrace here (a container without it, Yama's scope 3): moved
		// right after the start, the best left.
		pid, err := start(false)
		if err == nil {
			joinV1(dirs, pid)
		}
		return pid, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pid, err := start(true)
	if err != nil {
		return pid, err
	}
	var ws syscall.WaitStatus
	_, werr := syscall.Wait4(pid, &ws, syscall.WALL|syscall.WUNTRACED, nil)
	joinV1(dirs, pid)
	if werr == nil && ws.Stopped() {
		syscall.PtraceDetach(pid)
	}
	return pid, nil
}

var traceProbe struct {
	once sync.Once
	ok   bool
}

// canTrace reports whether this process may start a child traced (tried
// once with /bin/true).
func canTrace() bool {
	traceProbe.once.Do(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Ptrace: true}})
		if err != nil {
			return
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err == nil && ws.Stopped() {
			traceProbe.ok = syscall.PtraceDetach(pid) == nil
		}
		syscall.Wait4(pid, &ws, syscall.WALL, nil)
	})
	return traceProbe.ok
}
