package ctld

import (
	"net/http"
)

// TokenHandler returns the client API behind token authentication, as
// the TCP listener serves it: the REST daemon in the controller calls it
// in process with the caller's token, so a REST call is authorized as
// the same call over TCP.
func (c *Controller) TokenHandler() http.Handler { return c.tokenAuth(c.clientMux()) }

// AsLocalUser returns h (the client API, Controller.Handler) called as
// the local user uid/gid, as the Unix socket serves a peer with those
// credentials: the REST daemon's own Unix socket identifies its callers
// by SO_PEERCRED too.
func AsLocalUser(h http.Handler, uid, gid uint32) http.Handler {
	who := whoForUID(uid, gid, "socket")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(WithWho(r.Context(), who)))
	})
}
