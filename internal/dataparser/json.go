package dataparser

import (
	"fmt"
	"strconv"
	"strings"
)

// JSON writes v the way Slurm's serializer/json prints a data_parser
// reply: json-c's pretty layout (two-space indent, "[]" and "{}" for empty
// containers, "/" escaped as "\/"), with a final newline.
func JSON(v any) []byte {
	var b strings.Builder
	writeJSON(&b, v, 0)
	b.WriteByte('\n')
	return []byte(b.String())
}

func indent(b *strings.Builder, n int) {
	for i := 0; i < n; i++ {
		b.WriteString("  ")
	}
}

func writeJSON(b *strings.Builder, v any, depth int) {
	switch x := v.(type) {
	case Obj:
		writeJSONObj(b, x, depth)
	case []any:
		writeJSONArr(b, x, depth)
	case Num:
		writeJSONObj(b, Obj{{"set", x.Set}, {"infinite", x.Inf}, {"number", x.N}}, depth)
	case NumF:
		writeJSONObj(b, Obj{{"set", x.Set}, {"infinite", x.Inf}, {"number", Float(x.N)}}, depth)
	default:
		b.WriteString(jsonScalar(v))
	}
}

func writeJSONObj(b *strings.Builder, o Obj, depth int) {
	if len(o) == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteString("{\n")
	for i, f := range o {
		indent(b, depth+1)
		b.WriteString(jsonString(f.Key))
		b.WriteString(": ")
		writeJSON(b, f.Val, depth+1)
		if i < len(o)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	indent(b, depth)
	b.WriteByte('}')
}

func writeJSONArr(b *strings.Builder, a []any, depth int) {
	if len(a) == 0 {
		b.WriteString("[]")
		return
	}
	b.WriteString("[\n")
	for i, v := range a {
		indent(b, depth+1)
		writeJSON(b, v, depth+1)
		if i < len(a)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	indent(b, depth)
	b.WriteByte(']')
}

func jsonScalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return jsonString(x)
	case bool:
		return strconv.FormatBool(x)
	case Float:
		return formatDouble(float64(x))
	case float64:
		return formatDouble(x)
	case int, int32, int64, uint16, uint32, uint64:
		return fmt.Sprint(x)
	}
	panic(fmt.Sprintf("dataparser: cannot encode %T", v))
}

// formatDouble prints a double as json-c does: 17 significant digits, and
// ".0" after a whole number.
func formatDouble(f float64) string {
	s := strconv.FormatFloat(f, 'g', 17, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// jsonString quotes s as json-c does: '"', '\\' and '/' escaped, control
// characters as \b \f \n \r \t or \u00XX, everything else as it is.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\', '/':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
