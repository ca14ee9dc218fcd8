package api

// An agent joins the cluster's TLS with the cluster key: on first contact
// it creates its key pair and posts a certificate request signed with the
// cluster key (so only a holder of the key obtains a certificate, and only
// for the node its signature names); the controller answers with the
// node's certificate and the CA certificate, and MACs its answer with the
// cluster key and the request's nonce, so the agent knows the CA it
// receives is the controller's even before it can verify a TLS peer.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// PathAgentEnroll takes an EnrollRequest and answers an EnrollResponse.
const PathAgentEnroll = "/agent/v1/enroll"

// EnrollMACHeader carries the controller's MAC of an enrollment answer.
const EnrollMACHeader = "Sluice-Enroll-MAC"

// EnrollRequest asks for a certificate for Node.
type EnrollRequest struct {
	Node string `json:"node"`
	// CSR is a PEM certificate request for the agent's key; its DNS
	// names and addresses go into the certificate.
	CSR []byte `json:"csr"`
}

// EnrollResponse is the node's certificate and the cluster CA (PEM).
type EnrollResponse struct {
	Cert []byte `json:"cert"`
	CA   []byte `json:"ca"`
}

// enrollMAC binds an enrollment answer to its request's signature header
// (its nonce) and to the cluster key.
func enrollMAC(key []byte, reqSig string, body []byte) string {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "enroll-v1\n%s\n%x", reqSig, sum)
	return hex.EncodeToString(m.Sum(nil))
}

// HandleEnroll serves PathAgentEnroll for ca (behind RequireSignature):
// the request's signed sender must be the node asked for, and known (a
// node of slurm.conf: known reports it).
func HandleEnroll(ca *ClusterCA, key []byte, known func(node string) bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req EnrollRequest
		if err := DecodeAgentRequest(r, &req); err != nil {
			WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		if sender := AgentNode(r.Context()); req.Node != sender || reservedSender(sender) || !known(sender) {
			WriteAgentError(w, http.StatusForbidden, fmt.Sprintf("enroll: no certificate for %q (signed by %q)", req.Node, sender))
			return
		}
		csr, err := x509.ParseCertificateRequest(pemBytes(req.CSR))
		if err == nil {
			err = csr.CheckSignature()
		}
		if err != nil {
			WriteAgentError(w, http.StatusBadRequest, "enroll: certificate request: "+err.Error())
			return
		}
		cert, err := ca.Issue(req.Node, csr.PublicKey, csr.DNSNames, csr.IPAddresses)
		if err != nil {
			WriteAgentError(w, http.StatusInternalServerError, err.Error())
			return
		}
		body, _ := json.Marshal(EnrollResponse{Cert: cert, CA: ca.PEM})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(EnrollMACHeader, enrollMAC(key, r.Header.Get(SignatureHeader), body))
		w.Write(body)
	}
}

// reservedSender reports names no node may have a certificate for.
func reservedSender(name string) bool {
	return name == ControllerCertName || name == StepCredentialSender || name == StepAttachSender
}

func pemBytes(p []byte) []byte {
	if b, _ := pem.Decode(p); b != nil {
		return b.Bytes
	}
	return p
}

// Enroll obtains node's certificate from the controller at baseURL
// (http or https: the answer is authenticated by its MAC, not by TLS) for
// key, naming the host names given. It returns the CA and the certificate.
func Enroll(ctx context.Context, baseURL string, clusterKey []byte, node string, key *ecdsa.PrivateKey, hosts []string) (caPEM, certPEM []byte, err error) {
	csrDER, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: node}, DNSNames: uniqueNames(hosts)}, key)
	if err != nil {
		return nil, nil, err
	}
	body, _ := json.Marshal(EnrollRequest{Node: node, CSR: pemBlock("CERTIFICATE REQUEST", csrDER)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(baseURL, "/")+PathAgentEnroll, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	SignRequest(req, clusterKey, node, body, time.Now())
	// No CA is known yet: the answer's MAC, not the TLS peer, proves it.
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil,
		TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true}}}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("enroll: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, nil, fmt.Errorf("enroll: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &AgentError{Status: resp.StatusCode}
		if json.Unmarshal(data, e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(data))
		}
		return nil, nil, fmt.Errorf("enroll: %w", e)
	}
	want := enrollMAC(clusterKey, req.Header.Get(SignatureHeader), data)
	if !hmac.Equal([]byte(want), []byte(resp.Header.Get(EnrollMACHeader))) {
		return nil, nil, fmt.Errorf("enroll: the answer is not authenticated by the cluster key")
	}
	var er EnrollResponse
	if err := json.Unmarshal(data, &er); err != nil {
		return nil, nil, fmt.Errorf("enroll: %w", err)
	}
	return er.CA, er.Cert, nil
}
