package oracle

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Result is what one step printed: the three compared points of a command
// (for a wait, Exit 0 means the state was reached and Stderr says what was
// last seen when it was not).
type Result struct {
	Step   string // the step as written (Step.String)
	Stdout string
	Stderr string
	Exit   int
}

// Recording is one scenario played on one side.
type Recording struct {
	Scenario string
	Hash     string // sha256 of the scenario text it was recorded from
	Source   string // what recorded it ("slurm 24.11.5")
	Results  []Result
}

// HashText is the scenario hash written into golden files, so that a golden
// file recorded from an older version of its scenario is noticed.
func HashText(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
}

// The golden format is the oracle README's capture convention, with each
// output line behind "| " so that blank lines and missing final newlines
// survive exactly:
//
//	>>> [alice] sbatch --wrap 'sleep 1'
//	[stdout]
//	| Submitted batch job 1
//	[stderr]
//	[exit 0]
const noNewline = "[no newline at end]"

// Format renders a recording as a golden file.
func (r *Recording) Format() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Recorded from real Slurm by `make oracle-record ONLY=%s`; do not edit.\n", r.Scenario)
	fmt.Fprintf(&b, "# scenario %s\n# sha256 %s\n# source %s\n\n", r.Scenario, r.Hash, r.Source)
	for _, res := range r.Results {
		fmt.Fprintf(&b, ">>> %s\n", oneLine(res.Step))
		writeBlock(&b, "[stdout]", res.Stdout)
		writeBlock(&b, "[stderr]", res.Stderr)
		fmt.Fprintf(&b, "[exit %d]\n\n", res.Exit)
	}
	return b.String()
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }

func writeBlock(b *strings.Builder, head, text string) {
	b.WriteString(head + "\n")
	if text == "" {
		return
	}
	lines := strings.Split(text, "\n")
	last := len(lines) - 1
	if lines[last] == "" {
		lines = lines[:last]
	}
	for _, l := range lines {
		b.WriteString("| " + l + "\n")
	}
	if !strings.HasSuffix(text, "\n") {
		b.WriteString(noNewline + "\n")
	}
}

// ParseRecording reads a golden file written by Format.
func ParseRecording(path string) (*Recording, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Recording{}
	var cur *Result
	var block *strings.Builder
	var blocks [2]strings.Builder
	s := bufio.NewScanner(strings.NewReader(string(data)))
	s.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		bad := func(what string) error { return fmt.Errorf("%s:%d: %s", path, n, what) }
		switch {
		case strings.HasPrefix(line, "# scenario "):
			r.Scenario = strings.TrimPrefix(line, "# scenario ")
		case strings.HasPrefix(line, "# sha256 "):
			r.Hash = strings.TrimPrefix(line, "# sha256 ")
		case strings.HasPrefix(line, "# source "):
			r.Source = strings.TrimPrefix(line, "# source ")
		case strings.HasPrefix(line, ">>> "):
			r.Results = append(r.Results, Result{Step: strings.TrimPrefix(line, ">>> ")})
			cur, block = &r.Results[len(r.Results)-1], nil
			blocks[0].Reset()
			blocks[1].Reset()
		case line == "[stdout]" || line == "[stderr]":
			if cur == nil {
				return nil, bad("output before a step")
			}
			block = &blocks[0]
			if line == "[stderr]" {
				block = &blocks[1]
			}
		case strings.HasPrefix(line, "| "):
			if block == nil {
				return nil, bad("output line outside [stdout]/[stderr]")
			}
			block.WriteString(line[2:] + "\n")
		case line == noNewline:
			if block == nil || block.Len() == 0 {
				return nil, bad("misplaced " + noNewline)
			}
			t := block.String()
			block.Reset()
			block.WriteString(t[:len(t)-1])
		case strings.HasPrefix(line, "[exit ") && strings.HasSuffix(line, "]"):
			if cur == nil {
				return nil, bad("exit before a step")
			}
			code, err := strconv.Atoi(line[6 : len(line)-1])
			if err != nil {
				return nil, bad("bad exit line")
			}
			cur.Stdout, cur.Stderr, cur.Exit = blocks[0].String(), blocks[1].String(), code
			cur, block = nil, nil
		case line == "" || strings.HasPrefix(line, "# "):
		default:
			return nil, bad(fmt.Sprintf("unexpected line %q", line))
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s: last step has no [exit] line", path)
	}
	return r, nil
}
