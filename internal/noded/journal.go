package noded

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Spool journals. A queue of short jobs made the agent and the supervisor
// create and delete several small files per job (a directory, the record
// written through a temporary file and a rename, the exit status likewise);
// on ext4 each new inode costs ~0.25 ms of CPU when inodes are churned this
// way, more than the rest of a job's bookkeeping. Records and exit statuses
// are therefore appended, one JSON line each, to two per-node journals:
// records.log (written by the agent) and exits.log (written by the
// supervisor), compacted by their single writer once mostly obsolete. A
// line is written with one write(2) on an O_APPEND file, so a writer killed
// at any moment leaves either the whole line or none of it; a torn last
// line (a crashed machine) is ignored on reading.
const (
	recordLogFile = "records.log"
	exitLogFile   = "exits.log"
	scriptsDir    = "scripts"
)

// journalCompactBytes is the size beyond which a journal whose live lines
// are under a quarter of it is rewritten.
const journalCompactBytes = 1 << 20

// journal is an append-only file of JSON lines keyed by a uint64, holding
// the last line of every live key; the caller serialises access.
type journal struct {
	path  string
	f     *os.File
	size  int64
	lines map[uint64][]byte
	live  int64
}

// openJournal reads path (missing = empty) with parse, which returns a
// line's key and whether it removes the key, rewrites the live lines and
// opens the file for appending.
func openJournal(path string, parse func([]byte) (uint64, bool, error)) (*journal, error) {
	j := &journal{path: path, lines: map[uint64][]byte{}}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // a torn last line
		}
		line := data[:i+1]
		data = data[i+1:]
		key, gone, err := parse(line)
		switch {
		case err != nil:
		case gone:
			j.forget(key)
		default:
			j.keep(key, bytes.Clone(line))
		}
	}
	return j, j.compact()
}

func (j *journal) keep(key uint64, line []byte) {
	j.live += int64(len(line)) - int64(len(j.lines[key]))
	j.lines[key] = line
}

func (j *journal) forget(key uint64) {
	j.live -= int64(len(j.lines[key]))
	delete(j.lines, key)
}

// put appends line (ending in a newline) as key's current line.
func (j *journal) put(key uint64, line []byte) error {
	j.keep(key, line)
	return j.append(line)
}

// remove appends a removal line for key.
func (j *journal) remove(key uint64, line []byte) error {
	if _, ok := j.lines[key]; !ok {
		return nil
	}
	j.forget(key)
	if err := j.append(line); err != nil {
		return err
	}
	if j.size > journalCompactBytes && j.live*4 < j.size {
		return j.compact()
	}
	return nil
}

func (j *journal) append(line []byte) error {
	if j.f == nil {
		return fmt.Errorf("%s: journal closed", j.path)
	}
	n, err := j.f.Write(line)
	j.size += int64(n)
	return err
}

// compact rewrites the journal with its live lines (temporary file and
// rename, so a reader sees the old file or the new one) and reopens it.
func (j *journal) compact() error {
	tmp := j.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, l := range j.lines {
		buf.Write(l)
	}
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, j.path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if j.f != nil {
		j.f.Close()
	}
	j.f, err = os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0o600)
	j.size = int64(buf.Len())
	return err
}

func (j *journal) close() {
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}

// recordLine is one line of records.log: a job's current record, or its
// removal once the controller acknowledged its end.
type recordLine struct {
	Job  uint32     `json:"job"`
	Gone bool       `json:"gone,omitempty"`
	Rec  *jobRecord `json:"rec,omitempty"`
}

func parseRecordLine(line []byte) (uint64, bool, error) {
	var l recordLine
	if err := json.Unmarshal(line, &l); err != nil {
		return 0, false, err
	}
	if !l.Gone && l.Rec == nil {
		return 0, false, fmt.Errorf("record line without a record")
	}
	return uint64(l.Job), l.Gone, nil
}

// recordLog is the agent's journal of job records.
type recordLog struct {
	mu sync.Mutex
	j  *journal
}

func openRecordLog(spool string) (*recordLog, map[uint32]jobRecord, error) {
	j, err := openJournal(filepath.Join(spool, recordLogFile), parseRecordLine)
	if err != nil {
		return nil, nil, fmt.Errorf("noded: read job records: %w", err)
	}
	recs := map[uint32]jobRecord{}
	for id, line := range j.lines {
		var l recordLine
		if json.Unmarshal(line, &l) == nil && l.Rec != nil {
			recs[uint32(id)] = *l.Rec
		}
	}
	return &recordLog{j: j}, recs, nil
}

func (l *recordLog) put(r *jobRecord) error {
	data, err := json.Marshal(recordLine{Job: r.Req.JobID, Rec: r})
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.j.put(uint64(r.Req.JobID), append(data, '\n'))
}

func (l *recordLog) remove(id uint32) error {
	data, _ := json.Marshal(recordLine{Job: id, Gone: true})
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.j.remove(uint64(id), append(data, '\n'))
}

func (l *recordLog) close() {
	l.mu.Lock()
	l.j.close()
	l.mu.Unlock()
}

// exitLine is one line of exits.log: the end of one run of a job, or
// (Gone) the agent's word that it no longer needs it.
type exitLine struct {
	Job     uint32 `json:"job"`
	Restart int    `json:"restart,omitempty"`
	Gone    bool   `json:"gone,omitempty"`
	// WaitStatus is the raw wait(2) status; -1 when the job never started.
	WaitStatus int       `json:"ws"`
	Time       time.Time `json:"time,omitzero"`
	Error      string    `json:"error,omitempty"`
	// RU is the script's rusage (usage accounting).
	RU *rusageUsage `json:"ru,omitempty"`
}

func (e *exitLine) record() exitRecord {
	return exitRecord{WaitStatus: e.WaitStatus, Time: e.Time, Error: e.Error, RU: e.RU, recorded: true}
}

// exitKey keys a run of a job (a requeued job runs again under its id).
func exitKey(job uint32, restart int) uint64 { return uint64(job) | uint64(uint32(restart))<<32 }

func parseExitLine(line []byte) (uint64, bool, error) {
	var e exitLine
	if err := json.Unmarshal(line, &e); err != nil {
		return 0, false, err
	}
	return exitKey(e.Job, e.Restart), e.Gone, nil
}

// exitLog is the supervisor's journal of exit statuses.
type exitLog struct {
	mu sync.Mutex
	j  *journal
}

func openExitLog(spool string) (*exitLog, error) {
	j, err := openJournal(filepath.Join(spool, exitLogFile), parseExitLine)
	if err != nil {
		return nil, err
	}
	return &exitLog{j: j}, nil
}

// add records a job's end before anyone is told of it.
func (l *exitLog) add(e exitLine) error {
	data, err := json.Marshal(&e)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.j.put(exitKey(e.Job, e.Restart), append(data, '\n'))
}

// forget drops the exit of a run the agent has delivered to the controller.
func (l *exitLog) forget(job uint32, restart int) {
	data, _ := json.Marshal(&exitLine{Job: job, Restart: restart, Gone: true})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.j.remove(exitKey(job, restart), append(data, '\n'))
}

// exitReader follows exits.log from the agent's side, reading only what
// was appended since its last look (and everything again once the
// supervisor compacted the file).
type exitReader struct {
	path string
	f    *os.File
	fi   os.FileInfo
	off  int64
	tail []byte
	m    map[uint64]exitLine
}

func newExitReader(spool string) *exitReader {
	return &exitReader{path: filepath.Join(spool, exitLogFile), m: map[uint64]exitLine{}}
}

// refresh reads the lines appended since the last call.
func (r *exitReader) refresh() {
	fi, err := os.Stat(r.path)
	if err != nil {
		return
	}
	if r.f == nil || !os.SameFile(fi, r.fi) || fi.Size() < r.off {
		if r.f != nil {
			r.f.Close()
		}
		f, err := os.Open(r.path)
		if err != nil {
			r.f = nil
			return
		}
		if fi, err = f.Stat(); err != nil {
			f.Close()
			r.f = nil
			return
		}
		r.f, r.fi, r.off, r.tail = f, fi, 0, nil
		r.m = map[uint64]exitLine{}
	}
	if fi.Size() == r.off {
		return
	}
	data, err := io.ReadAll(io.NewSectionReader(r.f, r.off, 1<<62))
	if err != nil {
		return
	}
	r.off += int64(len(data))
	data = append(r.tail, data...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		var e exitLine
		if json.Unmarshal(data[:i], &e) == nil {
			if e.Gone {
				delete(r.m, exitKey(e.Job, e.Restart))
			} else {
				r.m[exitKey(e.Job, e.Restart)] = e
			}
		}
		data = data[i+1:]
	}
	r.tail = bytes.Clone(data)
}

// lookup returns the recorded end of a run, reading the journal again
// when it is not known yet.
func (r *exitReader) lookup(job uint32, restart int) (exitRecord, bool) {
	k := exitKey(job, restart)
	e, ok := r.m[k]
	if !ok {
		r.refresh()
		e, ok = r.m[k]
	}
	return e.record(), ok
}

func (r *exitReader) forget(job uint32, restart int) { delete(r.m, exitKey(job, restart)) }

func (r *exitReader) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// SpoolExited reports whether the supervisor of the agent spool recorded
// the end of job id (and the agent has not yet delivered and dropped it).
// Tests and operators use it to see what a node holds without its agent.
func SpoolExited(spool string, id uint32) bool {
	r := newExitReader(spool)
	defer r.close()
	r.refresh()
	for _, e := range r.m {
		if e.Job == id {
			return true
		}
	}
	return false
}

// SpoolJobs lists the jobs an agent spool holds a record of (running,
// or ended and not yet delivered to the controller).
func SpoolJobs(spool string) []uint32 {
	j, err := readJournal(filepath.Join(spool, recordLogFile), parseRecordLine)
	if err != nil {
		return nil
	}
	out := make([]uint32, 0, len(j))
	for k := range j {
		out = append(out, uint32(k))
	}
	return out
}

// readJournal returns the live keys of a journal without rewriting it.
func readJournal(path string, parse func([]byte) (uint64, bool, error)) (map[uint64]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	live := map[uint64]bool{}
	for _, line := range bytes.SplitAfter(data, []byte{'\n'}) {
		if len(line) == 0 || line[len(line)-1] != '\n' {
			continue
		}
		if k, gone, err := parse(line); err == nil {
			if gone {
				delete(live, k)
			} else {
				live[k] = true
			}
		}
	}
	return live, nil
}
