package ctld

// Agent traffic runs over mutual TLS with the cluster CA of the state
// directory (created at the first start, api.EnsureClusterCA). The TCP
// port serves both: a connection that opens with a TLS handshake is
// agent traffic (or a token client speaking https), any other is plain
// HTTP for remote clients with tokens and the metrics, as before. Agent
// requests are refused on plain HTTP except the enrollment, which the
// cluster key authenticates both ways.

import (
	"bufio"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// loadCA loads or creates the cluster CA and issues the controller's
// certificate for this start.
func (c *Controller) loadCA() error {
	ca, err := api.EnsureClusterCA(c.opts.StateDir, c.cfg.ClusterName)
	if err != nil {
		return err
	}
	id, err := ca.IssueController(c.opts.StateDir, c.controllerHosts())
	if err != nil {
		return err
	}
	c.ca, c.tlsID = ca, id
	return nil
}

// controllerHosts are the names and addresses the controller's
// certificate is valid for: slurm.conf's SlurmctldHost names and
// addresses, the host's name, the listen address and the loopback.
func (c *Controller) controllerHosts() []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	for _, h := range c.cfg.SlurmctldHosts {
		hosts = append(hosts, h.Name, h.Addr)
	}
	if name, err := os.Hostname(); err == nil {
		hosts = append(hosts, name)
	}
	if h, _, err := net.SplitHostPort(c.opts.Listen); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	return hosts
}

// CACertPEM is the cluster CA's certificate (public).
func (c *Controller) CACertPEM() []byte { return c.ca.PEM }

// agentPeerPolicy lets only the enrollment in without a client
// certificate (and without TLS).
func agentPeerPolicy(r *http.Request, _ string) (plain, ok bool) {
	return true, r.URL.Path == api.PathAgentEnroll
}

// isNodePeer: a node agent's certificate (the controller's own does not
// call the controller).
func isNodePeer(name string) bool { return name != api.ControllerCertName }

// agentHTTPClient is the controller's client for node's agent: TLS with
// the controller's certificate, the agent's certificate checked for
// node's name.
func (c *Controller) agentHTTPClient(node string) *http.Client {
	return c.tlsID.HTTPClient(node, 30*time.Second)
}

// agentURL is addr with https: the controller speaks to agents over TLS
// only, whatever an agent advertised.
func agentURL(addr string) string {
	if rest, ok := strings.CutPrefix(addr, "http://"); ok {
		return "https://" + rest
	}
	return addr
}

// sniffListener hands out TLS connections (first byte 0x16, a handshake
// record) wrapped in tls.Server, and the others as they are.
type sniffListener struct {
	net.Listener
	cfg   *tls.Config
	conns chan net.Conn
	errs  chan error
	done  chan struct{}
	start sync.Once
	close sync.Once
}

func newSniffListener(ln net.Listener, cfg *tls.Config) *sniffListener {
	return &sniffListener{Listener: ln, cfg: cfg, conns: make(chan net.Conn), errs: make(chan error), done: make(chan struct{})}
}

func (l *sniffListener) Accept() (net.Conn, error) {
	l.start.Do(func() { go l.loop() })
	select {
	case c := <-l.conns:
		return c, nil
	case err := <-l.errs:
		return nil, err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *sniffListener) Close() error {
	l.close.Do(func() { close(l.done) })
	return l.Listener.Close()
}

func (l *sniffListener) loop() {
	for {
		select {
		case <-l.done:
			return
		default:
		}
		conn, err := l.Listener.Accept()
		if err != nil {
			select {
			case l.errs <- err:
			case <-l.done:
				return
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		go l.classify(conn)
	}
}

// classify reads the connection's first byte (a slow client is given 10
// seconds) and hands the connection on.
func (l *sniffListener) classify(conn net.Conn) {
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReaderSize(conn, 512)
	first, err := br.Peek(1)
	conn.SetReadDeadline(time.Time{})
	if err != nil {
		conn.Close()
		return
	}
	pc := &peekedConn{Conn: conn, r: br}
	var out net.Conn = pc
	if first[0] == 0x16 {
		out = tls.Server(pc, l.cfg)
	}
	select {
	case l.conns <- out:
	case <-l.done:
		// A reconfigure's next controller serves it (reconfigure.go).
		if hl, ok := l.Listener.(*handoffListener); ok {
			select {
			case hl.h.early <- pc:
				return
			default:
			}
		}
		conn.Close()
	}
}

// peekedConn reads through the reader that peeked at its first byte.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (p *peekedConn) Read(b []byte) (int, error) { return p.r.Read(b) }
