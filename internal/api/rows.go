package api

import (
	"encoding/binary"
	"errors"
	"time"
)

// RowsContentType is a brief listing (JobQuery.Brief) as the controller
// sends it to Sluice's own squeue: one compact row per job, written
// field by field while the controller holds its state (the rows are the
// consistent snapshot, encoded once, with no per-job objects left for the
// collector) and read back without reflection. squeue lists 100,000 jobs
// this way in well under a second.
const RowsContentType = "application/x-sluice-rows"

// rowsVersion starts every rows body: a client that reads another
// version refuses it instead of printing garbage.
const rowsVersion = 1

// AppendRowsHeader starts a rows body: the version, the controller's
// clock and the number of rows that follow.
func AppendRowsHeader(b []byte, now time.Time, n int) []byte {
	b = append(b, rowsVersion)
	b = appendTime(b, now)
	return binary.AppendUvarint(b, uint64(n))
}

// AppendRow adds one job's brief fields (what squeue's usual columns,
// its filters and its sort keys read).
func AppendRow(b []byte, j *JobInfo) []byte {
	for _, v := range []uint64{uint64(j.JobID), uint64(j.ArrayJobID), uint64(j.UID), uint64(j.GID), uint64(j.Priority),
		uint64(j.RestartCount)} {
		b = binary.AppendUvarint(b, v)
	}
	for _, v := range []int64{int64(j.ArrayTaskID), int64(j.ArrayThrottle), int64(j.Nice), int64(j.SiteFactor),
		j.SuspendedSec, j.TimeLimitSec, int64(j.NumNodes), int64(j.NumTasks), int64(j.CPUsPerTask)} {
		b = binary.AppendVarint(b, v)
	}
	for _, t := range []*time.Time{&j.SubmitTime, &j.EligibleTime, &j.AccrueTime, &j.StartTime, &j.EndTime,
		&j.SuspendTime, &j.ExpectedStart, &j.BeginTime, &j.PreemptTime} {
		b = appendTime(b, *t)
	}
	for _, s := range []*string{&j.JobIDStr, &j.ArrayTasks, &j.Name, &j.User, &j.Group, &j.Account, &j.QOS,
		&j.Partition, &j.State, &j.StateShort, &j.Reason, &j.StateDesc, &j.Hold, &j.NodeList, &j.SchedNodes,
		&j.BatchHost, &j.Features, &j.ExitCode, &j.Reservation, &j.Licenses} {
		b = binary.AppendUvarint(b, uint64(len(*s)))
		b = append(b, *s...)
	}
	var flags byte
	if j.Requeue {
		flags |= 1
	}
	if j.Exclusive {
		flags |= 2
	}
	return append(b, flags)
}

// appendTime writes t as nanoseconds since the epoch, 0 for the zero
// time.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return binary.AppendVarint(b, 0)
	}
	return binary.AppendVarint(b, t.UnixNano())
}

var errRows = errors.New("malformed job rows")

// rowReader reads a rows body; equal strings come back as one string
// (the user, account, partition and state of 100,000 jobs are a handful
// of values).
type rowReader struct {
	b    []byte
	err  error
	strs map[string]string
}

func (r *rowReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = errRows, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *rowReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err, r.b = errRows, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *rowReader) time() time.Time {
	if ns := r.varint(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

func (r *rowReader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err, r.b = errRows, nil
		return ""
	}
	raw := r.b[:n]
	r.b = r.b[n:]
	if s, ok := r.strs[string(raw)]; ok {
		return s
	}
	s := string(raw)
	if len(r.strs) < 1<<16 {
		r.strs[s] = s
	}
	return s
}

func (r *rowReader) row(j *JobInfo) {
	for _, p := range []*uint32{&j.JobID, &j.ArrayJobID, &j.UID, &j.GID, &j.Priority} {
		*p = uint32(r.uvarint())
	}
	j.RestartCount = int(r.uvarint())
	j.ArrayTaskID, j.ArrayThrottle = int32(r.varint()), int32(r.varint())
	j.Nice, j.SiteFactor = int32(r.varint()), int32(r.varint())
	j.SuspendedSec, j.TimeLimitSec = r.varint(), r.varint()
	j.NumNodes, j.NumTasks, j.CPUsPerTask = int(r.varint()), int(r.varint()), int(r.varint())
	for _, t := range []*time.Time{&j.SubmitTime, &j.EligibleTime, &j.AccrueTime, &j.StartTime, &j.EndTime,
		&j.SuspendTime, &j.ExpectedStart, &j.BeginTime, &j.PreemptTime} {
		*t = r.time()
	}
	for _, s := range []*string{&j.JobIDStr, &j.ArrayTasks, &j.Name, &j.User, &j.Group, &j.Account, &j.QOS,
		&j.Partition, &j.State, &j.StateShort, &j.Reason, &j.StateDesc, &j.Hold, &j.NodeList, &j.SchedNodes,
		&j.BatchHost, &j.Features, &j.ExitCode, &j.Reservation, &j.Licenses} {
		*s = r.str()
	}
	if len(r.b) == 0 {
		r.err = errRows
		return
	}
	j.Requeue, j.Exclusive = r.b[0]&1 != 0, r.b[0]&2 != 0
	r.b = r.b[1:]
}

// DecodeRows reads a rows body.
func DecodeRows(data []byte) (JobsResponse, error) {
	if len(data) == 0 || data[0] != rowsVersion {
		return JobsResponse{}, errRows
	}
	r := &rowReader{b: data[1:], strs: map[string]string{}}
	res := JobsResponse{Now: r.time()}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(data)) {
		return JobsResponse{}, errRows
	}
	res.Jobs = make([]JobInfo, n)
	for i := range res.Jobs {
		r.row(&res.Jobs[i])
		if r.err != nil {
			return JobsResponse{}, r.err
		}
	}
	if len(r.b) != 0 {
		return JobsResponse{}, errRows
	}
	return res, nil
}
