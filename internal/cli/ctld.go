package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/acct/sqlstore"
	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/ctld"
)

func init() {
	Register(Command{Name: "ctld", Summary: "run the controller daemon (slurmctld): sluice ctld [--conf FILE]", Run: runCtld})
}

const ctldUsage = `Usage: sluice ctld [--conf FILE] [--listen ADDR] [-v]

Runs the controller (Slurm's slurmctld) in the foreground: it keeps the
jobs in StateSaveLocation (SQLite, or PostgreSQL with
AccountingStorageType=accounting_storage/pgsql), serves local commands on
StateSaveLocation/sluice.sock and node agents and remote clients (tokens)
on SlurmctldPort. Node agents: sluice noded --name NODE --controller URL.

  --conf FILE     slurm.conf (default $SLURM_CONF, then /etc/slurm/slurm.conf)
  --listen ADDR   TCP address (default :SlurmctldPort; "none" disables it)
  --rest-listen ADDR  also serve slurmrestd's REST API on ADDR (host:port,
                  or unix:/path for local users identified by SO_PEERCRED)
  -c              start with no jobs on purpose (as slurmctld -c): the
                  SQLite database is moved aside, job ids continue
  -R              start with what the database holds even when it is
                  missing, empty or older than StateSaveLocation/ctld.record
                  (job ids continue after the record's)
  --fence-fraction F  a node's job supervisor with no agent for F x SlurmdTimeout
                  kills its jobs, before the controller requeues them at
                  SlurmdTimeout (default 0.5; 0 never)
  -v, --verbose   debug logging

Without -c or -R the controller refuses to start when its database is
missing, empty, another one or older than the record it keeps in
StateSaveLocation/ctld.record, naming both.
`

// confPath returns the slurm.conf the commands use: $SLURM_CONF, else
// /etc/slurm/slurm.conf, as Slurm's clients do.
func confPath(env *Env) string {
	if p := env.Getenv("SLURM_CONF"); p != "" {
		return p
	}
	return "/etc/slurm/slurm.conf"
}

func runCtld(ctx context.Context, env *Env, args []string) int {
	fs := pflag.NewFlagSet("ctld", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	path := fs.String("conf", "", "")
	listen := fs.String("listen", "", "")
	restListen := fs.String("rest-listen", "", "")
	verbose := fs.BoolP("verbose", "v", false, "")
	clear := fs.BoolP("clear", "c", false, "")
	recover := fs.BoolP("recover", "R", false, "")
	fence := fs.Float64("fence-fraction", ctld.DefaultFenceFraction, "")
	help := fs.BoolP("help", "h", false, "")
	if err := fs.Parse(args); err != nil {
		return Errorf(env, "ctld", "%v", err)
	}
	if *help {
		fmt.Fprint(env.Stdout, ctldUsage)
		return 0
	}
	if *path == "" {
		*path = confPath(env)
	}
	cfg, warns, err := conf.Load(*path)
	if err != nil {
		return Errorf(env, "ctld", "%v", err)
	}
	for _, w := range warns {
		fmt.Fprintf(env.Stderr, "ctld: warning: %v\n", w)
	}
	log, level := newLogger(env, *verbose)
	mode := ctld.StartNormal
	switch {
	case *clear && *recover:
		return Errorf(env, "ctld", "-c and -R exclude each other")
	case *clear:
		mode = ctld.StartClear
	case *recover:
		mode = ctld.StartRecover
	}
	restSet, restStop, err := restInProcess(*restListen, log)
	if err != nil {
		return Errorf(env, "ctld", "%v", err)
	}
	defer restStop()
	err = serveReconfigurable(ctx, cfg, ctld.Options{Listen: *listen, Logger: log, LogLevel: level, BatchCadence: true, StartMode: mode,
		FenceFraction: fenceOption(*fence)}, func(c *ctld.Controller, first bool) error {
		restSet(c)
		if first {
			fmt.Fprintf(env.Stderr, "sluice ctld: cluster %s, socket %s, agents and tokens on %s\n", cfg.ClusterName, c.Socket(), c.Addr())
		}
		return nil
	}, nil)
	if err != nil {
		return Errorf(env, "ctld", "%v", err)
	}
	return 0
}

// serveReconfigurable runs controllers on cfg until ctx ends. Each
// scontrol reconfigure closes the running controller and starts the next
// on the new configuration and the same sockets (ctld.Listeners), as
// slurmctld 24.11 hands its sockets to a new daemon; a configuration that
// fails to start gives way to the previous one again (slurmctld:
// "Resuming operation, reconfigure failed"). started runs after each
// start (an error from it ends the daemon), stopping (if any) when ctx
// ends, before the controller closes.
func serveReconfigurable(ctx context.Context, cfg *conf.Config, opts ctld.Options, started func(c *ctld.Controller, first bool) error, stopping func()) error {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	socks := &ctld.Listeners{}
	defer socks.Close()
	opts.Listeners = socks
	c, closeFn, err := startController(ctx, cfg, opts)
	if err != nil {
		return err
	}
	defer func() { closeFn() }()
	// -c and -R act on the first start only: a reconfigure reopens the
	// store as it is.
	opts.StartMode = ctld.StartNormal
	if err := started(c, true); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			if stopping != nil {
				stopping()
			}
			return nil
		case next := <-c.Reconfigure():
			closeFn()
			nc, nclose, err := startController(ctx, next, opts)
			if err != nil {
				log.Error("reconfigure failed, resuming operation", "err", err)
				if nc, nclose, err = startController(ctx, cfg, opts); err != nil {
					closeFn = func() {}
					return err
				}
			} else {
				cfg = next
				log.Info("reconfigured", "conf", cfg.Path)
			}
			c, closeFn = nc, nclose
			if err := started(c, false); err != nil {
				return err
			}
		}
	}
}

// newLogger is a daemon's logger and its level, which scontrol setdebug
// changes.
func newLogger(env *Env, verbose bool) (*slog.Logger, *slog.LevelVar) {
	level := new(slog.LevelVar)
	if verbose {
		level.Set(slog.LevelDebug)
	}
	// The daemons log from several goroutines while the command itself
	// still prints to stderr: route both through one lock.
	if _, ok := env.Stderr.(*SyncWriter); !ok {
		env.Stderr = &SyncWriter{W: env.Stderr}
	}
	return slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level})), level
}

// startController opens the accounting store slurm.conf names and starts
// a controller; the returned function stops both.
func startController(ctx context.Context, cfg *conf.Config, opts ctld.Options) (*ctld.Controller, func(), error) {
	opts.Conf = cfg
	if err := ctld.PrepareStateDir(cfg.StateSaveLocation); err != nil {
		return nil, nil, err
	}
	var as acct.Store
	if cfg.Accounting.Store == conf.StorePostgres || cfg.Accounting.Loc != "" {
		s, err := sqlstore.Open(ctx, string(cfg.Accounting.Store), cfg.Accounting.Loc)
		if err != nil {
			return nil, nil, err
		}
		as = s
		opts.Accounting = s
	}
	c, err := ctld.New(ctx, opts)
	if err != nil {
		if as != nil {
			as.Close()
		}
		return nil, nil, err
	}
	if err := c.Start(); err != nil {
		c.Close()
		if as != nil {
			as.Close()
		}
		return nil, nil, err
	}
	return c, func() {
		c.Close()
		if as != nil {
			as.Close()
		}
	}, nil
}

// errNoController is printed when no controller can be found.
var errNoController = errors.New("Unable to contact slurm controller (connect failure)")

// controllerClient finds the controller the way the commands do:
// $SLUICE_SOCKET, else the controller's TCP port with the token in
// $SLURM_JWT, else the socket in slurm.conf's StateSaveLocation, else (in
// a job on a node host, where there is no controller socket) the TCP port
// with the job's token that the node agent put in $SLUICE_JOB_TOKEN.
func controllerClient(env *Env) (*api.Client, error) {
	if s := env.Getenv("SLUICE_SOCKET"); s != "" {
		return api.NewUnixClient(s), nil
	}
	cfg, _, err := conf.Load(confPath(env))
	if err != nil {
		return nil, err
	}
	if tok := env.Getenv("SLURM_JWT"); tok != "" {
		return api.NewTCPClient(controllerAddr(cfg), tok), nil
	}
	sock := filepath.Join(cfg.StateSaveLocation, api.SocketFile)
	if _, err := os.Stat(sock); err != nil {
		if tok := env.Getenv(api.JobTokenEnv); tok != "" {
			return api.NewTCPClient(controllerAddr(cfg), tok), nil
		}
		return nil, fmt.Errorf("%w: no socket at %s (is `sluice up` or `sluice ctld` running?)", errNoController, sock)
	}
	return api.NewUnixClient(sock), nil
}

// controllerAddr is SlurmctldHost's address (or name) and SlurmctldPort.
func controllerAddr(cfg *conf.Config) string {
	host := "localhost"
	if len(cfg.SlurmctldHosts) > 0 {
		host = cfg.SlurmctldHosts[0].Addr
		if host == "" {
			host = cfg.SlurmctldHosts[0].Name
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(cfg.SlurmctldPort))
}

// clientError prints a controller error the way Slurm's clients do.
func clientError(env *Env, cmd string, err error) int {
	var ae *api.Error
	if errors.As(err, &ae) {
		return Errorf(env, cmd, "%s", ae.Message)
	}
	if errors.Is(err, api.ErrNoAnswer) {
		return Errorf(env, cmd, "%v: the request was sent but no answer came back; it may have taken effect", api.ErrNoAnswer)
	}
	if errors.Is(err, api.ErrUnreachable) {
		return Errorf(env, cmd, "%v", errNoController)
	}
	return Errorf(env, cmd, "%v", err)
}

// callTimeout bounds one command's talk with the controller.
const callTimeout = 60 * time.Second

// fenceOption turns --fence-fraction into Options.FenceFraction, where 0
// is the default and a negative value disables fencing.
func fenceOption(f float64) float64 {
	if f <= 0 {
		return -1
	}
	return min(f, 0.95)
}
