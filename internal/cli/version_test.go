package cli

import "testing"

func TestVersionRequested(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		args []string
		want bool
	}{
		{"squeue", []string{"-V"}, true},
		{"sinfo", []string{"-N", "--version"}, true},
		{"salloc", []string{"-N2", "-V"}, true},
		{"sbatch", []string{"job.sh", "-V"}, false}, // the script's argument
		{"srun", []string{"hostname", "--version"}, false},
		{"squeue", []string{"-u", "alice"}, false},
		{"scancel", []string{"--", "-V"}, false},
	} {
		if got := VersionRequested(c.cmd, c.args); got != c.want {
			t.Errorf("%s %v: %v, want %v", c.cmd, c.args, got, c.want)
		}
	}
	if VersionLine() != "slurm 24.11.5" {
		t.Errorf("version line %q", VersionLine())
	}
}
