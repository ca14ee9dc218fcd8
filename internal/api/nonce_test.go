package api

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSignedRequestReplay is issue 17's finding 9: a signed agent request
// captured on the network and sent again within the clock-skew window
// is refused (its nonce was used), while a fresh signature of the same
// request passes; a v1 signature (no nonce) is refused.
func TestSignedRequestReplay(t *testing.T) {
	calls := 0
	h := RequireSignature(testKey, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		WriteAgentJSON(w, http.StatusOK, struct{}{})
	}))
	send := func(header string) (int, string) {
		r := httptest.NewRequest(http.MethodPost, "/agent/v1/jobs/7/terminate", strings.NewReader(`{}`))
		r.Header.Set(SignatureHeader, header)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		body, _ := io.ReadAll(w.Result().Body)
		return w.Code, string(body)
	}
	sign := func() string {
		r := httptest.NewRequest(http.MethodPost, "/agent/v1/jobs/7/terminate", nil)
		SignRequest(r, testKey, "ctld", []byte(`{}`), time.Now())
		return r.Header.Get(SignatureHeader)
	}
	captured := sign()
	if code, body := send(captured); code != http.StatusOK {
		t.Fatalf("first: %d %s", code, body)
	}
	if code, body := send(captured); code != http.StatusUnauthorized || !strings.Contains(body, "replayed") {
		t.Fatalf("replay: %d %s", code, body)
	}
	if code, body := send(sign()); code != http.StatusOK {
		t.Fatalf("a fresh signature: %d %s", code, body)
	}
	if calls != 2 {
		t.Fatalf("handler ran %d times, want 2", calls)
	}
	v1 := strings.Replace(strings.Replace(captured, "v2 ", "v1 ", 1), ",nonce=", ",x=", 1)
	r := httptest.NewRequest(http.MethodPost, "/agent/v1/jobs/7/terminate", nil)
	r.Header.Set(SignatureHeader, v1)
	if _, err := VerifyRequest(r, testKey, []byte(`{}`), time.Now()); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("v1 header: %v", err)
	}
}
