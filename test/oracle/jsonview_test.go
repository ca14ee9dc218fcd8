package oracle

import (
	"strings"
	"testing"
)

const viewInput = `{
  "jobs": [
    {"job_id": 3, "user_id": 1002, "job_state": ["PENDING"],
     "submit_time": {"set": true, "infinite": false, "number": 1795733238},
     "start_time": {"set": true, "infinite": false, "number": 0},
     "time_limit": {"set": false, "infinite": true, "number": 0},
     "exit_code": {"status": ["SUCCESS"], "return_code": {"set": true, "infinite": false, "number": 0}}},
    {"job_id": 2, "user_id": 1001, "job_state": ["RUNNING"]}
  ],
  "meta": {"plugin": {"data_parser": "data_parser/v0.0.42"}},
  "errors": [],
  "warnings": []
}`

// TestJSONViewSelectsAndMasks checks the view of a data_parser reply:
// members named by job_id, times and ids masked, number objects compact,
// only the selected paths, and key lists for "PATH.*".
func TestJSONViewSelectsAndMasks(t *testing.T) {
	for _, tc := range []struct {
		patterns []string
		want     string
	}{
		{[]string{"jobs[].job_state", "errors"}, `jobs[job_id=3].job_state = ["PENDING"]
jobs[job_id=2].job_state = ["RUNNING"]
errors = []
`},
		{[]string{"jobs[].submit_time", "jobs[].start_time", "jobs[].time_limit", "jobs[].user_id"}, `jobs[job_id=3].user_id = <ID>
jobs[job_id=3].submit_time = {set <T>}
jobs[job_id=3].start_time = {set 0}
jobs[job_id=3].time_limit = {unset infinite 0}
jobs[job_id=2].user_id = <ID>
`},
		{[]string{"jobs[].exit_code", "meta.*"}, `jobs[job_id=3].exit_code.status = ["SUCCESS"]
jobs[job_id=3].exit_code.return_code = {set 0}
meta.* = plugin
`},
		{[]string{"*"}, ".* = jobs meta errors warnings\n"},
	} {
		got := jsonView(viewInput, tc.patterns)
		if tc.patterns[0] == "*" {
			got = strings.SplitAfter(got, "\n")[0]
		}
		if got != tc.want {
			t.Errorf("patterns %v:\ngot:\n%s\nwant:\n%s", tc.patterns, got, tc.want)
		}
	}
}

// TestJSONViewLeavesOtherText checks that stdout that is not JSON (an
// error message) is compared as it is.
func TestJSONViewLeavesOtherText(t *testing.T) {
	for _, in := range []string{"", "squeue: error: x\n", "{} trailing"} {
		if got := jsonView(in, nil); got != in {
			t.Errorf("jsonView(%q) = %q", in, got)
		}
	}
}

// TestParseJSONStep checks that @json applies its patterns to the next
// command only, and that a trailing @json is an error.
func TestParseJSONStep(t *testing.T) {
	sc, err := ParseScenario("x", "@json jobs[].job_id meta.*\n$ squeue --json\n$ squeue\n")
	if err != nil {
		t.Fatal(err)
	}
	if st := sc.Steps[0]; !st.JSON || strings.Join(st.JSONPaths, " ") != "jobs[].job_id meta.*" {
		t.Errorf("step 1: JSON %v paths %v", st.JSON, st.JSONPaths)
	}
	if sc.Steps[1].JSON {
		t.Error("step 2 got @json")
	}
	if _, err := ParseScenario("x", "$ squeue\n@json\n"); err == nil {
		t.Error("trailing @json accepted")
	}
}

// TestCanonicalStateInJSON checks that a private oracle's state directory
// is rewritten in JSON replies too, where slashes are escaped.
func TestCanonicalStateInJSON(t *testing.T) {
	rec := &Recording{Results: []Result{{Stdout: `"cwd": "\/var\/tmp\/slurm-oracle-h2\/jobs", /var/tmp/slurm-oracle-h2/x`}}}
	canonicalState(rec, "/var/tmp/slurm-oracle-h2")
	want := `"cwd": "` + strings.ReplaceAll(DefaultOracleState, "/", `\/`) + `\/jobs", ` + DefaultOracleState + "/x"
	if rec.Results[0].Stdout != want {
		t.Errorf("got %s\nwant %s", rec.Results[0].Stdout, want)
	}
}
