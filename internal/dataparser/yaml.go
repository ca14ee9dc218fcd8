package dataparser

import (
	"fmt"
	"strconv"
	"strings"
)

// YAML writes v the way Slurm's serializer/yaml prints a data_parser reply:
// libyaml's block style with every node explicitly tagged (!!map, !!seq,
// !!str, !!int, !!float with six decimals, !!bool, !!null), sequences in a
// mapping not indented, and the document ended by "..." and a blank line
// (Slurm's clients print a newline after libyaml's end marker).
func YAML(v any) []byte {
	var b strings.Builder
	b.WriteString("%YAML 1.1\n---")
	writeYAMLNode(&b, v, 0)
	b.WriteString("...\n\n")
	return []byte(b.String())
}

// writeYAMLNode writes v after a "key:" or "-" already on the line; block
// members go on the following lines at indentation ind.
func writeYAMLNode(b *strings.Builder, v any, ind int) {
	switch x := v.(type) {
	case Num:
		v = Obj{{"set", x.Set}, {"infinite", x.Inf}, {"number", x.N}}
	case NumF:
		v = Obj{{"set", x.Set}, {"infinite", x.Inf}, {"number", Float(x.N)}}
	}
	switch x := v.(type) {
	case Obj:
		if len(x) == 0 {
			b.WriteString(" !!map {}\n")
			return
		}
		b.WriteString(" !!map\n")
		for _, f := range x {
			b.WriteString(strings.Repeat(" ", ind))
			b.WriteString(yamlScalar(f.Key))
			b.WriteByte(':')
			child := ind + 2
			if _, seq := f.Val.([]any); seq {
				child = ind // libyaml does not indent a sequence in a mapping
			}
			writeYAMLNode(b, f.Val, child)
		}
	case []any:
		if len(x) == 0 {
			b.WriteString(" !!seq []\n")
			return
		}
		b.WriteString(" !!seq\n")
		for _, e := range x {
			b.WriteString(strings.Repeat(" ", ind))
			b.WriteByte('-')
			writeYAMLNode(b, e, ind+2)
		}
	default:
		b.WriteByte(' ')
		b.WriteString(yamlScalar(v))
		b.WriteByte('\n')
	}
}

func yamlScalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "!!null null"
	case string:
		if x == "" {
			return "!!str"
		}
		return "!!str " + yamlString(x)
	case bool:
		return "!!bool " + strconv.FormatBool(x)
	case Float:
		return fmt.Sprintf("!!float %f", float64(x))
	case float64:
		return fmt.Sprintf("!!float %f", x)
	case int, int32, int64, uint16, uint32, uint64:
		return fmt.Sprintf("!!int %v", x)
	}
	panic(fmt.Sprintf("dataparser: cannot encode %T", v))
}

// yamlString writes a string plain where libyaml's emitter allows it, else
// single-quoted (quotes doubled), else double-quoted when it holds line
// breaks or control characters.
func yamlString(s string) string {
	if yamlPlain(s) {
		return s
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return strconv.Quote(s)
		}
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func yamlPlain(s string) bool {
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	// A leading indicator forbids a plain scalar; "-", "?" and ":" only
	// when a space (or the end) follows.
	if strings.ContainsRune("-?:", rune(s[0])) {
		if len(s) == 1 || s[1] == ' ' {
			return false
		}
	} else if strings.ContainsRune(",[]{}#&*!|>'\"%@`", rune(s[0])) {
		return false
	}
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r > 0x7e {
			return false
		}
	}
	return true
}
