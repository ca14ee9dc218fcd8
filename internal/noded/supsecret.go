package noded

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// supervisorSecretFile holds, in the spool (0600), the random secret the
// supervisor's abstract socket name is derived from. The abstract socket
// namespace has no permissions: a name any local user could compute is
// a name any local user could bind first (issue 17, finding 4), making
// every launch on the node fail. With the secret in the name, only the
// agent's own user, who can read the file, knows where to listen.
const supervisorSecretFile = "supervisor.secret"

// supervisorSecret returns the spool's secret, creating it when missing
// (by link, so two processes racing agree on one).
func supervisorSecret(spool string) (string, error) {
	path := filepath.Join(spool, supervisorSecretFile)
	data, err := os.ReadFile(path)
	if err == nil {
		if s := strings.TrimSpace(string(data)); len(s) >= 32 {
			return s, nil
		}
		return "", fmt.Errorf("supervisor secret %s is damaged: remove it (with no job running) to make a new one", path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("supervisor secret: %w", err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(spool, ".secret-*")
	if err != nil {
		return "", fmt.Errorf("supervisor secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(hex.EncodeToString(b) + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path) // CreateTemp made it 0600
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("supervisor secret: %w", err)
	}
	return supervisorSecret(spool)
}

// supervisorAddr is the abstract Unix socket of the supervisor of spool:
// no file to go stale when the supervisor dies, no path length limit, and
// binding it is exclusive, so two supervisors never serve one spool. Its
// name hides the spool's secret, so no other user can bind it first;
// both ends still check the other's uid (SO_PEERCRED).
func supervisorAddr(spool string) (string, error) {
	abs, err := filepath.Abs(spool)
	if err != nil {
		abs = spool
	}
	secret, err := supervisorSecret(abs)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs + "\x00" + secret))
	return fmt.Sprintf("@sluice-noded-supervisor/%x", sum[:16]), nil
}

// SupervisorAddr returns the abstract socket name the supervisor of
// spool listens on (tests, diagnostics), creating the spool's secret
// when missing.
func SupervisorAddr(spool string) (string, error) { return supervisorAddr(spool) }
