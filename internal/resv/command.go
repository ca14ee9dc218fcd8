package resv

import (
	"fmt"
	"strings"
)

// Verb is what an scontrol reservation command does.
type Verb string

// The reservation verbs.
const (
	VerbCreate Verb = "create"
	VerbUpdate Verb = "update"
	VerbDelete Verb = "delete"
	VerbShow   Verb = "show"
)

// Field is one `Key=Value` of a command; Op is '=' or, for `Key+=V` and
// `Key-=V`, '+' or '-'. Key is the canonical key name (see keys).
type Field struct {
	Key   string
	Op    byte
	Value string
}

// Command is one parsed scontrol reservation command.
type Command struct {
	Verb Verb
	// Name is ReservationName (empty for create without a name and for
	// show of every reservation).
	Name   string
	Fields []Field
}

// keys maps the accepted spellings (lower case, as scontrol matches them
// case-insensitively, singular and plural) to the canonical key.
var keys = map[string]string{
	"reservation": "ReservationName", "reservationname": "ReservationName", "resv": "ReservationName",
	"starttime": "StartTime", "start": "StartTime", "endtime": "EndTime", "end": "EndTime",
	"duration": "Duration", "nodes": "Nodes", "node": "Nodes", "nodelist": "Nodes",
	"nodecnt": "NodeCnt", "nodecount": "NodeCnt", "corecnt": "CoreCnt", "corecount": "CoreCnt",
	"partitionname": "PartitionName", "partition": "PartitionName", "flags": "Flags", "flag": "Flags",
	"features": "Features", "feature": "Features", "users": "Users", "user": "Users",
	"accounts": "Accounts", "account": "Accounts", "groups": "Groups", "group": "Groups",
	"licenses": "Licenses", "license": "Licenses", "tres": "TRES", "burstbuffer": "BurstBuffer",
	"maxstartdelay": "MaxStartDelay", "comment": "Comment", "skip": "Skip", "watts": "Watts",
}

// CanonicalKey returns the canonical name of a reservation key, or "".
func CanonicalKey(k string) string { return keys[strings.ToLower(k)] }

// ParseCommand reads the words of an scontrol reservation command after
// "scontrol": `create reservation K=V...` (also `create res`, or
// `create ReservationName=R ...`), `update ReservationName=R K=V...`,
// `delete ReservationName=R` (or `delete reservation R`), `show
// reservation [R]`. Words may come split on '=' boundaries as a shell
// passes them; values may be quoted.
func ParseCommand(words []string) (*Command, error) {
	if len(words) == 0 {
		return nil, &UsageError{"no command given"}
	}
	cmd := &Command{}
	switch strings.ToLower(words[0]) {
	case "create":
		cmd.Verb = VerbCreate
	case "update":
		cmd.Verb = VerbUpdate
	case "delete":
		cmd.Verb = VerbDelete
	case "show":
		cmd.Verb = VerbShow
	default:
		return nil, &UsageError{fmt.Sprintf("invalid keyword: %s", words[0])}
	}
	rest := words[1:]
	if len(rest) > 0 && isResvWord(rest[0]) {
		rest = rest[1:]
		if (cmd.Verb == VerbDelete || cmd.Verb == VerbShow) && len(rest) > 0 && !strings.Contains(rest[0], "=") {
			cmd.Name, rest = rest[0], rest[1:]
		}
	}
	for _, w := range rest {
		f, err := parseField(w)
		if err != nil {
			return nil, err
		}
		if f.Key == "ReservationName" {
			cmd.Name = f.Value
			continue
		}
		cmd.Fields = append(cmd.Fields, f)
	}
	switch cmd.Verb {
	case VerbUpdate, VerbDelete:
		if cmd.Name == "" {
			return nil, &UsageError{"ReservationName must be specified."}
		}
	}
	if cmd.Verb == VerbDelete && len(cmd.Fields) > 0 {
		return nil, &UsageError{fmt.Sprintf("invalid keyword: %s", cmd.Fields[0].Key)}
	}
	return cmd, nil
}

// isResvWord matches "reservation" and its abbreviations ("res", "resv").
func isResvWord(w string) bool {
	w = strings.ToLower(w)
	return len(w) >= 3 && strings.HasPrefix("reservations", w) || w == "resv"
}

// parseField reads `Key=Value`, `Key+=Value` or `Key-=Value`.
func parseField(w string) (Field, error) {
	k, v, ok := strings.Cut(w, "=")
	if !ok {
		return Field{}, &UsageError{fmt.Sprintf("invalid keyword: %s", w)}
	}
	op := byte('=')
	if n := len(k); n > 0 && (k[n-1] == '+' || k[n-1] == '-') {
		op, k = k[n-1], k[:n-1]
	}
	key := CanonicalKey(k)
	if key == "" {
		return Field{}, &UsageError{fmt.Sprintf("invalid keyword: %s", w)}
	}
	return Field{Key: key, Op: op, Value: unquote(v)}, nil
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// SplitLine splits one command line into words on blanks, keeping quoted
// values together (for files of scontrol lines and interactive input).
func SplitLine(line string) []string {
	var out []string
	var cur strings.Builder
	var quote byte
	has := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '"' || ch == '\'':
			quote, has = ch, true
		case ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n':
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteByte(ch)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return out
}
