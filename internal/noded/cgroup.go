package noded

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// cgroupManager places jobs in cgroup v2 directories BASE/job_ID, as
// Slurm's proctrack/cgroup and task/cgroup plugins do: the freezer
// (cgroup.freeze) suspends the whole job even if a process left the
// process group, cgroup.kill ends it, and cpu.max / memory.max limit it when
// the cpu and memory controllers can be enabled.
//
// Where cgroup v1 controllers are mounted (v1 or hybrid hosts), v1 holds
// the agent's directory in each of memory, cpuset and devices, which
// carry the job's limits (cgroupv1.go); the v2 directory, when the v2
// hierarchy is there, still freezes and kills the job.
type cgroupManager struct {
	base   string // v2 directory; "" when the v2 hierarchy is not usable
	limits bool
	// cpuset: the v2 cpuset controller is enabled for jobs.
	cpuset bool
	v1     map[string]string
	// host are the CPU ids jobs are bound to; cpus the ids each job of
	// the node holds (guarded by mu).
	host []int
	mu   sync.Mutex
	cpus map[uint32][]int
}

// jobCgroup is a job's cgroup directories on the node.
type jobCgroup struct {
	V2   string
	V1   []string
	CPUs []int
}

// cgroup2Mount returns the cgroup v2 mount point from /proc/self/mountinfo.
func cgroup2Mount() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) >= 5 && len(qf) >= 1 && qf[0] == "cgroup2" {
			return pf[4]
		}
	}
	return ""
}

// newCgroupManager prepares base (created if needed) and reports nil when
// cgroup v2 cannot be used there: not root, no cgroup2, no freezer.
func newCgroupManager(base string) *cgroupManager {
	if os.Geteuid() != 0 || base == "" {
		return nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil
	}
	if !fileExists(filepath.Join(base, "cgroup.freeze")) {
		return nil
	}
	m := &cgroupManager{base: base, limits: enableControllers(base, "cpu", "memory")}
	m.cpuset = enableControllers(base, "cpuset")
	return m
}

// enableControllers turns on controllers for base's children, walking down
// from the mount root; it reports whether all of them are available.
func enableControllers(base string, ctrls ...string) bool {
	mount := cgroup2Mount()
	rel, err := filepath.Rel(mount, base)
	if mount == "" || err != nil || strings.HasPrefix(rel, "..") {
		return false
	}
	dir := mount
	parts := strings.Split(rel, string(filepath.Separator))
	for i := 0; i <= len(parts); i++ {
		have, _ := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		var req []string
		for _, c := range ctrls {
			if !contains(strings.Fields(string(have)), c) {
				return false
			}
			req = append(req, "+"+c)
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.Join(req, " ")), 0); err != nil {
			return false
		}
		if i < len(parts) && parts[i] != "." {
			dir = filepath.Join(dir, parts[i])
		}
	}
	return true
}

// create makes the job's cgroups and applies the limits of its
// constraints (best effort): memory, the CPUs it is bound to, the GPU
// device files it may not use (hide). A request without constraints (an
// older controller) gets the v2 limits of its allocation, as before
// cgroup.conf was read.
func (m *cgroupManager) create(req *api.LaunchRequest, nodeMB int64, hide []string) (jobCgroup, error) {
	c := req.Constrain
	if c != nil && c.Plugin == "disabled" {
		return jobCgroup{}, nil
	}
	var cg jobCgroup
	if c != nil && c.Cores {
		cg.CPUs = m.reserveCPUs(req.JobID, req.CPUs, req.CPUIDs)
	}
	if m.base != "" {
		memBytes := req.MemoryMB << 20
		if c != nil {
			memBytes = c.RAMLimitBytes(nodeMB)
		}
		v2Limits := c == nil || c.Plugin != "cgroup/v1"
		dir, err := m.createV2(req.JobID, v2Limits, req.CPUs, memBytes)
		if err != nil {
			m.releaseCPUs(req.JobID)
			return jobCgroup{}, err
		}
		cg.V2 = dir
		if v2Limits && m.cpuset && c != nil && c.Cores && len(cg.CPUs) > 0 {
			os.WriteFile(filepath.Join(dir, "cpuset.cpus"), []byte(cpuList(cg.CPUs)), 0)
		}
	}
	cg.V1 = m.createV1(req.JobID, c, nodeMB, cg.CPUs, hide)
	return cg, nil
}

// reserveCPUs picks the CPU ids of a job (the controller's when given).
func (m *cgroupManager) reserveCPUs(id uint32, n int, given []int) []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ids, ok := m.cpus[id]; ok {
		return ids
	}
	ids := given
	if len(ids) == 0 {
		ids = pickCPUs(n, m.host, m.cpus)
	}
	if m.cpus == nil {
		m.cpus = map[uint32][]int{}
	}
	if len(ids) > 0 {
		m.cpus[id] = ids
	}
	return ids
}

// holdCPUs records the CPUs of a job found again after a restart.
func (m *cgroupManager) holdCPUs(id uint32, ids []int) {
	if m == nil || len(ids) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cpus == nil {
		m.cpus = map[uint32][]int{}
	}
	m.cpus[id] = ids
}

func (m *cgroupManager) releaseCPUs(id uint32) {
	if m == nil {
		return
	}
	m.mu.Lock()
	delete(m.cpus, id)
	m.mu.Unlock()
}

// createV2 makes the job's v2 directory with its cpu and memory limits.
func (m *cgroupManager) createV2(id uint32, limits bool, cpus int, memBytes int64) (string, error) {
	dir := filepath.Join(m.base, "job_"+itoa(id))
	if err := os.Mkdir(dir, 0o755); errors.Is(err, os.ErrExist) {
		// Left over from an earlier run of this job id: reuse it only if
		// empty, never share a cgroup with live processes.
		if procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs")); len(strings.TrimSpace(string(procs))) > 0 {
			return "", fmt.Errorf("cgroup %s is in use", dir)
		}
	} else if err != nil {
		return "", fmt.Errorf("create cgroup: %w", err)
	}
	if m.limits && limits {
		if cpus > 0 {
			os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(fmt.Sprintf("%d 100000", cpus*100000)), 0)
		}
		if memBytes > 0 {
			os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(memBytes, 10)), 0)
		}
	}
	return dir, nil
}

// cgroupFreeze freezes or thaws dir and waits (briefly) until the kernel
// reports it done.
func cgroupFreeze(dir string, frozen bool) error {
	v := "0"
	if frozen {
		v = "1"
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.freeze"), []byte(v), 0); err != nil {
		return err
	}
	for i := 0; i < 100; i++ {
		ev, _ := os.ReadFile(filepath.Join(dir, "cgroup.events"))
		if strings.Contains(string(ev), "frozen "+v) {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// cgroupKill SIGKILLs every process in dir (cgroup.kill, or one by one on
// kernels before 5.14).
func cgroupKill(dir string) {
	if os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) == nil {
		return
	}
	procs, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	for _, f := range strings.Fields(string(procs)) {
		if pid, err := strconv.Atoi(f); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// cgroupOOM reports whether the kernel's OOM killer killed a process of
// the job (memory.events oom_kill), Slurm's OUT_OF_MEMORY.
func cgroupOOM(dir string) bool {
	ev, err := os.ReadFile(filepath.Join(dir, "memory.events"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(ev), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
			return true
		}
	}
	return false
}

// remove deletes a job's cgroups (v2 and v1) and frees its CPUs.
func (m *cgroupManager) remove(id uint32, v2 string, v1 []string) {
	if v2 != "" {
		cgroupRemove(v2)
	}
	for _, d := range v1 {
		cgroupRemove(d)
	}
	m.releaseCPUs(id)
}

// oom reports whether the OOM killer killed a process of the job.
func jobOOM(v2 string, v1 []string) bool {
	return v2 != "" && cgroupOOM(v2) || cgroupV1OOM(v1)
}

// cgroupRemove deletes the job's cgroup once its processes are gone.
func cgroupRemove(dir string) {
	for i := 0; i < 50; i++ {
		if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		cgroupKill(dir)
		time.Sleep(10 * time.Millisecond)
	}
}

// existing returns a job's cgroups made earlier (by another step).
func (m *cgroupManager) existing(id uint32) (jobCgroup, bool) {
	name := "job_" + itoa(id)
	var cg jobCgroup
	found := false
	if m.base != "" && fileExists(filepath.Join(m.base, name)) {
		cg.V2, found = filepath.Join(m.base, name), true
	}
	for _, c := range v1Controllers {
		if base, ok := m.v1[c]; ok && fileExists(filepath.Join(base, name)) {
			cg.V1, found = append(cg.V1, filepath.Join(base, name)), true
		}
	}
	m.mu.Lock()
	cg.CPUs = m.cpus[id]
	m.mu.Unlock()
	return cg, found
}

// removeIfEmpty deletes a step's job cgroups unless processes (another
// step's) are still in them.
func (m *cgroupManager) removeIfEmpty(id uint32, v2 string, v1 []string) {
	gone := true
	for _, d := range append([]string{v2}, v1...) {
		if d != "" && os.Remove(d) != nil && fileExists(d) {
			gone = false
		}
	}
	if gone {
		m.releaseCPUs(id)
	}
}
