package ctld

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/sched"
)

// listen opens the Unix socket (peer credentials) and the TCP port
// (agents with the cluster key, remote clients with tokens).
func (c *Controller) listen() error {
	uln, err := c.listenUnix()
	if err != nil {
		return err
	}
	c.unixLn = uln
	usrv := c.newServer(c.clientMux()) // httplimits.go
	usrv.ConnContext = func(ctx context.Context, conn net.Conn) context.Context {
		w, err := peerCred(conn)
		if err != nil {
			return ctx
		}
		return WithWho(ctx, w)
	}
	c.serve(usrv, uln)
	addr := c.opts.Listen
	if addr == "" {
		addr = ":" + strconv.Itoa(c.cfg.SlurmctldPort)
	}
	if addr == "none" {
		return nil
	}
	ln, err := c.listenTCP(addr)
	if err != nil {
		uln.Close()
		return err
	}
	c.ln = ln
	mux := http.NewServeMux()
	mux.Handle("/agent/", c.agentMux())
	c.registerMetrics(mux) // without authentication, as slurmctld: metrics.go
	mux.Handle("/", c.tokenAuth(c.clientMux()))
	c.serve(c.newServer(mux), newSniffListener(ln, c.tlsID.ServerConfig())) // agenttls.go
	return nil
}

func (c *Controller) serve(s *http.Server, ln net.Listener) {
	c.srvs = append(c.srvs, s)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.log.Error("API server stopped", "err", err)
		}
	}()
}

// Handler returns the client API (identity must already be in the
// request context: tests use WithWho).
func (c *Controller) Handler() http.Handler { return c.clientMux() }

// AgentHandler returns the agent API (cluster-key signed requests).
func (c *Controller) AgentHandler() http.Handler { return c.agentMux() }

// clientMux serves sbatch, squeue, scontrol...
func (c *Controller) clientMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+api.PathPing, c.endpoint(func(ctx context.Context, w Who, _ *http.Request) (any, error) {
		return c.do(ctx, func(ls *loopState) (any, error) {
			return api.Whoami{User: w.User, UID: w.UID, GID: w.GID, Admin: ls.isAdmin(w), Via: w.Via,
				Cluster: c.cfg.ClusterName, StateSave: c.StateSaveError()}, nil
		})
	}))
	mux.HandleFunc("POST "+api.PathSubmit, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		if err := c.refuseWhileFailing(); err != nil { // savefail.go
			return nil, err
		}
		var req api.SubmitRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		defer c.observeSubmit(time.Now())
		return c.do(ctx, func(ls *loopState) (any, error) { return ls.submit(w, req) })
	}))
	mux.HandleFunc("GET "+api.PathJobs, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		q := r.URL.Query()
		var ids []string
		if s := q.Get("id"); s != "" {
			ids = strings.Split(s, ",")
		}
		detail, brief, f := q.Get("detail") == "1", q.Get("brief") == "1", api.DecodeListFilter(q)
		if brief && len(ids) == 0 && strings.Contains(r.Header.Get("Accept"), api.RowsContentType) {
			return c.do(ctx, func(ls *loopState) (any, error) { return ls.listRows(f) })
		}
		return c.do(ctx, func(ls *loopState) (any, error) { return ls.listJobs(ids, detail, brief, f) })
	}))
	mux.HandleFunc("POST "+api.PathJobControl, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		if err := c.refuseWhileFailing(); err != nil { // savefail.go
			return nil, err
		}
		var req api.JobControlRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		setRPC(ctx, controlRPC(req.Op))
		return c.do(ctx, func(ls *loopState) (any, error) { return ls.control(w, req) })
	}))
	mux.HandleFunc("POST "+api.PathJobUpdate, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		if err := c.refuseWhileFailing(); err != nil { // savefail.go
			return nil, err
		}
		var req api.JobUpdateRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		if err := checkUpdateLimits(req.Set); err != nil { // reqlimits.go
			return nil, err
		}
		return c.do(ctx, func(ls *loopState) (any, error) { return struct{}{}, ls.updateJob(w, req) })
	}))
	mux.HandleFunc("GET "+api.PathNodes, c.endpoint(func(ctx context.Context, _ Who, _ *http.Request) (any, error) {
		return c.do(ctx, func(ls *loopState) (any, error) {
			out := api.NodesResponse{Now: c.now()}
			for i := range ls.st.Cluster.Nodes {
				out.Nodes = append(out.Nodes, ls.nodeRecord(i))
			}
			return out, nil
		})
	}))
	mux.HandleFunc("POST "+api.PathNodeUpdate, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		if err := c.refuseWhileFailing(); err != nil { // savefail.go
			return nil, err
		}
		var req api.NodeUpdateRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.do(ctx, func(ls *loopState) (any, error) { return struct{}{}, ls.updateNode(w, req) })
	}))
	mux.HandleFunc("GET "+api.PathPartitions, c.endpoint(func(ctx context.Context, _ Who, _ *http.Request) (any, error) {
		return c.do(ctx, func(ls *loopState) (any, error) {
			out := api.PartitionsResponse{Now: c.now()}
			for i := range ls.st.Cluster.Partitions {
				out.Partitions = append(out.Partitions, ls.partitionRecord(i))
			}
			return out, nil
		})
	}))
	mux.HandleFunc("GET "+api.PathConfig, c.endpoint(func(ctx context.Context, _ Who, _ *http.Request) (any, error) {
		return c.do(ctx, func(ls *loopState) (any, error) {
			return api.ConfigResponse{Now: c.now(), Path: c.cfg.Path, Entries: configEntries(c.cfg, ls.started, uint32(ls.st.NextJobID)),
				Controller: controllerName(c.cfg)}, nil
		})
	}))
	mux.HandleFunc("POST "+api.PathReconfigure, c.endpoint(func(ctx context.Context, w Who, _ *http.Request) (any, error) {
		return c.reconfigure(w)
	}))
	mux.HandleFunc("POST "+api.PathToken, c.endpoint(func(ctx context.Context, w Who, r *http.Request) (any, error) {
		var req api.TokenRequest
		if err := decode(r, &req); err != nil {
			return nil, err
		}
		return c.do(ctx, func(ls *loopState) (any, error) { return ls.token(w, req) })
	}))
	c.registerAccounting(mux) // sacct, sreport, sdiag, sprio, sshare, sacctmgr, steps: routes.go
	c.registerResv(mux)       // scontrol reservations and licenses, sinfo -T, sreport reservation: resv.go
	// The token key rotation: tokens.go.
	c.registerTokenRoutes(mux)
	return mux
}

// endpoint wraps a handler: identity check, JSON answer, error mapping.
func (c *Controller) endpoint(h func(ctx context.Context, w Who, r *http.Request) (any, error)) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		who, ok := WhoFrom(r.Context())
		if !ok {
			writeErr(rw, &apiErr{status: http.StatusUnauthorized, msg: "Unable to identify the caller"})
			return
		}
		// Counted under the route's message type, which a handler may
		// refine from the body (setRPC), and the caller, as sdiag shows.
		t := rpcFor(r.Pattern)
		ctx := context.WithValue(r.Context(), rpcKey{}, &t)
		start := time.Now()
		c.serving.Add(1)
		defer c.serving.Add(-1)
		defer func() { c.rpc.record(t, rpcUser{who.User, who.UID}, time.Since(start)) }()
		done, ok := c.limitRequest(rw, r, who) // httplimits.go
		if !ok {
			return
		}
		defer done()
		res, err := h(ctx, who, r)
		if err != nil {
			writeErr(rw, err)
			return
		}
		if writeListing(rw, r, res) {
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusOK)
		_ = json.NewEncoder(rw).Encode(res)
	}
}

// maxRequest bounds a request body (a batch script plus environment).
const maxRequest = 64 << 20

func decode(r *http.Request, v any) error {
	d := json.NewDecoder(io.LimitReader(r.Body, maxRequest))
	if err := d.Decode(v); err != nil {
		if e := bodyTooLarge(err); e != nil {
			return e
		}
		return &apiErr{status: http.StatusBadRequest, msg: "decode request: " + err.Error()}
	}
	return nil
}

// writeErr answers with the error's status and Slurm's message.
func writeErr(w http.ResponseWriter, err error) {
	e := api.Error{Status: http.StatusBadRequest, Message: err.Error()}
	var ae *apiErr
	var pe *api.Error
	switch {
	case errors.As(err, &ae):
		e.Status, e.Message, e.Reason, e.Job, e.Detail, e.JobID, e.Plain = ae.status, ae.msg, ae.reason, ae.job, ae.detail, ae.jobID, ae.plain
	case errors.As(err, &pe):
		e = *pe
	case errors.Is(err, errStoreClosed):
		e.Status = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(e)
}

// queryJobs lists the jobs (every job, or those named) as of now.
func (ls *loopState) queryJobs(ids []string, detail bool) (api.JobsResponse, error) {
	now := ls.c.now()
	out := api.JobsResponse{Now: now}
	if len(ids) == 0 {
		out.Jobs = make([]api.JobInfo, 0, len(ls.st.Jobs()))
		for _, j := range ls.st.Jobs() {
			out.Jobs = append(out.Jobs, ls.jobInfo(j, now, detail))
		}
		return out, nil
	}
	seen := map[sched.JobID]bool{}
	for _, id := range ids {
		js, _, err := ls.jobsByID(id)
		if err != nil {
			continue
		}
		for _, j := range js {
			if !seen[j.ID] {
				seen[j.ID] = true
				out.Jobs = append(out.Jobs, ls.jobInfo(j, now, detail))
			}
		}
	}
	if len(out.Jobs) == 0 {
		return out, notFound()
	}
	return out, nil
}

// token issues a JWT (scontrol token): for oneself, or for anyone by an
// admin.
func (ls *loopState) token(w Who, req api.TokenRequest) (api.TokenResponse, error) {
	name := req.Username
	if name == "" {
		name = w.User
	}
	if name != w.User && !ls.isAdmin(w) {
		return api.TokenResponse{}, &apiErr{status: http.StatusForbidden,
			msg: sched.ErrAccessDenied.Error() + " (only an administrator may get a token for another user)"}
	}
	life := DefaultTokenLifespan
	if req.LifespanSec > 0 {
		life = time.Duration(req.LifespanSec) * time.Second
	}
	if err := ls.c.checkTokenRequest(w, life); err != nil { // tokens.go
		return api.TokenResponse{}, err
	}
	tok, exp, err := IssueToken(ls.c.tokenKey(), name, ls.c.now(), life)
	if err != nil {
		return api.TokenResponse{}, err
	}
	return api.TokenResponse{Token: tok, User: name, Expires: exp}, nil
}
