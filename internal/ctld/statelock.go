package ctld

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// StateLockFile holds the pid of the controller using a state directory.
// Two controllers on one directory would take each other's socket and
// write the same database (slurmctld refuses a second daemon through its
// pid file the same way): the second one is refused at start.
const StateLockFile = "ctld.lock"

// heldDirs are the state directories a controller of this process holds
// now. A process that forks (node agents in the same process start job
// processes) leaves every descriptor, the lock's too, in each child
// between its fork and its exec: the lock can outlive the controller that
// closed it by that moment, and is still held, with this process's pid in
// it, when this process's next controller (a restart, a reconfigure)
// comes. That is not a second controller: it is let through.
var heldDirs sync.Map // dir -> struct{}

// lockStateDir takes the state directory for this controller; the lock
// lasts until unlockStateDir (or the end of the process).
func lockStateDir(dir string) (*os.File, error) {
	if _, busy := heldDirs.LoadOrStore(dir, struct{}{}); busy {
		return nil, fmt.Errorf("ctld: another controller (pid %d) is using the state directory %s: stop it first", os.Getpid(), dir)
	}
	f, err := flockStateDir(dir)
	if err != nil {
		heldDirs.Delete(dir)
	}
	return f, err
}

// unlockStateDir releases what lockStateDir took.
func unlockStateDir(dir string, f *os.File) {
	f.Close()
	heldDirs.Delete(dir)
}

func flockStateDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, StateLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ctld: %s: %w", path, err)
	}
	if err := flockRetry(f); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		pid := strings.TrimSpace(string(data))
		if errors.Is(err, unix.EWOULDBLOCK) && pid == strconv.Itoa(os.Getpid()) {
			// Locked by a descriptor of this process's earlier
			// controller still open in a forked child: take it over.
			return os.OpenFile(path, os.O_RDWR, 0o600)
		}
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("ctld: another controller (pid %s) is using the state directory %s: stop it first", pid, dir)
		}
		return nil, fmt.Errorf("ctld: lock %s: %w", path, err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// flockRetry takes the lock, waiting a little for a forked child of a
// controller of this process to exec (and drop its copy).
func flockRetry(f *os.File) error {
	var err error
	for try := 0; try < 20; try++ {
		if err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}
