package sim

import (
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/hostlist"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// request converts a trace job's spec into the core's Request with the
// controller's own conversion (sched.RequestFromSpec; times in UTC, the
// simulator's zone), then maps --dependency job ids from the trace's
// numbering to the scheduler's. Job arrays are not expanded by the
// simulator: the array option is dropped (docs/differences.md).
func (c *Core) request(s *api.JobSpec, now time.Time) (sched.Request, error) {
	r, err := sched.RequestFromSpec(s, now, time.UTC, &c.cfg)
	if err != nil {
		return r, err
	}
	r.Array = ""
	c.renumberDeps(&r)
	return r, nil
}

// renumberDeps maps the dependencies' job ids from the trace's numbering
// to the scheduler's; a job the trace never submitted (or that was
// rejected) leaves the condition to the core (Slurm treats an unknown job
// as a dependency problem).
func (c *Core) renumberDeps(r *sched.Request) {
	if len(r.Deps) == 0 {
		return
	}
	for i := range r.Deps {
		if r.Deps[i].JobID == 0 {
			continue
		}
		if sid, ok := c.ids.toSched(int64(r.Deps[i].JobID)); ok {
			r.Deps[i].JobID = sid
		}
	}
	r.Dependency = sched.FormatDependency(r.Deps, r.DepsAny)
}

func compressNames(names []string) string { return hostlist.Compress(names) }
