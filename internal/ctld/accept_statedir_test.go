package ctld

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestAcceptStateDirLeastPrivilege starts `sluice ctld` on a fresh state
// directory, runs a job (so every database has its -wal/-shm), and walks
// every file the controller created: the directory is 0711 (users reach
// the socket by name, cannot list), the socket 0666, the databases,
// keys and certificates 0600 (in the agent's spool too: its TLS key,
// certificate and CA). An ordinary user then runs squeue through the socket but can
// open neither ctld.db nor the keys (job scripts and environments are in
// the database).
func TestAcceptStateDirLeastPrivilege(t *testing.T) {
	t.Parallel()
	bin := acceptSluice(t)
	c := startAcceptCluster(t, bin, acceptOpts{nodes: 1, cpus: 2})
	id := c.submit("", "")
	c.waitJobs(30*time.Second, "job ran", func(j map[uint32]api.JobInfo) bool { return countIn(j, []uint32{id}, "COMPLETED") == 1 })
	want := map[string]fs.FileMode{".": 0o711, "sluice.sock": 0o666}
	for _, f := range privateFiles {
		want[f] = 0o600
	}
	seen := map[string]bool{}
	filepath.WalkDir(c.state, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(c.state, p)
		st, _ := os.Lstat(p)
		mode, ok := want[rel]
		if !ok {
			mode = 0o600
			if d.IsDir() {
				mode = 0o700
			}
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s: mode %04o, want %04o", rel, st.Mode().Perm(), mode)
		}
		seen[rel] = true
		return nil
	})
	for _, f := range []string{"ctld.db", "ctld.db-wal", "sluice.db", "sluice.db-wal", "cluster.key", "jwt_hs256.key",
		api.CACertFile, api.CAKeyFile, api.CtldCertFile, api.CtldKeyFile} {
		if !seen[f] {
			t.Errorf("%s not created in %s", f, c.state)
		}
	}
	// The agent's spool: directories are traversable only (the job's user
	// reaches its own script by name), files private; its TLS key,
	// certificate and CA (agent traffic) exactly 0600.
	tlsFiles := map[string]bool{api.AgentKeyFile: false, api.AgentCertFile: false, api.CACertFile: false}
	filepath.WalkDir(c.spool("a1"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		st, _ := os.Lstat(p)
		if st.Mode().Type() == 0 && st.Mode().Perm()&0o044 != 0 || d.IsDir() && st.Mode().Perm()&0o066 != 0 {
			t.Errorf("spool %s: mode %04o readable or writable by others", p, st.Mode().Perm())
		}
		if _, ok := tlsFiles[d.Name()]; ok && filepath.Dir(p) == c.spool("a1") {
			tlsFiles[d.Name()] = true
			if st.Mode().Perm() != 0o600 {
				t.Errorf("spool %s: mode %04o, want 0600", p, st.Mode().Perm())
			}
		}
		return nil
	})
	for f, ok := range tlsFiles {
		if !ok {
			t.Errorf("spool: %s not created", f)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("the ordinary-user half needs root, to run squeue and a file reader as alice (uid 1001)")
	}
	alice := &syscall.Credential{Uid: 1001, Gid: 1001}
	if rc, out, errb := c.runCLI(alice, nil, "squeue"); rc != 0 || !strings.Contains(out, "JOBID") {
		t.Errorf("squeue as alice: rc %d %q %q", rc, out, errb)
	}
	for _, f := range []string{"ctld.db", "sluice.db", "cluster.key", "jwt_hs256.key", api.CAKeyFile, api.CtldKeyFile} {
		cat := exec.Command("cat", filepath.Join(c.state, f))
		cat.SysProcAttr = &syscall.SysProcAttr{Credential: alice}
		if out, err := cat.CombinedOutput(); err == nil || !strings.Contains(string(out), "Permission denied") {
			t.Errorf("alice opened %s (err %v, %d bytes)", f, err, len(out))
		}
	}
}
