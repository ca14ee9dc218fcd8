package oracle

import "github.com/sluice-hpc/sluice/internal/testusers"

// EnsureUsers creates the scenario users on this host when they are
// missing (useradd, as root), so that Sluice sees the users the oracle has.
func EnsureUsers() error { return testusers.Ensure() }
