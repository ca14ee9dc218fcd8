package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// TaskUsage is one task's resource usage as a node agent gathers it
// (Slurm's jobacct_gather/linux): the largest resident and virtual size
// and page faults of the task's process tree seen by a sample or by the
// kernel's rusage at its end, its CPU time, and the bytes it read and
// wrote (/proc/PID/io rchar and wchar).
type TaskUsage struct {
	Task int    `json:"task"`
	Node string `json:"node"`
	// MaxRSS and MaxVMSize are bytes; Pages is major page faults.
	MaxRSS    int64 `json:"max_rss,omitempty"`
	MaxVMSize int64 `json:"max_vmsize,omitempty"`
	Pages     int64 `json:"pages,omitempty"`
	// UserUS and SystemUS are CPU time in microseconds.
	UserUS   int64 `json:"user_us,omitempty"`
	SystemUS int64 `json:"system_us,omitempty"`
	// DiskRead and DiskWrite are bytes.
	DiskRead  int64 `json:"disk_read,omitempty"`
	DiskWrite int64 `json:"disk_write,omitempty"`
	// Sampled is false when no sample saw the task running (a task that
	// ended before the first one): only its CPU time and its rusage (the
	// largest RSS) are known.
	Sampled bool `json:"sampled,omitempty"`
	// Pids are the task's processes at the last sample (sstat's Pids).
	Pids []int `json:"pids,omitempty"`
}

// CPUUS is the task's total CPU time in microseconds.
func (t TaskUsage) CPUUS() int64 { return t.UserUS + t.SystemUS }

// Usage is a step's usage over all its tasks and nodes, the figures sacct
// and sstat print: maxima with the node and task that reached them,
// averages over the tasks, CPU totals.
type Usage struct {
	Tasks []TaskUsage `json:"tasks"`
}

// Empty reports whether nothing was gathered.
func (u *Usage) Empty() bool { return u == nil || len(u.Tasks) == 0 }

// maxBy returns the task with the largest value of f (the first one on a
// tie, as Slurm keeps the first task that reached a maximum).
func (u *Usage) maxBy(f func(TaskUsage) int64) TaskUsage {
	best := u.Tasks[0]
	for _, t := range u.Tasks[1:] {
		if f(t) > f(best) {
			best = t
		}
	}
	return best
}

func (u *Usage) minBy(f func(TaskUsage) int64) TaskUsage {
	best := u.Tasks[0]
	for _, t := range u.Tasks[1:] {
		if f(t) < f(best) {
			best = t
		}
	}
	return best
}

func (u *Usage) sum(f func(TaskUsage) int64) int64 {
	var s int64
	for _, t := range u.Tasks {
		s += f(t)
	}
	return s
}

func (u *Usage) ave(f func(TaskUsage) int64) int64 { return u.sum(f) / int64(len(u.Tasks)) }

// UsageField returns field name (case-insensitive, sacct's and sstat's
// names) of u as sacct prints it; ok is false for a field that is not a
// usage field. A step without samples prints only its CPU times, as
// Slurm's step records do (oracle: "1.0" of a 2 s step showed TotalCPU
// but empty MaxRSS).
func (u *Usage) UsageField(name string, sstat bool) (string, bool) {
	lower := strings.ToLower(name)
	switch lower {
	case "totalcpu":
		return FormatCPUTime(u.sum(TaskUsage.CPUUS)), true
	case "usercpu":
		return FormatCPUTime(u.sum(func(t TaskUsage) int64 { return t.UserUS })), true
	case "systemcpu":
		return FormatCPUTime(u.sum(func(t TaskUsage) int64 { return t.SystemUS })), true
	}
	memory := map[string]func(TaskUsage) int64{
		"rss":    func(t TaskUsage) int64 { return t.MaxRSS },
		"vmsize": func(t TaskUsage) int64 { return t.MaxVMSize },
	}
	counts := map[string]func(TaskUsage) int64{
		"pages": func(t TaskUsage) int64 { return t.Pages },
		"cpu":   TaskUsage.CPUUS,
	}
	disk := map[string]func(TaskUsage) int64{
		"diskread":  func(t TaskUsage) int64 { return t.DiskRead },
		"diskwrite": func(t TaskUsage) int64 { return t.DiskWrite },
	}
	kind, metric, suffix := splitUsageName(lower)
	if kind == "" {
		return "", false
	}
	var f func(TaskUsage) int64
	var format func(int64) string
	switch {
	case memory[metric] != nil:
		f, format = memory[metric], FormatMemKB
	case metric == "pages":
		f, format = counts[metric], func(v int64) string { return strconv.FormatInt(v, 10) }
	case metric == "cpu":
		f, format = counts[metric], FormatCPUSeconds
	case disk[metric] != nil:
		f, format = disk[metric], FormatDiskMB
		if sstat {
			format = formatDiskSstat
		}
	default:
		return "", false
	}
	if kind == "min" && metric != "cpu" {
		return "", false
	}
	if u.Empty() || !u.measured() {
		return "", true
	}
	var t TaskUsage
	switch kind {
	case "ave":
		if suffix != "" {
			return "", false
		}
		return format(u.ave(f)), true
	case "max":
		t = u.maxBy(f)
	case "min":
		t = u.minBy(f)
	}
	switch suffix {
	case "node":
		return t.Node, true
	case "task":
		return strconv.Itoa(t.Task), true
	}
	return format(f(t)), true
}

// Sampled reports whether any task was seen by a sample.
func (u *Usage) Sampled() bool {
	if u == nil {
		return false
	}
	for _, t := range u.Tasks {
		if t.Sampled {
			return true
		}
	}
	return false
}

// measured reports whether memory figures are known: a sample, or the
// rusage of a task's end (Slurm leaves them empty without a sample:
// docs/differences.md "Usage accounting").
func (u *Usage) measured() bool {
	for _, t := range u.Tasks {
		if t.Sampled || t.MaxRSS > 0 {
			return true
		}
	}
	return false
}

// splitUsageName splits "MaxRSSNode" into max, rss, node.
func splitUsageName(s string) (kind, metric, suffix string) {
	for _, k := range []string{"max", "min", "ave"} {
		if strings.HasPrefix(s, k) {
			kind, s = k, s[len(k):]
			break
		}
	}
	if kind == "" {
		return "", "", ""
	}
	for _, x := range []string{"node", "task"} {
		if strings.HasSuffix(s, x) {
			return kind, strings.TrimSuffix(s, x), x
		}
	}
	return kind, s, ""
}

// MemoryBytes is a memory field (MaxRSS, AveRSS, MaxVMSize, AveVMSize)
// in bytes, as sacct --noconvert prints it; ok is false for other fields.
func (u *Usage) MemoryBytes(name string) (string, bool) {
	f := map[string]func(TaskUsage) int64{
		"maxrss": func(t TaskUsage) int64 { return t.MaxRSS }, "averss": func(t TaskUsage) int64 { return t.MaxRSS },
		"maxvmsize": func(t TaskUsage) int64 { return t.MaxVMSize }, "avevmsize": func(t TaskUsage) int64 { return t.MaxVMSize },
	}[strings.ToLower(name)]
	if f == nil {
		return "", false
	}
	if u.Empty() || !u.measured() {
		return "", true
	}
	if strings.HasPrefix(strings.ToLower(name), "ave") {
		return itoa64(u.ave(f)), true
	}
	return itoa64(f(u.maxBy(f))), true
}

// FormatMemKB prints a size in bytes as Slurm prints MaxRSS: kilobytes,
// further reduced to M, G, ... only while the value divides exactly
// (oracle: 426397696 bytes printed "416404K"); 0 prints "0".
func FormatMemKB(bytes int64) string {
	if bytes <= 0 {
		return "0"
	}
	v := bytes / 1024
	units := "KMGTP"
	i := 0
	for v >= 1024 && v%1024 == 0 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return strconv.FormatInt(v, 10) + string(units[i])
}

// FormatDiskMB prints bytes as sacct prints MaxDiskRead: megabytes with
// two decimals (oracle: 10467 bytes printed "0.01M").
func FormatDiskMB(bytes int64) string {
	return fmt.Sprintf("%.2fM", float64(bytes)/(1<<20))
}

// formatDiskSstat prints bytes as sstat prints MaxDiskRead: the number
// of bytes, reduced to K, M, ... only while it divides exactly (oracle:
// 10467 bytes printed "10467").
func formatDiskSstat(bytes int64) string {
	if bytes <= 0 {
		return "0"
	}
	units := []string{"", "K", "M", "G", "T", "P"}
	i := 0
	for bytes >= 1024 && bytes%1024 == 0 && i < len(units)-1 {
		bytes /= 1024
		i++
	}
	return strconv.FormatInt(bytes, 10) + units[i]
}

// FormatCPUTime prints microseconds of CPU time as sacct's TotalCPU:
// MM:SS.mmm under an hour, HH:MM:SS under a day, D-HH:MM:SS beyond
// (oracle: "00:04.833"); none at all is "00:00:00" (oracle: SystemCPU of
// a step that used none).
func FormatCPUTime(us int64) string {
	if us <= 0 {
		return "00:00:00"
	}
	ms := us / 1000
	s := ms / 1000
	switch {
	case s >= 86400:
		return fmt.Sprintf("%d-%02d:%02d:%02d", s/86400, s%86400/3600, s%3600/60, s%60)
	case s >= 3600:
		return fmt.Sprintf("%02d:%02d:%02d", s/3600, s%3600/60, s%60)
	}
	return fmt.Sprintf("%02d:%02d.%03d", s/60, s%60, ms%1000)
}

// FormatCPUSeconds prints microseconds as AveCPU and MinCPU: whole
// seconds, HH:MM:SS (oracle: "00:00:02"), D-HH:MM:SS beyond a day.
func FormatCPUSeconds(us int64) string {
	s := us / 1000000
	if s >= 86400 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", s/86400, s%86400/3600, s%3600/60, s%60)
	}
	return fmt.Sprintf("%02d:%02d:%02d", s/3600, s%3600/60, s%60)
}

// PathSstat takes an SstatRequest and answers an SstatResponse: the live
// usage of a running job's steps (sstat, Slurm's REQUEST_JOB_STEP_STAT).
const PathSstat = "/v1/ext/sstat"

// SstatRequest asks for the usage of job JobID's step Step ("" = every
// step that is not the batch or extern step, unless All).
type SstatRequest struct {
	JobID uint32 `json:"job_id"`
	Step  string `json:"step,omitempty"`
	All   bool   `json:"all,omitempty"`
}

// StepStat is one running step's usage.
type StepStat struct {
	JobID    uint32 `json:"job_id"`
	Step     string `json:"step"`
	NodeList string `json:"nodelist"`
	NTasks   int    `json:"ntasks"`
	Usage    Usage  `json:"usage"`
}

// SstatResponse lists the running steps asked for.
type SstatResponse struct {
	Steps []StepStat `json:"steps"`
}

// Sstat returns the live usage of a job's steps.
func (c *Client) Sstat(ctx context.Context, req SstatRequest) (SstatResponse, error) {
	var r SstatResponse
	return r, c.call(ctx, http.MethodPost, PathSstat, req, &r)
}

// PathAgentUsage answers GET with the live Usage of a job's step on the
// agent's node ({step} is "batch" or a step number).
const PathAgentUsage = "/agent/v1/jobs/{id}/usage/{step}"

// AgentUsagePath is PathAgentUsage for job's step.
func AgentUsagePath(job uint32, step string) string {
	return fmt.Sprintf("/agent/v1/jobs/%d/usage/%s", job, step)
}

// Usage asks an agent for a running step's usage on its node.
func (c *AgentClient) Usage(ctx context.Context, job uint32, step string) (Usage, error) {
	var u Usage
	return u, c.c.call(ctx, http.MethodGet, AgentUsagePath(job, step), nil, &u)
}

// tresMetric is one TRES of Slurm's usage TRES strings, in their order.
type tresMetric struct {
	name   string
	f      func(TaskUsage) int64
	format func(int64) string
}

var (
	tresIn = []tresMetric{
		{"cpu", TaskUsage.CPUUS, FormatCPUSeconds},
		{"energy", nil, nil},
		{"fs/disk", func(t TaskUsage) int64 { return t.DiskRead }, itoa64},
		{"mem", func(t TaskUsage) int64 { return t.MaxRSS }, FormatMemKB},
		{"pages", func(t TaskUsage) int64 { return t.Pages }, itoa64},
		{"vmem", func(t TaskUsage) int64 { return t.MaxVMSize }, FormatMemKB},
	}
	tresOut = []tresMetric{
		{"energy", nil, nil},
		{"fs/disk", func(t TaskUsage) int64 { return t.DiskWrite }, itoa64},
	}
)

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

// TRESUsage is a TRESUsageIn*/TRESUsageOut* field (kind: max, min, ave,
// tot; suffix "", node or task) as sacct prints it, or sstat (whose task
// ids of cpu print as a time): oracle "cpu=00:00:00,energy=0,fs/disk=
// 29331,mem=11344K,pages=0,vmem=219584K", "cpu=n1,energy=n1,...",
// "cpu=0,fs/disk=0,mem=0,pages=0,vmem=0", "energy=0,fs/disk=4788". A
// step no sample saw has only "energy=0" out and nothing in.
func (u *Usage) TRESUsage(out bool, kind, suffix string, sstat bool) string {
	metrics := tresIn
	if out {
		metrics = tresOut
	}
	if u.Empty() || !u.measured() {
		if out && suffix == "" {
			return "energy=0"
		}
		return ""
	}
	var parts []string
	for _, m := range metrics {
		if m.f == nil { // energy: not gathered
			switch suffix {
			case "":
				parts = append(parts, m.name+"=0")
			case "node":
				parts = append(parts, m.name+"="+u.Tasks[0].Node)
			}
			continue
		}
		var t TaskUsage
		switch kind {
		case "min":
			t = u.minBy(m.f)
		case "max":
			t = u.maxBy(m.f)
		}
		var v string
		switch {
		case suffix == "node":
			v = t.Node
		case suffix == "task" && sstat && m.name == "cpu":
			v = FormatCPUSeconds(int64(t.Task) * 1000000)
		case suffix == "task":
			v = strconv.Itoa(t.Task)
		case kind == "ave":
			v = m.format(u.ave(m.f))
		case kind == "tot":
			v = m.format(u.sum(m.f))
		default:
			v = m.format(m.f(t))
		}
		parts = append(parts, m.name+"="+v)
	}
	return strings.Join(parts, ",")
}
