package ctld

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// signedCall sends a cluster-key signed POST of body to url as sender
// with hc; it returns the status and the body, or the transport error.
func signedCall(t *testing.T, hc *http.Client, url string, key []byte, sender string, body any) (int, string, error) {
	t.Helper()
	data, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	api.SignRequest(req, key, sender, data, time.Now())
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out), nil
}

// foreignIdentity is a certificate named name from a CA of its own (an
// attacker's, or another cluster's).
func foreignIdentity(t *testing.T, name string) *api.AgentTLS {
	t.Helper()
	dir := t.TempDir()
	ca, err := api.EnsureClusterCA(dir, "other")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := api.NewAgentKey()
	cert, err := ca.Issue(name, &key.PublicKey, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	id, err := api.NewAgentTLS(ca.PEM, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// httpsOf is an agent or controller URL with https.
func httpsOf(u string) string {
	return "https://" + strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")
}

// TestAgentTrafficMutualTLS is issue 17's "agent traffic": the
// controller and the agents accept agent requests only over TLS with a
// client certificate of the cluster CA that names the request's signed
// sender. Plain HTTP and certificates of another CA are refused by both
// sides, n1's certificate cannot act as n2 (nor as the controller towards
// an agent), and a client expecting n2 refuses n1's agent. The cluster
// key alone obtains certificates only for the node it signs as.
func TestAgentTrafficMutualTLS(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 2})
	key := c.ctl.ClusterKey()
	n1, err := api.LoadIdentity(filepath.Join(c.dir, "spool", "n1"), api.AgentCertFile, api.AgentKeyFile)
	if err != nil {
		t.Fatalf("n1's identity in its spool: %v", err)
	}
	plain := &http.Client{Timeout: 5 * time.Second}
	foreign := func(name, peer string) *http.Client {
		id := foreignIdentity(t, name)
		hc := id.HTTPClient(peer, 5*time.Second)
		cfg := hc.Transport.(*http.Transport).TLSClientConfig
		// Trust whoever answers, and present the certificate even though
		// the server names another CA: the refusal tested is the server's.
		cfg.VerifyConnection, cfg.Certificates = nil, nil
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { c := id.Certificate(); return &c, nil }
		return hc
	}
	hb := func(node string) api.Heartbeat { return api.Heartbeat{Node: node, Time: time.Now()} }
	ctlHB := c.ctl.URL() + api.PathAgentHeartbeat

	type tc struct {
		name   string
		hc     *http.Client
		url    string
		sender string
		body   any
		// want is the status expected (0: the connection itself fails).
		want int
		msg  string
	}
	n1Addr, n2Addr := c.agents["n1"].Addr(), c.agents["n2"].Addr()
	if !strings.HasPrefix(n1Addr, "https://") {
		t.Fatalf("agent n1 advertises %s, want https", n1Addr)
	}
	for _, k := range []tc{
		{"controller: n1 as n1", n1.HTTPClient(api.ControllerCertName, 5*time.Second), httpsOf(ctlHB), "n1", hb("n1"), http.StatusOK, ""},
		{"controller: plain HTTP", plain, ctlHB, "n1", hb("n1"), http.StatusForbidden, "requires mutual TLS"},
		{"controller: TLS without a client certificate", &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}},
			httpsOf(ctlHB), "n1", hb("n1"), http.StatusForbidden, "requires mutual TLS"},
		{"controller: another CA's n1", foreign("n1", api.ControllerCertName), httpsOf(ctlHB), "n1", hb("n1"), 0, "unknown certificate authority"},
		{"controller: n1's certificate as n2", n1.HTTPClient(api.ControllerCertName, 5*time.Second), httpsOf(ctlHB), "n2", hb("n2"),
			http.StatusForbidden, "the client certificate is n1's, the request claims to be n2's"},
		{"agent: plain HTTP", plain, "http://" + strings.TrimPrefix(n2Addr, "https://") + api.PathAgentJobs, api.ControllerCertName,
			api.LaunchRequest{}, http.StatusBadRequest, "HTTP request to an HTTPS server"},
		{"agent: another CA's ctld", foreign(api.ControllerCertName, "n2"), n2Addr + api.PathAgentJobs, api.ControllerCertName, api.LaunchRequest{}, 0, "unknown certificate authority"},
		{"agent: n1's certificate as the controller", n1.HTTPClient("n2", 5*time.Second), n2Addr + api.PathAgentJobs, api.ControllerCertName,
			api.LaunchRequest{}, http.StatusForbidden, "the client certificate is n1's"},
		{"agent: n1's certificate as n1", n1.HTTPClient("n2", 5*time.Second), n2Addr + api.PathAgentJobs, "n1",
			api.LaunchRequest{}, http.StatusForbidden, "n1 may not make this request"},
		{"agent: n2 expected, n1 answers", n1.HTTPClient("n2", 5*time.Second), n1Addr + api.PathAgentJobs, "n1", api.LaunchRequest{}, 0, "expected n2"},
		{"enroll: signed as n1 for n2", plain, c.ctl.URL() + api.PathAgentEnroll, "n1", api.EnrollRequest{Node: "n2"}, http.StatusForbidden, "no certificate"},
		{"enroll: an unknown node", plain, c.ctl.URL() + api.PathAgentEnroll, "n9", api.EnrollRequest{Node: "n9"}, http.StatusForbidden, "no certificate"},
		{"enroll: as the controller", plain, c.ctl.URL() + api.PathAgentEnroll, api.ControllerCertName,
			api.EnrollRequest{Node: api.ControllerCertName}, http.StatusForbidden, "no certificate"},
	} {
		t.Run(k.name, func(t *testing.T) {
			code, body, err := signedCall(t, k.hc, k.url, key, k.sender, k.body)
			if k.want == 0 {
				if err == nil || !strings.Contains(err.Error(), k.msg) {
					t.Fatalf("got %d %q, err %v: want the connection refused (%q)", code, body, err, k.msg)
				}
				return
			}
			if err != nil || code != k.want || !strings.Contains(body, k.msg) {
				t.Fatalf("got %d %q, err %v: want %d %q", code, body, err, k.want, k.msg)
			}
		})
	}
	// srun and sattach check the agent they reach: its certificate must
	// chain to the CA the controller gave them and name the node.
	for _, k := range []struct {
		name string
		n    api.StepNodeIO
		msg  string
	}{
		{"n1 answers for n2", api.StepNodeIO{Node: "n2", URL: n1Addr, CA: c.ctl.CACertPEM()}, "expected n2, the certificate is n1's"},
		{"another CA", api.StepNodeIO{Node: "n1", URL: n1Addr, CA: foreignIdentity(t, "x").CAPEM}, "certificate signed by unknown authority"},
		{"no CA", api.StepNodeIO{Node: "n1", URL: n1Addr}, "invalid cluster CA certificate"},
	} {
		if _, err := api.DialStepIO(k.n, 1, 0, 5*time.Second); err == nil || !strings.Contains(err.Error(), k.msg) {
			t.Errorf("step I/O, %s: %v, want %q", k.name, err, k.msg)
		}
	}
	// The cluster still works over its TLS: a job runs on n2.
	id := c.submit(c.wrap("echo hi", func(s *api.JobSpec) { s.NodeList = "n2" }))
	c.waitState(id, "COMPLETED", 15*time.Second)
}

// TestEnrollWithClusterKey: an agent without a certificate joins with the
// cluster key and stores its key, its certificate (for its node) and the
// CA in its spool, 0600; a wrong cluster key gets nothing (an answer not
// MACed with the key is not believed: api's TestEnrollAnswerAuthenticated).
func TestEnrollWithClusterKey(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	spool := filepath.Join(c.dir, "spool", "n1")
	for _, f := range []string{api.AgentKeyFile, api.AgentCertFile, api.CACertFile} {
		st, err := os.Stat(filepath.Join(spool, f))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v, want 0600", f, err, st.Mode().Perm())
		}
	}
	key, _ := api.NewAgentKey()
	caPEM, certPEM, err := api.Enroll(c.ctx(), c.ctl.URL(), c.ctl.ClusterKey(), "n1", key, []string{"host1"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := api.NewAgentTLS(caPEM, certPEM, key)
	if err != nil || id.Name != "n1" || !bytes.Equal(caPEM, c.ctl.CACertPEM()) {
		t.Fatalf("identity %+v, err %v", id, err)
	}
	if _, _, err := api.Enroll(c.ctx(), httpsOf(c.ctl.URL()), []byte("not-the-cluster-key-0123456789ab"), "n1", key, nil); err == nil ||
		!strings.Contains(err.Error(), "invalid cluster key signature") {
		t.Fatalf("wrong key: %v", err)
	}
}
