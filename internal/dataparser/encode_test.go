package dataparser

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-hpc/sluice/internal/api"
)

var sample = Obj{
	{"jobs", []any{Obj{
		{"job_state", Strings("RUNNING")},
		{"time_limit", Infinite()},
		{"billable_tres", NF(4)},
		{"standard_output", "/dev/null"},
		{"job_resources", nil},
		{"power", Obj{}},
		{"flags", []any{}},
		{"nice", 0},
	}}},
	{"warnings", []any{Obj{{"description", "Zero licenses to dump"}, {"source", ""}}}},
}

// TestJSONLayout checks json-c's layout as Slurm prints it (oracle
// squeue --json): two-space indent, escaped slashes, doubles with ".0",
// {} and [] for empty containers, null.
func TestJSONLayout(t *testing.T) {
	want := `{
  "jobs": [
    {
      "job_state": [
        "RUNNING"
      ],
      "time_limit": {
        "set": false,
        "infinite": true,
        "number": 0
      },
      "billable_tres": {
        "set": true,
        "infinite": false,
        "number": 4.0
      },
      "standard_output": "\/dev\/null",
      "job_resources": null,
      "power": {},
      "flags": [],
      "nice": 0
    }
  ],
  "warnings": [
    {
      "description": "Zero licenses to dump",
      "source": ""
    }
  ]
}
`
	if got := string(JSON(sample)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestYAMLLayout checks libyaml's tagged layout as Slurm prints it (oracle
// squeue --yaml): sequences in a mapping not indented, !!float with six
// decimals, "!!str" alone for an empty string, a quoted string where a
// plain one would be read otherwise, a blank line after "...".
func TestYAMLLayout(t *testing.T) {
	want := `%YAML 1.1
--- !!map
!!str jobs: !!seq
- !!map
  !!str job_state: !!seq
  - !!str RUNNING
  !!str time_limit: !!map
    !!str set: !!bool false
    !!str infinite: !!bool true
    !!str number: !!int 0
  !!str billable_tres: !!map
    !!str set: !!bool true
    !!str infinite: !!bool false
    !!str number: !!float 4.000000
  !!str standard_output: !!str /dev/null
  !!str job_resources: !!null null
  !!str power: !!map {}
  !!str flags: !!seq []
  !!str nice: !!int 0
!!str warnings: !!seq
- !!map
  !!str description: !!str Zero licenses to dump
  !!str source: !!str
...

`
	if got := string(YAML(sample)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	for in, want := range map[string]string{
		"Linux 6.1 #1 SMP": "'Linux 6.1 #1 SMP'", "a: b": "'a: b'", "it's: x": "'it''s: x'",
		"cpu=4,mem=4000M": "cpu=4,mem=4000M", "n[1-4]": "n[1-4]", "-x": "-x", "- x": "'- x'", "*": "'*'",
	} {
		if got := yamlString(in); got != want {
			t.Errorf("yamlString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestFormatDouble checks doubles as json-c prints them (%.17g, ".0"
// after a whole number), values seen in the oracle's sshare --json.
func TestFormatDouble(t *testing.T) {
	for in, want := range map[float64]string{0: "0.0", 1: "1.0", 0.5: "0.5", 0.999999: "0.99999899999999997",
		2.3283064376228985e-10: "2.3283064376228985e-10", 1803886263900: "1803886263900.0"} {
		if got := formatDouble(in); got != want {
			t.Errorf("formatDouble(%v) = %s, want %s", in, got, want)
		}
	}
}

// TestJobRecordValues checks the conventions of a job record that Slurm
// 24.11 showed (oracle): a pending job's unset billing and null
// job_resources, a running job without a limit ending 365 days after its
// start, a reason with its description, an exclusive job sharing "none".
func TestJobRecordValues(t *testing.T) {
	start := time.Unix(1795733239, 0)
	run := Job(&api.JobInfo{JobID: 6, State: "RUNNING", StartTime: start, TimeLimitSec: api.TimeInfinite,
		AllocTRES: "cpu=1,mem=1000M,node=1,billing=1", NodeList: "n1", NumNodes: 1, NumCPUs: 1, ExitCode: "0:0"}, Cluster{Name: "oracle"})
	if got := run.Get("end_time"); got != N(1827269239) {
		t.Errorf("end_time = %v, want start + 365 days", got)
	}
	if got := run.Get("billable_tres"); got != NF(1) {
		t.Errorf("billable_tres = %v", got)
	}
	if got := run.Get("time_limit"); got != Infinite() {
		t.Errorf("time_limit = %v", got)
	}
	pend := Job(&api.JobInfo{JobID: 3, State: "PENDING", Exclusive: true, MaxNodes: 4,
		Reason: "ReqNodeNotAvail, May be reserved for other job"}, Cluster{})
	for key, want := range map[string]any{"job_resources": nil, "billable_tres": NumF{}, "max_nodes": N(4),
		"state_reason": "ReqNodeNotAvail", "state_description": "ReqNodeNotAvail, May be reserved for other job"} {
		if got := pend.Get(key); got != want {
			t.Errorf("pending %s = %v, want %v", key, got, want)
		}
	}
	if got := JSON(pend.Get("shared")); string(got) != "[\n  \"none\"\n]\n" {
		t.Errorf("shared = %s", got)
	}
}

// TestExitCode checks exit records: 0:0 SUCCESS, 3:0 ERROR, 0:9 SIGNALED
// KILL with an unset return code (oracle: json-sacct-states).
func TestExitCode(t *testing.T) {
	for in, want := range map[string]string{"0:0": "SUCCESS 0  ", "3:0": "ERROR 3  ", "0:9": "SIGNALED 0 9 KILL"} {
		if rc := ExitCode(in).Get("return_code").(Num); rc.Set == (in == "0:9") {
			t.Errorf("ExitCode(%s).return_code = %+v", in, rc)
		}
		e := ExitCode(in)
		sig := e.Get("signal").(Obj)
		id := ""
		if n := sig.Get("id").(Num); n.Set {
			id = "9"
		}
		got := e.Get("status").([]any)[0].(string) + " " + string(rune('0'+e.Get("return_code").(Num).N)) + " " + id + " " + sig.Get("name").(string)
		if got != want {
			t.Errorf("ExitCode(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestSelect checks the parser selection as Slurm's clients answer it
// (oracle): a bare option or v0.0.42 selects, "list" lists, anything else
// is three errors naming the plugin and the output type.
func TestSelect(t *testing.T) {
	var out, errb bytesBuffer
	f := Format{Mime: MimeYAML, Spec: "bogus"}
	if _, err := f.Select("squeue", &out, &errb); err == nil {
		t.Fatal("bogus accepted")
	}
	want := "squeue: error: load_plugins: unable to find plugin: data_parser/bogus\n" +
		"squeue: error: data_parser_g_new: failure loading plugins: Plugin has invalid format or unable to be loaded\n" +
		"squeue: error: application/x-yaml output not supported by data_parser/v0.0.42\n"
	if errb.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errb.String(), want)
	}
	for _, spec := range []string{"", "v0.0.42", "data_parser/v0.0.42", "v0.0.42+complex"} {
		if done, err := (Format{Mime: MimeJSON, Spec: spec}).Select("squeue", &out, &errb); done || err != nil {
			t.Errorf("%q: done %v err %v", spec, done, err)
		}
	}
	out, errb = bytesBuffer{}, bytesBuffer{}
	if done, err := (Format{Mime: MimeJSON, Spec: "list"}).Select("squeue", &out, &errb); !done || err != nil ||
		out.String() != "data_parser/v0.0.42\n" || errb.String() != "Possible data_parser plugins:\n" {
		t.Errorf("list: done %v err %v out %q err %q", done, err, out.String(), errb.String())
	}
}

type bytesBuffer struct{ b []byte }

func (b *bytesBuffer) Write(p []byte) (int, error) { b.b = append(b.b, p...); return len(p), nil }
func (b *bytesBuffer) String() string              { return string(b.b) }

// TestJobAllocation checks job_resources.nodes.allocation: one entry per
// node with its CPUs and memory, as slurmctld listed a 4-CPU job on n1
// (oracle: index 0, name n1, cpus {count 4, used 0}, memory {used 0,
// allocated 4000}).
func TestJobAllocation(t *testing.T) {
	for _, c := range []struct {
		j    api.JobInfo
		want string
	}{
		{api.JobInfo{NodeList: "n1", NumNodes: 1, NumCPUs: 4, CPUsPerNode: "4", AllocTRES: "cpu=4,mem=4000M,node=1"}, "0 n1 4 4000;"},
		{api.JobInfo{NodeList: "n[1-3]", NumNodes: 3, NumCPUs: 5, CPUsPerNode: "2(x2),1", MinMemoryMB: 500, MemPerCPU: true}, "0 n1 2 1000;1 n2 2 1000;2 n3 1 500;"},
		{api.JobInfo{NodeList: "n[1-2]", NumNodes: 2, NumCPUs: 16, MinMemoryMB: 2000}, "0 n1 8 2000;1 n2 8 2000;"},
	} {
		got := ""
		for _, e := range allocation(&c.j) {
			o := e.(Obj)
			got += fmt.Sprintf("%v %v %v %v;", o.Get("index"), o.Get("name"), o.Get("cpus").(Obj).Get("count"), o.Get("memory").(Obj).Get("allocated"))
		}
		if got != c.want {
			t.Errorf("%+v: allocation = %q, want %q", c.j, got, c.want)
		}
	}
}

// TestAcctStepName checks that a step's step.name is its name (srun's
// command, oracle: 1.0 of "srun true" is named "true"), batch for the
// batch step.
func TestAcctStepName(t *testing.T) {
	job := &api.AcctRecord{JobID: 1}
	for _, s := range []api.AcctRecord{{Step: "0", Name: "true"}, {Step: "batch", Name: "batch"}, {Step: "1"}} {
		want := s.Name
		if want == "" {
			want = s.Step
		}
		if got := acctStep(job, &s, time.Now()).Get("step").(Obj).Get("name"); got != want {
			t.Errorf("step %s: name %v, want %s", s.Step, got, want)
		}
	}
}
