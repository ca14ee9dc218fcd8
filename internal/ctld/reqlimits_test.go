package ctld

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/testusers"
)

// limitsCtl starts a controller with no agents on TCP and the socket,
// with a short request timeout and a small per-user request bound.
func limitsCtl(t *testing.T, requestTimeout time.Duration) *Controller {
	t.Helper()
	dir := t.TempDir()
	ctl, err := New(context.Background(), Options{Conf: testConf(t, dir, 1, ""), StateDir: dir, Socket: shortSocket(t),
		Listen: "127.0.0.1:0", Logger: quietLogger(), RequestTimeout: requestTimeout, MaxUserRequests: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })
	return ctl
}

// slowRequest sends a request's headers and the first byte of a body
// that never comes; it returns the connection.
func slowRequest(t *testing.T, addr, token string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: 1000\r\n\r\n{", api.PathSubmit, token)
	return conn
}

// TestRequestLimits is issue 17's finding 5: a request body sent slowly
// is cut off, one user cannot hold more than the bounded number of
// requests (Slurm's rate limit message; another user is still served),
// an oversized body is refused, and so are a job name, comment or
// wckey over Slurm's 1024 characters and an environment no kernel
// would exec; a newline in a name is accepted, as by Slurm.
func TestRequestLimits(t *testing.T) {
	t.Parallel()
	testusers.Require(t, "alice", "bob")
	ctl := limitsCtl(t, 500*time.Millisecond)
	token := func(ctl *Controller, user string) string {
		s, _, err := IssueToken(ctl.jwtKey, user, time.Now(), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tok := func(user string) string { return token(ctl, user) }
	alice, bob := api.NewTCPClient(ctl.Addr(), tok("alice")), api.NewTCPClient(ctl.Addr(), tok("bob"))
	ctx := context.Background()

	t.Run("slow body timed out", func(t *testing.T) {
		conn := slowRequest(t, ctl.Addr(), tok("alice"))
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		start := time.Now()
		_, err := io.ReadAll(conn) // the server answers or closes once its timeout passes
		if err != nil || time.Since(start) > 3*time.Second {
			t.Fatalf("slow request not cut off: %v after %v", err, time.Since(start))
		}
	})
	t.Run("requests per user", func(t *testing.T) {
		for i := 0; i < 3; i++ {
			slowRequest(t, ctl.Addr(), tok("alice"))
		}
		time.Sleep(100 * time.Millisecond)
		_, err := alice.Ping(ctx)
		if err == nil || !strings.Contains(err.Error(), "Rate limit exceeded, please retry momentarily") {
			t.Fatalf("alice's 4th request: %v", err)
		}
		if _, err := bob.Ping(ctx); err != nil {
			t.Fatalf("bob while alice is at her limit: %v", err)
		}
		time.Sleep(time.Second) // the slow requests time out
		if _, err := alice.Ping(ctx); err != nil {
			t.Fatalf("alice after her slow requests timed out: %v", err)
		}
	})
	t.Run("body size", func(t *testing.T) {
		big := strings.Repeat("x", int(ctl.bodyLimit())+10)
		req, _ := http.NewRequest("POST", "http://"+ctl.Addr()+api.PathSubmit,
			strings.NewReader(`{"spec":{"script":"`+big+`"}}`))
		req.Header.Set("Authorization", "Bearer "+tok("alice"))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(bufio.NewReader(res.Body))
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), "Request too large") {
			t.Fatalf("oversized body: %d %s", res.StatusCode, body)
		}
	})
	// The field limits are checked on a controller with the default
	// request timeout: a 3 MiB environment sent under the race detector
	// beside other tests took more than the half second above.
	roomy := limitsCtl(t, DefaultRequestTimeout)
	alice = api.NewTCPClient(roomy.Addr(), token(roomy, "alice"))
	spec := func(mod func(*api.JobSpec)) api.JobSpec {
		s := api.JobSpec{Script: "#!/bin/sh\ntrue\n", WorkDir: "/tmp", Name: "lim", Partitions: []string{"debug"}, Hold: true}
		mod(&s)
		return s
	}
	long := strings.Repeat("a", 1025)
	for _, tc := range []struct {
		name string
		mod  func(*api.JobSpec)
		want string // "" accepted
	}{
		{"name 1024", func(s *api.JobSpec) { s.Name = long[:1024] }, ""},
		{"name 1025", func(s *api.JobSpec) { s.Name = long }, errScriptTooLong},
		{"comment 1025", func(s *api.JobSpec) { s.Comment = long }, errScriptTooLong},
		{"wckey 1025", func(s *api.JobSpec) { s.WCKey = long }, errScriptTooLong},
		{"output path 4096", func(s *api.JobSpec) { s.Output = "/tmp/" + strings.Repeat("o", 4091) }, errScriptTooLong},
		{"newline in name", func(s *api.JobSpec) { s.Name = "a\nb" }, ""}, // as Slurm; printed escaped
		{"environment 3 MiB", func(s *api.JobSpec) {
			s.Environment = []string{"BIG=" + strings.Repeat("e", 3<<20)}
		}, "Job environment too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := alice.Submit(ctx, api.SubmitRequest{Spec: spec(tc.mod)})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("submit: %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("update name", func(t *testing.T) {
		res, err := alice.Submit(ctx, api.SubmitRequest{Spec: spec(func(*api.JobSpec) {})})
		if err != nil {
			t.Fatal(err)
		}
		err = alice.UpdateJob(ctx, api.JobUpdateRequest{Job: idStr(res.JobID), Set: map[string]string{"JobName": long}})
		if err == nil || !strings.Contains(err.Error(), errScriptTooLong) {
			t.Fatalf("update JobName of 1025 characters: %v", err)
		}
	})
}
