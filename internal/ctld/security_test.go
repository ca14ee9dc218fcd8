package ctld

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Users of the security tests; the identities are injected the way the
// listeners set them (peer credentials or a verified token).
var (
	alice = Who{UID: 1001, GID: 1001, User: "alice", Group: "alice", Via: "socket"}
	bob   = Who{UID: 1002, GID: 1002, User: "bob", Group: "bob", Via: "socket"}
	root  = Who{UID: 0, GID: 0, User: "root", Group: "root", Via: "socket"}
)

// as calls the client API as who and decodes the answer into out.
func (c *cluster) as(who Who, method, path string, in, out any) (int, string) {
	c.t.Helper()
	var body bytes.Buffer
	if in != nil {
		json.NewEncoder(&body).Encode(in)
	}
	req := httptest.NewRequest(method, path, &body).WithContext(WithWho(context.Background(), who))
	rec := httptest.NewRecorder()
	c.ctl.Handler().ServeHTTP(rec, req)
	if out != nil && rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			c.t.Fatalf("decode %s: %v", path, err)
		}
	}
	var e api.Error
	json.Unmarshal(rec.Body.Bytes(), &e)
	c.lastReason = e.Reason
	return rec.Code, e.Message
}

func (c *cluster) submitAs(who Who, s api.JobSpec) uint32 {
	c.t.Helper()
	var res api.SubmitResponse
	if code, msg := c.as(who, "POST", api.PathSubmit, api.SubmitRequest{Spec: s}, &res); code != 200 {
		c.t.Fatalf("submit as %s: %d %s", who.User, code, msg)
	}
	return res.JobID
}

func (c *cluster) controlAs(who Who, op, job string) string {
	c.t.Helper()
	var res api.JobControlResponse
	if code, msg := c.as(who, "POST", api.PathJobControl, api.JobControlRequest{Op: op, Jobs: []string{job}}, &res); code != 200 {
		return msg
	}
	if len(res.Results) != 1 {
		c.t.Fatalf("%s %s: %+v", op, job, res)
	}
	return res.Results[0].Error
}

func TestUsersActOnlyOnTheirOwnJobs(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	held := func(s *api.JobSpec) { s.Hold = true; s.TimeLimitSec = 600 }
	id := idStr(c.submitAs(alice, c.wrap("true", held)))
	denied := "Access/permission denied"
	// Slurm 24.11 answers a hold or release of another user's job with
	// "Invalid user id" and a cancel or requeue with "Access/permission
	// denied" (test/oracle holds-begin and requeue scenarios).
	for op, want := range map[string]string{api.OpCancel: denied, api.OpRequeue: denied,
		api.OpHold: "Invalid user id", api.OpUHold: "Invalid user id", api.OpRelease: "Invalid user id"} {
		if got := c.controlAs(bob, op, id); got != want {
			t.Errorf("bob %s alice's job: %q, want %q", op, got, want)
		}
	}
	for _, op := range []string{api.OpSuspend, api.OpResume} {
		if got := c.controlAs(alice, op, id); got != denied {
			t.Errorf("alice %s (operators only): %q, want %q", op, got, denied)
		}
	}
	updates := []struct {
		who  Who
		set  map[string]string
		code int
	}{
		{bob, map[string]string{"TimeLimit": "5"}, 403},
		{alice, map[string]string{"TimeLimit": "20"}, 200}, // a pending job's limit may rise (Slurm 24.11)
		{alice, map[string]string{"SiteFactor": "10"}, 403},
		{alice, map[string]string{"Nice": "-5"}, 403},
		{alice, map[string]string{"TimeLimit": "5", "Nice": "10"}, 200},
		{root, map[string]string{"Priority": "100"}, 400}, // held: release it first
		{root, map[string]string{"TimeLimit": "60"}, 200},
	}
	for _, u := range updates {
		if code, msg := c.as(u.who, "POST", api.PathJobUpdate, api.JobUpdateRequest{Job: id, Set: u.set}, nil); code != u.code {
			t.Errorf("%s update %v: %d %q, want %d", u.who.User, u.set, code, msg, u.code)
		}
	}
	jid, _ := strconv.ParseUint(id, 10, 32)
	// A priority does not lift a hold: Slurm refuses it for a held job.
	if j := c.job(uint32(jid)); j.TimeLimitSec != 3600 || j.Nice != 10 || j.Hold == "" {
		t.Errorf("after updates: limit %d nice %d hold %q", j.TimeLimitSec, j.Nice, j.Hold)
	}
	later := idStr(c.submitAs(alice, c.wrap("true", func(s *api.JobSpec) { s.Begin = "now+1hour" })))
	if code, msg := c.as(alice, "POST", api.PathJobUpdate, api.JobUpdateRequest{Job: later, Set: map[string]string{"Priority": "100"}}, nil); code != 403 {
		t.Errorf("alice priority on her pending job: %d %q, want 403", code, msg)
	}
	id = idStr(c.submitAs(alice, c.wrap("true", held)))
	if got := c.controlAs(bob, api.OpCancel, id); got != denied {
		t.Errorf("bob cancel: %q", got)
	}
	if got := c.controlAs(root, api.OpCancel, id); got != "" {
		t.Errorf("root cancel: %q", got)
	}
	// scancel -u alice by bob: refused per job.
	var res api.JobControlResponse
	c.as(bob, "POST", api.PathJobControl, api.JobControlRequest{Op: api.OpCancel, Filter: api.JobFilter{User: "alice"}}, &res)
	for _, r := range res.Results {
		if r.Error != denied {
			t.Errorf("bob scancel -u alice: %+v", r)
		}
	}
}

func TestSubmitAsAnotherUserOnlyForRoot(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	uid := uint32(1001)
	spec := c.wrap("true", func(s *api.JobSpec) { s.UID = &uid; s.Hold = true })
	code, msg := c.as(bob, "POST", api.PathSubmit, api.SubmitRequest{Spec: spec}, nil)
	if code != 403 || !strings.Contains(msg, "Access/permission denied") {
		t.Errorf("bob --uid=1001: %d %q", code, msg)
	}
	spec.User = "alice"
	spec.UID = nil
	if code, _ := c.as(bob, "POST", api.PathSubmit, api.SubmitRequest{Spec: spec}, nil); code != 403 {
		t.Errorf("bob --uid=alice: %d", code)
	}
	spec.User, spec.UID = "", &uid
	id := c.submitAs(root, spec)
	if j := c.job(id); j.UID != 1001 {
		t.Errorf("root --uid=1001: job uid %d", j.UID)
	}
	// A user's claim in the body is ignored: the job is bob's.
	spec2 := c.wrap("true", func(s *api.JobSpec) { s.Hold = true })
	if j := c.job(c.submitAs(bob, spec2)); j.UID != bob.UID || j.User != "bob" {
		t.Errorf("bob's job owned by %s(%d)", j.User, j.UID)
	}
}

func TestNodeUpdateAndTokensNeedAdmin(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	drain := api.NodeUpdateRequest{Nodes: "n1", State: "DRAIN", Reason: "maintenance"}
	if code, msg := c.as(alice, "POST", api.PathNodeUpdate, drain, nil); code != 403 || msg != "Invalid user id" {
		t.Errorf("alice drains n1: %d %q, want Slurm's \"Invalid user id\"", code, msg)
	}
	if code, msg := c.as(root, "POST", api.PathNodeUpdate, api.NodeUpdateRequest{Nodes: "n1", State: "DRAIN"}, nil); code != 400 ||
		!strings.Contains(msg, "You must specify a reason") {
		t.Errorf("drain without reason: %d %q", code, msg)
	}
	if code, msg := c.as(root, "POST", api.PathNodeUpdate, drain, nil); code != 200 {
		t.Fatalf("root drains n1: %d %q", code, msg)
	}
	c.waitNodes("drain", 1)
	c.as(root, "POST", api.PathNodeUpdate, api.NodeUpdateRequest{Nodes: "n1", State: "RESUME"}, nil)
	c.waitNodes("idle", 1)
	if code, _ := c.as(alice, "POST", api.PathToken, api.TokenRequest{Username: "bob"}, nil); code != 403 {
		t.Errorf("alice gets bob's token: %d", code)
	}
	var tok api.TokenResponse
	if code, msg := c.as(alice, "POST", api.PathToken, api.TokenRequest{LifespanSec: 60}, &tok); code != 200 || tok.User != "alice" {
		t.Errorf("alice's own token: %d %q %+v", code, msg, tok)
	}
}

func TestTokensOverTCP(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	now := time.Now()
	good, _, _ := IssueToken(c.ctl.jwtKey, "root", now, time.Minute)
	forged, _, _ := IssueToken([]byte("not-the-cluster-jwt-key-0123456789"), "root", now, time.Minute)
	expired, _, _ := IssueToken(c.ctl.jwtKey, "root", now.Add(-time.Hour), time.Minute)
	cases := []struct {
		name, tok string
		ok        bool
	}{{"valid", good, true}, {"forged", forged, false}, {"expired", expired, false}, {"none", "", false},
		{"garbage", "abc.def.ghi", false}}
	for _, tc := range cases {
		w, err := api.NewTCPClient(c.ctl.Addr(), tc.tok).Ping(c.ctx())
		if tc.ok && (err != nil || w.User != "root" || w.Via != "token") {
			t.Errorf("%s token: %+v %v", tc.name, w, err)
		}
		if !tc.ok {
			ae, isAPI := err.(*api.Error)
			if !isAPI || ae.Status != 401 {
				t.Errorf("%s token: want 401, got %+v %v", tc.name, w, err)
			}
		}
	}
	// An agent request without the cluster key is refused too.
	resp, err := http.Post("http://"+c.ctl.Addr()+api.PathAgentRegister, "application/json", strings.NewReader(`{"node":{"name":"n1"}}`))
	if err != nil || resp.StatusCode != 401 {
		t.Errorf("unsigned agent registration: %v %v", resp.Status, err)
	}
}

// TestPeerCredentialsForReal runs a client as user nobody through the real
// socket (root only): the controller sees nobody's uid whatever the
// request says, and refuses to let nobody cancel root's job.
func TestPeerCredentialsForReal(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as nobody")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	id := c.submit(c.wrap("true", func(s *api.JobSpec) { s.Hold = true }))
	self, _ := os.Executable()
	dir, _ := os.MkdirTemp("", "ctldbin")
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "client")
	data, _ := os.ReadFile(self)
	os.WriteFile(bin, data, 0o755)
	run := func(args ...string) string {
		cmd := exec.Command(bin, append([]string{"ctld-test-client", c.ctl.Socket()}, args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		out, _ := cmd.CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	if got := run("whoami"); got != nobody.Username+" "+nobody.Uid {
		t.Errorf("whoami as nobody: %q", got)
	}
	if got := run("cancel", idStr(id)); got != "Access/permission denied" {
		t.Errorf("nobody cancels root's job: %q", got)
	}
	if j := c.job(id); j.State != "PENDING" {
		t.Errorf("root's job is %s", j.State)
	}
}

func init() {
	// The test binary doubles as a tiny client run under another uid by
	// TestPeerCredentialsForReal.
	if len(os.Args) > 2 && os.Args[1] == "ctld-test-client" {
		os.Exit(testClient(os.Args[2], os.Args[3:]))
	}
}

func testClient(sock string, args []string) int {
	cl := api.NewUnixClient(sock)
	ctx := context.Background()
	switch args[0] {
	case "whoami":
		w, err := cl.Ping(ctx)
		if err != nil {
			os.Stdout.WriteString(err.Error())
			return 1
		}
		os.Stdout.WriteString(w.User + " " + strconv.Itoa(int(w.UID)))
	case "cancel":
		res, err := cl.Control(ctx, api.JobControlRequest{Op: api.OpCancel, Jobs: args[1:]})
		if err != nil {
			os.Stdout.WriteString(err.Error())
			return 1
		}
		for _, r := range res.Results {
			os.Stdout.WriteString(r.Error)
		}
	}
	return 0
}

// TestReconfigureIsForAdministrators: a user's scontrol reconfigure is
// refused with "Invalid user id" (oracle: "slurm_reconfigure error:
// Invalid user id") and hands nothing to the daemon.
func TestReconfigureIsForAdministrators(t *testing.T) {
	t.Parallel()
	c := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1})
	if code, msg := c.as(alice, "POST", api.PathReconfigure, struct{}{}, &api.ReconfigureResponse{}); code != 403 || msg != "Invalid user id" {
		t.Errorf("alice reconfigure: %d %q", code, msg)
	}
	select {
	case <-c.ctl.Reconfigure():
		t.Error("a user's reconfigure reached the daemon")
	default:
	}
}

// TestMetricsEndpoints: with MetricsType=metrics/openmetrics the
// controller's port serves Slurm 25.11's metrics endpoints without
// authentication (as slurmctld); without it, or with PrivateData set
// (what users may not see of each other), it serves none.
func TestMetricsEndpoints(t *testing.T) {
	t.Parallel()
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, c := range []struct {
		extra  string
		served bool
	}{{"MetricsType=metrics/openmetrics\n", true}, {"", false}, {"MetricsType=metrics/openmetrics\nPrivateData=jobs\n", false}} {
		cl := newCluster(t, openTestSQLite(t), clusterOpts{nodes: 1, extra: c.extra})
		id := cl.submitAs(alice, cl.wrap("sleep 30"))
		cl.waitState(id, "RUNNING", 10*time.Second)
		code, body := get(cl.ctl.URL() + "/metrics/jobs")
		if served := code == 200 && strings.Contains(body, "slurm_jobs_running 1\n"); served != c.served {
			t.Errorf("%q: /metrics/jobs answered %d:\n%s", c.extra, code, body)
		}
		if c.served {
			if _, body := get(cl.ctl.URL() + "/metrics/scheduler"); !strings.Contains(body, "sluice_submit_latency_seconds_count 1\n") {
				t.Errorf("/metrics/scheduler:\n%s", body)
			}
		}
		cl.as(root, "POST", api.PathJobControl, api.JobControlRequest{Op: api.OpCancel, Jobs: []string{idStr(id)}}, &api.JobControlResponse{})
	}
}
