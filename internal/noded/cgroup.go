package noded

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupManager places jobs in cgroup v2 directories BASE/job_ID, as
// Slurm's proctrack/cgroup and task/cgroup plugins do: the freezer
// (cgroup.freeze) suspends the whole job even if a process left the
// process group, cgroup.kill ends it, and cpu.max / memory.max limit it when
// the cpu and memory controllers can be enabled.
type cgroupManager struct {
	base   string
	limits bool
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
	return &cgroupManager{base: base, limits: enableControllers(base, "cpu", "memory")}
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

// create makes the job's cgroup and applies its limits (best effort).
func (m *cgroupManager) create(id uint32, cpus int, memMB int64) (string, error) {
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
	if m.limits {
		if cpus > 0 {
			os.WriteFile(filepath.Join(dir, "cpu.max"), []byte(fmt.Sprintf("%d 100000", cpus*100000)), 0)
		}
		if memMB > 0 {
			os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(memMB<<20, 10)), 0)
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
