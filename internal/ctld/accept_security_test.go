package ctld

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
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

// Issue 7 acceptance, security: "a user cannot cancel, modify or hold
// another user's job, cannot submit as another uid, cannot run sacctmgr
// changes or scontrol update node without AdminLevel; a forged or expired
// token is refused", plus agents' cluster-key signatures. Everything goes
// through a real `sluice ctld` and `sluice noded`; the local user is the
// real `sluice` CLI run as nobody (uid 65534) through the real socket, so
// the controller learns the uid from SO_PEERCRED, not from the request.

// TestAcceptSecurity runs every refusal against one cluster in which root
// owns a running job, a held job and a job pending for its begin time.
func TestAcceptSecurity(t *testing.T) {
	t.Parallel()
	bin := acceptSluice(t)
	c := startAcceptCluster(t, bin, acceptOpts{nodes: 1, cpus: 4})
	gate := c.gate("S")
	jobs := rootJobs{running: c.submit(gate, "")}
	jobs.held = c.sbatchRoot("-H", "--wrap", "true")
	jobs.later = c.sbatchRoot("--begin=now+1hour", "--wrap", "true")
	c.waitJobs(60*time.Second, "root's job running", func(j map[uint32]api.JobInfo) bool {
		return j[jobs.running].State == "RUNNING"
	})
	t.Run("peer credentials", func(t *testing.T) { peerCredRefusals(t, c.in(t), jobs) })
	t.Run("tokens over TCP", func(t *testing.T) { tokenRefusals(t, c.in(t), jobs) })
	t.Run("agent cluster key", func(t *testing.T) { agentKeyRefusals(t, c.in(t), jobs) })
}

// rootJobs are root's jobs other users try to touch.
type rootJobs struct{ running, held, later uint32 }

func (c *acceptCluster) sbatchRoot(args ...string) uint32 {
	c.t.Helper()
	rc, out, errs := c.sluice(nil, append([]string{"sbatch", "--parsable"}, args...)...)
	id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 32)
	if rc != 0 || err != nil {
		c.t.Fatalf("sbatch %v as root: exit %d %q %q", args, rc, out, errs)
	}
	return uint32(id)
}

// checkUntouched asserts that root's jobs, node a1 and the accounts are
// as they were before another user tried to change them.
func (c *acceptCluster) checkUntouched(t *testing.T, jobs rootJobs, limit map[uint32]int64) {
	t.Helper()
	all := c.jobs()
	if j := all[jobs.running]; j.State != "RUNNING" {
		t.Errorf("root's running job %d is %s", jobs.running, j.State)
	}
	if j := all[jobs.held]; j.State != "PENDING" || j.Hold == "" {
		t.Errorf("root's held job %d is %s hold=%q", jobs.held, j.State, j.Hold)
	}
	if j := all[jobs.later]; j.State != "PENDING" || j.Hold != "" {
		t.Errorf("root's begin-time job %d is %s hold=%q", jobs.later, j.State, j.Hold)
	}
	for id, l := range limit {
		if all[id].TimeLimitSec != l || all[id].Nice != 0 {
			t.Errorf("root's job %d: time limit %d nice %d, was %d and 0", id, all[id].TimeLimitSec, all[id].Nice, l)
		}
	}
	for id, j := range all {
		if j.UID == 0 && id != jobs.running && id != jobs.held && id != jobs.later {
			t.Errorf("a job of uid 0 appeared: %d (%s)", id, j.Name)
		}
	}
	if n := c.node("a1"); n.StateShort != "mix" && n.StateShort != "alloc" {
		t.Errorf("node a1 is %s (%s)", n.State, n.Reason)
	}
	_, out, _ := c.sluice(nil, "sacctmgr", "-n", "-P", "show", "account", "format=Account")
	if strings.Contains(out, "evil") {
		t.Errorf("an account was added: %q", out)
	}
	_, out, _ = c.sluice(nil, "sacctmgr", "-n", "-P", "show", "user", "format=User,AdminLevel")
	if strings.Contains(out, "nobody|Admin") || strings.Contains(out, "nobody|Operator") {
		t.Errorf("nobody got an AdminLevel: %q", out)
	}
}

func peerCredRefusals(t *testing.T, c *acceptCluster, jobs rootJobs) {
	if os.Geteuid() != 0 {
		t.Skip("cross-uid checks need root, to run the client as user nobody (uid 65534) through the real socket")
	}
	nobodyName := "65534"
	if u, err := user.LookupId("65534"); err == nil {
		nobodyName = u.Username
	}
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	asNobody := func(args ...string) (int, string, string) { return c.runCLI(nobody, nil, args...) }
	limits := map[uint32]int64{}
	for id, j := range c.jobs() {
		limits[id] = j.TimeLimitSec
	}
	run, held, later := idStr(jobs.running), idStr(jobs.held), idStr(jobs.later)
	denied := "Access/permission denied"
	notOwner := "Invalid user id for job"               // Slurm 24.11's answer to scontrol update of another user's job
	nodeDenied := "slurm_update error: Invalid user id" // and to a non-admin's scontrol update node (oracle)
	refused := []struct {
		what string
		args []string
		want string
	}{
		{"cancel a running job", []string{"scancel", run}, denied},
		{"cancel a held job", []string{"scancel", held}, denied},
		{"cancel every job of root", []string{"scancel", "-u", "root"}, denied},
		{"signal a job", []string{"scancel", "--signal=KILL", run}, denied},
		// A hold or release of another user's job: "Invalid user id" (oracle).
		{"hold a pending job", []string{"scontrol", "hold", later}, notOwner},
		{"uhold a pending job", []string{"scontrol", "uhold", later}, notOwner},
		{"release a held job", []string{"scontrol", "release", held}, notOwner},
		{"requeue a running job", []string{"scontrol", "requeue", run}, denied},
		{"suspend a running job", []string{"scontrol", "suspend", run}, denied},
		{"lower a time limit", []string{"scontrol", "update", "JobId=" + later, "TimeLimit=5"}, notOwner},
		{"set nice", []string{"scontrol", "update", "JobId=" + later, "Nice=100"}, notOwner},
		{"modify a running job", []string{"scontrol", "update", "JobId=" + run, "TimeLimit=5"}, notOwner},
		// sbatch itself refuses --uid for non-root (Slurm's message); the
		// controller's own refusal is checked below with a raw request.
		{"submit as uid 0", []string{"sbatch", "--uid=0", "--wrap", "true"}, "--uid only permitted by root user"},
		{"submit as root by name", []string{"sbatch", "--uid=root", "--wrap", "true"}, "--uid only permitted by root user"},
		{"drain a node", []string{"scontrol", "update", "NodeName=a1", "State=DRAIN", "Reason=evil"}, nodeDenied},
		{"set a node down", []string{"scontrol", "update", "NodeName=a1", "State=DOWN", "Reason=evil"}, nodeDenied},
		{"get a token for root", []string{"scontrol", "token", "username=root"}, denied},
		{"sacctmgr add account", []string{"sacctmgr", "-i", "add", "account", "evil"}, ""},
		{"sacctmgr make itself admin", []string{"sacctmgr", "-i", "add", "user", nobodyName, "account=root", "adminlevel=Administrator"}, ""},
		{"sacctmgr modify root", []string{"sacctmgr", "-i", "modify", "user", "root", "set", "adminlevel=None"}, ""},
	}
	for _, r := range refused {
		rc, out, errs := asNobody(r.args...)
		if rc == 0 || !strings.Contains(errs+out, r.want) {
			t.Errorf("nobody: %s (%v): exit %d stdout %q stderr %q; want a refusal containing %q", r.what, r.args, rc, out, errs, r.want)
		} else {
			t.Logf("nobody: %s: exit %d: %s", r.what, rc, strings.TrimSpace(errs+out))
		}
	}
	// A client that skips sbatch's check and claims uid 0 (or user root)
	// in the request itself: the controller answers from the peer uid.
	raw := c.rawClient(t)
	for _, claim := range []string{"uid=0", "user=root", "uid=1,user=daemon"} {
		rc, out := raw(nobody, "submit", claim)
		if rc == 0 || !strings.Contains(out, denied) {
			t.Errorf("raw submit as nobody claiming %s: exit %d %q, want %q", claim, rc, out, denied)
		} else {
			t.Logf("raw submit as nobody claiming %s: %s", claim, out)
		}
	}
	c.checkUntouched(t, jobs, limits)

	// Controls: the refusals are about whose job it is and AdminLevel,
	// not a client that cannot work as nobody.
	if rc, out, errs := asNobody("squeue", "-h", "-o", "%i %u"); rc != 0 || !strings.Contains(out, run+" root") {
		t.Errorf("squeue as nobody: exit %d %q %q", rc, out, errs)
	}
	rc, out, errs := asNobody("sbatch", "--parsable", "-H", "--wrap", "true")
	own, err := strconv.ParseUint(strings.TrimSpace(out), 10, 32)
	if rc != 0 || err != nil {
		t.Fatalf("nobody submits a job: exit %d %q %q", rc, out, errs)
	}
	if j := c.jobs()[uint32(own)]; j.UID != 65534 {
		t.Errorf("nobody's job %d belongs to uid %d", own, j.UID)
	}
	if rc, out, errs := asNobody("scontrol", "update", "JobId="+idStr(uint32(own)), "TimeLimit=5"); rc != 0 {
		t.Errorf("nobody lowers its own job's limit: exit %d %q %q", rc, out, errs)
	}
	if rc, out, errs := asNobody("scancel", idStr(uint32(own))); rc != 0 {
		t.Errorf("nobody cancels its own job: exit %d %q %q", rc, out, errs)
	}
	c.waitJobs(30*time.Second, "nobody's job cancelled", func(j map[uint32]api.JobInfo) bool { return j[uint32(own)].State == "CANCELLED" })

	// With AdminLevel granted by root, the same commands go through.
	for _, args := range [][]string{{"sacctmgr", "-i", "add", "account", "ops"},
		{"sacctmgr", "-i", "add", "user", nobodyName, "account=ops", "adminlevel=Administrator"}} {
		if rc, out, errs := c.sluice(nil, args...); rc != 0 {
			t.Fatalf("root: %v: exit %d %q %q", args, rc, out, errs)
		}
	}
	if rc, out, errs := asNobody("scontrol", "update", "NodeName=a1", "State=DRAIN", "Reason=admin"); rc != 0 {
		t.Errorf("nobody as Administrator drains a1: exit %d %q %q", rc, out, errs)
	}
	c.wait(30*time.Second, "a1 draining", func() bool { return strings.Contains(c.node("a1").State, "DRAIN") })
	if rc, out, errs := asNobody("scontrol", "update", "NodeName=a1", "State=RESUME"); rc != 0 {
		t.Errorf("nobody as Administrator resumes a1: exit %d %q %q", rc, out, errs)
	}
	c.wait(30*time.Second, "a1 resumed", func() bool { return !strings.Contains(c.node("a1").State, "DRAIN") })
	if rc, out, errs := asNobody("sacctmgr", "-i", "add", "account", "opsteam"); rc != 0 {
		t.Errorf("nobody as Administrator adds an account: exit %d %q %q", rc, out, errs)
	}
	// Revoked, the privilege is gone at once.
	if rc, out, errs := c.sluice(nil, "sacctmgr", "-i", "modify", "user", nobodyName, "set", "adminlevel=None"); rc != 0 {
		t.Fatalf("root revokes nobody's AdminLevel: exit %d %q %q", rc, out, errs)
	}
	if rc, _, errs := asNobody("scontrol", "update", "NodeName=a1", "State=DRAIN", "Reason=evil"); rc == 0 || !strings.Contains(errs, "slurm_update error: Invalid user id") {
		t.Errorf("nobody drains a1 after its AdminLevel was revoked: exit %d %q", rc, errs)
	}
	c.checkUntouched(t, jobs, limits)
}

// rawClient copies the test binary where another user can run it and
// returns a runner of its accept-raw-client mode (see init below) as cred.
func (c *acceptCluster) rawClient(t *testing.T) func(cred *syscall.Credential, args ...string) (int, string) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(c.dir, "rawclient")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(c.state, api.SocketFile)
	return func(cred *syscall.Credential, args ...string) (int, string) {
		cmd := exec.Command(bin, append([]string{acceptRawClient, sock, c.work}, args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, err := cmd.CombinedOutput()
		rc := 0
		if ee, ok := err.(*exec.ExitError); ok {
			rc = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("raw client: %v", err)
		}
		return rc, strings.TrimSpace(string(out))
	}
}

// acceptRawClient is the test binary's client mode: it sends one request
// on the controller's socket as whoever runs it, with whatever identity
// claims the arguments ask for, bypassing the CLI's own checks.
const acceptRawClient = "accept-raw-client"

func init() {
	if len(os.Args) > 4 && os.Args[1] == acceptRawClient {
		os.Exit(rawClientMain(os.Args[2], os.Args[3], os.Args[4], os.Args[5:]))
	}
}

func rawClientMain(sock, work, op string, args []string) int {
	cl := api.NewUnixClient(sock)
	switch op {
	case "submit":
		spec := api.JobSpec{Name: "claim", Script: "#!/bin/sh\ntrue\n", WorkDir: work, Hold: true}
		for _, claim := range strings.Split(strings.Join(args, ","), ",") {
			k, v, _ := strings.Cut(claim, "=")
			switch k {
			case "uid":
				n, _ := strconv.ParseUint(v, 10, 32)
				u := uint32(n)
				spec.UID = &u
			case "user":
				spec.User = v
			}
		}
		res, err := cl.Submit(context.Background(), api.SubmitRequest{Spec: spec})
		if err != nil {
			os.Stdout.WriteString(err.Error())
			return 1
		}
		os.Stdout.WriteString("submitted " + strconv.FormatUint(uint64(res.JobID), 10))
	}
	return 0
}

func tokenRefusals(t *testing.T, c *acceptCluster, jobs rootJobs) {
	addr := "127.0.0.1:" + strconv.Itoa(c.port)
	key, err := os.ReadFile(filepath.Join(c.state, JWTKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	jwtKey, err := hex.DecodeString(strings.TrimSpace(string(key)))
	if err != nil {
		t.Fatal(err)
	}
	// A real token for nobody, from `scontrol token` run by root (not
	// root: for the test's own user).
	tokUser := "nobody"
	if os.Geteuid() != 0 {
		me, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		tokUser = me.Username
	}
	rc, out, errs := c.sluice(nil, "scontrol", "token", "username="+tokUser, "lifespan=600")
	tok, ok := strings.CutPrefix(strings.TrimSpace(out), "SLURM_JWT=")
	if rc != 0 || !ok {
		t.Fatalf("scontrol token username=%s: exit %d %q %q", tokUser, rc, out, errs)
	}
	now := time.Now()
	otherKey := make([]byte, 32)
	rand.Read(otherKey)
	forged, _, _ := IssueToken(otherKey, "root", now, time.Hour)
	expired, _, _ := IssueToken(jwtKey, "root", now.Add(-2*time.Hour), time.Hour)
	tokens := []struct {
		name, tok string
	}{
		{"forged (signed with another key)", forged},
		{"expired (the cluster's key, ended an hour ago)", expired},
		{"nobody's token rewritten to say root", retarget(t, tok, "root")},
		{"unsigned (alg none)", unsignedToken("root", now.Add(time.Hour))},
		{"malformed", "not.a.token"},
	}
	for _, tc := range tokens {
		_, err := api.NewTCPClient(addr, tc.tok).Ping(context.Background())
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
			t.Errorf("%s token: ping got %v, want HTTP 401", tc.name, err)
		}
		// The real CLI, as root, with the bad token: refused, nothing done.
		rc, out, errs := c.sluice([]string{"SLURM_JWT=" + tc.tok}, "scancel", idStr(jobs.running))
		if rc == 0 || !strings.Contains(errs, "Invalid authentication credential") {
			t.Errorf("scancel with a %s token: exit %d %q %q", tc.name, rc, out, errs)
		} else {
			t.Logf("%s token: %s", tc.name, strings.TrimSpace(errs))
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("cross-user token checks need root (to get a token for nobody); forged, expired, retargeted and unsigned tokens were refused")
	}
	// The valid token identifies nobody, whoever runs the client.
	w, err := api.NewTCPClient(addr, tok).Ping(context.Background())
	if err != nil || w.User != "nobody" || w.Via != "token" {
		t.Errorf("nobody's token: %+v %v", w, err)
	}
	rc, out, errs = c.sluice([]string{"SLURM_JWT=" + tok}, "scancel", idStr(jobs.running))
	if rc == 0 || !strings.Contains(errs, "Access/permission denied") {
		t.Errorf("scancel root's job with nobody's token: exit %d %q %q", rc, out, errs)
	}
	rc, out, errs = c.sluice([]string{"SLURM_JWT=" + tok}, "scontrol", "update", "NodeName=a1", "State=DRAIN", "Reason=evil")
	if rc == 0 || !strings.Contains(errs, "slurm_update error: Invalid user id") {
		t.Errorf("drain with nobody's token: exit %d %q %q", rc, out, errs)
	}
	// The client process is root here, so sbatch's own --uid check lets
	// it through: the controller must go by the token (nobody).
	rc, out, errs = c.sluice([]string{"SLURM_JWT=" + tok}, "sbatch", "--uid=0", "-H", "--wrap", "true")
	if rc == 0 || !strings.Contains(errs, "Access/permission denied") {
		t.Errorf("sbatch --uid=0 run by root with nobody's token: exit %d %q %q", rc, out, errs)
	}
	rc, out, errs = c.sluice([]string{"SLURM_JWT=" + tok}, "sbatch", "--parsable", "-H", "--wrap", "true")
	if id, err := strconv.ParseUint(strings.TrimSpace(out), 10, 32); rc != 0 || err != nil {
		t.Errorf("sbatch with nobody's token: exit %d %q %q", rc, out, errs)
	} else if j := c.jobs()[uint32(id)]; j.UID != 65534 {
		t.Errorf("job submitted with nobody's token by a root process belongs to uid %d", j.UID)
	}
	rc, out, errs = c.sluice([]string{"SLURM_JWT=" + tok}, "sacctmgr", "-i", "add", "account", "evil")
	if rc == 0 || !strings.Contains(errs, "Only admins/operators/coordinators can add accounts") { // Slurm 24.11's refusal
		t.Errorf("sacctmgr add account with nobody's token: exit %d %q %q", rc, out, errs)
	}
	if j := c.jobs()[jobs.running]; j.State != "RUNNING" {
		t.Errorf("root's job is %s after the token attempts", j.State)
	}
}

// retarget rewrites a token's user claim without re-signing it.
func retarget(t *testing.T, tok, user string) string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q", tok)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{}
	json.Unmarshal(payload, &claims)
	claims["sun"] = user
	payload, _ = json.Marshal(claims)
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

func unsignedToken(user string, exp time.Time) string {
	enc := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	return enc(map[string]string{"alg": "none", "typ": "JWT"}) + "." + enc(map[string]any{"sun": user, "exp": exp.Unix()}) + "."
}

func agentKeyRefusals(t *testing.T, c *acceptCluster, jobs rootJobs) {
	ctx := context.Background()
	ctldURL := "http://127.0.0.1:" + strconv.Itoa(c.port)
	key, err := api.LoadClusterKey(filepath.Join(c.state, api.ClusterKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	otherKey := make([]byte, 32)
	rand.Read(otherKey)
	unauthorized := func(what string, err error) {
		t.Helper()
		var ae *api.AgentError
		if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
			t.Errorf("%s: got %v, want HTTP 401", what, err)
		} else {
			t.Logf("%s: %v", what, err)
		}
	}
	// An agent impostor: wrong key.
	fake := api.NewControllerClient(ctldURL, otherKey, "a1", nil)
	_, err = fake.Register(ctx, api.RegisterRequest{Node: api.NodeInfo{Name: "a1", Addr: "http://127.0.0.1:1",
		Resources: api.NodeResources{CPUs: 64, RealMemoryMB: 1 << 20}}})
	unauthorized("register a1 signed with another key", err)
	_, err = fake.Heartbeat(ctx, api.Heartbeat{Node: "a1", Time: time.Now()})
	unauthorized("heartbeat signed with another key", err)
	err = fake.ReportEvents(ctx, api.JobEvents{Events: []api.JobEvent{{Node: "a1", Job: api.JobStatus{JobID: jobs.running, State: "COMPLETED"}}}})
	unauthorized("report root's running job ended, signed with another key", err)
	// The right key, but a body other than the one signed, or an old
	// signature replayed.
	body := []byte(`{"node":"a1","time":"` + time.Now().UTC().Format(time.RFC3339) + `"}`)
	post := func(what string, signed, sent []byte, at time.Time) {
		req, _ := http.NewRequest(http.MethodPost, ctldURL+api.PathAgentHeartbeat, bytes.NewReader(sent))
		req.Header.Set("Content-Type", "application/json")
		api.SignRequest(req, key, "a1", signed, at)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", what, resp.StatusCode)
		}
	}
	post("heartbeat with a body other than the signed one", body, bytes.Replace(body, []byte("a1"), []byte("a2"), 1), time.Now())
	post("heartbeat signed an hour ago (replay)", body, body, time.Now().Add(-time.Hour))
	// The agent refuses a controller impostor the same way (over TLS
	// without a certificate: the signature is checked first).
	agentURL := c.node("a1").Addr
	anyAgent := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	impostor := api.NewAgentClient(agentURL, otherKey, anyAgent)
	_, err = impostor.Jobs(ctx)
	unauthorized("list a1's jobs signed with another key", err)
	_, err = impostor.Terminate(ctx, jobs.running, api.TerminateRequest{})
	unauthorized("terminate root's job on a1 signed with another key", err)
	// The cluster key without the controller's certificate is not enough.
	var ae *api.AgentError
	if _, err := api.NewAgentClient(agentURL, key, anyAgent).Jobs(ctx); !errors.As(err, &ae) || ae.Status != http.StatusForbidden {
		t.Errorf("a1's jobs with the cluster key but no certificate: got %v, want HTTP 403", err)
	}
	// Control: with the cluster key and the controller's certificate the
	// agent answers.
	ctld, err := api.LoadIdentity(c.state, api.CtldCertFile, api.CtldKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	if js, err := api.NewAgentClient(agentURL, key, ctld.HTTPClient("a1", 10*time.Second)).Jobs(ctx); err != nil || len(js) == 0 {
		t.Errorf("a1's jobs with the cluster key: %v %v", js, err)
	}
	if j := c.jobs()[jobs.running]; j.State != "RUNNING" {
		t.Errorf("root's job is %s after the impostors", j.State)
	}
	if n := c.node("a1"); n.CPUs != 4 || n.Addr != agentURL {
		t.Errorf("node a1 changed: %d CPUs at %s", n.CPUs, n.Addr)
	}
}
