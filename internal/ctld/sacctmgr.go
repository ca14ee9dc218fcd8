package ctld

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strings"

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
		DefaultCluster: c.cfg.ClusterName, Control: c.controlInfo(),
		ReadFile: func(name string) ([]byte, error) {
			if data, ok := req.Files[name]; ok {
				return data, nil
			}
			return nil, fmt.Errorf("open %s: %w", name, fs.ErrNotExist)
		}},
		WriteFile: func(name string, data []byte) error { files[name] = data; return nil }}
	if cmd.Verb == acct.VerbDelete {
		jobs, err := c.do(ctx, func(ls *loopState) (any, error) { return ls.activeJobs(), nil })
		if err != nil {
			return api.SacctmgrResponse{}, err
		}
		env.ActiveJobs = jobs.([]acct.ActiveJob)
	}
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

// slurmRPC is the protocol version `sacctmgr show cluster` prints in its
// RPC column for a Slurm 24.11 controller, the version Sluice speaks.
const slurmRPC = 42 << 8

// controlInfo is this controller as `show cluster` prints it: the address
// agents reach it at (SlurmctldHost's when it listens on every address),
// its port and protocol version.
func (c *Controller) controlInfo() acct.Cluster {
	info := acct.Cluster{Name: strings.ToLower(c.cfg.ClusterName), ControlPort: c.cfg.SlurmctldPort, RPC: slurmRPC}
	if c.ln != nil {
		if a, ok := c.ln.Addr().(*net.TCPAddr); ok {
			info.ControlPort = a.Port
			if !a.IP.IsUnspecified() {
				info.ControlHost = a.IP.String()
			}
		}
	}
	if info.ControlHost == "" && len(c.cfg.SlurmctldHosts) > 0 {
		h := c.cfg.SlurmctldHosts[0]
		info.ControlHost = cmp.Or(h.Addr, h.Name)
		if info.ControlHost == "localhost" {
			info.ControlHost = "127.0.0.1"
		}
	}
	return info
}

// registerCluster adds ClusterName to the accounting database when it is
// not there yet, with its root association and root's user association
// under it, as slurmctld registers its cluster with slurmdbd at its first
// start: on a fresh cluster root can submit at once (account root, QOS
// normal) before any sacctmgr command.
func (c *Controller) registerCluster(ctx context.Context) error {
	name := strings.ToLower(c.cfg.ClusterName)
	if c.opts.Accounting == nil || name == "" {
		return nil
	}
	st, err := c.opts.Accounting.Load(ctx)
	if err != nil {
		return fmt.Errorf("ctld: load accounting: %w", err)
	}
	tracked := strings.Split(accountingTRES(strings.Join(c.cfg.Accounting.TRES, ",")), ",")
	if st.Clusters[name] != nil && !missingTRES(st, tracked) {
		return nil
	}
	err = c.opts.Accounting.Update(ctx, func(s *acct.State) error {
		if s.Clusters[name] == nil {
			s.AddCluster(name)
		}
		// slurmctld registers its AccountingStorageTRES with slurmdbd
		// (sacctmgr show tres: gres/gpu 1001, gres/gpumem 1002, ...).
		for _, t := range tracked {
			s.EnsureTRES(t)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ctld: register cluster %s in accounting: %w", name, err)
	}
	return nil
}

// missingTRES reports whether a tracked TRES is not in accounting yet.
func missingTRES(st *acct.State, tracked []string) bool {
	for _, t := range tracked {
		if st.TRES[t] == nil {
			return true
		}
	}
	return false
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
	// Priorities and limits changed: a pass at once, before a job
	// submitted right after the change (that one waits for its batch pass
	// with the rest of its burst, as in Slurm: oracle, sprio-factors).
	ls.wantSched = true
	return nil
}

// activeJobs lists the pending and running jobs with the association
// they bill, for sacctmgr delete's check.
func (ls *loopState) activeJobs() []acct.ActiveJob {
	var out []acct.ActiveJob
	cluster := strings.ToLower(ls.c.cfg.ClusterName)
	for _, j := range ls.st.Jobs() {
		if j.State.Base() == sched.JobPending || isActive(j) {
			out = append(out, acct.ActiveJob{ID: uint32(j.ID), Cluster: cluster, Account: j.Account, User: j.User,
				Partition: ls.partitionName(j)})
		}
	}
	return out
}
