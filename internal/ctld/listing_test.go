package ctld

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// TestListFilterServerSide: the controller answers squeue's filters with
// the matching jobs only (slurmctld's filtered job loads), and squeue -j
// of one id gets that id's records whatever their state, so that squeue
// can tell an unknown id from a finished job.
func TestListFilterServerSide(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	held := func(name string) func(*api.JobSpec) {
		return func(s *api.JobSpec) { s.Hold, s.Name = true, name }
	}
	done := c.submit(c.wrap("true"))
	c.waitState(done, "COMPLETED", 10*time.Second)
	a := c.submit(c.wrap("true", held("alpha")))
	b := c.submit(c.wrap("true", held("beta")))
	b2 := c.submit(c.wrap("true", held("beta")))
	cases := []struct {
		name string
		f    api.ListFilter
		want []uint32
	}{
		{"one id", api.ListFilter{Jobs: idStr(b)}, []uint32{b}},
		{"id list", api.ListFilter{Jobs: idStr(a) + "," + idStr(b2)}, []uint32{a, b2}},
		{"name", api.ListFilter{Names: "beta"}, []uint32{b, b2}},
		{"state CD", api.ListFilter{States: "CD"}, []uint32{done}},
		{"state and name", api.ListFilter{States: "PD", Names: "alpha,beta"}, []uint32{a, b, b2}},
		{"finished job by id", api.ListFilter{Jobs: idStr(done)}, []uint32{done}},
		{"finished job in a list", api.ListFilter{Jobs: idStr(done) + "," + idStr(a)}, []uint32{a}},
		{"no such user", api.ListFilter{Users: "nosuchuser"}, nil},
		{"--start", api.ListFilter{Pending: true, Names: "alpha"}, []uint32{a}},
	}
	for _, tc := range cases {
		res, err := c.client.Jobs(c.ctx(), api.JobQuery{Filter: tc.f})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got []uint32
		for _, j := range res.Jobs {
			got = append(got, j.JobID)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: controller returned jobs %v, want %v", tc.name, got, tc.want)
		}
	}
}

// briefFields are the JobInfo fields a brief listing (squeue's usual
// columns, api.BriefFields) must carry exactly as the full record does.
var briefFields = []string{"JobID", "JobIDStr", "ArrayJobID", "ArrayTaskID", "ArrayTasks", "ArrayThrottle", "Name",
	"User", "UID", "GID", "Group", "Account", "QOS", "Partition", "State", "StateShort", "Reason", "StateDesc", "Hold",
	"Priority", "Nice", "SubmitTime", "StartTime", "EndTime", "SuspendTime", "SuspendedSec", "ExpectedStart",
	"BeginTime", "TimeLimitSec", "NodeList", "SchedNodes", "BatchHost", "NumNodes", "Reservation", "Licenses"}

// TestBriefListingMatchesFull: a brief listing carries every field
// squeue's usual columns print with the full record's value, for
// pending, held, running, finished and array jobs.
func TestBriefListingMatchesFull(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	done := c.submit(c.wrap("true"))
	c.waitState(done, "COMPLETED", 10*time.Second)
	run := c.submit(c.wrap("sleep 30", func(s *api.JobSpec) { s.TimeLimitSec = 120 }))
	c.waitState(run, "RUNNING", 10*time.Second)
	c.submit(c.wrap("true", func(s *api.JobSpec) { s.Hold, s.Name = true, "held" }))
	c.submit(c.wrap("true", func(s *api.JobSpec) { s.Array, s.NTasks = "1-4%2", 2 }))
	c.submit(c.wrap("true", func(s *api.JobSpec) { s.Begin = "now+1hour" }))
	// The two listings are two snapshots: a scheduling pass between them
	// may legitimately change a reason or a state (array tasks of true
	// start and end), so a mismatch is retried; a wrong brief rendering
	// differs every time.
	var full, brief api.JobsResponse
	var diffs []string
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			time.Sleep(300 * time.Millisecond)
		}
		var err error
		if full, err = c.client.Jobs(c.ctx(), api.JobQuery{Filter: api.ListFilter{States: "ALL"}}); err != nil {
			t.Fatal(err)
		}
		if brief, err = c.client.Jobs(c.ctx(), api.JobQuery{Filter: api.ListFilter{States: "ALL"}, Brief: true}); err != nil {
			t.Fatal(err)
		}
		if diffs = briefDiffs(full, brief); len(diffs) == 0 {
			break
		}
	}
	for _, d := range diffs {
		t.Error(d)
	}
	if brief.Jobs[0].ReqTRES != "" || brief.Jobs[0].StdOut != "" {
		t.Errorf("a brief record carries ReqTRES %q, StdOut %q", brief.Jobs[0].ReqTRES, brief.Jobs[0].StdOut)
	}
}

// briefDiffs lists the briefFields where a brief listing differs from a
// full one.
func briefDiffs(full, brief api.JobsResponse) []string {
	if len(full.Jobs) != len(brief.Jobs) || len(full.Jobs) < 5 {
		return []string{fmt.Sprintf("%d full records, %d brief", len(full.Jobs), len(brief.Jobs))}
	}
	var out []string
	for i := range full.Jobs {
		f, b := reflect.ValueOf(full.Jobs[i]), reflect.ValueOf(brief.Jobs[i])
		for _, name := range briefFields {
			fv, bv := f.FieldByName(name).Interface(), b.FieldByName(name).Interface()
			if ft, ok := fv.(time.Time); ok {
				fv, bv = ft.UnixNano(), bv.(time.Time).UnixNano()
			}
			if !reflect.DeepEqual(fv, bv) {
				out = append(out, fmt.Sprintf("job %s %s: brief %v, full %v", full.Jobs[i].JobIDStr, name, bv, fv))
			}
		}
	}
	return out
}

// TestExpandStdPattern: the one-pass expansion gives what Slurm's
// filename patterns give (%% %j %x %u %A %a; anything else is kept).
func TestExpandStdPattern(t *testing.T) {
	t.Parallel()
	j := &sched.Job{ID: 42, User: "alice"}
	j.Req.Name = "job"
	task := &sched.Job{ID: 45, User: "bob", Array: &sched.ArrayInfo{JobID: 40, TaskID: 5}}
	cases := []struct {
		j        *sched.Job
		in, want string
	}{
		{j, "plain.out", "plain.out"},
		{j, "slurm-%j.out", "slurm-42.out"},
		{j, "%x-%u-%A_%a.%%j%", "job-alice-42_4294967294.%j%"},
		{j, "%q%", "%q%"},
		{task, "slurm-%A_%a.out", "slurm-40_5.out"},
	}
	for _, tc := range cases {
		if got := expandStdPattern(tc.in, tc.j); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestInternerSharesEnvironments: equal environments and strings from
// different submissions share one copy; the tables start over once they
// outgrow the live jobs.
func TestInternerSharesEnvironments(t *testing.T) {
	t.Parallel()
	var in interner
	a := in.env(append(make([]string, 0, 8), "A=1", "PWD=/x"))
	b := in.env([]string{"A=1", "PWD=/x"})
	if &a[0] != &b[0] || cap(a) != 2 {
		t.Fatalf("equal environments not shared (cap %d)", cap(a))
	}
	c := in.env([]string{"A=1", "PWD=/y"})
	if &c[0] == &a[0] || unsafe.StringData(c[0]) != unsafe.StringData(a[0]) {
		t.Errorf("a different environment must be its own, sharing its equal variables")
	}
	s1 := in.str(string([]byte("normal")))
	s2 := in.str(string([]byte("normal")))
	if unsafe.StringData(s1) != unsafe.StringData(s2) {
		t.Errorf("equal strings not shared")
	}
	for i := 0; i <= internLimit; i++ {
		in.env([]string{strconv.Itoa(i)})
	}
	in.trim(10)
	if len(in.envs) != 0 {
		t.Errorf("%d environments kept for 10 live jobs", len(in.envs))
	}
}
