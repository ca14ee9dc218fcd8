package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/ctld"
	"github.com/sluice-hpc/sluice/internal/restd"
)

func init() {
	Register(Command{Name: "restd", Summary: "run the REST API daemon (slurmrestd): sluice restd --listen ADDR", Run: runRestd})
}

const restdUsage = `Usage: sluice restd --listen ADDR [--conf FILE] [--controller ADDR] [-v]

Serves slurmrestd's REST API (/slurm/v0.0.42/..., /openapi/v3) and
carries each request out on the controller as its caller: with the
X-SLURM-USER-NAME and X-SLURM-USER-TOKEN headers (scontrol token) over
the controller's TCP port, or, on a Unix socket (--listen unix:/path),
as the connecting local user (SO_PEERCRED), who must be the daemon's
own user. The controller can serve the same API itself: sluice ctld
--rest-listen ADDR.

  --listen ADDR      host:port, or unix:/path
  --conf FILE        slurm.conf (default $SLURM_CONF, then /etc/slurm/slurm.conf)
  --controller ADDR  the controller's TCP address (default SlurmctldHost:SlurmctldPort)
  -v, --verbose      debug logging
`

func runRestd(ctx context.Context, env *Env, args []string) int {
	fs := pflag.NewFlagSet("restd", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "", "")
	path := fs.String("conf", "", "")
	addr := fs.String("controller", "", "")
	verbose := fs.BoolP("verbose", "v", false, "")
	help := fs.BoolP("help", "h", false, "")
	if err := fs.Parse(args); err != nil {
		return Errorf(env, "restd", "%v", err)
	}
	if *help {
		fmt.Fprint(env.Stdout, restdUsage)
		return 0
	}
	if *listen == "" {
		return Errorf(env, "restd", "--listen ADDR is required")
	}
	if *path == "" {
		*path = confPath(env)
	}
	cfg, _, err := conf.Load(*path)
	if err != nil {
		return Errorf(env, "restd", "%v", err)
	}
	if *addr == "" {
		*addr = controllerAddr(cfg)
	}
	log, _ := newLogger(env, *verbose)
	b := restd.Remote{Addr: *addr, Socket: filepath.Join(cfg.StateSaveLocation, api.SocketFile)}
	stop, err := serveREST(*listen, b, log)
	if err != nil {
		return Errorf(env, "restd", "%v", err)
	}
	fmt.Fprintf(env.Stderr, "sluice restd: serving on %s, controller %s\n", *listen, *addr)
	<-ctx.Done()
	stop()
	return 0
}

// serveREST starts the REST API on addr; the returned function stops it.
func serveREST(addr string, b restd.Backend, log *slog.Logger) (func(), error) {
	ln, err := restd.Listen(addr)
	if err != nil {
		return nil, fmt.Errorf("rest listen %s: %w", addr, err)
	}
	srv := restd.New(b, log).NewHTTPServer()
	log.Info("REST API (slurmrestd) serving", "addr", addr)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("REST API stopped", "err", err)
		}
	}()
	return func() { srv.Close() }, nil
}

// restInProcess starts the REST API served by the controller itself
// (--rest-listen) and returns the hook that points it at each controller
// started (the first and each after a reconfigure), and its stop.
func restInProcess(addr string, log *slog.Logger) (func(c *ctld.Controller), func(), error) {
	if addr == "" {
		return func(*ctld.Controller) {}, func() {}, nil
	}
	b := &restd.InProcess{}
	stop, err := serveREST(addr, b, log)
	if err != nil {
		return nil, nil, err
	}
	return func(c *ctld.Controller) {
		h := c.Handler()
		b.Set(c.TokenHandler(), func(uid, gid uint32) http.Handler { return ctld.AsLocalUser(h, uid, gid) })
	}, stop, nil
}
