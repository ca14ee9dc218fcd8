package noded

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

// Recorded `nvidia-smi --query-gpu=index,name,uuid,memory.total
// --format=csv,noheader` output of an 8-GPU H100 node (trimmed to 3 lines)
// and of an A100 node.
const (
	smiH100 = `0, NVIDIA H100 80GB HBM3, GPU-3b1f6a2e-52a1-8c1e-7d3e-0c8f2a9b1d01, 81559 MiB
1, NVIDIA H100 80GB HBM3, GPU-3b1f6a2e-52a1-8c1e-7d3e-0c8f2a9b1d02, 81559 MiB
2, NVIDIA H100 80GB HBM3, GPU-3b1f6a2e-52a1-8c1e-7d3e-0c8f2a9b1d03, 81559 MiB
`
	smiA100 = "0, NVIDIA A100-SXM4-40GB, GPU-aa, 40960 MiB\n"
)

func TestGPUDiscovery(t *testing.T) {
	devRoot := func(files ...string) string {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, "dev"), 0o755)
		for _, f := range files {
			os.WriteFile(filepath.Join(root, "dev", f), nil, 0o644)
		}
		return root
	}
	recorded := func(out string, err error) CommandRunner {
		return func(_ context.Context, name string, args ...string) ([]byte, error) {
			if !reflect.DeepEqual(args, nvidiaSMIArgs) {
				t.Errorf("nvidia-smi called with %v", args)
			}
			return []byte(out), err
		}
	}
	found := func(string) (string, error) { return "/usr/bin/nvidia-smi", nil }
	cases := []struct {
		name      string
		d         GPUDiscovery
		wantIdx   []int
		wantType  string
		wantMemMB int64
	}{
		{"no GPU at all (CI)", GPUDiscovery{LookPath: noNvidiaSMI, Root: devRoot("null", "tty")}, nil, "", 0},
		{"nvidia-smi H100", GPUDiscovery{LookPath: found, Run: recorded(smiH100, nil), Root: devRoot()}, []int{0, 1, 2}, "h100_80gb_hbm3", 81559},
		{"nvidia-smi A100", GPUDiscovery{LookPath: found, Run: recorded(smiA100, nil)}, []int{0}, "a100-sxm4-40gb", 40960},
		{"nvidia-smi failing: device files", GPUDiscovery{LookPath: found, Run: recorded("", errors.New("NVIDIA-SMI has failed")),
			Root: devRoot("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia10")}, []int{0, 1, 10}, "", 0},
		{"device files only", GPUDiscovery{LookPath: noNvidiaSMI, Root: devRoot("nvidia3", "nvidia2")}, []int{2, 3}, "", 0},
		{"gres.conf static list wins", GPUDiscovery{Static: "Name=gpu Type=a100 File=/dev/nvidia[0-3]", LookPath: found, Run: recorded(smiH100, nil)},
			[]int{0, 1, 2, 3}, "a100", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gpus, err := c.d.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var idx []int
			for _, g := range gpus {
				idx = append(idx, g.Index)
			}
			if !reflect.DeepEqual(idx, c.wantIdx) {
				t.Fatalf("indices %v, want %v", idx, c.wantIdx)
			}
			if len(gpus) > 0 && (gpus[0].Type != c.wantType || gpus[0].MemoryMB != c.wantMemMB) {
				t.Fatalf("first GPU %+v, want type %q memory %d", gpus[0], c.wantType, c.wantMemMB)
			}
		})
	}
}

func TestParseNvidiaSMIErrors(t *testing.T) {
	for _, in := range []string{"0, H100, GPU-x\n", "x, H100, GPU-x, 10 MiB\n", "-1, a, b, c\n"} {
		if _, err := ParseNvidiaSMI([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestParseGresGPUs(t *testing.T) {
	conf := `# gres.conf
NodeName=gpu[01-02] Name=gpu Type=h100 File=/dev/nvidia[0-1]
NodeName=gpu03 Name=gpu Type=a100 File=/dev/nvidia[0-3]
Name=mps Count=100
NodeName=cpu01 Name=gpu Count=2
`
	cases := []struct {
		node string
		want []api.GPU
	}{
		{"gpu02", []api.GPU{{Index: 0, Type: "h100", File: "/dev/nvidia0"}, {Index: 1, Type: "h100", File: "/dev/nvidia1"}}},
		{"cpu01", []api.GPU{{Index: 0}, {Index: 1}}},
		{"other", nil},
	}
	for _, c := range cases {
		got, err := ParseGresGPUs(conf, c.node)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v err %v, want %+v", c.node, got, err, c.want)
		}
	}
	for _, bad := range []string{"Name=gpu", "Name=gpu Count=x", "Name=gpu File=/dev/nvidia[3-1]", "Name=gpu File=/dev/nvidiactl"} {
		if _, err := ParseGresGPUs(bad, ""); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestExpandPattern(t *testing.T) {
	job := PatternFields{JobID: 128, Name: "train", User: "alice", Node: "gpu01"}
	task := PatternFields{JobID: 131, ArrayJobID: 128, ArrayTaskID: 3, Name: "sweep", User: "bob", Node: "n1"}
	cases := []struct {
		pattern string
		f       PatternFields
		want    string
	}{
		{"slurm-%j.out", job, "slurm-128.out"},
		{"job%J.out", job, "job128.batch.out"},
		{"job%4j.out", job, "job0128.out"},
		{"%x-%u-%N-%n-%t-%s.log", job, "train-alice-gpu01-0-0-batch.log"},
		{"slurm-%A_%a.out", task, "slurm-128_3.out"},
		{"%A_%a", job, "128_4294967294"},
		{"t%3a-%j", task, "t003-131"},
		{"100%%-%q-%", job, "100%-%q-%"},
		{`lit\%j.out`, job, "lit%j.out"},
		{"%10N", job, "gpu01"},
		{"%200A.out", job, "0000000128.out"}, // padding stops at 10 (found by FuzzExpandPattern)
	}
	for _, c := range cases {
		if got := ExpandPattern(c.pattern, c.f); got != c.want {
			t.Errorf("ExpandPattern(%q) = %q, want %q", c.pattern, got, c.want)
		}
	}
}

func TestParseExport(t *testing.T) {
	cases := []struct {
		in   string
		want ExportSpec
		err  bool
	}{
		{"", ExportSpec{All: true}, false},
		{"ALL", ExportSpec{All: true}, false},
		{"NONE", ExportSpec{None: true}, false},
		{"ALL,EDITOR=/bin/emacs", ExportSpec{All: true, Vars: []ExportVar{{"EDITOR", "/bin/emacs", true}}}, false},
		{"EDITOR,ARG1=test", ExportSpec{Vars: []ExportVar{{"EDITOR", "", false}, {"ARG1", "test", true}}}, false},
		{"NONE,A=1", ExportSpec{}, true},
		{"1A=2", ExportSpec{}, true},
	}
	for _, c := range cases {
		got, err := ParseExport(c.in)
		if (err != nil) != c.err || (!c.err && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("ParseExport(%q) = %+v, %v", c.in, got, err)
		}
	}
}

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and a ')' must not shift the fields.
	line := "4242 (my (weird) cmd) T 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0"
	st, err := parseProcStat(line)
	if err != nil || st.State != 'T' || st.PGID != 4242 || st.StartTick != 987654 {
		t.Fatalf("got %+v %v", st, err)
	}
	if _, err := parseProcStat("4242 (x) R 1"); err == nil {
		t.Fatal("short line accepted")
	}
}

func TestFinalState(t *testing.T) {
	cases := []struct {
		term        string
		ws          int
		state, code string
	}{
		{"", 0, api.StateCompleted, "0:0"},
		{"", 2 << 8, api.StateFailed, "2:0"},
		{"", 9, api.StateFailed, "0:9"},
		{api.StateTimeout, 15, api.StateTimeout, "0:15"},
		{api.StateCancelled, 0, api.StateCancelled, "0:0"},
		{"", -1, api.StateFailed, "1:0"},
		{api.StateCancelled, -1, api.StateCancelled, "0:0"},
	}
	for _, c := range cases {
		if s, code := finalState(c.term, c.ws); s != c.state || code != c.code {
			t.Errorf("finalState(%q, %#x) = %s %s, want %s %s", c.term, c.ws, s, code, c.state, c.code)
		}
	}
}

func TestRecordSurvivesRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), recordFile)
	rec := jobRecord{Req: api.LaunchRequest{JobID: 7, GPUs: []int{1}}, State: api.StateSuspended, PID: 10, PIDTick: 99,
		Start: time.Unix(1_800_000_000, 0).UTC(), Suspended: 3 * time.Second, KillWait: time.Second}
	if err := writeJSON(path, &rec, 0o600); err != nil {
		t.Fatal(err)
	}
	var back jobRecord
	if err := readJSON(path, &back); err != nil || !reflect.DeepEqual(rec, back) {
		t.Fatalf("round trip: %+v %v", back, err)
	}
}

func FuzzExpandPattern(f *testing.F) {
	for _, s := range []string{"slurm-%j.out", "%4A_%a", "%%%", `a\b`, "%999999999999j", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		out := ExpandPattern(p, PatternFields{JobID: 1, Name: "n"})
		if !strings.Contains(p, "%") && !strings.Contains(p, `\`) && out != p {
			t.Fatalf("pattern without symbols changed: %q -> %q", p, out)
		}
		if len(out) > len(p)*12+64 {
			t.Fatalf("expansion too long for %q", p)
		}
	})
}

func FuzzParseExport(f *testing.F) {
	for _, s := range []string{"ALL,A=1", "NONE", "A,B=2,,", "=x", "ALL,ALL"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseExport(s)
		if err != nil {
			return
		}
		for _, v := range spec.Vars {
			if !validEnvName(v.Name) {
				t.Fatalf("%q: invalid name %q accepted", s, v.Name)
			}
		}
		exportedEnv([]string{"A=1", "SLURM_X=2", "=bad", "noequals"}, spec)
	})
}

func FuzzParseNvidiaSMI(f *testing.F) {
	f.Add(smiH100)
	f.Add("0, a, b, 1 MiB\n\n1,x,y,z")
	f.Fuzz(func(t *testing.T, s string) {
		gpus, err := ParseNvidiaSMI([]byte(s))
		for i := 1; err == nil && i < len(gpus); i++ {
			if gpus[i-1].Index > gpus[i].Index {
				t.Fatalf("not sorted: %+v", gpus)
			}
		}
	})
}

func FuzzParseGresGPUs(f *testing.F) {
	f.Add("NodeName=n[1-2] Name=gpu Type=a File=/dev/nvidia[0-3]\nName=gpu Count=2", "n1")
	f.Fuzz(func(t *testing.T, s, node string) {
		ParseGresGPUs(s, node)
	})
}

func FuzzParseProcStat(f *testing.F) {
	f.Add("1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0")
	f.Fuzz(func(t *testing.T, s string) {
		parseProcStat(s)
	})
}
