package sched

import "testing"

// TestEndReasons: the reason a finished job keeps, as the oracle showed
// it (end-states scenario): squeue -t all -o "%T %r" printed COMPLETED
// None, FAILED NonZeroExitCode (exit 7), CANCELLED None (running),
// CANCELLED JobHeldUser (held while pending), TIMEOUT TimeLimit and FAILED
// RaisedSignal:9(Killed) (kill -9).
func TestEndReasons(t *testing.T) {
	cases := []struct {
		name  string
		opts  string
		run   bool // started before it ends
		state JobState
		exit  int32 // wait status: code<<8 | signal
		want  Reason
	}{
		{"completed", "-n 1", true, JobCompleted, 0, ReasonNone},
		{"exit code", "-n 1", true, JobFailed, 7 << 8, ReasonNonZeroExitCode},
		{"signal", "-n 1", true, JobFailed, 9, "RaisedSignal:9(Killed)"},
		{"time limit", "-n 1 -t 1", true, JobTimeout, 15, ReasonTimeLimit},
		{"cancelled running", "-n 1", true, JobCancelled, 0, ReasonNone},
		{"cancelled held", "-n 1 -H", false, JobCancelled, 0, ReasonJobHeldUser},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, cpuConf(1, 4, ""))
			j := h.mustSubmit("alice", c.opts)
			if c.run {
				h.schedule()
				h.expectState(j.ID, JobRunning, ReasonNone)
			}
			if err := h.st.End(j.ID, c.state, c.exit, h.now); err != nil {
				t.Fatal(err)
			}
			if got := h.job(j.ID).Reason; got != c.want {
				t.Errorf("%s job ended %s (exit %#x): reason %q, want %q", c.name, c.state, c.exit, got, c.want)
			}
		})
	}
}
