package api

// This file holds the wire types of the accounting and statistics side of
// the client API: sacct and sreport (job accounting records), sdiag
// (scheduler statistics), sprio and sshare (rendered by the controller
// from its live priority state), sacctmgr through the controller, and job
// steps (srun inside an allocation). They play the part of Slurm's
// slurmdbd job queries, REQUEST_STATS_INFO, REQUEST_PRIORITY_FACTORS,
// REQUEST_SHARE_INFO and the step RPCs.

import (
	"context"
	"net/http"
	"time"
)

// Paths of the accounting/statistics API.
const (
	// PathAccounting answers GET with an AcctResponse: every accounting
	// record the caller may see (own jobs; all jobs for an admin).
	PathAccounting = "/v1/ext/accounting"
	// PathSdiag answers GET with an SdiagResponse; POST resets the
	// counters (sdiag -r, admins only).
	PathSdiag = "/v1/ext/sdiag"
	// PathSprio takes a SprioRequest and answers a TextResponse.
	PathSprio = "/v1/ext/sprio"
	// PathSshare takes an SshareRequest and answers a TextResponse.
	PathSshare = "/v1/ext/sshare"
	// PathSacctmgr takes a SacctmgrRequest and answers a SacctmgrResponse.
	PathSacctmgr = "/v1/ext/sacctmgr"
	// PathSteps takes a StepRequest (begin or end a step) and answers a
	// StepResponse.
	PathSteps = "/v1/ext/steps"
)

// AcctRecord is one accounting record: one run of a job (a requeued job
// has one per run) or one step of it.
type AcctRecord struct {
	JobID       uint32 `json:"job_id"`
	Restart     int    `json:"restart"`
	ArrayJobID  uint32 `json:"array_job_id,omitempty"`
	ArrayTaskID int32  `json:"array_task_id"`
	// Step is "" for the job's own record, else the step name ("batch",
	// "0", "1", ...).
	Step      string    `json:"step,omitempty"`
	Name      string    `json:"name"`
	User      string    `json:"user"`
	UID       uint32    `json:"uid"`
	GID       uint32    `json:"gid"`
	Account   string    `json:"account"`
	QOS       string    `json:"qos"`
	Partition string    `json:"partition"`
	Submit    time.Time `json:"submit"`
	Eligible  time.Time `json:"eligible,omitempty"`
	Start     time.Time `json:"start,omitempty"`
	End       time.Time `json:"end,omitempty"`
	State     string    `json:"state"`
	ExitCode  string    `json:"exit_code"`
	NodeList  string    `json:"nodelist,omitempty"`
	AllocTRES string    `json:"alloc_tres,omitempty"`
	ReqTRES   string    `json:"req_tres,omitempty"`
	// TimeLimitSec is the limit in seconds, TimeInfinite for UNLIMITED,
	// TimePartitionLimit for a run not started without --time.
	TimeLimitSec int64  `json:"time_limit_s"`
	WorkDir      string `json:"work_dir,omitempty"`
	Reservation  string `json:"reservation,omitempty"`
	// SuspendedSec is the time the run spent suspended (sacct's Suspended;
	// Elapsed excludes it).
	SuspendedSec int64 `json:"suspended_s,omitempty"`
	// NTasks is a step's task count (sacct's NTasks); 0 on a job's record.
	NTasks int `json:"ntasks,omitempty"`
	// Usage is a step's gathered usage; on a job's record, the tasks of
	// all its steps (sacct prints only their CPU times there).
	Usage *Usage `json:"usage,omitempty"`
}

// AcctResponse lists accounting records in job id, run, step order.
type AcctResponse struct {
	Now     time.Time    `json:"now"`
	Cluster string       `json:"cluster"`
	Admin   bool         `json:"admin"`
	Records []AcctRecord `json:"records"`
	// ClusterCPUs and Nodes describe the cluster (sreport utilization).
	ClusterCPUs int64 `json:"cluster_cpus"`
	// Down are node-down intervals in CPU-seconds accounting (sreport).
	DownCPUSeconds int64 `json:"down_cpu_s,omitempty"`
	// Registered is when the cluster began: sreport reports nothing
	// before it.
	Registered time.Time `json:"registered,omitzero"`
}

// SdiagResponse is the controller's scheduler statistics (sdiag).
type SdiagResponse struct {
	Now           time.Time `json:"now"`
	StartTime     time.Time `json:"start_time"`
	ResetTime     time.Time `json:"reset_time"`
	ServerThreads int       `json:"server_threads"`
	// StateSave says why state save is failing ("" while it works): a
	// Sluice addition, printed only when set.
	StateSave     string `json:"state_save,omitempty"`
	AgentQueue    int    `json:"agent_queue"`
	JobsSubmitted int    `json:"jobs_submitted"`
	JobsStarted   int    `json:"jobs_started"`
	JobsCompleted int    `json:"jobs_completed"`
	JobsCanceled  int    `json:"jobs_canceled"`
	JobsFailed    int    `json:"jobs_failed"`
	JobsPending   int    `json:"jobs_pending"`
	JobsRunning   int    `json:"jobs_running"`

	// Main scheduler (durations in microseconds).
	Cycles       int   `json:"cycles"`
	LastCycleUS  int64 `json:"last_cycle_us"`
	MaxCycleUS   int64 `json:"max_cycle_us"`
	TotalCycleUS int64 `json:"total_cycle_us"`
	TotalDepth   int64 `json:"total_depth"`
	LastQueueLen int   `json:"last_queue_len"`
	CyclesPerMin int64 `json:"cycles_per_minute"`

	// Backfill.
	BfTotalJobs      int       `json:"bf_total_jobs"`
	BfJobsSinceReset int       `json:"bf_jobs_since_reset"`
	BfCycles         int       `json:"bf_cycles"`
	BfLastCycleWhen  time.Time `json:"bf_last_cycle_when,omitempty"`
	BfLastCycleUS    int64     `json:"bf_last_cycle_us"`
	BfMaxCycleUS     int64     `json:"bf_max_cycle_us"`
	BfTotalCycleUS   int64     `json:"bf_total_cycle_us"`
	BfLastDepth      int       `json:"bf_last_depth"`
	BfTotalDepth     int64     `json:"bf_total_depth"`
	BfLastQueueLen   int       `json:"bf_last_queue_len"`
	BfTotalQueueLen  int64     `json:"bf_total_queue_len"`

	// RPCTypes and RPCUsers count the calls served since the controller
	// started or sdiag -r: by message type (ID is Slurm's message type
	// number, 0 for Sluice's own calls) and by user (ID is the uid).
	RPCTypes []RPCStat `json:"rpc_types,omitempty"`
	RPCUsers []RPCStat `json:"rpc_users,omitempty"`
}

// RPCStat is one row of sdiag's RPC tables.
type RPCStat struct {
	Name    string `json:"name"`
	ID      uint32 `json:"id"`
	Count   int64  `json:"count"`
	TotalUS int64  `json:"total_time_us"`
}

// SprioRequest carries sprio's options.
type SprioRequest struct {
	Long       bool     `json:"long,omitempty"`
	Norm       bool     `json:"norm,omitempty"`
	Weights    bool     `json:"weights,omitempty"`
	NoHeader   bool     `json:"no_header,omitempty"`
	Format     string   `json:"format,omitempty"`
	Jobs       []uint32 `json:"jobs,omitempty"`
	Users      []string `json:"users,omitempty"`
	Partitions []string `json:"partitions,omitempty"`
	// Sort is -S (the sort list, "u,-y").
	Sort string `json:"sort,omitempty"`
}

// SshareRequest carries sshare's options.
type SshareRequest struct {
	All       bool     `json:"all,omitempty"`
	Long      bool     `json:"long,omitempty"`
	UsersOnly bool     `json:"users_only,omitempty"`
	NoHeader  bool     `json:"no_header,omitempty"`
	Partition bool     `json:"partition,omitempty"`
	Parsable  bool     `json:"parsable,omitempty"`
	Parsable2 bool     `json:"parsable2,omitempty"`
	Accounts  []string `json:"accounts,omitempty"`
	Users     []string `json:"users,omitempty"`
	Format    []string `json:"format,omitempty"`
}

// TextResponse is output the controller rendered (sprio, sshare).
type TextResponse struct {
	Text string `json:"text"`
}

// SacctmgrRequest is one sacctmgr command line (options included).
type SacctmgrRequest struct {
	Args []string `json:"args"`
	// Files carries the client's file for `load FILE` (name as written).
	Files map[string][]byte `json:"files,omitempty"`
}

// SacctmgrResponse is what sacctmgr prints.
type SacctmgrResponse struct {
	Out      string   `json:"out"`
	Warnings []string `json:"warnings,omitempty"`
	// Files are what `dump ... file=NAME` wrote, for the client to save.
	Files map[string][]byte `json:"files,omitempty"`
}

// Step operations (StepRequest.Op).
const (
	StepBegin = "begin"
	StepEnd   = "end"
)

// StepRequest begins or ends a job step (srun inside an allocation).
type StepRequest struct {
	Op       string `json:"op"`
	JobID    uint32 `json:"job_id"`
	StepID   int    `json:"step_id,omitempty"`
	Name     string `json:"name,omitempty"`
	NTasks   int    `json:"ntasks,omitempty"`
	ExitCode string `json:"exit_code,omitempty"`
	State    string `json:"state,omitempty"`
}

// StepResponse answers a StepRequest.
type StepResponse struct {
	JobID    uint32 `json:"job_id"`
	StepID   int    `json:"step_id"`
	NodeList string `json:"nodelist"`
}

// Accounting returns the accounting records the caller may see.
func (c *Client) Accounting(ctx context.Context) (AcctResponse, error) {
	var r AcctResponse
	return r, c.call(ctx, http.MethodGet, PathAccounting, nil, &r)
}

// Sdiag returns the scheduler statistics.
func (c *Client) Sdiag(ctx context.Context) (SdiagResponse, error) {
	var r SdiagResponse
	return r, c.call(ctx, http.MethodGet, PathSdiag, nil, &r)
}

// SdiagReset resets the statistics (sdiag -r).
func (c *Client) SdiagReset(ctx context.Context) error {
	return c.call(ctx, http.MethodPost, PathSdiag, struct{}{}, nil)
}

// Sprio renders sprio's output on the controller.
func (c *Client) Sprio(ctx context.Context, req SprioRequest) (string, error) {
	var r TextResponse
	err := c.call(ctx, http.MethodPost, PathSprio, req, &r)
	return r.Text, err
}

// Sshare renders sshare's output on the controller.
func (c *Client) Sshare(ctx context.Context, req SshareRequest) (string, error) {
	var r TextResponse
	err := c.call(ctx, http.MethodPost, PathSshare, req, &r)
	return r.Text, err
}

// Sacctmgr runs a sacctmgr command on the controller.
func (c *Client) Sacctmgr(ctx context.Context, req SacctmgrRequest) (SacctmgrResponse, error) {
	var r SacctmgrResponse
	return r, c.call(ctx, http.MethodPost, PathSacctmgr, req, &r)
}

// Step begins or ends a job step.
func (c *Client) Step(ctx context.Context, req StepRequest) (StepResponse, error) {
	var r StepResponse
	return r, c.call(ctx, http.MethodPost, PathSteps, req, &r)
}
