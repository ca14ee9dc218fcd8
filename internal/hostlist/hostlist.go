package hostlist

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxNames caps how many names one expression may expand to. Slurm refuses absurdly
// large ranges too; the cap keeps a hostile or mistyped expression (`n[0-99999999999]`)
// from exhausting memory.
const MaxNames = 1_000_000

// maxDigits bounds a bracket number so that its value fits an int64 comfortably.
const maxDigits = 18

// ErrTooLarge is wrapped by Expand when an expression would produce more than MaxNames.
var ErrTooLarge = errors.New("host list too large")

// span is one `lo[-hi]` item inside brackets; width is the length of lo as written,
// which is how Slurm decides zero padding (`01-10` pads to 2 digits, `1-10` does not).
type span struct {
	lo, hi int64
	width  int
}

// segment is a piece of one host expression: literal text, or a bracket group.
type segment struct {
	text  string
	spans []span // nil for a literal
}

// isSeparator reports whether c separates host expressions outside brackets.
// Slurm's hostlist parser accepts commas and white space between hosts.
func isSeparator(c byte) bool {
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// Expand returns every host name in expr, in Slurm's order: items left to right,
// ranges ascending, and for several bracket groups in one name the cartesian product
// with the leftmost group varying slowest (`rack[1-2]-n[1-2]` = rack1-n1, rack1-n2,
// rack2-n1, rack2-n2). Duplicates are kept, as Slurm's hostlist keeps them. An empty
// expression gives no names.
func Expand(expr string) ([]string, error) {
	items, err := splitTop(expr)
	if err != nil {
		return nil, err
	}
	parsed := make([][]segment, 0, len(items))
	total := 0
	for _, it := range items {
		segs, err := parseItem(it)
		if err != nil {
			return nil, fmt.Errorf("host list %q: %w", expr, err)
		}
		n := countItem(segs)
		if n > MaxNames || total+n > MaxNames {
			return nil, fmt.Errorf("host list %q: %w (more than %d names)", expr, ErrTooLarge, MaxNames)
		}
		total += n
		parsed = append(parsed, segs)
	}
	names := make([]string, 0, total)
	for _, segs := range parsed {
		names = expandSegments(names, make([]byte, 0, 64), segs)
	}
	return names, nil
}

// splitTop splits expr at separators that are outside brackets, dropping empty items.
func splitTop(expr string) ([]string, error) {
	var items []string
	depth, start := 0, 0
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; {
		case c == '[':
			if depth > 0 {
				return nil, fmt.Errorf("host list %q: nested '[' at offset %d", expr, i)
			}
			depth++
		case c == ']':
			if depth == 0 {
				return nil, fmt.Errorf("host list %q: unmatched ']' at offset %d", expr, i)
			}
			depth--
		case depth == 0 && isSeparator(c):
			if i > start {
				items = append(items, expr[start:i])
			}
			start = i + 1
		}
	}
	if depth > 0 {
		return nil, fmt.Errorf("host list %q: unclosed '['", expr)
	}
	if start < len(expr) {
		items = append(items, expr[start:])
	}
	return items, nil
}

// parseItem cuts one host expression (brackets already known to balance) into segments.
func parseItem(item string) ([]segment, error) {
	var segs []segment
	for len(item) > 0 {
		open := strings.IndexByte(item, '[')
		if open < 0 {
			segs = append(segs, segment{text: item})
			break
		}
		if open > 0 {
			segs = append(segs, segment{text: item[:open]})
		}
		end := strings.IndexByte(item, ']')
		spans, err := parseRanges(item[open+1 : end])
		if err != nil {
			return nil, err
		}
		segs = append(segs, segment{spans: spans})
		item = item[end+1:]
	}
	return segs, nil
}

// parseRanges parses the inside of a bracket: `01-03,07`.
func parseRanges(s string) ([]span, error) {
	if s == "" {
		return nil, errors.New("empty brackets")
	}
	parts := strings.Split(s, ",")
	spans := make([]span, 0, len(parts))
	for _, p := range parts {
		sp, err := parseSpan(p)
		if err != nil {
			return nil, err
		}
		spans = append(spans, sp)
	}
	return spans, nil
}

// parseSpan parses `lo` or `lo-hi`; a reversed range is an error, as in Slurm.
func parseSpan(p string) (span, error) {
	loText, hiText, isRange := strings.Cut(p, "-")
	lo, err := parseNumber(loText)
	if err != nil {
		return span{}, fmt.Errorf("bad range %q: %w", p, err)
	}
	hi := lo
	if isRange {
		if hi, err = parseNumber(hiText); err != nil {
			return span{}, fmt.Errorf("bad range %q: %w", p, err)
		}
	}
	if hi < lo {
		return span{}, &RangeError{Range: p}
	}
	if hi-lo >= MaxNames {
		return span{}, fmt.Errorf("bad range %q: %w (more than %d names)", p, ErrTooLarge, MaxNames)
	}
	return span{lo: lo, hi: hi, width: len(loText)}, nil
}

// RangeError is a range whose end comes before its start ("3-1"), which
// Slurm's hostlist parser reports on a line of its own.
type RangeError struct{ Range string }

func (e *RangeError) Error() string { return fmt.Sprintf("bad range %q: end is before start", e.Range) }

// parseNumber accepts only decimal digits (no signs, no spaces).
func parseNumber(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("missing number")
	}
	if len(s) > maxDigits {
		return 0, errors.New("number too long")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not a number", s)
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// countItem returns how many names segs expand to, saturating above MaxNames.
func countItem(segs []segment) int {
	n := 1
	for _, sg := range segs {
		if sg.spans == nil {
			continue
		}
		k := 0
		for _, sp := range sg.spans {
			k += int(sp.hi - sp.lo + 1)
			if k > MaxNames {
				return MaxNames + 1
			}
		}
		n *= k
		if n > MaxNames {
			return MaxNames + 1
		}
	}
	return n
}

// expandSegments appends to out every name formed by the bytes in buf followed by segs.
// buf is shared scratch space, so each name costs one allocation.
func expandSegments(out []string, buf []byte, segs []segment) []string {
	if len(segs) == 0 {
		return append(out, string(buf))
	}
	sg, rest := segs[0], segs[1:]
	if sg.spans == nil {
		return expandSegments(out, append(buf, sg.text...), rest)
	}
	for _, sp := range sg.spans {
		for v := sp.lo; v <= sp.hi; v++ {
			out = expandSegments(out, appendPadded(buf, v, sp.width), rest)
		}
	}
	return out
}

// appendPadded appends v in decimal with at least width digits (leading zeros).
func appendPadded(buf []byte, v int64, width int) []byte {
	var tmp [20]byte
	num := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(num); i < width; i++ {
		buf = append(buf, '0')
	}
	return append(buf, num...)
}

// pad prints v in decimal with at least width digits (leading zeros).
func pad(v int64, width int) string {
	s := strconv.FormatInt(v, 10)
	if len(s) >= width {
		return s
	}
	return strings.Repeat("0", width-len(s)) + s
}
