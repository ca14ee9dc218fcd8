package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/duration"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// request converts a trace job's spec into the core's Request, resolving
// what needs the clock (--begin) and mapping --dependency job ids from the
// trace's numbering to the scheduler's. Job arrays are not expanded by the
// simulator: the array option is dropped (docs/differences.md).
func (c *Core) request(s *api.JobSpec, now time.Time) (sched.Request, error) {
	r := sched.Request{Name: s.Name, Partitions: s.Partitions, Account: s.Account, QOS: s.QOS,
		MinNodes: int32(s.MinNodes), MaxNodes: int32(s.MaxNodes), NTasks: int32(s.NTasks),
		CPUsPerTask: int32(s.CPUsPerTask), NTasksPerNode: int32(s.NTasksPerNode), MinCPUsPerNode: int32(s.MinCPUsPerNode),
		MemPerNode: s.MemPerNodeMB, MemPerNodeSet: s.MemPerNodeSet, MemPerCPU: s.MemPerCPUMB,
		Hold: s.Hold, Exclusive: s.Exclusive != "", OverSubscribe: s.OverSubscribe, Constraint: s.Constraint,
		Reservation: s.Reservation, Requeue: c.cfg.JobRequeue}
	if s.Requeue != nil {
		r.Requeue = *s.Requeue
	}
	if s.Nice != nil {
		r.Nice = int32(*s.Nice)
	}
	if s.Priority != nil {
		r.Priority = *s.Priority
	}
	r.TimeLimit, r.TimeMin = seconds(s.TimeLimitSec), seconds(s.TimeMinSec)
	var err error
	if r.Gres, err = gresRequest(s.Gres, s.GPUsPerNode); err != nil {
		return r, err
	}
	if s.GPUs != "" {
		typ, n := splitTypeCount(s.GPUs)
		if n <= 0 {
			return r, fmt.Errorf("invalid --gpus %q", s.GPUs)
		}
		r.GPUs, r.GPUsType = n, typ
	}
	if s.Begin != "" {
		if r.BeginTime, err = duration.ParseTime(s.Begin, now, time.UTC); err != nil {
			return r, fmt.Errorf("invalid --begin %q: %w", s.Begin, err)
		}
	}
	if s.NodeList != "" {
		if r.NodeList, err = hostlist.Expand(s.NodeList); err != nil {
			return r, err
		}
	}
	if s.Exclude != "" {
		if r.Exclude, err = hostlist.Expand(s.Exclude); err != nil {
			return r, err
		}
	}
	if r.Licenses, err = sched.ParseLicenseReq(s.Licenses); err != nil { // -L
		return r, err
	}
	if s.Dependency != "" {
		if err := c.dependency(&r, s.Dependency); err != nil {
			return r, err
		}
	}
	return r, nil
}

func seconds(s int64) time.Duration {
	switch {
	case s == api.TimeInfinite:
		return sched.Infinite
	case s > 0:
		return time.Duration(s) * time.Second
	}
	return 0
}

// dependency parses --dependency and renumbers its job ids; a job the
// trace never submitted (or that was rejected) leaves the condition to
// the core (Slurm treats an unknown job as a dependency problem).
func (c *Core) dependency(r *sched.Request, spec string) error {
	deps, anyOf, err := sched.ParseDependency(spec)
	if err != nil {
		return err
	}
	for i := range deps {
		if deps[i].JobID == 0 {
			continue
		}
		if sid, ok := c.toSched[int64(deps[i].JobID)]; ok {
			deps[i].JobID = sid
		}
	}
	r.Deps, r.DepsAny = deps, anyOf
	r.Dependency = sched.FormatDependency(deps, anyOf)
	return nil
}

// gresRequest parses --gres ("gpu:2", "gpu:a100:8,shard:1") with the
// core's own parser (sched.ParseGres, as the controller does) plus
// --gpus-per-node into per-node GRES requests.
func gresRequest(gres, gpusPerNode string) ([]sched.GresReq, error) {
	out, err := sched.ParseGres(gres)
	if err != nil {
		return nil, fmt.Errorf("invalid --gres %q", gres)
	}
	if gpusPerNode != "" {
		typ, n := splitTypeCount(gpusPerNode)
		if n <= 0 {
			return nil, fmt.Errorf("invalid --gpus-per-node %q", gpusPerNode)
		}
		out = append(out, sched.GresReq{Name: "gpu", Type: typ, Count: n})
	}
	return out, nil
}

// splitTypeCount reads "N" or "type:N".
func splitTypeCount(s string) (string, int64) {
	typ, num, ok := strings.Cut(s, ":")
	if !ok {
		typ, num = "", s
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return "", -1
	}
	return typ, n
}

func compressNames(names []string) string { return hostlist.Compress(names) }
