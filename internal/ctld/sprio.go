package ctld

import (
	"errors"
	"net/http"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/priority"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// sprio renders sprio from the live priority state: the same calculator
// and fair-share tree the scheduler's priorities come from.
func (ls *loopState) sprio(req api.SprioRequest) (api.TextResponse, error) {
	p := &ls.prio
	now := ls.c.now()
	opt := priority.SprioOptions{Long: req.Long, Norm: req.Norm, Weights: req.Weights, NoHeader: req.NoHeader,
		Format: req.Format, Jobs: req.Jobs, Users: req.Users, Partitions: req.Partitions, Sort: req.Sort}
	var jobs []*priority.Job
	if p.cfg.Type != priority.Basic {
		for _, j := range ls.st.Jobs() {
			if j.State.Base() != sched.JobPending && !isActive(j) {
				continue
			}
			pj := ls.priorityJob(j)
			jobs = append(jobs, &pj)
		}
	}
	var rows []priority.SprioRow
	if p.calc != nil {
		rows = priority.SprioRows(p.calc, jobs, now)
	}
	text, err := priority.FormatSprio(&p.cfg, rows, opt)
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, priority.ErrSprioNoJobs) {
			status = http.StatusNotFound
		}
		return api.TextResponse{Text: text}, &apiErr{status: status, msg: err.Error()}
	}
	return api.TextResponse{Text: text}, nil
}

// sshare renders sshare from the live fair-share tree; plain sshare shows
// the caller's own user rows.
func (ls *loopState) sshare(w Who, req api.SshareRequest) (api.TextResponse, error) {
	p := &ls.prio
	opt := priority.SshareOptions{All: req.All, Long: req.Long, UsersOnly: req.UsersOnly, NoHeader: req.NoHeader,
		Partition: req.Partition, Parsable: req.Parsable, Parsable2: req.Parsable2, Accounts: req.Accounts,
		Users: req.Users, Format: req.Format, InvokingUser: w.User, Cluster: ls.c.cfg.ClusterName}
	tree := p.tree
	if tree == nil {
		tree = priority.NewTree()
	}
	text, err := priority.FormatSshare(tree, &p.cfg, opt)
	if err != nil {
		return api.TextResponse{}, &apiErr{status: http.StatusBadRequest, msg: err.Error()}
	}
	return api.TextResponse{Text: text}, nil
}
