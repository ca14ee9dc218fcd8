package oracle

import (
	"fmt"
	"os/exec"
	"os/user"
)

// EnsureUsers creates the scenario users on this host when they are
// missing (useradd, as root), so that Sluice sees the users the oracle has.
func EnsureUsers() error {
	for _, u := range Users {
		if _, err := user.Lookup(u); err == nil {
			continue
		}
		if out, err := exec.Command("useradd", "-m", "-s", "/bin/sh", u).CombinedOutput(); err != nil {
			return fmt.Errorf("useradd %s: %v: %s", u, err, out)
		}
	}
	return nil
}
