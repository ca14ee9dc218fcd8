package noded

// The agent's traffic with the controller, and srun's and sattach's
// streams to it, run over TLS with the cluster CA: at its first start the
// agent joins with the cluster key (api.Enroll) and keeps its key, its
// certificate and the CA in its spool (0600). From then on it serves
// https only, calls the controller with its certificate, and accepts a
// request only over a connection whose client certificate names the
// request's signed sender (the controller's, "ctld"), or, without a
// client certificate, a step stream with its step credential.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// enrollRetry is how long the agent waits between enrollment attempts
// while the controller cannot be reached; enrollTimeout bounds one.
const (
	enrollRetry   = 2 * time.Second
	enrollTimeout = 10 * time.Second
)

// setupTLS gives the agent its TLS identity and its client for the
// controller, and reports whether it has one. At each start the agent
// asks for a fresh certificate (which also follows a controller whose CA
// changed); when the controller cannot be reached it keeps the one in its
// spool, and without one it is not joined yet (join retries). Agents
// without a controller (driven in-process) and the package's tests with
// a fake controller (plainHTTP) stay on plain HTTP.
func (a *Agent) setupTLS(ctx context.Context) (bool, error) {
	if a.cfg.ControllerURL == "" || a.cfg.plainHTTP {
		return true, nil
	}
	old, err := api.LoadIdentity(a.cfg.Spool, api.AgentCertFile, api.AgentKeyFile)
	if err == nil && (old.Name != a.cfg.Name || time.Now().After(old.NotAfter())) {
		old, err = nil, fmt.Errorf("the certificate in the spool is %s's, valid until %v", old.Name, old.NotAfter())
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		a.log.Warn("agent certificate unusable, joining again", "err", err)
	}
	actx, cancel := context.WithTimeout(ctx, enrollTimeout)
	id, err := a.enroll(actx)
	cancel()
	switch {
	case err == nil:
	case old != nil:
		a.log.Warn("cannot renew the agent certificate, keeping the one in the spool", "err", err, "expires", old.NotAfter())
		id = old
	default:
		a.log.Warn("cannot join the cluster yet, retrying", "err", err)
		return false, nil
	}
	a.useIdentity(id)
	return true, nil
}

// join enrolls again every enrollRetry until it succeeds (true) or ctx
// ends.
func (a *Agent) join(ctx context.Context) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(enrollRetry):
		}
		actx, cancel := context.WithTimeout(ctx, enrollTimeout)
		id, err := a.enroll(actx)
		cancel()
		if err == nil {
			a.useIdentity(id)
			return true
		}
		a.log.Debug("cannot join the cluster yet, retrying", "err", err)
	}
}

func (a *Agent) useIdentity(id *api.AgentTLS) {
	a.tls = id
	a.ctl = api.NewControllerClient(httpsURL(a.cfg.ControllerURL), a.cfg.Key, a.cfg.Name, id.HTTPClient(api.ControllerCertName, 30*time.Second))
}

// enroll asks the controller for a certificate and stores it.
func (a *Agent) enroll(ctx context.Context) (*api.AgentTLS, error) {
	key, err := api.NewAgentKey()
	if err != nil {
		return nil, err
	}
	caPEM, certPEM, err := api.Enroll(ctx, a.cfg.ControllerURL, a.cfg.Key, a.cfg.Name, key, a.certHosts())
	if err != nil {
		return nil, err
	}
	if err := api.SaveIdentity(a.cfg.Spool, caPEM, certPEM, key); err != nil {
		return nil, err
	}
	a.log.Info("joined the cluster's TLS: certificate stored in the spool")
	return api.NewAgentTLS(caPEM, certPEM, key)
}

// certHosts are the names the agent asks its certificate to carry
// besides its node name (informational: peers check the node name).
func (a *Agent) certHosts() []string {
	hosts := []string{a.cfg.Name}
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	if h, _, err := net.SplitHostPort(a.cfg.Listen); err == nil && h != "" && net.ParseIP(h) == nil {
		hosts = append(hosts, h)
	}
	return hosts
}

// agentPeerPolicy lets srun's and sattach's step streams in without a
// client certificate (their step credential, signed by the controller
// for that one stream, says who they are); TLS is still required.
func agentPeerPolicy(r *http.Request, sender string) (plain, ok bool) {
	return false, sender == api.StepCredentialSender || sender == api.StepAttachSender
}

// onlyController: the controller is the one peer with a certificate
// that calls an agent.
func onlyController(name string) bool { return name == api.ControllerCertName }

// httpsURL is u with https.
func httpsURL(u string) string {
	if rest, ok := strings.CutPrefix(u, "http://"); ok {
		return "https://" + rest
	}
	return u
}
