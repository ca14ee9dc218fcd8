package api

import (
	"context"
	"net/http"
	"net/url"
)

// Paths of scontrol's job and daemon administration requests.
const (
	// PathJobScript answers GET ?id=JOB with a JobScriptResponse (scontrol
	// write batch_script): the job's owner and operators may read it.
	PathJobScript = "/v1/jobs/script"
	// PathSetDebug takes a SetDebugRequest (scontrol setdebug, operators).
	PathSetDebug = "/v1/setdebug"
	// PathAssocMgr takes an AssocMgrRequest and answers a TextResponse
	// (scontrol show assoc_mgr).
	PathAssocMgr = "/v1/assoc_mgr"
)

// AssocMgrRequest is scontrol show assoc_mgr's filters: user, account and
// QOS names (empty: all) and the sections (users, assoc, qos; empty: all).
type AssocMgrRequest struct {
	Users    []string `json:"users,omitempty"`
	Accounts []string `json:"accounts,omitempty"`
	QOS      []string `json:"qos,omitempty"`
	Flags    []string `json:"flags,omitempty"`
}

// AssocMgr fetches the text of scontrol show assoc_mgr.
func (c *Client) AssocMgr(ctx context.Context, req AssocMgrRequest) (string, error) {
	var r TextResponse
	err := c.call(ctx, http.MethodPost, PathAssocMgr, req, &r)
	return r.Text, err
}

// JobScriptResponse is a batch job's script as submitted.
type JobScriptResponse struct {
	Script string `json:"script"`
}

// JobScript fetches job id's batch script.
func (c *Client) JobScript(ctx context.Context, id string) (JobScriptResponse, error) {
	var r JobScriptResponse
	return r, c.call(ctx, http.MethodGet, PathJobScript+"?id="+url.QueryEscape(id), nil, &r)
}

// SetDebugRequest sets the controller's log level (a Slurm debug level
// name: quiet, fatal, error, info, verbose, debug, debug2 ... debug5).
type SetDebugRequest struct {
	Level string `json:"level"`
}

// SetDebug sets the controller's log level.
func (c *Client) SetDebug(ctx context.Context, level string) error {
	return c.call(ctx, http.MethodPost, PathSetDebug, SetDebugRequest{Level: level}, nil)
}

// DebugLevels are the level names scontrol setdebug accepts, in Slurm's
// order (quiet = 0 ... debug5 = 9); a number names the level at its index.
var DebugLevels = []string{"quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5"}
