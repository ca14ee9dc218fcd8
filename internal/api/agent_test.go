package api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func signedReq(t *testing.T, key []byte, body string, at time.Time) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/agent/v1/jobs?x=1", strings.NewReader(body))
	SignRequest(r, key, "node01", []byte(body), at)
	return r
}

func TestVerifyRequest(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	cases := []struct {
		name     string
		req      func() *http.Request
		body     string
		wantNode string
	}{
		{"valid", func() *http.Request { return signedReq(t, testKey, `{"a":1}`, now) }, `{"a":1}`, "node01"},
		{"body changed", func() *http.Request { return signedReq(t, testKey, `{"a":1}`, now) }, `{"a":2}`, ""},
		{"wrong key", func() *http.Request { return signedReq(t, []byte("another key another key"), `{}`, now) }, `{}`, ""},
		{"too old", func() *http.Request { return signedReq(t, testKey, `{}`, now.Add(-6*time.Minute)) }, `{}`, ""},
		{"from the future", func() *http.Request { return signedReq(t, testKey, `{}`, now.Add(6*time.Minute)) }, `{}`, ""},
		{"unsigned", func() *http.Request { return httptest.NewRequest(http.MethodPost, "/x", nil) }, ``, ""},
		{"path changed", func() *http.Request {
			r := signedReq(t, testKey, `{}`, now)
			r.URL.Path = "/agent/v1/register"
			return r
		}, `{}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			node, err := VerifyRequest(c.req(), testKey, []byte(c.body), now)
			if c.wantNode == "" {
				if !errors.Is(err, ErrBadSignature) {
					t.Fatalf("want ErrBadSignature, got node %q err %v", node, err)
				}
				return
			}
			if err != nil || node != c.wantNode {
				t.Fatalf("got node %q err %v, want %q", node, err, c.wantNode)
			}
		})
	}
}

func TestClusterKeyFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ClusterKeyFile)
	k1, err := EnsureClusterKey(p)
	if err != nil || len(k1) != 32 {
		t.Fatalf("EnsureClusterKey: %v (len %d)", err, len(k1))
	}
	k2, err := EnsureClusterKey(p)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("second EnsureClusterKey returned a different key (err %v)", err)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadClusterKey(p); err == nil || !strings.Contains(err.Error(), "too open") {
		t.Fatalf("world-readable key accepted: %v", err)
	}
	bad := filepath.Join(dir, "bad.key")
	os.WriteFile(bad, []byte("short"), 0o600)
	if _, err := LoadClusterKey(bad); err == nil {
		t.Fatal("short key accepted")
	}
}

// TestClientsSignAndServerVerifies runs a controller double behind
// RequireSignature and checks that the agent's client gets through with the
// right key and is refused with another.
func TestClientsSignAndServerVerifies(t *testing.T) {
	var got Heartbeat
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathAgentHeartbeat, func(w http.ResponseWriter, r *http.Request) {
		if AgentNode(r.Context()) != "n1" {
			WriteAgentError(w, http.StatusForbidden, "wrong node")
			return
		}
		if err := decodeJSON(r, &got); err != nil {
			WriteAgentError(w, http.StatusBadRequest, err.Error())
			return
		}
		WriteAgentJSON(w, http.StatusOK, HeartbeatResponse{Reregister: true})
	})
	srv := httptest.NewServer(RequireSignature(testKey, nil, mux))
	defer srv.Close()

	c := NewControllerClient(srv.URL, testKey, "n1", nil)
	resp, err := c.Heartbeat(context.Background(), Heartbeat{Node: "n1"})
	if err != nil || !resp.Reregister || got.Node != "n1" {
		t.Fatalf("heartbeat: resp %+v err %v got %+v", resp, err, got)
	}
	bad := NewControllerClient(srv.URL, []byte("not the cluster key at all"), "n1", nil)
	_, err = bad.Heartbeat(context.Background(), Heartbeat{Node: "n1"})
	var ae *AgentError
	if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("forged key: want 401, got %v", err)
	}
}

func FuzzVerifyRequestHeader(f *testing.F) {
	f.Add("v1 node=n,ts=1800000000,sig=00")
	f.Add("v1 ,,,=")
	f.Fuzz(func(t *testing.T, h string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set(SignatureHeader, h)
		if _, err := VerifyRequest(r, testKey, nil, time.Unix(1_800_000_000, 0)); err == nil {
			t.Fatalf("header %q verified without a valid signature", h)
		}
	})
}
