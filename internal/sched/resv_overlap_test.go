package sched

import (
	"testing"
	"time"
)

// TestResvJobOwnLimitAgainstLaterResvs replays the oracle's resv-overlap
// scenario: in a one-hour reservation, a job is tested against the later
// reservations on its nodes over its whole time limit, not only up to its
// reservation's end. A 150-minute job starts before a maintenance three
// hours away; a four-hour or unlimited one waits with ReqNodeNotAvail,
// "Reserved for maintenance", also when the later reservation is a plain
// one. The started job keeps its limit and is ended with its reservation.
func TestResvJobOwnLimitAgainstLaterResvs(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=now1 Users=alice StartTime=now Duration=60 Nodes=node1")
	h.mustScontrol("create reservation ReservationName=maint Flags=MAINT,IGNORE_JOBS Users=root StartTime=now+3hours Duration=30 Nodes=node1")
	h.mustScontrol("create reservation ReservationName=now2 Users=alice StartTime=now Duration=60 Nodes=node2")
	h.mustScontrol("create reservation ReservationName=plain Users=bob StartTime=now+2hours Duration=30 Nodes=node2")
	for _, c := range []struct {
		opts   string
		state  JobState
		reason Reason
	}{
		{"-n 1 --time=30 --reservation=now1", JobRunning, ""},
		{"-n 1 --time=150 --reservation=now1", JobRunning, ""},
		{"-n 1 --time=240 --reservation=now1", JobPending, ReasonReqNodeNotAvail},
		{"-n 1 --reservation=now1", JobPending, ReasonReqNodeNotAvail},
		{"-n 1 --time=90 --reservation=now2", JobRunning, ""},
		{"-n 1 --time=150 --reservation=now2", JobPending, ReasonReqNodeNotAvail},
	} {
		j := h.mustSubmitRL("alice", c.opts)
		h.expectState(j.ID, c.state, c.reason)
		got := h.job(j.ID)
		if c.reason == ReasonReqNodeNotAvail && got.StateDesc != StateDescReservedMaint {
			t.Errorf("%s: state description %q, want %q", c.opts, got.StateDesc, StateDescReservedMaint)
		}
		if c.state == JobRunning && (got.TimeLimit != got.Req.TimeLimit || !got.ResvEnd.Equal(t0.Add(time.Hour))) {
			t.Errorf("%s: limit %v ending by %v, want its own limit, ended with the reservation at %v",
				c.opts, got.TimeLimit, got.ResvEnd, t0.Add(time.Hour))
		}
	}
	h.advance(61 * time.Minute)
	for _, id := range []JobID{2, 5} {
		if j := h.job(id); j.State.Base() != JobTimeout || !j.EndTime.Equal(t0.Add(time.Hour)) {
			t.Errorf("job %d: %v at %v, want TIMEOUT at the reservation's end", id, j.State, j.EndTime)
		}
	}
}

// TestNamedNodesBeforeLaterResv: a job without a reservation that names
// (-w) a node a later reservation holds within its limit pends with
// ReqNodeNotAvail, "May be reserved for other job", whether the
// reservation is a plain or a MAINT one (oracle, resv-end-running).
func TestNamedNodesBeforeLaterResv(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=plain3 Users=bob StartTime=now+2hours Duration=30 Nodes=node3")
	h.mustScontrol("create reservation ReservationName=maint4 Flags=MAINT,IGNORE_JOBS Users=root StartTime=now+2hours Duration=30 Nodes=node4")
	for _, node := range []string{"node3", "node4"} {
		j := h.mustSubmitRL("alice", "-n 1 --time=150 -w "+node)
		h.expectState(j.ID, JobPending, ReasonReqNodeNotAvail)
		if got := h.job(j.ID).StateDesc; got != StateDescMayBeReserved {
			t.Errorf("-w %s: state description %q, want %q", node, got, StateDescMayBeReserved)
		}
	}
}

// TestNamedNodesTakenByHigherJob replays the oracle's named-nodes-blocked
// scenario: a job naming a node (-w) that a higher-priority job naming it
// could not start on, because the node is busy or a later reservation
// holds it within that job's limit, pends with ReqNodeNotAvail, "May be
// reserved for other job" after the main pass; the first job keeps its
// own reason. Jobs on other nodes start.
func TestNamedNodesTakenByHigherJob(t *testing.T) {
	h := newHarness(t, resvConf)
	h.mustScontrol("create reservation ReservationName=later Users=bob StartTime=now+1hour Duration=30 Nodes=node3")
	fill := h.queue("alice", "-n 4 -w node1 --time=10")
	wait1 := h.queue("alice", "-n 1 -w node1 --time=10")
	wait2 := h.queue("alice", "-n 1 -w node1 --time=10")
	other := h.queue("alice", "-n 1 -w node2 --time=10")
	long3 := h.queue("alice", "-n 1 -w node3 --time=90")
	short3 := h.queue("alice", "-n 1 -w node3 --time=30")
	h.lastPlan = Schedule(h.st, h.now, h.st.Config)
	pending := map[JobID]PendingInfo{}
	for _, p := range h.lastPlan.Pending {
		pending[p.Job] = p
	}
	started := map[JobID]bool{}
	for _, s := range h.lastPlan.Starts {
		started[s.Job] = true
	}
	for _, id := range []JobID{fill.ID, other.ID} {
		if !started[id] {
			t.Errorf("job %d did not start", id)
		}
	}
	for _, c := range []struct {
		id     JobID
		reason Reason
		desc   string
	}{
		{wait1.ID, ReasonResources, ""},
		{wait2.ID, ReasonReqNodeNotAvail, StateDescMayBeReserved},
		{long3.ID, ReasonReqNodeNotAvail, StateDescMayBeReserved},
		{short3.ID, ReasonReqNodeNotAvail, StateDescMayBeReserved},
	} {
		if started[c.id] && c.id == short3.ID {
			continue // backfill may start it before the reservation
		}
		if p := pending[c.id]; p.Reason != c.reason || p.StateDesc != c.desc {
			t.Errorf("job %d: %s %q, want %s %q", c.id, p.Reason, p.StateDesc, c.reason, c.desc)
		}
	}
}

// TestResvOverRun: ResvOverRun=N lets a job started in a reservation run N
// minutes past its end before it is ended; UNLIMITED lets it run to its
// own limit.
func TestResvOverRun(t *testing.T) {
	for _, c := range []struct {
		conf string
		want time.Time
	}{
		{"", t0.Add(time.Hour)},
		{"ResvOverRun=5\n", t0.Add(65 * time.Minute)},
		{"ResvOverRun=UNLIMITED\n", time.Time{}},
	} {
		h := newHarness(t, resvConf+c.conf)
		h.mustScontrol("create reservation ReservationName=r Users=alice StartTime=now Duration=60 Nodes=node1")
		j := h.mustSubmitRL("alice", "-n 1 --time=120 --reservation=r")
		h.expectState(j.ID, JobRunning, "")
		if got := h.job(j.ID).ResvEnd; !got.Equal(c.want) {
			t.Errorf("%q: ended by %v, want %v", c.conf, got, c.want)
		}
	}
}
