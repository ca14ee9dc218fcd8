package ctld

import (
	"context"
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

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// Options configures a controller.
type Options struct {
	// Conf is the parsed slurm.conf (required).
	Conf *conf.Config
	// StateDir is StateSaveLocation (default Conf.StateSaveLocation): the
	// socket, the keys and the SQLite store live there.
	StateDir string
	// Store is the job store; nil opens the one slurm.conf names
	// (SQLite StateDir/ctld.db, or the PostgreSQL AccountingStorageLoc).
	Store Store
	// Accounting is the accounting database; nil runs without accounting
	// (every job is accepted in QOS normal, no limits).
	Accounting acct.Store
	// Socket is the Unix socket path (default StateDir/sluice.sock).
	Socket string
	// Listen is the TCP address for agents and remote clients (default
	// ":SlurmctldPort"; "none" disables it).
	Listen string
	// Logger receives the controller's log (default slog.Default()).
	Logger *slog.Logger
	// LogLevel, when set, is Logger's level, which scontrol setdebug
	// changes.
	LogLevel *slog.LevelVar
	// Now is the clock (default time.Now).
	Now func() time.Time
	// TickInterval is how often timers are checked (default 1 s).
	TickInterval time.Duration
	// SchedDelay batches event-driven scheduling: after an event the
	// scheduler runs at most this much later (default 20 ms).
	SchedDelay time.Duration
	// BatchCadence schedules submissions as slurmctld 24.11 does: not at
	// submission but on its once-a-second background tick, at least
	// SchedulerParameters batch_sched_delay (3 s) after the previous
	// such pass (oracle: jobs submitted at :45.03 and :47.29 both start
	// at :48.005 after a pass at :45.005), so jobs submitted together
	// are ordered by priority and pend meanwhile with their submission
	// reason. Other events (a job's end) still schedule after
	// SchedDelay. Off, a submission schedules like any event (tests).
	BatchCadence bool
	// HeartbeatInterval is what agents are told to use (default
	// SlurmdTimeout/3, at most 30 s).
	HeartbeatInterval time.Duration
	// RequeueDelay overrides SchedulerParameters requeue delay (Slurm's
	// 120 s) when > 0; tests use a short one.
	RequeueDelay time.Duration
	// Listeners, when set, are the daemon's sockets, kept open across
	// the controllers a reconfigure runs one after another; the first
	// controller creates them there. Nil: the controller owns its own.
	Listeners *Listeners
	// RequestTimeout bounds reading one request, headers and body
	// (default DefaultRequestTimeout); MaxUserRequests how many of one
	// user's requests are served at once (default DefaultMaxUserRequests).
	RequestTimeout  time.Duration
	MaxUserRequests int
	// FenceFraction is the share of SlurmdTimeout a node's job supervisor
	// keeps jobs with no agent before killing them (fence.go; default
	// DefaultFenceFraction, negative: never).
	FenceFraction float64
	// StartMode says what to do with a database that disagrees with the
	// state record (staterecord.go): refuse (default), -c or -R.
	StartMode StartMode
}

// Controller is a running controller.
type Controller struct {
	opts     Options
	cfg      *conf.Config
	log      *slog.Logger
	now      func() time.Time
	store    Store
	ownStore bool

	calls chan *call
	stop  chan struct{}
	done  chan struct{}

	clusterKey []byte
	jwtKey     []byte
	// ca and tlsID are the cluster CA and the controller's certificate
	// for agent traffic (agenttls.go).
	ca       *api.ClusterCA
	tlsID    *api.AgentTLS
	slurmUID int

	ln     net.Listener // TCP
	unixLn net.Listener
	// reconf carries a checked configuration to the daemon (Reconfigure).
	reconf chan *conf.Config
	// submitLatency is sluice_submit_latency_seconds (metrics.go).
	submitLatency prometheus.Histogram
	// looping is set by Start once the loop runs.
	looping bool
	// lock is the state directory's lock, held while the controller runs
	// (statelock.go).
	lock *os.File
	srvs []*http.Server
	wg   sync.WaitGroup

	// loop-owned state below: touched only by the event loop.
	ls *loopState
	// lastTick is when the loop last took a tick (real time, stall.go).
	lastTick time.Time
	// resvBook is the loop's reservation bookkeeping (resv.go).
	resvBook *resvBook

	agentsMu sync.Mutex
	agents   map[string]*api.AgentClient
	launchQ  chan struct{} // bounds concurrent agent calls

	// save is whether the store takes writes (savefail.go).
	save saveHealth
	// dbID is the database's identity and recordNext the next job id
	// the state record holds (staterecord.go).
	dbID       string
	recordNext uint64
	// load counts each user's requests in progress (httplimits.go).
	load userLoad

	rpc rpcStats // sdiag's RPC counters (rpcstats.go)
	// serving counts the API requests being answered: sdiag's "Server
	// thread count", which in slurmctld is the RPC threads at work (the
	// one answering sdiag among them).
	serving atomic.Int32
}

// call is one closure the loop runs for a handler.
type call struct {
	fn    func(ls *loopState) (any, error)
	res   any
	err   error
	reply chan struct{}
	// wrote is set when fn marked changes to store: a failed commit
	// fails the calls that wrote, not those that only read.
	wrote bool
}

// New opens the store, recovers the state and prepares the listeners; it
// starts nothing (call Start).
func New(ctx context.Context, opts Options) (*Controller, error) {
	if opts.Conf == nil {
		return nil, errors.New("ctld: a configuration is required")
	}
	if err := checkCtldScripts(opts.Conf); err != nil { // prolog.go
		return nil, err
	}
	c := &Controller{opts: opts, cfg: opts.Conf, log: opts.Logger, now: opts.Now,
		calls: make(chan *call, 4096), stop: make(chan struct{}), done: make(chan struct{}),
		agents: map[string]*api.AgentClient{}, launchQ: make(chan struct{}, 32), reconf: make(chan *conf.Config, 1), submitLatency: newSubmitLatency()}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.opts.StateDir == "" {
		c.opts.StateDir = c.cfg.StateSaveLocation
	}
	if c.opts.Socket == "" {
		c.opts.Socket = filepath.Join(c.opts.StateDir, api.SocketFile)
	}
	if c.opts.TickInterval <= 0 {
		c.opts.TickInterval = time.Second
	}
	if c.opts.SchedDelay <= 0 {
		c.opts.SchedDelay = 20 * time.Millisecond
	}
	if err := PrepareStateDir(c.opts.StateDir); err != nil {
		return nil, err
	}
	lock, err := lockStateDir(c.opts.StateDir)
	if err != nil {
		return nil, err
	}
	c.lock = lock
	if err := c.loadKeys(); err != nil {
		unlockStateDir(c.opts.StateDir, lock)
		return nil, err
	}
	c.slurmUID = lookupUID(c.cfg.SlurmUser)
	if err := c.clearStore(); err != nil { // -c (staterecord.go)
		return nil, err
	}
	if err := c.openStore(ctx); err != nil {
		unlockStateDir(c.opts.StateDir, lock)
		return nil, err
	}
	if err := c.registerCluster(ctx); err != nil {
		c.closeStore()
		return nil, err
	}
	ls, err := newLoopState(ctx, c)
	if err != nil {
		c.closeStore()
		return nil, err
	}
	c.ls = ls
	return c, nil
}

func (c *Controller) loadKeys() error {
	var err error
	if c.clusterKey, err = api.EnsureClusterKey(filepath.Join(c.opts.StateDir, api.ClusterKeyFile)); err != nil {
		return fmt.Errorf("ctld: %w", err)
	}
	if c.jwtKey, err = ensureJWTKey(filepath.Join(c.opts.StateDir, JWTKeyFile)); err != nil {
		return fmt.Errorf("ctld: %w", err)
	}
	if err := c.loadCA(); err != nil { // agenttls.go
		return fmt.Errorf("ctld: %w", err)
	}
	return nil
}

func (c *Controller) openStore(ctx context.Context) error {
	if c.opts.Store != nil {
		c.store = c.opts.Store
		return nil
	}
	var err error
	if c.cfg.Accounting.Store == conf.StorePostgres {
		c.store, err = OpenPostgres(ctx, c.cfg.Accounting.Loc)
	} else {
		c.store, err = OpenSQLite(ctx, filepath.Join(c.opts.StateDir, "ctld.db"))
	}
	if err != nil {
		return fmt.Errorf("ctld: %w", err)
	}
	c.ownStore = true
	return nil
}

func (c *Controller) closeStore() {
	if c.ownStore {
		c.store.Close()
	}
	if c.lock != nil {
		unlockStateDir(c.opts.StateDir, c.lock)
	}
}

// ClusterKey returns the key agents must sign their requests with.
func (c *Controller) ClusterKey() []byte { return c.clusterKey }

// Socket returns the Unix socket path.
func (c *Controller) Socket() string { return c.opts.Socket }

// Addr returns the TCP listener's address ("" when disabled or not started).
func (c *Controller) Addr() string {
	if c.ln == nil {
		return ""
	}
	return c.ln.Addr().String()
}

// URL returns the base URL agents and remote clients use.
func (c *Controller) URL() string {
	if c.ln == nil {
		return ""
	}
	return "http://" + c.ln.Addr().String()
}

// Start opens the listeners and starts the event loop.
func (c *Controller) Start() error {
	if err := c.listen(); err != nil {
		return err
	}
	c.looping = true
	go c.loop()
	c.startResvTimer()   // purges ended reservations (resv.go)
	c.startNodeSampler() // node state history for sreport (accounting.go)
	return nil
}

// onLoopEvery runs fn on the loop every d until the controller stops:
// the loop's periodic work that no event triggers.
func (c *Controller) onLoopEvery(d time.Duration, fn func(ls *loopState, now time.Time)) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				_, _ = c.do(context.Background(), func(ls *loopState) (any, error) {
					fn(ls, c.now())
					return nil, nil
				})
			}
		}
	}()
}

// Close stops serving and the loop; running jobs keep running on their
// agents and are found again by the next controller.
func (c *Controller) Close() error {
	select {
	case <-c.stop:
		return nil
	default:
	}
	for _, s := range c.srvs {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s.Shutdown(ctx)
		cancel()
	}
	close(c.stop)
	if c.looping { // a controller whose Start failed has no loop to wait for
		<-c.done
	}
	c.wg.Wait()
	if c.opts.Listeners == nil {
		os.Remove(c.opts.Socket)
	}
	c.closeStore()
	return nil
}

// do runs fn on the event loop and returns its result once everything
// it changed is stored.
func (c *Controller) do(ctx context.Context, fn func(ls *loopState) (any, error)) (any, error) {
	cl := &call{fn: fn, reply: make(chan struct{})}
	select {
	case c.calls <- cl:
	case <-c.stop:
		return nil, errStoreClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-cl.reply:
		return cl.res, cl.err
	case <-c.done:
		return nil, errStoreClosed
	}
}

// maxBatch bounds how many calls one loop batch serves.
const maxBatch = 4096

// loop is the event loop: the only goroutine that touches c.ls. Each
// batch of calls (or a timer) changes the state; the rows it wrote are
// stored in one transaction before its calls are answered (committer).
func (c *Controller) loop() {
	defer close(c.done)
	cm := &committer{c: c}
	tick := time.NewTicker(c.opts.TickInterval)
	defer tick.Stop()
	c.lastTick = time.Now() // stall.go
	var schedTimer, batchTimer <-chan time.Time
	batch := make([]*call, 0, 64)
	ls := c.ls
	ls.wantSched = true
	for {
		if ls.wantSched && schedTimer == nil {
			// A long queue makes a cycle costly: wait at least twice the
			// last cycle so that requests keep most of the loop's time.
			schedTimer = time.After(max(c.opts.SchedDelay, 2*ls.stats.LastCycle))
		}
		if (ls.wantBatch || ls.wantTick) && batchTimer == nil {
			now := c.now()
			batchTimer = time.After(ls.tickPassAt(now, c.cfg.SchedulerParameters.BatchSchedDelay).Sub(now))
		}
		batch = batch[:0]
		select {
		case <-c.stop:
			return
		case cl := <-c.calls:
			batch = append(batch, cl)
		drain:
			for len(batch) < maxBatch {
				select {
				case cl := <-c.calls:
					batch = append(batch, cl)
				default:
					break drain
				}
			}
		case <-schedTimer:
			schedTimer = nil
			if c.saving() { // while state save fails no start could be stored
				ls.schedule(c.now())
			}
		case <-batchTimer:
			batchTimer = nil
			now := c.now()
			if ls.wantBatch {
				ls.lastBatch = now
			}
			ls.wantBatch, ls.wantTick = false, false
			if c.saving() {
				ls.schedule(now)
			}
		case <-tick.C:
			if !c.saving() {
				c.probeSave() // savefail.go
				ls = c.ls
			}
			c.creditStall(ls, time.Now()) // stall.go
			if c.saving() {
				ls.timers(c.now())
			}
		}
		for _, cl := range batch {
			mark := ls.wroteMark()
			cl.res, cl.err = c.safeRun(ls, cl.fn)
			cl.wrote = ls.wroteMark() != mark
		}
		b, err := ls.takeBatch()
		if err != nil {
			// Nothing of this batch can be stored: answer errors now;
			// the changes stay marked for the next batch.
			c.log.Error("cannot encode the batch's changes", "err", err)
			failCalls(batch, err)
			for _, cl := range batch {
				close(cl.reply)
			}
			continue
		}
		// Answers and agent calls wait for the store.
		cm.commit(pendingCommit{b: b, calls: batch, outbox: ls.takeOutbox()})
		ls = c.ls // a failed commit reloads the state (savefail.go)
	}
}

// failCalls turns the answers of calls that succeeded into "Unable to
// save state" errors: their changes are not stored.
func failCalls(calls []*call, err error) {
	for _, cl := range calls {
		if cl.err == nil {
			cl.res, cl.err = nil, api.Errorf(http.StatusInternalServerError, "Unable to save state: %v", err)
		}
	}
}

// failWrites fails the calls that changed something (the failed
// commit's changes are rolled back); reads keep their answers.
func failWrites(calls []*call, err error) {
	for _, cl := range calls {
		if cl.wrote && cl.err == nil {
			cl.res, cl.err = nil, api.Errorf(http.StatusInternalServerError,
				"Unable to save state, nothing was changed: %v", err)
		}
	}
}

// safeRun runs fn, turning a panic into an error so that one bad request
// cannot take the controller down.
func (c *Controller) safeRun(ls *loopState, fn func(*loopState) (any, error)) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("request handler panicked", "panic", r)
			err = api.Errorf(http.StatusInternalServerError, "internal error: %v", r)
		}
	}()
	return fn(ls)
}

// schedConfig returns the core configuration for this controller.
func (c *Controller) schedConfig() sched.Config {
	cfg := sched.ConfigFromConf(c.cfg)
	if c.opts.RequeueDelay > 0 {
		cfg.RequeueDelay = c.opts.RequeueDelay
	}
	return cfg
}
