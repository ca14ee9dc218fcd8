package ctld

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// Store keeps the controller's state: one row per job (its full record as
// JSON), one accounting row per run of a job, the state transitions, the
// nodes' administrative states and a few counters. Commit writes a Batch
// atomically; the controller acknowledges nothing before Commit returns.
type Store interface {
	// Load reads what a restarted controller needs: every job not finished
	// and every job finished after since, the node rows and the counters.
	Load(ctx context.Context, since time.Time) (*Snapshot, error)
	// Commit stores a batch in one transaction.
	Commit(ctx context.Context, b *Batch) error
	// Runs returns accounting rows (sacct) in job id order.
	Runs(ctx context.Context) ([]RunRow, error)
	// Close releases the database.
	Close() error
}

// Snapshot is what Load returns.
type Snapshot struct {
	Jobs  []JobRow
	Nodes []NodeRow
	Meta  map[string]string
}

// JobRow is one job's stored record.
type JobRow struct {
	ID       uint32
	State    int
	Finished bool
	End      time.Time
	Data     []byte
}

// RunRow is one accounting record: a run of a job (a requeued job has one
// per run; the earlier ones end REQUEUED, PREEMPTED or NODE_FAIL).
type RunRow struct {
	JobID       uint32
	Restart     int
	ArrayJobID  uint32
	ArrayTaskID int32
	Name        string
	User        string
	UID         uint32
	GID         uint32
	Account     string
	QOS         string
	Partition   string
	Submit      time.Time
	Eligible    time.Time
	Start       time.Time
	End         time.Time
	State       string
	ExitCode    string
	NodeList    string
	AllocTRES   string
	ReqTRES     string
	TimeLimit   int64 // seconds, -1 = UNLIMITED
	WorkDir     string
	Suspended   int64 // seconds spent suspended
}

// EventRow is one state transition (submit, start, end, hold, ...).
type EventRow struct {
	JobID  uint32
	Time   time.Time
	Event  string
	Detail string
}

// NodeRow is a node's administrative state (DRAIN/DOWN set by an
// operator), which survives restarts.
type NodeRow struct {
	Name       string
	State      int
	Reason     string
	ReasonTime time.Time
	ReasonUser string
}

// Batch is everything one group commit writes.
type Batch struct {
	Jobs   []JobRow
	Runs   []RunRow
	Events []EventRow
	Nodes  []NodeRow
	Meta   map[string]string
}

// Empty reports whether the batch writes nothing.
func (b *Batch) Empty() bool {
	return len(b.Jobs) == 0 && len(b.Runs) == 0 && len(b.Events) == 0 && len(b.Nodes) == 0 && len(b.Meta) == 0
}

type dialect int

const (
	dialectSQLite dialect = iota + 1
	dialectPostgres
)

// sqlStore is the Store on SQLite (WAL) or PostgreSQL; both run the same
// statements (ON CONFLICT upserts) with the placeholders rebound.
type sqlStore struct {
	db *sql.DB
	d  dialect
	// stmts holds the commit statements prepared once on the database:
	// preparing them again in every transaction cost about a third of a
	// commit's CPU during a drain (profiled with `sluice bench drain`).
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// OpenSQLite opens (creating) the controller's SQLite database in WAL
// mode with synchronous=FULL: a committed batch survives a crash of the
// process and of the machine.
func OpenSQLite(ctx context.Context, path string) (Store, error) {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(30000)", "synchronous(FULL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	if err := CreatePrivate(path); err != nil {
		return nil, fmt.Errorf("open controller store %q: %w", path, err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open controller store %q: %w", path, err)
	}
	db.SetMaxOpenConns(1) // one writer; the event loop is the only user
	return openStore(ctx, db, dialectSQLite)
}

// OpenPostgres opens the controller's tables in a PostgreSQL database.
func OpenPostgres(ctx context.Context, dsn string) (Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open controller store (postgresql): %w", err)
	}
	db.SetMaxOpenConns(4)
	return openStore(ctx, db, dialectPostgres)
}

var schema = []string{
	`CREATE TABLE IF NOT EXISTS ctld_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS ctld_jobs (id BIGINT PRIMARY KEY, state INTEGER NOT NULL,
		finished INTEGER NOT NULL, end_time BIGINT NOT NULL, data TEXT NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS ctld_jobs_live ON ctld_jobs (finished, end_time)`,
	`CREATE TABLE IF NOT EXISTS ctld_runs (job_id BIGINT NOT NULL, restart INTEGER NOT NULL,
		array_job_id BIGINT NOT NULL, array_task_id INTEGER NOT NULL, name TEXT NOT NULL,
		user_name TEXT NOT NULL, uid BIGINT NOT NULL, gid BIGINT NOT NULL, account TEXT NOT NULL,
		qos TEXT NOT NULL, partition_name TEXT NOT NULL, submit BIGINT NOT NULL, eligible BIGINT NOT NULL,
		start_time BIGINT NOT NULL, end_time BIGINT NOT NULL, state TEXT NOT NULL, exit_code TEXT NOT NULL,
		nodelist TEXT NOT NULL, alloc_tres TEXT NOT NULL, req_tres TEXT NOT NULL, time_limit BIGINT NOT NULL,
		work_dir TEXT NOT NULL, suspended BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (job_id, restart))`,
	`CREATE TABLE IF NOT EXISTS ctld_events (job_id BIGINT NOT NULL, t BIGINT NOT NULL,
		event TEXT NOT NULL, detail TEXT NOT NULL)`,
	`CREATE TABLE IF NOT EXISTS ctld_nodes (name TEXT PRIMARY KEY, state INTEGER NOT NULL,
		reason TEXT NOT NULL, reason_time BIGINT NOT NULL, reason_user TEXT NOT NULL)`,
}

func openStore(ctx context.Context, db *sql.DB, d dialect) (Store, error) {
	s := &sqlStore{db: db, d: d}
	for _, stmt := range schema {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("create controller tables: %w", err)
		}
	}
	if err := addRunsSuspended(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.prepare(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// addRunsSuspended adds the suspended column to a ctld_runs table
// created before it existed (SQLite has no ADD COLUMN IF NOT EXISTS).
func addRunsSuspended(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT suspended FROM ctld_runs WHERE 1 = 0`)
	if err == nil {
		return rows.Close()
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE ctld_runs ADD COLUMN suspended BIGINT NOT NULL DEFAULT 0`); err != nil {
		return fmt.Errorf("add ctld_runs.suspended: %w", err)
	}
	return nil
}

func (s *sqlStore) Close() error {
	s.mu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = nil
	s.mu.Unlock()
	return s.db.Close()
}

// prepare prepares the commit statements on the database. It runs when the
// store opens, before any transaction: a transaction holds SQLite's one
// connection, so a statement could not be prepared outside it later.
func (s *sqlStore) prepare(ctx context.Context) error {
	s.stmts = map[string]*sql.Stmt{}
	for _, q := range []string{upsertJob, upsertRun, insertEvent, upsertNode} {
		st, err := s.db.PrepareContext(ctx, s.rebind(q))
		if err != nil {
			return fmt.Errorf("prepare controller statements: %w", err)
		}
		s.stmts[q] = st
	}
	return nil
}

// stmt binds q's prepared statement to tx (or prepares q in tx when the
// store has none for it).
func (s *sqlStore) stmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	s.mu.Lock()
	prep, ok := s.stmts[q]
	s.mu.Unlock()
	if ok {
		return tx.StmtContext(ctx, prep), nil
	}
	return tx.PrepareContext(ctx, s.rebind(q))
}

// rebind turns ? placeholders into PostgreSQL's $n.
func (s *sqlStore) rebind(q string) string {
	if s.d != dialectPostgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// bytesText passes a job record to the driver as TEXT without copying
// it: the rows of a Batch are never modified once built (the store only
// reads them), so the string may share their bytes.
func bytesText(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

const (
	upsertJob = `INSERT INTO ctld_jobs (id, state, finished, end_time, data) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET state = excluded.state, finished = excluded.finished,
		end_time = excluded.end_time, data = excluded.data`
	upsertRun = `INSERT INTO ctld_runs (job_id, restart, array_job_id, array_task_id, name, user_name, uid, gid,
		account, qos, partition_name, submit, eligible, start_time, end_time, state, exit_code, nodelist,
		alloc_tres, req_tres, time_limit, work_dir, suspended) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (job_id, restart) DO UPDATE SET array_job_id = excluded.array_job_id,
		array_task_id = excluded.array_task_id, name = excluded.name, account = excluded.account,
		qos = excluded.qos, partition_name = excluded.partition_name, submit = excluded.submit,
		eligible = excluded.eligible, start_time = excluded.start_time, end_time = excluded.end_time,
		state = excluded.state, exit_code = excluded.exit_code, nodelist = excluded.nodelist,
		alloc_tres = excluded.alloc_tres, req_tres = excluded.req_tres, time_limit = excluded.time_limit,
		work_dir = excluded.work_dir, suspended = excluded.suspended`
	insertEvent = `INSERT INTO ctld_events (job_id, t, event, detail) VALUES (?, ?, ?, ?)`
	upsertNode  = `INSERT INTO ctld_nodes (name, state, reason, reason_time, reason_user) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET state = excluded.state, reason = excluded.reason,
		reason_time = excluded.reason_time, reason_user = excluded.reason_user`
	upsertMeta = `INSERT INTO ctld_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`
)

// Commit writes the batch in one transaction.
func (s *sqlStore) Commit(ctx context.Context, b *Batch) (err error) {
	if b.Empty() {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if err = s.execEach(ctx, tx, upsertJob, len(b.Jobs), func(i int) []any {
		j := &b.Jobs[i]
		return []any{int64(j.ID), j.State, b2i(j.Finished), unixNano(j.End), bytesText(j.Data)}
	}); err != nil {
		return err
	}
	if err = s.execEach(ctx, tx, upsertRun, len(b.Runs), func(i int) []any {
		r := &b.Runs[i]
		return []any{int64(r.JobID), r.Restart, int64(r.ArrayJobID), r.ArrayTaskID, r.Name, r.User, int64(r.UID),
			int64(r.GID), r.Account, r.QOS, r.Partition, unixNano(r.Submit), unixNano(r.Eligible), unixNano(r.Start),
			unixNano(r.End), r.State, r.ExitCode, r.NodeList, r.AllocTRES, r.ReqTRES, r.TimeLimit, r.WorkDir, r.Suspended}
	}); err != nil {
		return err
	}
	if err = s.execEach(ctx, tx, insertEvent, len(b.Events), func(i int) []any {
		e := &b.Events[i]
		return []any{int64(e.JobID), unixNano(e.Time), e.Event, e.Detail}
	}); err != nil {
		return err
	}
	if err = s.execEach(ctx, tx, upsertNode, len(b.Nodes), func(i int) []any {
		n := &b.Nodes[i]
		return []any{n.Name, n.State, n.Reason, unixNano(n.ReasonTime), n.ReasonUser}
	}); err != nil {
		return err
	}
	for k, v := range b.Meta {
		if _, err = tx.ExecContext(ctx, s.rebind(upsertMeta), k, v); err != nil {
			return fmt.Errorf("store: meta %s: %w", k, err)
		}
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

func (s *sqlStore) execEach(ctx context.Context, tx *sql.Tx, q string, n int, args func(int) []any) error {
	if n == 0 {
		return nil
	}
	st, err := s.stmt(ctx, tx, q)
	if err != nil {
		return fmt.Errorf("store: prepare: %w", err)
	}
	defer st.Close()
	for i := 0; i < n; i++ {
		if _, err := st.ExecContext(ctx, args(i)...); err != nil {
			return fmt.Errorf("store: write: %w", err)
		}
	}
	return nil
}

// Load reads the live part of the store.
func (s *sqlStore) Load(ctx context.Context, since time.Time) (*Snapshot, error) {
	snap := &Snapshot{Meta: map[string]string{}}
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT id, state, finished, end_time, data FROM ctld_jobs
		WHERE finished = 0 OR end_time >= ? ORDER BY id`), unixNano(since))
	if err != nil {
		return nil, fmt.Errorf("store: load jobs: %w", err)
	}
	for rows.Next() {
		var r JobRow
		var id, end int64
		var fin int
		var data string
		if err := rows.Scan(&id, &r.State, &fin, &end, &data); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: load jobs: %w", err)
		}
		r.ID, r.Finished, r.End, r.Data = uint32(id), fin != 0, fromNano(end), []byte(data)
		snap.Jobs = append(snap.Jobs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: load jobs: %w", err)
	}
	if err := s.loadNodes(ctx, snap); err != nil {
		return nil, err
	}
	return snap, s.loadMeta(ctx, snap)
}

func (s *sqlStore) loadNodes(ctx context.Context, snap *Snapshot) error {
	rows, err := s.db.QueryContext(ctx, `SELECT name, state, reason, reason_time, reason_user FROM ctld_nodes`)
	if err != nil {
		return fmt.Errorf("store: load nodes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n NodeRow
		var rt int64
		if err := rows.Scan(&n.Name, &n.State, &n.Reason, &rt, &n.ReasonUser); err != nil {
			return fmt.Errorf("store: load nodes: %w", err)
		}
		n.ReasonTime = fromNano(rt)
		snap.Nodes = append(snap.Nodes, n)
	}
	return rows.Err()
}

func (s *sqlStore) loadMeta(ctx context.Context, snap *Snapshot) error {
	rows, err := s.db.QueryContext(ctx, `SELECT key, value FROM ctld_meta`)
	if err != nil {
		return fmt.Errorf("store: load counters: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return fmt.Errorf("store: load counters: %w", err)
		}
		snap.Meta[k] = v
	}
	return rows.Err()
}

// Runs returns every accounting row.
func (s *sqlStore) Runs(ctx context.Context) ([]RunRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT job_id, restart, array_job_id, array_task_id, name, user_name, uid, gid,
		account, qos, partition_name, submit, eligible, start_time, end_time, state, exit_code, nodelist,
		alloc_tres, req_tres, time_limit, work_dir, suspended FROM ctld_runs ORDER BY job_id, restart`)
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	defer rows.Close()
	var out []RunRow
	for rows.Next() {
		var r RunRow
		var id, aj, uid, gid, sub, el, st, en int64
		if err := rows.Scan(&id, &r.Restart, &aj, &r.ArrayTaskID, &r.Name, &r.User, &uid, &gid, &r.Account, &r.QOS,
			&r.Partition, &sub, &el, &st, &en, &r.State, &r.ExitCode, &r.NodeList, &r.AllocTRES, &r.ReqTRES,
			&r.TimeLimit, &r.WorkDir, &r.Suspended); err != nil {
			return nil, fmt.Errorf("store: runs: %w", err)
		}
		r.JobID, r.ArrayJobID, r.UID, r.GID = uint32(id), uint32(aj), uint32(uid), uint32(gid)
		r.Submit, r.Eligible, r.Start, r.End = fromNano(sub), fromNano(el), fromNano(st), fromNano(en)
		out = append(out, r)
	}
	return out, rows.Err()
}

// errStoreClosed is returned once the controller stopped.
var errStoreClosed = errors.New("controller is shutting down")
