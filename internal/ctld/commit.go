package ctld

import (
	"context"
	"sync"
	"time"
)

// pendingCommit is one loop batch waiting for the store: its rows (nil
// when it changed nothing), the calls to answer and the agent calls to
// start once the rows are stored.
type pendingCommit struct {
	b      *Batch
	calls  []*call
	outbox []func()
}

// committer stores the loop's batches in order, on its own goroutine.
// Everything queued while a commit runs is merged into the next one
// transaction (group commit), so the number of fsyncs follows the disk's
// speed, not the number of requests, and a lone client waits for exactly
// one commit. A batch's calls are answered, and its agent calls started,
// only after its rows are stored; a failed commit answers errors and is
// retried with the next batch (its rows and agent calls carried over).
type committer struct {
	c     *Controller
	mu    sync.Mutex
	queue []pendingCommit
	wake  chan struct{}
	quit  chan struct{}
	done  chan struct{}

	// carried rows and agent calls of a failed commit (committer
	// goroutine only).
	carry       *Batch
	carryOutbox []func()
}

func newCommitter(c *Controller) *committer {
	cm := &committer{c: c, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go cm.run()
	return cm
}

// enqueue hands a batch over; it never blocks on the store.
func (cm *committer) enqueue(p pendingCommit) {
	cm.mu.Lock()
	cm.queue = append(cm.queue, p)
	cm.mu.Unlock()
	select {
	case cm.wake <- struct{}{}:
	default:
	}
}

// close stores what is queued, answers it and stops the goroutine.
func (cm *committer) close() {
	close(cm.quit)
	<-cm.done
}

func (cm *committer) run() {
	defer close(cm.done)
	for {
		select {
		case <-cm.wake:
		case <-cm.quit:
			cm.flush()
			return
		}
		cm.flush()
	}
}

// flush commits everything queued as one transaction and answers it.
func (cm *committer) flush() {
	cm.mu.Lock()
	work := cm.queue
	cm.queue = nil
	cm.mu.Unlock()
	if len(work) == 0 {
		return
	}
	b := cm.carry
	for _, p := range work {
		b = mergeBatch(b, p.b)
	}
	var err error
	if b != nil && !b.Empty() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = cm.c.store.Commit(ctx, b)
		cancel()
	}
	outbox := cm.carryOutbox
	for _, p := range work {
		outbox = append(outbox, p.outbox...)
	}
	if err != nil {
		cm.c.log.Error("store commit failed; answering errors, retrying with the next batch", "err", err)
		cm.carry, cm.carryOutbox = b, outbox
		for _, p := range work {
			failCalls(p.calls, err)
		}
	} else {
		cm.carry, cm.carryOutbox = nil, nil
		// Agents hear only of what is stored (a launch is never sent
		// for a start a restarted controller would not know).
		for _, f := range outbox {
			go f()
		}
	}
	for _, p := range work {
		for _, cl := range p.calls {
			close(cl.reply)
		}
	}
}

// mergeBatch appends b's rows to dst (either may be nil). A job, run or
// node written twice keeps only its later row: the rows of a later batch
// describe a later state.
func mergeBatch(dst, b *Batch) *Batch {
	if b == nil {
		return dst
	}
	if dst == nil {
		return b
	}
	dst.Jobs = mergeRows(dst.Jobs, b.Jobs, func(r JobRow) uint64 { return uint64(r.ID) })
	dst.Runs = mergeRows(dst.Runs, b.Runs, func(r RunRow) uint64 { return uint64(r.JobID)<<32 | uint64(uint32(r.Restart)) })
	dst.Events = append(dst.Events, b.Events...)
	dst.Nodes = mergeNodes(dst.Nodes, b.Nodes)
	if len(b.Meta) > 0 && dst.Meta == nil {
		dst.Meta = map[string]string{}
	}
	for k, v := range b.Meta {
		dst.Meta[k] = v
	}
	return dst
}

// mergeRows appends later to rows, a later row replacing an earlier one
// with the same key in place.
func mergeRows[R any](rows, later []R, key func(R) uint64) []R {
	if len(later) == 0 {
		return rows
	}
	at := make(map[uint64]int, len(rows))
	for i, r := range rows {
		at[key(r)] = i
	}
	for _, r := range later {
		if i, ok := at[key(r)]; ok {
			rows[i] = r
			continue
		}
		at[key(r)] = len(rows)
		rows = append(rows, r)
	}
	return rows
}

func mergeNodes(rows, later []NodeRow) []NodeRow {
	for _, n := range later {
		replaced := false
		for i := range rows {
			if rows[i].Name == n.Name {
				rows[i], replaced = n, true
				break
			}
		}
		if !replaced {
			rows = append(rows, n)
		}
	}
	return rows
}
