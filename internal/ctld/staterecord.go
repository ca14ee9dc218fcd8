package ctld

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sluice-hpc/sluice/internal/conf"
)

// StateRecordFile is the small record the controller keeps beside its
// database in StateSaveLocation: which database holds the cluster's
// state and how far its job ids went. A database that is missing, empty,
// another one, or older than the record (a lost WAL, a restored backup)
// is refused at start instead of silently losing jobs and reusing their
// ids (issue 17, finding 7).
const StateRecordFile = "ctld.record"

// dbIdentityKey is the ctld_meta row naming the database: random, made
// when the database is first used.
const dbIdentityKey = "db_identity"

// stateRecord is the record's content.
type stateRecord struct {
	// Database is the identity of the database the state is in.
	Database string `json:"database"`
	// NextJobID is the next job id the database had stored when the
	// record was last written (the database's may only be higher).
	NextJobID uint64    `json:"next_job_id"`
	Written   time.Time `json:"written"`
}

// StartMode says how a controller treats a database that disagrees with
// its state record.
type StartMode int

const (
	// StartNormal refuses a missing, empty, other or older database.
	StartNormal StartMode = iota
	// StartClear (sluice ctld -c, as slurmctld -c) starts with no jobs
	// on purpose: an SQLite database is moved aside, job ids continue
	// after the record's.
	StartClear
	// StartRecover (sluice ctld -R) takes the database as it is, older
	// or not, job ids continuing after the record's.
	StartRecover
)

func (c *Controller) recordPath() string { return filepath.Join(c.opts.StateDir, StateRecordFile) }

// readRecord returns the state record (nil when there is none).
func (c *Controller) readRecord() (*stateRecord, error) {
	data, err := os.ReadFile(c.recordPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ctld: state record: %w", err)
	}
	var r stateRecord
	if err := json.Unmarshal(data, &r); err != nil || r.Database == "" {
		// A record torn by a crash (written without fsync, see
		// writeRecord) says nothing: the database is taken as it is.
		c.log.Warn("unreadable state record ignored; it is written again", "file", c.recordPath(), "err", err)
		return nil, nil
	}
	return &r, nil
}

// writeRecord replaces the record (temporary file and rename, 0600). It
// is written after the commit it describes, so it is never ahead of the
// database; it is not fsynced: a record lost in a crash is only older,
// which is never refused.
func (c *Controller) writeRecord(next uint64) {
	r := stateRecord{Database: c.dbID, NextJobID: next, Written: c.now().UTC()}
	data, _ := json.Marshal(r)
	tmp := c.recordPath() + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		c.log.Warn("cannot write the state record", "file", c.recordPath(), "err", err)
		return
	}
	if err := os.Rename(tmp, c.recordPath()); err != nil {
		c.log.Warn("cannot write the state record", "file", c.recordPath(), "err", err)
	}
	c.recordNext = next
}

// recordCommitted updates the record after a commit that stored meta.
func (c *Controller) recordCommitted(b *Batch) {
	v, err := strconv.ParseUint(b.Meta["next_job_id"], 10, 32)
	if err != nil || c.dbID == "" || (v == c.recordNext && c.recordNext != 0) {
		return
	}
	c.writeRecord(v)
}

// checkRecord compares the database's counters (meta) with the state
// record before anything is recovered; it returns the smallest next job
// id the controller may use (0: no floor) or why it refuses to start.
func (c *Controller) checkRecord(meta map[string]string, jobs int) (uint64, error) {
	rec, err := c.readRecord()
	if err != nil {
		return 0, err
	}
	c.dbID = meta[dbIdentityKey]
	dbNext, _ := strconv.ParseUint(meta["next_job_id"], 10, 32)
	empty := len(meta) == 0 && jobs == 0
	if c.dbID == "" {
		c.dbID = newDBIdentity() // stored with the first batch (takeBatch)
	}
	if rec == nil {
		if meta[dbIdentityKey] != "" && dbNext > 0 {
			c.writeRecord(dbNext) // the record was removed: the database is the truth
		}
		return 0, nil
	}
	var problem string
	switch {
	case empty:
		problem = "is missing or empty"
	case meta[dbIdentityKey] == "":
		// A database from before the record: taken as it is, if not older.
		if dbNext < rec.NextJobID {
			problem = fmt.Sprintf("is older than the record (next job id %d, the record says %d)", dbNext, rec.NextJobID)
		}
	case meta[dbIdentityKey] != rec.Database:
		problem = fmt.Sprintf("is another database (identity %s, the record names %s)", meta[dbIdentityKey], rec.Database)
	case dbNext < rec.NextJobID:
		problem = fmt.Sprintf("is older than the record (next job id %d, the record says %d)", dbNext, rec.NextJobID)
	}
	if problem == "" {
		return 0, nil
	}
	if c.opts.StartMode != StartNormal {
		c.log.Warn("starting with a database that disagrees with the state record, as asked",
			"problem", problem, "record", c.recordPath(), "next_job_id_floor", rec.NextJobID)
		return rec.NextJobID, nil
	}
	return 0, fmt.Errorf("ctld: state lost: the job database (%s) %s; %s records database %s with job ids up to %d "+
		"(written %s). Restore the database, or start anyway on purpose: `sluice ctld -R` recovers what the database holds, "+
		"`sluice ctld -c` starts with no jobs (as slurmctld -c); both continue job ids after %d",
		c.storeName(), problem, c.recordPath(), rec.Database, rec.NextJobID-1, rec.Written.Format(time.RFC3339), rec.NextJobID-1)
}

// storeName names the database for messages.
func (c *Controller) storeName() string {
	if c.opts.Store != nil || c.cfg.Accounting.Store == conf.StorePostgres {
		return "the configured store"
	}
	return filepath.Join(c.opts.StateDir, "ctld.db")
}

// clearStore moves an SQLite database aside for StartClear (slurmctld
// -c discards its state files; this keeps them, renamed, for a look).
func (c *Controller) clearStore() error {
	if c.opts.StartMode != StartClear || c.opts.Store != nil {
		return nil
	}
	if c.cfg.Accounting.Store == conf.StorePostgres {
		return errors.New("ctld: -c clears the SQLite store only: delete the rows of the ctld_* tables in PostgreSQL, then start with -R")
	}
	db := filepath.Join(c.opts.StateDir, "ctld.db")
	suffix := ".cleared-" + c.now().UTC().Format("20060102T150405")
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Rename(f, f+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("ctld: -c: %w", err)
		}
	}
	c.log.Warn("starting with no jobs (-c): the database was moved aside", "file", db+suffix)
	return nil
}

func newDBIdentity() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
