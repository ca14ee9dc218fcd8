package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver

	"github.com/sluice-hpc/sluice/internal/acct"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Dialect says which database a Store talks to.
type Dialect int

// The two supported databases.
const (
	SQLite Dialect = iota + 1
	Postgres
)

// Store is an acct.Store on SQLite or PostgreSQL.
type Store struct {
	db *sql.DB
	// rdb serves Load: on SQLite a second pool whose transactions are
	// deferred (WAL snapshot reads that never wait for writers); on
	// PostgreSQL the same pool as db.
	rdb     *sql.DB
	dialect Dialect
	// wmu serializes this process's writers before they reach the
	// database, so they queue here instead of in SQLite's busy handler.
	wmu sync.Mutex

	// The last state read or written, with the version it had; reused
	// while the version row is unchanged, so a command does not reread
	// the whole tree.
	mu       sync.Mutex
	cache    *acct.State
	cacheVer int64
}

var _ acct.Store = (*Store)(nil)

// Open opens the store named by slurm.conf's AccountingStorageType
// (accounting_storage/sqlite, the default, or accounting_storage/pgsql)
// and AccountingStorageLoc (a file path or a postgres:// URL).
func Open(ctx context.Context, storageType, loc string) (*Store, error) {
	switch strings.ToLower(strings.TrimPrefix(strings.ToLower(storageType), "accounting_storage/")) {
	case "", "sqlite", "sqlite3":
		return OpenSQLite(ctx, loc)
	case "pgsql", "postgres", "postgresql":
		return OpenPostgres(ctx, loc)
	}
	return nil, fmt.Errorf("open accounting store: unsupported AccountingStorageType %q (use accounting_storage/sqlite or accounting_storage/pgsql)", storageType)
}

// OpenSQLite opens (creating if needed) a SQLite database file in WAL
// mode with a busy timeout, and migrates it.
func OpenSQLite(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open sqlite accounting store: empty path")
	}
	if err := createPrivate(path); err != nil {
		return nil, fmt.Errorf("open sqlite accounting store %q: %w", path, err)
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(30000)", "synchronous(NORMAL)", "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	rdb, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite accounting store %q: %w", path, err)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		rdb.Close()
		return nil, fmt.Errorf("open sqlite accounting store %q: %w", path, err)
	}
	s, err := open(ctx, db, SQLite, path)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	s.rdb = rdb
	return s, nil
}

// OpenPostgres connects to PostgreSQL with a pgx DSN (URL or key=value);
// extra URL parameters such as search_path become session settings.
func OpenPostgres(ctx context.Context, dsn string) (*Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgresql accounting store: %w", err)
	}
	db.SetMaxOpenConns(16)
	return open(ctx, db, Postgres, "postgresql")
}

func open(ctx context.Context, db *sql.DB, d Dialect, name string) (*Store, error) {
	s := &Store{db: db, rdb: db, dialect: d}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open accounting store %s: %w", name, err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if s.rdb != s.db {
		s.rdb.Close()
	}
	return s.db.Close()
}

// Dialect returns which database the store uses.
func (s *Store) Dialect() Dialect { return s.dialect }

// rebind turns ? placeholders into PostgreSQL's $n.
func (s *Store) rebind(q string) string {
	if s.dialect != Postgres {
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

// begin starts a writer transaction holding the writers' lock.
func (s *Store) begin(ctx context.Context) (*sql.Tx, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	if s.dialect == Postgres {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext(current_schema()))"); err != nil {
			tx.Rollback()
			return nil, fmt.Errorf("lock: %w", err)
		}
	}
	return tx, nil
}

// migrate applies the embedded migrations not yet applied, and writes
// the initial database (root account and user, normal QOS) on first use.
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)"); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := tx.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return err
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		applied[v] = true
	}
	rows.Close()
	files, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		v, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(f, "migrations/"), "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: bad name", f)
		}
		if applied[v] {
			continue
		}
		if err := s.applyMigration(ctx, tx, f, v); err != nil {
			return err
		}
	}
	if err := s.initData(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *Store) applyMigration(ctx context.Context, tx *sql.Tx, file string, v int) error {
	body, err := migrationFS.ReadFile(file)
	if err != nil {
		return err
	}
	for _, stmt := range splitStatements(string(body)) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migration %s: %w", file, err)
		}
	}
	_, err = tx.ExecContext(ctx, s.rebind("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)"), v, time.Now().Unix())
	return err
}

// splitStatements splits a migration on ';' at line ends, dropping
// comment lines.
func splitStatements(body string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line + "\n")
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, cur.String())
	}
	return out
}

// initData writes acct.NewState() into an empty database.
func (s *Store) initData(ctx context.Context, tx *sql.Tx) error {
	if _, err := s.version(ctx, tx); err == nil {
		return nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if err := s.writeDiff(ctx, tx, emptyState(), acct.NewState()); err != nil {
		return fmt.Errorf("initial data: %w", err)
	}
	_, err := tx.ExecContext(ctx, s.rebind("INSERT INTO meta (name, value) VALUES ('version', ?)"), 1)
	return err
}

func emptyState() *acct.State {
	return &acct.State{Clusters: map[string]*acct.Cluster{}, Accounts: map[string]*acct.Account{},
		Users: map[string]*acct.User{}, Assocs: map[int64]*acct.Association{}, QOS: map[string]*acct.QOS{},
		TRES: map[string]*acct.TRESRecord{}}
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// version reads the state's version counter, bumped by every write.
func (s *Store) version(ctx context.Context, q querier) (int64, error) {
	var v int64
	err := q.QueryRowContext(ctx, "SELECT value FROM meta WHERE name = 'version'").Scan(&v)
	return v, err
}

// Load returns a private copy of the current state.
func (s *Store) Load(ctx context.Context) (*acct.State, error) {
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: s.dialect == Postgres})
	if err != nil {
		return nil, fmt.Errorf("load accounting state: %w", err)
	}
	defer tx.Rollback()
	st, _, err := s.current(ctx, tx)
	if err != nil {
		return nil, fmt.Errorf("load accounting state: %w", err)
	}
	return st.Clone(), nil
}

// current returns the state as of tx (shared: callers clone it).
func (s *Store) current(ctx context.Context, tx *sql.Tx) (*acct.State, int64, error) {
	ver, err := s.version(ctx, tx)
	if err != nil {
		return nil, 0, err
	}
	st, err := s.stateAt(ctx, tx, ver)
	return st, ver, err
}

// stateAt returns the state, which tx sees at version ver: the cached
// copy when it has that version, else everything read from the tables.
func (s *Store) stateAt(ctx context.Context, tx *sql.Tx, ver int64) (*acct.State, error) {
	s.mu.Lock()
	if s.cache != nil && s.cacheVer == ver {
		st := s.cache
		s.mu.Unlock()
		return st, nil
	}
	s.mu.Unlock()
	st, err := s.readState(ctx, tx)
	if err != nil {
		return nil, err
	}
	s.setCache(st, ver)
	return st, nil
}

func (s *Store) setCache(st *acct.State, ver int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ver >= s.cacheVer {
		s.cache, s.cacheVer = st, ver
	}
}

// Update runs fn on a copy of the current state inside one writer
// transaction and stores the difference; fn's error is returned as is
// and nothing is written. The transaction starts by bumping the version
// row, which both takes the writers' lock (the row lock serializes
// writers on PostgreSQL; SQLite holds its write lock from BEGIN
// IMMEDIATE) and tells whether the cached state is still current.
func (s *Store) Update(ctx context.Context, fn func(*acct.State) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("update accounting state: begin: %w", err)
	}
	defer tx.Rollback()
	var ver int64
	if err := tx.QueryRowContext(ctx, "UPDATE meta SET value = value + 1 WHERE name = 'version' RETURNING value").Scan(&ver); err != nil {
		return fmt.Errorf("update accounting state: lock: %w", err)
	}
	base, err := s.stateAt(ctx, tx, ver-1)
	if err != nil {
		return fmt.Errorf("update accounting state: %w", err)
	}
	work := base.Clone()
	if err := fn(work); err != nil {
		return err
	}
	if err := s.writeDiff(ctx, tx, base, work); err != nil {
		return fmt.Errorf("update accounting state: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("update accounting state: commit: %w", err)
	}
	s.setCache(work, ver) // fn may not keep work (acct.Store contract)
	return nil
}

// LoadUsage returns every usage record, ordered by kind and id.
func (s *Store) LoadUsage(ctx context.Context) ([]acct.Usage, error) {
	rows, err := s.rdb.QueryContext(ctx, "SELECT kind, id, raw_usage, grp_used_wall, last_decay FROM usage ORDER BY kind, id")
	if err != nil {
		return nil, fmt.Errorf("load usage: %w", err)
	}
	defer rows.Close()
	var out []acct.Usage
	for rows.Next() {
		var u acct.Usage
		var last int64
		if err := rows.Scan(&u.Kind, &u.ID, &u.RawUsage, &u.GrpUsedWall, &last); err != nil {
			return nil, fmt.Errorf("load usage: %w", err)
		}
		if last != 0 {
			u.LastDecay = time.Unix(0, last).UTC()
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// SaveUsage inserts or replaces usage records in one transaction.
func (s *Store) SaveUsage(ctx context.Context, us []acct.Usage) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save usage: %w", err)
	}
	defer tx.Rollback()
	q := s.rebind(`INSERT INTO usage (kind, id, raw_usage, grp_used_wall, last_decay) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (kind, id) DO UPDATE SET raw_usage = excluded.raw_usage,
		grp_used_wall = excluded.grp_used_wall, last_decay = excluded.last_decay`)
	for _, u := range us {
		last := int64(0)
		if !u.LastDecay.IsZero() {
			last = u.LastDecay.UnixNano()
		}
		if _, err := tx.ExecContext(ctx, q, u.Kind, u.ID, u.RawUsage, u.GrpUsedWall, last); err != nil {
			return fmt.Errorf("save usage %s %d: %w", u.Kind, u.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save usage: %w", err)
	}
	return nil
}

// Version returns the state's version counter, which every committed
// Update increases: a long-running reader (the controller) polls it to
// notice changes made by other processes (sacctmgr) and reload.
func (s *Store) Version(ctx context.Context) (int64, error) {
	v, err := s.version(ctx, s.rdb)
	if err != nil {
		return 0, fmt.Errorf("accounting state version: %w", err)
	}
	return v, nil
}

// DB exposes the database for tables other packages keep beside the
// accounting tree (job records): they add their own numbered migration
// files here and use Rebind for portable placeholders.
func (s *Store) DB() *sql.DB { return s.db }

// Rebind rewrites ? placeholders for the store's database ($1, $2, ...
// on PostgreSQL).
func (s *Store) Rebind(q string) string { return s.rebind(q) }

// createPrivate creates the database file 0600 before SQLite opens it:
// SQLite gives its -wal and -shm files the database file's mode, and the
// accounting records (job scripts, environments) are for SlurmUser only.
// An existing file is tightened; ":memory:" and URIs are left alone.
func createPrivate(path string) error {
	if strings.HasPrefix(path, ":") || strings.HasPrefix(path, "file:") {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
