package noded

import (
	"context"
	"io"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// controllerLoop registers with the controller, sends heartbeats and
// delivers job events, retrying with back-off while the controller is
// unreachable (events are kept on disk until acknowledged).
func (a *Agent) controllerLoop(ctx context.Context) {
	defer a.wg.Done()
	registered := false
	interval := a.cfg.HeartbeatInterval
	retry := 500 * time.Millisecond
	for {
		wait := interval
		if !registered {
			info := a.Info()
			info.Load = hostLoad()
			resp, err := a.ctl.Register(ctx, api.RegisterRequest{Node: info, Jobs: a.Jobs()})
			if err != nil {
				a.log.Warn("registration failed", "err", err)
				wait, retry = retry, min(retry*2, 10*time.Second)
			} else {
				a.bootID.Store(resp.BootID)
				a.setFence(resp.FenceAfterSec) // fence.go
				registered, retry = true, 500*time.Millisecond
				if resp.HeartbeatIntervalSec > 0 {
					interval = time.Duration(resp.HeartbeatIntervalSec) * time.Second
					wait = interval
				}
			}
		} else {
			resp, err := a.ctl.Heartbeat(ctx, api.Heartbeat{Node: a.cfg.Name, Time: time.Now(), Jobs: a.Jobs(), Load: hostLoad(),
				Drain: a.drainReason()}) // supdrain.go
			switch {
			case err != nil:
				a.log.Warn("heartbeat failed", "err", err)
			case resp.Reregister:
				registered, wait = false, 0
			}
		}
		if registered && !a.reportEvents(ctx) {
			wait = min(wait, retry)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-a.reportWake:
			t.Stop()
			if registered {
				a.reportEvents(ctx)
			}
		case <-a.reregister:
			t.Stop()
			registered = false
		}
	}
}

// watchController keeps a watch stream open to the controller. The stream
// ends when the controller stops; the agent then tries again every
// watchRetry, and the first watch answered by a controller with another
// boot id than the one the node registered with (a restarted controller,
// which knows no node until it registers) triggers the registration at
// once, instead of at the next heartbeat.
func (a *Agent) watchController(ctx context.Context) {
	defer a.wg.Done()
	for ctx.Err() == nil {
		boot, body, err := a.ctl.Watch(ctx)
		if err == nil {
			if reg, _ := a.bootID.Load().(string); reg != "" && boot != reg {
				a.log.Info("controller restarted; registering again", "boot_id", boot)
				select {
				case a.reregister <- struct{}{}:
				default:
				}
			}
			io.Copy(io.Discard, body)
			body.Close()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(watchRetry):
		}
	}
}

// watchRetry is how often an agent looks for a controller that went away.
const watchRetry = 200 * time.Millisecond

// reportEvents sends every finished, unacknowledged job and forgets the
// ones the controller acknowledged. It reports whether all went through.
func (a *Agent) reportEvents(ctx context.Context) bool {
	a.mu.Lock()
	var ev api.JobEvents
	now := time.Now()
	for _, j := range a.jobs {
		if api.AgentJobFinal(j.rec.State) && !j.rec.Reported && !j.epilogRunning {
			ev.Events = append(ev.Events, api.JobEvent{Node: a.cfg.Name, Job: j.rec.status(now)})
		}
	}
	a.mu.Unlock()
	if len(ev.Events) == 0 {
		return true
	}
	if err := a.ctl.ReportEvents(ctx, ev); err != nil {
		a.log.Warn("job event delivery failed, will retry", "err", err, "events", len(ev.Events))
		return false
	}
	a.mu.Lock()
	for _, e := range ev.Events {
		j, ok := a.jobs[e.Job.JobID]
		if !ok || j.rec.Req.RestartCount != e.Job.RestartCount {
			continue
		}
		// No need to mark the record first: if the agent dies before the
		// removal, its successor reports the job again and the controller
		// ignores the repeat.
		a.drop(j)
		delete(a.jobs, e.Job.JobID)
		a.rememberDelivered(e.Job.JobID, j.rec.Req.RestartCount)
	}
	a.mu.Unlock()
	a.flushForgotten()
	return true
}

// flushForgotten tells the supervisor which exit statuses the controller
// has acknowledged, so that its journal drops them; the ones not sent (no
// supervisor attached) wait for the next delivery.
func (a *Agent) flushForgotten() {
	a.mu.Lock()
	keys := a.forgotten
	a.forgotten = nil
	a.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	a.supMu.Lock()
	sc := a.sup
	a.supMu.Unlock()
	if sc == nil || sc.gone() || sc.notify(supMsg{Op: "forget", Jobs: keys}) != nil {
		a.mu.Lock()
		a.forgotten = append(a.forgotten, keys...)
		a.mu.Unlock()
	}
}

// maxDelivered bounds the agent's memory of delivered runs; past it the
// oldest knowledge is dropped wholesale (a relaunch race lasts seconds).
const maxDelivered = 100000

// rememberDelivered records that run restart of job id ended and the
// controller knows it. The caller holds a.mu.
func (a *Agent) rememberDelivered(id uint32, restart int) {
	if len(a.delivered) >= maxDelivered {
		clear(a.delivered)
	}
	a.delivered[id] = restart
}
