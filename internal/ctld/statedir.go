package ctld

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sluice-hpc/sluice/internal/api"
)

// StateDirMode is the controller's state directory mode. The directory
// holds ctld.db (every job's script and environment), the accounting
// database and the keys, all 0600; but ordinary users must reach the API
// socket (sluice.sock, 0666) inside it to run squeue, sbatch and the
// rest. 0711 lets them traverse to the socket by name while they can
// neither list the directory nor open the private files (Slurm keeps its
// StateSaveLocation private to SlurmUser and serves users over TCP).
const StateDirMode os.FileMode = 0o711

// privateFiles are the state files only the controller may read.
var privateFiles = []string{"ctld.db", "ctld.db-wal", "ctld.db-shm", "sluice.db", "sluice.db-wal",
	"sluice.db-shm", api.ClusterKeyFile, JWTKeyFile, StateRecordFile,
	api.CACertFile, api.CAKeyFile, api.CtldCertFile, api.CtldKeyFile}

// PrepareStateDir creates the state directory with StateDirMode, or checks
// an existing one: an empty directory (made by mkdir, systemd or an older
// Sluice, nothing in it yet) or one Sluice filled earlier (it holds the
// cluster key) with looser modes is tightened; any other group- or
// other-readable directory is refused with the chmod that fixes it, so
// that a site never runs with its own files there exposed by accident.
func PrepareStateDir(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, StateDirMode); err != nil {
			return fmt.Errorf("ctld: state directory: %w", err)
		}
		return os.Chmod(dir, StateDirMode) // MkdirAll applies the umask
	}
	if err != nil {
		return fmt.Errorf("ctld: state directory: %w", err)
	}
	if st.Mode().Perm()&0o044 != 0 {
		if !emptyOrOurs(dir) {
			return fmt.Errorf("ctld: state directory %s is readable by group or others (mode %04o): "+
				"run chmod %04o %s", dir, st.Mode().Perm(), StateDirMode, dir)
		}
		if err := os.Chmod(dir, StateDirMode); err != nil {
			return fmt.Errorf("ctld: tighten state directory %s: %w", dir, err)
		}
	}
	return tightenFiles(dir)
}

// emptyOrOurs reports whether dir is empty or holds Sluice's cluster key.
func emptyOrOurs(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, api.ClusterKeyFile)); err == nil {
		return true
	}
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) == 0
}

// tightenFiles makes the private files Sluice created earlier 0600.
func tightenFiles(dir string) error {
	for _, name := range privateFiles {
		p := filepath.Join(dir, name)
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("ctld: chmod 0600 %s: %w", p, err)
		}
	}
	return nil
}

// CreatePrivate creates path (if missing) as an empty 0600 file so that
// SQLite, which gives its -wal and -shm files the mode of the database
// file, never makes any of them world-readable.
func CreatePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	return os.Chmod(path, 0o600)
}
