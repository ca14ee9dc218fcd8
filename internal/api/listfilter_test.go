package api

import (
	"bytes"
	"net/url"
	"reflect"
	"testing"
	"time"
)

// TestListFilterRoundTrip: every squeue filter travels in the query
// string and comes back equal.
func TestListFilterRoundTrip(t *testing.T) {
	f := ListFilter{Jobs: "12,13_2", Users: "alice,1001", NotUser: "bob", Accounts: "a", QOS: "normal",
		Partitions: "p1,p2", Names: "x", Nodes: "n[1-2]", Reservations: "r", Licenses: "lic", States: "PD,R", Pending: true}
	v := url.Values{}
	f.Encode(v)
	if got := DecodeListFilter(v); got != f {
		t.Fatalf("decoded %+v, want %+v", got, f)
	}
	if !(ListFilter{}).IsZero() || f.IsZero() || !(ListFilter{Jobs: "12"}).SingleJob() || f.SingleJob() {
		t.Errorf("IsZero/SingleJob wrong")
	}
}

// TestJobMatcher: squeue's selection rules, as the controller and the
// client both apply them.
func TestJobMatcher(t *testing.T) {
	pend := JobInfo{JobID: 5, ArrayTaskID: -1, User: "alice", UID: 1001, State: "PENDING", Partition: "a,b", Name: "x"}
	done := JobInfo{JobID: 6, ArrayTaskID: -1, User: "bob", State: "COMPLETED", Partition: "a"}
	arr := JobInfo{JobID: 7, ArrayJobID: 7, ArrayTaskID: -1, ArrayTasks: "1-5%2", State: "PENDING", Partition: "a"}
	cases := []struct {
		f    ListFilter
		j    JobInfo
		want bool
	}{
		{ListFilter{}, pend, true},
		{ListFilter{}, done, false}, // only active jobs without -t
		{ListFilter{States: "cd"}, done, true},
		{ListFilter{States: "all"}, done, true},
		{ListFilter{Users: "1001"}, pend, true},
		{ListFilter{NotUser: "alice"}, pend, false},
		{ListFilter{Partitions: "b"}, pend, true},
		{ListFilter{Jobs: "7_3"}, arr, true},
		{ListFilter{Jobs: "7_9"}, arr, false},
		{ListFilter{Jobs: "5", Pending: true, States: "R"}, pend, true}, // --start: pending, whatever -t
	}
	for _, tc := range cases {
		m, err := tc.f.Matcher()
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Match(&tc.j); got != tc.want {
			t.Errorf("%+v on job %d: %v, want %v", tc.f, tc.j.JobID, got, tc.want)
		}
	}
}

// TestJobsCompactEncoding: a listing survives the compact encoding as it
// does JSON (times included), and JSON still decodes.
func TestJobsCompactEncoding(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 123, time.Local)
	r := JobsResponse{Now: now, Jobs: []JobInfo{{JobID: 1, JobIDStr: "1", ArrayTaskID: -1, State: "PENDING",
		SubmitTime: now, PriorityTerms: []PriorityTerm{{Name: "age", Factor: 0.5}}}, {JobID: 2, ArrayTaskID: 3}}}
	var buf bytes.Buffer
	if err := EncodeJobs(&buf, &r); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeJobs(buf.Bytes(), ListContentType)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Now.Equal(now) || !got.Jobs[0].SubmitTime.Equal(now) || got.Jobs[0].SubmitTime.Location() != time.Local {
		t.Errorf("times: %v %v", got.Now, got.Jobs[0].SubmitTime)
	}
	got.Now, got.Jobs[0].SubmitTime = now, now
	if !reflect.DeepEqual(got, r) {
		t.Errorf("decoded %+v, want %+v", got, r)
	}
	if j, err := DecodeJobs([]byte(`{"jobs":[{"job_id":3}]}`), "application/json"); err != nil || j.Jobs[0].JobID != 3 {
		t.Errorf("JSON listing: %v %v", j, err)
	}
}

// TestRowsRoundTrip: a brief row carries every field it names, and a
// damaged body is refused.
func TestRowsRoundTrip(t *testing.T) {
	now := time.Unix(1764000000, 5)
	jobs := []JobInfo{{JobID: 12, JobIDStr: "12_[3-5%2]", ArrayJobID: 12, ArrayTaskID: -1, ArrayTasks: "3-5%2",
		ArrayThrottle: 2, Name: "x", User: "alice", UID: 1001, GID: 1001, Group: "alice", Account: "a", QOS: "normal",
		Partition: "p1,p2", State: "PENDING", StateShort: "PD", Reason: "JobHeldUser", StateDesc: "held", Hold: "user",
		Priority: 7, Nice: -5, SiteFactor: 3, SubmitTime: now, EligibleTime: now, AccrueTime: now, StartTime: now,
		EndTime: now, SuspendTime: now, SuspendedSec: 9, ExpectedStart: now, BeginTime: now, PreemptTime: now,
		TimeLimitSec: TimeInfinite, NodeList: "n[1-2]", SchedNodes: "n3", BatchHost: "n1", NumNodes: 2, NumTasks: 4,
		CPUsPerTask: 2, Features: "f", Requeue: true, RestartCount: 1, ExitCode: "0:0", Exclusive: true,
		Reservation: "r", Licenses: "l:2"}, {JobID: 13, ArrayTaskID: -1, User: "alice"}}
	var body []byte
	body = AppendRowsHeader(body, now, len(jobs))
	for i := range jobs {
		body = AppendRow(body, &jobs[i])
	}
	got, err := DecodeJobs(body, RowsContentType)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Now.Equal(now) || len(got.Jobs) != 2 {
		t.Fatalf("now %v, %d jobs", got.Now, len(got.Jobs))
	}
	for i := range jobs {
		if !reflect.DeepEqual(got.Jobs[i], jobs[i]) {
			t.Errorf("row %d: got %+v\nwant %+v", i, got.Jobs[i], jobs[i])
		}
	}
	if _, err := DecodeRows(body[:len(body)-3]); err == nil {
		t.Errorf("a truncated body was accepted")
	}
}
