package cli

import (
	"fmt"
	"strings"
)

// printable returns s with its control characters escaped (\n, \t, \r,
// else \xHH), so a job name or comment holding a newline or NUL cannot
// break or forge the lines of squeue, sacct or scontrol (issue 17,
// finding 10). Slurm 24.11 accepts such names and prints them raw.
func printable(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case isControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
