package ctld

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestJobScriptAndNotifyAccess: the owner and root read a job's batch
// script, another user gets Slurm's "Invalid user id", an unknown job
// "Invalid job id specified"; scontrol notify answers the same way.
func TestJobScriptAndNotifyAccess(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submitAs(alice, c.wrap("sleep 30", func(s *api.JobSpec) { s.Hold = true }))
	job := api.JobControlRequest{Op: api.OpNotify, Jobs: []string{itoa32(id)}}
	for _, tc := range []struct {
		who           Who
		job           string
		code          int
		msg, notified string
	}{
		{alice, itoa32(id), http.StatusOK, "", ""},
		{root, itoa32(id), http.StatusOK, "", ""},
		{bob, itoa32(id), http.StatusForbidden, "Invalid user id", "Invalid user id"},
		{root, "99", http.StatusNotFound, "Invalid job id specified", "Invalid job id specified"},
	} {
		var res api.JobScriptResponse
		code, msg := c.as(tc.who, "GET", api.PathJobScript+"?id="+tc.job, nil, &res)
		if code != tc.code || msg != tc.msg {
			t.Errorf("%s reads job %s's script: %d %q, want %d %q", tc.who.User, tc.job, code, msg, tc.code, tc.msg)
		}
		if code == http.StatusOK && res.Script != "#!/bin/sh\nsleep 30\n" {
			t.Errorf("%s reads script %q", tc.who.User, res.Script)
		}
		var nres api.JobControlResponse
		job.Jobs = []string{tc.job}
		if code, _ := c.as(tc.who, "POST", api.PathJobControl, job, &nres); code != http.StatusOK || len(nres.Results) != 1 ||
			nres.Results[0].Error != tc.notified {
			t.Errorf("%s notifies job %s: %d %+v, want %q", tc.who.User, tc.job, code, nres.Results, tc.notified)
		}
	}
}

// TestSetDebug: only operators set the controller's log level; a level
// name or number 0-9 is accepted, anything else refused with Slurm's
// words.
func TestSetDebug(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	level := new(slog.LevelVar)
	c.ctl.opts.LogLevel = level
	for _, tc := range []struct {
		who   Who
		level string
		code  int
		msg   string
		want  slog.Level
	}{
		{root, "debug3", http.StatusOK, "", slog.LevelDebug},
		{root, "error", http.StatusOK, "", slog.LevelError},
		{root, "4", http.StatusOK, "", slog.LevelInfo},
		{root, "nosuchlevel", http.StatusBadRequest, "invalid debug level: nosuchlevel", slog.LevelInfo},
		{bob, "debug", http.StatusForbidden, "Permission denied", slog.LevelInfo},
	} {
		code, msg := c.as(tc.who, "POST", api.PathSetDebug, api.SetDebugRequest{Level: tc.level}, nil)
		if code != tc.code || msg != tc.msg || level.Level() != tc.want {
			t.Errorf("%s setdebug %s: %d %q level %v, want %d %q %v", tc.who.User, tc.level, code, msg, level.Level(), tc.code, tc.msg, tc.want)
		}
	}
}
