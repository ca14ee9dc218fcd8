package acct

import (
	"strings"
	"testing"
)

func TestShowQOSDefaultLayout(t *testing.T) {
	s := newSession(t, NewMemStore(), "c1")
	got := strings.Split(s.run("show qos"), "\n")
	header := "      Name   Priority  GraceTime    Preempt   PreemptExemptTime PreemptMode                                    Flags UsageThres UsageFactor       GrpTRES   GrpTRESMins GrpTRESRunMin GrpJobs GrpSubmit     GrpWall       MaxTRES MaxTRESPerNode   MaxTRESMins     MaxWall     MaxTRESPU MaxJobsPU MaxSubmitPU     MaxTRESPA MaxJobsPA MaxSubmitPA       MinTRES "
	if got[0] != header {
		t.Errorf("header\n%q\nwant\n%q", got[0], header)
	}
	if !strings.HasPrefix(got[1], "---------- ---------- ---------- ---------- ------------------- ----------- ----------------------------------------") {
		t.Errorf("rule = %q", got[1])
	}
	if !strings.HasPrefix(got[2], "    normal          0   00:00:00                                    cluster                                                        1.000000 ") {
		t.Errorf("normal row = %q", got[2])
	}
}

func TestShowLayouts(t *testing.T) {
	s := newSession(t, NewMemStore(), "c1")
	s.run("add qos batch-lowprio Priority=100 MaxWall=24:00:00 MaxJobsPerUser=10")
	s.run("add account research Description='Research team' Organization=acme")
	s.run("add user alice DefaultAccount=research")
	tests := []struct{ line, want string }{
		{"show qos batch-lowprio format=Name,Priority,MaxWall",
			"      Name   Priority     MaxWall \n---------- ---------- ----------- \nbatch-low+        100  1-00:00:00 \n"},
		{"show qos batch-lowprio format=Name%-15,MaxJobsPU%3",
			"Name            Max \n--------------- --- \nbatch-lowprio    10 \n"},
		{"show qos format=Name,Priority -p", "Name|Priority|\nnormal|0|\nbatch-lowprio|100|\n"},
		{"show qos format=Name,Priority -P -n", "normal|0\nbatch-lowprio|100\n"},
		{"show account research", "   Account                Descr                  Org \n---------- -------------------- -------------------- \n  research        research team                 acme \n"},
		{"show user alice -P", "User|Def Acct|Admin\nalice|research|None\n"},
		{"show user alice -s format=User,Account,Cluster,Share -P", "User|Account|Cluster|Share\nalice|research|c1|1\n"},
		{"show account research withassoc format=Account,User,ParentName -P", "Account|User|Par Name\nresearch||root\nresearch|alice|\n"},
		{"show assoc format=Account,User,Share tree",
			"Account                    User     Share \n-------------------- ---------- --------- \nroot                                    1 \n root                      root         1 \n research                               1 \n  research                alice         1 \n"},
		{"show assoc format=Account,User tree -P -n", "root|\n root|root\n research|\n  research|alice\n"},
		{"show assoc format=Account%8,User tree", // a width given: not indented
			" Account       User \n-------- ---------- \n    root            \n    root       root \nresearch            \nresearch      alice \n"},
		{"show tres where type=gres format=Type,Name,ID -P", "Type|Name|ID\n"},
		{"show tres cpu format=Type,ID -P -n", "cpu|1\n"},
	}
	for _, tt := range tests {
		if got := s.run(tt.line); got != tt.want {
			t.Errorf("%s:\n%q\nwant\n%q", tt.line, got, tt.want)
		}
	}
	if _, err := s.try("show qos format=Bogus"); err == nil || !strings.Contains(err.Error(), "Unknown field 'Bogus'") {
		t.Errorf("unknown field: %v", err)
	}
}

// TestNamesCaseInsensitive: sacctmgr stores account, user and QOS names,
// descriptions and organizations lowercase and matches them in any case
// (checked on Slurm 24.11: `add account Proj Description=MixedCase
// Organization=OrgX` shows proj, mixedcase, orgx).
func TestNamesCaseInsensitive(t *testing.T) {
	s := newSession(t, NewMemStore(), "c1")
	s.run("add account Proj Description=MixedCase Organization=OrgX")
	s.run("add account Sub Parent=PROJ")
	s.run("add user Bob Account=Proj")
	s.run("add qos MyQos Description=FooBar")
	s.run("modify account PROJ set Description=Changed")
	for _, c := range []struct{ line, want string }{
		{"show account format=account,descr,org -P", "Account|Descr|Org\nproj|changed|orgx\nroot|default root account|root\nsub|sub|proj\n"},
		{"show assoc where account=PROJ format=account,user -P", "Account|User\nproj|\nproj|bob\n"},
		{"show account where description=CHANGED format=account -P", "Account\nproj\n"},
		{"show qos MYQOS format=name,descr -P", "Name|Descr\nmyqos|foobar\n"},
		{"show user BOB format=user,defaultaccount -P", "User|Def Acct\nbob|proj\n"},
	} {
		if got := s.run(c.line); got != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.line, got, c.want)
		}
	}
}
