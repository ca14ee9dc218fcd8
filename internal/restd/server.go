package restd

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/user"
	"strconv"
	"strings"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Caller is who a request comes from, as the listener established it.
type Caller struct {
	// User is the name the request acts as: the X-SLURM-USER-NAME
	// header (which must name the token's user), or the local peer's.
	User string
	// Token is X-SLURM-USER-TOKEN ("" for a local socket caller); the
	// controller verifies it.
	Token string
	// Local marks a caller on the Unix socket, UID and GID from
	// SO_PEERCRED.
	Local    bool
	UID, GID uint32
	// Source is the client's address (meta.client.source).
	Source string
	// Mismatch marks a token whose user is not X-SLURM-USER-NAME, or
	// that cannot be read: slurmrestd passes such a request on and
	// slurmctld refuses it with "Protocol authentication error"
	// (oracle); only ping answers.
	Mismatch bool
}

// Backend gives the handlers a controller client acting as the caller.
type Backend interface {
	Client(c Caller) (*api.Client, error)
}

// Server is the REST API: the route table and the backend it calls.
type Server struct {
	backend Backend
	log     *slog.Logger
	mux     *http.ServeMux
	routes  []route
}

// New returns a server calling the controller through b.
func New(b Backend, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{backend: b, log: log, mux: http.NewServeMux()}
	s.routes = s.routeTable()
	for _, rt := range s.routes {
		// Paths are served with and without their trailing slash, as
		// slurmrestd does ("/jobs" and "/jobs/" alike).
		h := s.wrap(rt)
		if base, ok := strings.CutSuffix(rt.path, "/"); ok {
			s.mux.HandleFunc(rt.method+" "+base, h)
			s.mux.HandleFunc(rt.method+" "+rt.path+"{$}", h)
		} else {
			s.mux.HandleFunc(rt.method+" "+rt.path, h)
		}
	}
	s.mux.HandleFunc("GET /openapi/v3", s.openAPI)
	s.mux.HandleFunc("GET /openapi", s.openAPI)
	s.mux.HandleFunc("GET /openapi.json", s.openAPI)
	s.mux.HandleFunc("/", notFound)
	return s
}

// notFound is slurmrestd's answer to a path or method it does not serve
// (oracle, 24.11: 404 in plain text).
func notFound(w http.ResponseWriter, _ *http.Request) {
	plain(w, http.StatusNotFound, "Unable find requested URL. Please view /openapi/v3 for API reference.")
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	w.Write([]byte(msg))
}

type callerKey struct{}
type peerKey struct{}

// peer is a Unix socket client's credentials (SO_PEERCRED).
type peer struct{ uid, gid uint32 }

// Handler returns the API with slurmrestd's authentication: a local
// peer (set by Serve on a Unix socket) or the token headers; without
// either every path, /openapi/v3 included, answers 401 "Authentication
// failure" in plain text, as slurmrestd does.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := authenticate(r)
		if !ok {
			plain(w, http.StatusUnauthorized, "Authentication failure")
			return
		}
		s.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, c)))
	})
}

// authenticate finds the caller: the kernel's word on a Unix socket, or
// the token headers (no token: 401). The token's signature is the
// controller's to check (its refusal comes back with the first call);
// here only its user claim is read, to compare it with
// X-SLURM-USER-NAME.
func authenticate(r *http.Request) (Caller, bool) {
	c := Caller{Source: source(r.RemoteAddr)}
	if p, ok := r.Context().Value(peerKey{}).(peer); ok {
		c.Local, c.UID, c.GID, c.User = true, p.uid, p.gid, userName(p.uid)
		c.Source = "[local]"
		return c, true
	}
	c.Token = r.Header.Get("X-SLURM-USER-TOKEN")
	c.User = r.Header.Get("X-SLURM-USER-NAME")
	if h := r.Header.Get("Authorization"); c.Token == "" && strings.HasPrefix(h, "Bearer ") {
		c.Token = strings.TrimPrefix(h, "Bearer ")
	}
	if c.Token == "" {
		return c, false
	}
	claims := jwt.MapClaims{}
	sun := ""
	if _, _, err := jwt.NewParser().ParseUnverified(c.Token, claims); err == nil {
		sun, _ = claims["sun"].(string)
	}
	if c.User == "" {
		c.User = sun
	}
	// slurmrestd passes any token on; slurmctld refuses a malformed
	// one, or one of another user than the header names, call by call
	// (oracle).
	c.Mismatch = sun == "" || c.User != sun
	return c, true
}

// source is meta.client.source as slurmrestd writes it: "[host]:port".
func source(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "[" + addr + "]"
	}
	return "[" + host + "]:" + port
}

// userName is uid's login name (its number without a passwd entry).
func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return u.Username
	}
	return id
}

// callerFrom returns the request's caller (set by Handler).
func callerFrom(r *http.Request) Caller {
	c, _ := r.Context().Value(callerKey{}).(Caller)
	return c
}

// Listen opens addr: "unix:/path" for a local socket (mode 0666: every
// local user may connect, SO_PEERCRED tells them apart), else a TCP
// address.
func Listen(addr string) (net.Listener, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		ln, err := net.Listen("unix", path)
		if err != nil {
			return nil, err
		}
		if err := os.Chmod(path, 0o666); err != nil {
			ln.Close()
			return nil, err
		}
		return ln, nil
	}
	return net.Listen("tcp", addr)
}

// NewHTTPServer returns the http.Server for the API on ln's kind of
// listener: on a Unix socket each connection carries its peer's
// credentials.
func (s *Server) NewHTTPServer() *http.Server {
	return &http.Server{
		Handler: s.Handler(),
		ConnContext: func(ctx context.Context, conn net.Conn) context.Context {
			if p, err := peerCred(conn); err == nil {
				return context.WithValue(ctx, peerKey{}, p)
			}
			return ctx
		},
	}
}

// peerCred reads the uid and gid of a Unix socket's peer.
func peerCred(conn net.Conn) (peer, error) {
	uid, gid, err := api.PeerCred(conn)
	return peer{uid, gid}, err
}
