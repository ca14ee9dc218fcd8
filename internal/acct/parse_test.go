package acct

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCommands(t *testing.T) {
	tests := []struct {
		line string
		want Command
	}{
		{"add user alice Account=research", Command{Verb: VerbAdd, Entity: EntUser, Names: []string{"alice"},
			Set: []Spec{{"Account", '=', "research"}}}},
		{"CREATE Account name=a1,a2 Parent=root FairShare=parent", Command{Verb: VerbAdd, Entity: EntAccount,
			Names: []string{"a1", "a2"}, Set: []Spec{{"Parent", '=', "root"}, {"Shares", '=', "parent"}}}},
		{"modify user alice set MaxJobs=5", Command{Verb: VerbModify, Entity: EntUser, Names: []string{"alice"},
			Set: []Spec{{"MaxJobs", '=', "5"}}}},
		{"update user where name=alice account=a set qos+=high DefaultQOS=high", Command{Verb: VerbModify, Entity: EntUser,
			Names: []string{"alice"}, Where: []Spec{{"Account", '=', "a"}}, Set: []Spec{{"QOS", '+', "high"}, {"DefaultQOS", '=', "high"}}}},
		{"modify user name=adam set fairshare=10 where cluster=tux", Command{Verb: VerbModify, Entity: EntUser,
			Names: []string{"adam"}, Set: []Spec{{"Shares", '=', "10"}}, Where: []Spec{{"Cluster", '=', "tux"}}}},
		{"modify qos high set Flags-=NoDecay MaxJobsPU=-1", Command{Verb: VerbModify, Entity: EntQOS, Names: []string{"high"},
			Set: []Spec{{"Flags", '-', "NoDecay"}, {"MaxJobsPerUser", '=', "-1"}}}},
		{"modify account a set GrpCPUs=10", Command{Verb: VerbModify, Entity: EntAccount, Names: []string{"a"},
			Set: []Spec{{"GrpTRES", '=', "cpu=10"}}}},
		{"remove QOS where Name=normal", Command{Verb: VerbDelete, Entity: EntQOS, Names: []string{"normal"}}},
		{"list associations format=Account,Cluster%-12,User%5 tree withd", Command{Verb: VerbShow, Entity: EntAssoc,
			Format: []Column{{"Account", 0}, {"Cluster", -12}, {"User", 5}}, Tree: true, WithDeleted: true}},
		{"show assoc where user=alice", Command{Verb: VerbShow, Entity: EntAssoc, Where: []Spec{{"User", '=', "alice"}}}},
		{"dump tux file=tux.cfg", Command{Verb: VerbDump, Entity: EntCluster, Names: []string{"tux"}, File: "tux.cfg"}},
		{"dump cluster=tux", Command{Verb: VerbDump, Entity: EntCluster, Names: []string{"tux"}, File: "tux.cfg"}},
		{"load file=tux.cfg cluster=new clean", Command{Verb: VerbLoad, File: "tux.cfg", Names: []string{"new"}, Clean: true}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			words, err := SplitLine(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(words)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("Parse(%q) =\n%+v\nwant\n%+v", tt.line, *got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ line, msg string }{
		{"frobnicate user x", "Invalid keyword: frobnicate"},
		{"add", "No valid entity in add command\nInput line must include \"Account\", \"Cluster\", \"Coordinator\", \"Federation\", \"QOS\", \"Resource\", or \"User\""},
		{"delete", "No valid entity in delete command"},
		{"add wibble x", "No valid entity"},
		{"modify user alice", "You didn't give me anything to set"},
		{"modify user alice set", "You didn't give me anything to set"},
		{"add user alice Bogus=1", "Unknown option: Bogus=1"},
		{"add user x where account=a", "'where' is not valid with add"},
		{"show qos format=Name%abc", "Invalid field width"},
		{"dump", "No entity given"},
		{"dump a b", "You can only dump one cluster at a time."},
		{"load", "No filename given to load"},
		{"add coordinator x", "coordinator is not supported"},
	}
	for _, tt := range tests {
		words, _ := SplitLine(tt.line)
		_, err := Parse(words)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Parse(%q) error = %v, want %q", tt.line, err, tt.msg)
		}
	}
}

func TestParseOptionsAnywhere(t *testing.T) {
	o, rest, err := ParseOptions([]string{"-i", "show", "qos", "-Pn", "format=Name", "--noheader", "MaxJobs=-1"})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Immediate: true, Parsable2: true, NoHeader: true}
	if o != want || !reflect.DeepEqual(rest, []string{"show", "qos", "format=Name", "MaxJobs=-1"}) {
		t.Errorf("got %+v %v", o, rest)
	}
	if _, _, err := ParseOptions([]string{"-x"}); err == nil {
		t.Error("-x accepted")
	}
}

func TestSplitLine(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{`sacctmgr -i add account research Description="Research team" Organization=acme`,
			[]string{"sacctmgr", "-i", "add", "account", "research", "Description=Research team", "Organization=acme"}},
		{`add account x Description='it''s'`, []string{"add", "account", "x", "Description=its"}},
		{"  a\tb  ", []string{"a", "b"}},
		{`a\ b`, []string{"a b"}},
	}
	for _, tt := range tests {
		got, err := SplitLine(tt.line)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitLine(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
	if _, err := SplitLine(`a "b`); err == nil {
		t.Error("unterminated quote accepted")
	}
}

func TestParseValues(t *testing.T) {
	for in, want := range map[string]Limit{"30": 30, "1:30": 2, "01:00:00": 60, "3-00:00:00": 4320, "1-12": 2160,
		"72:00:00": 4320, "-1": Unset, "UNLIMITED": Unset, "0": 0} {
		if got, err := parseWallMinutes("MaxWall", in); err != nil || got != want {
			t.Errorf("parseWallMinutes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "1:2:3:4", "-5", "1-x"} {
		if _, err := parseWallMinutes("MaxWall", bad); err == nil {
			t.Errorf("parseWallMinutes(%q) accepted", bad)
		}
	}
	up, err := parseTRES("GrpTRES", "cpu=2,mem=4G,gpu=16,gpu:a100=2,license/matlab=1,node=-1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"cpu": 2, "mem": 4096, "gres/gpu": 16, "gres/gpu:a100": 2, "license/matlab": 1}
	if !reflect.DeepEqual(up.set, want) || !reflect.DeepEqual(up.clear, []string{"node"}) {
		t.Errorf("parseTRES = %+v", up)
	}
	for _, bad := range []string{"cpu", "cpu=x", "bogus=1", "=3", "mem=4Q"} {
		if _, err := parseTRES("GrpTRES", bad); err == nil {
			t.Errorf("parseTRES(%q) accepted", bad)
		}
	}
	st := NewState()
	st.EnsureTRES("gres/gpu")
	if got := formatTRES(st, map[string]int64{"gres/gpu": 4, "mem": 1024000, "cpu": 256}); got != "cpu=256,mem=1000G,gres/gpu=4" {
		t.Errorf("formatTRES = %s", got)
	}
}
