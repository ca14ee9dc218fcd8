package noded

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

func TestParseProcUsage(t *testing.T) {
	// Fields after the command: state ppid pgrp session tty tpgid flags
	// minflt cminflt majflt cmajflt utime stime cutime cstime prio nice
	// threads itreal starttime vsize rss.
	stat := "4242 (my (odd) cmd) S 4200 4242 4242 0 -1 4194304 10 0 7 0 150 25 50 5 20 0 1 0 999 104857600 2560 ..."
	p, ok := parseProcUsage(4242, []byte(stat))
	if !ok {
		t.Fatal("not parsed")
	}
	want := procUsage{pid: 4242, ppid: 4200, pgrp: 4242, majflt: 7, userUS: 2000000, systemUS: 300000, vsize: 104857600, rss: 2560 * pageSize}
	if p != want {
		t.Errorf("got %+v, want %+v", p, want)
	}
	r, w := parseProcIO([]byte("rchar: 10467\nwchar: 1\nsyscr: 5\nread_bytes: 0\n"))
	if r != 10467 || w != 1 {
		t.Errorf("io: %d %d", r, w)
	}
}

// TestTreeUsage checks that a task's usage sums its process and every
// descendant, and nothing else.
func TestTreeUsage(t *testing.T) {
	table := map[int]procUsage{
		10: {pid: 10, ppid: 1, rss: 1 << 20, userUS: 100},
		11: {pid: 11, ppid: 10, rss: 2 << 20, userUS: 200, rchar: 5},
		12: {pid: 12, ppid: 11, rss: 4 << 20, systemUS: 300, wchar: 7},
		20: {pid: 20, ppid: 1, rss: 64 << 20}, // another job
	}
	u, ok := treeUsage(table, 10)
	if !ok || u.MaxRSS != 7<<20 || u.UserUS != 300 || u.SystemUS != 300 || u.DiskRead != 5 || u.DiskWrite != 7 {
		t.Fatalf("got %+v", u)
	}
	if slices.Sort(u.Pids); fmt.Sprint(u.Pids) != "[10 11 12]" {
		t.Errorf("pids %v", u.Pids)
	}
	if _, ok := treeUsage(table, 99); ok {
		t.Error("usage of a process that is gone")
	}
	// Samples keep maxima; the end's rusage completes CPU and RSS.
	var acc api.TaskUsage
	addSample(&acc, u)
	addSample(&acc, api.TaskUsage{MaxRSS: 1 << 20, UserUS: 900, Sampled: true})
	addRusage(&acc, &rusageUsage{UserUS: 1000, SystemUS: 400, MaxRSSKB: 2048})
	if acc.MaxRSS != 7<<20 || acc.UserUS != 1000 || acc.SystemUS != 400 || !acc.Sampled {
		t.Errorf("accumulated %+v", acc)
	}
}

func TestPickCPUs(t *testing.T) {
	host := []int{0, 1, 2, 3}
	cases := []struct {
		n    int
		use  map[uint32][]int
		want string
	}{
		{2, nil, "[0 1]"},
		{2, map[uint32][]int{1: {0, 1}}, "[2 3]"},
		{1, map[uint32][]int{1: {0, 2}}, "[1]"},
		{6, nil, "[0 1 2 3]"},                           // more than the host has: all of them
		{2, map[uint32][]int{1: {0, 1, 2, 3}}, "[0 1]"}, // shared when all are taken
	}
	for i, c := range cases {
		if got := fmt.Sprint(pickCPUs(c.n, host, c.use)); got != c.want {
			t.Errorf("case %d: %s, want %s", i, got, c.want)
		}
	}
	if got := cpuList([]int{6, 0, 1, 2, 4}); got != "0-2,4,6" {
		t.Errorf("cpuList: %s", got)
	}
}

// TestBatchUsageGathered checks that a running batch job is sampled (its
// live usage lists its processes) and that its end carries the usage.
func TestBatchUsageGathered(t *testing.T) {
	a := newAgent(t)
	req := batch(t, 2100, "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 1")
	req.AcctGatherFreqSec = 1
	st := launch(t, a, req)
	time.Sleep(300 * time.Millisecond)
	u, err := a.JobUsage(2100)
	if err != nil || len(u.Tasks) != 1 || !slices.Contains(u.Tasks[0].Pids, st.PID) || u.Tasks[0].Node != "node01" {
		t.Fatalf("live usage %+v %v, want the script's pid %d", u, err, st.PID)
	}
	final := waitFinal(t, a, 2100, 10*time.Second)
	if final.Usage.Empty() {
		t.Fatal("no usage with the job's end")
	}
	tu := final.Usage.Tasks[0]
	if tu.MaxRSS <= 0 || tu.UserUS+tu.SystemUS <= 0 || !tu.Sampled {
		t.Errorf("final usage %+v", tu)
	}
}

// TestCgroupV1Confinement runs where cgroup v1 memory and cpuset
// controllers are mounted (root on a v1 or hybrid host): the batch
// script is in the job's v1 cgroups from its first instruction (its
// first command already runs there), sees only its CPU, and exceeding its
// memory ends it OUT_OF_MEMORY 0:125.
func TestCgroupV1Confinement(t *testing.T) {
	a := newAgent(t)
	if a.cg == nil || a.cg.v1["memory"] == "" || a.cg.v1["cpuset"] == "" {
		t.Skip("cgroup v1 memory and cpuset controllers not available here (needs root)")
	}
	req := batch(t, 2200, "grep -E ':(memory|cpuset):' /proc/self/cgroup; nproc; head -c 300000000 /dev/zero | tail > /dev/null")
	req.CPUs = 1
	req.Constrain = &api.CgroupConstraints{RAM: true, Cores: true, MemLimitMB: 64}
	launch(t, a, req)
	st := waitFinal(t, a, 2200, 10*time.Second)
	out := readFile(t, st.StdOut)
	if st.State != api.StateOutOfMemory || st.ExitCode != "0:125" {
		t.Errorf("got %s %s, want OUT_OF_MEMORY 0:125; output:\n%s", st.State, st.ExitCode, out)
	}
	if strings.Count(out, "/job_2200") != 2 || !strings.Contains(out, "\n1\n") {
		t.Errorf("first command outside the job's cgroups or not on 1 CPU:\n%s", out)
	}
}

// TestCgroupV1Devices runs where the cgroup v1 devices controller is
// mounted (root): a device file hidden by ConstrainDevices (here
// /dev/null, standing for an unallocated GPU's /dev/nvidiaN) cannot be
// opened by the job's processes.
func TestCgroupV1Devices(t *testing.T) {
	a := newAgent(t)
	if a.cg == nil || a.cg.v1["devices"] == "" {
		t.Skip("cgroup v1 devices controller not available here (needs root)")
	}
	dirs := a.cg.createV1(2300, &api.CgroupConstraints{Devices: true}, 0, nil, []string{"/dev/null"})
	defer a.cg.remove(2300, "", dirs)
	if len(dirs) != 1 {
		t.Fatalf("devices directory not made: %v", dirs)
	}
	cmd := exec.Command("/bin/sh", "-c", "exec cat /dev/null")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if _, err := startInCgroups(dirs, func(traced bool) (int, error) {
		cmd.SysProcAttr.Ptrace = traced
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("a hidden device was opened")
	}
	if rule := deviceRule("/dev/null"); rule != "c 1:3 rwm" {
		t.Errorf("rule %q", rule)
	}
}

// TestCPUsReleased checks that a job's CPUs are free again once it ends,
// so the next job is bound to the lowest CPUs, and that jobs not
// constrained to cores hold none.
func TestCPUsReleased(t *testing.T) {
	m := &cgroupManager{host: []int{0, 1, 2, 3}}
	cores := &api.CgroupConstraints{Cores: true}
	a, _ := m.create(&api.LaunchRequest{JobID: 1, CPUs: 2, Constrain: cores}, 0, nil)
	b, _ := m.create(&api.LaunchRequest{JobID: 2, CPUs: 1, Constrain: cores}, 0, nil)
	free, _ := m.create(&api.LaunchRequest{JobID: 3, CPUs: 4, Constrain: &api.CgroupConstraints{}}, 0, nil)
	if fmt.Sprint(a.CPUs, b.CPUs, free.CPUs) != "[0 1] [2] []" {
		t.Fatalf("CPUs %v %v %v", a.CPUs, b.CPUs, free.CPUs)
	}
	m.releaseCPUs(1)
	if c, _ := m.create(&api.LaunchRequest{JobID: 4, CPUs: 1, Constrain: cores}, 0, nil); fmt.Sprint(c.CPUs) != "[0]" {
		t.Errorf("after job 1 ended: %v", c.CPUs)
	}
}
