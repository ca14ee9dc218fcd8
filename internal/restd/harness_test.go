package restd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluice-hpc/sluice/internal/acct"
	"github.com/sluice-hpc/sluice/internal/api"
	"github.com/sluice-hpc/sluice/internal/conf"
	"github.com/sluice-hpc/sluice/internal/ctld"
	"github.com/sluice-hpc/sluice/internal/testusers"
)

// TestMain creates, as root, the local users the tests act as (a token's
// user must exist, as for slurmrestd).
func TestMain(m *testing.M) {
	testusers.EnsureAsRoot()
	os.Exit(m.Run())
}

// restCluster is a controller (no node agents: jobs stay pending) with
// the REST API in front of it, served as sluice ctld --rest-listen does.
type restCluster struct {
	t    testing.TB
	ctl  *ctld.Controller
	srv  *Server
	http *httptest.Server
	// root calls the controller's API as root over no socket.
	root *api.Client
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newRestCluster starts a controller on a fresh state directory.
func newRestCluster(t testing.TB) *restCluster {
	t.Helper()
	dir := t.TempDir()
	text := fmt.Sprintf(`ClusterName=resttest
SlurmctldHost=localhost
StateSaveLocation=%s
SlurmUser=root
SelectTypeParameters=CR_CPU
MinJobAge=300
NodeName=n[1-2] CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
`, dir)
	cfg, _, err := conf.Parse(filepath.Join(dir, "slurm.conf"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ctld.New(context.Background(), ctld.Options{Conf: cfg, Listen: "none", Logger: quiet(), StartMode: ctld.StartClear,
		Accounting: acct.NewMemStore()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	b := &InProcess{}
	h := c.Handler()
	b.Set(c.TokenHandler(), func(uid, gid uint32) http.Handler { return ctld.AsLocalUser(h, uid, gid) })
	s := New(b, quiet())
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return &restCluster{t: t, ctl: c, srv: s, http: ts, root: api.NewHandlerClient(ctld.AsLocalUser(h, 0, 0), "")}
}

// token is scontrol token username=user.
func (rc *restCluster) token(user string) string {
	rc.t.Helper()
	res, err := rc.root.Token(context.Background(), api.TokenRequest{Username: user})
	if err != nil {
		rc.t.Fatal(err)
	}
	return res.Token
}

// as is the headers of user's requests (user's own token).
type creds struct{ name, token string }

func (rc *restCluster) as(user string) creds {
	if user != "root" {
		testusers.Require(rc.t, user)
	}
	return creds{user, rc.token(user)}
}

// do sends a request and returns the status and the decoded body (nil
// when not JSON) and the raw body.
func (rc *restCluster) do(who creds, method, path string, body any) (int, map[string]any, string) {
	rc.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, rc.http.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if who.name != "" {
		req.Header.Set("X-SLURM-USER-NAME", who.name)
	}
	if who.token != "" {
		req.Header.Set("X-SLURM-USER-TOKEN", who.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		rc.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		m = nil
	}
	return resp.StatusCode, m, string(data)
}

// submit submits a sleeping batch job as who through REST and returns
// its id.
func (rc *restCluster) submit(who creds, job map[string]any) int {
	rc.t.Helper()
	if job == nil {
		job = map[string]any{}
	}
	job["current_working_directory"] = "/tmp"
	job["environment"] = []string{"PATH=/bin:/usr/bin"}
	code, m, raw := rc.do(who, "POST", "/slurm/v0.0.42/job/submit", map[string]any{"script": "#!/bin/sh\nsleep 300", "job": job})
	if code != 200 {
		rc.t.Fatalf("submit: %d %s", code, raw)
	}
	return int(m["job_id"].(float64))
}

// firstError is errors[0] of a reply (nil when none).
func firstError(m map[string]any) map[string]any {
	errs, _ := m["errors"].([]any)
	if len(errs) == 0 {
		return nil
	}
	e, _ := errs[0].(map[string]any)
	return e
}
