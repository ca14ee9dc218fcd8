package conf

import (
	"fmt"
	"strings"

	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// nodeSpec is a node line being built: the template Node plus what the
// line said about names and topology, needed to fill Slurm's defaults.
type nodeSpec struct {
	n                   Node
	hostExpr, addrExpr  string
	cpusSet, socketsSet bool
	boardsSet, perBoard bool
	socketsPerBoard     int
}

// MaxNodes caps the nodes of one configuration: Sluice is designed and
// measured for 10,000 nodes; the cap keeps a mistyped range from eating
// the controller's memory.
const MaxNodes = 100_000

// nodeStates are the states slurm.conf(5) allows on a NodeName line.
var nodeStates = []string{"CLOUD", "DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE", "UNKNOWN", "IDLE"}

func newNodeSpec() nodeSpec {
	return nodeSpec{n: Node{Boards: 1, Sockets: 1, CoresPerSocket: 1, ThreadsPerCore: 1, RealMemory: 1, Weight: 1, State: "UNKNOWN"}}
}

// set applies one node key.
func (s *nodeSpec) set(key, v string) (string, error) {
	n := &s.n
	small := func(dst *int, lo, hi int64) error {
		x, err := parseInt(v, lo, hi)
		*dst = int(x)
		return err
	}
	switch strings.ToLower(key) {
	case "nodehostname":
		s.hostExpr = v
		return "NodeHostname", nil
	case "nodeaddr":
		s.addrExpr = v
		return "NodeAddr", nil
	case "port":
		return "Port", small(&n.Port, 1, 65535)
	case "cpus", "procs":
		s.cpusSet = true
		return "CPUs", small(&n.CPUs, 1, 1<<20)
	case "boards":
		s.boardsSet = true
		return "Boards", small(&n.Boards, 1, 1<<16)
	case "sockets":
		s.socketsSet = true
		return "Sockets", small(&n.Sockets, 1, 1<<16)
	case "socketsperboard":
		s.perBoard = true
		return "SocketsPerBoard", small(&s.socketsPerBoard, 1, 1<<16)
	case "corespersocket":
		return "CoresPerSocket", small(&n.CoresPerSocket, 1, 1<<16)
	case "threadspercore":
		return "ThreadsPerCore", small(&n.ThreadsPerCore, 1, 1<<10)
	case "realmemory":
		x, err := parseInt(v, 1, 1<<50)
		n.RealMemory = x
		return "RealMemory", err
	case "tmpdisk":
		x, err := parseInt(v, 0, 1<<50)
		n.TmpDisk = x
		return "TmpDisk", err
	case "gres":
		g, err := parseNodeGres(v)
		n.Gres = g
		return "Gres", err
	case "features", "feature":
		n.Features = splitList(v)
		return "Features", nil
	case "weight":
		x, err := parseInt(v, 0, 1<<32-2)
		n.Weight = uint32(x)
		return "Weight", err
	case "state":
		st := strings.ToUpper(v)
		base, _, _ := strings.Cut(st, "+")
		if !containsFold(nodeStates, base) {
			return "State", fmt.Errorf("invalid node state %s (CLOUD, DOWN, DRAIN, FAIL, FAILING, FUTURE or UNKNOWN)", quote(v))
		}
		n.State = st
		return "State", nil
	case "reason":
		n.Reason = v
		return "Reason", nil
	case "corespeccount":
		return "CoreSpecCount", small(&n.CoreSpecCount, 0, 1<<16)
	case "memspeclimit":
		x, err := parseInt(v, 0, 1<<50)
		n.MemSpecLimit = x
		return "MemSpecLimit", err
	case "cpuspeclist", "cpubind", "bcastaddr", "features_active", "topology", "parameters", "restrictedcorescount":
		return key, errUnusedNodeKey
	}
	return key, errUnknownKey
}

var (
	errUnknownKey    = fmt.Errorf("unrecognized key")
	errUnusedNodeKey = fmt.Errorf("not used by Sluice (kept, ignored)")
)

// nodeLine handles NodeName=... lines, including NodeName=DEFAULT.
func (p *parser) nodeLine(st stmt) {
	head := st.Pairs[0]
	if strings.EqualFold(head.Value, "DEFAULT") {
		p.nodeDefaults = p.applyDefaults(p.nodeDefaults, st.Pairs[1:], func(k, v string) (string, error) {
			s := newNodeSpec()
			return s.set(k, v)
		})
		return
	}
	if strings.EqualFold(head.Value, "ALL") || head.Value == "" {
		p.errorf(head.Pos, "NodeName", "invalid node name %s (ALL is reserved)", quote(head.Value))
		return
	}
	s := newNodeSpec()
	for _, d := range p.nodeDefaults {
		_, _ = s.set(d.Key, d.Value)
	}
	// A line with a bad value still defines its nodes (the error is
	// reported), so partitions naming them do not fail a second time.
	for _, pr := range st.Pairs[1:] {
		name, err := s.set(pr.Key, pr.Value)
		p.reportKeyErr(pr, "NodeName="+head.Value, name, err)
	}
	names, err := hostlist.Expand(head.Value)
	if err != nil {
		p.errorf(head.Pos, "NodeName", "%v", err)
		return
	}
	if len(p.cfg.Nodes)+len(names) > MaxNodes {
		p.errorf(head.Pos, "NodeName", "more than %d nodes in the configuration", MaxNodes)
		return
	}
	hosts, addrs, err := nodeAddresses(names, s.hostExpr, s.addrExpr)
	if err != nil {
		p.errorf(head.Pos, "NodeName="+head.Value, "%v", err)
		return
	}
	s.fillTopology()
	if len(s.n.Gres) > 0 {
		p.gresChecks = append(p.gresChecks, gresCheck{head, s.n.Gres})
	}
	for i, name := range names {
		if prev, dup := p.cfg.nodeIndex[name]; dup {
			// slurmctld 24.11 will not start (oracle: "fatal: Duplicated
			// NodeName n1 in the config file"); Sluice also names both lines.
			p.errorf(head.Pos, "NodeName="+head.Value, "Duplicated NodeName %s in the config file (first defined at %s)", name, prev.Pos)
			continue
		}
		n := s.n
		n.Name, n.Hostname, n.Addr, n.Pos = name, hosts[i], addrs[i], head.Pos
		n.Gres = append([]GresSpec(nil), s.n.Gres...)
		n.Features = append([]string(nil), s.n.Features...)
		p.cfg.Nodes = append(p.cfg.Nodes, &n)
		p.cfg.nodeIndex[name] = &n
	}
}

// reportKeyErr turns a key setter's result into an error or warning;
// it reports whether the key was accepted.
func (p *parser) reportKeyErr(pr pair, ctx, name string, err error) bool {
	switch err {
	case nil:
		return true
	case errUnusedNodeKey:
		p.warnf(pr, "%s", err)
		return true
	case errUnknownKey:
		p.errorf(pr.Pos, ctx+": "+pr.Key, "unrecognized key")
		return false
	}
	p.errorf(pr.Pos, ctx+": "+name, "%v", err)
	return false
}

// applyDefaults validates a DEFAULT line's pairs at their own line and
// merges them into the accumulated defaults (a later DEFAULT line replaces
// or adds values, never resets them).
func (p *parser) applyDefaults(defs, pairs []pair, check func(k, v string) (string, error)) []pair {
	for _, pr := range pairs {
		name, err := check(pr.Key, pr.Value)
		if !p.reportKeyErr(pr, "DEFAULT", name, err) || err == errUnusedNodeKey {
			continue
		}
		replaced := false
		for i := range defs {
			if strings.EqualFold(defs[i].Key, pr.Key) {
				defs[i], replaced = pr, true
			}
		}
		if !replaced {
			defs = append(defs, pr)
		}
	}
	return defs
}

// nodeAddresses expands NodeHostname and NodeAddr, which must name as many
// hosts as NodeName (each defaults to the one before it).
func nodeAddresses(names []string, hostExpr, addrExpr string) (hosts, addrs []string, err error) {
	hosts = names
	if hostExpr != "" {
		if hosts, err = hostlist.Expand(hostExpr); err != nil {
			return nil, nil, fmt.Errorf("NodeHostname: %v", err)
		}
		if len(hosts) != len(names) {
			return nil, nil, fmt.Errorf("NodeHostname names %d hosts, NodeName %d", len(hosts), len(names))
		}
	}
	addrs = hosts
	if addrExpr != "" {
		if addrs, err = hostlist.Expand(addrExpr); err != nil {
			return nil, nil, fmt.Errorf("NodeAddr: %v", err)
		}
		if len(addrs) != len(names) {
			return nil, nil, fmt.Errorf("NodeAddr names %d addresses, NodeName %d", len(addrs), len(names))
		}
	}
	return hosts, addrs, nil
}

// fillTopology applies slurm.conf(5)'s defaults: with Boards, Sockets means
// sockets per board; without Sockets, sockets are inferred from CPUs; CPUs
// default to Boards*Sockets*CoresPerSocket*ThreadsPerCore.
func (s *nodeSpec) fillTopology() {
	n := &s.n
	if s.perBoard {
		n.Sockets = s.socketsPerBoard * n.Boards
	} else if s.boardsSet && s.socketsSet {
		n.Sockets *= n.Boards
	}
	perSocket := n.CoresPerSocket * n.ThreadsPerCore
	if !s.socketsSet && !s.perBoard && s.cpusSet && perSocket > 0 && n.CPUs/perSocket >= 1 {
		n.Sockets = n.CPUs / perSocket
	}
	if !s.cpusSet {
		n.CPUs = n.Sockets * perSocket
		if s.boardsSet && !s.socketsSet && !s.perBoard {
			n.CPUs *= n.Boards
		}
	}
}

// gresCheck is a node line's Gres, checked against GresTypes once the whole
// file is read (GresTypes may come after the node lines).
type gresCheck struct {
	head pair
	gres []GresSpec
}

// checkNodeGres requires each GRES name to be listed in GresTypes, as
// slurmctld does, and forbids mixing typed and untyped counts of a name.
func (p *parser) checkNodeGres(gs []GresSpec) error {
	typed, untyped := map[string]bool{}, map[string]bool{}
	for _, g := range gs {
		if !containsFold(p.cfg.GresTypes, g.Name) {
			return fmt.Errorf("GRES %s is not listed in GresTypes", quote(g.Name))
		}
		if g.Type == "" {
			untyped[g.Name] = true
		} else {
			typed[g.Name] = true
		}
		if typed[g.Name] && untyped[g.Name] {
			return fmt.Errorf("both typed and untyped %s given", quote(g.Name))
		}
	}
	return nil
}

// parseNodeGres reads a node's Gres list: "gpu:8", "gpu:a100:8",
// "gpu:a100:8(S:0-1)", "bandwidth:lustre:no_consume:4G", several comma
// separated ("(S:...)" socket bindings from slurmd -C are accepted and
// ignored).
func parseNodeGres(v string) ([]GresSpec, error) {
	var out []GresSpec
	for _, item := range splitGresList(v) {
		spec := item
		if i := strings.IndexByte(spec, '('); i >= 0 {
			if !strings.HasSuffix(spec, ")") {
				return nil, fmt.Errorf("invalid GRES %s", quote(item))
			}
			spec = spec[:i]
		}
		f := strings.Split(spec, ":")
		g := GresSpec{Name: strings.ToLower(f[0]), Count: 1}
		if g.Name == "" {
			return nil, fmt.Errorf("invalid GRES %s", quote(item))
		}
		rest := f[1:]
		if n := len(rest); n > 0 && strings.EqualFold(rest[n-1], "no_consume") {
			g.NoConsume, rest = true, rest[:n-1]
		}
		for i, x := range rest {
			if strings.EqualFold(x, "no_consume") {
				g.NoConsume = true
				rest = append(rest[:i:i], rest[i+1:]...)
				break
			}
		}
		switch len(rest) {
		case 0:
		case 1:
			c, err := parseCount(rest[0])
			if err != nil {
				// "gpu:a100" with no count: one of that type.
				g.Type = strings.ToLower(rest[0])
			} else {
				g.Count = c
			}
		case 2:
			c, err := parseCount(rest[1])
			if err != nil {
				return nil, fmt.Errorf("GRES %s: %v", quote(item), err)
			}
			g.Type, g.Count = strings.ToLower(rest[0]), c
		default:
			return nil, fmt.Errorf("invalid GRES %s (expected name[:type]:count)", quote(item))
		}
		out = append(out, g)
	}
	return out, nil
}

// splitGresList splits on commas outside parentheses ("gpu:2(S:0,1)").
func splitGresList(v string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) {
			switch v[i] {
			case '(':
				depth++
				continue
			case ')':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if w := strings.TrimSpace(v[start:i]); w != "" {
			out = append(out, w)
		}
		start = i + 1
	}
	return out
}
