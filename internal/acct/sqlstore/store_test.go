package sqlstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/pgtest"
)

// backend opens a fresh, isolated store for one test.
type backend struct {
	name string
	open func(t *testing.T) *Store
}

// backends returns the stores every test runs against: SQLite always,
// PostgreSQL when SLUICE_TEST_PG_DSN names a reachable server. With
// SLUICE_REQUIRE_PG=1 an unreachable server fails the test instead of
// skipping it (CI).
func backends() []backend {
	return []backend{{"sqlite", openTestSQLite}, {"postgres", openTestPostgres}}
}

// forEachStore runs f as a subtest per backend.
func forEachStore(t *testing.T, f func(t *testing.T, s *Store)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { f(t, b.open(t)) })
	}
}

func openTestSQLite(t *testing.T) *Store {
	t.Helper()
	s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "sluice.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openTestPostgres opens a store in a schema of the test's own
// (pgtest.Schema), dropped afterwards.
func openTestPostgres(t *testing.T) *Store {
	t.Helper()
	dsn, _ := pgtest.Schema(t, "sluice_test")
	s, err := OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// session runs sacctmgr lines against a store as root.
type session struct {
	t     *testing.T
	store acct.Store
	env   acct.RunEnv
}

func newSession(t *testing.T, s acct.Store, cluster string) *session {
	return &session{t: t, store: s, env: acct.RunEnv{ExecEnv: acct.ExecEnv{
		Actor: acct.Actor{Name: "root"}, DefaultCluster: cluster, ReadFile: os.ReadFile},
		WriteFile: func(name string, data []byte) error { return os.WriteFile(name, data, 0o644) }}}
}

func (s *session) try(line string) (string, error) {
	words, err := acct.ScriptArgs(line)
	if err != nil {
		return "", err
	}
	out, _, err := acct.Run(context.Background(), s.store, words, s.env)
	return out, err
}

func (s *session) run(line string) string {
	s.t.Helper()
	out, err := s.try(line)
	if err != nil {
		s.t.Fatalf("%s: %v", line, err)
	}
	return out
}

func TestFreshStoreHasNormalQOSAndRoot(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		st, err := s.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if q := st.QOS["normal"]; q == nil || q.Priority != 0 || q.ID != 1 {
			t.Fatalf("normal = %+v", q)
		}
		if u := st.Users["root"]; u == nil || u.AdminLevel != acct.AdminAdministrator {
			t.Fatalf("root user = %+v", u)
		}
	})
}

func TestReopenKeepsState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sluice.db")
	s, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	newSession(t, s, "c1").run("add account physics Description=PhysicsDept")
	s.Close()
	s2, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	st, _ := s2.Load(context.Background())
	if a := st.Accounts["physics"]; a == nil || a.Description != "physicsdept" { // sacctmgr lowercases descriptions
		t.Fatalf("physics after reopen = %+v", a)
	}
	var mode string
	s2.db.QueryRow("PRAGMA journal_mode").Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
}

func TestRoundTripEveryField(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ss := newSession(t, s, "c1")
		ss.run("add qos high Priority=100 Flags=DenyOnLimit,NoDecay GraceTime=120 PreemptMode=suspend,gang PreemptExemptTime=600 UsageFactor=2.5 UsageThreshold=0.5 LimitFactor=0.75 GrpTRES=cpu=10,mem=2G,gres/gpu:a100=2 MaxTRESPerUser=node=3 MinTRES=cpu=1 MaxWall=1-00:00:00 GrpJobs=5 MaxSubmitJobsPerAccount=9 Description='High prio'")
		ss.run("add qos low")
		ss.run("modify qos high set preempt=low")
		ss.run("add account phys Description='Phys dept' Organization=sci Fairshare=40 GrpTRESMins=cpu=1000 MaxWall=60 QOS=high,normal DefaultQOS=high Priority=7")
		ss.run("add user alice Account=phys Fairshare=parent MaxJobs=3 MaxTRESPerNode=gres/gpu=2 AdminLevel=Operator Partition=gpu")
		got, err := s.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// Drop the cache so the second load reads every row back.
		s.mu.Lock()
		s.cache = nil
		s.cacheVer = -1
		s.mu.Unlock()
		again, err := s.Load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		assertSameState(t, got, again)
		if err := again.Check(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestUsageRoundTrip(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
		in := []acct.Usage{{Kind: acct.UsageAssoc, ID: 3, RawUsage: 47.5, GrpUsedWall: 10, LastDecay: at},
			{Kind: acct.UsageQOS, ID: 1, RawUsage: 1e9}}
		if err := s.SaveUsage(ctx, in); err != nil {
			t.Fatal(err)
		}
		in[0].RawUsage = 48
		if err := s.SaveUsage(ctx, in[:1]); err != nil {
			t.Fatal(err)
		}
		out, err := s.LoadUsage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 2 || out[0].RawUsage != 48 || !out[0].LastDecay.Equal(at) || out[1].RawUsage != 1e9 || !out[1].LastDecay.IsZero() {
			t.Fatalf("usage = %+v", out)
		}
	})
}

func TestFailedCommandWritesNothing(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ss := newSession(t, s, "c1")
		ss.run("add account phys")
		before := ss.run("show assoc -P")
		for _, bad := range []string{
			"add user bob Account=nosuch",
			"modify account phys set qos+=nosuch",
			"add qos q1 Preempt=q1",
			"modify account phys set GrpTRES=cpu=abc",
			"modify account phys set MaxWall=1:2:3:4",
			"add user carol Account=phys MaxJobs=many", // fails after creating carol
		} {
			if _, err := ss.try(bad); err == nil {
				t.Errorf("%s: no error", bad)
			}
		}
		if after := ss.run("show assoc -P"); after != before {
			t.Errorf("show assoc changed after failed commands:\n%s\nwant\n%s", after, before)
		}
		if out := ss.run("show qos format=Name -P -n"); out != "normal\n" {
			t.Errorf("qos after failed commands = %q", out)
		}
	})
}

func TestVersionAdvancesOnCommitOnly(t *testing.T) {
	forEachStore(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		v0, err := s.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ss := newSession(t, s, "c1")
		ss.run("add account a")
		v1, _ := s.Version(ctx)
		ss.try("add user x Account=nosuch")
		v2, _ := s.Version(ctx)
		if v1 != v0+1 || v2 != v1 {
			t.Errorf("versions %d %d %d, want +1 after a change and none after a failure", v0, v1, v2)
		}
	})
}
