package acct

import (
	"strings"
	"testing"
)

// TestAuthorization checks who may change what: root and Administrators
// everything; Operators any object but never Administrator rights, dump
// or load; plain users only show.
func TestAuthorization(t *testing.T) {
	setup := func(t *testing.T) *session {
		s := physics(t)
		s.run("add user opal Account=physics AdminLevel=Operator")
		s.run("add user adam Account=physics AdminLevel=Administrator")
		return s
	}
	tests := []struct {
		who, line string
		allowed   bool
	}{
		{"alice", "show qos", true},
		{"alice", "show assoc", true},
		{"alice", "add account chem", false},
		{"alice", "modify user alice set MaxJobs=100", false},
		{"alice", "modify qos high set Priority=9999", false},
		{"alice", "delete user bob", false},
		{"alice", "dump c1", false},
		{"nobody", "add qos mine", false},
		{"opal", "modify qos high set MaxWall=60", true},
		{"opal", "modify account physics set GrpJobs=10", true},
		{"opal", "add account chem", true},
		{"opal", "add user carol Account=physics AdminLevel=Operator", true},
		{"opal", "modify user alice set AdminLevel=Administrator", false},
		{"opal", "modify user adam set MaxJobs=1", false},
		{"opal", "dump c1", false},
		{"adam", "modify user alice set AdminLevel=Administrator", true},
		{"adam", "delete user bob", true},
		{"adam", "dump c1", true},
		{"root", "add qos mine", true},
	}
	for _, tt := range tests {
		t.Run(tt.who+": "+tt.line, func(t *testing.T) {
			s := setup(t)
			uid := 1000
			if tt.who == "root" {
				uid = 0
			}
			before := s.run("show assoc -P") + s.run("show qos -P") + s.run("show user -P")
			_, err := s.as(tt.who, uid).try(tt.line)
			if tt.allowed && err != nil {
				t.Fatalf("denied: %v", err)
			}
			if !tt.allowed {
				if err == nil || !isDenied(printed(err)) {
					t.Fatalf("error = %q, want a refusal", printed(err))
				}
				if after := s.run("show assoc -P") + s.run("show qos -P") + s.run("show user -P"); after != before {
					t.Error("denied command changed the store")
				}
			}
		})
	}
}

// TestActorLevels: uid 0 is an Administrator whatever its name; others
// get their user's AdminLevel, and unknown users none.
func TestActorLevels(t *testing.T) {
	st := NewState()
	st.Users["opal"] = &User{Name: "opal", AdminLevel: AdminOperator}
	cases := map[Actor]AdminLevel{
		{Name: "x", UID: 0}:       AdminAdministrator,
		{Name: "root", UID: 0}:    AdminAdministrator,
		{Name: "opal", UID: 1001}: AdminOperator,
		{Name: "zed", UID: 1002}:  AdminNone,
	}
	for a, want := range cases {
		if got := adminLevel(st, a); got != want {
			t.Errorf("adminLevel(%+v) = %s, want %s", a, got, want)
		}
	}
}

// isDenied reports whether sacctmgr's output is one of its refusals of an
// unprivileged user.
func isDenied(out string) bool {
	for _, m := range []string{errDenied, "Access/permission denied", "Only admins/operators/coordinators"} {
		if strings.Contains(out, m) {
			return true
		}
	}
	return false
}

// printed is what sacctmgr prints for err, stdout then stderr.
func printed(err error) string {
	if err == nil {
		return ""
	}
	out, errs := ErrorOutput(err.Error())
	return out + errs
}
