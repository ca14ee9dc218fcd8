package noded

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Spool file names inside a job's directory.
const (
	recordFile = "record.json"
	pidsFile   = "pids.json"
	exitFile   = "exit.json"
	scriptFile = "slurm_script"
)

// jobRecord is the agent's durable record of one job: everything a
// restarted agent needs to carry on tracking it.
type jobRecord struct {
	Req api.LaunchRequest `json:"req"`
	// State is RUNNING, SUSPENDED or a final state.
	State string `json:"state"`
	// ShimPID/ShimTick and PID/PIDTick identify the supervisor and the
	// job's leader (whose pid is also the process group id) together with
	// their /proc start times, so a reused pid is never mistaken for them.
	// Resident is set when ShimPID is the node's resident supervisor
	// (serving every job), not a per-job shim of an older agent.
	Resident bool   `json:"resident,omitempty"`
	ShimPID  int    `json:"shim_pid,omitempty"`
	ShimTick uint64 `json:"shim_tick,omitempty"`
	PID      int    `json:"pid,omitempty"`
	PIDTick  uint64 `json:"pid_tick,omitempty"`

	Start time.Time `json:"start"`
	End   time.Time `json:"end,omitempty"`
	// SuspendedAt is set while suspended; Suspended is the total of the
	// finished suspensions. The time limit is extended by both.
	SuspendedAt time.Time     `json:"suspended_at,omitempty"`
	Suspended   time.Duration `json:"suspended,omitempty"`

	// TermState is the state the job ends in once its kill sequence (set
	// by a time limit or a terminate request) finishes; TermSent and
	// KillSent are when SIGTERM and SIGKILL were sent.
	TermState string        `json:"term_state,omitempty"`
	TermSent  time.Time     `json:"term_sent,omitempty"`
	KillSent  time.Time     `json:"kill_sent,omitempty"`
	KillWait  time.Duration `json:"kill_wait"`

	ExitCode string `json:"exit_code,omitempty"`
	Reason   string `json:"reason,omitempty"`
	StdOut   string `json:"stdout,omitempty"`
	StdErr   string `json:"stderr,omitempty"`
	Cgroup   string `json:"cgroup,omitempty"`
	// CgroupV1 are the job's cgroup v1 directories (memory, cpuset,
	// devices) and CPUIDs the CPUs it is bound to (cgroupv1.go).
	CgroupV1 []string `json:"cgroup_v1,omitempty"`
	CPUIDs   []int    `json:"cpu_ids,omitempty"`
	// Usage is the batch script's gathered usage (usage.go).
	Usage *api.TaskUsage `json:"usage,omitempty"`
	// Reported is set once the controller acknowledged the final state.
	Reported bool `json:"reported,omitempty"`
	// ScriptFailure is "prolog" or "epilog" when that node script failed.
	ScriptFailure string `json:"script_failure,omitempty"`
}

// status converts the record to its wire form.
func (r *jobRecord) status(now time.Time) api.JobStatus {
	susp := r.Suspended
	if !r.SuspendedAt.IsZero() {
		susp += now.Sub(r.SuspendedAt)
	}
	return api.JobStatus{
		JobID: r.Req.JobID, RestartCount: r.Req.RestartCount, State: r.State,
		PID: r.PID, StartTime: r.Start, EndTime: r.End, ExitCode: r.ExitCode,
		SuspendedSec: int64(susp / time.Second), Reason: r.Reason,
		StdOut: r.StdOut, StdErr: r.StdErr, TimeLimitSec: r.Req.TimeLimitSec, ScriptFailure: r.ScriptFailure,
		Usage: r.usage(),
	}
}

// usage is the batch script's usage as one task on this node.
func (r *jobRecord) usage() *api.Usage {
	if r.Usage == nil {
		return nil
	}
	return &api.Usage{Tasks: []api.TaskUsage{*r.Usage}}
}

// execSpec is what the shim's second stage needs to become the job.
type execSpec struct {
	Argv   []string `json:"argv"`
	Env    []string `json:"env"`
	Dir    string   `json:"dir"`
	StdIn  string   `json:"stdin"`
	StdOut string   `json:"stdout"`
	StdErr string   `json:"stderr"`
	Append bool     `json:"append,omitempty"`
	// Setuid asks the job to switch to UID/GID/Groups (root agents only).
	Setuid bool     `json:"setuid,omitempty"`
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
	Umask  int      `json:"umask"`
	// Cgroup is the job's cgroup v2 directory ("" = none).
	Cgroup string `json:"cgroup,omitempty"`
	// CgroupV1 are its cgroup v1 directories, joined right after the fork.
	CgroupV1 []string `json:"cgroup_v1,omitempty"`
	// Preamble is written to stdout before the job starts: the "print"
	// lines of its TaskProlog.
	Preamble string `json:"preamble,omitempty"`
}

// shimPids is written by the shim once the job started.
type shimPids struct {
	ShimPID  int    `json:"shim_pid"`
	ShimTick uint64 `json:"shim_tick"`
	PID      int    `json:"pid"`
	PIDTick  uint64 `json:"pid_tick"`
	Error    string `json:"error,omitempty"`
}

// exitRecord is written by the shim when the job's leader exited.
type exitRecord struct {
	// WaitStatus is the raw wait(2) status; -1 when the job never started.
	WaitStatus int       `json:"wait_status"`
	Time       time.Time `json:"time"`
	Error      string    `json:"error,omitempty"`
	// RU is the script's rusage from wait4 (nil: unknown).
	RU *rusageUsage `json:"ru,omitempty"`
	// recorded: this status is in the exit journal (or an old shim's
	// exit.json).
	recorded bool
}

// writeJSON writes v to path atomically (temp file, rename) so a crashed
// agent or shim never leaves a half-written record. There is no fsync: the
// records must survive the agent's process, not the machine (a rebooted
// node has no running jobs left to re-attach to, and the controller ends
// them as NODE_FAIL).
func writeJSON(path string, v any, perm os.FileMode) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// jobDir is the spool directory of one job of an older agent (per-job
// shims kept their pids and exit status there).
func jobDir(spool string, id uint32) string {
	return filepath.Join(spool, "jobs", itoa(id))
}
