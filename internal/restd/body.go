package restd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// maxBody bounds a request body (a batch script and its environment).
const maxBody = 64 << 20

// fields is a JSON object's members, undecoded.
type fields map[string]json.RawMessage

// readBody reads a JSON object body. ok is false when slurmrestd would
// answer 400 "Unable to parse query." (no JSON content type, or a body
// that is not a JSON object).
func readBody(r *http.Request) (fields, bool) {
	if !strings.Contains(r.Header.Get("Content-Type"), "json") {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, false
	}
	var f fields
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&f); err != nil {
		return nil, false
	}
	return f, true
}

// str reads a string member ("" when absent or not a string).
func (f fields) str(k string) string {
	var s string
	json.Unmarshal(f[k], &s)
	return s
}

// list reads a member that is a list of strings or a comma-separated
// string, joined with commas.
func (f fields) list(k string) string {
	var l []string
	if json.Unmarshal(f[k], &l) == nil {
		return strings.Join(l, ",")
	}
	return f.str(k)
}

// strs reads a list of strings.
func (f fields) strs(k string) []string {
	var l []string
	json.Unmarshal(f[k], &l)
	return l
}

// boolean reads a boolean member.
func (f fields) boolean(k string) (v, ok bool) {
	ok = json.Unmarshal(f[k], &v) == nil
	return v, ok && f[k] != nil
}

// num reads data_parser's optional number: a plain number or
// {"set": true, "infinite": false, "number": n}. set is false when
// absent or unset.
func (f fields) num(k string) (n int64, set, inf bool) {
	raw := f[k]
	if raw == nil {
		return 0, false, false
	}
	if json.Unmarshal(raw, &n) == nil {
		return n, true, false
	}
	var o struct {
		Set, Infinite bool
		Number        int64
	}
	if json.Unmarshal(raw, &o) != nil {
		return 0, false, false
	}
	return o.Number, o.Set || o.Infinite, o.Infinite
}

// numStr is num as a decimal string ("" when unset).
func (f fields) numStr(k string) string {
	n, set, inf := f.num(k)
	switch {
	case inf:
		return "UNLIMITED"
	case set:
		return strconv.FormatInt(n, 10)
	}
	return ""
}

// typeName names a JSON value's type as slurmrestd's warnings do.
func typeName(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "boolean"
	case strings.HasPrefix(s, `"`):
		return "string"
	case strings.HasPrefix(s, "["):
		return "list"
	case strings.HasPrefix(s, "{"):
		return "dictionary"
	case strings.ContainsAny(s, ".eE"):
		return "floating point"
	}
	return "64 bit integer"
}

// unknownField is slurmrestd's warning for a member it does not parse.
func unknownField(path, k string, raw json.RawMessage, parser string) string {
	return fmt.Sprintf("Ignoring unknown field %q of type %s in %s", k, typeName(raw), parser)
}

// jsonObject decodes raw as a JSON object.
func jsonObject(raw json.RawMessage, f *fields) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(f)
}
