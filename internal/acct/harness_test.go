package acct

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtures is where the shared acceptance scripts live.
const fixtures = "../../../shared/fixtures"

// session runs sacctmgr command lines against one store as one user.
type session struct {
	t     testing.TB
	store Store
	env   RunEnv
}

func newSession(t testing.TB, s Store, cluster string) *session {
	return &session{t: t, store: s, env: RunEnv{ExecEnv: ExecEnv{Actor: Actor{Name: "root", UID: 0}, DefaultCluster: cluster,
		ReadFile: os.ReadFile}}}
}

// as returns a session for another user.
func (s *session) as(name string, uid int) *session {
	c := *s
	c.env.Actor = Actor{Name: name, UID: uid}
	return &c
}

// run runs one line and fails the test on error.
func (s *session) run(line string) string {
	s.t.Helper()
	out, err := s.try(line)
	if err != nil {
		s.t.Fatalf("%s: %v", line, err)
	}
	return out
}

// try runs one line and returns its output or error.
func (s *session) try(line string) (string, error) {
	words, err := ScriptArgs(line)
	if err != nil {
		return "", err
	}
	out, _, err := Run(context.Background(), s.store, words, s.env)
	return out, err
}

// script runs every line of a fixture script.
func (s *session) script(name string) {
	s.t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		s.t.Skipf("fixture %s: %v", name, err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		words, err := ScriptArgs(line)
		if err != nil {
			s.t.Fatalf("%s:%d: %v", name, i+1, err)
		}
		if len(words) == 0 {
			continue
		}
		if _, _, err := Run(context.Background(), s.store, words, s.env); err != nil {
			s.t.Fatalf("%s:%d: %s: %v", name, i+1, line, err)
		}
	}
}
