package noded

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// attachHistoryMax bounds the output a step keeps for clients that attach
// later (sattach replays it first, as slurmstepd replays its buffered
// output to a new client).
const attachHistoryMax = 1 << 20

// attachments are sattach's read-only clients of a step: every stdout,
// stderr and exit frame is kept (up to attachHistoryMax) and mirrored to
// them; the Done frame ends each client's stream.
type attachments struct {
	mu      sync.Mutex
	history []attachFrame
	size    int
	clients []*attachClient
	done    []byte // the Done frame's payload once sent
	ended   bool
}

type attachFrame struct {
	kind byte
	task uint32
	p    []byte
}

type attachClient struct {
	w    io.Writer
	gone chan struct{}
}

// record keeps and mirrors one frame of the step (nil-safe).
func (at *attachments) record(kind byte, task uint32, p []byte) {
	if at == nil || (kind != api.StepFrameStdout && kind != api.StepFrameStderr && kind != api.StepFrameExit && kind != api.StepFrameDone) {
		return
	}
	at.mu.Lock()
	defer at.mu.Unlock()
	if kind == api.StepFrameDone {
		at.ended, at.done = true, append([]byte(nil), p...)
	} else {
		f := attachFrame{kind, task, append([]byte(nil), p...)}
		at.history = append(at.history, f)
		at.size += len(f.p)
		for at.size > attachHistoryMax && len(at.history) > 1 {
			at.size -= len(at.history[0].p)
			at.history = at.history[1:]
		}
	}
	kept := at.clients[:0]
	for _, c := range at.clients {
		if api.WriteStepFrame(c.w, kind, task, p) != nil || kind == api.StepFrameDone {
			close(c.gone)
			continue
		}
		kept = append(kept, c)
	}
	at.clients = kept
}

// add replays the kept output to a new client and mirrors the rest; the
// returned channel closes when its stream is over.
func (at *attachments) add(w io.Writer) <-chan struct{} {
	c := &attachClient{w: w, gone: make(chan struct{})}
	at.mu.Lock()
	defer at.mu.Unlock()
	for _, f := range at.history {
		if api.WriteStepFrame(w, f.kind, f.task, f.p) != nil {
			close(c.gone)
			return c.gone
		}
	}
	if at.ended {
		api.WriteStepFrame(w, api.StepFrameDone, 0, at.done)
		close(c.gone)
		return c.gone
	}
	at.clients = append(at.clients, c)
	return c.gone
}

// drop forgets a client that went away.
func (at *attachments) drop(gone <-chan struct{}) {
	at.mu.Lock()
	defer at.mu.Unlock()
	for i, c := range at.clients {
		if c.gone == gone {
			close(c.gone)
			at.clients = append(at.clients[:i], at.clients[i+1:]...)
			return
		}
	}
}

// serveStepAttach is sattach's connection: an upgraded stream that gets
// the step's output so far, then the rest until the step ends here.
func (a *Agent) serveStepAttach(w http.ResponseWriter, r *http.Request, s *stepRun) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), api.StepIOProtocol) {
		api.WriteAgentError(w, http.StatusBadRequest, "step attach needs Upgrade: "+api.StepIOProtocol)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		api.WriteAgentError(w, http.StatusInternalServerError, "step attach needs an HTTP/1.1 connection")
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	conn.SetDeadline(time.Time{})
	brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + api.StepIOProtocol + "\r\n\r\n")
	if brw.Flush() != nil {
		return
	}
	gone := s.attach.add(conn)
	closed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, brw.Reader) // sattach sends nothing; EOF: it left
		close(closed)
	}()
	select {
	case <-gone:
	case <-closed:
		s.attach.drop(gone)
	}
}
