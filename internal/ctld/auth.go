package ctld

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/sluice-hpc/sluice/internal/api"
)

// Who is a caller as the controller established it: from the kernel
// (Unix socket peer credentials) or from a verified token. A request body
// never says who the caller is.
type Who struct {
	UID   uint32
	GID   uint32
	User  string
	Group string
	// Via is "socket" or "token".
	Via string
}

type whoKey struct{}

// WithWho returns ctx carrying w (the listeners set it; handler tests
// inject identities with it).
func WithWho(ctx context.Context, w Who) context.Context { return context.WithValue(ctx, whoKey{}, w) }

// WhoFrom returns the caller's identity set by the listener.
func WhoFrom(ctx context.Context) (Who, bool) {
	w, ok := ctx.Value(whoKey{}).(Who)
	return w, ok
}

// peerCred reads the uid/gid of the process at the other end of a Unix
// socket connection (SO_PEERCRED): the kernel's word, not the client's.
func peerCred(c net.Conn) (Who, error) {
	uid, gid, err := api.PeerCred(c)
	if err != nil {
		return Who{}, err
	}
	return whoForUID(uid, gid, "socket"), nil
}

var (
	nameMu    sync.Mutex
	userNames = map[uint32]string{}
	groupName = map[uint32]string{}
)

// whoForUID resolves user and group names (cached; a uid without a
// passwd entry is named by its number, as Slurm prints unknown users).
func whoForUID(uid, gid uint32, via string) Who {
	nameMu.Lock()
	defer nameMu.Unlock()
	un, ok := userNames[uid]
	if !ok {
		un = strconv.FormatUint(uint64(uid), 10)
		if u, err := user.LookupId(un); err == nil {
			un = u.Username
		}
		userNames[uid] = un
	}
	gn, ok := groupName[gid]
	if !ok {
		gn = strconv.FormatUint(uint64(gid), 10)
		if g, err := user.LookupGroupId(gn); err == nil {
			gn = g.Name
		}
		groupName[gid] = gn
	}
	return Who{UID: uid, GID: gid, User: un, Group: gn, Via: via}
}

// lookupUID returns the uid of a user name (-1 if unknown).
func lookupUID(name string) int {
	if name == "" {
		return -1
	}
	u, err := user.Lookup(name)
	if err != nil {
		return -1
	}
	id, err := strconv.Atoi(u.Uid)
	if err != nil {
		return -1
	}
	return id
}

// whoForName resolves a user name to an identity (for tokens and --uid).
func whoForName(name, via string) (Who, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if id, perr := strconv.ParseUint(name, 10, 32); perr == nil {
			u, err = user.LookupId(strconv.FormatUint(id, 10))
		}
		if err != nil {
			return Who{}, fmt.Errorf("Invalid user id: %s", name)
		}
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return whoForUID(uint32(uid), uint32(gid), via), nil
}

// ---- JWT (slurmrestd's auth/jwt: HS256, claim "sun" = user name) ----

// JWTKeyFile is the token signing key's file name in the state directory.
const JWTKeyFile = "jwt_hs256.key"

// DefaultTokenLifespan is scontrol token's default lifespan (1800 s).
const DefaultTokenLifespan = 1800 * time.Second

// ensureJWTKey loads or creates (0600) the HS256 key.
func ensureJWTKey(path string) ([]byte, error) {
	if data, err := os.ReadFile(path); err == nil {
		st, err := os.Stat(path)
		if err == nil && st.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("jwt key %q: permissions %v are too open, want 0600", path, st.Mode().Perm())
		}
		key, err := hex.DecodeString(strings.TrimSpace(string(data)))
		if err != nil || len(key) < 16 {
			return nil, fmt.Errorf("jwt key %q: want at least 32 hex digits", path)
		}
		return key, nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("create jwt key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return ensureJWTKey(path)
		}
		return nil, fmt.Errorf("create jwt key: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		return nil, fmt.Errorf("create jwt key: %w", err)
	}
	return key, nil
}

// IssueToken signs a token for user valid for lifespan.
func IssueToken(key []byte, user string, now time.Time, lifespan time.Duration) (string, time.Time, error) {
	exp := now.Add(lifespan)
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sun": user, "iat": now.Unix(), "exp": exp.Unix(),
	})
	s, err := t.SignedString(key)
	return s, exp, err
}

// errBadToken is the refusal of a forged, expired or malformed token.
var errBadToken = errors.New("Invalid authentication credential")

// verifyToken checks a token and returns its user name.
func verifyToken(key []byte, tok string, now time.Time) (string, error) {
	p := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return now }))
	claims := jwt.MapClaims{}
	if _, err := p.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return key, nil }); err != nil {
		return "", fmt.Errorf("%w: %v", errBadToken, err)
	}
	name, _ := claims["sun"].(string)
	if name == "" {
		return "", fmt.Errorf("%w: no user name (sun) claim", errBadToken)
	}
	return name, nil
}

// tokenAuth identifies TCP clients by their bearer token (Authorization:
// Bearer, or slurmrestd's X-SLURM-USER-TOKEN).
func (c *Controller) tokenAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.Header.Get("X-SLURM-USER-TOKEN")
		if h := r.Header.Get("Authorization"); tok == "" && strings.HasPrefix(h, "Bearer ") {
			tok = strings.TrimPrefix(h, "Bearer ")
		}
		if tok == "" {
			writeErr(w, &apiErr{status: http.StatusUnauthorized, msg: "Authentication required: set SLURM_JWT (scontrol token) or use the local socket"})
			return
		}
		name, err := verifyToken(c.tokenKey(), tok, c.now())
		if err != nil {
			writeErr(w, &apiErr{status: http.StatusUnauthorized, msg: err.Error()})
			return
		}
		who, err := whoForName(name, "token")
		if err != nil {
			writeErr(w, &apiErr{status: http.StatusUnauthorized, msg: err.Error()})
			return
		}
		next.ServeHTTP(w, r.WithContext(WithWho(r.Context(), who)))
	})
}
