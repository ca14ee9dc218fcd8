package api

// This file holds the controller <-> node agent protocol: the wire types
// (JSON over net/http), the cluster-key request signing both sides use, and
// the two small clients (the controller's AgentClient, the agent's
// ControllerClient). It plays the part of Slurm's slurmctld <-> slurmd RPCs
// (REQUEST_NODE_REGISTRATION_STATUS, REQUEST_BATCH_JOB_LAUNCH,
// REQUEST_SIGNAL_TASKS, REQUEST_SUSPEND_INT, REQUEST_TERMINATE_JOB, ...) with
// MUNGE replaced by an HMAC over a shared cluster key.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Paths served by the controller for node agents.
const (
	// PathAgentRegister receives a RegisterRequest (slurmd's registration).
	PathAgentRegister = "/agent/v1/register"
	// PathAgentHeartbeat receives a Heartbeat (slurmd's ping reply).
	PathAgentHeartbeat = "/agent/v1/heartbeat"
	// PathAgentEvents receives a JobEvents batch (job completions).
	PathAgentEvents = "/agent/v1/events"
	// PathAgentWatch answers a signed POST at once with a WatchResponse
	// (the controller's boot id) and then holds the connection open for as
	// long as the controller runs: its end tells the agent the controller
	// stopped, and the next watch whether a new one (another boot id)
	// needs the node's registration.
	PathAgentWatch = "/agent/v1/watch"
)

// Paths served by a node agent for the controller. {id} is the job id.
const (
	// PathAgentNode answers GET with the agent's NodeInfo.
	PathAgentNode = "/agent/v1/node"
	// PathAgentJobs answers GET with every JobStatus the agent holds and
	// takes POST of a LaunchRequest (slurmd's batch job launch).
	PathAgentJobs = "/agent/v1/jobs"
	// PathAgentJob answers GET with one JobStatus.
	PathAgentJob = "/agent/v1/jobs/{id}"
	// PathAgentSignal takes a SignalRequest (scancel --signal).
	PathAgentSignal = "/agent/v1/jobs/{id}/signal"
	// PathAgentSuspend suspends the job (scontrol suspend).
	PathAgentSuspend = "/agent/v1/jobs/{id}/suspend"
	// PathAgentResume resumes a suspended job (scontrol resume).
	PathAgentResume = "/agent/v1/jobs/{id}/resume"
	// PathAgentTerminate takes a TerminateRequest (scancel, requeue,
	// preemption, node failure handling).
	PathAgentTerminate = "/agent/v1/jobs/{id}/terminate"
	// PathAgentLaunches takes a LaunchBatch: several launches in one call
	// (a scheduling pass starting many jobs on one node), answered with a
	// LaunchBatchResponse.
	PathAgentLaunches = "/agent/v1/launches"
	// PathAgentTimeLimit takes a TimeLimitRequest: the running job's new
	// limit (scontrol update job TimeLimit=), which the agent enforces.
	PathAgentTimeLimit = "/agent/v1/jobs/{id}/timelimit"
)

// Job states the agent reports, Slurm's names.
const (
	// StateRunning: the job's processes run.
	StateRunning = "RUNNING"
	// StateSuspended: stopped by a suspend request.
	StateSuspended = "SUSPENDED"
	// StateCompleted: the batch script exited 0.
	StateCompleted = "COMPLETED"
	// StateFailed: non-zero exit, death by a signal, or a failed launch.
	StateFailed = "FAILED"
	// StateCancelled: ended by a terminate request (scancel).
	StateCancelled = "CANCELLED"
	// StateTimeout: ended by its time limit.
	StateTimeout = "TIMEOUT"
	// StateNodeFail: ended because its node failed.
	StateNodeFail = "NODE_FAIL"
	// StatePreempted: ended by preemption.
	StatePreempted = "PREEMPTED"
	// StateRequeued: ended to be queued again.
	StateRequeued = "REQUEUED"
	// StateOutOfMemory: a process was killed by the OOM killer.
	StateOutOfMemory = "OUT_OF_MEMORY"
)

// AgentJobFinal reports whether state is one a job ends in on the agent.
func AgentJobFinal(state string) bool {
	switch state {
	case StateRunning, StateSuspended, "":
		return false
	}
	return true
}

// GPU is one GPU found on a node (nvidia-smi, /dev/nvidia*, or gres.conf).
type GPU struct {
	// Index is the device minor number (the N of /dev/nvidiaN), what
	// CUDA_VISIBLE_DEVICES names when devices are not constrained.
	Index int `json:"index"`
	// Name is the product name ("NVIDIA H100 80GB HBM3"), if known.
	Name string `json:"name,omitempty"`
	// Type is the gres type ("a100", "h100"), if known.
	Type string `json:"type,omitempty"`
	// UUID is the GPU's UUID, if known.
	UUID string `json:"uuid,omitempty"`
	// MemoryMB is the device memory, if known.
	MemoryMB int64 `json:"memory_mb,omitempty"`
	// File is the device file (/dev/nvidia0).
	File string `json:"file,omitempty"`
}

// NodeResources is what a node agent discovered about its machine; the
// controller compares it with slurm.conf's NodeName= line as slurmctld does
// on registration (a node with fewer resources than configured is drained).
type NodeResources struct {
	// CPUs is the number of logical CPUs.
	CPUs int `json:"cpus"`
	// RealMemoryMB is the total memory in megabytes (slurmd -C RealMemory).
	RealMemoryMB int64 `json:"real_memory_mb"`
	// GPUs lists the GPUs in index order.
	GPUs []GPU `json:"gpus,omitempty"`
}

// NodeInfo describes a node agent: name, the URL the controller reaches it
// at, its resources and when it booted.
type NodeInfo struct {
	Name     string `json:"name"`
	Addr     string `json:"addr"`
	Hostname string `json:"hostname,omitempty"`
	Version  string `json:"version,omitempty"`
	// Arch and OS are the machine's uname (scontrol show node's Arch= and
	// OS=: "x86_64", "Linux 6.1.0 #1 SMP ...").
	Arch      string        `json:"arch,omitempty"`
	OS        string        `json:"os,omitempty"`
	BootTime  time.Time     `json:"boot_time"`
	Resources NodeResources `json:"resources"`
	// Load is the host's load when the agent registered (nil: unknown).
	Load *HostLoad `json:"load,omitempty"`
}

// RegisterRequest is sent by an agent when it starts (and again whenever the
// controller asks it to): its node info plus every job it holds, so a
// restarted controller can reconcile running jobs.
type RegisterRequest struct {
	Node NodeInfo    `json:"node"`
	Jobs []JobStatus `json:"jobs,omitempty"`
}

// RegisterResponse tells the agent how often to send heartbeats.
type RegisterResponse struct {
	// HeartbeatIntervalSec is the heartbeat period; 0 keeps the agent's
	// default.
	HeartbeatIntervalSec int `json:"heartbeat_interval_s,omitempty"`
	// BootID identifies the controller process the node registered with.
	BootID string `json:"boot_id,omitempty"`
	// FenceAfterSec is how long the node's job supervisor keeps running
	// jobs once no agent is connected (0: forever); shorter than
	// SlurmdTimeout, so the jobs are dead before the controller could
	// requeue them elsewhere.
	FenceAfterSec int `json:"fence_after_s,omitempty"`
}

// WatchResponse is the first (and only) line of a PathAgentWatch answer.
type WatchResponse struct {
	// BootID identifies the running controller; a value other than the
	// one the agent registered with means the controller restarted and
	// the node must register again (slurmd answering a new slurmctld's
	// node registration request).
	BootID string `json:"boot_id"`
}

// TimeLimitRequest sets a running job's time limit on its agent.
type TimeLimitRequest struct {
	// TimeLimitSec is the new limit (TimeInfinite = none), counted from
	// the job's start, suspended time not included.
	TimeLimitSec int64 `json:"time_limit_s"`
}

// Heartbeat is sent periodically by each agent; the controller marks a node
// DOWN when none arrives for SlurmdTimeout.
type Heartbeat struct {
	Node string      `json:"node"`
	Time time.Time   `json:"time"`
	Jobs []JobStatus `json:"jobs,omitempty"`
	// Load is the host's load and free memory now (nil: unknown).
	Load *HostLoad `json:"load,omitempty"`
	// Drain, when set, is why the node cannot run jobs (its agent
	// cannot reach its job supervisor): the controller drains it.
	Drain string `json:"drain,omitempty"`
}

// HostLoad is what a node's OS reports, as slurmd does for sinfo's
// CPU_LOAD and FREE_MEM and scontrol's CPULoad= and FreeMem=: the
// 1-minute load average and the free memory (MemFree, MB).
type HostLoad struct {
	CPULoad   float64 `json:"cpu_load"`
	FreeMemMB int64   `json:"free_mem_mb"`
}

// HeartbeatResponse asks the agent to register again when the controller
// does not know it (for instance after a controller restart).
type HeartbeatResponse struct {
	Reregister bool `json:"reregister,omitempty"`
}

// LaunchRequest asks an agent to start a job's batch script (or argv) on its
// node: slurmd's batch job launch message.
type LaunchRequest struct {
	JobID uint32 `json:"job_id"`
	// CPUsPerNode and TasksPerNode are the allocation's
	// SLURM_JOB_CPUS_PER_NODE and SLURM_TASKS_PER_NODE ("2(x3)"), which
	// MPI launchers (Open MPI's mpirun) read to place their ranks.
	CPUsPerNode  string `json:"cpus_per_node,omitempty"`
	TasksPerNode string `json:"tasks_per_node,omitempty"`
	// RestartCount is how many times the job was requeued; a launch with a
	// higher count replaces a finished record of the same job id.
	RestartCount int    `json:"restart_count,omitempty"`
	Name         string `json:"name,omitempty"`

	// Array fields are set for array tasks (ArrayJobID != 0).
	ArrayJobID     uint32 `json:"array_job_id,omitempty"`
	ArrayTaskID    uint32 `json:"array_task_id,omitempty"`
	ArrayTaskCount int    `json:"array_task_count,omitempty"`
	ArrayTaskMin   uint32 `json:"array_task_min,omitempty"`
	ArrayTaskMax   uint32 `json:"array_task_max,omitempty"`
	ArrayTaskStep  uint32 `json:"array_task_step,omitempty"`

	User  string `json:"user"`
	UID   uint32 `json:"uid"`
	GID   uint32 `json:"gid"`
	Group string `json:"group,omitempty"`

	// Script is the batch script's text; Argv runs a command directly
	// instead (srun-style). Exactly one must be set.
	Script string   `json:"script,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	// Args are the script's arguments (sbatch script.sh ARGS...).
	Args []string `json:"args,omitempty"`

	// WorkDir is --chdir (default SubmitDir).
	WorkDir    string `json:"work_dir,omitempty"`
	SubmitDir  string `json:"submit_dir,omitempty"`
	SubmitHost string `json:"submit_host,omitempty"`
	// StdOut and StdErr are the -o/-e filename patterns ("" = Slurm's
	// default slurm-%j.out, or slurm-%A_%a.out for arrays; stderr defaults
	// to stdout's file). StdIn is -i (default /dev/null).
	StdOut string `json:"stdout,omitempty"`
	StdErr string `json:"stderr,omitempty"`
	StdIn  string `json:"stdin,omitempty"`
	// OpenMode is --open-mode: "truncate" (default) or "append".
	OpenMode string `json:"open_mode,omitempty"`

	// Environment is the submission environment (KEY=VALUE), Export is
	// --export as written ("", ALL, NONE, ALL,VAR=x, VAR1,VAR2=y).
	Environment []string `json:"environment,omitempty"`
	Export      string   `json:"export,omitempty"`

	Partition   string `json:"partition,omitempty"`
	Account     string `json:"account,omitempty"`
	QOS         string `json:"qos,omitempty"`
	ClusterName string `json:"cluster_name,omitempty"`
	// NodeList is the job's whole allocation as a hostlist expression.
	NodeList string `json:"node_list,omitempty"`
	NNodes   int    `json:"nnodes,omitempty"`
	NTasks   int    `json:"ntasks,omitempty"`
	// CPUsPerTask is -c (0 = not given).
	CPUsPerTask int `json:"cpus_per_task,omitempty"`
	// CPUs is the number of CPUs allocated on this node.
	CPUs int `json:"cpus,omitempty"`
	// MemoryMB is the memory allocated on this node (0 = no limit).
	MemoryMB int64 `json:"memory_mb,omitempty"`
	// CPUIDs are the CPU ids allocated on this node, for cpuset
	// confinement (ConstrainCores); empty = the first CPUs.
	CPUIDs []int `json:"cpu_ids,omitempty"`
	// Constrain is cgroup.conf's confinement of the job on this node (nil:
	// the agent's defaults).
	Constrain *CgroupConstraints `json:"constrain,omitempty"`
	// AcctGatherFreqSec is JobAcctGatherFrequency's task period in
	// seconds (0 = the default 30, negative = no periodic sampling).
	AcctGatherFreqSec int `json:"acct_gather_freq_s,omitempty"`
	// GPUs are the indices of the GPUs allocated on this node.
	GPUs []int `json:"gpus,omitempty"`

	// TimeLimitSec is the time limit (0 or TimeInfinite = none).
	TimeLimitSec int64 `json:"time_limit_s,omitempty"`
	// KillWaitSec is slurm.conf KillWait: seconds between SIGTERM and
	// SIGKILL (0 = Slurm's default 30).
	KillWaitSec int64 `json:"kill_wait_s,omitempty"`
	// StartTime is when the controller started the job (SLURM_JOB_START_TIME).
	StartTime time.Time `json:"start_time,omitempty"`
	// JobToken is a token for the job's user that the agent puts in the
	// job's environment as JobTokenEnv: on a node host there is no
	// controller socket, and srun or scontrol inside the job reach the
	// controller over TCP with it, as Slurm's commands in a job reach
	// slurmctld over the network.
	JobToken string `json:"job_token,omitempty"`
	// Scripts are slurm.conf's node-side scripts (nil = none).
	Scripts *NodeScripts `json:"scripts,omitempty"`
}

// NodeScripts are the scripts slurm.conf has the node agent run around a
// job (Prolog, Epilog as root; TaskProlog, TaskEpilog as the job's user),
// sent with each launch because agents do not read slurm.conf.
type NodeScripts struct {
	Prolog     string `json:"prolog,omitempty"`
	Epilog     string `json:"epilog,omitempty"`
	TaskProlog string `json:"task_prolog,omitempty"`
	TaskEpilog string `json:"task_epilog,omitempty"`
	// TimeoutSec is PrologEpilogTimeout (0 = none).
	TimeoutSec int64 `json:"timeout_s,omitempty"`
	// CPUsPerNode is the job's SLURM_JOB_CPUS_PER_NODE ("2(x3),1").
	CPUsPerNode string `json:"cpus_per_node,omitempty"`
}

// JobTokenEnv is the job environment variable holding LaunchRequest's
// JobToken (not a SLURM_ name: Slurm sets no such variable, and a job's
// SLURM_* environment stays Slurm's).
const JobTokenEnv = "SLUICE_JOB_TOKEN"

// LaunchBatch is several launch requests for one agent.
type LaunchBatch struct {
	Jobs []LaunchRequest `json:"jobs"`
}

// LaunchResult is the outcome of one launch of a batch: the job's status,
// or the error (with the HTTP status a single launch would have had).
type LaunchResult struct {
	Status     JobStatus `json:"status"`
	HTTPStatus int       `json:"http_status,omitempty"`
	Error      string    `json:"error,omitempty"`
}

// LaunchBatchResponse holds one result per request, in order.
type LaunchBatchResponse struct {
	Results []LaunchResult `json:"results"`
}

// SignalRequest sends a signal to a job (scancel --signal). By default only
// the job's steps (srun) are signalled, not the batch script, as Slurm
// does; BatchOnly signals only the batch shell (scancel --batch), Full the
// batch script's process group and the steps (scancel --full).
type SignalRequest struct {
	Signal    int  `json:"signal"`
	BatchOnly bool `json:"batch_only,omitempty"`
	Full      bool `json:"full,omitempty"`
}

// TerminateRequest ends a job: SIGCONT, SIGTERM, then SIGKILL after
// KillWait, Slurm's job kill sequence. State is what the job ends in
// (CANCELLED by default; REQUEUED, PREEMPTED, NODE_FAIL, ...).
type TerminateRequest struct {
	State       string `json:"state,omitempty"`
	KillWaitSec int64  `json:"kill_wait_s,omitempty"`
	// RestartCount, when set, names the run to end: an agent running a
	// later run of the job (requeued and started here again before the
	// request arrived, as after a network cut) leaves it alone.
	RestartCount *int `json:"restart_count,omitempty"`
}

// JobStatus is the agent's view of one job.
type JobStatus struct {
	JobID        uint32    `json:"job_id"`
	RestartCount int       `json:"restart_count,omitempty"`
	State        string    `json:"state"`
	PID          int       `json:"pid,omitempty"`
	StartTime    time.Time `json:"start_time,omitempty"`
	EndTime      time.Time `json:"end_time,omitempty"`
	// ExitCode is Slurm's "code:signal" (set once the job ended).
	ExitCode string `json:"exit_code,omitempty"`
	// SuspendedSec is the total time spent suspended so far.
	SuspendedSec int64 `json:"suspended_s,omitempty"`
	// Reason explains a failure to launch or a lost job.
	Reason string `json:"reason,omitempty"`
	// ScriptFailure names the node script that failed on the job's node
	// ("prolog" or "epilog"): the controller drains the node, and requeues
	// the job after a failed prolog.
	ScriptFailure string `json:"script_failure,omitempty"`
	// StdOut and StdErr are the expanded output paths.
	StdOut string `json:"stdout,omitempty"`
	StdErr string `json:"stderr,omitempty"`
	// TimeLimitSec is the limit the agent enforces (TimeInfinite = none;
	// 0 from agents that do not report it).
	TimeLimitSec int64 `json:"time_limit_s,omitempty"`
	// Usage is the batch step's usage gathered so far (final once the
	// job ended); nil when nothing was gathered.
	Usage *Usage `json:"usage,omitempty"`
}

// JobEvent reports a change of a job's state (today: its end). Events are
// re-sent until the controller acknowledges them, so handling must be
// idempotent by (JobID, RestartCount, State).
type JobEvent struct {
	Node string    `json:"node"`
	Job  JobStatus `json:"job"`
}

// JobEvents is a batch of events posted to PathAgentEvents.
type JobEvents struct {
	Events []JobEvent `json:"events"`
}

// AgentError is the JSON body of every non-2xx answer of the protocol.
type AgentError struct {
	Status  int    `json:"-"`
	Message string `json:"error"`
}

// Error returns the message.
func (e *AgentError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status)
	}
	return e.Message
}

// ---- cluster key and signing ----

// ClusterKeyFile is the key's file name inside the state directory.
const ClusterKeyFile = "cluster.key"

// SignatureHeader carries the request signature:
// "v1 node=NAME,ts=UNIX,sig=HEX".
const SignatureHeader = "Sluice-Agent-Signature"

// MaxClockSkew is how far a signed request's timestamp may be from the
// receiver's clock, bounding how long a captured request can be replayed.
const MaxClockSkew = 5 * time.Minute

// ErrBadSignature is wrapped by every verification failure.
var ErrBadSignature = errors.New("invalid cluster key signature")

// LoadClusterKey reads a cluster key file (hex, as written by
// EnsureClusterKey). Like MUNGE's key, the file must not be readable by
// group or others.
func LoadClusterKey(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load cluster key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("load cluster key %q: permissions %v are too open, want 0600", path, st.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load cluster key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil || len(key) < 16 {
		return nil, fmt.Errorf("load cluster key %q: want at least 32 hex digits", path)
	}
	return key, nil
}

// EnsureClusterKey loads the key at path, creating a random 32-byte key
// (mode 0600) when the file does not exist.
func EnsureClusterKey(path string) ([]byte, error) {
	if _, err := os.Stat(path); err == nil {
		return LoadClusterKey(path)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("create cluster key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return LoadClusterKey(path)
		}
		return nil, fmt.Errorf("create cluster key: %w", err)
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("create cluster key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("create cluster key: %w", err)
	}
	return key, nil
}

// signature is the HMAC of a request: method, URI, sender, time, nonce
// and body.
func signature(key []byte, method, uri, node string, ts int64, nonce string, body []byte) string {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "v2\n%s\n%s\n%s\n%d\n%s\n%x", method, uri, node, ts, nonce, sum)
	return hex.EncodeToString(m.Sum(nil))
}

// SignRequest adds the signature header to req for body (which must be the
// request's exact body), identifying the sender as node ("ctld" for the
// controller). A random nonce makes each signed request usable once
// (RequireSignature refuses a nonce it has seen).
func SignRequest(req *http.Request, key []byte, node string, body []byte, now time.Time) {
	ts := now.Unix()
	nb := make([]byte, 12)
	_, _ = rand.Read(nb)
	nonce := hex.EncodeToString(nb)
	sig := signature(key, req.Method, req.URL.RequestURI(), node, ts, nonce, body)
	req.Header.Set(SignatureHeader, fmt.Sprintf("v2 node=%s,ts=%d,nonce=%s,sig=%s", node, ts, nonce, sig))
}

// VerifyRequest checks the signature header of r against body and returns
// the sender's node name. It does not look for replays (RequireSignature
// does).
func VerifyRequest(r *http.Request, key []byte, body []byte, now time.Time) (string, error) {
	node, _, _, err := verifySigned(r, key, body, now)
	return node, err
}

// verifySigned checks r's signature and returns its sender, nonce and time.
func verifySigned(r *http.Request, key []byte, body []byte, now time.Time) (node, nonce string, at time.Time, err error) {
	h := r.Header.Get(SignatureHeader)
	rest, ok := strings.CutPrefix(h, "v2 ")
	if !ok {
		return "", "", at, fmt.Errorf("%w: missing or unknown %s header (a v1 signature has no nonce: upgrade the sender)",
			ErrBadSignature, SignatureHeader)
	}
	var sig string
	var ts int64
	for _, kv := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "node":
			node = v
		case "ts":
			ts, _ = strconv.ParseInt(v, 10, 64)
		case "nonce":
			nonce = v
		case "sig":
			sig = v
		}
	}
	if node == "" || ts == 0 || sig == "" || len(nonce) < 16 {
		return "", "", at, fmt.Errorf("%w: malformed header", ErrBadSignature)
	}
	at = time.Unix(ts, 0)
	if d := now.Sub(at); d > MaxClockSkew || d < -MaxClockSkew {
		return "", "", at, fmt.Errorf("%w: timestamp off by %v (check clocks)", ErrBadSignature, d.Round(time.Second))
	}
	want := signature(key, r.Method, r.URL.RequestURI(), node, ts, nonce, body)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return "", "", at, fmt.Errorf("%w: signature mismatch", ErrBadSignature)
	}
	return node, nonce, at, nil
}

// nonceCache remembers the nonces of the signed requests accepted within
// the clock skew window: a request sent again (captured and replayed on
// the network) is refused. Older ones are refused by their time anyway.
type nonceCache struct {
	mu     sync.Mutex
	seen   map[string]time.Time
	pruned time.Time
}

// first reports whether node's nonce is new, and records it.
func (c *nonceCache) first(node, nonce string, at, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]time.Time{}
	}
	if now.Sub(c.pruned) > time.Minute {
		for k, t := range c.seen {
			if now.Sub(t) > MaxClockSkew+time.Minute {
				delete(c.seen, k)
			}
		}
		c.pruned = now
	}
	key := node + "/" + nonce
	if _, dup := c.seen[key]; dup {
		return false
	}
	c.seen[key] = at
	return true
}

type agentNodeKey struct{}

// AgentNode returns the verified sender set by RequireSignature.
func AgentNode(ctx context.Context) string {
	s, _ := ctx.Value(agentNodeKey{}).(string)
	return s
}

// maxAgentBody bounds request bodies (a batch script is at most a few MB in
// Slurm too).
const maxAgentBody = 16 << 20

// RequireSignature wraps next so that only requests signed with key reach
// it; the verified node name is in the request context (AgentNode). The
// body is buffered and handed on unchanged. now may be nil (time.Now).
func RequireSignature(key []byte, now func() time.Time, next http.Handler) http.Handler {
	if now == nil {
		now = time.Now
	}
	seen := &nonceCache{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAgentBody))
		if err != nil {
			WriteAgentError(w, http.StatusRequestEntityTooLarge, "read request: "+err.Error())
			return
		}
		t := now()
		node, nonce, at, err := verifySigned(r, key, body, t)
		if err == nil && !seen.first(node, nonce, at, t) {
			err = fmt.Errorf("%w: request replayed (nonce already used)", ErrBadSignature)
		}
		if err != nil {
			WriteAgentError(w, http.StatusUnauthorized, err.Error())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), agentNodeKey{}, node)))
	})
}

// WriteAgentError answers with status and {"error": msg}.
func WriteAgentError(w http.ResponseWriter, status int, msg string) {
	WriteAgentJSON(w, status, AgentError{Message: msg})
}

// WriteAgentJSON answers with status and v as JSON.
func WriteAgentJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ---- clients ----

// signedClient does signed JSON calls; both clients embed it.
type signedClient struct {
	base string
	key  []byte
	node string
	http *http.Client
	now  func() time.Time
}

func newSignedClient(base string, key []byte, node string, hc *http.Client) signedClient {
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return signedClient{base: strings.TrimRight(base, "/"), key: key, node: node, http: hc, now: time.Now}
}

func (c *signedClient) call(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	SignRequest(req, c.key, c.node, body, c.now())
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAgentBody))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		e := &AgentError{Status: resp.StatusCode}
		if json.Unmarshal(data, e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(data))
		}
		return e
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

func jobPath(pattern string, id uint32) string {
	return strings.Replace(pattern, "{id}", strconv.FormatUint(uint64(id), 10), 1)
}

// AgentClient is the controller's client for one node agent.
type AgentClient struct{ c signedClient }

// NewAgentClient returns a client for the agent at baseURL
// ("http://host:6818"), signing as "ctld". hc may be nil.
func NewAgentClient(baseURL string, key []byte, hc *http.Client) *AgentClient {
	return &AgentClient{c: newSignedClient(baseURL, key, "ctld", hc)}
}

// Node returns the agent's node info.
func (a *AgentClient) Node(ctx context.Context) (NodeInfo, error) {
	var n NodeInfo
	return n, a.c.call(ctx, http.MethodGet, PathAgentNode, nil, &n)
}

// Launch starts a job; launching a job id the agent already runs returns
// its status without starting it twice.
func (a *AgentClient) Launch(ctx context.Context, req LaunchRequest) (JobStatus, error) {
	var s JobStatus
	return s, a.c.call(ctx, http.MethodPost, PathAgentJobs, req, &s)
}

// LaunchBatch starts several jobs in one call; each result says how its
// launch went. An agent without the batch endpoint answers 404.
func (a *AgentClient) LaunchBatch(ctx context.Context, reqs []LaunchRequest) ([]LaunchResult, error) {
	var r LaunchBatchResponse
	if err := a.c.call(ctx, http.MethodPost, PathAgentLaunches, LaunchBatch{Jobs: reqs}, &r); err != nil {
		return nil, err
	}
	if len(r.Results) != len(reqs) {
		return nil, fmt.Errorf("launch batch: %d results for %d jobs", len(r.Results), len(reqs))
	}
	return r.Results, nil
}

// Jobs lists every job the agent holds.
func (a *AgentClient) Jobs(ctx context.Context) ([]JobStatus, error) {
	var s []JobStatus
	return s, a.c.call(ctx, http.MethodGet, PathAgentJobs, nil, &s)
}

// Job returns one job's status.
func (a *AgentClient) Job(ctx context.Context, id uint32) (JobStatus, error) {
	var s JobStatus
	return s, a.c.call(ctx, http.MethodGet, jobPath(PathAgentJob, id), nil, &s)
}

// Signal sends a signal to a job.
func (a *AgentClient) Signal(ctx context.Context, id uint32, req SignalRequest) (JobStatus, error) {
	var s JobStatus
	return s, a.c.call(ctx, http.MethodPost, jobPath(PathAgentSignal, id), req, &s)
}

// Suspend stops a job (SIGTSTP, SIGSTOP, cgroup freezer).
func (a *AgentClient) Suspend(ctx context.Context, id uint32) (JobStatus, error) {
	var s JobStatus
	return s, a.c.call(ctx, http.MethodPost, jobPath(PathAgentSuspend, id), struct{}{}, &s)
}

// Resume continues a suspended job.
func (a *AgentClient) Resume(ctx context.Context, id uint32) (JobStatus, error) {
	var s JobStatus
	return s, a.c.call(ctx, http.MethodPost, jobPath(PathAgentResume, id), struct{}{}, &s)
}

// Terminate starts a job's kill sequence; the final state arrives as a
// JobEvent.
func (a *AgentClient) Terminate(ctx context.Context, id uint32, req TerminateRequest) (JobStatus, error) {
	var s JobStatus
	return s, a.c.call(ctx, http.MethodPost, jobPath(PathAgentTerminate, id), req, &s)
}

// SetTimeLimit changes a running job's time limit.
func (a *AgentClient) SetTimeLimit(ctx context.Context, id uint32, req TimeLimitRequest) (JobStatus, error) {
	var s JobStatus
	return s, a.c.call(ctx, http.MethodPost, jobPath(PathAgentTimeLimit, id), req, &s)
}

// ControllerClient is a node agent's client for the controller.
type ControllerClient struct{ c signedClient }

// NewControllerClient returns a client for the controller at baseURL,
// signing as node. hc may be nil.
func NewControllerClient(baseURL string, key []byte, node string, hc *http.Client) *ControllerClient {
	return &ControllerClient{c: newSignedClient(baseURL, key, node, hc)}
}

// Register announces the node and its jobs.
func (c *ControllerClient) Register(ctx context.Context, req RegisterRequest) (RegisterResponse, error) {
	var r RegisterResponse
	return r, c.c.call(ctx, http.MethodPost, PathAgentRegister, req, &r)
}

// Heartbeat tells the controller the node is alive.
func (c *ControllerClient) Heartbeat(ctx context.Context, hb Heartbeat) (HeartbeatResponse, error) {
	var r HeartbeatResponse
	return r, c.c.call(ctx, http.MethodPost, PathAgentHeartbeat, hb, &r)
}

// ReportEvents delivers job events; a nil error acknowledges all of them.
func (c *ControllerClient) ReportEvents(ctx context.Context, ev JobEvents) error {
	return c.c.call(ctx, http.MethodPost, PathAgentEvents, ev, nil)
}

// Watch opens a PathAgentWatch stream and returns the controller's boot id
// and the stream, which ends when the controller stops (or after a few
// minutes); the caller reads it to its end and closes it. The stream is
// not bound by the client's request timeout.
func (c *ControllerClient) Watch(ctx context.Context) (string, io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.c.base+PathAgentWatch, http.NoBody)
	if err != nil {
		return "", nil, err
	}
	SignRequest(req, c.c.key, c.c.node, nil, c.c.now())
	hc := &http.Client{Transport: c.c.http.Transport}
	resp, err := hc.Do(req)
	if err != nil {
		return "", nil, err
	}
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return "", nil, &AgentError{Status: resp.StatusCode, Message: strings.TrimSpace(string(data))}
	}
	var w WatchResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&w); err != nil {
		resp.Body.Close()
		return "", nil, fmt.Errorf("watch: %w", err)
	}
	return w.BootID, resp.Body, nil
}

// decodeJSON reads r's body into v. Unknown fields are ignored so that a
// controller and agents one version apart still understand each other.
func decodeJSON(r *http.Request, v any) error {
	d := json.NewDecoder(io.LimitReader(r.Body, maxAgentBody))
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("decode request: %w", err)
	}
	return nil
}

// DecodeAgentRequest decodes a protocol request body into v (exported for
// the controller's and the agent's handlers).
func DecodeAgentRequest(r *http.Request, v any) error { return decodeJSON(r, v) }

// CgroupConstraints is how an agent confines a job on its node, from
// cgroup.conf (Slurm's task/cgroup): memory limited to MemLimitMB (the
// job's --mem or --mem-per-cpu on this node, scaled by AllowedRAMSpace,
// capped by MaxRAMPercent of the node, at least MinRAMSpace), tasks bound
// to the allocated CPUs, GPUs not allocated hidden.
type CgroupConstraints struct {
	// Plugin is CgroupPlugin: autodetect, cgroup/v1, cgroup/v2, disabled.
	Plugin  string `json:"plugin,omitempty"`
	Cores   bool   `json:"cores,omitempty"`
	RAM     bool   `json:"ram,omitempty"`
	Swap    bool   `json:"swap,omitempty"`
	Devices bool   `json:"devices,omitempty"`
	// MemLimitMB is the job's memory on this node (0 = none asked).
	MemLimitMB int64 `json:"mem_limit_mb,omitempty"`
	// AllowedRAMPercent, AllowedSwapPercent and MaxRAMPercent are
	// cgroup.conf's AllowedRAMSpace, AllowedSwapSpace and MaxRAMPercent;
	// MinRAMMB is MinRAMSpace.
	AllowedRAMPercent  float64 `json:"allowed_ram_pct,omitempty"`
	AllowedSwapPercent float64 `json:"allowed_swap_pct,omitempty"`
	MaxRAMPercent      float64 `json:"max_ram_pct,omitempty"`
	MinRAMMB           int64   `json:"min_ram_mb,omitempty"`
}

// RAMLimitBytes is the memory limit the constraints give on a node of
// nodeMB megabytes (0 = no limit), as task/cgroup computes it.
func (c *CgroupConstraints) RAMLimitBytes(nodeMB int64) int64 {
	if c == nil || !c.RAM || c.MemLimitMB <= 0 {
		return 0
	}
	allowed := c.AllowedRAMPercent
	if allowed <= 0 {
		allowed = 100
	}
	mb := float64(c.MemLimitMB) * allowed / 100
	if c.MaxRAMPercent > 0 && nodeMB > 0 {
		mb = min(mb, float64(nodeMB)*c.MaxRAMPercent/100)
	}
	mb = max(mb, float64(c.MinRAMMB))
	return int64(mb * (1 << 20))
}
