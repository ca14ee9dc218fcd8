package restd

import (
	"context"
	"net/http"
	"strings"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/dataparser"
)

// Versions are the OpenAPI plugin versions served: slurmrestd 24.11
// serves these three. Every version answers with data_parser v0.0.42
// bodies (docs/compatibility.md lists where older ones differ).
var Versions = []string{"v0.0.42", "v0.0.41", "v0.0.40"}

// param is a path or query parameter, for /openapi/v3.
type param struct {
	name, in, desc string
}

// route is one operation: its path under /slurm/VERSION or
// /slurmdb/VERSION, what /openapi/v3 says of it, and its handler.
type route struct {
	// version is the OpenAPI plugin version of the path ("v0.0.42").
	version string
	method  string
	// path is a ServeMux pattern ("/slurm/v0.0.42/job/{job_id}").
	path    string
	summary string
	params  []param
	// body and resp name the request and response schemas as Slurm's
	// OpenAPI components call them.
	body, resp string
	h          handler
}

// reply is what a handler answers: data, envelope errors and warnings,
// and the HTTP status (200 when zero).
type reply struct {
	data   dataparser.Obj
	status int
	errs   []dataparser.Error
	warns  []dataparser.Warning
	// noEnvelope is slurmrestd's plain-text 400 "Unable to parse
	// query." for a body it cannot read.
	noEnvelope bool
}

// call is one request as a handler sees it.
type call struct {
	r      *http.Request
	ctx    context.Context
	cl     *api.Client
	caller Caller
	cfg    api.ConfigResponse
	// version is the path's version (v0.0.40 nodes lack two fields).
	version string
	// refused marks a caller the controller does not accept (c.cl
	// answers every call with "Protocol authentication error").
	refused bool
}

// refusing is the client of a refused caller: each call fails as
// slurmctld refuses a bad credential, so that every handler answers
// with its own description, error 1007 and HTTP 511.
var refusing = api.NewHandlerClient(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNetworkAuthenticationRequired)
	w.Write([]byte(`{"error":"` + errAuth + `"}`))
}), "")

type handler func(c *call) reply

// op is a route without its version.
type op struct {
	method, path, summary string
	params                []param
	body, resp            string
	h                     handler
}

// routeTable expands the operations under every version.
func (s *Server) routeTable() []route {
	var out []route
	for _, v := range Versions {
		for _, o := range operations() {
			out = append(out, route{version: v, method: o.method, path: strings.Replace(o.path, "VERSION", v, 1),
				summary: o.summary, params: o.params, body: o.body, resp: o.resp, h: o.h})
		}
	}
	return out
}

// operations lists what Sluice serves of slurmrestd's API.
func operations() []op {
	ops := append(slurmOps(), allocateOp())
	for _, more := range [][]op{slurmdbOps(), slurmdbConfigOps(), slurmdbWriteOps(), noneOps()} {
		ops = append(ops, more...)
	}
	return ops
}

// wrap runs a route's handler: a controller client for the caller, the
// configuration (meta's cluster), the data_parser envelope.
func (s *Server) wrap(rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		caller := callerFrom(r)
		cl, err := s.backend.Client(caller)
		if err != nil {
			s.log.Debug("REST caller refused", "user", caller.User, "err", err)
			plain(w, http.StatusUnauthorized, "Authentication failure")
			return
		}
		c := &call{r: r, ctx: r.Context(), cl: cl, caller: caller, version: rt.version}
		c.cfg, err = cl.Config(c.ctx)
		if isUnauthorized(err) || caller.Mismatch {
			// slurmrestd passes a forged token, or one of another user,
			// on to slurmctld, which refuses every call but ping with
			// "Protocol authentication error" (oracle).
			c.cl, c.refused = refusing, true
		}
		if c.refused && strings.HasPrefix(rt.path, "/slurmdb/") {
			s.write(w, c, rt, dbRefused)
			return
		}
		rep := rt.h(c)
		s.write(w, c, rt, rep)
	}
}

// write sends the reply in its envelope.
func (s *Server) write(w http.ResponseWriter, c *call, rt route, rep reply) {
	if rep.noEnvelope {
		plain(w, rep.status, "Unable to parse query.")
		return
	}
	status := rep.status
	if status == 0 {
		status = http.StatusOK
	}
	body := dataparser.JSON(dataparser.EnvelopeErrors(rep.data, c.meta(rt), rep.errs, rep.warns))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// meta is the envelope's meta as slurmrestd writes it: its plugin, the
// caller, the cluster and release.
func (c *call) meta(rt route) dataparser.Meta {
	m := dataparser.Meta{Release: api.SlurmRelease, Source: c.caller.Source,
		PluginType: "openapi/slurmctld", PluginName: "Slurm OpenAPI slurmctld", DataParser: rt.version}
	if strings.HasPrefix(rt.path, "/slurmdb/") {
		m.PluginType, m.PluginName = "openapi/slurmdbd", "Slurm OpenAPI slurmdbd"
	}
	m.User, m.Group = processIdentity()
	for _, e := range c.cfg.Entries {
		switch e.Key {
		case "ClusterName":
			m.Cluster = e.Value
		case "AccountingStorageType":
			m.AccountingStorage = e.Value
		}
	}
	return m
}
