package conf

import (
	"fmt"
	"strings"
)

// Pos is a place in a configuration file: the file name as given to Load
// (or Parse) and the 1-based physical line number.
type Pos struct {
	File string
	Line int
}

// String prints the position as "FILE:LINE", the prefix of every message
// ("FILE" alone for a whole-file problem such as an unreadable file).
func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Warning is something the configuration asks for that Sluice accepts but
// does not act on (yet), or a setting Slurm itself only logs about.
type Warning struct {
	Pos Pos
	// Key is the configuration key concerned, as spelled in the file.
	Key string
	Msg string
}

// String prints "FILE:LINE: Key: message".
func (w Warning) String() string {
	if w.Key == "" {
		return fmt.Sprintf("%s: %s", w.Pos, w.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", w.Pos, w.Key, w.Msg)
}

// Error is one problem found in a configuration file. Its message always
// starts with the file and line, then the key.
type Error struct {
	Pos Pos
	// Key is the key (or "Key=Value" context) the error concerns; may be
	// empty for line-level syntax errors that have no key.
	Key string
	Msg string
}

// Error prints "FILE:LINE: Key: message".
func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.Pos, e.Key, e.Msg)
}

// ErrorList is every error found in one load, in file order. Parsing goes
// on after an error so that one run of `sluice conf check` shows them all.
type ErrorList []*Error

// maxErrors bounds the list so that a binary file fed as a config does not
// produce millions of messages.
const maxErrors = 50

// Error joins the messages one per line.
func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}
