package noded

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Errors returned by the agent's operations; the HTTP layer maps them to
// status codes.
var (
	// ErrUnknownJob (404) is Slurm's message for a job id it does not know.
	ErrUnknownJob = errors.New("Invalid job id specified")
	// ErrForbidden (403): the agent may not run the job (uid rule).
	ErrForbidden = errors.New("permission denied")
	// ErrConflict (409): the job is not in a state the request applies to.
	ErrConflict = errors.New("job state conflict")
	// ErrBadRequest (400): the request itself is invalid.
	ErrBadRequest = errors.New("invalid request")
)

// DefaultKillWait is slurm.conf's KillWait default: seconds between SIGTERM
// and SIGKILL.
const DefaultKillWait = 30 * time.Second

// Config configures a node agent.
type Config struct {
	// Name is the node's name (slurm.conf NodeName).
	Name string
	// ControllerURL is where the controller listens for agents; empty runs
	// the agent stand-alone (nothing is reported).
	ControllerURL string
	// Spool is the agent's state directory (slurm.conf SlurmdSpoolDir).
	Spool string
	// Key is the cluster key shared with the controller.
	Key []byte
	// Listen is the address the agent's API listens on ("" = no listener,
	// for agents driven through Handler in-process; ":6818" is slurmd's
	// port; "127.0.0.1:0" picks a free port).
	Listen string
	// Advertise is the URL the controller should use to reach the agent
	// (default: derived from the listener).
	Advertise string
	// CPUs and MemoryMB override the discovered values when > 0.
	CPUs     int
	MemoryMB int64
	// GPUs configures GPU discovery.
	GPUs GPUDiscovery
	// HeartbeatInterval is the default heartbeat period (10 s).
	HeartbeatInterval time.Duration
	// PollInterval is how often jobs are checked (exits, limits); 250 ms.
	PollInterval time.Duration
	// ShimCommand starts the supervisor; "run JOBDIR" is appended
	// (default: this executable with "noded-shim").
	ShimCommand []string
	// CgroupBase is the cgroup v2 directory for job cgroups ("" = the
	// cgroup2 mount's sluice/NAME_SPOOLHASH when running as root, unique per
	// agent so two agents never share a job's cgroup; "none" disables).
	CgroupBase string
	// Logger receives the agent's log (default slog.Default()).
	Logger *slog.Logger
	// HTTPClient is used to reach the controller (nil = default).
	HTTPClient *http.Client
	// Version is reported at registration.
	Version string

	// euid overrides the agent's effective uid in tests (nil = real).
	euid *int
	// plainHTTP keeps the agent off TLS (tests with a fake controller).
	plainHTTP bool
}

// Agent is a running node agent. Its job table is guarded by one mutex;
// every change to a job is written to the spool before the lock is
// released.
type Agent struct {
	cfg  Config
	log  *slog.Logger
	euid int
	cg   *cgroupManager
	info api.NodeInfo
	ctl  *api.ControllerClient
	// tls is the agent's certificate for agent traffic (nil: plain
	// HTTP, agenttls.go).
	tls  *api.AgentTLS
	shim []string

	mu        sync.Mutex
	jobs      map[uint32]*job
	launching map[uint32]bool
	// delivered holds the restart count of each job's last run whose end
	// the controller acknowledged: a late or retried launch of that run
	// must not start it again (see Launch).
	delivered map[uint32]int
	// early holds exit events that overtook their Launch call.
	early map[uint32]earlyExit
	// supPID/supTick identify the supervisor the agent is connected to
	// (0 when none): its jobs' exits arrive as events, the others' are
	// found by full checks of /proc and the spool.
	supPID  int
	supTick uint64
	// records is the journal of job records; exits follows the
	// supervisor's journal of exit statuses (guarded by mu).
	records *recordLog
	exits   *exitReader
	scripts *scriptStore
	// forgotten are the runs whose exit the supervisor may drop.
	forgotten []supJob

	// supFailure is why the supervisor could not be reached last time
	// (nil: it could): the heartbeat asks the controller to drain the
	// node with it (supdrain.go).
	supFailure atomic.Pointer[string]
	// fenceSec is the controller's fencing delay for the supervisor.
	fenceSec atomic.Int64
	// supMu guards sup, the connection to the node's resident supervisor.
	supMu sync.Mutex
	sup   *supClient
	// fullCheck asks the next poll to check every job on disk and in /proc.
	fullCheck atomic.Bool

	wake       chan struct{}
	reportWake chan struct{}
	// reregister asks the controller loop to register again now.
	reregister chan struct{}
	// bootID is the boot id of the controller the node registered with.
	bootID   atomic.Value
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	srv      *http.Server
	closed   atomic.Bool
	lastFull time.Time // monitor loop only
	// procTable is the last read of /proc for usage samples, at
	// procTableAt (guarded by mu; usage.go).
	procTable   map[int]procUsage
	procTableAt time.Time
}

type job struct {
	rec jobRecord
	// script is the batch script's file ("" for a command job).
	script string
	// dirty marks a record changed in memory only (the pid after a
	// launch); the next poll writes it.
	dirty bool
	// nextSample is when the usage is gathered next (usage.go).
	nextSample time.Time
	// taskEnv is the batch script's environment after its TaskProlog,
	// given to its TaskEpilog; epilogRunning holds the report of a
	// finished job back until its Epilog ran (prolog.go).
	taskEnv       []string
	epilogRunning bool
}

// New prepares an agent: it creates the spool, discovers the node's
// resources, and re-reads the records of jobs left by a previous agent on
// the same spool (re-attaching to the ones still running). It starts
// nothing; call Start.
func New(cfg Config) (*Agent, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("noded: a node name is required")
	}
	if cfg.Spool == "" {
		return nil, fmt.Errorf("noded: a spool directory is required")
	}
	if cfg.ControllerURL != "" && len(cfg.Key) == 0 {
		return nil, fmt.Errorf("noded: a cluster key is required to talk to the controller")
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 10 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 250 * time.Millisecond
	}
	a := &Agent{
		cfg: cfg, log: cfg.Logger, euid: os.Geteuid(),
		jobs: map[uint32]*job{}, launching: map[uint32]bool{}, delivered: map[uint32]int{}, early: map[uint32]earlyExit{},
		wake: make(chan struct{}, 1), reportWake: make(chan struct{}, 1), reregister: make(chan struct{}, 1),
	}
	if cfg.euid != nil {
		a.euid = *cfg.euid
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	a.log = a.log.With("node", cfg.Name)
	a.shim = cfg.ShimCommand
	if len(a.shim) == 0 {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("noded: find own executable for the job shim: %w", err)
		}
		a.shim = []string{self, ShimCommandName}
	}
	if err := os.MkdirAll(filepath.Join(cfg.Spool, scriptsDir), 0o711); err != nil {
		return nil, fmt.Errorf("noded: create spool: %w", err)
	}
	// Jobs running as other users must traverse the spool to reach their
	// script; listing it stays private.
	os.Chmod(cfg.Spool, 0o711)
	os.Chmod(filepath.Join(cfg.Spool, scriptsDir), 0o711)
	a.cg = a.setupCgroups()
	if err := a.discover(); err != nil {
		return nil, err
	}
	if err := a.loadJobs(); err != nil {
		return nil, err
	}
	if cfg.ControllerURL != "" {
		a.ctl = api.NewControllerClient(cfg.ControllerURL, cfg.Key, cfg.Name, cfg.HTTPClient)
	}
	return a, nil
}

func (a *Agent) setupCgroups() *cgroupManager {
	base := a.cfg.CgroupBase
	if base == "none" {
		return nil
	}
	leaf := cgroupLeaf(a.cfg.Name, a.cfg.Spool)
	if base == "" {
		if mount := cgroup2Mount(); mount != "" {
			base = filepath.Join(mount, "sluice", leaf)
		}
	}
	m := newCgroupManager(base)
	if m != nil {
		a.log.Info("using cgroup v2", "base", base, "limits", m.limits, "cpuset", m.cpuset)
	}
	if v1 := setupV1(leaf); len(v1) > 0 {
		if m == nil {
			m = &cgroupManager{}
		}
		m.v1 = v1
		a.log.Info("using cgroup v1 controllers", "dirs", v1)
	}
	if m != nil {
		m.host = allowedCPUs()
	}
	return m
}

// cgroupLeaf names an agent's cgroup directory after its node and spool.
func cgroupLeaf(node, spool string) string {
	abs, err := filepath.Abs(spool)
	if err != nil {
		abs = spool
	}
	sum := sha256.Sum256([]byte(abs))
	return fmt.Sprintf("%s_%x", node, sum[:4])
}

func (a *Agent) discover() error {
	res := api.NodeResources{CPUs: a.cfg.CPUs, RealMemoryMB: a.cfg.MemoryMB}
	if res.CPUs <= 0 {
		res.CPUs = hostCPUs()
	}
	if res.RealMemoryMB <= 0 {
		res.RealMemoryMB = hostMemoryMB("/")
	}
	gd := a.cfg.GPUs
	if gd.Node == "" {
		gd.Node = a.cfg.Name
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	gpus, err := gd.Discover(ctx)
	if err != nil {
		return fmt.Errorf("noded: discover GPUs: %w", err)
	}
	res.GPUs = gpus
	host, _ := os.Hostname()
	a.info = api.NodeInfo{Name: a.cfg.Name, Hostname: host, Version: a.cfg.Version, BootTime: time.Now(), Resources: res}
	a.info.Arch, a.info.OS = uname()
	return nil
}

// uname is the machine's architecture and operating system as slurmd
// reports them: "x86_64" and "Linux <release> <version>".
func uname() (arch, osName string) {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "", ""
	}
	return unix.ByteSliceToString(u.Machine[:]), unix.ByteSliceToString(u.Sysname[:]) + " " +
		unix.ByteSliceToString(u.Release[:]) + " " + unix.ByteSliceToString(u.Version[:])
}

// loadJobs re-reads the spool's journal of job records: the jobs left by
// a previous agent are tracked again (the finished ones until the
// controller acknowledges them).
func (a *Agent) loadJobs() error {
	log, recs, err := openRecordLog(a.cfg.Spool)
	if err != nil {
		return err
	}
	a.records, a.exits = log, newExitReader(a.cfg.Spool)
	a.scripts = newScriptStore(a.cfg.Spool)
	for id, rec := range recs {
		j := &job{rec: rec}
		if rec.Req.Script != "" {
			j.script = a.scripts.path(&rec.Req)
			a.scripts.adopt(j.script)
		}
		if rec.Reported {
			a.drop(j)
			continue
		}
		a.jobs[id] = j
		if !api.AgentJobFinal(rec.State) {
			a.cg.holdCPUs(id, rec.CPUIDs)
		}
		a.log.Info("re-attached job", "job", id, "state", rec.State, "pid", rec.PID)
	}
	return nil
}

// drop forgets a job: its record, its script and its exit status.
func (a *Agent) drop(j *job) {
	id := j.rec.Req.JobID
	if j.script != "" {
		a.scripts.release(j.script)
		j.script = ""
	}
	if err := a.records.remove(id); err != nil {
		a.log.Error("cannot write job record", "job", id, "err", err)
	}
	a.exits.forget(id, j.rec.Req.RestartCount)
	if j.rec.Resident {
		a.forgotten = append(a.forgotten, supJob{Job: id, Restart: j.rec.Req.RestartCount})
	}
}

// Info returns the node's description as sent at registration.
func (a *Agent) Info() api.NodeInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.info
}

// Start begins serving (when Listen is set), tracking jobs and talking to
// the controller, until ctx ends or Close is called. An agent that has
// not joined the cluster's TLS yet and cannot reach the controller tracks
// its jobs at once and serves and reports once it joined (agenttls.go),
// as slurmd runs and retries its registration while slurmctld is down.
func (a *Agent) Start(ctx context.Context) error {
	ctx, a.cancel = context.WithCancel(ctx)
	var ln net.Listener
	if a.cfg.Listen != "" {
		var err error
		if ln, err = net.Listen("tcp", a.cfg.Listen); err != nil {
			a.cancel()
			return fmt.Errorf("noded: listen: %w", err)
		}
	}
	joined, err := a.setupTLS(ctx) // agenttls.go
	if err != nil {
		a.cancel()
		if ln != nil {
			ln.Close()
		}
		return fmt.Errorf("noded: %w", err)
	}
	a.connectSupervisor()
	a.fullCheck.Store(true)
	a.wg.Add(1)
	go a.monitorLoop(ctx)
	if joined {
		a.serve(ctx, ln)
		return nil
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if a.join(ctx) {
			a.serve(ctx, ln)
		} else if ln != nil {
			ln.Close()
		}
	}()
	return nil
}

// serve opens the agent's API on ln (nil: none) and starts talking to
// the controller.
func (a *Agent) serve(ctx context.Context, ln net.Listener) {
	if ln != nil {
		scheme := "http://"
		if a.tls != nil {
			scheme = "https://"
			ln = tls.NewListener(ln, a.tls.ServerConfig())
		}
		srv := &http.Server{Handler: a.Handler(), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)} // refused TLS handshakes
		a.mu.Lock()
		if a.closed.Load() { // Close ran while the agent was joining
			a.mu.Unlock()
			ln.Close()
			return
		}
		a.srv = srv
		a.mu.Unlock()
		a.setAddr(scheme + ln.Addr().String())
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.log.Error("agent API stopped", "err", err)
			}
		}()
	}
	if a.cfg.Advertise != "" {
		if a.tls != nil {
			a.setAddr(httpsURL(a.cfg.Advertise))
		} else {
			a.setAddr(a.cfg.Advertise)
		}
	}
	if a.ctl != nil {
		a.wg.Add(2)
		go a.controllerLoop(ctx)
		go a.watchController(ctx)
	}
}

// Addr is the URL of the agent's API ("" before Start or without Listen).
func (a *Agent) Addr() string { return a.Info().Addr }

func (a *Agent) setAddr(u string) {
	a.mu.Lock()
	a.info.Addr = u
	a.mu.Unlock()
}

// Close stops the agent. Jobs keep running under the node's supervisor; a
// new agent on the same spool re-attaches to them.
func (a *Agent) Close() error {
	a.closed.Store(true)
	if a.cancel != nil {
		a.cancel()
	}
	a.mu.Lock()
	srv := a.srv
	a.mu.Unlock()
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		srv.Shutdown(ctx)
		cancel()
	}
	a.wg.Wait()
	a.supMu.Lock()
	if a.sup != nil {
		a.sup.close() // the supervisor stays while it has jobs
	}
	a.supMu.Unlock()
	if a.cg != nil {
		// Only succeeds when no job cgroup is left.
		if a.cg.base != "" {
			os.Remove(a.cg.base)
		}
		for _, d := range a.cg.v1 {
			os.Remove(d)
		}
	}
	a.mu.Lock()
	a.records.close()
	a.exits.close()
	a.mu.Unlock()
	return nil
}

func (a *Agent) nudge() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

func (a *Agent) monitorLoop(ctx context.Context) {
	defer a.wg.Done()
	t := time.NewTicker(a.cfg.PollInterval)
	defer t.Stop()
	for {
		a.poll(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-a.wake:
		}
	}
}

// fullCheckEvery bounds how long a job's end can go unnoticed if an
// event were missed: every job is then checked on disk and in /proc.
const fullCheckEvery = 2 * time.Second

// poll checks every job once: time limits and the SIGKILL step of kill
// sequences, and (in full checks) exits and lost processes.
func (a *Agent) poll(now time.Time) {
	full := a.fullCheck.Swap(false) || now.Sub(a.lastFull) >= fullCheckEvery
	if full {
		a.lastFull = now
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	finished := false
	for _, j := range a.jobs {
		if a.track(j, now, full) {
			finished = true
		}
	}
	if finished {
		select {
		case a.reportWake <- struct{}{}:
		default:
		}
	}
}

// Jobs returns the status of every job the agent holds, by job id.
func (a *Agent) Jobs() []api.JobStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	out := make([]api.JobStatus, 0, len(a.jobs))
	for _, j := range a.jobs {
		st := j.rec.status(now)
		if j.epilogRunning {
			// Not ended for the controller until the epilog ran, as a
			// COMPLETING job in Slurm.
			st.State = api.StateRunning
		}
		out = append(out, st)
	}
	sortStatuses(out)
	return out
}

// Job returns one job's status.
func (a *Agent) Job(id uint32) (api.JobStatus, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	j, ok := a.jobs[id]
	if !ok {
		return api.JobStatus{}, fmt.Errorf("job %d: %w", id, ErrUnknownJob)
	}
	return j.rec.status(time.Now()), nil
}

func (a *Agent) save(j *job) {
	j.dirty = false
	if err := a.records.put(&j.rec); err != nil {
		a.log.Error("cannot write job record", "job", j.rec.Req.JobID, "err", err)
	}
}
