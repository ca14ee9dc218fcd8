package ctld

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestStoreAddsRunsSuspended: a store whose ctld_runs table predates the
// suspended column opens, keeps its rows (suspended 0) and stores it.
func TestStoreAddsRunsSuspended(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ctld.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`CREATE TABLE ctld_runs (job_id BIGINT NOT NULL, restart INTEGER NOT NULL,
		array_job_id BIGINT NOT NULL, array_task_id INTEGER NOT NULL, name TEXT NOT NULL,
		user_name TEXT NOT NULL, uid BIGINT NOT NULL, gid BIGINT NOT NULL, account TEXT NOT NULL,
		qos TEXT NOT NULL, partition_name TEXT NOT NULL, submit BIGINT NOT NULL, eligible BIGINT NOT NULL,
		start_time BIGINT NOT NULL, end_time BIGINT NOT NULL, state TEXT NOT NULL, exit_code TEXT NOT NULL,
		nodelist TEXT NOT NULL, alloc_tres TEXT NOT NULL, req_tres TEXT NOT NULL, time_limit BIGINT NOT NULL,
		work_dir TEXT NOT NULL, PRIMARY KEY (job_id, restart))`,
		`INSERT INTO ctld_runs VALUES (1, 0, 0, -1, 'old', 'u', 0, 0, 'a', 'normal', 'debug', 0, 0, 0, 0,
		'COMPLETED', '0:0', 'n1', '', '', -1, '/tmp')`} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	for i := 0; i < 2; i++ { // the second open finds the column there
		s, err := OpenSQLite(ctx, path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if i == 0 {
			row := RunRow{JobID: 2, ArrayTaskID: -1, Name: "new", State: "CANCELLED", ExitCode: "0:0",
				Start: time.Unix(100, 0), End: time.Unix(275, 0), Suspended: 60}
			if err := s.Commit(ctx, &Batch{Runs: []RunRow{row}}); err != nil {
				t.Fatal(err)
			}
		}
		runs, err := s.Runs(ctx)
		s.Close()
		if err != nil || len(runs) != 2 || runs[0].Suspended != 0 || runs[1].Suspended != 60 {
			t.Fatalf("open %d: runs %+v (%v), want the old row and one suspended 60 s", i, runs, err)
		}
	}
}
