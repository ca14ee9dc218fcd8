package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// TestBenchSchedPrintsOneJSONObject runs `sluice bench sched` on a small
// workload in-process and checks the keys the README quotes.
func TestBenchSchedPrintsOneJSONObject(t *testing.T) {
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb}
	if rc := runBench(context.Background(), env, []string{"sched", "--nodes", "200", "--jobs", "300", "--cycles", "1"}); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out.String())
	}
	for _, k := range []string{"nodes", "jobs", "cycle_ms", "planned", "max_rss_mb"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("missing key %q in %s", k, out.String())
		}
	}
	if m["planned"].(float64) != 300 {
		t.Fatalf("planned %v of 300", m["planned"])
	}
	if rc := runBench(context.Background(), env, []string{"nosuch"}); rc != 1 ||
		errb.String() != "bench: error: unknown subcommand \"nosuch\" (try `sluice bench --help`)\n" {
		t.Fatalf("unknown subcommand: rc %d stderr %q", rc, errb.String())
	}
}
