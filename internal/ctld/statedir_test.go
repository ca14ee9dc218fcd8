package ctld

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestPrepareStateDir: a missing directory is created 0711; an empty one
// and one Sluice made earlier (it holds cluster.key) with 0755 and 0644
// files are tightened; any other group/other-readable directory is refused with an
// error naming it and the chmod that fixes it.
func TestPrepareStateDir(t *testing.T) {
	t.Parallel()
	t.Run("created", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "a", "state")
		if err := PrepareStateDir(dir); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(dir); st.Mode().Perm() != 0o711 {
			t.Errorf("mode %04o, want 0711", st.Mode().Perm())
		}
	})
	t.Run("tightened", func(t *testing.T) {
		dir := t.TempDir()
		os.Chmod(dir, 0o755)
		for _, f := range []string{api.ClusterKeyFile, "ctld.db", "ctld.db-wal", "sluice.db-shm"} {
			os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
		}
		if err := PrepareStateDir(dir); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(dir); st.Mode().Perm() != 0o711 {
			t.Errorf("dir mode %04o, want 0711", st.Mode().Perm())
		}
		for _, f := range []string{api.ClusterKeyFile, "ctld.db", "ctld.db-wal", "sluice.db-shm"} {
			if st, _ := os.Stat(filepath.Join(dir, f)); st.Mode().Perm() != 0o600 {
				t.Errorf("%s mode %04o, want 0600", f, st.Mode().Perm())
			}
		}
	})
	t.Run("empty-tightened", func(t *testing.T) {
		dir := t.TempDir()
		os.Chmod(dir, 0o755)
		if err := PrepareStateDir(dir); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(dir); st.Mode().Perm() != 0o711 {
			t.Errorf("mode %04o, want 0711", st.Mode().Perm())
		}
	})
	t.Run("refused", func(t *testing.T) {
		dir := t.TempDir()
		os.Chmod(dir, 0o750)
		os.WriteFile(filepath.Join(dir, "site-notes"), nil, 0o600)
		err := PrepareStateDir(dir)
		if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "chmod 0711 "+dir) {
			t.Fatalf("err %v, want a refusal naming %s and the chmod", err, dir)
		}
	})
}

// TestSecondControllerRefused: a second controller on a state directory
// in use is refused, naming the first one's pid (two would take each
// other's socket and write one database); once the first closes, the
// directory can be taken again.
func TestSecondControllerRefused(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	_, err := New(context.Background(), Options{Conf: c.cfg, StateDir: c.ctl.opts.StateDir, Store: c.store, Listen: "none"})
	want := fmt.Sprintf("another controller (pid %d) is using the state directory %s", os.Getpid(), c.ctl.opts.StateDir)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second controller: %v, want %q", err, want)
	}
	c.ctl.Close()
	again, err := New(context.Background(), Options{Conf: c.cfg, StateDir: c.ctl.opts.StateDir, Store: c.store, Listen: "none"})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	again.Close() // never started: Close must not wait for a loop

	if st, err := os.Stat(filepath.Join(c.ctl.opts.StateDir, StateLockFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v", err)
	}
}
