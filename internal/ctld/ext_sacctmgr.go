package ctld

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/priority"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// sacctmgr runs one sacctmgr command line against the controller's
// accounting store as the caller (identity from the socket's peer
// credentials or the token, never from the request), then, if it changed
// anything, reloads the live policy: limits, QOS, associations and the
// fair-share tree (keeping the usage accumulated so far), as slurmctld
// does when slurmdbd pushes an update. Files of `load` come with the
// request and files of `dump file=` go back with the answer: they are the
// client's files.
func (c *Controller) sacctmgr(ctx context.Context, w Who, req api.SacctmgrRequest) (api.SacctmgrResponse, error) {
	if c.opts.Accounting == nil {
		return api.SacctmgrResponse{}, &apiErr{status: http.StatusServiceUnavailable,
			msg: "accounting storage is not configured on the controller"}
	}
	_, rest, err := acct.ParseOptions(req.Args)
	if err != nil {
		return api.SacctmgrResponse{}, &apiErr{status: http.StatusBadRequest, msg: err.Error()}
	}
	cmd, err := acct.Parse(rest)
	if err != nil {
		return api.SacctmgrResponse{}, &apiErr{status: http.StatusBadRequest, msg: err.Error()}
	}
	files := map[string][]byte{}
	env := acct.RunEnv{ExecEnv: acct.ExecEnv{Actor: acct.Actor{Name: w.User, UID: int(w.UID)},
		DefaultCluster: c.cfg.ClusterName,
		ReadFile: func(name string) ([]byte, error) {
			if data, ok := req.Files[name]; ok {
				return data, nil
			}
			return nil, fmt.Errorf("open %s: %w", name, fs.ErrNotExist)
		}},
		WriteFile: func(name string, data []byte) error { files[name] = data; return nil }}
	out, warns, err := acct.Run(ctx, c.opts.Accounting, req.Args, env)
	if err != nil {
		return api.SacctmgrResponse{Warnings: warns}, &apiErr{status: http.StatusBadRequest, msg: err.Error()}
	}
	if cmd.Verb != acct.VerbShow && cmd.Verb != acct.VerbDump {
		if _, err := c.do(ctx, func(ls *loopState) (any, error) { return nil, ls.reloadPolicy(ctx) }); err != nil {
			return api.SacctmgrResponse{Out: out, Warnings: warns}, err
		}
	}
	return api.SacctmgrResponse{Out: out, Warnings: warns, Files: files}, nil
}

// reloadPolicy recompiles the accounting policy after a sacctmgr change
// and rebuilds the fair-share tree with the usage and the last pass's
// factors carried over, then refreshes every pending job's priority and
// asks for a cycle.
func (ls *loopState) reloadPolicy(ctx context.Context) error {
	if err := ls.loadPolicy(ctx); err != nil {
		return err
	}
	p := &ls.prio
	old := p.tree
	if ls.acctPolicy != nil {
		if t, err := priority.FromPolicy(ls.acctPolicy, ls.c.cfg.ClusterName); err == nil {
			// Shares apply at once; the fair-share factors wait for the
			// next PriorityCalcPeriod pass (recalcPriorities), as in
			// Slurm, where a new association shows FairShare 0 until then.
			t.ContinueFrom(old, &p.cfg)
			p.tree = t
			p.calc.Reset(&p.cfg, p.cluster, p.tree)
		}
	}
	now := ls.c.now()
	for _, j := range ls.st.Jobs() {
		if j.State.Base() == sched.JobPending {
			old := j.Priority
			ls.setPriority(j, now)
			if old != j.Priority {
				ls.touch(j, "", "")
			}
		}
	}
	ls.wantSched = true
	return nil
}
