package acct

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Verb is what a sacctmgr command does.
type Verb int

// Verbs of the sacctmgr language (add=create, modify=update,
// delete=remove, show=list).
const (
	VerbAdd Verb = iota + 1
	VerbModify
	VerbDelete
	VerbShow
	VerbDump
	VerbLoad
)

// Entity is what a sacctmgr command acts on.
type Entity int

// Entities of the sacctmgr language.
const (
	EntCluster Entity = iota + 1
	EntAccount
	EntUser
	EntQOS
	EntAssoc
	EntTRES
)

// String names the entity as sacctmgr messages do.
func (e Entity) String() string {
	return [...]string{"", "cluster", "account", "user", "qos", "association", "tres"}[e]
}

// Spec is one `Key=Value` (or `Key+=Value`, `Key-=Value`) of a command.
// Key is canonical (see canonicalKey); Op is '=', '+' or '-'.
type Spec struct {
	Key   string
	Op    byte
	Value string
}

// Column is one field of `format=`: its canonical name and the width
// given with %N (0: the column's default; negative: left justified).
type Column struct {
	Name  string
	Width int
}

// Options are sacctmgr's command-line options.
type Options struct {
	Immediate bool // -i: commit without asking
	Parsable  bool // -p: '|' after every field
	Parsable2 bool // -P: '|' between fields
	NoHeader  bool // -n
	Quiet     bool // -Q
	WithAssoc bool // -s: show entities() with their associations
	Readonly  bool // -r
}

// Command is one parsed sacctmgr command.
type Command struct {
	Verb   Verb
	Entity Entity
	// Names are the entity names given bare (`add user alice`) or as
	// Name=/Names= (merged, lower-cased where Slurm lower-cases).
	Names []string
	// Where are the conditions selecting what a modify/delete/show acts on.
	Where []Spec
	// Set are the values an add or modify writes.
	Set    []Spec
	Format []Column
	// Tree, WithDeleted, WithAssoc and WithSubAccounts are show options.
	Tree, WithDeleted, WithAssoc, WithSubAccounts bool
	// File is the file of dump/load.
	File string
	// Clean asks load to start from an empty cluster.
	Clean bool
}

// Error is a sacctmgr error: the CLI prints it as `sacctmgr: error: MSG`
// and exits 1, and nothing is changed. A Verbatim error is printed as
// Slurm's sacctmgr prints that failure: Stdout on standard output and Msg
// (when not empty) on standard error, both exactly, without the prefix.
type Error struct {
	Msg      string
	Verbatim bool
	Stdout   string
}

// verbatimMark starts the text of a Verbatim error and separates its
// stdout from its stderr part, so that the text alone (which is what the
// controller passes on) still says how to print it.
const verbatimMark = "\x1f"

// Error returns the message without the "sacctmgr: error: " prefix, or
// the encoded form of a Verbatim error (see ErrorOutput).
func (e *Error) Error() string {
	if e.Verbatim {
		return verbatimMark + e.Stdout + verbatimMark + e.Msg
	}
	return e.Msg
}

func errorf(format string, a ...any) error { return &Error{Msg: fmt.Sprintf(format, a...)} }

// outErr is a failure Slurm reports on stdout (" Nothing deleted").
func outErr(stdout string) error { return &Error{Verbatim: true, Stdout: stdout} }

// plainErr is a failure Slurm prints on stderr as is, without the
// "sacctmgr: error: " prefix.
func plainErr(format string, a ...any) error {
	return &Error{Verbatim: true, Msg: fmt.Sprintf(format, a...)}
}

// ErrorOutput returns what sacctmgr prints on stdout and on stderr for
// the text of an error (err.Error() of a failed Run, or the message the
// controller answered with).
func ErrorOutput(text string) (stdout, stderr string) {
	rest, ok := strings.CutPrefix(text, verbatimMark)
	if !ok {
		return "", "sacctmgr: error: " + text + "\n"
	}
	stdout, stderr, _ = strings.Cut(rest, verbatimMark)
	if stdout != "" && !strings.HasSuffix(stdout, "\n") {
		stdout += "\n"
	}
	if stderr != "" && !strings.HasSuffix(stderr, "\n") {
		stderr += "\n"
	}
	return stdout, stderr
}

// ParseOptions strips sacctmgr's options, wherever they appear (GNU getopt
// permutes arguments, so `show qos -P` works), (-i, -p, -P, -n, -Q,
// -s, -r, -v, their long forms and bundled short options) from args.
func ParseOptions(args []string) (Options, []string, error) {
	var o Options
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" || isNumber(a) || strings.Contains(a, "=") {
			rest = append(rest, a)
			continue
		}
		if strings.HasPrefix(a, "--") {
			if err := o.setLong(a[2:]); err != nil {
				return o, nil, err
			}
			continue
		}
		for _, c := range a[1:] {
			if err := o.setShort(c); err != nil {
				return o, nil, err
			}
		}
	}
	return o, rest, nil
}

func isNumber(s string) bool { _, err := strconv.ParseFloat(s, 64); return err == nil }

func (o *Options) setLong(name string) error {
	switch strings.ToLower(name) {
	case "immediate":
		o.Immediate = true
	case "parsable":
		o.Parsable = true
	case "parsable2":
		o.Parsable2 = true
	case "noheader":
		o.NoHeader = true
	case "quiet":
		o.Quiet = true
	case "associations":
		o.WithAssoc = true
	case "readonly":
		o.Readonly = true
	case "verbose":
	default:
		return errorf("unrecognized option '--%s'", name)
	}
	return nil
}

func (o *Options) setShort(c rune) error {
	switch c {
	case 'i':
		o.Immediate = true
	case 'p':
		o.Parsable = true
	case 'P':
		o.Parsable2 = true
	case 'n':
		o.NoHeader = true
	case 'Q':
		o.Quiet = true
	case 's':
		o.WithAssoc = true
	case 'r':
		o.Readonly = true
	case 'v':
	default:
		return errorf("invalid option -- '%c'", c)
	}
	return nil
}

// verbs() maps every spelling sacctmgr accepts to its verb.
var verbs = sync.OnceValue(func() map[string]Verb {
	return map[string]Verb{
		"add": VerbAdd, "create": VerbAdd,
		"modify": VerbModify, "update": VerbModify, "mod": VerbModify,
		"delete": VerbDelete, "remove": VerbDelete, "del": VerbDelete, "rem": VerbDelete,
		"show": VerbShow, "list": VerbShow,
		"dump": VerbDump, "load": VerbLoad,
	}
})

// entities() maps every spelling sacctmgr accepts to its entity.
var entities = sync.OnceValue(func() map[string]Entity {
	return map[string]Entity{
		"cluster": EntCluster, "clusters": EntCluster,
		"account": EntAccount, "accounts": EntAccount, "acct": EntAccount, "accts": EntAccount,
		"user": EntUser, "users": EntUser,
		"qos": EntQOS, "qoss": EntQOS,
		"association": EntAssoc, "associations": EntAssoc, "assoc": EntAssoc, "assocs": EntAssoc,
		"tres": EntTRES,
	}
})

// unsupportedEntities are real sacctmgr entities() Sluice does not keep.
var unsupportedEntities = []string{"coordinator", "event", "federation", "problem", "reservation",
	"resource", "runawayjobs", "stats", "transaction", "wckey", "configuration", "instance"}

// Parse parses one sacctmgr command (without the leading options) as the
// operator typed it, case-insensitively.
func Parse(args []string) (*Command, error) {
	if len(args) == 0 {
		return nil, errorf("No command given")
	}
	verb, ok := verbs()[strings.ToLower(args[0])]
	if !ok {
		return nil, errorf("Invalid keyword: %s", args[0])
	}
	c := &Command{Verb: verb}
	if verb == VerbLoad {
		return c, c.parseLoad(args[1:])
	}
	if len(args) < 2 {
		if verb == VerbDump {
			return nil, errorf("No entity given to %s", strings.ToLower(args[0]))
		}
		return nil, noValidEntity(verb)
	}
	ent, rest, err := parseEntity(verb, args[1:])
	if err != nil {
		return nil, err
	}
	c.Entity = ent
	if verb == VerbDump {
		return c, c.parseDump(rest)
	}
	if err := c.parseSpecs(rest); err != nil {
		return c, err
	}
	if c.Entity == EntUser {
		c.Names = lowerNames(c.Names) // slurmdbd stores user names lowercase (no PreserveCaseUser)
	}
	return c, nil
}

// parseEntity reads the entity word. `dump` takes a cluster name (or
// Cluster=) instead of an entity word.
func parseEntity(verb Verb, args []string) (Entity, []string, error) {
	w := strings.ToLower(args[0])
	if e, ok := entities()[w]; ok {
		return e, args[1:], nil
	}
	if verb == VerbDump {
		return EntCluster, args, nil
	}
	for _, u := range unsupportedEntities {
		if strings.HasPrefix(u, w) && len(w) >= 3 {
			return 0, nil, errorf("%s is not supported by sluice sacctmgr", u)
		}
	}
	return 0, nil, noValidEntity(verb)
}

// noValidEntity is sacctmgr's answer to an unknown entity word: the
// entities its command accepts, printed on stderr as is.
func noValidEntity(verb Verb) error {
	switch verb {
	case VerbAdd, VerbDelete:
		return plainErr("No valid entity in %s command\nInput line must include \"Account\", \"Cluster\", \"Coordinator\", \"Federation\", \"QOS\", \"Resource\", or \"User\"", verbName(verb))
	case VerbModify:
		return plainErr("No valid entity in modify command\nInput line must include \"Account\", \"Cluster\", \"Federation\", \"Job\", \"QOS\", \"Resource\" or \"User\"")
	}
	return plainErr("No valid entity in list command\n" +
		"Input line must include \"Account\", \"Association\", \"Cluster\", \"Configuration\",\n" +
		"\"Event\", \"Federation\", \"Problem\", \"QOS\", \"Resource\", \"Reservation\",\n" +
		"\"RunAwayJobs\", \"Stats\", \"Transaction\", \"TRES\", \"User\", or \"WCKey\"")
}

func (c *Command) parseDump(args []string) error {
	for _, a := range args {
		k, _, v, ok := splitSpec(a)
		switch {
		case !ok:
			c.Names = append(c.Names, strings.ToLower(a))
		case strings.EqualFold(k, "file"):
			c.File = v
		case strings.EqualFold(k, "cluster") || strings.EqualFold(k, "name"):
			c.Names = append(c.Names, splitList(strings.ToLower(v))...)
		default:
			return errorf("Unknown option: %s", a)
		}
	}
	if len(c.Names) != 1 {
		return errorf("You can only dump one cluster at a time.")
	}
	if c.File == "" {
		c.File = c.Names[0] + ".cfg"
	}
	return nil
}

func (c *Command) parseLoad(args []string) error {
	for _, a := range args {
		k, _, v, ok := splitSpec(a)
		switch {
		case !ok && strings.EqualFold(a, "clean"):
			c.Clean = true
		case !ok:
			c.File = a
		case strings.EqualFold(k, "file"):
			c.File = v
		case strings.EqualFold(k, "cluster"):
			c.Names = []string{strings.ToLower(v)}
		default:
			return errorf("Unknown option: %s", a)
		}
	}
	if c.File == "" {
		return errorf("No filename given to load")
	}
	return nil
}

// parseSpecs sorts the words after the entity into names, conditions
// (before `set`, or after `where`) and values (after `set`, or all of them
// for add), following sacctmgr's rule that what precedes `set` selects.
func (c *Command) parseSpecs(args []string) error {
	inSet := c.Verb == VerbAdd
	sawSet := false
	for _, a := range args {
		switch strings.ToLower(a) {
		case "where":
			if c.Verb == VerbAdd {
				return errorf("'where' is not valid with add")
			}
			inSet = false
			continue
		case "set":
			if c.Verb != VerbModify {
				return errorf("'set' is only valid with modify")
			}
			inSet, sawSet = true, true
			continue
		}
		if err := c.addWord(a, inSet); err != nil {
			return err
		}
	}
	if c.Verb == VerbModify && (!sawSet || len(c.Set) == 0) {
		return errorf("You didn't give me anything to set")
	}
	return nil
}

func (c *Command) addWord(a string, inSet bool) error {
	k, op, v, ok := splitSpec(a)
	if !ok {
		return c.addBare(a)
	}
	key, known := canonicalKey(k)
	if !known {
		return c.unknownOption(a)
	}
	switch key {
	case "Format":
		return c.parseFormat(v)
	case "Name":
		if !inSet || c.Verb == VerbAdd {
			c.Names = append(c.Names, splitList(v)...)
			return nil
		}
	case "Description", "Organization", "User":
		v = strings.ToLower(v) // sacctmgr stores (and matches) them lowercase
	}
	s := resolveLegacy(Spec{Key: key, Op: op, Value: v})
	if inSet {
		c.Set = append(c.Set, s)
	} else {
		c.Where = append(c.Where, s)
	}
	return nil
}

// unknownOption is sacctmgr's refusal of an unknown KEY=VALUE: on stdout
// for QOS, with a hint except for add user.
func (c *Command) unknownOption(a string) error {
	msg := " Unknown option: " + a
	if c.Verb == VerbAdd && c.Entity == EntUser {
		return plainErr("%s", msg)
	}
	msg += "\n Use keyword 'where' to modify condition"
	if c.Entity == EntQOS {
		return outErr(msg)
	}
	return plainErr("%s", msg)
}

// addBare handles a word without '=': a show option or an entity name.
func (c *Command) addBare(a string) error {
	switch strings.ToLower(a) {
	case "tree":
		c.Tree = true
		return nil
	case "withd", "withdeleted":
		c.WithDeleted = true
		return nil
	case "withassoc", "withassocs", "wa":
		c.WithAssoc = true
		return nil
	case "withsubaccounts", "withsub":
		c.WithSubAccounts = true
		return nil
	}
	if c.Verb == VerbShow && c.Entity == EntTRES {
		c.Names = append(c.Names, a)
		return nil
	}
	c.Names = append(c.Names, splitList(a)...)
	return nil
}

// splitSpec splits `Key=V`, `Key+=V`, `Key-=V`.
func splitSpec(a string) (key string, op byte, val string, ok bool) {
	i := strings.IndexByte(a, '=')
	if i <= 0 {
		return "", 0, "", false
	}
	key, op, val = a[:i], '=', unquote(a[i+1:])
	if n := len(key); n > 1 && (key[n-1] == '+' || key[n-1] == '-') {
		op, key = key[n-1], key[:n-1]
	}
	return key, op, val, true
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// splitList splits a comma separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseFormat parses `format=Name,Priority%10,Preempt%-30`.
func (c *Command) parseFormat(v string) error {
	for _, f := range splitList(v) {
		name, width, hasW := strings.Cut(f, "%")
		col := Column{Name: name}
		if hasW {
			n, err := strconv.Atoi(width)
			if err != nil || n > 1000 || n < -1000 {
				return errorf("Invalid field width in format: %s", f)
			}
			col.Width = n
		}
		c.Format = append(c.Format, col)
	}
	return nil
}
