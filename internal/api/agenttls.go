package api

// This file holds the agent traffic's mutual TLS: the cluster CA the
// controller creates in its state directory at its first start, the
// certificates it issues (its own, named ControllerCertName, and one per
// node agent, named after the node), and the TLS configurations both sides
// use. A certificate's common name is the party's name in the protocol:
// the controller's and the agents' requests must come over a connection
// whose client certificate names the sender of the request's cluster-key
// signature, so an agent holding n1's certificate cannot act as n2. Slurm
// has no such layer (MUNGE credentials only); Sluice adds it so that agent
// traffic is encrypted and bound to a node identity.

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Files of the cluster CA in the controller's state directory, and of an
// agent's identity in its spool. All are written 0600.
const (
	CACertFile    = "ca.crt"
	CAKeyFile     = "ca.key"
	CtldCertFile  = "ctld.crt"
	CtldKeyFile   = "ctld.key"
	AgentCertFile = "agent.crt"
	AgentKeyFile  = "agent.key"
)

// ControllerCertName is the common name of the controller's certificate,
// the sender name its signed requests carry.
const ControllerCertName = "ctld"

// Validity of the CA and of the certificates it issues. An agent asks
// for a new certificate when it starts with less than a third of its
// certificate's validity left.
const (
	caValidity   = 20 * 365 * 24 * time.Hour
	leafValidity = 365 * 24 * time.Hour
)

// ErrNoClientCert is wrapped when agent traffic arrives without a
// verified client certificate.
var ErrNoClientCert = errors.New("agent traffic requires mutual TLS with a certificate of the cluster CA")

// ClusterCA is the controller's certificate authority for agent traffic.
type ClusterCA struct {
	Cert *x509.Certificate
	key  crypto.Signer
	// PEM is the CA certificate, the public part given to agents and to
	// srun and sattach to verify the agents they connect to.
	PEM []byte
}

// EnsureClusterCA loads the CA of dir (ca.crt, ca.key), creating it (an
// ECDSA P-256 key and a self-signed certificate, both 0600) when neither
// file exists.
func EnsureClusterCA(dir, cluster string) (*ClusterCA, error) {
	certPath, keyPath := filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	if _, err := os.Stat(keyPath); errors.Is(err, os.ErrNotExist) {
		if err := createCA(certPath, keyPath, cluster); err != nil {
			return nil, fmt.Errorf("create cluster CA: %w", err)
		}
	}
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, fmt.Errorf("load cluster CA: %w", err)
	}
	key, err := loadKey(keyPath)
	if err != nil {
		return nil, fmt.Errorf("load cluster CA: %w", err)
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("load cluster CA %s: %w", certPath, err)
	}
	return &ClusterCA{Cert: cert, key: key, PEM: certPEM}, nil
}

func createCA(certPath, keyPath, cluster string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "Sluice cluster CA " + cluster, Organization: []string{"Sluice"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(caValidity),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true, MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	if err := writeKey(keyPath, key); err != nil {
		return err
	}
	return WritePrivateFile(certPath, pemBlock("CERTIFICATE", der))
}

// Issue signs a certificate for name (its common name and first DNS
// name) with pub, usable both as server and as client certificate, valid
// for the extra DNS names and addresses given.
func (ca *ClusterCA) Issue(name string, pub crypto.PublicKey, dns []string, ips []net.IP) ([]byte, error) {
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: name, Organization: []string{"Sluice"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(leafValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    uniqueNames(append([]string{name}, dns...)), IPAddresses: ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, pub, ca.key)
	if err != nil {
		return nil, fmt.Errorf("issue certificate for %s: %w", name, err)
	}
	return pemBlock("CERTIFICATE", der), nil
}

// IssueController writes the controller's key and certificate (0600) to
// dir, issued anew at each start so that its names follow slurm.conf, and
// returns the controller's TLS identity.
func (ca *ClusterCA) IssueController(dir string, hosts []string) (*AgentTLS, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	var dns []string
	var ips []net.IP
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else if h != "" {
			dns = append(dns, h)
		}
	}
	certPEM, err := ca.Issue(ControllerCertName, &key.PublicKey, dns, ips)
	if err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(dir, CtldKeyFile), key); err != nil {
		return nil, err
	}
	if err := WritePrivateFile(filepath.Join(dir, CtldCertFile), certPEM); err != nil {
		return nil, err
	}
	return NewAgentTLS(ca.PEM, certPEM, key)
}

// AgentTLS is one party's TLS identity: its certificate and key, and the
// cluster CA its peers' certificates must chain to.
type AgentTLS struct {
	// Name is the certificate's common name (a node, or "ctld").
	Name  string
	CAPEM []byte
	pool  *x509.CertPool
	cert  tls.Certificate
	leaf  *x509.Certificate
}

// NewAgentTLS builds an identity from the CA certificate and the party's
// certificate (PEM) and key.
func NewAgentTLS(caPEM, certPEM []byte, key crypto.Signer) (*AgentTLS, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in the cluster CA file")
	}
	leaf, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, err
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
		return nil, fmt.Errorf("certificate of %s: %w", leaf.Subject.CommonName, err)
	}
	return &AgentTLS{Name: leaf.Subject.CommonName, CAPEM: caPEM, pool: pool, leaf: leaf,
		cert: tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}}, nil
}

// Certificate is the party's certificate and key.
func (t *AgentTLS) Certificate() tls.Certificate { return t.cert }

// NotAfter is when the party's certificate expires.
func (t *AgentTLS) NotAfter() time.Time { return t.leaf.NotAfter }

// ServerConfig is the TLS configuration of a listener for agent traffic:
// a client certificate is verified against the cluster CA when given;
// whether one is required is decided per request (RequireAgentPeer), as
// srun's step I/O connections carry a step credential instead.
func (t *AgentTLS) ServerConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{t.cert},
		ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: t.pool}
}

// ClientConfig is the TLS configuration for reaching peer (a node name,
// or ControllerCertName): the peer's certificate must chain to the
// cluster CA and carry peer's name, whatever address it was reached at.
func (t *AgentTLS) ClientConfig(peer string) *tls.Config {
	cfg := PeerTLSConfig(t.pool, peer)
	cfg.Certificates = []tls.Certificate{t.cert}
	return cfg
}

// HTTPClient returns a client for agent traffic to peer.
func (t *AgentTLS) HTTPClient(peer string, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{Proxy: nil, TLSClientConfig: t.ClientConfig(peer),
		ForceAttemptHTTP2: false, MaxIdleConnsPerHost: 8, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second}}
}

// PeerTLSConfig verifies that the server is peer, certified by the CAs of
// pool (srun and sattach, which have no certificate of their own, use it
// alone). Host name verification is replaced by the name check: an agent
// is known by its node name, not by the address the controller was told.
func PeerTLSConfig(pool *x509.CertPool, peer string) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("agent TLS: the peer sent no certificate")
			}
			leaf := cs.PeerCertificates[0]
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter,
				KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				return fmt.Errorf("agent TLS: %s's certificate: %w", peer, err)
			}
			if leaf.Subject.CommonName != peer {
				return fmt.Errorf("agent TLS: expected %s, the certificate is %s's", peer, leaf.Subject.CommonName)
			}
			return nil
		}}
}

// CAPool parses a CA certificate (PEM) into a pool.
func CAPool(caPEM []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("agent TLS: invalid cluster CA certificate")
	}
	return pool, nil
}

// PeerName is the common name of r's verified client certificate ("" when
// r came without TLS or without a client certificate).
func PeerName(r *http.Request) string {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		return ""
	}
	return r.TLS.VerifiedChains[0][0].Subject.CommonName
}

// RequireAgentPeer wraps next (which must sit inside RequireSignature) so
// that a request is served only over TLS with a client certificate named
// after the request's signed sender, a name peers accepts (agents accept
// only the controller). Requests whose sender open accepts (the agents'
// srun and sattach stream credentials, the controller's enrollment) may
// come without a client certificate, and, when plain is true, without
// TLS.
func RequireAgentPeer(peers func(name string) bool, open func(r *http.Request, sender string) (plain bool, ok bool), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sender, peer := AgentNode(r.Context()), PeerName(r)
		switch {
		case peer != "" && peer != sender:
			WriteAgentError(w, http.StatusForbidden, fmt.Sprintf("the client certificate is %s's, the request claims to be %s's", peer, sender))
			return
		case peer != "" && !peers(peer):
			WriteAgentError(w, http.StatusForbidden, fmt.Sprintf("%s may not make this request", peer))
			return
		case peer == "":
			plain, ok := false, false
			if open != nil {
				plain, ok = open(r, sender)
			}
			if !ok || r.TLS == nil && !plain {
				WriteAgentError(w, http.StatusForbidden, ErrNoClientCert.Error())
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// NewAgentKey creates an agent's private key.
func NewAgentKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

// LoadIdentity reads a party's identity from dir (the CA, certificate
// and key files named), or returns an error wrapping os.ErrNotExist when
// one of them is missing.
func LoadIdentity(dir, certFile, keyFile string) (*AgentTLS, error) {
	caPEM, err := os.ReadFile(filepath.Join(dir, CACertFile))
	if err != nil {
		return nil, err
	}
	certPEM, err := os.ReadFile(filepath.Join(dir, certFile))
	if err != nil {
		return nil, err
	}
	key, err := loadKey(filepath.Join(dir, keyFile))
	if err != nil {
		return nil, err
	}
	return NewAgentTLS(caPEM, certPEM, key)
}

// SaveIdentity writes an agent's CA, certificate and key to dir (0600).
func SaveIdentity(dir string, caPEM, certPEM []byte, key *ecdsa.PrivateKey) error {
	if err := writeKey(filepath.Join(dir, AgentKeyFile), key); err != nil {
		return err
	}
	if err := WritePrivateFile(filepath.Join(dir, AgentCertFile), certPEM); err != nil {
		return err
	}
	return WritePrivateFile(filepath.Join(dir, CACertFile), caPEM)
}

// WritePrivateFile replaces path with data, mode 0600, through a
// temporary file so that a crash leaves the old or the new content.
func WritePrivateFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // an older tmp file kept its mode
		return err
	}
	return os.Rename(tmp, path)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return WritePrivateFile(path, pemBlock("PRIVATE KEY", der))
}

// loadKey reads a PKCS#8 key; like the cluster key, it must be private.
func loadKey(path string) (crypto.Signer, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("key %q: permissions %v are too open, want 0600", path, st.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("key %q: no PEM private key", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("key %q: %w", path, err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("key %q: not a signing key", path)
	}
	return s, nil
}

func parseCertPEM(data []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(b.Bytes)
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

func uniqueNames(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
