package conf

import (
	"os"
	"strconv"
	"strings"
)

// CgroupConf is a parsed cgroup.conf (cgroup.conf(5)): how node agents
// confine jobs (Slurm's task/cgroup and proctrack/cgroup plugins).
type CgroupConf struct {
	// Path is the file it was read from ("" = defaults, no file).
	Path string
	// Plugin is CgroupPlugin: autodetect (default), cgroup/v1, cgroup/v2
	// or disabled.
	Plugin string
	// Mountpoint is CgroupMountpoint (default /sys/fs/cgroup).
	Mountpoint string
	// ConstrainCores confines tasks to their allocated CPUs (cpuset).
	ConstrainCores bool
	// ConstrainRAMSpace limits a job's memory to AllowedRAMSpace percent of
	// its allocation (--mem, --mem-per-cpu).
	ConstrainRAMSpace bool
	// ConstrainSwapSpace limits RAM plus swap to AllowedSwapSpace percent
	// more than the allocation.
	ConstrainSwapSpace bool
	// ConstrainDevices hides the GPUs not allocated (devices controller).
	ConstrainDevices bool
	// AllowedRAMSpace (default 100) and AllowedSwapSpace (default 0) are
	// percents of the allocated memory.
	AllowedRAMSpace  float64
	AllowedSwapSpace float64
	// MaxRAMPercent (default 100) caps the limit at a percent of the
	// node's memory; MinRAMSpace (default 30 MB) is the lowest limit set.
	MaxRAMPercent float64
	MinRAMSpaceMB int64
}

// DefaultCgroupConf is cgroup.conf's defaults (no file): nothing is
// constrained, as in Slurm.
func DefaultCgroupConf() *CgroupConf {
	return &CgroupConf{Plugin: "autodetect", Mountpoint: "/sys/fs/cgroup", AllowedRAMSpace: 100,
		MaxRAMPercent: 100, MinRAMSpaceMB: 30}
}

// ParseCgroup parses cgroup.conf content; name is used in messages.
func ParseCgroup(name string, data []byte) (*CgroupConf, []Warning, error) {
	p := newParser(name, Options{})
	c := p.cgroupFile(name, data)
	if len(p.errs) > 0 {
		return nil, p.warns, p.errs
	}
	return c, p.warns, nil
}

// LoadCgroup reads a cgroup.conf file on its own.
func LoadCgroup(path string) (*CgroupConf, []Warning, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, ErrorList{{Pos: Pos{path, 0}, Msg: readError(err)}}
	}
	return ParseCgroup(path, data)
}

// loadCgroup reads the cgroup.conf next to slurm.conf.
func (p *parser) loadCgroup(path string) {
	data, err := p.opts.ReadFile(path)
	if err != nil {
		p.errorf(Pos{path, 0}, "", "%s", readError(err))
		return
	}
	p.cfg.Cgroup = p.cgroupFile(path, data)
}

// cgroupObsolete are keys of older releases, accepted with a warning.
var cgroupObsolete = []string{"CgroupAutomount", "CgroupReleaseAgentDir", "TaskAffinity", "ConstrainKmemSpace",
	"AllowedKmemSpace", "MaxKmemPercent", "MinKmemSpace", "MemoryLimitEnforcement", "MemorySwappiness",
	"SystemdTimeout", "IgnoreSystemd", "IgnoreSystemdOnFailure", "EnableControllers", "SignalChildrenProcesses",
	"AllowedDevicesFile", "MaxSwapPercent", "CgroupPrepend"}

func (p *parser) cgroupFile(name string, data []byte) *CgroupConf {
	if _, ok := p.fileOrder[name]; !ok {
		p.fileOrder[name] = len(p.fileOrder)
	}
	c := DefaultCgroupConf()
	c.Path = name
	for _, st := range lex(name, data, p.addErr) {
		if st.Include != "" {
			p.errorf(st.Pos, "Include", "not supported in cgroup.conf")
			continue
		}
		for _, pr := range st.Pairs {
			p.cgroupKey(c, pr)
		}
	}
	return c
}

// cgroupKey applies one cgroup.conf parameter.
func (p *parser) cgroupKey(c *CgroupConf, pr pair) {
	flag := func(dst *bool) {
		b, err := parseBool(pr.Value)
		if err != nil {
			p.errorf(pr.Pos, pr.Key, "%v", err)
		}
		*dst = b
	}
	percent := func(dst *float64) {
		f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(pr.Value), "%"), 64)
		if err != nil || f < 0 {
			p.errorf(pr.Pos, pr.Key, "invalid percent %s", quote(pr.Value))
			return
		}
		*dst = f
	}
	switch strings.ToLower(pr.Key) {
	case "cgroupplugin":
		v := strings.ToLower(pr.Value)
		if !containsFold([]string{"autodetect", "cgroup/v1", "cgroup/v2", "disabled"}, v) {
			p.errorf(pr.Pos, pr.Key, "invalid value %s (valid: autodetect, cgroup/v1, cgroup/v2, disabled)", quote(pr.Value))
			return
		}
		c.Plugin = v
	case "cgroupmountpoint":
		c.Mountpoint = pr.Value
	case "constraincores":
		flag(&c.ConstrainCores)
	case "constrainramspace":
		flag(&c.ConstrainRAMSpace)
	case "constrainswapspace":
		flag(&c.ConstrainSwapSpace)
	case "constraindevices":
		flag(&c.ConstrainDevices)
	case "allowedramspace":
		percent(&c.AllowedRAMSpace)
	case "allowedswapspace":
		percent(&c.AllowedSwapSpace)
	case "maxrampercent":
		percent(&c.MaxRAMPercent)
	case "minramspace":
		n, err := parseInt(pr.Value, 0, 1<<40)
		if err != nil {
			p.errorf(pr.Pos, pr.Key, "%v", err)
		}
		c.MinRAMSpaceMB = n
	default:
		if containsFold(cgroupObsolete, pr.Key) {
			p.warnf(pr, "not used by Sluice (kept)")
			return
		}
		p.errorf(pr.Pos, pr.Key, "unrecognized key (not a cgroup.conf parameter)")
	}
}
