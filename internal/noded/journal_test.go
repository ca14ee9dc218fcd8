package noded

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestRecordLogReplay: the last record of every job survives a reopen,
// removed jobs and a torn last line (a crash mid-write) do not.
func TestRecordLogReplay(t *testing.T) {
	spool := t.TempDir()
	log, recs, err := openRecordLog(spool)
	if err != nil || len(recs) != 0 {
		t.Fatalf("empty spool: %v records, err %v", len(recs), err)
	}
	for id := uint32(1); id <= 3; id++ {
		r := jobRecord{Req: api.LaunchRequest{JobID: id}, State: api.StateRunning}
		log.put(&r)
		r.PID = int(id) * 100
		log.put(&r)
	}
	log.remove(2)
	log.close()
	f, _ := os.OpenFile(filepath.Join(spool, recordLogFile), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"job":4,"rec":{"req":{"job_id":4`)
	f.Close()
	_, recs, err = openRecordLog(spool)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32]int{1: 100, 3: 300}
	if len(recs) != len(want) {
		t.Fatalf("records after reopen: %v, want jobs 1 and 3", recs)
	}
	for id, pid := range want {
		if recs[id].PID != pid {
			t.Errorf("job %d: pid %d, want %d (its last record)", id, recs[id].PID, pid)
		}
	}
}

// TestJournalCompacts: a journal mostly made of removed entries is
// rewritten with the live ones only, and a reader following it sees the
// same live entries before and after.
func TestJournalCompacts(t *testing.T) {
	spool := t.TempDir()
	w, err := openExitLog(spool)
	if err != nil {
		t.Fatal(err)
	}
	r := newExitReader(spool)
	defer r.close()
	now := time.Unix(1e9, 0)
	n, written := uint32(0), int64(0)
	for written < 2*journalCompactBytes {
		n++
		before := w.j.size
		w.add(exitLine{Job: n, WaitStatus: 256, Time: now})
		if n%1000 == 0 {
			r.refresh()
		}
		written += w.j.size - before
		if n > 5 {
			w.forget(n-5, 0)
		}
	}
	if w.j.size > journalCompactBytes {
		t.Fatalf("journal of %d live exits is %d bytes: never compacted", len(w.j.lines), w.j.size)
	}
	r.refresh()
	for id := n - 4; id <= n; id++ {
		if ex, ok := r.lookup(id, 0); !ok || ex.WaitStatus != 256 {
			t.Errorf("job %d: exit %+v found=%v after compaction", id, ex, ok)
		}
	}
	if _, ok := r.lookup(n-5, 0); ok {
		t.Errorf("job %d was forgotten but is still found", n-5)
	}
	if !SpoolExited(spool, n) || SpoolExited(spool, 1) {
		t.Errorf("SpoolExited: job %d (live) %v, job 1 (forgotten) %v", n, SpoolExited(spool, n), SpoolExited(spool, 1))
	}
}

// TestScriptStoreShares: jobs running the same script as the same user
// share one file, removed with the last of them; another user's copy is
// a file of its own.
func TestScriptStoreShares(t *testing.T) {
	spool := t.TempDir()
	os.MkdirAll(filepath.Join(spool, scriptsDir), 0o711)
	s := newScriptStore(spool)
	a := &api.LaunchRequest{JobID: 1, UID: 1000, GID: 1000, Script: "#!/bin/sh\ntrue\n"}
	b := &api.LaunchRequest{JobID: 2, UID: 1000, GID: 1000, Script: a.Script}
	c := &api.LaunchRequest{JobID: 3, UID: 1001, GID: 1001, Script: a.Script}
	pa, _ := s.acquire(a, false)
	pb, _ := s.acquire(b, false)
	pc, _ := s.acquire(c, false)
	if pa != pb || pa == pc {
		t.Fatalf("paths: same user %q %q, other user %q", pa, pb, pc)
	}
	s.release(pa)
	if !fileExists(pb) {
		t.Fatal("script removed while job 2 still holds it")
	}
	s.release(pb)
	if fileExists(pb) {
		t.Fatal("script left behind by its last job")
	}
	if data, _ := os.ReadFile(pc); string(data) != a.Script {
		t.Fatalf("user 1001's script reads %q", data)
	}
}
