package ctld

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// scontrol reconfigure. Since 23.11 slurmctld reconfigures by starting a
// new daemon on the new slurm.conf and handing it its listening sockets;
// when the new one fails to start the old one carries on ("Resuming
// operation, reconfigure failed") and scontrol says "slurm_reconfigure
// error: Unspecified error". Running jobs are untouched either way.
// Sluice does the same in one process: the controller checks the new
// configuration, answers, and the daemon (sluice ctld, sluice up) closes
// it and opens a new one on the same sockets (Listeners), recovering the
// state from the store as after a restart.

// Listeners are a controller's sockets when they outlive it: the daemon
// creates them once and every controller it runs serves them, so that no
// client or agent finds the port closed during a reconfigure.
type Listeners struct {
	Unix, TCP *Handoff
}

// Close closes the sockets for good.
func (l *Listeners) Close() {
	if l == nil {
		return
	}
	for _, h := range []*Handoff{l.Unix, l.TCP} {
		if h != nil {
			h.ln.Close()
		}
	}
}

// Handoff is a listening socket handed from one controller to the next.
type Handoff struct {
	ln net.Listener
	// early holds connections accepted by a closing controller: the next
	// one serves them first, so none is dropped at the switch.
	early chan net.Conn
}

// NewHandoff wraps a listening socket.
func NewHandoff(ln net.Listener) *Handoff { return &Handoff{ln: ln, early: make(chan net.Conn, 64)} }

// Addr is the socket's address.
func (h *Handoff) Addr() net.Addr { return h.ln.Addr() }

// serve returns a listener for one controller's server: its Close (by
// http.Server.Shutdown) stops that server's Accept and leaves the socket
// open.
func (h *Handoff) serve() net.Listener {
	setAcceptDeadline(h.ln, time.Time{})
	return &handoffListener{h: h, closed: make(chan struct{})}
}

type handoffListener struct {
	h      *Handoff
	closed chan struct{}
	once   sync.Once
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.h.early:
		return c, nil
	default:
	}
	conn, err := l.h.ln.Accept()
	select {
	case <-l.closed:
		if conn != nil {
			select {
			case l.h.early <- conn:
			default:
				conn.Close()
			}
		}
		return nil, net.ErrClosed
	default:
	}
	return conn, err
}

func (l *handoffListener) Close() error {
	l.once.Do(func() {
		close(l.closed)
		// Wake the Accept blocked in the kernel without closing the socket.
		setAcceptDeadline(l.h.ln, time.Now())
	})
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.h.ln.Addr() }

func setAcceptDeadline(ln net.Listener, t time.Time) {
	if d, ok := ln.(interface{ SetDeadline(time.Time) error }); ok {
		_ = d.SetDeadline(t)
	}
}

// listenUnix and listenTCP open the controller's sockets, or take the
// daemon's (Options.Listeners) and create them there on first use.
func (c *Controller) listenUnix() (net.Listener, error) {
	l := c.opts.Listeners
	if l != nil && l.Unix != nil {
		return l.Unix.serve(), nil
	}
	os.Remove(c.opts.Socket)
	ln, err := net.Listen("unix", c.opts.Socket)
	if err != nil {
		return nil, fmt.Errorf("ctld: listen on %s: %w", c.opts.Socket, err)
	}
	// Anyone may connect: the kernel tells who they are.
	os.Chmod(c.opts.Socket, 0o666)
	if l == nil {
		return ln, nil
	}
	l.Unix = NewHandoff(ln)
	return l.Unix.serve(), nil
}

func (c *Controller) listenTCP(addr string) (net.Listener, error) {
	l := c.opts.Listeners
	if l != nil && l.TCP != nil {
		return l.TCP.serve(), nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("ctld: listen on %s: %w", addr, err)
	}
	if l == nil {
		return ln, nil
	}
	l.TCP = NewHandoff(ln)
	return l.TCP.serve(), nil
}

// Reconfigure delivers the configuration an administrator asked for with
// scontrol reconfigure, already checked: the daemon restarts the
// controller on it.
func (c *Controller) Reconfigure() <-chan *conf.Config { return c.reconf }

// keepRestartOnly keeps in cur what a reconfigure cannot change, as in
// Slurm (the listening ports and the authentication) and, in Sluice,
// where the state lives, and names the keys the new file changes: they
// take effect at the next start of the daemon. (sluice up --state also
// overrides StateSaveLocation: the running value is the one to keep.)
func keepRestartOnly(old, cur *conf.Config) []string {
	var out []string
	keep := func(key string, changed bool) {
		if changed {
			out = append(out, key)
		}
	}
	keep("ClusterName", old.ClusterName != cur.ClusterName)
	keep("SlurmctldHost", fmt.Sprint(old.SlurmctldHosts) != fmt.Sprint(cur.SlurmctldHosts))
	keep("SlurmctldPort", old.SlurmctldPort != cur.SlurmctldPort)
	keep("AccountingStorageType", old.Accounting.Store != cur.Accounting.Store)
	keep("AccountingStorageLoc", old.Accounting.Loc != cur.Accounting.Loc)
	cur.ClusterName, cur.SlurmctldHosts, cur.SlurmctldPort = old.ClusterName, old.SlurmctldHosts, old.SlurmctldPort
	cur.Accounting.Store, cur.Accounting.Loc = old.Accounting.Store, old.Accounting.Loc
	cur.StateSaveLocation = old.StateSaveLocation
	return out
}

// reconfigure checks slurm.conf (and what it includes) as the new
// controller would read it; only a configuration that would start is
// handed to the daemon.
func (c *Controller) reconfigure(w Who) (api.ReconfigureResponse, error) {
	if !c.isAdminWho(w) {
		return api.ReconfigureResponse{}, &apiErr{status: http.StatusForbidden, msg: "Invalid user id"}
	}
	cfg, _, err := conf.Load(c.cfg.Path)
	if err == nil {
		_, err = sched.ClusterFromConf(cfg)
	}
	if err != nil {
		c.log.Error("reconfigure failed, resuming operation", "err", err)
		return api.ReconfigureResponse{}, &apiErr{status: http.StatusBadRequest, msg: "Unspecified error"}
	}
	later := keepRestartOnly(c.cfg, cfg)
	if len(later) > 0 {
		c.log.Warn("reconfigure: these changes take effect at the next restart", "keys", later)
	}
	select {
	case c.reconf <- cfg:
	default:
		return api.ReconfigureResponse{}, &apiErr{status: http.StatusServiceUnavailable, msg: "a reconfigure is already in progress"}
	}
	c.log.Info("reconfigure requested", "conf", c.cfg.Path)
	return api.ReconfigureResponse{RestartNeeded: later}, nil
}

// isAdminWho asks the loop whether w may administer the cluster.
func (c *Controller) isAdminWho(w Who) bool {
	ok, _ := c.do(context.Background(), func(ls *loopState) (any, error) { return ls.isAdmin(w), nil })
	b, _ := ok.(bool)
	return b
}
