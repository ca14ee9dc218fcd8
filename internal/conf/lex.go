package conf

import (
	"strings"
)

// pair is one Key=Value of a statement, with the physical line it was
// written on (a continued statement spans several lines).
type pair struct {
	Key   string
	Value string
	Pos   Pos
}

// stmt is one logical line: either an Include or a list of pairs.
type stmt struct {
	Pos     Pos
	Include string
	Pairs   []pair
}

// segment maps an offset of a logical line back to its physical line.
type segment struct {
	off  int
	line int
}

// logicalLine is a statement's text after comments are stripped and
// continuation lines are joined.
type logicalLine struct {
	text string
	segs []segment
}

// lineAt returns the physical line holding byte offset off.
func (l *logicalLine) lineAt(off int) int {
	line := l.segs[0].line
	for _, s := range l.segs {
		if s.off > off {
			break
		}
		line = s.line
	}
	return line
}

// lex splits a file into statements. Syntax errors are reported through
// errf; the offending statement is dropped and lexing goes on.
func lex(file string, data []byte, errf func(*Error)) []stmt {
	var out []stmt
	text := strings.TrimPrefix(string(data), "\ufeff") // a byte order mark from a Windows editor
	for _, ll := range logicalLines(text) {
		// On a syntax error the pairs read before it are kept, so that a
		// node line with one bad value still defines its nodes and does
		// not cause a cascade of "unknown node" errors further down.
		st, err := lexLine(file, ll)
		if err != nil {
			errf(err)
		}
		if st.Include != "" || len(st.Pairs) > 0 {
			out = append(out, st)
		}
	}
	return out
}

// logicalLines strips comments and joins lines ending with "\" with the
// next one, as slurm.conf(5) describes.
func logicalLines(data string) []logicalLine {
	var out []logicalLine
	var cur logicalLine
	var b strings.Builder
	flush := func() {
		cur.text = b.String()
		if strings.TrimSpace(cur.text) != "" {
			out = append(out, cur)
		}
		cur = logicalLine{}
		b.Reset()
	}
	lines := strings.Split(data, "\n")
	for i, raw := range lines {
		text := stripComment(strings.TrimSuffix(raw, "\r"))
		trimmed := strings.TrimRight(text, " \t")
		cont := strings.HasSuffix(trimmed, "\\") && !strings.HasSuffix(trimmed, "\\\\")
		if cont {
			text = strings.TrimSuffix(trimmed, "\\")
		}
		cur.segs = append(cur.segs, segment{off: b.Len(), line: i + 1})
		b.WriteString(text)
		if !cont {
			flush()
		}
	}
	flush()
	return out
}

// stripComment cuts the line at the first "#" outside double quotes; "\#"
// stands for a literal "#".
func stripComment(s string) string {
	if !strings.ContainsRune(s, '#') {
		return s
	}
	var b strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(s) && s[i+1] == '#':
			b.WriteByte('#')
			i++
			continue
		case c == '#' && !quoted:
			return b.String()
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// lexLine turns one logical line into a statement.
func lexLine(file string, ll logicalLine) (stmt, *Error) {
	s := ll.text
	first := skipSpace(s, 0)
	st := stmt{Pos: Pos{file, ll.lineAt(first)}}
	if inc, ok := includeTarget(s[first:]); ok {
		if inc == "" {
			return st, &Error{Pos: st.Pos, Key: "Include", Msg: "missing file name"}
		}
		st.Include = inc
		return st, nil
	}
	for i := first; ; {
		i = skipSpace(s, i)
		if i >= len(s) {
			return st, nil
		}
		p, next, err := lexPair(s, i)
		pos := Pos{file, ll.lineAt(i)}
		if err != nil {
			err.Pos = pos
			return st, err
		}
		p.Pos = pos
		st.Pairs = append(st.Pairs, p)
		i = next
	}
}

// includeTarget recognises "Include FILE" (the word is case-insensitive
// and must be followed by white space).
func includeTarget(s string) (string, bool) {
	const word = "include"
	if len(s) < len(word) || !strings.EqualFold(s[:len(word)], word) {
		return "", false
	}
	rest := s[len(word):]
	if rest != "" && !isSpace(rest[0]) {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// lexPair reads Key=Value starting at s[i]. White space is allowed around
// "="; a value may be double-quoted to hold spaces. "Key= Other=x" gives
// Key an empty value (slurm.conf uses "Nodes= " for an empty node list).
func lexPair(s string, i int) (pair, int, *Error) {
	start := i
	for i < len(s) && !isSpace(s[i]) && s[i] != '=' {
		i++
	}
	key := s[start:i]
	i = skipSpace(s, i)
	if i >= len(s) || s[i] != '=' {
		return pair{}, 0, &Error{Key: key, Msg: "missing '=' (expected Key=Value)"}
	}
	if key == "" {
		return pair{}, 0, &Error{Msg: "missing key before '='"}
	}
	if !validKey(key) {
		return pair{}, 0, &Error{Key: key, Msg: "invalid key name"}
	}
	i++
	j := skipSpace(s, i)
	if j > i && (j >= len(s) || nextTokenIsPair(s, j)) {
		return pair{Key: key}, j, nil
	}
	i = j
	if i < len(s) && s[i] == '"' {
		end := strings.IndexByte(s[i+1:], '"')
		if end < 0 {
			return pair{}, 0, &Error{Key: key, Msg: "unclosed '\"' in value"}
		}
		v := s[i+1 : i+1+end]
		return pair{Key: key, Value: v}, i + end + 2, nil
	}
	vstart := i
	for i < len(s) && !isSpace(s[i]) {
		i++
	}
	v := s[vstart:i]
	if msg := bracketProblem(v); msg != "" {
		return pair{}, 0, &Error{Key: key, Msg: msg + " in value " + quote(v)}
	}
	return pair{Key: key, Value: v}, i, nil
}

// nextTokenIsPair reports whether the word at s[j] is itself a Key=Value.
func nextTokenIsPair(s string, j int) bool {
	for k := j; k < len(s) && !isSpace(s[k]); k++ {
		if s[k] == '=' {
			return k > j
		}
		if s[k] == '"' {
			return false
		}
	}
	return false
}

// validKey accepts the characters Slurm's key pattern allows.
func validKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// bracketProblem finds an unclosed "[" or a stray "]" in a value.
func bracketProblem(v string) string {
	depth := 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '[':
			if depth > 0 {
				return "nested '['"
			}
			depth++
		case ']':
			if depth == 0 {
				return "unmatched ']'"
			}
			depth--
		}
	}
	if depth > 0 {
		return "unclosed '['"
	}
	return ""
}

// quote prints a value for a message, keeping it short.
func quote(v string) string {
	if len(v) > 80 {
		v = v[:77] + "..."
	}
	return `"` + strings.ToValidUTF8(v, "?") + `"`
}
