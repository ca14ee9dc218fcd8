// Package pgtest gives a test a PostgreSQL schema of its own on the server
// named by SLUICE_TEST_PG_DSN (scripts/pg-up.sh starts one and prints the
// DSN). Without a server the test is skipped, unless SLUICE_REQUIRE_PG=1
// (CI), which makes a missing server a failure. Only tests import it.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// Schema creates the schema prefix_<random> and returns a DSN whose
// search_path points at it, with the schema's name; the schema is dropped
// when the test ends.
func Schema(t testing.TB, prefix string) (dsn, schema string) {
	t.Helper()
	base := os.Getenv("SLUICE_TEST_PG_DSN")
	unavailable := func(format string, a ...any) {
		t.Helper()
		if os.Getenv("SLUICE_REQUIRE_PG") == "1" {
			t.Fatalf("PostgreSQL required (SLUICE_REQUIRE_PG=1): "+format, a...)
		}
		t.Skipf("PostgreSQL not available: "+format, a...)
	}
	if base == "" {
		unavailable("SLUICE_TEST_PG_DSN is not set (run scripts/pg-up.sh)")
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("SLUICE_TEST_PG_DSN: %v", err)
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		unavailable("%v", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		unavailable("%v", err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema = prefix + "_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if db, err := sql.Open("pgx", base); err == nil {
			db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), schema
}
