package cli

import (
	"slices"
	"testing"
	"time"
)

// TestSallocOwnOptions: salloc's --no-shell, --bell and --no-bell are
// read among sbatch's options (the last of --bell/--no-bell wins), an
// option's separate value is not taken for one, and nothing after the
// command is salloc's.
func TestSallocOwnOptions(t *testing.T) {
	cases := []struct {
		args                  []string
		noShell, bell, noBell bool
		name                  string
		command               []string
	}{
		{[]string{"--no-shell", "-N1"}, true, false, false, "", nil},
		{[]string{"--bell", "-J", "x", "--no-bell", "sh"}, false, false, true, "x", []string{"sh"}},
		{[]string{"--no-bell", "--bell", "-t", "5", "sh", "--no-shell"}, false, true, false, "", []string{"sh", "--no-shell"}},
		{[]string{"-J", "--no-shell", "true"}, false, false, false, "--no-shell", []string{"true"}},
		{[]string{"--job-name", "--bell", "--", "true"}, false, false, false, "--bell", []string{"true"}},
	}
	for _, tc := range cases {
		req, cmd, err := parseSalloc(tc.args)
		if err != nil {
			t.Errorf("salloc %v: %v", tc.args, err)
			continue
		}
		if req.NoShell != tc.noShell || req.Bell != tc.bell || req.NoBell != tc.noBell || req.Spec.Name != tc.name || !slices.Equal(cmd, tc.command) {
			t.Errorf("salloc %v: no-shell %v bell %v no-bell %v name %q command %q", tc.args, req.NoShell, req.Bell, req.NoBell, req.Spec.Name, cmd)
		}
	}
	if _, _, err := parseSalloc([]string{"--no-such"}); err == nil {
		t.Errorf("salloc --no-such: no error")
	}
}

// TestSallocRingsBell: the bell rings only on a terminal: with --bell
// always, with --no-bell never, else when the allocation pended more than
// ten seconds (Slurm's salloc).
func TestSallocRingsBell(t *testing.T) {
	cases := []struct {
		bell, noBell bool
		waited       time.Duration
		tty, want    bool
	}{
		{false, false, 11 * time.Second, true, true},
		{false, false, 2 * time.Second, true, false},
		{false, false, 11 * time.Second, false, false},
		{true, false, 0, true, true},
		{true, false, 0, false, false},
		{false, true, time.Minute, true, false},
	}
	for _, tc := range cases {
		req := &SbatchRequest{Bell: tc.bell, NoBell: tc.noBell}
		if got := ringBell(req, tc.waited, tc.tty); got != tc.want {
			t.Errorf("bell %v no-bell %v waited %v tty %v: ring %v", tc.bell, tc.noBell, tc.waited, tc.tty, got)
		}
	}
}
