package sqlstore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sluice-hpc/sluice/internal/acct"
)

// assertSameState fails when two states differ, printing the difference.
func assertSameState(t *testing.T, want, got *acct.State) {
	t.Helper()
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(acct.State{})); d != "" {
		t.Fatalf("state differs (-want +got):\n%s", d)
	}
}
