package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runConfCmd runs `sluice conf ARGS...` in-process with the given
// environment variables.
func runConfCmd(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
	c, ok := Lookup("conf")
	if !ok {
		t.Fatal("conf command not registered")
	}
	code = c.Run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// TestConfCheckFixtures: every shipped example and every shared fixture
// (when the shared directory is present) passes; gpu-cluster shows the
// acceptance summary.
func TestConfCheckFixtures(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*/slurm.conf")
	if len(files) < 7 {
		t.Fatalf("found %d examples", len(files))
	}
	shared, _ := filepath.Glob("../../../shared/fixtures/*.conf")
	files = append(files, shared...)
	for _, f := range files {
		code, out, errs := runConfCmd(t, nil, "check", f)
		if code != 0 || errs != "" {
			t.Errorf("%s: exit %d\n%s", f, code, errs)
		}
		if strings.HasSuffix(f, "gpu-cluster.conf") || strings.HasSuffix(f, "gpu-cluster/slurm.conf") {
			t.Logf("\n%s", out)
			for _, want := range []string{"Nodes=30 ", "DefaultPartition=dev", "dev*", "cpu=1952", "node=30", "gres/gpu=212", "gres/gpu:a100=148", "gres/gpu:h100=64"} {
				if !strings.Contains(out, want) {
					t.Errorf("summary lacks %q", want)
				}
			}
		}
	}
}

// TestConfCheckBroken: each broken config prints one
// "conf: error: FILE:LINE: ..." line and exits 1.
func TestConfCheckBroken(t *testing.T) {
	dir := t.TempDir()
	head := "ClusterName=t\nNodeName=n[1-4] CPUs=4\n"
	for _, tc := range []struct{ name, text, want string }{
		{"unknown-node", head + "PartitionName=p Nodes=n[1-9]\n", `:3: PartitionName=p: Nodes: unknown node "n5"`},
		{"bad-time", head + "PartitionName=p Nodes=ALL MaxTime=forever\n", `:3: PartitionName=p: MaxTime: invalid time "forever"`},
		{"missing-eq", head + "PartitionName=p Nodes=ALL\nKillWait 30\n", `:4: KillWait: missing '='`},
		{"unclosed-bracket", head + "NodeName=m[1-3 CPUs=2\n", `:3: NodeName: unclosed '['`},
	} {
		path := filepath.Join(dir, tc.name+".conf")
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := runConfCmd(t, nil, "check", path)
		lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
		if code != 1 || out != "" || len(lines) != 1 || !strings.HasPrefix(errs, "conf: error: "+path+tc.want) {
			t.Errorf("%s: exit %d stdout %q stderr %q\nwant prefix %q", tc.name, code, out, errs, "conf: error: "+path+tc.want)
		}
	}
}

// TestConfCheckDefaultFile: FILE defaults to $SLURM_CONF.
func TestConfCheckDefaultFile(t *testing.T) {
	f, _ := filepath.Abs("../../examples/jobsize/slurm.conf")
	code, out, _ := runConfCmd(t, map[string]string{"SLURM_CONF": f}, "check")
	if code != 0 || !strings.Contains(out, "ClusterName=small") {
		t.Errorf("exit %d out %s", code, out)
	}
	code, _, errs := runConfCmd(t, map[string]string{"SLURM_CONF": "/nonexistent/slurm.conf"}, "check")
	if code != 1 || !strings.HasPrefix(errs, "conf: error: /nonexistent/slurm.conf: cannot read") {
		t.Errorf("exit %d stderr %q", code, errs)
	}
	if code, _, errs := runConfCmd(t, nil, "lint"); code != 1 || !strings.Contains(errs, "unknown subcommand") {
		t.Errorf("lint: exit %d %q", code, errs)
	}
}

// TestConfCheckGolden pins the whole `sluice conf check` output for the
// shipped examples. Regenerate with SLUICE_UPDATE_GOLDEN=1 go test ./internal/cli -run ConfCheckGolden.
func TestConfCheckGolden(t *testing.T) {
	for _, name := range []string{"gpu-cluster", "quickstart", "queue-design"} {
		code, out, errs := runConfCmd(t, nil, "check", "../../examples/"+name+"/slurm.conf")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		golden := filepath.Join("testdata", "conf-check-"+name+".golden")
		if os.Getenv("SLUICE_UPDATE_GOLDEN") != "" {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with SLUICE_UPDATE_GOLDEN=1 to create)", err)
		}
		if out != string(want) {
			t.Errorf("%s: output differs from %s\n--- got\n%s--- want\n%s", name, golden, out, want)
		}
	}
}
