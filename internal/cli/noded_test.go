package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// syncBuffer is a bytes.Buffer safe to read while the agent's goroutines
// may still be logging into it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func nodedEnv(uid int) (*Env, *syncBuffer) {
	errb := &syncBuffer{}
	return &Env{Stdout: &bytes.Buffer{}, Stderr: errb, UID: uid, Getenv: func(k string) string {
		if k == "HOME" {
			return "/home/alice"
		}
		return ""
	}}, errb
}

func TestNodedFlagDefaults(t *testing.T) {
	cases := []struct {
		uid        int
		spool, key string
	}{
		{0, "/var/spool/sluice/n1", "/var/lib/sluice/cluster.key"},
		{1000, "/home/alice/.sluice/spool/n1", "/home/alice/.sluice/cluster.key"},
	}
	for _, c := range cases {
		env, _ := nodedEnv(c.uid)
		f, err := parseNodedFlags(env, []string{"--name", "n1", "--controller", "http://c:1"})
		if err != nil || f.spool != c.spool || f.key != c.key || f.listen != ":6818" {
			t.Errorf("uid %d: %+v %v", c.uid, f, err)
		}
	}
}

func TestNodedErrors(t *testing.T) {
	dir := t.TempDir()
	loose := filepath.Join(dir, "loose.key")
	os.WriteFile(loose, []byte(strings.Repeat("ab", 32)), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "noded: error: unknown flag: --bogus"},
		{[]string{"--name", "n1"}, "noded: error: --controller URL is required"},
		{[]string{"--controller", "http://c", "--key", filepath.Join(dir, "none")}, "noded: error: load cluster key"},
		{[]string{"--controller", "http://c", "--key", loose}, "too open"},
	}
	for _, c := range cases {
		env, errb := nodedEnv(os.Getuid())
		if code := runNoded(context.Background(), env, c.args); code != 1 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, code, errb.String(), c.want)
		}
	}
}

// TestNodedRunsUntilCancelled starts the command for real (no controller
// reachable: it keeps retrying registration) and stops it.
func TestNodedRunsUntilCancelled(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, api.ClusterKeyFile)
	if _, err := api.EnsureClusterKey(keyFile); err != nil {
		t.Fatal(err)
	}
	env, errb := nodedEnv(os.Getuid())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	code := runNoded(ctx, env, []string{"--name", "n9", "--controller", "http://127.0.0.1:1", "--spool", filepath.Join(dir, "spool"),
		"--key", keyFile, "--listen", "127.0.0.1:0", "--cgroup", "none", "--cpus", "3"})
	if code != 0 || !strings.Contains(errb.String(), "sluice noded: node n9 (CPUs=3") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
