package ctld

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// faultyStore fails every commit while fail holds an error: a full disk
// where a real one cannot be made (no root).
type faultyStore struct {
	Store
	fail atomic.Pointer[error]
}

func (s *faultyStore) Commit(ctx context.Context, b *Batch) error {
	if e := s.fail.Load(); e != nil {
		return *e
	}
	return s.Store.Commit(ctx, b)
}

func (s *faultyStore) setFail(err error) {
	if err == nil {
		s.fail.Store(nil)
		return
	}
	s.fail.Store(&err)
}

// TestFailedSubmitIsRolledBack is issue 17's finding 2: a submission the
// store could not take is answered as failed and is gone from memory
// (not stored later, so a resubmission makes one job), reads keep
// working, ping and sdiag say state save is failing and why, and writes
// resume by themselves when the store takes them again.
func TestFailedSubmitIsRolledBack(t *testing.T) {
	t.Parallel()
	fs := &faultyStore{Store: openTestSQLite(t)}
	c := newCluster(t, fs, clusterOpts{nodes: 2})
	first := c.submit(c.wrap("sleep 30"))
	c.waitState(first, "RUNNING", 10*time.Second)

	fs.setFail(fmt.Errorf("commit: %w", syscall.ENOSPC))
	_, err := c.client.Submit(c.ctx(), api.SubmitRequest{Spec: c.wrap("true")})
	if err == nil || !strings.Contains(err.Error(), "Unable to save state") || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("submit on a full disk: err %v", err)
	}
	// The next one is refused before it changes anything.
	_, err = c.client.Submit(c.ctx(), api.SubmitRequest{Spec: c.wrap("true")})
	if err == nil || !strings.Contains(err.Error(), "state save failing") {
		t.Fatalf("second submit on a full disk: err %v", err)
	}
	// Reads work from memory: the running job is there, the failed one not.
	res, err := c.client.Jobs(c.ctx(), api.JobQuery{})
	if err != nil {
		t.Fatalf("squeue on a full disk: %v", err)
	}
	if len(res.Jobs) != 1 || res.Jobs[0].JobID != first || res.Jobs[0].State != "RUNNING" {
		t.Fatalf("jobs on a full disk: %+v", res.Jobs)
	}
	w, err := c.client.Ping(c.ctx())
	if err != nil || !strings.Contains(w.StateSave, "state save failing") || !strings.Contains(w.StateSave, "no space left") {
		t.Fatalf("ping on a full disk: %+v, %v", w, err)
	}
	sd, err := c.client.Sdiag(c.ctx())
	if err != nil || !strings.Contains(sd.StateSave, "no space left") {
		t.Fatalf("sdiag on a full disk: %q, %v", sd.StateSave, err)
	}
	if _, ok := c.jobByID(first + 1); ok {
		t.Fatalf("the failed submission %d is in memory", first+1)
	}

	fs.setFail(nil)
	c.eventually(5*time.Second, "state save resumed", func() bool {
		w, err := c.client.Ping(c.ctx())
		return err == nil && w.StateSave == ""
	})
	next := c.submit(c.wrap("true"))
	c.waitState(next, "COMPLETED", 10*time.Second)
	if j := c.job(first); j.State != "RUNNING" {
		t.Fatalf("job %d after the disk came back: %s", first, j.State)
	}
	// Only what was acknowledged survives a restart.
	c.ctl.Close()
	c.startController()
	res, err = c.client.Jobs(c.ctx(), api.JobQuery{})
	if err != nil || len(res.Jobs) != 2 {
		t.Fatalf("jobs after restart: %+v, %v", res.Jobs, err)
	}
}

// TestFullDiskSubmit fills a real (tmpfs) file system under the store:
// the submission that no longer fits is refused and not kept; once the
// filler is removed submissions work again. Needs root (mount).
func TestFullDiskSubmit(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", mnt).Run() })
	store, err := OpenSQLite(context.Background(), filepath.Join(mnt, "ctld.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	c := newCluster(t, store, clusterOpts{nodes: 1})
	fill := filepath.Join(mnt, "filler")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	script := "#!/bin/sh\n#" + strings.Repeat("x", 256<<10) + "\ntrue\n"
	var refused error
	var ids []uint32
	for i := 0; i < 20 && refused == nil; i++ {
		spec := c.wrap("true")
		spec.Script = script
		res, err := c.client.Submit(c.ctx(), api.SubmitRequest{Spec: spec})
		if err != nil {
			refused = err
			break
		}
		ids = append(ids, res.JobID)
	}
	t.Logf("accepted %d, then: %v", len(ids), refused)
	if refused == nil || !strings.Contains(refused.Error(), "Unable to save state") {
		t.Fatalf("no submission refused on a full disk (%d accepted): %v", len(ids), refused)
	}
	res, err := c.client.Jobs(c.ctx(), api.JobQuery{})
	if err != nil || len(res.Jobs) != len(ids) {
		t.Fatalf("squeue on a full disk: %d jobs, %v; want the %d acknowledged", len(res.Jobs), err, len(ids))
	}
	os.Remove(fill)
	c.eventually(5*time.Second, "state save resumed", func() bool {
		w, err := c.client.Ping(c.ctx())
		return err == nil && w.StateSave == ""
	})
	id := c.submit(c.wrap("true"))
	res, err = c.client.Jobs(c.ctx(), api.JobQuery{})
	if err != nil || len(res.Jobs) != len(ids)+1 {
		t.Fatalf("after the disk came back: job %d, %d jobs, %v", id, len(res.Jobs), err)
	}
}

// TestFailedUpdateIsRolledBack: a release the store could not take
// leaves the job held, in memory as on disk (finding 2, updates).
func TestFailedUpdateIsRolledBack(t *testing.T) {
	t.Parallel()
	fs := &faultyStore{Store: openTestSQLite(t)}
	c := newCluster(t, fs, clusterOpts{nodes: 1})
	id := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Hold = true }))
	fs.setFail(fmt.Errorf("commit: %w", syscall.ENOSPC))
	res, err := c.client.Control(c.ctx(), api.JobControlRequest{Op: api.OpRelease, Jobs: []string{idStr(id)}})
	if err == nil && (len(res.Results) == 0 || res.Results[0].Error == "") {
		t.Fatalf("release on a full disk answered success: %+v", res)
	}
	if j := c.job(id); j.State != "PENDING" || j.Reason != "JobHeldUser" {
		t.Fatalf("job %d after a failed release: %s %s", id, j.State, j.Reason)
	}
	fs.setFail(nil)
	c.eventually(5*time.Second, "state save resumed", func() bool {
		w, err := c.client.Ping(c.ctx())
		return err == nil && w.StateSave == ""
	})
	time.Sleep(200 * time.Millisecond)
	if j := c.job(id); j.State != "PENDING" || j.Reason != "JobHeldUser" {
		t.Fatalf("job %d released late: %s %s", id, j.State, j.Reason)
	}
}
