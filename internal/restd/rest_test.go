package restd

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// TestRESTAuth: slurmrestd's authentication answers (oracle, 24.11): no
// token is 401 "Authentication failure" in plain text on every path,
// /openapi/v3 included; a token whose user is not X-SLURM-USER-NAME
// still pings but every other call fails with error 1007 "Protocol
// authentication error" (HTTP 511), and so does a forged token; the
// /slurmdb paths, ping included, answer 7000 "Unable to connect to
// database" (HTTP 502); the user header may be left out.
func TestRESTAuth(t *testing.T) {
	rc := newRestCluster(t)
	alice := rc.as("alice")
	forged := creds{"alice", alice.token[:len(alice.token)-4] + "AAAA"}
	mismatch := creds{"bob", alice.token}
	cases := []struct {
		name       string
		who        creds
		path       string
		wantCode   int
		wantBody   string
		wantErrNum float64
	}{
		{"no token", creds{}, "/slurm/v0.0.42/ping", 401, "Authentication failure", 0},
		{"no token openapi", creds{}, "/openapi/v3", 401, "Authentication failure", 0},
		{"user only", creds{name: "alice"}, "/slurm/v0.0.42/jobs", 401, "Authentication failure", 0},
		{"forged token", forged, "/slurm/v0.0.42/jobs", 511, "", 1007},
		{"forged token ping", forged, "/slurm/v0.0.42/ping", 200, "", 0},
		{"forged token nodes", forged, "/slurm/v0.0.42/nodes", 511, "", 1007},
		{"garbage token", creds{token: "garbage"}, "/slurm/v0.0.42/nodes", 511, "", 1007},
		{"garbage token ping", creds{token: "garbage"}, "/slurm/v0.0.42/ping", 200, "", 0},
		{"token only", creds{token: alice.token}, "/slurm/v0.0.42/jobs", 200, "", 0},
		{"mismatch ping", mismatch, "/slurm/v0.0.42/ping", 200, "", 0},
		{"mismatch jobs", mismatch, "/slurm/v0.0.42/jobs", 511, "", 1007},
		{"mismatch slurmdb", mismatch, "/slurmdb/v0.0.42/tres", 502, "", 7000},
		{"mismatch slurmdb ping", mismatch, "/slurmdb/v0.0.42/ping", 502, "", 7000},
		{"forged token slurmdb", forged, "/slurmdb/v0.0.42/config", 502, "", 7000},
		{"good token", alice, "/slurm/v0.0.42/jobs", 200, "", 0},
		{"good token openapi", alice, "/openapi/v3", 200, "", 0},
	}
	for _, tc := range cases {
		code, m, raw := rc.do(tc.who, "GET", tc.path, nil)
		if code != tc.wantCode {
			t.Errorf("%s: HTTP %d, want %d (%s)", tc.name, code, tc.wantCode, raw)
			continue
		}
		if tc.wantBody != "" && raw != tc.wantBody {
			t.Errorf("%s: body %q, want %q", tc.name, raw, tc.wantBody)
		}
		if tc.wantErrNum != 0 {
			if e := firstError(m); e == nil || e["error_number"] != tc.wantErrNum {
				t.Errorf("%s: errors %v, want error_number %v", tc.name, m["errors"], tc.wantErrNum)
			}
		}
	}
}

// TestRESTJobLifecycle: submit, list, show, update, hold and cancel a
// job through REST, each answered as slurmrestd does, and refusals of
// another user's job as the commands refuse them.
func TestRESTJobLifecycle(t *testing.T) {
	rc := newRestCluster(t)
	alice, bob := rc.as("alice"), rc.as("bob")
	id := rc.submit(alice, map[string]any{"name": "restjob", "time_limit": map[string]any{"set": true, "number": 30}})
	job := fmt.Sprintf("/slurm/v0.0.42/job/%d", id)

	jobField := func(who creds, path, field string) any {
		t.Helper()
		code, m, raw := rc.do(who, "GET", path, nil)
		if code != 200 {
			t.Fatalf("GET %s: %d %s", path, code, raw)
		}
		jobs := m["jobs"].([]any)
		if len(jobs) != 1 {
			t.Fatalf("GET %s: %d jobs, want 1", path, len(jobs))
		}
		return jobs[0].(map[string]any)[field]
	}
	if got := jobField(alice, "/slurm/v0.0.42/jobs", "name"); got != "restjob" {
		t.Errorf("jobs: name %v, want restjob", got)
	}
	if got := jobField(alice, job, "user_name"); got != "alice" {
		t.Errorf("job: user_name %v, want alice", got)
	}

	steps := []struct {
		name     string
		who      creds
		method   string
		path     string
		body     any
		wantCode int
		wantErr  string // errors[0].error, or status[0].error.string for DELETE
	}{
		{"update time limit", alice, "POST", job, map[string]any{"time_limit": map[string]any{"set": true, "number": 20}}, 200, ""},
		{"update bad partition", alice, "POST", job, map[string]any{"partition": "zz"}, 500, "Invalid partition name specified"},
		{"update unknown job", alice, "POST", "/slurm/v0.0.42/job/999999", map[string]any{"name": "x"}, 404, "Invalid job id specified"},
		{"hold", alice, "POST", job, map[string]any{"hold": true}, 200, ""},
		{"get unknown job", alice, "GET", "/slurm/v0.0.42/job/999999", nil, 404, "Invalid job id specified"},
		{"get bad job id", alice, "GET", "/slurm/v0.0.42/job/abc", nil, 422, "Query empty or not RFC7320 compliant"},
		{"bob cancels alice's job", bob, "DELETE", job, nil, 200, "Access/permission denied"},
		{"cancel unknown job", alice, "DELETE", "/slurm/v0.0.42/job/999999", nil, 200, "Invalid job id specified"},
		{"cancel", alice, "DELETE", job, nil, 200, ""},
	}
	for _, st := range steps {
		code, m, raw := rc.do(st.who, st.method, st.path, st.body)
		if code != st.wantCode {
			t.Errorf("%s: HTTP %d, want %d (%s)", st.name, code, st.wantCode, raw)
			continue
		}
		got := ""
		if e := firstError(m); e != nil {
			got, _ = e["error"].(string)
		}
		if s, _ := m["status"].([]any); len(s) > 0 {
			got, _ = s[0].(map[string]any)["error"].(map[string]any)["string"].(string)
		}
		if got != st.wantErr {
			t.Errorf("%s: error %q, want %q (%s)", st.name, got, st.wantErr, raw)
		}
	}
	if got := jobField(alice, job, "time_limit").(map[string]any)["number"]; got != float64(20) {
		t.Errorf("time_limit after update: %v, want 20", got)
	}
	if got := jobField(alice, job, "job_state").([]any)[0]; got != "CANCELLED" {
		t.Errorf("job_state after DELETE: %v, want CANCELLED", got)
	}
}

// TestRESTSubmitErrors: slurmrestd's answers to bodies it refuses.
func TestRESTSubmitErrors(t *testing.T) {
	rc := newRestCluster(t)
	alice := rc.as("alice")
	env := []string{"PATH=/bin:/usr/bin"}
	cases := []struct {
		name     string
		body     any
		wantCode int
		wantErr  string
		wantWarn string
	}{
		{"no script", map[string]any{"job": map[string]any{"name": "x"}}, 422, "Query empty or not RFC7320 compliant", ""},
		{"no working directory", map[string]any{"script": "#!/bin/sh\ntrue", "job": map[string]any{"name": "x"}},
			500, "Job cannot be submitted without the current working directory specified.", ""},
		{"no environment", map[string]any{"script": "#!/bin/sh\ntrue", "job": map[string]any{"current_working_directory": "/tmp"}},
			500, "I/O error writing script/environment to file", ""},
		{"bad partition", map[string]any{"script": "#!/bin/sh\ntrue", "job": map[string]any{"partition": "zz", "current_working_directory": "/tmp", "environment": env}},
			500, "Invalid partition name specified", ""},
		{"unknown field", map[string]any{"script": "#!/bin/sh\ntrue", "job": map[string]any{"nosuchfield": 1, "current_working_directory": "/tmp", "environment": env}},
			200, "", `Ignoring unknown field "nosuchfield" of type 64 bit integer in DATA_PARSER_JOB_DESC_MSG`},
	}
	for _, tc := range cases {
		code, m, raw := rc.do(alice, "POST", "/slurm/v0.0.42/job/submit", tc.body)
		if code != tc.wantCode {
			t.Errorf("%s: HTTP %d, want %d (%s)", tc.name, code, tc.wantCode, raw)
			continue
		}
		got := ""
		if e := firstError(m); e != nil {
			got, _ = e["error"].(string)
		}
		if got != tc.wantErr {
			t.Errorf("%s: error %q, want %q", tc.name, got, tc.wantErr)
		}
		if tc.wantWarn != "" && !strings.Contains(fmt.Sprint(m["warnings"]), tc.wantWarn) {
			t.Errorf("%s: no warning %q in %s", tc.name, tc.wantWarn, raw)
		}
	}
	// A body that is not JSON is slurmrestd's plain 400.
	req, _ := http.NewRequest("POST", rc.http.URL+"/slurm/v0.0.42/job/submit", strings.NewReader(`{"script":`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-SLURM-USER-NAME", "alice")
	req.Header.Set("X-SLURM-USER-TOKEN", alice.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("bad JSON: %d %s, want 400 text/plain", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// TestRESTResources: the other slurmctld paths answer with their
// data_parser members, under every version served, and unknown names as
// slurmrestd answers them.
func TestRESTResources(t *testing.T) {
	rc := newRestCluster(t)
	root := rc.as("root")
	cases := []struct {
		path     string
		wantCode int
		wantKey  string
	}{
		{"/slurm/v0.0.42/ping", 200, "pings"},
		{"/slurm/v0.0.42/diag", 200, "statistics"},
		{"/slurm/v0.0.42/nodes", 200, "nodes"},
		{"/slurm/v0.0.42/node/n1", 200, "nodes"},
		{"/slurm/v0.0.42/node/zz", 200, "errors"},
		{"/slurm/v0.0.42/partitions", 200, "partitions"},
		{"/slurm/v0.0.42/partition/debug", 200, "partitions"},
		{"/slurm/v0.0.42/partition/zz", 422, "errors"},
		{"/slurm/v0.0.42/reservations", 200, "reservations"},
		{"/slurm/v0.0.42/licenses", 200, "licenses"},
		{"/slurm/v0.0.42/shares", 200, "shares"},
		{"/slurm/v0.0.41/jobs", 200, "jobs"},
		{"/slurm/v0.0.42/jobs/", 200, "jobs"},
		{"/slurm/v0.0.40/nodes", 200, "nodes"},
		{"/slurm/v0.0.42/nosuch", 404, ""},
	}
	for _, tc := range cases {
		code, m, raw := rc.do(root, "GET", tc.path, nil)
		if code != tc.wantCode {
			t.Errorf("%s: HTTP %d, want %d (%s)", tc.path, code, tc.wantCode, raw)
			continue
		}
		if tc.wantKey != "" {
			if _, ok := m[tc.wantKey]; !ok {
				t.Errorf("%s: no %q in %s", tc.path, tc.wantKey, raw)
			}
			if _, ok := m["meta"]; !ok {
				t.Errorf("%s: no meta", tc.path)
			}
		}
	}
	// Node updates: root drains and resumes, alice is refused.
	if code, _, raw := rc.do(root, "POST", "/slurm/v0.0.42/node/n1", map[string]any{"state": []string{"DRAIN"}, "reason": "rest"}); code != 200 {
		t.Errorf("root drains n1: %d %s", code, raw)
	}
	if code, _, raw := rc.do(root, "POST", "/slurm/v0.0.42/nodes", map[string]any{"name": []string{"n1", "n2"}, "state": []string{"RESUME"}}); code != 200 {
		t.Errorf("root resumes n1,n2: %d %s", code, raw)
	}
	if code, m, _ := rc.do(root, "POST", "/slurm/v0.0.42/nodes", map[string]any{"state": []string{"DRAIN"}, "reason": "x"}); code != 500 ||
		firstError(m)["error_number"] != float64(2018) {
		t.Errorf("POST /nodes without names: %d %v, want 500 and error 2018", code, m["errors"])
	}
	if code, m, _ := rc.do(rc.as("alice"), "POST", "/slurm/v0.0.42/node/n1", map[string]any{"state": []string{"RESUME"}}); code != 500 ||
		firstError(m)["error"] != "Invalid user id" {
		t.Errorf("alice resumes n1: %d %v, want 500 Invalid user id", code, m["errors"])
	}
}

// TestRESTOpenAPI: /openapi/v3 lists exactly the routes served.
func TestRESTOpenAPI(t *testing.T) {
	rc := newRestCluster(t)
	code, m, _ := rc.do(rc.as("alice"), "GET", "/openapi/v3", nil)
	if code != 200 {
		t.Fatalf("openapi: %d", code)
	}
	paths := m["paths"].(map[string]any)
	seen := 0
	for _, rt := range rc.srv.routes {
		ops, ok := paths[rt.path].(map[string]any)
		if !ok || ops[strings.ToLower(rt.method)] == nil {
			t.Errorf("openapi lacks %s %s", rt.method, rt.path)
		}
		seen++
	}
	n := 0
	for _, ops := range paths {
		n += len(ops.(map[string]any))
	}
	if n != seen {
		t.Errorf("openapi lists %d operations, the server serves %d", n, seen)
	}
}

// TestRESTUnixSocket: on a Unix socket the caller is the peer the kernel
// names (SO_PEERCRED), without a token.
func TestRESTUnixSocket(t *testing.T) {
	rc := newRestCluster(t)
	sock := filepath.Join(t.TempDir(), "rest.sock")
	ln, err := Listen("unix:" + sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := rc.srv.NewHTTPServer()
	go srv.Serve(ln)
	defer srv.Close()
	cl := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	resp, err := cl.Get("http://local/slurm/v0.0.42/jobs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("jobs over the Unix socket as uid %d: %d, want 200", os.Getuid(), resp.StatusCode)
	}
}

// TestRESTSlurmdb: the accounting paths answer with sacct's and
// sacctmgr's data_parser records; an unknown name is a warning with
// HTTP 200, as slurmdbd's.
func TestRESTSlurmdb(t *testing.T) {
	rc := newRestCluster(t)
	alice := rc.as("alice")
	for _, cmd := range []string{"add account research", "add user alice account=research"} {
		args := append([]string{"-i"}, strings.Fields(cmd)...)
		if _, err := rc.root.Sacctmgr(context.Background(), api.SacctmgrRequest{Args: args}); err != nil {
			t.Fatalf("sacctmgr %s: %v", cmd, err)
		}
	}
	id := rc.submit(alice, map[string]any{"name": "dbjob"})
	// A held job is never eligible: slurmdbd's /jobs leaves it out.
	rc.submit(alice, map[string]any{"name": "held", "hold": true})
	// The job is eligible once the controller's next pass saw it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, m, _ := rc.do(alice, "GET", "/slurmdb/v0.0.42/jobs", nil)
		if l, _ := m["jobs"].([]any); len(l) > 0 || time.Now().After(deadline) {
			break
		}
	}
	cases := []struct {
		path, key string
		want      int // records
		warn      bool
	}{
		{"/slurmdb/v0.0.42/jobs", "jobs", 1, false},
		{fmt.Sprintf("/slurmdb/v0.0.42/job/%d", id), "jobs", 1, false},
		{"/slurmdb/v0.0.42/job/999999", "jobs", 0, true},
		{"/slurmdb/v0.0.42/accounts", "accounts", 2, false}, // root and research
		{"/slurmdb/v0.0.42/account/research", "accounts", 1, false},
		{"/slurmdb/v0.0.42/account/zz", "accounts", 0, true},
		{"/slurmdb/v0.0.42/user/alice", "users", 1, false},
		{"/slurmdb/v0.0.42/ping", "pings", 1, false},
		{"/slurmdb/v0.0.42/associations", "associations", 4, false}, // root, root/root, research, research/alice
		{"/slurmdb/v0.0.42/associations?user=alice", "associations", 1, false},
		{"/slurmdb/v0.0.42/tres", "TRES", 8, false}, // cpu mem energy node billing fs/disk vmem pages
	}
	for _, tc := range cases {
		code, m, raw := rc.do(alice, "GET", tc.path, nil)
		if code != 200 {
			t.Errorf("%s: HTTP %d (%s)", tc.path, code, raw)
			continue
		}
		list, _ := m[tc.key].([]any)
		warns, _ := m["warnings"].([]any)
		if len(list) != tc.want || (len(warns) > 0) != tc.warn {
			t.Errorf("%s: %d %s, warnings %v; want %d, warning %v", tc.path, len(list), tc.key, warns, tc.want, tc.warn)
		}
	}
}

// TestRESTRoutesAreSlurmrestds: every operation served under v0.0.42 is
// one of slurmrestd 24.11's (no path of Sluice's own invention).
func TestRESTRoutesAreSlurmrestds(t *testing.T) {
	known := map[string]bool{}
	for _, op := range slurmrestdOps {
		known[op] = true
	}
	for _, o := range operations() {
		op := o.method + " " + strings.Replace(o.path, "VERSION", "v0.0.42", 1)
		if !known[op] {
			t.Errorf("%s is not a slurmrestd v0.0.42 operation", op)
		}
	}
}

// TestRESTVersions: each version's answer names its data_parser, and
// v0.0.40's nodes lack gpu_spec and res_cores_per_gpu (oracle, 24.11).
func TestRESTVersions(t *testing.T) {
	rc := newRestCluster(t)
	root := rc.as("root")
	for _, v := range Versions {
		_, m, raw := rc.do(root, "GET", "/slurm/"+v+"/nodes", nil)
		meta, _ := m["meta"].(map[string]any)
		if meta == nil {
			t.Fatalf("%s: no meta in %s", v, raw)
		}
		if got := meta["plugin"].(map[string]any)["data_parser"]; got != "data_parser/"+v {
			t.Errorf("%s: data_parser %v", v, got)
		}
		node := m["nodes"].([]any)[0].(map[string]any)
		_, has := node["gpu_spec"]
		if has != (v != "v0.0.40") {
			t.Errorf("%s: gpu_spec present %v", v, has)
		}
	}
}

// TestRESTBulkJobs: DELETE /jobs cancels the jobs named (an unknown one
// in "status"), refuses a request naming nothing (2173, HTTP 500), and
// /jobs/state lists the states.
func TestRESTBulkJobs(t *testing.T) {
	rc := newRestCluster(t)
	alice := rc.as("alice")
	a, b := rc.submit(alice, nil), rc.submit(alice, nil)
	code, m, raw := rc.do(alice, "DELETE", "/slurm/v0.0.42/jobs", map[string]any{"jobs": []string{fmt.Sprint(a), fmt.Sprint(b), "999999"}})
	if st, _ := m["status"].([]any); code != 200 || len(st) != 1 {
		t.Fatalf("DELETE /jobs: %d %s, want 200 and one status (the unknown job)", code, raw)
	}
	if code, m, _ := rc.do(alice, "DELETE", "/slurm/v0.0.42/jobs", map[string]any{}); code != 500 || firstError(m)["error_number"] != float64(2173) {
		t.Errorf("DELETE /jobs naming nothing: %d %v, want 500 and error 2173", code, m["errors"])
	}
	code, m, raw = rc.do(alice, "GET", fmt.Sprintf("/slurm/v0.0.42/jobs/state?job_id=%d", a), nil)
	jobs, _ := m["jobs"].([]any)
	if code != 200 || len(jobs) != 1 || fmt.Sprint(jobs[0].(map[string]any)["state"]) != "[CANCELLED]" {
		t.Errorf("jobs/state: %d %s, want job %d CANCELLED", code, raw, a)
	}
}

// TestRESTQOS: /slurmdb/.../qos puts each sacctmgr limit where slurmdbd
// does (oracle, 24.11: sacctmgr add qos tq GrpJobs=1 MaxWall=14 ...);
// unset limits are infinite.
func TestRESTQOS(t *testing.T) {
	rc := newRestCluster(t)
	args := append([]string{"-i", "add", "qos", "tq"}, strings.Fields("GrpJobs=1 GrpSubmitJobs=2 MaxJobsPerUser=3 "+
		"MaxSubmitJobsPerAccount=6 GrpTRES=cpu=7 MaxTRESPerNode=cpu=11 MaxWall=14 GrpWall=15 Priority=17 "+
		"GraceTime=21 Flags=DenyOnLimit PreemptMode=requeue")...)
	if _, err := rc.root.Sacctmgr(context.Background(), api.SacctmgrRequest{Args: args}); err != nil {
		t.Fatal(err)
	}
	_, m, raw := rc.do(rc.as("alice"), "GET", "/slurmdb/v0.0.42/qos/tq", nil)
	list, _ := m["qos"].([]any)
	if len(list) != 1 {
		t.Fatalf("qos/tq: %s", raw)
	}
	q := list[0].(map[string]any)
	get := func(path string) any {
		var v any = q
		for _, k := range strings.Split(path, "/") {
			v = v.(map[string]any)[k]
		}
		return v
	}
	num := func(path string) any {
		n := get(path).(map[string]any)
		if n["infinite"] == true {
			return "inf"
		}
		return n["number"]
	}
	cases := []struct {
		got, want any
		what      string
	}{
		{num("limits/max/active_jobs/count"), float64(1), "GrpJobs"},
		{num("limits/max/jobs/count"), float64(2), "GrpSubmitJobs"},
		{num("limits/max/jobs/active_jobs/per/user"), float64(3), "MaxJobsPerUser"},
		{num("limits/max/jobs/per/account"), float64(6), "MaxSubmitJobsPerAccount"},
		{num("limits/max/jobs/per/user"), "inf", "MaxSubmitJobsPerUser unset"},
		{fmt.Sprint(get("limits/max/tres/total")), "[map[count:7 id:1 name: type:cpu]]", "GrpTRES"},
		{fmt.Sprint(get("limits/max/tres/per/node")), "[map[count:11 id:1 name: type:cpu]]", "MaxTRESPerNode"},
		{num("limits/max/wall_clock/per/job"), float64(14), "MaxWall"},
		{num("limits/max/wall_clock/per/qos"), float64(15), "GrpWall"},
		{num("priority"), float64(17), "Priority"},
		{get("limits/grace_time"), float64(21), "GraceTime"},
		{fmt.Sprint(get("flags")), "[DENY_LIMIT]", "Flags"},
		{fmt.Sprint(get("preempt/mode")), "[REQUEUE]", "PreemptMode"},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.what, tc.got, tc.want)
		}
	}
}
