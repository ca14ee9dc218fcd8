package ctld

import (
	"cmp"
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// rpcType is a call's Slurm message type, the name and number sdiag
// prints in "Remote Procedure Call statistics by message type" (and that
// Prometheus exporters parse). Calls with no Slurm counterpart (sacct and
// sacctmgr go to slurmdbd in Slurm; tokens, sinfo -T and the like are
// Sluice's own routes) carry a SLUICE_ name and number 0.
type rpcType struct {
	name string
	id   uint32
}

// Slurm's message type numbers (slurm_protocol_defs.h), for the calls
// Sluice serves.
var (
	rpcReconfigure   = rpcType{"REQUEST_RECONFIGURE", 1003}
	rpcPing          = rpcType{"REQUEST_PING", 1008}
	rpcNodeReg       = rpcType{"MESSAGE_NODE_REGISTRATION_STATUS", 1002}
	rpcBuildInfo     = rpcType{"REQUEST_BUILD_INFO", 2001}
	rpcJobInfo       = rpcType{"REQUEST_JOB_INFO", 2003}
	rpcNodeInfo      = rpcType{"REQUEST_NODE_INFO", 2007}
	rpcPartInfo      = rpcType{"REQUEST_PARTITION_INFO", 2009}
	rpcShareInfo     = rpcType{"REQUEST_SHARE_INFO", 2022}
	rpcResvInfo      = rpcType{"REQUEST_RESERVATION_INFO", 2024}
	rpcPrioFactors   = rpcType{"REQUEST_PRIORITY_FACTORS", 2026}
	rpcStatsInfo     = rpcType{"REQUEST_STATS_INFO", 2035}
	rpcUpdateJob     = rpcType{"REQUEST_UPDATE_JOB", 3001}
	rpcUpdateNode    = rpcType{"REQUEST_UPDATE_NODE", 3002}
	rpcCreatePart    = rpcType{"REQUEST_CREATE_PARTITION", 3003}
	rpcDeletePart    = rpcType{"REQUEST_DELETE_PARTITION", 3004}
	rpcUpdatePart    = rpcType{"REQUEST_UPDATE_PARTITION", 3005}
	rpcCreateResv    = rpcType{"REQUEST_CREATE_RESERVATION", 3006}
	rpcDeleteResv    = rpcType{"REQUEST_DELETE_RESERVATION", 3008}
	rpcUpdateResv    = rpcType{"REQUEST_UPDATE_RESERVATION", 3009}
	rpcSubmitBatch   = rpcType{"REQUEST_SUBMIT_BATCH_JOB", 4003}
	rpcStepCreate    = rpcType{"REQUEST_JOB_STEP_CREATE", 5001}
	rpcSuspend       = rpcType{"REQUEST_SUSPEND", 5014}
	rpcCompleteBatch = rpcType{"REQUEST_COMPLETE_BATCH_SCRIPT", 5018}
	rpcRequeue       = rpcType{"REQUEST_JOB_REQUEUE", 5023}
	rpcKillJob       = rpcType{"REQUEST_KILL_JOB", 5032}
)

// rpcByPattern names the client routes (ServeMux patterns); a route not
// listed is named from its path (rpcFor).
var rpcByPattern = map[string]rpcType{
	"GET " + api.PathPing:            rpcPing,
	"POST " + api.PathReconfigure:    rpcReconfigure,
	"POST " + api.PathSubmit:         rpcSubmitBatch,
	"GET " + api.PathJobs:            rpcJobInfo,
	"POST " + api.PathJobControl:     rpcUpdateJob, // refined by controlRPC
	"POST " + api.PathJobUpdate:      rpcUpdateJob,
	"GET " + api.PathNodes:           rpcNodeInfo,
	"POST " + api.PathNodeUpdate:     rpcUpdateNode,
	"GET " + api.PathPartitions:      rpcPartInfo,
	"GET " + api.PathConfig:          rpcBuildInfo,
	"GET " + api.PathSdiag:           rpcStatsInfo,
	"POST " + api.PathSdiag:          rpcStatsInfo,
	"POST " + api.PathSprio:          rpcPrioFactors,
	"POST " + api.PathSshare:         rpcShareInfo,
	"POST " + api.PathSteps:          rpcStepCreate,
	"POST " + api.PathReservations:   rpcResvInfo, // refined by resvRPC
	"POST " + api.PathPartitionAdmin: rpcUpdatePart,
}

// rpcFor names the route of pattern: Slurm's message type where there is
// one, else SLUICE_ and the path's words ("GET /v1/ext/accounting" is
// SLUICE_ACCOUNTING).
func rpcFor(pattern string) rpcType {
	if t, ok := rpcByPattern[pattern]; ok {
		return t
	}
	_, path, _ := strings.Cut(pattern, " ")
	var words []string
	for _, w := range strings.Split(path, "/") {
		if w == "" || w == "v1" || w == "ext" || strings.HasPrefix(w, "{") {
			continue
		}
		words = append(words, strings.ToUpper(w))
	}
	return rpcType{name: "SLUICE_" + strings.Join(words, "_")}
}

// controlRPC is the message type of a scancel/scontrol job operation.
func controlRPC(op string) rpcType {
	switch op {
	case api.OpCancel, api.OpSignal:
		return rpcKillJob
	case api.OpSuspend, api.OpResume:
		return rpcSuspend
	case api.OpRequeue, api.OpRequeueHold:
		return rpcRequeue
	}
	return rpcUpdateJob // hold, uhold, release: job updates in Slurm
}

// resvRPC is the message type of an scontrol reservation command.
func resvRPC(words []string) rpcType {
	if len(words) == 0 {
		return rpcResvInfo
	}
	switch strings.ToLower(words[0]) {
	case "create":
		return rpcCreateResv
	case "update":
		return rpcUpdateResv
	case "delete":
		return rpcDeleteResv
	}
	return rpcResvInfo
}

// partitionRPC is the message type of an scontrol partition command.
func partitionRPC(verb string) rpcType {
	switch verb {
	case api.PartitionCreate:
		return rpcCreatePart
	case api.PartitionDelete:
		return rpcDeletePart
	}
	return rpcUpdatePart
}

// agentCall counts an agent's call as slurmctld counts its slurmds'
// messages: under the message type and SlurmUser.
func (c *Controller) agentCall(t rpcType, h http.HandlerFunc) http.HandlerFunc {
	name := cmp.Or(c.cfg.SlurmUser, "root")
	uid := uint32(max(c.slurmUID, 0))
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h(w, r)
		c.rpc.record(t, rpcUser{name, uid}, time.Since(start))
	}
}

// rpcKey carries the call's *rpcType in its context, for a handler that
// learns the precise type from the request body (setRPC).
type rpcKey struct{}

// setRPC refines the message type the call is counted under.
func setRPC(ctx context.Context, t rpcType) {
	if p, ok := ctx.Value(rpcKey{}).(*rpcType); ok {
		*p = t
	}
}

// rpcCount is one row of sdiag's RPC tables.
type rpcCount struct {
	count int64
	total time.Duration
}

// rpcUser identifies a caller in the by-user table.
type rpcUser struct {
	name string
	uid  uint32
}

// rpcStats counts the calls the controller served, by message type and by
// user, for sdiag. Handlers run on the HTTP server's goroutines, so it has
// its own lock rather than living in the loop's state. Like slurmctld's,
// the counters cover the life of the controller until sdiag -r.
type rpcStats struct {
	mu     sync.Mutex
	byType map[rpcType]*rpcCount
	byUser map[rpcUser]*rpcCount
}

func (s *rpcStats) record(t rpcType, u rpcUser, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byType == nil {
		s.byType, s.byUser = map[rpcType]*rpcCount{}, map[rpcUser]*rpcCount{}
	}
	for _, c := range []*rpcCount{entry(s.byType, t), entry(s.byUser, u)} {
		c.count++
		c.total += took
	}
}

// entry returns m's value for k, a new zero value stored there first if
// there is none.
func entry[K comparable, V any](m map[K]*V, k K) *V {
	c := m[k]
	if c == nil {
		c = new(V)
		m[k] = c
	}
	return c
}

func (s *rpcStats) reset() {
	s.mu.Lock()
	s.byType, s.byUser = nil, nil
	s.mu.Unlock()
}

// fill copies the counters into an sdiag answer (unsorted: sdiag sorts).
func (s *rpcStats) fill(out *api.SdiagResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, c := range s.byType {
		out.RPCTypes = append(out.RPCTypes, api.RPCStat{Name: t.name, ID: t.id, Count: c.count, TotalUS: c.total.Microseconds()})
	}
	for u, c := range s.byUser {
		out.RPCUsers = append(out.RPCUsers, api.RPCStat{Name: u.name, ID: u.uid, Count: c.count, TotalUS: c.total.Microseconds()})
	}
}
