package oracle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// A data_parser reply (`squeue --json`, `sinfo --json` ...) is compared
// through a view: "@json PATTERN..." before a command replaces its stdout,
// when it parses as JSON, by one line per selected leaf,
//
//	jobs[job_id=3].job_state = ["PENDING"]
//	jobs[job_id=3].submit_time = {set inf=false <T>}
//
// so that a scenario compares the fields that must agree and leaves out
// those no two clusters share (host load, free memory, daemon counters).
// Array members are named by their job_id, name or id when they have
// one (the order of slurmctld's job table is not Sluice's), else by index.
// A PATTERN is a path with "[]" for any member ("jobs[].job_state"); it
// selects the leaves at or below it. "PATTERN.*" selects the key names of
// the objects there, in order (the field set). Without patterns every
// leaf is listed. Values that differ between any two runs are masked:
// times (keys named time, *_time and the other stamps in jsonTimeKeys)
// print <T> when not 0, user and group ids <ID>.

// jsonTimeKeys are the time stamps not named *_time.
var jsonTimeKeys = map[string]bool{
	"time": true, "last_update": true, "last_backfill": true, "last_sched_evaluation": true,
	"req_time": true, "req_time_start": true, "job_states_ts": true, "bf_when_last_cycle": true,
	"last_busy": true, "boot_time": true, "submission": true, "eligible": true, "start": true, "end": true,
}

// jsonIDKeys are host-specific ids.
var jsonIDKeys = map[string]bool{"user_id": true, "group_id": true, "uid": true, "gid": true}

// jsonNode is a parsed JSON value that keeps the order of object keys.
type jsonNode struct {
	keys   []string
	fields map[string]*jsonNode
	elems  []*jsonNode
	isObj  bool
	isArr  bool
	scalar string // JSON text of a scalar
}

func parseJSONNode(dec *json.Decoder) (*jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			n := &jsonNode{isObj: true, fields: map[string]*jsonNode{}}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := parseJSONNode(dec)
				if err != nil {
					return nil, err
				}
				key := k.(string)
				n.keys = append(n.keys, key)
				n.fields[key] = v
			}
			_, err = dec.Token()
			return n, err
		}
		n := &jsonNode{isArr: true}
		for dec.More() {
			v, err := parseJSONNode(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
		}
		_, err = dec.Token()
		return n, err
	case string:
		b, _ := json.Marshal(t)
		return &jsonNode{scalar: string(b)}, nil
	case json.Number:
		return &jsonNode{scalar: t.String()}, nil
	case nil:
		return &jsonNode{scalar: "null"}, nil
	default:
		return &jsonNode{scalar: fmt.Sprint(t)}, nil
	}
}

// jsonView rewrites text as the view selected by patterns; text that is
// not one JSON value is returned as it is.
func jsonView(text string, patterns []string) string {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	root, err := parseJSONNode(dec)
	if err != nil {
		return text
	}
	if _, err := dec.Token(); err != io.EOF {
		return text
	}
	var b bytes.Buffer
	walkJSON(&b, root, "", "", "", patterns)
	return b.String()
}

// walkJSON prints the selected leaves below n; path names n with member
// labels, pat the same with "[]" for every member.
func walkJSON(b *bytes.Buffer, n *jsonNode, path, pat, key string, patterns []string) {
	switch {
	case n.isObj && isNumberObject(n):
		emitJSON(b, path, pat, numberObject(n, key), patterns)
	case n.isObj:
		if wantKeys(pat, patterns) {
			fmt.Fprintf(b, "%s.* = %s\n", path, strings.Join(n.keys, " "))
		}
		for _, k := range n.keys {
			walkJSON(b, n.fields[k], joinPath(path, k), joinPath(pat, k), k, patterns)
		}
		if len(n.keys) == 0 {
			emitJSON(b, path, pat, "{}", patterns)
		}
	case n.isArr:
		if len(n.elems) == 0 || !n.elems[0].isObj && !n.elems[0].isArr {
			emitJSON(b, path, pat, scalarList(n), patterns)
			return
		}
		for i, e := range n.elems {
			walkJSON(b, e, path+"["+memberLabel(e, i)+"]", pat+"[]", key, patterns)
		}
	default:
		emitJSON(b, path, pat, maskScalar(key, n.scalar), patterns)
	}
}

func joinPath(p, k string) string {
	if p == "" {
		return k
	}
	return p + "." + k
}

func isNumberObject(n *jsonNode) bool {
	return len(n.keys) == 3 && n.keys[0] == "set" && n.keys[1] == "infinite" && n.keys[2] == "number"
}

// numberObject prints {set, infinite, number} compactly, masked as its key.
func numberObject(n *jsonNode, key string) string {
	s := "{"
	if n.fields["set"].scalar == "true" {
		s += "set"
	} else {
		s += "unset"
	}
	if n.fields["infinite"].scalar == "true" {
		s += " infinite"
	}
	return s + " " + maskScalar(key, n.fields["number"].scalar) + "}"
}

func scalarList(n *jsonNode) string {
	var parts []string
	for _, e := range n.elems {
		parts = append(parts, e.scalar)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// memberLabel names an array member by its identity when it has one.
func memberLabel(e *jsonNode, i int) string {
	if e.isObj {
		for _, k := range []string{"job_id", "name", "id"} {
			if v, ok := e.fields[k]; ok && v.scalar != "" {
				return k + "=" + strings.Trim(v.scalar, `"`)
			}
		}
	}
	return fmt.Sprint(i)
}

func maskScalar(key, v string) string {
	switch {
	case (jsonTimeKeys[key] || strings.HasSuffix(key, "_time")) && v != "0":
		return "<T>"
	case jsonIDKeys[key]:
		return "<ID>"
	}
	return v
}

func emitJSON(b *bytes.Buffer, path, pat, v string, patterns []string) {
	if selected(pat, patterns) {
		fmt.Fprintf(b, "%s = %s\n", path, v)
	}
}

// selected reports whether a leaf whose pattern path is pat is at or below
// one of the patterns (every leaf without patterns).
func selected(pat string, patterns []string) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if pat == p || strings.HasPrefix(pat, p+".") || strings.HasPrefix(pat, p+"[") {
			return true
		}
	}
	return false
}

// wantKeys reports whether the key names of the object at pat are asked
// for ("pat.*").
func wantKeys(pat string, patterns []string) bool {
	for _, p := range patterns {
		if p == pat+".*" || (pat == "" && p == "*") {
			return true
		}
	}
	return false
}
