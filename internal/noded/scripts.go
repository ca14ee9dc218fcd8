package noded

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/sluice-hpc/sluice/internal/api"
)

// scriptStore keeps the batch scripts of a node's jobs in SPOOL/scripts,
// one file per distinct (user, group, script text), shared by the jobs
// that run it, as Slurm keeps one script for all the tasks of a job array.
// A queue of identical short jobs (array tasks, --wrap loops) then creates
// no file per job: on a small VM each new inode costs more CPU than the
// rest of the job's bookkeeping on the node. A file belongs to the job's
// user, is readable and executable only by them and sits in a directory
// only root (the agent) can write, so no job can remove or replace a
// script another job is running; the file is removed with its last job.
type scriptStore struct {
	dir  string
	mu   sync.Mutex
	refs map[string]int
}

func newScriptStore(spool string) *scriptStore {
	return &scriptStore{dir: filepath.Join(spool, scriptsDir), refs: map[string]int{}}
}

// path names the file holding req's script.
func (s *scriptStore) path(req *api.LaunchRequest) string {
	sum := sha256.Sum256([]byte(req.Script))
	return filepath.Join(s.dir, fmt.Sprintf("%d_%d_%x", req.UID, req.GID, sum[:12]))
}

// acquire returns the file of req's script, written (and given to the job's
// user when chown is set) unless another job already holds it.
func (s *scriptStore) acquire(req *api.LaunchRequest, chown bool) (string, error) {
	p := s.path(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs[p] > 0 {
		s.refs[p]++
		return p, nil
	}
	os.Remove(p) // left by an agent that died before removing it
	if err := os.WriteFile(p, []byte(req.Script), 0o700); err != nil {
		return "", fmt.Errorf("write script: %w", err)
	}
	if chown {
		if err := os.Chown(p, int(req.UID), int(req.GID)); err != nil {
			os.Remove(p)
			return "", fmt.Errorf("chown script: %w", err)
		}
	}
	os.Chmod(p, 0o500)
	s.refs[p] = 1
	return p, nil
}

// adopt counts a job re-attached after an agent restart as a holder of
// its script file.
func (s *scriptStore) adopt(p string) {
	s.mu.Lock()
	s.refs[p]++
	s.mu.Unlock()
}

// release drops one holder of p, removing the file with the last.
func (s *scriptStore) release(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs[p]--; s.refs[p] <= 0 {
		delete(s.refs, p)
		os.Remove(p)
	}
}
