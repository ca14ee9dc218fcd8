package noded

// Usage accounting of batch scripts and step tasks, as Slurm's
// jobacct_gather/linux gathers it: every JobAcctGatherFrequency seconds
// the agent reads /proc for each task's process tree (the task's process
// and all its descendants) and keeps the largest resident and virtual
// size, the page faults, the CPU time and the bytes read and written; when
// the task ends, the kernel's rusage of its wait (CPU time of the task and
// every descendant it waited for, the largest RSS among them) completes
// the figures. The figures come from /proc and wait4 rather than the
// job's cgroup because a job's steps share its cgroup (docs/differences.md),
// and they work on cgroup v1, v2 and without cgroups alike.

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// DefaultAcctGatherFreq is JobAcctGatherFrequency's default (task=30).
const DefaultAcctGatherFreq = 30 * time.Second

// gatherInterval is a request's sampling period; 0 when periodic
// sampling is off (JobAcctGatherFrequency=0: only the end is gathered).
func gatherInterval(sec int) time.Duration {
	switch {
	case sec == 0:
		return DefaultAcctGatherFreq
	case sec < 0:
		return 0
	}
	return time.Duration(sec) * time.Second
}

// procUsage is one process's usage read from /proc/PID/stat and io.
type procUsage struct {
	pid, ppid, pgrp  int
	rss, vsize       int64 // bytes
	majflt           int64
	userUS, systemUS int64 // the process and its waited-for children
	rchar, wchar     int64
}

// clockTick is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTick = 100

var pageSize = int64(os.Getpagesize())

// parseProcUsage reads the usage fields of a /proc/PID/stat line.
func parseProcUsage(pid int, stat []byte) (procUsage, bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return procUsage{}, false
	}
	f := bytes.Fields(stat[i+1:])
	// f[0] is field 3 (state): ppid 4, majflt 12, utime 14, stime 15,
	// cutime 16, cstime 17, vsize 23, rss 24 (pages); pgrp is field 5.
	if len(f) < 22 {
		return procUsage{}, false
	}
	n := func(k int) int64 {
		v, _ := strconv.ParseInt(string(f[k]), 10, 64)
		return v
	}
	tickUS := int64(1000000 / clockTick)
	return procUsage{pid: pid, ppid: int(n(1)), pgrp: int(n(2)), majflt: n(9),
		userUS: (n(11) + n(13)) * tickUS, systemUS: (n(12) + n(14)) * tickUS,
		vsize: n(20), rss: n(21) * pageSize}, true
}

// parseProcIO reads rchar and wchar from /proc/PID/io.
func parseProcIO(data []byte) (rchar, wchar int64) {
	for _, line := range bytes.Split(data, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		switch string(k) {
		case "rchar":
			rchar = n
		case "wchar":
			wchar = n
		}
	}
	return rchar, wchar
}

// procTable reads every process of the machine.
func procTable() map[int]procUsage {
	out := map[int]procUsage{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := "/proc/" + e.Name()
		stat, err := os.ReadFile(dir + "/stat")
		if err != nil {
			continue
		}
		p, ok := parseProcUsage(pid, stat)
		if !ok {
			continue
		}
		if io, err := os.ReadFile(dir + "/io"); err == nil {
			p.rchar, p.wchar = parseProcIO(io)
		}
		out[pid] = p
	}
	return out
}

// treeUsage sums the usage of root and all its descendants in table; it
// returns false when root is not there.
func treeUsage(table map[int]procUsage, root int) (api.TaskUsage, bool) {
	if _, ok := table[root]; !ok || root <= 0 {
		return api.TaskUsage{}, false
	}
	children := map[int][]int{}
	for pid, p := range table {
		children[p.ppid] = append(children[p.ppid], pid)
	}
	var u api.TaskUsage
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		p := table[pid]
		u.Pids = append(u.Pids, pid)
		u.MaxRSS += p.rss
		u.MaxVMSize += p.vsize
		u.Pages += p.majflt
		u.UserUS += p.userUS
		u.SystemUS += p.systemUS
		u.DiskRead += p.rchar
		u.DiskWrite += p.wchar
		queue = append(queue, children[pid]...)
	}
	u.Sampled = true
	return u, true
}

// addSample folds a sample s of a task into its gathered usage acc.
func addSample(acc *api.TaskUsage, s api.TaskUsage) {
	acc.MaxRSS = max(acc.MaxRSS, s.MaxRSS)
	acc.MaxVMSize = max(acc.MaxVMSize, s.MaxVMSize)
	acc.Pages = max(acc.Pages, s.Pages)
	acc.UserUS = max(acc.UserUS, s.UserUS)
	acc.SystemUS = max(acc.SystemUS, s.SystemUS)
	acc.DiskRead = max(acc.DiskRead, s.DiskRead)
	acc.DiskWrite = max(acc.DiskWrite, s.DiskWrite)
	acc.Pids = s.Pids
	acc.Sampled = acc.Sampled || s.Sampled
}

// rusageUsage is what wait4's rusage tells of a finished task.
type rusageUsage struct {
	UserUS   int64 `json:"u"`
	SystemUS int64 `json:"s"`
	MaxRSSKB int64 `json:"rss,omitempty"`
	MajFlt   int64 `json:"flt,omitempty"`
}

func fromRusage(ru *syscall.Rusage) *rusageUsage {
	if ru == nil {
		return nil
	}
	return &rusageUsage{UserUS: ru.Utime.Nano() / 1000, SystemUS: ru.Stime.Nano() / 1000,
		MaxRSSKB: ru.Maxrss, MajFlt: ru.Majflt}
}

// addRusage folds a task's final rusage into acc: its CPU time is final,
// its largest RSS a floor for MaxRSS (a task that ended before any sample
// still gets one; Slurm leaves it empty: docs/differences.md).
func addRusage(acc *api.TaskUsage, ru *rusageUsage) {
	if ru == nil {
		return
	}
	acc.UserUS = max(acc.UserUS, ru.UserUS)
	acc.SystemUS = max(acc.SystemUS, ru.SystemUS)
	acc.Pages = max(acc.Pages, ru.MajFlt)
	if ru.MaxRSSKB > 0 {
		acc.MaxRSS = max(acc.MaxRSS, ru.MaxRSSKB*1024)
	}
	acc.Pids = nil
}

// sampleJob gathers a running batch job's usage when its period is due.
// The caller holds a.mu.
func (a *Agent) sampleJob(j *job, now time.Time, force bool) {
	r := &j.rec
	every := gatherInterval(r.Req.AcctGatherFreqSec)
	if r.PID == 0 || r.State != api.StateRunning || !force && (every == 0 || now.Before(j.nextSample)) {
		return
	}
	if j.nextSample.IsZero() && !force {
		// The first sample one period after the start, as slurmstepd's.
		j.nextSample = r.Start.Add(every)
		if now.Before(j.nextSample) {
			return
		}
	}
	if every > 0 {
		j.nextSample = now.Add(every)
	}
	if s, ok := treeUsage(a.procs(now, force), r.PID); ok {
		if r.Usage == nil {
			r.Usage = &api.TaskUsage{Node: a.cfg.Name}
		}
		addSample(r.Usage, s)
	}
}

// procTableReuse is how long one read of /proc serves the samples of the
// node's jobs: jobs due in the same poll share it.
const procTableReuse = time.Second

// procs returns the machine's process table, read at most once per
// procTableReuse (fresh when forced: sstat). The caller holds a.mu.
func (a *Agent) procs(now time.Time, fresh bool) map[int]procUsage {
	if fresh || a.procTable == nil || now.Sub(a.procTableAt) >= procTableReuse || now.Before(a.procTableAt) {
		a.procTable, a.procTableAt = procTable(), now
	}
	return a.procTable
}

// JobUsage returns the live usage of a running batch job (sstat -j
// JOB.batch), sampled now.
func (a *Agent) JobUsage(id uint32) (api.Usage, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	j, ok := a.jobs[id]
	if !ok || api.AgentJobFinal(j.rec.State) {
		return api.Usage{}, ErrUnknownJob
	}
	a.sampleJob(j, time.Now(), true)
	u := api.TaskUsage{Node: a.cfg.Name}
	if j.rec.Usage != nil {
		u = *j.rec.Usage
	}
	return api.Usage{Tasks: []api.TaskUsage{u}}, nil
}

// gather samples the step's running tasks every JobAcctGatherFrequency
// until the step ends.
func (r *stepRun) gather() {
	every := gatherInterval(r.req.Job.AcctGatherFreqSec)
	if every == 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.done:
			return
		case <-t.C:
			r.sample()
		}
	}
}

// sample reads every running task's process tree now.
func (r *stepRun) sample() {
	table := procTable()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.tasks {
		if t.pgid <= 0 || t.ended {
			continue
		}
		if s, ok := treeUsage(table, t.pgid); ok {
			addSample(&t.usage, s)
		}
	}
}

// taskEnded folds a finished task's rusage into its usage.
func (r *stepRun) taskEnded(t *stepTask, ps *os.ProcessState) {
	if ps == nil {
		return
	}
	ru, _ := ps.SysUsage().(*syscall.Rusage)
	r.mu.Lock()
	addRusage(&t.usage, fromRusage(ru))
	r.mu.Unlock()
}

// usageLocked is the node's tasks' usage (the caller holds r.mu).
func (r *stepRun) usageLocked() *api.Usage {
	u := &api.Usage{}
	for _, t := range r.tasks {
		tu := t.usage
		tu.Task, tu.Node = t.id, r.a.cfg.Name
		u.Tasks = append(u.Tasks, tu)
	}
	if len(u.Tasks) == 0 {
		return nil
	}
	return u
}

// StepUsage returns a running step's usage on this node (sstat), sampled
// now.
func (a *Agent) StepUsage(job uint32, step int) (api.Usage, error) {
	r, err := a.step(job, step)
	if err != nil {
		return api.Usage{}, err
	}
	r.sample()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.result.Done {
		return api.Usage{}, fmt.Errorf("step %d.%d ended: %w", job, step, ErrUnknownJob)
	}
	if u := r.usageLocked(); u != nil {
		return *u, nil
	}
	return api.Usage{}, nil
}
