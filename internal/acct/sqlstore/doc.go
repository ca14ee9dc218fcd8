// Package sqlstore implements acct.Store on SQL databases: SQLite in WAL
// mode (modernc.org/sqlite, pure Go, the embedded default, one file under
// StateSaveLocation) and PostgreSQL (pgx). Both share one schema and one
// migration set (migrations/*.sql, embedded), and one implementation on
// database/sql; only placeholders and writer locking differ.
//
// Every Update runs in one transaction that first takes the writers' lock
// (SQLite: BEGIN IMMEDIATE; PostgreSQL: a transaction-scoped advisory
// lock), reads the state, lets the caller change a copy, and writes the
// difference. A failed command therefore writes nothing, and concurrent
// writers (sacctmgr processes, the controller) are serialized.
//
// SQLite runs with journal_mode=WAL and synchronous=NORMAL: a committed
// transaction survives the process being killed (SIGKILL); only an
// operating system crash or power loss may lose the last commits.
//
// Tests: the same suite runs on both databases. PostgreSQL tests read
// SLUICE_TEST_PG_DSN (scripts/pg-up.sh prints one), create a schema per
// test, and skip when no server answers, or fail when SLUICE_REQUIRE_PG=1.
package sqlstore
