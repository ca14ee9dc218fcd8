package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// schemaScenario brings a Sluice cluster into a state where every
// data_parser reply has members of each kind: a finished, a running, an
// array, a pending exclusive and a held job, a drained node, a license in
// use and a reservation.
const schemaScenario = `# schema check: the data_parser replies of a busy cluster
conf Licenses=matlab:2
$ sacctmgr -i add account research >/dev/null
$ sacctmgr -i add user alice,bob Account=research >/dev/null
alice$ sbatch -o /dev/null -J done --wrap true
wait 1 gone
alice$ sbatch -o /dev/null -J bad --wrap 'exit 3'
wait 2 gone
alice$ sbatch -o /dev/null -n4 --gres=gpu:2 -L matlab:1 -J run --wrap 'srun sleep 60'
alice$ sbatch -o /dev/null --array=1-2 -J arr --wrap 'sleep 60'
bob$ sbatch -o /dev/null -N4 --exclusive -J big --wrap 'sleep 60'
bob$ sbatch -o /dev/null -t 30 --hold -J held --wrap true
$ scontrol create reservation reservationname=r1 users=alice starttime=now+1hour duration=60 nodes=n4
$ scontrol update nodename=n3 state=drain reason=maint
sleep 3
`

// schemaChecks names, for each command, the component of slurmrestd's
// v0.0.42 description its --json reply is: the reply of the REST path
// that answers the same question. sinfo has no REST path (and so no
// schema); its members are nodes and partitions, checked through scontrol.
var schemaChecks = []struct{ user, cmd, schema string }{
	{"alice", "squeue --json", "v0.0.42_openapi_job_info_resp"},
	{"root", "squeue --json -t all", "v0.0.42_openapi_job_info_resp"},
	{"root", "scontrol show job --json", "v0.0.42_openapi_job_info_resp"},
	{"root", "scontrol show job 3 --json", "v0.0.42_openapi_job_info_resp"},
	{"root", "scontrol show node --json", "v0.0.42_openapi_nodes_resp"},
	{"root", "scontrol show node n3 --json", "v0.0.42_openapi_nodes_resp"},
	{"root", "scontrol show partition --json", "v0.0.42_openapi_partition_resp"},
	{"root", "scontrol show reservation --json", "v0.0.42_openapi_reservation_resp"},
	{"root", "scontrol show license --json", "v0.0.42_openapi_licenses_resp"},
	{"root", "sdiag --json", "v0.0.42_openapi_diag_resp"},
	{"root", "sacct --json -a", "v0.0.42_openapi_slurmdbd_jobs_resp"},
	{"alice", "sacct --json -X", "v0.0.42_openapi_slurmdbd_jobs_resp"},
	{"root", "sshare --json -a", "v0.0.42_openapi_shares_resp"},
	{"alice", "sshare --json", "v0.0.42_openapi_shares_resp"},
}

// TestDataParserSchemas validates Sluice's --json replies against the
// component schemas of slurmrestd 24.11's OpenAPI description (v0.0.42),
// loaded at test time from the oracle: SLUICE_OPENAPI_SPEC=FILE (made with
// `oracle.sh exec -- slurmrestd -d v0.0.42 -s slurmctld,slurmdbd
// --generate-openapi-spec`) or ORACLE_SH=PATH of oracle.sh (`make
// oracle-schema`). Slurm's description is never committed.
func TestDataParserSchemas(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it starts a Sluice cluster and runs commands as alice and bob")
	}
	if testing.Short() {
		t.Skip("-short: plays a cluster")
	}
	doc := loadOpenAPI(t)
	sc, err := ParseScenario("schema", schemaScenario)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range schemaChecks {
		sc.Steps = append(sc.Steps, Step{Kind: Run, User: c.user, Cmd: c.cmd})
	}
	target := sluiceTarget(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rec, err := Play(ctx, target, sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	results := rec.Results[len(rec.Results)-len(schemaChecks):]
	for i, c := range schemaChecks {
		r := results[i]
		if r.Exit != 0 {
			t.Errorf("[%s] %s: exit %d: %s", c.user, c.cmd, r.Exit, r.Stderr)
			continue
		}
		for _, e := range validateJSON(doc, c.schema, r.Stdout) {
			t.Errorf("[%s] %s against %s: %s", c.user, c.cmd, c.schema, e)
		}
	}
}

// TestRESTSchemas plays the REST scenarios (scenarios/rest-*.scn) on Sluice
// and validates every reply of its API against the schema slurmrestd
// 24.11's description gives the path, method and status. A path Sluice
// does not serve (404 without a JSON body) is named in the log.
func TestRESTSchemas(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: it starts a Sluice cluster and runs commands as alice and bob")
	}
	if testing.Short() {
		t.Skip("-short: plays a cluster")
	}
	doc := loadOpenAPI(t)
	bin := buildSluice(t)
	if out, _ := exec.Command(bin, "up", "--help").CombinedOutput(); !strings.Contains(string(out), "--rest-listen") {
		t.Skip("sluice up has no --rest-listen: this Sluice serves no REST API")
	}
	suite, err := LoadSuite(".", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureUsers(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	for _, sc := range suite.Scenarios {
		if !sc.REST() {
			continue
		}
		rec, err := Play(ctx, &SluiceTarget{Binary: bin, BaseConf: suite.BaseConf}, sc, nil)
		if err != nil {
			t.Errorf("%s: %v", sc.Name, err)
			continue
		}
		for _, r := range rec.Results {
			method, path, ok := restOfStep(r.Step)
			if !ok {
				continue
			}
			if !strings.Contains(path, "/v0.0.42/") {
				// The description from the oracle is v0.0.42's; the
				// older versions' replies are compared in rest-versions.
				continue
			}
			if r.Exit == 404 && !json.Valid([]byte(r.Stdout)) {
				t.Logf("%s: %s %s: not served", sc.Name, method, path)
				continue
			}
			for _, e := range validateREST(doc, method, path, r.Exit, r.Stdout) {
				t.Errorf("%s: %s (HTTP %d): %s", sc.Name, r.Step, r.Exit, e)
			}
		}
	}
}

// sluiceTarget is a Sluice cluster on the suite's base.conf, with the
// scenario users present.
func sluiceTarget(t *testing.T) *SluiceTarget {
	base, err := os.ReadFile("base.conf")
	if err != nil {
		t.Fatal(err)
	}
	if err := EnsureUsers(); err != nil {
		t.Fatal(err)
	}
	return &SluiceTarget{Binary: buildSluice(t), BaseConf: string(base)}
}

// validateJSON returns every violation of the named component schema by
// text (at most 20).
func validateJSON(doc *openapi3.T, schema, text string) []string {
	ref := doc.Components.Schemas[schema]
	if ref == nil || ref.Value == nil {
		return []string{"the description has no schema " + schema}
	}
	return validateValue(ref.Value, text)
}

// validateValue returns every violation of schema by text (at most 20).
func validateValue(schema *openapi3.Schema, text string) []string {
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	err := schema.VisitJSON(dropNulls(v), openapi3.MultiErrors())
	if err == nil {
		return nil
	}
	var out []string
	var walk func(error)
	walk = func(err error) {
		if me, ok := err.(openapi3.MultiError); ok {
			for _, e := range me {
				walk(e)
			}
			return
		}
		if se, ok := err.(*openapi3.SchemaError); ok {
			out = append(out, fmt.Sprintf("at /%s: %s", strings.Join(se.JSONPointer(), "/"), se.Reason))
			return
		}
		out = append(out, err.Error())
	}
	walk(err)
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("... %d more", len(out)-20))
	}
	return out
}

// dropNulls removes the members whose value is null: slurmrestd's
// data_parser prints an absent object as null (a pending job's
// "job_resources": null, in Slurm 24.11's replies too) where its
// description names a non-nullable object.
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
			} else {
				x[k] = dropNulls(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}

// TestOracleRepliesMatchSchemas validates the oracle's own --json replies
// in the golden files against the same schemas, with the same two
// readings of slurmrestd's description (nestRequired, dropNulls): what
// TestDataParserSchemas asks of Sluice, real Slurm 24.11 does.
func TestOracleRepliesMatchSchemas(t *testing.T) {
	doc := loadOpenAPI(t)
	files, err := filepath.Glob("golden/[jr]*.golden")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		rec, err := ParseRecording(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rec.Results {
			if method, path, ok := restOfStep(r.Step); ok {
				if !strings.Contains(path, "/v0.0.42/") {
					continue // the description is v0.0.42's
				}
				checked++
				for _, e := range validateREST(doc, method, path, r.Exit, r.Stdout) {
					t.Errorf("%s: %s: %s", filepath.Base(f), r.Step, e)
				}
				continue
			}
			schema := schemaOfStep(r.Step)
			if schema == "" || r.Exit != 0 || !json.Valid([]byte(r.Stdout)) {
				continue
			}
			checked++
			for _, e := range validateJSON(doc, schema, r.Stdout) {
				t.Errorf("%s: %s against %s: %s", filepath.Base(f), r.Step, schema, e)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no --json reply in golden/json-*.golden")
	}
	// The check can fail: a job state outside the description's enum and
	// a job id given as a string.
	bad := `{"jobs":[{"job_id":"3","job_state":["SLEEPING"]}],"last_backfill":{},"last_update":{}}`
	if errs := validateJSON(doc, "v0.0.42_openapi_job_info_resp", bad); len(errs) != 2 {
		t.Errorf("a reply with two errors: %d violations found: %q", len(errs), errs)
	}
	t.Logf("%d replies of Slurm 24.11 checked", checked)
}

// restOfStep reads the method and path of a recorded rest step
// ("[alice] rest GET /slurm/v0.0.42/jobs").
func restOfStep(step string) (method, path string, ok bool) {
	_, rest, _ := strings.Cut(step, "] ")
	f := strings.Fields(rest)
	if len(f) < 3 || f[0] != "rest" {
		return "", "", false
	}
	return f[1], f[2], true
}

// validateREST checks a REST reply against the schema slurmrestd's
// description gives the path's operation for the status (its "default"
// reply for the others), a refusal against the common envelope.
func validateREST(doc *openapi3.T, method, path string, status int, body string) []string {
	path, _, _ = strings.Cut(path, "?")
	switch {
	case status == 304 && body == "":
		// "Nothing deleted": slurmdbd's removal that matched nothing
		// answers 304 without a body (oracle).
		return nil
	case strings.HasSuffix(strings.TrimSuffix(path, "/"), "/jobs/state"):
		// slurmrestd 24.11's /jobs/state reply does not follow its own
		// description (job_id is a string, no last_backfill or
		// last_update: the oracle's reply fails it); Sluice answers what
		// slurmrestd answers, compared in rest-updates.
		return nil
	}
	if status >= 400 {
		// A refusal is the bare envelope (meta, errors, warnings):
		// slurmrestd's own leave out what the path's reply requires
		// (oracle: GET reservation/nosuch, HTTP 422, has no reservations).
		return validateJSON(doc, "v0.0.42_openapi_resp", body)
	}
	for tmpl, item := range doc.Paths.Map() {
		if !pathMatches(tmpl, path) {
			continue
		}
		op := item.GetOperation(method)
		if op == nil {
			return []string{fmt.Sprintf("%s has no %s operation", tmpl, method)}
		}
		resp := op.Responses.Status(status)
		if resp == nil {
			resp = op.Responses.Default()
		}
		if resp == nil || resp.Value == nil || resp.Value.Content.Get("application/json") == nil {
			return []string{fmt.Sprintf("%s %s: no JSON reply described for status %d", method, tmpl, status)}
		}
		return validateValue(resp.Value.Content.Get("application/json").Schema.Value, body)
	}
	return []string{"no path of the description matches " + path}
}

// pathMatches matches a request path with a template of the description
// ("/slurm/v0.0.42/job/{job_id}", "/slurm/v0.0.42/jobs/": the trailing
// slash is optional).
func pathMatches(tmpl, path string) bool {
	t := strings.Split(strings.TrimSuffix(tmpl, "/"), "/")
	p := strings.Split(strings.TrimSuffix(path, "/"), "/")
	if len(t) != len(p) {
		return false
	}
	for i := range t {
		if t[i] != p[i] && !(strings.HasPrefix(t[i], "{") && strings.HasSuffix(t[i], "}")) {
			return false
		}
	}
	return true
}

// schemaOfStep names the schema of a recorded step's reply by the
// command's first words, "" for a command without one.
func schemaOfStep(step string) string {
	_, cmd, _ := strings.Cut(step, "] ")
	if strings.Contains(cmd, "|") || !strings.Contains(cmd, "--json") {
		return ""
	}
	for _, c := range schemaChecks {
		f := strings.Fields(c.cmd)
		n := 1
		if f[0] == "scontrol" {
			n = 3
		}
		if strings.HasPrefix(cmd, strings.Join(f[:n], " ")+" ") {
			return c.schema
		}
	}
	return ""
}

// loadOpenAPI reads slurmrestd's description: from SLUICE_OPENAPI_SPEC,
// else generated inside the oracle named by ORACLE_SH (brought up for it
// when down, and down again after).
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	var data []byte
	if f := os.Getenv("SLUICE_OPENAPI_SPEC"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = b
	} else if sh := os.Getenv("ORACLE_SH"); sh != "" {
		data = generateOpenAPI(t, sh)
	} else {
		t.Skip("no OpenAPI description of slurmrestd: set SLUICE_OPENAPI_SPEC=FILE or ORACLE_SH=PATH/oracle.sh (make oracle-schema)")
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("slurmrestd's OpenAPI description: %v", err)
	}
	for _, ref := range doc.Components.Schemas {
		nestRequired(ref.Value)
	}
	return doc
}

// nestRequired moves slurmrestd's required members of nested objects
// down to them: its description lists them by path at the top ("cpus/count"
// required beside "index" in v0.0.42_job_res_node), which no reply
// (slurmrestd's own included) can satisfy as JSON Schema reads it.
func nestRequired(s *openapi3.Schema) {
	if s == nil {
		return
	}
	var keep []string
	for _, r := range s.Required {
		first, rest, nested := strings.Cut(r, "/")
		if !nested {
			keep = append(keep, r)
			continue
		}
		if p := s.Properties[first]; p != nil && p.Ref == "" && p.Value != nil && !contains(p.Value.Required, rest) {
			p.Value.Required = append(p.Value.Required, rest)
		}
	}
	s.Required = keep
	for _, p := range s.Properties {
		if p.Ref == "" {
			nestRequired(p.Value)
		}
	}
	if s.Items != nil && s.Items.Ref == "" {
		nestRequired(s.Items.Value)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func generateOpenAPI(t *testing.T, sh string) []byte {
	t.Helper()
	if exec.Command(sh, "status").Run() != nil {
		if out, err := exec.Command(sh, "up").CombinedOutput(); err != nil {
			t.Fatalf("%s up: %v\n%s", sh, err, lastLines(string(out), 15))
		}
		defer exec.Command(sh, "down").Run()
	}
	out, err := exec.Command(sh, "exec", "--", "slurmrestd", "-d", "v0.0.42", "-s", "slurmctld,slurmdbd",
		"--generate-openapi-spec").Output()
	if err != nil {
		t.Fatalf("slurmrestd --generate-openapi-spec in the oracle: %v", err)
	}
	return out
}

// buildSluice builds the sluice binary into a directory the scenario users
// can read (t.TempDir's directories are closed to them).
func buildSluice(t *testing.T) string {
	t.Helper()
	binDir, err := os.MkdirTemp("", "sluice-diff-bin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(binDir) })
	if err := os.Chmod(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "sluice")
	build := exec.Command("go", "build", "-o", bin, "github.com/sluice-hpc/sluice/cmd/sluice")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
