package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEnrollAnswerAuthenticated: an agent believes an enrollment answer
// only when the cluster key MACs it (so a man in the middle cannot hand it
// his own CA); the controller's answer gives a certificate for the node
// its signature names, chaining to the CA it sends.
func TestEnrollAnswerAuthenticated(t *testing.T) {
	ca, err := EnsureClusterCA(t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+PathAgentEnroll, HandleEnroll(ca, testKey, func(n string) bool { return n == "n1" }))
	real := httptest.NewServer(RequireSignature(testKey, nil, mux))
	defer real.Close()
	other, _ := EnsureClusterCA(t.TempDir(), "mitm")
	forged := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The impostor has no cluster key: it MACs with its own.
		HandleEnroll(other, []byte("mitm-key-0123456789abcdef0123456"), func(string) bool { return true })(w,
			r.WithContext(context.WithValue(r.Context(), agentNodeKey{}, "n1")))
	}))
	defer forged.Close()

	key, _ := NewAgentKey()
	caPEM, certPEM, err := Enroll(context.Background(), real.URL, testKey, "n1", key, []string{"host1"})
	if err != nil {
		t.Fatalf("enroll: %v", err)
	}
	id, err := NewAgentTLS(caPEM, certPEM, key)
	if err != nil || id.Name != "n1" || string(caPEM) != string(ca.PEM) {
		t.Fatalf("identity %+v, err %v", id, err)
	}
	if _, _, err := Enroll(context.Background(), forged.URL, testKey, "n1", key, nil); err == nil || !strings.Contains(err.Error(), "not authenticated by the cluster key") {
		t.Fatalf("forged answer: %v", err)
	}
	if _, _, err := Enroll(context.Background(), real.URL, testKey, "n2", key, nil); err == nil || !strings.Contains(err.Error(), "HTTP 403") {
		t.Fatalf("unknown node: %v", err)
	}
}
