package ctld

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// HTTP server limits (issue 17, finding 5): a client that sends its
// headers or its body slowly is cut off, a body larger than any valid
// request is refused, and one user cannot occupy more than a bounded
// number of the controller's request handlers.
const (
	// headerTimeout bounds the reading of a request's headers.
	headerTimeout = 10 * time.Second
	// DefaultRequestTimeout bounds the reading of a whole request,
	// headers and body (a 4 MiB script takes well under a second).
	DefaultRequestTimeout = 2 * time.Minute
	// idleTimeout closes a kept-alive connection with no request.
	idleTimeout = 2 * time.Minute
	// DefaultMaxUserRequests is how many requests of one user are
	// served at once; root and SlurmUser are not counted.
	DefaultMaxUserRequests = 64
	// minBodyLimit is the smallest request body limit.
	minBodyLimit = 8 << 20
)

// errRateLimited is slurmctld's answer to a user over its RPC rate
// limit (SlurmctldParameters=rl_enable), which its clients retry.
const errRateLimited = "Rate limit exceeded, please retry momentarily"

// newServer returns an http.Server with the controller's timeouts.
func (c *Controller) newServer(h http.Handler) *http.Server {
	rt := c.opts.RequestTimeout
	if rt <= 0 {
		rt = DefaultRequestTimeout
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: min(headerTimeout, rt), ReadTimeout: rt, IdleTimeout: idleTimeout}
}

// bodyLimit is the largest request body: a script of max_script_size
// with the largest environment, and room for the rest.
func (c *Controller) bodyLimit() int64 {
	return max(c.cfg.SchedulerParameters.MaxScriptSize+MaxEnvironmentBytes+1<<20, minBodyLimit)
}

// userLoad counts the requests each user has in the handlers.
type userLoad struct {
	mu sync.Mutex
	n  map[uint32]int
}

// admit counts a request of w, or refuses it when w already has the
// maximum in progress; release must follow an admit that returned true.
func (c *Controller) admit(w Who) bool {
	if w.UID == 0 || int(w.UID) == c.slurmUID {
		return true
	}
	limit := c.opts.MaxUserRequests
	if limit <= 0 {
		limit = DefaultMaxUserRequests
	}
	c.load.mu.Lock()
	defer c.load.mu.Unlock()
	if c.load.n == nil {
		c.load.n = map[uint32]int{}
	}
	if c.load.n[w.UID] >= limit {
		return false
	}
	c.load.n[w.UID]++
	return true
}

func (c *Controller) release(w Who) {
	if w.UID == 0 || int(w.UID) == c.slurmUID {
		return
	}
	c.load.mu.Lock()
	defer c.load.mu.Unlock()
	if c.load.n[w.UID]--; c.load.n[w.UID] <= 0 {
		delete(c.load.n, w.UID)
	}
}

// limitRequest applies the per-user bound and the body limit to r; ok
// false means the answer was written.
func (c *Controller) limitRequest(rw http.ResponseWriter, r *http.Request, w Who) (done func(), ok bool) {
	if !c.admit(w) {
		c.log.Warn("user over the concurrent request limit", "user", w.User, "uid", w.UID)
		writeErr(rw, &apiErr{status: http.StatusTooManyRequests, msg: errRateLimited})
		return nil, false
	}
	if limit := c.bodyLimit(); r.ContentLength > limit {
		// Refused from its declared length, before any of it is read.
		c.release(w)
		writeErr(rw, &apiErr{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("Request too large: the body exceeds %d bytes", limit)})
		return nil, false
	}
	r.Body = http.MaxBytesReader(rw, r.Body, c.bodyLimit())
	return func() { c.release(w) }, true
}

// bodyTooLarge turns a body over the limit into its answer.
func bodyTooLarge(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return &apiErr{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("Request too large: the body exceeds %d bytes", mb.Limit)}
	}
	return nil
}
