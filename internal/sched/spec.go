package sched

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/duration"
	"github.com/sluice-hpc/sluice/internal/hostlist"
)

// RequestFromSpec converts a submission as sbatch sends it into the
// core's Request: it parses the GRES, --gpus, --begin (against now, in
// loc), --dependency, --nodelist and --exclude, and applies the cluster's
// JobRequeue default. Errors carry Slurm's submission messages.
func RequestFromSpec(s *api.JobSpec, now time.Time, loc *time.Location, cfg *Config) (Request, error) {
	r := Request{Name: s.Name, Partitions: s.Partitions, Account: s.Account, QOS: s.QOS,
		MinNodes: int32(s.MinNodes), MaxNodes: int32(s.MaxNodes), ZeroNodes: s.ZeroNodes, NTasks: int32(s.NTasks),
		CPUsPerTask: int32(s.CPUsPerTask), NTasksPerNode: int32(s.NTasksPerNode), MinCPUsPerNode: int32(s.MinCPUsPerNode),
		MemPerNode: s.MemPerNodeMB, MemPerNodeSet: s.MemPerNodeSet, MemPerCPU: s.MemPerCPUMB,
		Hold: s.Hold, OverSubscribe: s.OverSubscribe, Exclusive: s.Exclusive != "",
		Constraint: s.Constraint, Array: s.Array, Reservation: s.Reservation, Dependency: s.Dependency,
		Requeue: cfg.JobRequeue}
	if s.Requeue != nil {
		r.Requeue = *s.Requeue
	}
	switch strings.ToLower(s.KillOnInvalidDep) {
	case "yes":
		r.KillOnInvalidDep = &[]bool{true}[0]
	case "no":
		r.KillOnInvalidDep = &[]bool{false}[0]
	}
	if s.Nice != nil {
		r.Nice = int32(*s.Nice)
	}
	if s.Priority != nil {
		r.Priority = *s.Priority
	}
	r.TimeLimit = specDuration(s.TimeLimitSec)
	r.TimeMin = specDuration(s.TimeMinSec)
	var err error
	if r.Gres, err = ParseGres(s.Gres); err != nil {
		return r, err
	}
	if s.GPUsPerNode != "" {
		g, err := parseGPUs(s.GPUsPerNode)
		if err != nil {
			return r, err
		}
		r.Gres = append(r.Gres, g)
	}
	if s.GPUs != "" {
		g, err := parseGPUs(s.GPUs)
		if err != nil {
			return r, err
		}
		r.GPUs, r.GPUsType = g.Count, g.Type
	}
	if s.GPUsPerTask != "" {
		g, err := parseGPUs(s.GPUsPerTask)
		if err != nil {
			return r, err
		}
		r.GPUsPerTask = g.Count
		if g.Type != "" {
			r.GPUsType = g.Type
		}
	}
	r.CPUsPerGPU, r.MemPerGPU = int32(s.CPUsPerGPU), s.MemPerGPUMB
	if s.Begin != "" {
		if r.BeginTime, err = duration.ParseTime(s.Begin, now, loc); err != nil {
			return r, fmt.Errorf("--begin %q: %w", s.Begin, ErrInvalidTimeLimit)
		}
	}
	if r.Dependency != "" {
		// A list that does not parse is refused by Submit's dependency
		// check, once the job has its id, as slurmctld does.
		if r.Deps, r.DepsAny, err = ParseDependency(r.Dependency); err != nil {
			r.Deps, r.DepsAny = nil, false
		}
	}
	if r.Licenses, err = ParseLicenseReq(s.Licenses); err != nil {
		return r, err
	}
	r.LicenseSpec = s.Licenses
	if r.NodeList, err = expandHosts(s.NodeList); err != nil {
		return r, err
	}
	if r.Exclude, err = expandHosts(s.Exclude); err != nil {
		return r, err
	}
	return r, nil
}

func specDuration(sec int64) time.Duration {
	switch {
	case sec == api.TimeInfinite:
		return Infinite
	case sec > 0:
		return time.Duration(sec) * time.Second
	}
	return 0
}

func expandHosts(expr string) ([]string, error) {
	if expr == "" {
		return nil, nil
	}
	names, err := hostlist.Expand(expr)
	if err != nil {
		return nil, fmt.Errorf("node list %q: %w", expr, ErrInvalidNodeName)
	}
	return names, nil
}

// ParseGres parses --gres: a comma list of `name[:type][:count]`
// (`gpu:4`, `gpu:a100:2`, `gpu`); the gres/ prefix is accepted.
func ParseGres(s string) ([]GresReq, error) {
	if strings.TrimSpace(s) == "" || strings.EqualFold(s, "none") {
		return nil, nil
	}
	var out []GresReq
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimPrefix(strings.TrimSpace(item), "gres/")
		f := strings.Split(item, ":")
		g := GresReq{Name: f[0], Count: 1}
		switch len(f) {
		case 1:
		case 2:
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				g.Count = n
			} else {
				g.Type = f[1]
			}
		case 3:
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("gres %q: %w", s, ErrInvalidGres)
			}
			g.Type, g.Count = f[1], n
		default:
			return nil, fmt.Errorf("gres %q: %w", s, ErrInvalidGres)
		}
		if g.Name == "" || g.Count < 0 {
			return nil, fmt.Errorf("gres %q: %w", s, ErrInvalidGres)
		}
		out = append(out, g)
	}
	return out, nil
}

// parseGPUs parses --gpus / --gpus-per-node: `4` or `a100:4`.
func parseGPUs(s string) (GresReq, error) {
	g := GresReq{Name: "gpu"}
	typ, cnt, typed := strings.Cut(s, ":")
	if !typed {
		cnt = typ
		typ = ""
	}
	n, err := strconv.ParseInt(cnt, 10, 64)
	if err != nil || n < 0 {
		return g, fmt.Errorf("gpus %q: %w", s, ErrInvalidGres)
	}
	g.Type, g.Count = typ, n
	return g, nil
}
