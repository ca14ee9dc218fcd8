package cli

import (
	"fmt"
	"regexp"
	"strings"
)

// Slurm's commands parse options with getopt_long, so a mistyped option
// reads as getopt words it, followed by a pointer to --help; pflag's own
// wording ("unknown shorthand flag: 'Z' in -Z") would make "not
// implemented" and "typo" look the same to a user. optionMessage turns a
// pflag parse error into Slurm's lines; ok is false for other errors.
var (
	unknownLong   = regexp.MustCompile(`^unknown flag: (--\S+)$`)
	unknownShort  = regexp.MustCompile(`^unknown shorthand flag: '(.)' in -`)
	needsArgLong  = regexp.MustCompile(`^flag needs an argument: --(\S+)$`)
	needsArgShort = regexp.MustCompile(`^flag needs an argument: '(.)' in -`)
	badValue      = regexp.MustCompile(`(?s)^invalid argument ".*" for "[^"]*" flag: (.+)$`)
)

func optionMessage(command string, err error) (lines []string, ok bool) {
	msg := err.Error()
	try := fmt.Sprintf("Try \"%s --help\" for more information", command)
	if m := unknownLong.FindStringSubmatch(msg); m != nil {
		return withMissing(command, m[1], fmt.Sprintf("%s: unrecognized option '%s'", command, m[1]), try), true
	}
	if m := unknownShort.FindStringSubmatch(msg); m != nil {
		return withMissing(command, "-"+m[1], fmt.Sprintf("%s: invalid option -- '%s'", command, m[1]), try), true
	}
	if m := needsArgLong.FindStringSubmatch(msg); m != nil {
		return []string{fmt.Sprintf("%s: option '--%s' requires an argument", command, m[1]), try}, true
	}
	if m := needsArgShort.FindStringSubmatch(msg); m != nil {
		return []string{fmt.Sprintf("%s: option requires an argument -- '%s'", command, m[1]), try}, true
	}
	if m := badValue.FindStringSubmatch(msg); m != nil {
		// The option's own check already speaks Slurm ("Invalid --time
		// specification"); pflag's wrapping is dropped.
		// A check may print a line of its own first (sbatch --begin's
		// "Invalid time specification (pos=0): ..."), unprefixed as Slurm's.
		lines := strings.Split(strings.TrimSpace(m[1]), "\n")
		last := len(lines) - 1
		lines[last] = fmt.Sprintf("%s: error: %s", command, lines[last])
		return lines, true
	}
	return nil, false
}

// withMissing is getopt's lines for an unknown option, with the line that
// says Sluice lacks it when Slurm's command has it (so that "not
// implemented" and "typo" read differently).
func withMissing(command, opt, getopt, try string) []string {
	name, _, _ := strings.Cut(opt, "=")
	if slurmHasOption(command, name) {
		return []string{getopt, notImplementedLine(command, name), try}
	}
	return []string{getopt, try}
}

// OptionError prints a command-line parse error as Slurm's command would
// and returns its exit status: 1, or 255 for sbatch, srun and salloc,
// whose option errors exit that way in Slurm 24.11. Other errors print as
// "<command>: error: <message>".
func OptionError(env *Env, command string, err error) int {
	lines, ok := optionMessage(command, err)
	if !ok {
		return Errorf(env, command, "%v", err)
	}
	for _, l := range lines {
		fmt.Fprintln(env.Stderr, l)
	}
	if stopsAtCommand[command] {
		return 255
	}
	return 1
}
