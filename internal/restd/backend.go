package restd

import (
	"errors"
	"net/http"
	"os"
	"sync"

	"github.com/sluice-hpc/sluice/internal/api"
)

// InProcess is the backend of the REST API served by the controller
// itself: requests call the controller's client API in process, a token
// caller through its token authentication, a local caller as the local
// user. Set is called again when a reconfigure starts the next
// controller.
type InProcess struct {
	mu    sync.RWMutex
	token http.Handler
	local func(uid, gid uint32) http.Handler
}

// Set installs the running controller's handlers: token, the API behind
// token authentication; local, the API as a local user.
func (b *InProcess) Set(token http.Handler, local func(uid, gid uint32) http.Handler) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.token, b.local = token, local
}

// errNoController answers while no controller runs.
var errNoController = errors.New("no controller")

// Client returns a client acting as c.
func (b *InProcess) Client(c Caller) (*api.Client, error) {
	b.mu.RLock()
	token, local := b.token, b.local
	b.mu.RUnlock()
	if token == nil {
		return nil, errNoController
	}
	if c.Local {
		return api.NewHandlerClient(local(c.UID, c.GID), ""), nil
	}
	return api.NewHandlerClient(token, c.Token), nil
}

// Remote is the backend of the separate daemon (sluice restd): token
// callers reach the controller's TCP address with their token; local
// callers its Unix socket, which identifies this daemon's user, so only
// a local caller of the same user is served (as slurmrestd's local
// authentication requires).
type Remote struct {
	// Addr is the controller's TCP address, Socket its Unix socket.
	Addr, Socket string
}

// errOtherUser refuses a local caller who is not this daemon's user.
var errOtherUser = errors.New("local caller is not the daemon's user")

// Client returns a client acting as c.
func (b Remote) Client(c Caller) (*api.Client, error) {
	if !c.Local {
		return api.NewTCPClient(b.Addr, c.Token), nil
	}
	if int(c.UID) != os.Getuid() || b.Socket == "" {
		return nil, errOtherUser
	}
	return api.NewUnixClient(b.Socket), nil
}
