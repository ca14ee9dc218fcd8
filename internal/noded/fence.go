package noded

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// Fencing (issue 17, finding 6): when a node's agent dies and its jobs'
// processes survive (they run under the resident supervisor), the
// controller marks the node DOWN after SlurmdTimeout and requeues the
// jobs elsewhere while the old copies still run: the job runs twice at
// once. The controller tells each agent at registration how long its
// supervisor may go without an agent (a fraction of SlurmdTimeout); a
// supervisor left alone that long with jobs kills them, so they are gone
// before anything can requeue them. Slurm does not do this.

// setFence records the fencing delay the controller gave at registration
// and passes it to the supervisor.
func (a *Agent) setFence(sec int) {
	if a.fenceSec.Swap(int64(sec)) == int64(sec) {
		return
	}
	a.supMu.Lock()
	sc := a.sup
	a.supMu.Unlock()
	if sc != nil && !sc.gone() {
		_ = sc.notify(supMsg{Op: "fence", Tick: uint64(sec)})
	}
}

// sendFence tells a newly attached supervisor the fencing delay and
// keeps telling it the agent is alive, four times per delay, until the
// connection ends: a stopped agent (SIGSTOP) falls silent and is fenced
// like a dead one.
func (a *Agent) sendFence(sc *supClient) {
	if sec := a.fenceSec.Load(); sec > 0 {
		_ = sc.notify(supMsg{Op: "fence", Tick: uint64(sec)})
	}
	go func() {
		for {
			every := time.Second
			if sec := a.fenceSec.Load(); sec > 0 {
				every = min(every, time.Duration(sec)*time.Second/4)
			}
			select {
			case <-sc.dead:
				return
			case <-time.After(every):
			}
			if sc.notify(supMsg{Op: "alive"}) != nil {
				return
			}
		}
	}()
}

// silentFloor is the shortest silence of a connected agent that is
// fenced: an agent that stops talking (SIGSTOP, a hang) but keeps its
// connection; shorter fencing delays count disconnection only, so that
// a loaded machine's scheduling hiccup never kills jobs.
const silentFloor = 10 * time.Second

// heardAgent records that a connected agent said something.
func (s *supervisor) heardAgent() {
	s.mu.Lock()
	s.agentSeen = time.Now()
	s.mu.Unlock()
}

// fenceIfAlone kills every job's process group when no agent has been
// connected for the fencing delay, or the connected one has said
// nothing ("alive" included) for the delay and at least silentFloor.
// Called from the supervisor's one-second loop.
func (s *supervisor) fenceIfAlone(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fenceAfter <= 0 || len(s.jobs) == 0 {
		return
	}
	var quiet time.Duration
	switch {
	case len(s.conns) == 0 && now.Sub(s.agentGone) >= s.fenceAfter:
		quiet = now.Sub(s.agentGone)
	case len(s.conns) > 0 && now.Sub(s.agentSeen) >= max(s.fenceAfter, silentFloor):
		quiet = now.Sub(s.agentSeen)
	default:
		return
	}
	for pid, run := range s.jobs {
		fmt.Fprintf(os.Stderr, "%s fencing: no word from a node agent for %v; killing job %d (pid %d) before the controller requeues it\n",
			now.Format(time.RFC3339), quiet.Round(time.Second), run.job, pid)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	s.fenceAfter = 0 // once: the reaping records the exits
}
