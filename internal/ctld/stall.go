package ctld

import "time"

// creditStall keeps the controller's own stalls from counting as its
// nodes' silence (issue 17, chaos test): a controller that was stopped
// (SIGSTOP), starved or suspended for longer than SlurmdTimeout would
// otherwise wake up, find every node silent since before the stall, set
// them all DOWN and requeue jobs that still run on them, before it had
// read the heartbeats waiting for it. The ticks come every TickInterval;
// a longer gap between two is time the loop did not run, and every node
// is credited with it (never beyond now), so that a node is DOWN only
// after SlurmdTimeout of silence the controller was there to hear.
// Called on each tick, with the real time (not Options.Now: a test's
// clock may jump on purpose).
func (c *Controller) creditStall(ls *loopState, real time.Time) {
	gap := real.Sub(c.lastTick) - c.opts.TickInterval
	c.lastTick = real
	if gap < c.opts.TickInterval {
		return
	}
	now := c.now()
	for i := range ls.nodes {
		ls.nodes[i].lastHeard = earlier(ls.nodes[i].lastHeard.Add(gap), now)
	}
	ls.started = earlier(ls.started.Add(gap), now)
	if gap >= time.Second {
		c.log.Warn("the controller did not run for a while: its nodes' silence meanwhile is not counted", "stalled", gap.Round(time.Millisecond))
	}
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
