package noded

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// supClient is the agent's connection to the node's resident supervisor
// (`noded-shim serve`). Requests and replies are matched by sequence
// number; exit events are handed to the agent as they arrive.
type supClient struct {
	pid  int
	tick uint64
	conn net.Conn

	wmu     sync.Mutex
	mu      sync.Mutex
	seq     uint64
	pending map[uint64]chan supMsg
	dead    chan struct{}
}

// errSupervisorGone is returned for requests the supervisor did not answer.
var errSupervisorGone = errors.New("job supervisor connection lost")

// supervisorLog is the supervisor's own diagnostics, in the spool.
const supervisorLog = "supervisor.log"

// supervisor returns the live supervisor connection, connecting to the one
// serving this spool or starting it first. Launches call it; a supervisor
// that died is replaced by a new one here.
func (a *Agent) supervisor() (*supClient, error) {
	a.supMu.Lock()
	defer a.supMu.Unlock()
	if a.sup != nil && !a.sup.gone() {
		return a.sup, nil
	}
	if a.closed.Load() {
		return nil, fmt.Errorf("node agent is stopping")
	}
	sc, err := a.dialSupervisor()
	if err != nil {
		if err = a.spawnSupervisor(); err == nil {
			sc, err = a.dialSupervisor()
		}
	}
	if err != nil {
		err = fmt.Errorf("job supervisor: %w", err)
		a.supervisorFailed(err) // supdrain.go
		return nil, err
	}
	a.supFailure.Store(nil)
	a.attach(sc)
	return sc, nil
}

// connectSupervisor attaches to a supervisor left running by a previous
// agent on this spool, if there is one (no new one is started).
func (a *Agent) connectSupervisor() {
	a.supMu.Lock()
	defer a.supMu.Unlock()
	if a.closed.Load() || a.sup != nil && !a.sup.gone() {
		return
	}
	if sc, err := a.dialSupervisor(); err == nil {
		a.attach(sc)
	}
}

// attach makes sc the agent's supervisor; the caller holds supMu. The
// supervisor's list fills in the pids of jobs whose launch a previous
// agent did not see completed, and a full check then picks up every exit
// recorded while no agent listened.
func (a *Agent) attach(sc *supClient) {
	a.sup = sc
	a.mu.Lock()
	a.supPID, a.supTick = sc.pid, sc.tick
	a.mu.Unlock()
	go a.readEvents(sc)
	if jobs, err := sc.list(); err == nil {
		a.mu.Lock()
		for _, sj := range jobs {
			if j, ok := a.jobs[sj.Job]; ok && j.rec.PID == 0 && j.rec.Req.RestartCount == sj.Restart {
				j.rec.PID, j.rec.PIDTick = sj.PID, sj.Tick
				j.rec.ShimPID, j.rec.ShimTick, j.rec.Resident = sc.pid, sc.tick, true
				a.save(j)
			}
		}
		a.mu.Unlock()
	}
	a.forgetStrayExits(sc)
	a.sendFence(sc) // fence.go
	a.fullCheck.Store(true)
	a.nudge()
	a.log.Info("job supervisor attached", "pid", sc.pid)
}

// forgetStrayExits has the supervisor drop the exit statuses of runs the
// agent no longer holds (delivered by an agent that died before it could
// tell the supervisor), with the ones already queued.
func (a *Agent) forgetStrayExits(sc *supClient) {
	a.mu.Lock()
	a.exits.refresh()
	keys := a.forgotten
	a.forgotten = nil
	for _, e := range a.exits.m {
		if j, ok := a.jobs[e.Job]; !ok || j.rec.Req.RestartCount != e.Restart {
			keys = append(keys, supJob{Job: e.Job, Restart: e.Restart})
		}
	}
	a.mu.Unlock()
	if len(keys) > 0 && sc.notify(supMsg{Op: "forget", Jobs: keys}) != nil {
		a.mu.Lock()
		a.forgotten = append(a.forgotten, keys...)
		a.mu.Unlock()
	}
}

func (a *Agent) dialSupervisor() (*supClient, error) {
	addr, err := supervisorAddr(a.cfg.Spool) // supsecret.go
	if err != nil {
		return nil, err
	}
	c, err := net.DialTimeout("unix", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	if uid, ok := peerUID(c); !ok || uid != os.Geteuid() {
		c.Close()
		return nil, fmt.Errorf("the process serving the supervisor socket runs as uid %d, not %d", uid, os.Geteuid())
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReaderSize(c, 64<<10)
	line, err := r.ReadBytes('\n')
	var hello supMsg
	if err == nil {
		err = json.Unmarshal(line, &hello)
	}
	if err != nil || hello.Op != "hello" || hello.PID == 0 {
		c.Close()
		return nil, fmt.Errorf("supervisor greeting: %q %v", line, err)
	}
	c.SetReadDeadline(time.Time{})
	sc := &supClient{pid: hello.PID, tick: hello.Tick, conn: &bufConn{Conn: c, r: r},
		pending: map[uint64]chan supMsg{}, dead: make(chan struct{})}
	return sc, nil
}

// bufConn reads through the buffer that already holds the greeting's
// successors.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// spawnSupervisor starts `noded-shim serve SPOOL` in its own session, so
// that it outlives the agent, and waits for its greeting.
func (a *Agent) spawnSupervisor() error {
	args := append(append([]string{}, a.shim[1:]...), "serve", a.cfg.Spool)
	cmd := exec.Command(a.shim[0], args...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if logf, err := os.OpenFile(filepath.Join(a.cfg.Spool, supervisorLog), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err == nil {
		cmd.Stderr = logf
		defer logf.Close()
	}
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	// The agent reaps its child while alive; the session keeps the
	// supervisor alive after the agent.
	go cmd.Wait()
	line := make(chan []byte, 1)
	go func() {
		b, _ := bufio.NewReader(out).ReadBytes('\n')
		line <- b
	}()
	select {
	case b := <-line:
		var hello supMsg
		if err := json.Unmarshal(b, &hello); err != nil {
			return fmt.Errorf("greeting %q", b)
		}
		if hello.Error != "" {
			// Lost a race with another start: that one serves the spool.
			a.log.Info("job supervisor already running", "msg", hello.Error)
		}
		return nil
	case <-time.After(shimHandshakeTimeout):
		cmd.Process.Kill()
		return fmt.Errorf("did not answer")
	}
}

// readEvents dispatches the supervisor's messages until the connection
// ends; then jobs of that supervisor are tracked from /proc and the spool
// (full checks) until a new supervisor is attached.
func (a *Agent) readEvents(sc *supClient) {
	r := bufio.NewReaderSize(sc.conn, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		var m supMsg
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Op {
		case "reply":
			sc.mu.Lock()
			ch := sc.pending[m.Seq]
			delete(sc.pending, m.Seq)
			sc.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case "exit":
			a.onExit(m)
		}
	}
	sc.mu.Lock()
	close(sc.dead)
	sc.mu.Unlock()
	sc.conn.Close()
	a.mu.Lock()
	if a.supPID == sc.pid {
		a.supPID, a.supTick = 0, 0
	}
	a.mu.Unlock()
	if !a.closed.Load() {
		a.log.Warn("job supervisor connection lost; its jobs are tracked through /proc until they end", "pid", sc.pid)
		// A supervisor that is still there (only the connection broke)
		// is attached again, with its list of running jobs.
		go func() {
			time.Sleep(100 * time.Millisecond)
			a.supMu.Lock()
			stale := a.sup == sc
			a.supMu.Unlock()
			if stale && !a.closed.Load() {
				a.connectSupervisor()
			}
		}()
	}
	a.fullCheck.Store(true)
	a.nudge()
}

func (sc *supClient) gone() bool {
	select {
	case <-sc.dead:
		return true
	default:
		return false
	}
}

func (sc *supClient) close() { sc.conn.Close() }

// call sends m and waits for its reply.
func (sc *supClient) call(m supMsg, timeout time.Duration) (supMsg, error) {
	ch := make(chan supMsg, 1)
	sc.mu.Lock()
	if sc.gone() {
		sc.mu.Unlock()
		return supMsg{}, errSupervisorGone
	}
	sc.seq++
	m.Seq = sc.seq
	sc.pending[m.Seq] = ch
	sc.mu.Unlock()
	data, _ := json.Marshal(&m)
	sc.wmu.Lock()
	sc.conn.SetWriteDeadline(time.Now().Add(timeout))
	_, err := sc.conn.Write(append(data, '\n'))
	sc.wmu.Unlock()
	if err == nil {
		select {
		case rep := <-ch:
			return rep, nil
		case <-sc.dead:
			err = errSupervisorGone
		case <-time.After(timeout):
			err = fmt.Errorf("job supervisor did not answer")
		}
	}
	sc.mu.Lock()
	delete(sc.pending, m.Seq)
	sc.mu.Unlock()
	return supMsg{}, err
}

// notify sends m, which has no reply.
func (sc *supClient) notify(m supMsg) error {
	data, _ := json.Marshal(&m)
	sc.wmu.Lock()
	defer sc.wmu.Unlock()
	sc.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := sc.conn.Write(append(data, '\n'))
	return err
}

func (sc *supClient) list() ([]supJob, error) {
	rep, err := sc.call(supMsg{Op: "list"}, 10*time.Second)
	return rep.Jobs, err
}

// onExit finishes a job from the supervisor's exit event. An event that
// overtakes the end of its Launch call is kept until Launch records the
// job.
func (a *Agent) onExit(m supMsg) {
	ex := exitRecord{WaitStatus: m.WaitStatus, Time: m.Time, Error: m.Error, RU: m.RU, recorded: true}
	a.mu.Lock()
	defer a.mu.Unlock()
	j, ok := a.jobs[m.Job]
	if !ok || j.rec.Req.RestartCount != m.Restart {
		if a.launching[m.Job] {
			a.early[m.Job] = earlyExit{restart: m.Restart, ex: ex}
		}
		return
	}
	if api.AgentJobFinal(j.rec.State) {
		return
	}
	a.finish(j, ex, time.Now())
	a.wakeReport()
}

// earlyExit is an exit event that arrived before its Launch call ended.
type earlyExit struct {
	restart int
	ex      exitRecord
}

// wakeReport asks the controller loop to deliver finished jobs now.
func (a *Agent) wakeReport() {
	select {
	case a.reportWake <- struct{}{}:
	default:
	}
}
