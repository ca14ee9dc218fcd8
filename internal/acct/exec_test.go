package acct

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// physics is a small tree used by most scenarios: cluster c1, account
// physics with users alice and bob, QOS high and low.
func physics(t *testing.T) *session {
	s := newSession(t, NewMemStore(), "c1")
	for _, l := range []string{
		"add cluster c1",
		"add qos high Priority=100",
		"add qos low Priority=10",
		"add account physics Description=Physics Organization=sci Fairshare=40",
		"add user alice,bob Account=physics",
	} {
		s.run(l)
	}
	return s
}

// state returns a copy of the session's stored state.
func (s *session) state() *State {
	st, err := s.store.Load(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	return st
}

func (s *session) assocOf(user, account string) *Association {
	p := NewPolicy(s.state())
	a := p.UserAssoc("c1", user, account, "")
	if user == "" {
		a = p.AccountAssoc("c1", account)
	}
	if a == nil {
		s.t.Fatalf("no association %s/%s", account, user)
	}
	return a
}

// TestErrorsChangeNothing covers the error list: each command
// fails with Slurm's style message and leaves the store as it was.
func TestErrorsChangeNothing(t *testing.T) {
	tests := []struct{ line, msg string }{
		{"add user carol Account=nosuch", "No account nosuch on cluster c1, skipping.\nNothing added."},
		{"add user carol DefaultAccount=nosuch", "No account nosuch on cluster c1, skipping."},
		{"modify account physics set qos+=nosuch", "You gave a bad qos 'nosuch'. Valid QOS's are normal,high,low"},
		{"modify qos high set Preempt=high", "sacctmgr: error: QOS Preemption loop detected\n Error with request: QOS Preemption loop detected\n"},
		{"add qos mid Preempt=mid", "sacctmgr: error: You gave a bad qos 'mid'. Valid QOS's are normal,high,low\n"},
		{"modify user alice set GrpTRES=cpu=lots", "Invalid TRES value for GrpTRES: 'cpu=lots'"},
		{"modify user alice set GrpTRES=bogus=1", "Invalid TRES name 'bogus'"},
		{"modify qos high set MaxWall=1:2:3:4", "Invalid value for MaxWall: '1:2:3:4'"},
		{"modify qos high set Flags=Fast", "Unknown QOS flag used in:\n  'Fast'"},
		{"modify qos high set PreemptMode=requeue,suspend", "more than one of"},
		{"modify user alice set DefaultQOS=high", "Default QOS 'high' is not in the allowed QOS list"},
		{"modify user alice set DefaultAccount=other", " Can't modify because these users aren't associated with new default account 'other'...\n  U = alice C = c1"},
		{"modify user nobody set MaxJobs=1", "Request didn't affect anything\n Error with request: Data has not changed since time specified"},
		{"modify qos nobody set MaxJobs=1", " Nothing modified"},
		{"delete user nobody", " Nothing deleted"},
		{"add account physics", " Already existing account physics on cluster c1"},
		{"add account root", "The root account always exists"},
		{"add account bad/name", "Invalid account name 'bad/name'"},
		{"modify account physics set Parent=nosuch", "Parent account 'nosuch' doesn't exist"},
		{"add user dave Account=physics Cluster=c9", "This cluster c9 hasn't been added to accounting yet"},
		{"modify user alice set MaxJobs=many", "Invalid value for MaxJobs: 'many'"},
		{"modify user alice set Fairshare=-5", "Invalid value for FairShare"},
		{"delete user root", "The root user can not be deleted"},
		{"delete account root", " You are not allowed to remove the root account.\n Use remove cluster instead."},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			s := physics(t)
			before := s.state()
			_, err := s.try(tt.line)
			var ae *Error
			if !errors.As(err, &ae) || !strings.Contains(printed(err), tt.msg) {
				t.Fatalf("error = %q, want *Error containing %q", printed(err), tt.msg)
			}
			if after := s.state(); !reflect.DeepEqual(before, after) {
				t.Errorf("state changed by a failed command")
			}
		})
	}
}

func TestQOSListOperators(t *testing.T) {
	s := physics(t)
	steps := []struct{ line, want string }{
		{"modify account physics set qos+=high", "high,normal"},
		{"modify account physics set qos-=normal", "high"},
		{"modify account physics set qos=low,high", "high,low"},
		{"modify account physics set qos=-1", "normal"}, // back to inheriting root's list
	}
	for _, st := range steps {
		s.run(st.line)
		p := NewPolicy(s.state())
		for _, a := range []*Association{s.assocOf("", "physics"), s.assocOf("alice", "physics")} {
			if got := strings.Join(p.Effective(a).QOS, ","); got != st.want {
				t.Errorf("after %q: %s/%s QOS = %s, want %s", st.line, a.Account, a.User, got, st.want)
			}
		}
	}
}

func TestQOSFlagsPreemptAndClearing(t *testing.T) {
	s := physics(t)
	s.run("modify qos high set Flags=DenyOnLimit,NoReserve Preempt=low MaxJobsPerUser=4 GrpTRES=gpu=8,cpu=64")
	s.run("modify qos high set Flags+=OverPartQOS Flags-=NoReserve preempt+=normal GrpTRES=cpu=-1")
	s.run("modify qos high set MaxJobsPU=-1 PreemptMode=Suspend,Gang GraceTime=60 UsageFactor=0.5")
	q := s.state().QOS["high"]
	if q.Flags != FlagDenyOnLimit|FlagOverPartQOS {
		t.Errorf("flags = %s", q.Flags)
	}
	if !reflect.DeepEqual(q.Preempt, []string{"low", "normal"}) || !q.CanPreempt("low") {
		t.Errorf("preempt = %v", q.Preempt)
	}
	if q.MaxJobsPerUser.IsSet() || !reflect.DeepEqual(map[string]int64(q.GrpTRES), map[string]int64{"gres/gpu": 8}) {
		t.Errorf("MaxJobsPerUser = %d GrpTRES = %v, want unset and gpu only", q.MaxJobsPerUser, q.GrpTRES)
	}
	// the preempt list by name (oracle, sacctmgr-modify-more: low,normal)
	got := s.run("show qos high format=Name,Flags%30,Preempt,PreemptMode,GraceTime,UsageFactor -P -n")
	if want := "high|DenyOnLimit,OverPartQOS|low,normal|SUSPEND,GANG|00:01:00|0.500000\n"; got != want {
		t.Errorf("show = %q, want %q", got, want)
	}
}

func TestDeleteQOSRemovesReferences(t *testing.T) {
	s := physics(t)
	s.run("modify account physics set qos+=high,low DefaultQOS=high")
	s.run("modify qos low set preempt=high")
	s.run("delete qos high")
	st := s.state()
	a := st.Assocs[s.assocOf("", "physics").ID]
	if contains(a.QOS, "high") || a.DefaultQOS != "" || st.QOS["low"].Preempt != nil {
		t.Errorf("references to deleted QOS remain: %+v %+v", a, st.QOS["low"])
	}
}

func TestMoveAccountAndRejectCycle(t *testing.T) {
	s := physics(t)
	s.run("add account theory Parent=physics")
	s.run("add account labs")
	s.run("modify account theory set Parent=labs")
	p := NewPolicy(s.state())
	if par := p.Parent(p.AccountAssoc("c1", "theory")); par.Account != "labs" {
		t.Errorf("theory parent = %s", par.Account)
	}
	if _, err := s.try("modify account labs set Parent=theory"); err == nil {
		t.Error("cycle accepted")
	}
}

// TestDeleteUserThenAccount: deleting an account that still has users
// deletes their associations with it, as Slurm 24.11 does.
func TestDeleteUserThenAccount(t *testing.T) {
	s := physics(t)
	s.run("delete user alice")
	s.run("delete account physics")
	st := s.state()
	if st.Users["alice"] != nil || st.Users["bob"] != nil || st.Accounts["physics"] != nil {
		t.Errorf("leftovers: users %v accounts %v", st.Users, st.Accounts)
	}
}

func TestUserWithTwoAccountsKeepsDefault(t *testing.T) {
	s := physics(t)
	s.run("add account chem")
	s.run("add user alice Account=chem")
	if _, err := s.try("delete user alice where account=physics"); err == nil {
		t.Error("deleting the default account association accepted")
	}
	s.run("modify user alice set DefaultAccount=chem")
	s.run("delete user alice where account=physics")
	if got := s.state().Users["alice"].DefaultAccount; got != "chem" {
		t.Errorf("default = %s", got)
	}
}

func TestDefaultAccountJoinsAccountList(t *testing.T) {
	s := physics(t)
	s.run("add account chem")
	s.run("add user carol DefaultAccount=chem Account=physics")
	p := NewPolicy(s.state())
	if p.UserAssoc("c1", "carol", "chem", "") == nil || p.UserAssoc("c1", "carol", "physics", "") == nil {
		t.Error("carol should have associations in chem (default) and physics")
	}
}

func TestPartitionAssociation(t *testing.T) {
	s := physics(t)
	s.run("add user alice Account=physics Partition=gpu MaxJobs=2")
	p := NewPolicy(s.state())
	if a := p.UserAssoc("c1", "alice", "physics", "gpu"); a == nil || a.Partition != "gpu" || a.MaxJobs != 2 {
		t.Errorf("gpu association = %+v", a)
	}
	if a := p.UserAssoc("c1", "alice", "physics", "cpu"); a == nil || a.Partition != "" {
		t.Errorf("fallback association = %+v", a)
	}
}

func TestAddClusterSettingsGoToRoot(t *testing.T) {
	s := newSession(t, NewMemStore(), "")
	if _, err := s.try("add account a"); err == nil || !strings.Contains(err.Error(), "No cluster") {
		t.Errorf("add account without cluster: %v", err)
	}
	s.run("add qos gc")
	s.run("add cluster Name=ubhpc Fairshare=1 QOS=gc,normal GrpJobs=100")
	if got := s.run("show cluster format=Cluster,Share,GrpJobs,QOS -P -n"); got != "ubhpc|1|100|gc,normal\n" {
		t.Errorf("show cluster = %q", got)
	}
}

func TestApplyScriptUBCCR(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures, "../traces/ubccr-medium-cluster/sacctmgr.script"))
	if err != nil {
		t.Skip(err)
	}
	st := NewState()
	if err := ApplyScript(st, string(data), ExecEnv{Actor: Actor{Name: "root"}}); err != nil {
		t.Fatal(err)
	}
	p := NewPolicy(st)
	a := p.UserAssoc("ubhpc", "user060", "account045", "")
	if a == nil || a.Shares != 1 {
		t.Fatalf("user060 = %+v, want Fairshare=1", a)
	}
	if b := p.UserAssoc("ubhpc", "user001", "account001", ""); b == nil || b.Shares != SharesParent {
		t.Errorf("user001 = %+v, want Fairshare=parent", b)
	}
	if err := ApplyScript(st, "add user x Account=nosuch\n", ExecEnv{Actor: Actor{Name: "root"}}); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("error = %v, want one naming line 1", err)
	}
}

// TestDeleteRefusedWithActiveJobs: deleting a user or an account that a
// pending or running job bills fails with slurmdbd's message listing the
// jobs, and changes nothing; a job of another association does not stand
// in the way.
func TestDeleteRefusedWithActiveJobs(t *testing.T) {
	running := []ActiveJob{{ID: 7, Cluster: "c1", Account: "physics", User: "alice", Partition: "main"}}
	for _, tc := range []struct {
		line, want string
		ok         bool
	}{
		{"delete user alice", " Error with request: Job(s) active, cancel job(s) before remove\n" +
			"  JobID = 7          C = c1         A = physics    U = alice     P = main", false},
		{"delete account physics", "JobID = 7 ", false},
		{"delete user bob", "", true},
	} {
		t.Run(tc.line, func(t *testing.T) {
			s := physics(t)
			s.env.ActiveJobs = running
			before := s.state()
			_, err := s.try(tc.line)
			if tc.ok {
				if err != nil {
					t.Fatalf("%s: %v", tc.line, err)
				}
				return
			}
			if err == nil || !strings.Contains(printed(err), tc.want) {
				t.Fatalf("error = %q, want one containing %q", printed(err), tc.want)
			}
			if after := s.state(); !reflect.DeepEqual(before, after) {
				t.Errorf("state changed by a refused delete")
			}
		})
	}
}
