package resv

import (
	"fmt"
	"strings"
)

// ScriptLine is one command of a reservation script with its line number.
type ScriptLine struct {
	Line int
	Cmd  *Command
}

// ParseScript reads a file of scontrol reservation commands, one a line
// (`scontrol create reservation ...`, the leading "scontrol" optional),
// with blank lines and '#' comments ignored: the simulator's reservations
// (one-off and recurring maintenance windows) and an operator's batch of
// bookings. Times such as now+1hour are resolved when each command is
// applied. Errors name the line.
func ParseScript(text string) ([]ScriptLine, error) {
	var out []ScriptLine
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words := SplitLine(line)
		if len(words) > 0 && strings.EqualFold(words[0], "scontrol") {
			words = words[1:]
		}
		cmd, err := ParseCommand(words)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if cmd.Verb == VerbShow {
			return nil, fmt.Errorf("line %d: %w", i+1, &UsageError{"show is not a reservation change"})
		}
		out = append(out, ScriptLine{Line: i + 1, Cmd: cmd})
	}
	return out, nil
}
