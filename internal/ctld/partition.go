package ctld

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/duration"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/priority"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// Partition administration (scontrol create|update|delete partition).
//
// A change is applied to the live state at once (the next scheduling
// cycle sees it; sinfo, squeue and sbatch see it with the answer), then
// stored before the answer in the table ctld_ext_partitions: one row per
// partition changed since slurm.conf, holding the scontrol words applied
// to it, whether it was created from scratch or deleted, and a
// fingerprint of slurm.conf's own definition of that partition when the
// row was started. On restart the rows are applied over slurm.conf; a row
// whose fingerprint no longer matches (the administrator edited the
// partition in slurm.conf, added or removed it) is dropped: a changed
// slurm.conf wins (docs/differences.md).

// partRow is one stored partition change.
type partRow struct {
	Name string
	// ConfFP is the fingerprint of slurm.conf's definition of the
	// partition when the row was started ("" = not in slurm.conf).
	ConfFP string
	// Scratch marks a partition made by scontrol create: it is built from
	// the defaults and Words, not from slurm.conf's line.
	Scratch bool
	// Deleted marks a slurm.conf partition deleted by scontrol.
	Deleted bool
	// Seq orders creations and deletions (the partition list's order,
	// which the jobs' stored partition indices refer to).
	Seq int64
	// Words are the KEY=VALUE words applied, oldest first.
	Words []string
}

// partBook is the loop's partition bookkeeping (kept in prioState).
type partBook struct {
	rows     map[string]*partRow
	restored bool
	// early marks a restore made by recover, before the jobs were
	// replayed (the recovery hook is in place).
	early bool
}

// partDef is a partition being built: the core's record and the
// TRESBillingWeights as written (the core does not keep them).
type partDef struct {
	P       sched.Partition
	Billing string
}

const partSchema = `CREATE TABLE IF NOT EXISTS ctld_ext_partitions (name TEXT PRIMARY KEY, conf_fp TEXT NOT NULL,
	scratch INTEGER NOT NULL, deleted INTEGER NOT NULL, seq BIGINT NOT NULL, words TEXT NOT NULL)`

const upsertPart = `INSERT INTO ctld_ext_partitions (name, conf_fp, scratch, deleted, seq, words) VALUES (?, ?, ?, ?, ?, ?)
	ON CONFLICT (name) DO UPDATE SET conf_fp = excluded.conf_fp, scratch = excluded.scratch,
	deleted = excluded.deleted, seq = excluded.seq, words = excluded.words`

// partTables remembers the stores whose partitions table exists.
var partTables sync.Map

// partRestoreQueued remembers the controllers whose restore is queued.
var partRestoreQueued sync.Map

// partDB returns the SQL store holding the partition rows (nil for a
// store that is not ours: changes then live in memory only).
func (c *Controller) partDB(ctx context.Context) (*sqlStore, error) {
	s, ok := c.store.(*sqlStore)
	if !ok {
		return nil, nil
	}
	if _, done := partTables.Load(s); done {
		return s, nil
	}
	if _, err := s.db.ExecContext(ctx, partSchema); err != nil {
		return nil, fmt.Errorf("store: partitions table: %w", err)
	}
	partTables.Store(s, true)
	return s, nil
}

// loadPartRows reads the stored partition rows.
func (c *Controller) loadPartRows(ctx context.Context) ([]*partRow, error) {
	s, err := c.partDB(ctx)
	if s == nil || err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT name, conf_fp, scratch, deleted, seq, words FROM ctld_ext_partitions`)
	if err != nil {
		return nil, fmt.Errorf("store: partitions: %w", err)
	}
	defer rows.Close()
	var out []*partRow
	for rows.Next() {
		var r partRow
		var scratch, deleted int
		var words string
		if err := rows.Scan(&r.Name, &r.ConfFP, &scratch, &deleted, &r.Seq, &words); err != nil {
			return nil, fmt.Errorf("store: partitions: %w", err)
		}
		r.Scratch, r.Deleted = scratch != 0, deleted != 0
		if err := json.Unmarshal([]byte(words), &r.Words); err != nil {
			return nil, fmt.Errorf("store: partition %q: %w", r.Name, err)
		}
		out = append(out, &r)
	}
	return out, rows.Err()
}

// savePartRow stores r, or removes the row of name when r is nil.
func (c *Controller) savePartRow(ctx context.Context, name string, r *partRow) error {
	s, err := c.partDB(ctx)
	if s == nil || err != nil {
		return err
	}
	if r == nil {
		_, err = s.db.ExecContext(ctx, s.rebind(`DELETE FROM ctld_ext_partitions WHERE name = ?`), name)
	} else {
		words, _ := json.Marshal(r.Words)
		_, err = s.db.ExecContext(ctx, s.rebind(upsertPart), r.Name, r.ConfFP, b2i(r.Scratch), b2i(r.Deleted), r.Seq,
			string(words))
	}
	if err != nil {
		return fmt.Errorf("store: partition %q: %w", name, err)
	}
	return nil
}

// registerPartitionAdmin adds the endpoints behind `scontrol create|update|
// delete partition`, and queues the restore of the stored changes as the
// loop's first call (clientMux runs before anything is served).
func (c *Controller) registerPartitionAdmin(mux *http.ServeMux) {
	mux.HandleFunc("POST "+api.PathPartitionAdmin, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.PartitionCommandRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		setRPC(ctx, partitionRPC(req.Verb))
		return c.do(ctx, func(ls *loopState) (any, error) { return ls.partitionCommand(w, req) })
	}))
	mux.HandleFunc("GET "+api.PathPartitionBilling, c.endpoint(func(ctx context.Context, _ Who, _ *http.Request) (any, error) {
		return c.do(ctx, func(ls *loopState) (any, error) {
			out := api.PartitionBillingResponse{Weights: map[string]string{}}
			for i := range ls.st.Cluster.Partitions {
				name := ls.st.Cluster.Partitions[i].Name
				if w := ls.prio.billingTextOf(name); w != "" {
					out.Weights[name] = w
				}
			}
			return out, nil
		})
	}))
	if _, queued := partRestoreQueued.LoadOrStore(c, true); !queued {
		cl := &call{reply: make(chan struct{}), fn: func(ls *loopState) (any, error) {
			ls.ensurePartitions()
			return nil, nil
		}}
		select {
		case c.calls <- cl:
		default:
		}
	}
}

// ensurePartitions restores the stored partition changes once. A
// restore after the jobs were replayed also replays the jobs that named
// a partition slurm.conf does not define (their replay failed).
func (ls *loopState) ensurePartitions() {
	if ls.prio.parts.restored {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Without the policy no limit refuses a replayed job, and installing
	// it again re-resolves every job's association and usage counters
	// against the restored partitions.
	pol := ls.st.Policy
	ls.st.SetPolicy(nil)
	defer ls.st.SetPolicy(pol)
	added, err := ls.restorePartitions(ctx)
	if err != nil {
		ls.c.log.Error("cannot restore partition changes", "err", err)
		return
	}
	if added {
		ls.replayMissing(ctx)
	}
	ls.refreshPendingPriorities(ls.c.now())
	ls.wantSched = true
}

// recoverPartitions is the recovery hook: called by recover before the
// reservations and jobs are replayed, it puts the stored partition
// changes back first, so that every job and reservation finds its
// partition at the index it had.
func (ls *loopState) recoverPartitions(ctx context.Context) {
	ls.prio.parts.early = true
	if _, err := ls.restorePartitions(ctx); err != nil {
		ls.c.log.Error("cannot restore partition changes", "err", err)
	}
}

// restorePartitions applies the stored rows over slurm.conf's partitions
// (see the file comment for the rule). It reports whether a partition
// slurm.conf does not define was added. Called from recover (before the
// jobs) or, failing that hook, as the loop's first call.
func (ls *loopState) restorePartitions(ctx context.Context) (bool, error) {
	b := &ls.prio.parts
	b.restored = true
	b.rows = map[string]*partRow{}
	rows, err := ls.c.loadPartRows(ctx)
	if err != nil || len(rows) == 0 {
		return false, err
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Seq < rows[j].Seq })
	list := slices.Clone(ls.st.Cluster.Partitions)
	billing := map[string]string{}
	for _, cp := range ls.c.cfg.Partitions {
		billing[cp.Name] = cp.TRESBillingWeights
	}
	added := false
	for _, r := range rows {
		if r.ConfFP != ls.confFingerprint(r.Name) {
			ls.c.log.Warn("slurm.conf changed partition since scontrol changed it; slurm.conf wins", "partition", r.Name)
			_ = ls.c.savePartRow(ctx, r.Name, nil)
			continue
		}
		i := slices.IndexFunc(list, func(p sched.Partition) bool { return p.Name == r.Name })
		if r.Deleted {
			if i >= 0 {
				list = slices.Delete(list, i, i+1)
			}
			b.rows[r.Name] = r
			continue
		}
		d := partDef{P: newPartition(r.Name), Billing: ""}
		if !r.Scratch && i >= 0 {
			d = partDef{P: clonePartition(&list[i]), Billing: billing[r.Name]}
		}
		if err := ls.applyPartitionWords(&d, r.Words); err != nil {
			ls.c.log.Error("stored partition change no longer applies; dropped", "partition", r.Name, "err", err)
			_ = ls.c.savePartRow(ctx, r.Name, nil)
			continue
		}
		switch {
		case i >= 0: // slurm.conf's partition, changed or created again in its place
			list[i] = d.P
		default:
			list = append(list, d.P)
			added = true
		}
		billing[r.Name] = d.Billing
		b.rows[r.Name] = r
	}
	keepLastDefault(list)
	ls.confDefaultIfNone(list)
	if err := ls.st.SetPartitions(list); err != nil {
		return false, fmt.Errorf("restore partitions: %w", err)
	}
	for name, w := range billing {
		ls.prio.setBilling(name, w)
	}
	ls.syncPrioPartitions()
	return added, nil
}

// keepLastDefault leaves Default on the last partition that has it
// (scontrol Default=YES replaced the earlier default; stored rows also
// carry the Default=NO their change implied).
func keepLastDefault(list []sched.Partition) {
	last := -1
	for i := range list {
		if list[i].Default {
			last = i
		}
	}
	for i := range list {
		list[i].Default = i == last
	}
}

// confDefaultIfNone gives slurm.conf's default partition back its
// Default flag when the restored list has no default (the change that had
// moved the default was dropped because slurm.conf changed).
func (ls *loopState) confDefaultIfNone(list []sched.Partition) {
	for i := range list {
		if list[i].Default {
			return
		}
	}
	for _, cp := range ls.c.cfg.Partitions {
		if cp.Default || ls.c.cfg.DefaultPartition == cp.Name {
			for i := range list {
				if list[i].Name == cp.Name {
					list[i].Default = true
					return
				}
			}
		}
	}
}

// replayMissing replays the stored jobs the recovery could not put back
// (they named a partition only the stored changes define).
func (ls *loopState) replayMissing(ctx context.Context) {
	since := ls.c.now().Add(-max(ls.c.cfg.MinJobAge, time.Minute))
	snap, err := ls.c.store.Load(ctx, since)
	if err != nil {
		ls.c.log.Error("cannot reload jobs after restoring partitions", "err", err)
		return
	}
	next := ls.st.NextJobID
	for _, row := range snap.Jobs {
		if ls.st.Job(sched.JobID(row.ID)) != nil {
			continue
		}
		var rec jobRecord
		if err := json.Unmarshal(row.Data, &rec); err != nil || rec.Job == nil {
			continue
		}
		if err := ls.replay(&rec); err != nil {
			ls.c.log.Error("cannot recover job; its record stays in the store", "job", row.ID, "err", err)
			continue
		}
		next = max(next, rec.Job.ID+1)
	}
	ls.st.NextJobID = next
}

// confFingerprint identifies slurm.conf's definition of partition name
// ("" when slurm.conf has none).
func (ls *loopState) confFingerprint(name string) string {
	for _, cp := range ls.c.cfg.Partitions {
		if cp.Name == name {
			data, err := json.Marshal(struct {
				P       *conf.Partition
				Default bool
			}{cp, ls.c.cfg.DefaultPartition == cp.Name})
			if err != nil {
				data = []byte(fmt.Sprintf("%+v", *cp))
			}
			sum := sha256.Sum256(data)
			return hex.EncodeToString(sum[:12])
		}
	}
	return ""
}

// newPartition is a partition with slurm.conf's defaults (State=UP,
// MaxTime=UNLIMITED, no node, every limit unlimited).
func newPartition(name string) sched.Partition {
	return sched.Partition{Name: name, Index: -1, MaxTime: sched.Infinite, MaxNodes: -1, MaxCPUsPerNode: -1,
		PriorityJobFactor: 1, PriorityTier: 1, OverSubscribe: sched.OverSubscribe{Mode: sched.OverSubscribeNo, Count: 1}}
}

// clonePartition copies p without sharing its lists.
func clonePartition(p *sched.Partition) sched.Partition {
	q := *p
	q.NodeList = slices.Clone(p.NodeList)
	q.AllowQOS, q.DenyQOS = slices.Clone(p.AllowQOS), slices.Clone(p.DenyQOS)
	q.AllowAccounts, q.DenyAccounts = slices.Clone(p.AllowAccounts), slices.Clone(p.DenyAccounts)
	q.AllowGroups = slices.Clone(p.AllowGroups)
	q.Nodes, q.TRES = nil, nil
	return q
}

// usageErr is scontrol's own complaint about the command's words.
func usageErr(format string, a ...any) error {
	return &apiErr{status: http.StatusBadRequest, msg: fmt.Sprintf(format, a...), reason: api.PartitionUsageReason}
}

// partitionName finds PartitionName= in the words (scontrol's
// "PartitionName must be given." otherwise).
func partitionNameOf(words []string) (string, []string, error) {
	var rest []string
	name, found := "", false
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		if strings.EqualFold(k, "PartitionName") {
			name, found = v, true
			continue
		}
		rest = append(rest, w)
	}
	switch {
	case !found || name == "":
		return "", nil, usageErr("PartitionName must be given.")
	case strings.EqualFold(name, "DEFAULT"):
		return "", nil, usageErr(`PartitionName cannot be "DEFAULT".`)
	}
	return name, rest, nil
}

// partitionCommand runs one scontrol partition command on the loop:
// words are checked first (scontrol's usage errors), then the caller's
// privileges (operators, administrators, root), then the change is
// applied and stored before the answer.
func (ls *loopState) partitionCommand(w Who, req api.PartitionCommandRequest) (api.PartitionCommandResponse, error) {
	ls.ensurePartitions()
	name, words, err := partitionNameOf(req.Words)
	if err != nil {
		return api.PartitionCommandResponse{}, err
	}
	if req.Verb == api.PartitionDelete && len(words) > 0 {
		return api.PartitionCommandResponse{}, usageErr("too many arguments for keyword")
	}
	if req.Verb != api.PartitionCreate && req.Verb != api.PartitionUpdate && req.Verb != api.PartitionDelete {
		return api.PartitionCommandResponse{}, usageErr("Invalid command: %s", req.Verb)
	}
	// Syntax first, on a scratch copy: a plain user's typo gets the usage
	// message, a well-formed command the permission error.
	scratch := partDef{P: newPartition(name)}
	if err := ls.applyPartitionWords(&scratch, words); isUsage(err) {
		return api.PartitionCommandResponse{}, err
	}
	if !ls.isAdmin(w) {
		return api.PartitionCommandResponse{}, denied()
	}
	if scratch.P.Default && !ls.prio.parts.early && ls.defaultBeyondConf(name, req.Verb) {
		// Without the recovery hook a restart replays the jobs before the
		// partitions come back: a job of a default partition beyond
		// slurm.conf's list would come back at an index slurm.conf's list
		// does not have. Refused until recover calls recoverPartitions.
		ls.c.log.Warn("Default=YES on a partition beyond slurm.conf's list needs the recovery hook", "partition", name)
		return api.PartitionCommandResponse{}, &apiErr{status: http.StatusBadRequest, msg: sched.ErrDisabled.Error()}
	}
	before := ls.defaults()
	switch req.Verb {
	case api.PartitionCreate:
		err = ls.createPartition(name, words)
	case api.PartitionUpdate:
		err = ls.updatePartition(name, words)
	default:
		err = ls.deletePartition(name)
	}
	if err != nil {
		return api.PartitionCommandResponse{}, err
	}
	if err := ls.recordDefaults(before, name); err != nil {
		return api.PartitionCommandResponse{}, err
	}
	ls.syncPrioPartitions()
	ls.refreshPendingPriorities(ls.c.now())
	ls.wantSched = true
	ls.c.log.Info("partition changed", "verb", req.Verb, "partition", name, "by", w.User)
	return api.PartitionCommandResponse{Name: name}, nil
}

// defaultBeyondConf reports whether the partition a create or update
// makes the default would sit at an index slurm.conf's list lacks.
func (ls *loopState) defaultBeyondConf(name, verb string) bool {
	n := int32(len(ls.c.cfg.Partitions))
	if i := ls.st.Cluster.PartitionIndex(name); i >= 0 {
		return i >= n
	}
	if verb != api.PartitionCreate || ls.confFingerprint(name) != "" {
		return false // a slurm.conf partition goes back to its place
	}
	return int32(len(ls.st.Cluster.Partitions)) >= n
}

func isUsage(err error) bool {
	var ae *apiErr
	return errors.As(err, &ae) && ae.reason == api.PartitionUsageReason
}

// slurmErr maps a core error to the API with Slurm's message.
func slurmErr(err error) error {
	for _, e := range []error{sched.ErrInvalidNodeName, sched.ErrInvalidPartition, sched.ErrPartitionInUse,
		sched.ErrInvalidQOS} {
		if errors.Is(err, e) {
			return &apiErr{status: http.StatusBadRequest, msg: e.Error()}
		}
	}
	return err
}

func (ls *loopState) createPartition(name string, words []string) error {
	if ls.st.Cluster.PartitionIndex(name) >= 0 {
		return slurmErr(sched.ErrInvalidPartition) // Slurm: duplicate name on create
	}
	d := partDef{P: newPartition(name)}
	if err := ls.applyPartitionWords(&d, words); err != nil {
		return err
	}
	fp := ls.confFingerprint(name)
	if fp == "" {
		if err := ls.st.AddPartition(d.P); err != nil {
			return slurmErr(err)
		}
	} else {
		// A slurm.conf partition created again goes back to its place
		// among slurm.conf's partitions (which keep the lowest indices,
		// in file order), so that a restart finds every job's partition
		// of slurm.conf at an index slurm.conf's list has.
		at := ls.confSlot(name)
		ls.markRenumbered(at)
		if err := ls.st.InsertPartition(d.P, at); err != nil {
			return slurmErr(err)
		}
	}
	row := &partRow{Name: name, ConfFP: fp, Scratch: true, Seq: ls.nextPartSeq(), Words: slices.Clone(words)}
	if err := ls.storePartRow(name, row); err != nil {
		_ = ls.st.DeletePartition(name)
		return err
	}
	ls.prio.setBilling(name, d.Billing)
	return nil
}

func (ls *loopState) updatePartition(name string, words []string) error {
	i := ls.st.Cluster.PartitionIndex(name)
	if i < 0 {
		return slurmErr(sched.ErrInvalidPartition)
	}
	old := clonePartition(&ls.st.Cluster.Partitions[i])
	d := partDef{P: clonePartition(&old), Billing: ls.prio.billingTextOf(name)}
	if err := ls.applyPartitionWords(&d, words); err != nil {
		return err
	}
	if err := ls.st.ReplacePartition(d.P); err != nil {
		return slurmErr(err)
	}
	row := ls.rowFor(name)
	row.Words = append(row.Words, words...)
	if err := ls.storePartRow(name, row); err != nil {
		row.Words = row.Words[:len(row.Words)-len(words)]
		_ = ls.st.ReplacePartition(old)
		return err
	}
	ls.prio.setBilling(name, d.Billing)
	return nil
}

func (ls *loopState) deletePartition(name string) error {
	cl := ls.st.Cluster
	i := cl.PartitionIndex(name)
	if i < 0 {
		return slurmErr(sched.ErrInvalidPartition)
	}
	if ls.st.PartitionInUse(i) {
		return slurmErr(sched.ErrPartitionInUse)
	}
	var row *partRow
	if fp := ls.confFingerprint(name); fp != "" {
		row = &partRow{Name: name, ConfFP: fp, Deleted: true, Seq: ls.nextPartSeq()}
	}
	if err := ls.storePartRow(name, row); err != nil {
		return err
	}
	ls.markRenumbered(i)
	if err := ls.st.DeletePartition(name); err != nil {
		return slurmErr(err)
	}
	ls.prio.setBilling(name, "")
	return nil
}

// markRenumbered marks changed the jobs whose partition indices a
// deletion or insertion at index i renumbers: their stored records carry
// the indices, so they are stored again with the batch.
func (ls *loopState) markRenumbered(i int32) {
	for _, j := range ls.st.Jobs() {
		if j.Partition >= i || slices.ContainsFunc(j.Partitions, func(p int32) bool { return p >= i }) {
			ls.dirty[j.ID] = struct{}{}
		}
	}
}

// confSlot is where slurm.conf's partition name belongs in the live list:
// after the slurm.conf partitions before it in the file that still exist.
func (ls *loopState) confSlot(name string) int32 {
	var at int32
	for _, cp := range ls.c.cfg.Partitions {
		if cp.Name == name {
			break
		}
		if ls.st.Cluster.PartitionIndex(cp.Name) >= 0 {
			at++
		}
	}
	return at
}

// rowFor returns the stored change row of name, starting one for a
// partition slurm.conf defines.
func (ls *loopState) rowFor(name string) *partRow {
	b := &ls.prio.parts
	if r := b.rows[name]; r != nil {
		return r
	}
	return &partRow{Name: name, ConfFP: ls.confFingerprint(name)}
}

// storePartRow writes the row (nil removes it) and keeps it in the book.
func (ls *loopState) storePartRow(name string, r *partRow) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ls.c.savePartRow(ctx, name, r); err != nil {
		return api.Errorf(http.StatusInternalServerError, "Unable to save state: %v", err)
	}
	b := &ls.prio.parts
	if b.rows == nil {
		b.rows = map[string]*partRow{}
	}
	if r == nil {
		delete(b.rows, name)
	} else {
		b.rows[name] = r
	}
	return nil
}

func (ls *loopState) nextPartSeq() int64 {
	var n int64
	for _, r := range ls.prio.parts.rows {
		n = max(n, r.Seq)
	}
	return n + 1
}

// defaults lists the partitions marked Default.
func (ls *loopState) defaults() []string {
	var out []string
	for i := range ls.st.Cluster.Partitions {
		if p := &ls.st.Cluster.Partitions[i]; p.Default {
			out = append(out, p.Name)
		}
	}
	return out
}

// recordDefaults stores "Default=NO" for the partitions whose Default
// flag a Default=YES elsewhere cleared, so that the stored rows alone
// rebuild the same default after a restart.
func (ls *loopState) recordDefaults(before []string, changed string) error {
	now := ls.defaults()
	for _, name := range before {
		if name == changed || slices.Contains(now, name) || ls.st.Cluster.PartitionIndex(name) < 0 {
			continue
		}
		row := ls.rowFor(name)
		row.Words = append(row.Words, "Default=NO")
		if err := ls.storePartRow(name, row); err != nil {
			return err
		}
	}
	return nil
}

// applyPartitionWords applies scontrol's partition KEY=VALUE words to d.
// Malformed values are usage errors ("Invalid input: KEY=VALUE"); unknown
// nodes or QOS are Slurm's errors from the controller.
func (ls *loopState) applyPartitionWords(d *partDef, words []string) error {
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return usageErr("Invalid input: %s\nRequest aborted", w)
		}
		if err := ls.applyPartitionKey(d, k, v); err != nil {
			if errors.Is(err, errBadValue) {
				return usageErr("Invalid input: %s\nRequest aborted", w)
			}
			if errors.Is(err, errUnsupported) {
				return usageErr("Update of this parameter is not supported: %s\nRequest aborted", w)
			}
			if errors.Is(err, errBadState) {
				return usageErr("Invalid input: %s\nAcceptable State values are UP, DOWN, DRAIN and INACTIVE", w)
			}
			return err
		}
	}
	if p := &d.P; p.DefaultTime > 0 && p.MaxTime != sched.Infinite && p.DefaultTime > p.MaxTime {
		return usageErr("DefaultTime exceeds MaxTime")
	}
	return nil
}

var (
	errBadValue    = errors.New("bad value")
	errUnsupported = errors.New("unsupported")
	errBadState    = errors.New("bad state")
)

// applyPartitionKey sets one key (names as scontrol(1) lists them).
func (ls *loopState) applyPartitionKey(d *partDef, key, v string) error {
	p := &d.P
	switch strings.ToLower(key) {
	case "nodes":
		return ls.setPartNodes(p, v)
	case "state":
		st, ok := map[string]sched.PartitionState{"UP": sched.PartitionUp, "DOWN": sched.PartitionDown,
			"DRAIN": sched.PartitionDrain, "INACTIVE": sched.PartitionInactive}[strings.ToUpper(v)]
		if !ok {
			return errBadState
		}
		p.State = st
	case "default":
		return setYesNo(&p.Default, v)
	case "maxtime", "defaulttime":
		t, err := duration.Parse(v)
		if err != nil || t < 0 {
			return errBadValue
		}
		if t != duration.Infinite {
			t = duration.RoundUpMinute(t)
		}
		if strings.EqualFold(key, "maxtime") {
			p.MaxTime = t
		} else {
			p.DefaultTime = t
		}
	case "priority", "priorityjobfactor", "prioritytier":
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil || n > 65533 {
			return errBadValue
		}
		k := strings.ToLower(key)
		if k != "prioritytier" {
			p.PriorityJobFactor = uint16(n)
		}
		if k != "priorityjobfactor" {
			p.PriorityTier = uint16(n)
		}
	case "maxnodes", "maxcpuspernode":
		n, err := parseCount(v)
		if err != nil {
			return err
		}
		if strings.EqualFold(key, "maxnodes") {
			p.MaxNodes = n
		} else {
			p.MaxCPUsPerNode = n
		}
	case "minnodes":
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return errBadValue
		}
		p.MinNodes = int32(n)
	case "allowaccounts", "allowqos", "allowgroups", "denyaccounts", "denyqos":
		return setPartList(p, strings.ToLower(key), v)
	case "qos":
		if v != "" && ls.st.Policy != nil && ls.st.Policy.QOSIndex(v) < 0 {
			return slurmErr(sched.ErrInvalidQOS)
		}
		p.QOS = v
	case "oversubscribe", "shared":
		return setOverSubscribe(p, v)
	case "preemptmode":
		m, err := conf.ParsePreemptMode(v)
		if err != nil {
			return errBadValue
		}
		p.PreemptMode = sched.PreemptModeFromConf(m)
	case "gracetime":
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return errBadValue
		}
		p.GraceTime = time.Duration(n) * time.Second
	case "exclusiveuser":
		return setYesNo(&p.ExclusiveUser, v)
	case "hidden":
		return setYesNo(&p.Hidden, v)
	case "rootonly":
		return setYesNo(&p.RootOnly, v)
	case "defmempercpu", "defmempernode", "maxmempercpu", "maxmempernode":
		return setPartMem(p, strings.ToLower(key), v)
	case "tresbillingweights":
		if _, err := priority.ParseTRESWeights(v); err != nil {
			return errBadValue
		}
		d.Billing = v
	default:
		return errUnsupported
	}
	return nil
}

// setPartNodes reads Nodes=: a host list, ALL, or empty for none.
func (ls *loopState) setPartNodes(p *sched.Partition, v string) error {
	cl := ls.st.Cluster
	p.NodeList = p.NodeList[:0]
	if v == "" {
		return nil
	}
	if strings.EqualFold(v, "ALL") {
		for i := range cl.Nodes {
			p.NodeList = append(p.NodeList, int32(i))
		}
		return nil
	}
	names, err := hostlist.Expand(v)
	if err != nil {
		return slurmErr(sched.ErrInvalidNodeName)
	}
	for _, n := range names {
		i := cl.NodeIndex(n)
		if i < 0 {
			return slurmErr(sched.ErrInvalidNodeName)
		}
		if !slices.Contains(p.NodeList, i) {
			p.NodeList = append(p.NodeList, i)
		}
	}
	return nil
}

func setYesNo(dst *bool, v string) error {
	switch strings.ToUpper(v) {
	case "YES", "Y", "1", "TRUE":
		*dst = true
	case "NO", "N", "0", "FALSE":
		*dst = false
	default:
		return errBadValue
	}
	return nil
}

// parseCount reads a count, INFINITE or UNLIMITED (-1).
func parseCount(v string) (int32, error) {
	if strings.EqualFold(v, "INFINITE") || strings.EqualFold(v, "UNLIMITED") {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0, errBadValue
	}
	return int32(n), nil
}

// setPartList sets an access list; ALL (Allow lists) or empty clears it.
func setPartList(p *sched.Partition, key, v string) error {
	var l []string
	if v != "" && !(strings.HasPrefix(key, "allow") && strings.EqualFold(v, "ALL")) {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s == "" {
				return errBadValue
			}
			l = append(l, s)
		}
	}
	switch key {
	case "allowaccounts":
		p.AllowAccounts = l
	case "allowqos":
		p.AllowQOS = l
	case "allowgroups":
		p.AllowGroups = l
	case "denyaccounts":
		p.DenyAccounts = l
	default:
		p.DenyQOS = l
	}
	return nil
}

// setOverSubscribe reads NO, EXCLUSIVE, YES[:n] or FORCE[:n] (YES and
// FORCE share a resource among 4 jobs unless a count is given).
func setOverSubscribe(p *sched.Partition, v string) error {
	mode, cnt, hasCnt := strings.Cut(strings.ToUpper(v), ":")
	o := sched.OverSubscribe{Count: 1}
	switch mode {
	case "NO":
		o.Mode = sched.OverSubscribeNo
	case "EXCLUSIVE":
		o.Mode = sched.OverSubscribeExclusive
	case "YES", "FORCE":
		o.Mode, o.Count = sched.OverSubscribeYes, 4
		if mode == "FORCE" {
			o.Mode = sched.OverSubscribeForce
		}
		if hasCnt {
			n, err := strconv.ParseInt(cnt, 10, 32)
			if err != nil || n < 1 {
				return errBadValue
			}
			o.Count = int32(n)
		}
		hasCnt = false
	default:
		return errBadValue
	}
	if hasCnt {
		return errBadValue
	}
	p.OverSubscribe = o
	return nil
}

// setPartMem sets a memory default or cap in MB; DefMemPerCPU and
// DefMemPerNode exclude each other (as do the two caps), as in Slurm.
func setPartMem(p *sched.Partition, key, v string) error {
	var n int64
	if !strings.EqualFold(v, "UNLIMITED") && !strings.EqualFold(v, "INFINITE") {
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
			return errBadValue
		}
	}
	switch key {
	case "defmempercpu":
		p.DefMemPerCPU, p.DefMemPerNode = n, 0
	case "defmempernode":
		p.DefMemPerNode, p.DefMemPerCPU = n, 0
	case "maxmempercpu":
		p.MaxMemPerCPU, p.MaxMemPerNode = n, 0
	default:
		p.MaxMemPerNode, p.MaxMemPerCPU = n, 0
	}
	return nil
}

// syncPrioPartitions gives the priority calculator the partitions as
// they are now (PriorityJobFactor, MaxTime, TRES totals).
func (ls *loopState) syncPrioPartitions() {
	p := &ls.prio
	if p.cluster == nil {
		p.partsStale = true
		return
	}
	p.partsStale = false
	parts := map[string]*priority.Partition{}
	for i := range ls.st.Cluster.Partitions {
		sp := &ls.st.Cluster.Partitions[i]
		pp := &priority.Partition{JobFactor: uint32(sp.PriorityJobFactor), MaxTime: sp.MaxTime, TRES: map[string]int64{}}
		if sp.MaxTime == sched.Infinite {
			pp.MaxTime = 0
		}
		for k, v := range sp.TRES {
			if k != "billing" {
				pp.TRES[k] = v
			}
		}
		for _, l := range ls.c.cfg.Licenses {
			pp.TRES["license/"+l.Name] = l.Count
		}
		parts[sp.Name] = pp
	}
	p.cluster.Partitions = parts
	if p.calc != nil {
		p.calc.Reset(&p.cfg, p.cluster, p.tree)
	}
}
