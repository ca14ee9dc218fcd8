package api

// This file holds the job step protocol: srun inside an allocation asks the
// controller for a step (PathStepLaunch); the controller picks the nodes and
// tasks and asks each node's agent to prepare its part (PathAgentSteps,
// cluster-key signed, as slurmctld's step credential reaches slurmd); srun
// then opens one I/O connection per node (PathAgentStepIO, an HTTP upgrade to
// a framed byte stream) carrying stdin, stdout, stderr, signals and exit
// statuses, the part of Slurm's srun <-> slurmstepd I/O protocol Sluice needs.
// The controller follows each node's part with a long poll
// (PathAgentStepWait) and records the step for sacct when all are done.
//
// The I/O connection is authorized by a step credential: the controller
// signs the one request "GET PathAgentStepIO" for that step with the cluster
// key and hands the signature to srun. It is valid for MaxClockSkew and an
// agent accepts one connection per step, so a copied credential is worthless
// and srun never sees the key itself.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Step paths. PathStepLaunch is served by the controller for clients; the
// PathAgentStep* paths by node agents ({job} and {step} are numbers).
const (
	// PathStepLaunch takes a StepLaunchRequest and answers a
	// StepLaunchResponse (the tasks are prepared on the nodes).
	PathStepLaunch = "/v1/steps/launch"
	// PathStepList answers GET with a StepsResponse: the running steps
	// (squeue -s).
	PathStepList = "/v1/steps"
	// PathAgentSteps takes an AgentStepLaunch from the controller.
	PathAgentSteps = "/agent/v1/steps"
	// PathAgentStepIO is srun's I/O connection (GET with Upgrade:
	// StepIOProtocol); the tasks start when it is made.
	PathAgentStepIO = "/agent/v1/steps/{job}/{step}/io"
	// PathAgentStepWait answers a StepNodeResult once the node's tasks are
	// done, or with Done false after at most ?wait=SECONDS.
	PathAgentStepWait = "/agent/v1/steps/{job}/{step}/wait"
	// PathAgentStepSignal takes a StepSignalRequest (job end, suspend).
	PathAgentStepSignal = "/agent/v1/steps/{job}/{step}/signal"
)

// StepIOProtocol is the Upgrade token of the step I/O connection.
const StepIOProtocol = "sluice-step/1"

// StepPath fills {job} and {step} of one of the PathAgentStep* patterns.
func StepPath(pattern string, job uint32, step int) string {
	p := strings.Replace(pattern, "{job}", strconv.FormatUint(uint64(job), 10), 1)
	return strings.Replace(p, "{step}", strconv.Itoa(step), 1)
}

// Input modes of srun --input, srun(1) "IO Redirection".
const (
	// StepInputAll broadcasts srun's stdin to every task (Slurm's default).
	StepInputAll = "all"
	// StepInputNone gives every task /dev/null.
	StepInputNone = "none"
)

// StepLaunchRequest is what srun asks of the controller: run Argv as a new
// step of job JobID.
type StepLaunchRequest struct {
	JobID uint32 `json:"job_id"`
	// Name is the step name (-J, default the command's base name).
	Name string   `json:"name,omitempty"`
	Argv []string `json:"argv"`
	// Cwd is the tasks' working directory (srun's, or --chdir).
	Cwd string `json:"cwd,omitempty"`
	// Env is srun's environment, propagated to the tasks (--export=ALL).
	Env []string `json:"env,omitempty"`
	// NTasks is -n (0: the job's task count, at least one per node).
	NTasks int `json:"ntasks,omitempty"`
	// NNodes is -N (0: all the job's nodes, or fewer when fewer tasks).
	NNodes int `json:"nnodes,omitempty"`
	// CPUsPerTask is -c (informational: SLURM_CPUS_PER_TASK).
	CPUsPerTask int `json:"cpus_per_task,omitempty"`
	// TimeLimitSec is the step's -t (0: only the job's limit applies).
	TimeLimitSec int64 `json:"time_limit_s,omitempty"`
	// Input is --input: StepInputAll (""), StepInputNone or a task id.
	Input string `json:"input,omitempty"`
	// MPI is --mpi ("" takes slurm.conf's MpiDefault): MPIPMI2 gives the
	// tasks a PMI connection, "none" none.
	MPI string `json:"mpi,omitempty"`
	// NodeList and Exclude are -w and -x: the step runs on those of the
	// allocation's nodes.
	NodeList string `json:"nodelist,omitempty"`
	Exclude  string `json:"exclude,omitempty"`
	// Distribution is -m/--distribution as given ("" : Slurm's default,
	// cyclic when there are no more tasks than nodes, else block).
	Distribution string `json:"distribution,omitempty"`
	// SrunHost and SrunPid name the srun process (scontrol show step's
	// SrunHost:Pid=).
	SrunHost string `json:"srun_host,omitempty"`
	SrunPid  int    `json:"srun_pid,omitempty"`
	// PlaneSize is N of -m plane=N.
	PlaneSize int `json:"plane_size,omitempty"`
	// Overcommit is -O: more tasks than the allocation's CPUs.
	Overcommit bool `json:"overcommit,omitempty"`
	// Exact is --exact: the step is given only the CPUs its tasks need
	// (SLURM_CPUS_ON_NODE).
	Exact bool `json:"exact,omitempty"`
	// CPUBind is --cpu-bind (task/affinity), nil: no binding.
	CPUBind *CPUBind `json:"cpu_bind,omitempty"`
	// MultiProg is --multi-prog's configuration file, parsed by srun.
	MultiProg *MultiProg `json:"multi_prog,omitempty"`
	// Pty is --pty: task 0 runs on a pseudo-terminal of its node, of
	// Rows x Cols (srun's terminal).
	Pty *StepPty `json:"pty,omitempty"`
}

// MPI plugin types (srun --mpi, MpiDefault): pmi2 serves PMI-2 and PMI-1
// clients as Slurm's mpi/pmi2 does; none leaves MPI to the program.
const (
	MPIPMI2 = "pmi2"
	MPINone = "none"
)

// StepsResponse lists the running steps, batch steps included.
type StepsResponse struct {
	Now   time.Time  `json:"now"`
	Steps []StepInfo `json:"steps"`
}

// StepInfo is one running step as squeue -s shows it.
type StepInfo struct {
	JobID uint32 `json:"job_id"`
	// JobIDStr is the job as squeue names it ("7", "4_2").
	JobIDStr string `json:"job_id_str"`
	// Step is "0", "1"... or "batch".
	Step         string    `json:"step"`
	Name         string    `json:"name"`
	Partition    string    `json:"partition"`
	User         string    `json:"user"`
	UID          uint32    `json:"uid"`
	Start        time.Time `json:"start"`
	TimeLimitSec int64     `json:"time_limit_s"`
	NodeList     string    `json:"nodelist"`
	NTasks       int       `json:"ntasks"`
	State        string    `json:"state"`
	// CPUs and MemMB are what the step holds of its job's allocation on
	// its nodes (0 for the batch step, as Slurm shows it); Dist is its task
	// distribution as scontrol prints it, SrunHost and SrunPid its srun.
	CPUs     int    `json:"cpus,omitempty"`
	MemMB    int64  `json:"mem_mb,omitempty"`
	Dist     string `json:"dist,omitempty"`
	SrunHost string `json:"srun_host,omitempty"`
	SrunPid  int    `json:"srun_pid,omitempty"`
}

// Steps lists the running steps.
func (c *Client) Steps(ctx context.Context) (StepsResponse, error) {
	var r StepsResponse
	return r, c.call(ctx, http.MethodGet, PathStepList, nil, &r)
}

// StepPty is srun --pty's terminal size.
type StepPty struct {
	Rows uint16 `json:"rows,omitempty"`
	Cols uint16 `json:"cols,omitempty"`
}

// StepLaunchResponse tells srun where its tasks are and how to reach them.
type StepLaunchResponse struct {
	JobID    uint32 `json:"job_id"`
	StepID   int    `json:"step_id"`
	NodeList string `json:"nodelist"`
	NTasks   int    `json:"ntasks"`
	// Nodes are the step's nodes in task order (block distribution).
	Nodes []StepNodeIO `json:"nodes"`
	// Warnings are printed by srun ("can't run 1 processes on 2 nodes").
	Warnings []string `json:"warnings,omitempty"`
	// CA is the cluster CA's certificate (PEM): srun and sattach accept
	// an agent's TLS certificate only when it chains to it and names the
	// node they meant to reach. It comes over the channel that
	// authenticated the user (the controller's socket or token).
	CA []byte `json:"ca,omitempty"`
}

// withCA gives each node the response's CA (DialStepIO reads it there).
func (r *StepLaunchResponse) withCA() {
	for i := range r.Nodes {
		r.Nodes[i].CA = r.CA
	}
}

// StepNodeIO is one node of a step as srun sees it.
type StepNodeIO struct {
	Node   string `json:"node"`
	NodeID int    `json:"node_id"`
	Tasks  []int  `json:"tasks"`
	// URL is the node agent's base URL.
	URL string `json:"url"`
	// Credential is the signature header value for the I/O request.
	Credential string `json:"credential"`
	// CA is StepLaunchResponse.CA, copied here by the client (https
	// URLs are refused without it).
	CA []byte `json:"-"`
}

// AgentStepLaunch asks an agent to prepare its part of a step; the tasks
// start when srun connects (or the part fails after AttachTimeoutSec).
type AgentStepLaunch struct {
	// Job carries the job's identity and context (user, ids, partition,
	// node list, ...); its Script and Environment are empty.
	Job LaunchRequest `json:"job"`
	// Node is the node this part is for (an agent refuses another's).
	Node   string   `json:"node"`
	StepID int      `json:"step_id"`
	Name   string   `json:"name,omitempty"`
	Argv   []string `json:"argv"`
	Cwd    string   `json:"cwd,omitempty"`
	Env    []string `json:"env,omitempty"`
	// NodeID is this node's index in the step (SLURM_NODEID).
	NodeID int `json:"node_id"`
	// Tasks are the global task ids run here (SLURM_PROCID).
	Tasks  []int `json:"tasks"`
	NTasks int   `json:"ntasks"`
	NNodes int   `json:"nnodes"`
	// NodeList is the step's node list (SLURM_STEP_NODELIST).
	NodeList string `json:"nodelist"`
	// TasksPerNode is SLURM_STEP_TASKS_PER_NODE ("2(x2),1").
	TasksPerNode string `json:"tasks_per_node,omitempty"`
	CPUsPerTask  int    `json:"cpus_per_task,omitempty"`
	// GPUs are the device indices of the step on this node.
	GPUs             []int  `json:"gpus,omitempty"`
	TimeLimitSec     int64  `json:"time_limit_s,omitempty"`
	KillWaitSec      int64  `json:"kill_wait_s,omitempty"`
	Input            string `json:"input,omitempty"`
	AttachTimeoutSec int    `json:"attach_timeout_s,omitempty"`
	// MPI is the step's MPI type (MPIPMI2 or ""); TaskCounts the tasks of
	// each of the step's nodes in order (PMI_process_mapping).
	MPI        string `json:"mpi,omitempty"`
	TaskCounts []int  `json:"task_counts,omitempty"`
	// TaskArgv is each task's command under --multi-prog (parallel to
	// Tasks); nil: every task runs Argv.
	TaskArgv [][]string `json:"task_argv,omitempty"`
	// Distribution is SLURM_DISTRIBUTION (block, cyclic, plane, ...).
	Distribution string `json:"distribution,omitempty"`
	// StepCPUs is the step's CPUs on this node (SLURM_CPUS_ON_NODE under
	// --exact; 0: the job's).
	StepCPUs int      `json:"step_cpus,omitempty"`
	CPUBind  *CPUBind `json:"cpu_bind,omitempty"`
	// Pty is srun --pty: task 0 (on the step's first node) runs on a
	// pseudo-terminal.
	Pty *StepPty `json:"pty,omitempty"`
}

// StepPMIFence is a PMI fence's frame payload: agent to srun, the node's
// pairs put since the previous fence; srun to agents, once every node has
// sent its part, every pair put so far.
type StepPMIFence struct {
	Seq   int               `json:"seq"`
	Pairs map[string]string `json:"pairs"`
}

// StepTaskExit is how one task ended.
type StepTaskExit struct {
	Task int `json:"task"`
	// ExitCode is Slurm's "code:signal".
	ExitCode string `json:"exit_code"`
}

// StepNodeResult is a node's part of a step: Done once every task there
// ended, with Slurm's step state on that node.
type StepNodeResult struct {
	Node   string         `json:"node"`
	JobID  uint32         `json:"job_id"`
	StepID int            `json:"step_id"`
	Done   bool           `json:"done"`
	State  string         `json:"state,omitempty"`
	Tasks  []StepTaskExit `json:"tasks,omitempty"`
	Reason string         `json:"reason,omitempty"`
	Start  time.Time      `json:"start,omitempty"`
	End    time.Time      `json:"end,omitempty"`
	// Usage is the node's tasks' usage (final once Done).
	Usage *Usage `json:"usage,omitempty"`
}

// StepSignalRequest signals a step's tasks; Kill starts the kill sequence
// instead (SIGCONT, SIGTERM, SIGKILL after KillWait) and the node's part
// ends in State (CANCELLED by default).
type StepSignalRequest struct {
	Signal int    `json:"signal,omitempty"`
	Kill   bool   `json:"kill,omitempty"`
	State  string `json:"state,omitempty"`
	// Message ends the line srun shows for a kill, slurmstepd's
	// "*** STEP 12.0 ON node1 CANCELLED AT 2026-01-01T10:00:00<Message> ***"
	// (" DUE TO TIME LIMIT"); "-" shows no line.
	Message string `json:"message,omitempty"`
}

// ---- step credential ----

// StepCredentialSender is the sender name inside a step I/O credential.
const StepCredentialSender = "srun"

// SignStepIO returns the credential for srun's I/O connection to a step's
// part on one agent: the cluster-key signature of that single GET.
func SignStepIO(key []byte, job uint32, step int, now time.Time) string {
	req, _ := http.NewRequest(http.MethodGet, "http://agent"+StepPath(PathAgentStepIO, job, step), nil)
	SignRequest(req, key, StepCredentialSender, nil, now)
	return req.Header.Get(SignatureHeader)
}

// ---- framed I/O stream ----

// Frame kinds of the step I/O stream. Agent to srun: Stdout, Stderr, Exit
// (a StepTaskExit), Done (the StepNodeResult, last). srun to agent: Stdin,
// StdinEOF, Signal (decimal number), Kill. Both ways: PMIFence (a
// StepPMIFence: a node's part, then the whole).
const (
	StepFrameStdout   byte = 1
	StepFrameStderr   byte = 2
	StepFrameExit     byte = 3
	StepFrameDone     byte = 4
	StepFrameStdin    byte = 5
	StepFrameStdinEOF byte = 6
	StepFrameSignal   byte = 7
	StepFrameKill     byte = 8
	StepFramePMIFence byte = 9
)

// StepAllTasks addresses every task of the node in a Stdin frame.
const StepAllTasks = ^uint32(0)

// MaxStepFrame bounds a frame's payload.
const MaxStepFrame = 1 << 20

// ErrStepFrame is wrapped by every malformed frame.
var ErrStepFrame = errors.New("malformed step I/O frame")

const stepFrameHeader = 9

// WriteStepFrame writes one frame (kind, task, payload) in a single Write,
// so that writers sharing a connection under a mutex never interleave.
func WriteStepFrame(w io.Writer, kind byte, task uint32, p []byte) error {
	if len(p) > MaxStepFrame {
		return fmt.Errorf("%w: payload of %d bytes", ErrStepFrame, len(p))
	}
	buf := make([]byte, stepFrameHeader+len(p))
	buf[0] = kind
	binary.BigEndian.PutUint32(buf[1:5], task)
	binary.BigEndian.PutUint32(buf[5:9], uint32(len(p)))
	copy(buf[stepFrameHeader:], p)
	_, err := w.Write(buf)
	return err
}

// ReadStepFrame reads one frame; io.EOF means the stream ended cleanly
// between frames.
func ReadStepFrame(r io.Reader) (kind byte, task uint32, p []byte, err error) {
	var h [stepFrameHeader]byte
	if _, err = io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: truncated header", ErrStepFrame)
		}
		return 0, 0, nil, err
	}
	kind, task = h[0], binary.BigEndian.Uint32(h[1:5])
	n := binary.BigEndian.Uint32(h[5:9])
	if kind == 0 || kind > StepFramePMIFence || n > MaxStepFrame {
		return 0, 0, nil, fmt.Errorf("%w: kind %d, length %d", ErrStepFrame, kind, n)
	}
	p = make([]byte, n)
	if _, err = io.ReadFull(r, p); err != nil {
		return 0, 0, nil, fmt.Errorf("%w: truncated payload: %v", ErrStepFrame, err)
	}
	return kind, task, p, nil
}

// ---- clients ----

// StepLaunch asks the controller for a step (srun inside an allocation).
func (c *Client) StepLaunch(ctx context.Context, req StepLaunchRequest) (StepLaunchResponse, error) {
	var r StepLaunchResponse
	err := c.call(ctx, http.MethodPost, PathStepLaunch, req, &r)
	r.withCA()
	return r, err
}

// LaunchStep prepares a node's part of a step.
func (a *AgentClient) LaunchStep(ctx context.Context, req AgentStepLaunch) (StepNodeResult, error) {
	var r StepNodeResult
	return r, a.c.call(ctx, http.MethodPost, PathAgentSteps, req, &r)
}

// WaitStep waits at most wait for a node's part of a step to end.
func (a *AgentClient) WaitStep(ctx context.Context, job uint32, step int, wait time.Duration) (StepNodeResult, error) {
	var r StepNodeResult
	path := StepPath(PathAgentStepWait, job, step) + "?wait=" + strconv.Itoa(int(wait/time.Second))
	return r, a.c.call(ctx, http.MethodGet, path, nil, &r)
}

// SignalStep signals (or kills) a node's part of a step.
func (a *AgentClient) SignalStep(ctx context.Context, job uint32, step int, req StepSignalRequest) (StepNodeResult, error) {
	var r StepNodeResult
	return r, a.c.call(ctx, http.MethodPost, StepPath(PathAgentStepSignal, job, step), req, &r)
}

// DialStepIO opens srun's I/O connection to one node of a step; the
// returned stream carries frames both ways. The stream outlives no context:
// closing it is the caller's business.
func DialStepIO(n StepNodeIO, job uint32, step int, timeout time.Duration) (io.ReadWriteCloser, error) {
	return dialStepStream(n, StepPath(PathAgentStepIO, job, step), timeout, "step I/O")
}

// dialStepStream opens an upgraded stream to path on node n's agent with
// n's credential (the step I/O and sattach connections).
func dialStepStream(n StepNodeIO, path string, timeout time.Duration, what string) (io.ReadWriteCloser, error) {
	url := strings.TrimRight(n.URL, "/") + path
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set(SignatureHeader, n.Credential)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", StepIOProtocol)
	// A transport of its own: an upgraded connection never returns to a
	// pool, and no client timeout may cut a long step's stream.
	tr := &http.Transport{Proxy: nil, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: timeout}).DialContext, ResponseHeaderTimeout: timeout, TLSHandshakeTimeout: timeout}
	if strings.HasPrefix(url, "https://") {
		// srun has no certificate: the agent is checked, the step
		// credential tells the agent who srun is.
		pool, err := CAPool(n.CA)
		if err != nil {
			return nil, fmt.Errorf("%s to %s: %w", what, n.Node, err)
		}
		tr.TLSClientConfig = PeerTLSConfig(pool, n.Node)
	}
	hc := &http.Client{Transport: tr}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		e := &AgentError{Status: resp.StatusCode}
		if err := json.Unmarshal(data, e); err != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(data))
		}
		return nil, e
	}
	rw, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: the agent's answer is not a stream", what)
	}
	return rw, nil
}
