package ctld

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// StateLockFile holds the pid of the controller using a state directory.
// Two controllers on one directory would take each other's socket and
// write the same database (slurmctld refuses a second daemon through its
// pid file the same way): the second one is refused at start.
const StateLockFile = "ctld.lock"

// lockStateDir takes the state directory for this controller; the lock
// lasts until the returned file is closed (or the process ends).
func lockStateDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, StateLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ctld: %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(data))
			return nil, fmt.Errorf("ctld: another controller (pid %s) is using the state directory %s: stop it first", pid, dir)
		}
		return nil, fmt.Errorf("ctld: lock %s: %w", path, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}
