package cli

import "testing"

// TestScancelExitStatus: scancel's exit status and quiet errors after
// slurmctld's answers, as the oracle showed them (Slurm 24.11): another
// user's job exits 210 (ESLURM_ACCESS_DENIED 2002 & 0xff), a signal to a
// pending job 228 (ESLURM_TRANSITION_STATE_NO_UPDATE 2020), an unknown or
// ended job cancelled prints nothing and exits 0.
func TestScancelExitStatus(t *testing.T) {
	cases := []struct {
		msg    string
		exit   int
		ignore bool
	}{
		{"Access/permission denied", 210, false},
		{"Job can not be altered now, try again later", 228, false},
		{"Invalid job id specified", 1, true},
		{"Job/step already completing or completed", 1, true},
		{"Requested operation is presently disabled", 1, false},
	}
	for _, c := range cases {
		if got := scancelExit(c.msg); got != c.exit {
			t.Errorf("%q: exit %d, want %d", c.msg, got, c.exit)
		}
		if got := scancelIgnored(c.msg); got != c.ignore {
			t.Errorf("%q: ignored %v, want %v", c.msg, got, c.ignore)
		}
	}
}

// TestScancelJobIDForm: the job ids scancel sends and the ones it
// refuses before any request (oracle: scancel-more, "Invalid job id 1.5x").
func TestScancelJobIDForm(t *testing.T) {
	for id, ok := range map[string]bool{
		"7": true, "7_3": true, "7_[1-3,5%2]": true, "7.batch": true, "7.0": true, "7_2.1": true, "7+1": true,
		"1.5x": false, "abc": false, "7_": false, "7.": false, "": false,
	} {
		if got := scancelJobID.MatchString(id); got != ok {
			t.Errorf("%q accepted = %v, want %v", id, got, ok)
		}
	}
}
