package ctld

import (
	"context"
	"time"
)

// pendingCommit is one loop batch to store: its rows (nil
// when it changed nothing), the calls to answer and the agent calls to
// start once the rows are stored.
type pendingCommit struct {
	b      *Batch
	calls  []*call
	outbox []func()
}

// committer stores the loop's batches, on the loop's goroutine: the loop
// is blocked while a batch is stored, so every call that arrives in the
// meantime waits in the calls channel and is served, and stored, by the
// next batch together (group commit: the number of fsyncs follows the
// disk's speed, not the number of requests; a lone client waits for
// exactly one commit and no hand-off). A batch's calls are answered, and
// its agent calls started, only after its rows are stored.
//
// A failed commit means failed: the calls that changed something are
// answered "Unable to save state", the batch's agent calls are dropped
// and the loop's state is reloaded from the store (Controller.rollback),
// so nothing answered as failed is kept in memory or stored later; calls
// that only read are answered from memory as usual (savefail.go).
//
// (Committing on a goroutine of its own while the loop runs the next
// batch was measured: on this 2-core machine under load it cost about 10%
// more CPU per job, smaller batches and the hand-off, for no gain.)
type committer struct {
	c *Controller
}

// commit stores p, then answers its calls and starts its agent calls.
func (cm *committer) commit(p pendingCommit) {
	var err error
	if p.b != nil && !p.b.Empty() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = cm.c.store.Commit(ctx, p.b)
		cancel()
	}
	if err != nil {
		cm.c.saveFailed(err)
		failWrites(p.calls, err)
		cm.c.rollback(cm.c.ls)
	} else {
		if p.b != nil && !p.b.Empty() {
			cm.c.saveWorks()
			cm.c.recordCommitted(p.b) // staterecord.go
		}
		// Agents hear only of what is stored (a launch is never sent
		// for a start a restarted controller would not know).
		for _, f := range p.outbox {
			go f()
		}
	}
	for _, cl := range p.calls {
		close(cl.reply)
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
