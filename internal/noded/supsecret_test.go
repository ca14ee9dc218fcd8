package noded

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSupervisorAddrSecret: the supervisor's abstract name hides a
// secret only the spool's owner can read (0600), so another user cannot
// compute it and bind it first (issue 17, finding 4); it is stable for
// one spool and differs once the secret does.
func TestSupervisorAddrSecret(t *testing.T) {
	spool := t.TempDir()
	a1, err := supervisorAddr(spool)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(spool, supervisorSecretFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v %v, want mode 0600", st, err)
	}
	if a2, _ := supervisorAddr(spool); a2 != a1 || !strings.HasPrefix(a1, "@sluice-noded-supervisor/") {
		t.Fatalf("addresses %q then %q", a1, a2)
	}
	os.Remove(filepath.Join(spool, supervisorSecretFile))
	if a3, _ := supervisorAddr(spool); a3 == a1 {
		t.Fatal("the address does not depend on the secret")
	}
	os.WriteFile(filepath.Join(spool, supervisorSecretFile), []byte("short\n"), 0o600)
	if _, err := supervisorAddr(spool); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged secret: %v", err)
	}
}
