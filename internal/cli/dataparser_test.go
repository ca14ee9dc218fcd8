package cli

import (
	"strings"
	"testing"
)

// TestClientCommand checks meta.command as Slurm 24.11's clients record
// it (oracle): the command line without its last word.
func TestClientCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--json"}, "squeue"},
		{[]string{"--json", "-a"}, "squeue --json"},
		{nil, "squeue"},
	} {
		if got := strings.Join(clientCommand("squeue", tc.args), " "); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestExtractDataParserArgs checks that scontrol finds --json/--yaml
// anywhere on its command line (getopt permutes Slurm's arguments): the
// last one wins, a bare option selects the default parser.
func TestExtractDataParserArgs(t *testing.T) {
	rest, d := extractDataParserArgs([]string{"show", "job", "--json", "12"})
	if strings.Join(rest, " ") != "show job 12" {
		t.Errorf("rest = %v", rest)
	}
	if f, ok := d.format(); !ok || f.Mime != "application/json" || f.Spec != "" {
		t.Errorf("format = %+v %v", f, ok)
	}
	_, d = extractDataParserArgs([]string{"--json=v0.0.42", "show", "node", "--yaml=list"})
	if f, ok := d.format(); !ok || f.Mime != "application/x-yaml" || f.Spec != "list" {
		t.Errorf("format = %+v %v", f, ok)
	}
	if _, d = extractDataParserArgs([]string{"show", "job"}); d != nil {
		t.Errorf("no option: %+v", d)
	}
}

// TestSqueueJSONOption checks that squeue takes --json with and without
// an argument, and that without it no data_parser output is asked for.
func TestSqueueJSONOption(t *testing.T) {
	o, err := parseSqueue([]string{"--json", "-u", "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := o.dp.format(); !ok || f.Spec != "" || o.users != "bob" {
		t.Errorf("--json: %+v %v users %q", f, ok, o.users)
	}
	o, _ = parseSqueue([]string{"--yaml=v0.0.42"})
	if f, ok := o.dp.format(); !ok || f.Spec != "v0.0.42" || f.Mime != "application/x-yaml" {
		t.Errorf("--yaml=v0.0.42: %+v %v", f, ok)
	}
	o, _ = parseSqueue(nil)
	if _, ok := o.dp.format(); ok {
		t.Error("plain squeue asks for data_parser output")
	}
}
