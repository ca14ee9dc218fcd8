package conf

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// GresConf is a parsed gres.conf (gres.conf(5)).
type GresConf struct {
	// Path is the file it was read from.
	Path string
	// AutoDetect is the global AutoDetect value ("" when unset; off, nvml,
	// rsmi, nrt, oneapi, nvidia).
	AutoDetect string
	// Lines are the resource lines in file order.
	Lines []*GresLine
}

// GresLine is one gres.conf resource line.
type GresLine struct {
	// NodeExpr is NodeName= as written; Nodes its expansion (nil = every
	// node, the line applies to whichever node reads the file).
	NodeExpr string
	Nodes    []string
	// Name is the GRES name (gpu, mps, shard, ...), Type the optional model.
	Name string
	Type string
	// Files are the device files, expanded (/dev/nvidia[0-3] gives four).
	Files []string
	// Count defaults to the number of Files, or 1.
	Count int64
	// Cores is the Cores= list as written (core indexes near the device).
	Cores string
	// Links, Flags and AutoDetect are kept as written.
	Links      string
	Flags      []string
	AutoDetect string
	Pos        Pos
}

// ParseGres parses gres.conf content; name is used in messages.
func ParseGres(name string, data []byte) (*GresConf, []Warning, error) {
	p := newParser(name, Options{})
	g := p.gresFile(name, data)
	if len(p.errs) > 0 {
		return nil, p.warns, p.errs
	}
	return g, p.warns, nil
}

// loadGres reads the gres.conf next to slurm.conf and checks it against
// GresTypes.
func (p *parser) loadGres(path string) {
	data, err := p.opts.ReadFile(path)
	if err != nil {
		p.errorf(Pos{path, 0}, "", "%s", readError(err))
		return
	}
	g := p.gresFile(path, data)
	for _, l := range g.Lines {
		if !containsFold(p.cfg.GresTypes, l.Name) {
			p.errorf(l.Pos, "Name", "GRES %s is not listed in slurm.conf GresTypes", quote(l.Name))
		}
	}
	p.cfg.Gres = g
	p.checkGresCounts(g)
}

// checkGresCounts compares, node by node, the count of each GRES name that
// gres.conf describes with the node's Gres= in slurm.conf. slurmd reports
// what gres.conf finds and slurmctld drains a node that has fewer than
// configured, so a mismatch is worth a warning before it happens.
func (p *parser) checkGresCounts(g *GresConf) {
	type key struct{ node, name string }
	have := map[key]int64{}
	where := map[key]Pos{}
	for _, l := range g.Lines {
		nodes := l.Nodes
		if nodes == nil {
			nodes = p.cfg.NodeNames()
		}
		for _, n := range nodes {
			k := key{n, l.Name}
			have[k] += l.Count
			if _, ok := where[k]; !ok {
				where[k] = l.Pos
			}
		}
	}
	reported := map[string]bool{}
	for _, n := range p.cfg.Nodes {
		for _, name := range gresNames(n) {
			k := key{n.Name, name}
			got, ok := have[k]
			if !ok || reported[name] {
				continue
			}
			if want := n.GresCount(name, ""); got != want {
				reported[name] = true
				p.warns = append(p.warns, Warning{Pos: where[k], Key: "Name=" + name,
					Msg: fmt.Sprintf("gres.conf gives node %s %d %s, slurm.conf Gres= says %d", n.Name, got, name, want)})
			}
		}
	}
}

// gresNames lists a node's GRES names once each.
func gresNames(n *Node) []string {
	var out []string
	for _, g := range n.Gres {
		if !slices.Contains(out, g.Name) {
			out = append(out, g.Name)
		}
	}
	return out
}

func (p *parser) gresFile(name string, data []byte) *GresConf {
	if _, ok := p.fileOrder[name]; !ok {
		p.fileOrder[name] = len(p.fileOrder)
	}
	g := &GresConf{Path: name}
	for _, st := range lex(name, data, p.addErr) {
		if st.Include != "" {
			p.errorf(st.Pos, "Include", "not supported in gres.conf")
			continue
		}
		if l := p.gresLine(g, st); l != nil {
			g.Lines = append(g.Lines, l)
		}
	}
	return g
}

// gresLine reads one line; a line with only AutoDetect (and NodeName) sets
// detection and yields no resource.
func (p *parser) gresLine(g *GresConf, st stmt) *GresLine {
	l := &GresLine{Pos: st.Pos}
	countSet := false
	for _, pr := range st.Pairs {
		v := pr.Value
		switch strings.ToLower(pr.Key) {
		case "nodename":
			names, err := hostlist.Expand(v)
			if err != nil {
				p.errorf(pr.Pos, "NodeName", "%v", err)
				return nil
			}
			l.NodeExpr, l.Nodes = v, names
		case "name":
			l.Name = strings.ToLower(v)
		case "type":
			l.Type = strings.ToLower(v)
		case "file":
			files, err := hostlist.Expand(v)
			if err != nil {
				p.errorf(pr.Pos, "File", "%v", err)
				return nil
			}
			l.Files = files
		case "count":
			n, err := parseCount(v)
			if err != nil {
				p.errorf(pr.Pos, "Count", "%v", err)
				return nil
			}
			l.Count, countSet = n, true
		case "cores":
			l.Cores = v
		case "links":
			l.Links = v
		case "flags":
			l.Flags = splitList(v)
		case "autodetect":
			ad := strings.ToLower(v)
			if !containsFold([]string{"off", "nvml", "rsmi", "nrt", "oneapi", "nvidia"}, ad) {
				p.errorf(pr.Pos, "AutoDetect", "invalid value %s", quote(v))
				return nil
			}
			l.AutoDetect = ad
		case "multiplefiles":
			files, err := hostlist.Expand(v)
			if err != nil {
				p.errorf(pr.Pos, "MultipleFiles", "%v", err)
				return nil
			}
			l.Files = files
		default:
			p.errorf(pr.Pos, pr.Key, "unrecognized key (not a gres.conf parameter)")
			return nil
		}
	}
	if l.Name == "" {
		if l.AutoDetect != "" && l.NodeExpr == "" {
			g.AutoDetect = l.AutoDetect
		} else if l.AutoDetect == "" {
			p.errorf(st.Pos, "Name", "missing Name= (the GRES name)")
		}
		return nil
	}
	if !countSet {
		l.Count = int64(max(len(l.Files), 1))
	}
	return l
}

// LoadGres reads a gres.conf file on its own.
func LoadGres(path string) (*GresConf, []Warning, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, ErrorList{{Pos: Pos{path, 0}, Msg: readError(err)}}
	}
	return ParseGres(path, data)
}
