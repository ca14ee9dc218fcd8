package acct

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Dump writes a cluster's associations in sacctmgr's flat file format
// (`Cluster - `, `Parent - `, `Account - `, `User - ` lines with
// colon-separated specifications), preceded by `QOS - ` lines: a Sluice
// extension, since Slurm's dump leaves QOS out and a load into an empty
// database would then fail on every QOS= reference.
func Dump(p *Policy, cluster string) (string, error) {
	root := p.Root(cluster)
	if root == nil {
		return "", errorf("Cluster %s doesn't exist", cluster)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Accounting data of cluster %s, written by sluice sacctmgr dump.\n", cluster)
	b.WriteString("# Load it with: sacctmgr load FILE [cluster=NEWNAME] [clean]\n")
	for _, n := range p.QOSNames() {
		fmt.Fprintf(&b, "QOS - %s%s\n", quoteDump(n), joinSpecs(qosSpecs(p.st, p.QOS(n))))
	}
	fmt.Fprintf(&b, "Cluster - %s%s\n", quoteDump(cluster), joinSpecs(assocSpecs(p.st, root)))
	dumpChildren(&b, p, root)
	return b.String(), nil
}

// dumpChildren writes a's children after a `Parent -` line, then recurses
// into child accounts, so every parent is defined before its children.
func dumpChildren(b *strings.Builder, p *Policy, a *Association) {
	kids := p.Children(a)
	if len(kids) == 0 {
		return
	}
	fmt.Fprintf(b, "Parent - %s\n", quoteDump(a.Account))
	for _, k := range kids {
		specs := assocSpecs(p.st, k)
		if k.IsUser() {
			u := p.User(k.User)
			head := []string{"DefaultAccount=" + quoteDump(u.DefaultAccount)}
			if u.AdminLevel != AdminNone {
				head = append(head, "AdminLevel="+quoteDump(u.AdminLevel.String()))
			}
			if k.Partition != "" {
				head = append(head, "Partition="+quoteDump(k.Partition))
			}
			fmt.Fprintf(b, "User - %s%s\n", quoteDump(k.User), joinSpecs(append(head, specs...)))
			continue
		}
		acct := p.Account(k.Account)
		head := []string{"Description=" + quoteDump(acct.Description), "Organization=" + quoteDump(acct.Organization)}
		fmt.Fprintf(b, "Account - %s%s\n", quoteDump(k.Account), joinSpecs(append(head, specs...)))
	}
	for _, k := range kids {
		if !k.IsUser() {
			dumpChildren(b, p, k)
		}
	}
}

func joinSpecs(specs []string) string {
	if len(specs) == 0 {
		return ""
	}
	return ":" + strings.Join(specs, ":")
}

// quoteDump single-quotes a value unless it is a plain word.
func quoteDump(v string) string {
	if v != "" && validName(v, "-_.") {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", "") + "'"
}

// assocSpecs lists the association's own (not inherited) settings.
func assocSpecs(st *State, a *Association) []string {
	var out []string
	if a.Shares == SharesParent {
		out = append(out, "Fairshare=parent")
	} else {
		out = append(out, "Fairshare="+strconv.FormatInt(a.Shares, 10))
	}
	if a.Priority.IsSet() {
		out = append(out, "Priority="+formatLimit(a.Priority))
	}
	for _, k := range sortedKeys(assocCountFields()) {
		if v := *assocCountFields()[k](&a.AssocLimits); v.IsSet() {
			out = append(out, k+"="+formatLimit(v))
		}
	}
	for _, k := range sortedKeys(assocWallFields()) {
		if v := *assocWallFields()[k](&a.AssocLimits); v.IsSet() {
			out = append(out, k+"="+formatLimit(v))
		}
	}
	for _, k := range sortedKeys(assocTRESFields()) {
		if v := *assocTRESFields()[k](&a.AssocLimits); len(v) > 0 {
			out = append(out, k+"="+quoteDump(formatTRES(st, v)))
		}
	}
	if a.QOS != nil {
		out = append(out, "QOS="+quoteDump(strings.Join(a.QOS, ",")))
	}
	if a.DefaultQOS != "" {
		out = append(out, "DefaultQOS="+quoteDump(a.DefaultQOS))
	}
	return out
}

// qosSpecs lists every QOS setting that differs from a new QOS.
func qosSpecs(st *State, q *QOS) []string {
	d := NewQOS(q.Name)
	out := []string{"Description=" + quoteDump(q.Description), "Priority=" + strconv.FormatInt(q.Priority, 10)}
	if q.Flags != 0 {
		out = append(out, "Flags="+quoteDump(q.Flags.String()))
	}
	if q.GraceTime != d.GraceTime {
		out = append(out, "GraceTime="+strconv.FormatInt(int64(q.GraceTime.Seconds()), 10))
	}
	if len(q.Preempt) > 0 {
		out = append(out, "Preempt="+quoteDump(strings.Join(q.Preempt, ",")))
	}
	if q.PreemptMode != d.PreemptMode {
		out = append(out, "PreemptMode="+quoteDump(q.PreemptMode.String()))
	}
	if q.PreemptExemptTime != d.PreemptExemptTime {
		out = append(out, "PreemptExemptTime="+strconv.FormatInt(int64(q.PreemptExemptTime.Seconds()), 10))
	}
	if q.UsageFactor != d.UsageFactor {
		out = append(out, "UsageFactor="+formatFloat(q.UsageFactor))
	}
	if q.UsageThreshold != d.UsageThreshold {
		out = append(out, "UsageThreshold="+formatFloat(q.UsageThreshold))
	}
	if q.LimitFactor != d.LimitFactor {
		out = append(out, "LimitFactor="+formatFloat(q.LimitFactor))
	}
	for _, k := range sortedKeys(qosCountFields()) {
		if v := *qosCountFields()[k](q); v.IsSet() {
			out = append(out, k+"="+formatLimit(v))
		}
	}
	for _, k := range sortedKeys(qosWallFields()) {
		if v := *qosWallFields()[k](q); v.IsSet() {
			out = append(out, k+"="+formatLimit(v))
		}
	}
	for _, k := range sortedKeys(qosTRESFields()) {
		if v := *qosTRESFields()[k](q); len(v) > 0 {
			out = append(out, k+"="+quoteDump(formatTRES(st, v)))
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// dumpLine is one parsed line of a flat file.
type dumpLine struct {
	no    int
	title string
	name  string
	specs []Spec
}

// parseDumpFile parses the flat file format.
func parseDumpFile(text string) ([]dumpLine, error) {
	var out []dumpLine
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' {
			continue
		}
		title, rest, ok := strings.Cut(line, " - ")
		if !ok {
			return nil, errorf("line %d: expected 'Title - name[:spec...]': %s", i+1, line)
		}
		fields := splitOutsideQuotes(rest, ':')
		dl := dumpLine{no: i + 1, title: strings.ToLower(strings.TrimSpace(title)), name: unquote(strings.TrimSpace(fields[0]))}
		for _, f := range fields[1:] {
			k, op, v, ok := splitSpec(strings.TrimSpace(f))
			if !ok {
				return nil, errorf("line %d: bad specification '%s'", i+1, f)
			}
			key, known := canonicalKey(k)
			if !known {
				return nil, errorf("line %d: unknown option '%s'", i+1, k)
			}
			dl.specs = append(dl.specs, resolveLegacy(Spec{Key: key, Op: op, Value: v}))
		}
		if dl.name == "" {
			return nil, errorf("line %d: no name given", i+1)
		}
		out = append(out, dl)
	}
	return out, nil
}

// splitOutsideQuotes splits s on sep where sep is not inside quotes.
func splitOutsideQuotes(s string, sep byte) []string {
	var out []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
