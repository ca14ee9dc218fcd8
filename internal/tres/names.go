package tres

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Canonical names of Slurm's built-in TRES, in the order of their Slurm TRES ids (1..8),
// which is the order Slurm prints them in.
const (
	CPU         = "cpu"
	Mem         = "mem"
	Energy      = "energy"
	Node        = "node"
	BillingTRES = "billing"
	FSDisk      = "fs/disk"
	VMem        = "vmem"
	Pages       = "pages"
)

// builtins lists the built-in TRES by Slurm TRES id (index+1).
var builtins = []string{CPU, Mem, Energy, Node, BillingTRES, FSDisk, VMem, Pages}

// typeOrder() ranks the TRES types that follow the built-ins when printing.
var typeOrder = sync.OnceValue(func() map[string]int {
	return map[string]int{"gres": 1, "license": 2, "bb": 3, "fs": 4, "ic": 5}
})

// ErrUnknown is wrapped when a TRES name is not a TRES type Slurm knows.
var ErrUnknown = errors.New("unknown TRES")

// Compare orders TRES names as Slurm prints them: the built-ins by TRES id (cpu, mem,
// energy, node, billing, fs/disk, vmem, pages), then gres/, license/, bb/, fs/, ic/
// names, each group sorted by name (an untyped gres/gpu before gres/gpu:a100).
func Compare(a, b string) int {
	ra, rb := rank(a), rank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	return strings.Compare(a, b)
}

// rank gives a name's group: 0..7 for built-ins, 100+ for typed groups, 1000 otherwise.
func rank(name string) int {
	if i := slices.Index(builtins, name); i >= 0 {
		return i
	}
	kind, _, _ := strings.Cut(name, "/")
	if r, ok := typeOrder()[kind]; ok {
		return 100 + r
	}
	return 1000
}

// SortNames sorts TRES names in place in Slurm's printing order (see Compare).
func SortNames(names []string) { slices.SortFunc(names, Compare) }

// Split cuts a canonical TRES name into its type, name and GRES type:
// `gres/gpu:a100` => ("gres", "gpu", "a100"), `license/matlab` => ("license", "matlab",
// ""), `cpu` => ("cpu", "", "").
func Split(name string) (kind, gres, typ string) {
	kind, rest, ok := strings.Cut(name, "/")
	if !ok {
		return name, "", ""
	}
	gres, typ, _ = strings.Cut(rest, ":")
	return kind, gres, typ
}

// GresName builds the canonical name of a GRES, lower-cased like every canonical GRES
// name: GresName("gpu", "") = "gres/gpu", GresName("gpu", "A100") = "gres/gpu:a100".
func GresName(name, typ string) string {
	if typ == "" {
		return "gres/" + strings.ToLower(name)
	}
	return "gres/" + strings.ToLower(name) + ":" + strings.ToLower(typ)
}

// Untyped returns the untyped total a typed GRES counts toward (`gres/gpu:a100` =>
// `gres/gpu`), and ok=false for any other name.
func Untyped(name string) (string, bool) {
	kind, gres, typ := Split(name)
	if kind != "gres" || typ == "" {
		return "", false
	}
	return GresName(gres, ""), true
}

// IsNodeTRES reports whether name is a per-node resource (cpu, mem, node or a GRES), as
// opposed to a global one (license, burst buffer, ...). PriorityFlags=MAX_TRES takes the
// maximum over the per-node ones.
func IsNodeTRES(name string) bool {
	kind, _, _ := Split(name)
	return name == CPU || name == Mem || name == Node || kind == "gres"
}

// CanonicalName turns a TRES name as written in slurm.conf or sacctmgr into its canonical
// form: types are case-insensitive (`CPU`, `GRES/gpu`), GRES names and types are
// lower-cased, license and burst buffer names are kept as written, and Slurm's numeric
// TRES ids 1..8 name the built-ins. With short set, a bare name that is not a built-in
// starting with a letter is a GRES (`gpu` => `gres/gpu`, `gpu:a100` => `gres/gpu:a100`), the form admins use in
// sacctmgr limits.
func CanonicalName(raw string, short bool) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("%w: empty name", ErrUnknown)
	}
	kind, rest, typed := strings.Cut(s, "/")
	if typed {
		return typedName(strings.ToLower(kind), rest, raw)
	}
	lower := strings.ToLower(s)
	if slices.Contains(builtins, lower) {
		return lower, nil
	}
	if len(lower) == 1 && lower[0] >= '1' && lower[0] <= '8' {
		return builtins[lower[0]-'1'], nil
	}
	if short && validName(lower, true) && isLetter(lower[0]) {
		return typedName("gres", lower, raw)
	}
	return "", fmt.Errorf("%w %q", ErrUnknown, raw)
}

// typedName canonicalises the `type/name` forms.
func typedName(kind, rest, raw string) (string, error) {
	switch kind {
	case "gres":
		name, typ, hasType := strings.Cut(strings.ToLower(rest), ":")
		if !validName(name, false) || (hasType && !validName(typ, false)) || name == "" {
			return "", fmt.Errorf("%w %q: bad GRES name", ErrUnknown, raw)
		}
		return GresName(name, typ), nil
	case "fs", "ic":
		rest = strings.ToLower(rest)
	case "license", "bb":
	default:
		return "", fmt.Errorf("%w %q", ErrUnknown, raw)
	}
	if !validName(rest, false) {
		return "", fmt.Errorf("%w %q: bad name", ErrUnknown, raw)
	}
	return kind + "/" + rest, nil
}

// validName accepts non-empty names of letters, digits and `_-.@+` (and `:` if colon),
// so that every canonical name prints and parses back unchanged.
func validName(s string, colon bool) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_' || c == '-' || c == '.' || c == '@' || c == '+':
		case c == ':' && colon:
		default:
			return false
		}
	}
	return !colon || strings.Count(s, ":") <= 1 && !strings.HasSuffix(s, ":")
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }
