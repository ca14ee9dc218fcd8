// Package testusers provides the local accounts the tests act as: alice,
// bob, charlie and dave, the differential suite's scenario users (the
// oracle's cluster has them too). The controller resolves a token's user
// name through the password database, as slurmctld does, so these must
// be real accounts of the host.
package testusers

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"testing"
	"time"
)

// Names are the scenario users.
var Names = []string{"alice", "bob", "charlie", "dave"}

// Ensure creates the users that are missing (useradd, as root). Test
// binaries run in parallel may add the same users at once: a useradd
// that fails (the password file locked, the user just added by another)
// is retried until the user exists.
func Ensure() error {
	for _, u := range Names {
		if err := ensure(u); err != nil {
			return err
		}
	}
	return nil
}

// ensure creates user u unless it exists, trying up to 20 times.
func ensure(u string) error {
	var err error
	for try := 0; try < 20; try++ {
		if _, lerr := user.Lookup(u); lerr == nil {
			return nil
		}
		out, uerr := exec.Command("useradd", "-m", "-s", "/bin/sh", u).CombinedOutput()
		if uerr == nil {
			return nil
		}
		err = fmt.Errorf("useradd %s: %v: %s", u, uerr, out)
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// EnsureAsRoot is Ensure for a test binary's TestMain: as root it creates
// the users (a failure is reported, and the tests that need them skip);
// otherwise it does nothing.
func EnsureAsRoot() {
	if os.Geteuid() != 0 {
		return
	}
	if err := Ensure(); err != nil {
		fmt.Fprintln(os.Stderr, "testusers:", err)
	}
}

// Require skips t, saying why, when one of names is not a local user.
func Require(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := user.Lookup(n); err != nil {
			t.Skipf("needs the local user %s (the tests create it when run as root: run make test as root, or useradd %s)", n, n)
		}
	}
}
