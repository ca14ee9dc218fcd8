package cli

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateCompat = flag.Bool("update-compat", false, "rewrite docs/compatibility.md from the code")

// TestCompatibilityTable: docs/compatibility.md is what the option lists
// of Slurm 24.11 and Sluice's parsers give now; -update-compat rewrites it.
func TestCompatibilityTable(t *testing.T) {
	const path = "../../docs/compatibility.md"
	want := CompatibilityTable()
	if *updateCompat {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("docs/compatibility.md is stale: run go test ./internal/cli -run TestCompatibilityTable -update-compat")
	}
}

// TestOptionTables: for every command, each option the table calls
// implemented is accepted by the command's parser and each one it calls
// not implemented is refused with the line naming the table, read from
// docs/compatibility.md itself.
func TestOptionTables(t *testing.T) {
	data, err := os.ReadFile("../../docs/compatibility.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmd string
	rows := 0
	for _, line := range strings.Split(string(data), "\n") {
		if c, ok := strings.CutPrefix(line, "## "); ok {
			cmd = c
			continue
		}
		if !strings.HasPrefix(line, "| `") || optionParsers[cmd] == nil {
			continue
		}
		f := strings.SplitN(line, "|", 4)
		label, status := strings.Trim(strings.TrimSpace(f[1]), "`"), strings.TrimSpace(f[2])
		o := SlurmOption{}
		for _, suffix := range []string{"[=]", "="} {
			if strings.HasSuffix(label, suffix) {
				o.Arg, label = suffix, strings.TrimSuffix(label, suffix)
				break
			}
		}
		o.Names = strings.Split(label, ", ")
		rows++
		accepted, noEffect := false, false
		for _, name := range o.Names {
			ok, ne := Accepts(cmd, o, name)
			accepted, noEffect = accepted || ok, noEffect || ne
			if !ok && strings.HasPrefix(name, "--") {
				lines, _ := optionMessage(cmd, unknownFlagErr(name))
				if len(lines) != 3 || lines[1] != notImplementedLine(cmd, name) {
					t.Errorf("%s %s: refused with %q, want the not-implemented line", cmd, name, lines)
				}
			}
		}
		if _, ok := compatNoEffect[cmd+" "+o.Long()]; ok && accepted {
			noEffect = true
		}
		if strings.HasPrefix(status, "not implemented") == accepted || strings.HasPrefix(status, "accepted, no effect") != noEffect {
			t.Errorf("%s %s: table says %q, parser accepts it: %v, without effect: %v", cmd, label, status, accepted, noEffect)
		}
	}
	if rows < 500 {
		t.Fatalf("only %d option rows in docs/compatibility.md", rows)
	}
}

type flagErr string

func (e flagErr) Error() string { return string(e) }

// unknownFlagErr is pflag's error for an unknown long option.
func unknownFlagErr(name string) error { return flagErr("unknown flag: " + name) }

// TestUnknownOptionWording: a typo gets getopt's two lines; an option
// Slurm has and Sluice lacks gets a third that says so.
func TestUnknownOptionWording(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--banana"}, "sinfo: unrecognized option '--banana'\nTry \"sinfo --help\" for more information\n"},
		{[]string{"--federation"}, "sinfo: unrecognized option '--federation'\nsinfo: Sluice does not implement --federation (see docs/compatibility.md)\nTry \"sinfo --help\" for more information\n"},
		{[]string{"-F"}, "sinfo: invalid option -- 'F'\nsinfo: Sluice does not implement -F (see docs/compatibility.md)\nTry \"sinfo --help\" for more information\n"},
	} {
		env, _, stderr := testEnv()
		if rc := runSinfo(t.Context(), env, c.args); rc != 1 || stderr.String() != c.want {
			t.Errorf("sinfo %v: rc %d stderr %q, want 1 and %q", c.args, rc, stderr.String(), c.want)
		}
	}
}
