package acct

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func writeFile(t *testing.T, text string) string {
	p := filepath.Join(t.TempDir(), "f.cfg")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadRejectsBadFiles(t *testing.T) {
	tests := []struct{ text, msg string }{
		{"Cluster - c2\nParent - nosuch\n", "parent nosuch is not defined"},
		{"Parent - root\n", "parent root is not defined"},
		{"Cluster - c2\nWidget - x\n", "unknown line title 'widget'"},
		{"Cluster - c2\nParent - root\nAccount - a:Bogus=1\n", "unknown option 'Bogus'"},
		{"Cluster - c2\nParent - root\nUser - u:DefaultAccount=root:MaxJobs=x\n", "Invalid value for MaxJobs"},
		{"Cluster - c1\n", "Cluster c1 already exists"},
		{"just text\n", "expected 'Title - name"},
		{"QOS - q:Preempt=nosuch\nCluster - c2\n", "bad qos 'nosuch'"},
		{"# only a comment\n", "No cluster line"},
	}
	for _, tt := range tests {
		s := physics(t)
		before := s.state()
		_, err := s.try("load " + writeFile(t, tt.text))
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%q: error %v, want %q", tt.text, err, tt.msg)
		}
		if !reflect.DeepEqual(before, s.state()) {
			t.Errorf("%q: failed load changed the store", tt.text)
		}
	}
}

func TestDumpLoadIntoNewClusterName(t *testing.T) {
	s := physics(t)
	s.run("modify account physics set GrpTRES=gpu:a100=2 MaxWall=2:00:00 qos+=high DefaultQOS=high")
	s.run("modify user alice set Fairshare=parent AdminLevel=Operator")
	s.run("add user alice Account=physics Partition=gpu MaxJobs=1")
	text, err := Dump(NewPolicy(s.state()), "c1")
	if err != nil {
		t.Fatal(err)
	}
	s.run("load " + writeFile(t, text) + " cluster=c2")
	got := s.run("show assoc where cluster=c2 format=Account,User,Partition,Share,GrpTRES,MaxWall,QOS,DefQOS -P -n")
	want := s.run("show assoc where cluster=c1 format=Account,User,Partition,Share,GrpTRES,MaxWall,QOS,DefQOS -P -n")
	if got != want {
		t.Errorf("c2:\n%s\nwant (c1):\n%s", got, want)
	}
	if _, err := s.try("load " + writeFile(t, text) + " cluster=c2 clean"); err != nil {
		t.Errorf("load clean: %v", err)
	}
}
