package cli

import (
	"bytes"
	"errors"
	"testing"
)

// TestOptionErrorWording: pflag's parse errors come out in getopt's words
// with Slurm's exit codes (recorded on Slurm 24.11: test/oracle
// versions-help and sbatch-basics scenarios).
func TestOptionErrorWording(t *testing.T) {
	for _, c := range []struct {
		cmd, err, want string
		code           int
	}{
		{"sinfo", "unknown flag: --banana", "sinfo: unrecognized option '--banana'\nTry \"sinfo --help\" for more information\n", 1},
		{"squeue", "unknown shorthand flag: 'Z' in -Z", "squeue: invalid option -- 'Z'\nTry \"squeue --help\" for more information\n", 1},
		{"sbatch", "unknown flag: --banana", "sbatch: unrecognized option '--banana'\nTry \"sbatch --help\" for more information\n", 255},
		{"sbatch", `invalid argument "banana" for "-t, --time" flag: Invalid --time specification`, "sbatch: error: Invalid --time specification\n", 255},
		{"scancel", "flag needs an argument: --name", "scancel: option '--name' requires an argument\nTry \"scancel --help\" for more information\n", 1},
		{"sacct", "something else", "sacct: error: something else\n", 1},
	} {
		var out bytes.Buffer
		code := OptionError(&Env{Stderr: &out}, c.cmd, errors.New(c.err))
		if out.String() != c.want || code != c.code {
			t.Errorf("%s %q: %d %q, want %d %q", c.cmd, c.err, code, out.String(), c.code, c.want)
		}
	}
}
