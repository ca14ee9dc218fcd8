package sim

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Setup is one policy to simulate: a slurm.conf and a sacctmgr script.
// An empty Conf means a cluster synthesised from the trace (an SWF
// header's MaxProcs); empty Accounts means accounts generated from the
// trace's users with equal shares.
type Setup struct {
	Name     string
	Conf     string
	Accounts string
	// Reservations is a file of scontrol create reservation lines applied
	// at the trace's start (resv.go).
	Reservations string
}

// Label returns the setup's display name: Name, else the configuration's
// file name without extension, else "default".
func (s Setup) Label() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Conf != "":
		return strings.TrimSuffix(filepath.Base(s.Conf), filepath.Ext(s.Conf))
	}
	return "default"
}

// Options are the parts of a simulation shared by every policy.
type Options struct {
	Trace *Trace
	// From and To bound the submit times replayed (seconds from the
	// trace's start; To 0 = no bound).
	From, To int64
	// Inspect are the --inspect times (seconds from the trace's start).
	Inspect []int64
	// Progress reports jobs finished so far.
	Progress func(done, total int)
	// NoSkip disables pass skipping (see EngineConfig.NoSkip).
	NoSkip bool
	// Context, when set, stops the replay when it is done (SIGINT).
	Context context.Context
}

// Simulate replays the trace under one policy through the scheduler core
// and returns its metrics.
func Simulate(setup Setup, opt Options) (Run, error) {
	if opt.Trace == nil || len(opt.Trace.Jobs) == 0 {
		return Run{}, ErrNoJobs
	}
	core, err := NewCore(setup, opt.Trace)
	if err != nil {
		return Run{}, fmt.Errorf("policy %s: %w", setup.Label(), err)
	}
	run := Run{Name: setup.Label(), Conf: setup.Conf, Accounts: setup.Accounts, Scheduler: core.Describe(), Capacity: core.Capacity()}
	cfg := core.EngineConfig()
	cfg.From, cfg.To, cfg.Inspect, cfg.Progress, cfg.NoSkip = opt.From, opt.To, opt.Inspect, opt.Progress, opt.NoSkip
	if ctx := opt.Context; ctx != nil {
		cfg.Stop = ctx.Err
	}
	cfg.OnInspect = func(now int64) { run.Inspections = append(run.Inspections, core.Inspect(now)) }
	pol, rp, err := withReservations(core, setup, opt.Trace) // resv.go
	if err != nil {
		return Run{}, fmt.Errorf("policy %s: %w", setup.Label(), err)
	}
	eng := NewEngine(cfg, pol, opt.Trace.Jobs)
	if eng.Jobs() == 0 {
		return Run{}, fmt.Errorf("%w submitted in the --from/--to window", ErrNoJobs)
	}
	results, samples, err := eng.Run()
	if err != nil {
		return Run{}, err
	}
	run.Engine = eng.Stats()
	run.Jobs = results
	run.Reservations = rp.report(results) // resv.go
	run.Metrics = Compute(results, samples, run.Capacity, core.NormShares(), run.Engine.Preemptions)
	return run, nil
}
