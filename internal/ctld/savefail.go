package ctld

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// saveHealth records whether the store takes writes: set by the loop
// when a commit fails, cleared when one succeeds; read by any goroutine
// (scontrol ping, sdiag, the write routes).
type saveHealth struct {
	mu    sync.Mutex
	since time.Time
	err   error
	fails int
}

// saveProbeKey is the ctld_meta row the loop writes, while state save
// fails, to learn when the store takes writes again.
const saveProbeKey = "state_save_probe"

// StateSaveError returns why state save is failing ("" when it works):
// "state save failing since <time>: <error>".
func (c *Controller) StateSaveError() string {
	c.save.mu.Lock()
	defer c.save.mu.Unlock()
	if c.save.err == nil {
		return ""
	}
	return fmt.Sprintf("state save failing since %s (%d failed commits): %v",
		c.save.since.Format(time.RFC3339), c.save.fails, c.save.err)
}

// saveFailed records a failed commit; the first of a run is logged as
// an error naming the cause.
func (c *Controller) saveFailed(err error) {
	c.save.mu.Lock()
	first := c.save.err == nil
	if first {
		c.save.since = c.now()
	}
	c.save.err = err
	c.save.fails++
	c.save.mu.Unlock()
	if first {
		c.log.Error("state save failing: changes that cannot be stored are refused and rolled back; retrying every tick",
			"err", err, "state_dir", c.opts.StateDir)
	}
}

// saveWorks clears the failure after a successful commit.
func (c *Controller) saveWorks() {
	c.save.mu.Lock()
	was, since, fails := c.save.err, c.save.since, c.save.fails
	c.save.err, c.save.fails = nil, 0
	c.save.mu.Unlock()
	if was != nil {
		c.log.Info("state save resumed", "failed_for", c.now().Sub(since).Round(time.Second), "failed_commits", fails)
	}
}

// saving reports whether the store took the last commit.
func (c *Controller) saving() bool {
	c.save.mu.Lock()
	defer c.save.mu.Unlock()
	return c.save.err == nil
}

// refuseWhileFailing answers a write request at once while state save
// fails: nothing it changed could be stored (the loop would roll it back).
func (c *Controller) refuseWhileFailing() error {
	if msg := c.StateSaveError(); msg != "" {
		return api.Errorf(http.StatusServiceUnavailable, "Unable to save state, request refused: %s", msg)
	}
	return nil
}

// probeSave tries a one-row commit while state save fails, so writes
// resume by themselves once the disk has room again (called on the
// loop's tick).
func (c *Controller) probeSave() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := &Batch{Meta: map[string]string{saveProbeKey: strconv.FormatInt(c.now().Unix(), 10)}}
	if err := c.store.Commit(ctx, b); err != nil {
		c.saveFailed(err)
		return
	}
	c.saveWorks()
	c.ls.wantSched = true
}

// rollback replaces the loop's state with the stored one after a failed
// commit: what the batch changed (a submission, an update, a start) is
// gone from memory as it is from the store, so an error answered is an
// error in fact (a resubmission makes one job, not two). The runtime
// the store never held (agent registrations, sdiag counters) is kept.
func (c *Controller) rollback(old *loopState) {
	ls, err := newLoopState(context.Background(), c)
	if err != nil {
		c.log.Error("cannot reload the stored state after a failed commit; memory keeps the unstored changes", "err", err)
		return
	}
	ls.adopt(old)
	limitBooks.Delete(old)
	c.ls = ls
}

// adopt carries old's runtime into a state reloaded from the store:
// registered agents keep their nodes up, confirmed launches stay
// confirmed, counters keep counting.
func (ls *loopState) adopt(old *loopState) {
	ls.started, ls.lastBackfill, ls.lastBatch = old.started, old.lastBackfill, old.lastBatch
	ls.lastSched, ls.lastPrio, ls.stats, ls.ext = old.lastSched, old.lastPrio, old.stats, old.ext
	now := ls.c.now()
	for i := range old.nodes {
		if !old.nodes[i].registered || i >= len(ls.nodes) {
			continue
		}
		ls.nodes[i] = old.nodes[i]
		n := &ls.st.Cluster.Nodes[i]
		if n.State.Base() == sched.NodeUnknown {
			flags := n.State & (sched.NodeFlagDrain | sched.NodeFlagFail)
			_ = ls.st.SetNodeState(n.Name, sched.NodeIdle|flags, n.Reason, now)
		}
		n.State &^= sched.NodeFlagNoRespond
	}
	for id, restarts := range old.launched {
		if j := ls.st.Job(id); j != nil && isActive(j) && j.RestartCount == restarts {
			ls.launched[id] = restarts
		}
	}
}

// wroteMark counts the changes a call marked for storing: a call that
// moved it wrote something.
func (ls *loopState) wroteMark() int {
	m := len(ls.dirty) + len(ls.events) + len(ls.nodeDirty) + len(ls.outbox) + ls.marks
	if ls.metaDirty {
		m++
	}
	return m
}
