package acct

import (
	"testing"
)

// TestSummariesAsSlurm plays commands in order on cluster "oracle" and
// compares what sacctmgr prints (stdout, then stderr) with what Slurm
// 24.11's sacctmgr printed for the same commands.
func TestSummariesAsSlurm(t *testing.T) {
	s := newSession(t, NewMemStore(), "oracle")
	steps := []struct{ line, want string }{
		{"add account a1,a2",
			" Adding Account(s)\n  a1\n  a2\n Settings\n  Description     = Account Name\n  Organization    = Parent/Account Name\n" +
				" Associations =\n  C = oracle     A = a1                  \n  C = oracle     A = a2                  \n"},
		{"add account a1,a3 Fairshare=2 MaxJobs=3",
			" Adding Account(s)\n  a3\n Settings\n  Description     = Account Name\n  Organization    = Parent/Account Name\n" +
				"Already existing account a1 on cluster oracle\n  C = oracle     A = a3                  \n" +
				" Settings\n  Fairshare     = 2\n  MaxJobs       = 3\n"},
		{"add account a1,a2", " Already existing account a1 on cluster oracle\nAlready existing account a2 on cluster oracle\n"},
		{"add account a4,a1",
			" Adding Account(s)\n  a4\n Settings\n  Description     = Account Name\n  Organization    = Parent/Account Name\n" +
				" Associations =\n  C = oracle     A = a4                  \nAlready existing account a1 on cluster oracle\n"},
		{"add account c2 Description=d Organization=o",
			" Adding Account(s)\n  c2\n Settings\n  Description     = d\n  Organization    = o\n" +
				" Associations =\n  C = oracle     A = c2                  \n Settings\n"},
		{"add account sub Parent=a1",
			" Adding Account(s)\n  sub\n Settings\n  Description     = Account Name\n  Organization    = Parent/Account Name\n" +
				" Associations =\n  C = oracle     A = sub                 \n Settings\n  Parent        = a1\n"},
		{"add account b1 Fairshare=2 GrpJobs=3 GrpSubmitJobs=4 GrpTRES=cpu=4,mem=100 GrpWall=1:00:00 MaxJobs=5 " +
			"MaxTRES=cpu=2 MaxWall=2:00:00 Priority=7 QOS=normal DefaultQOS=normal GrpJobsAccrue=2 MaxJobsAccrue=3 Parent=a1",
			" Adding Account(s)\n  b1\n Settings\n  Description     = Account Name\n  Organization    = Parent/Account Name\n" +
				" Associations =\n  C = oracle     A = b1                  \n Settings\n  Fairshare     = 2\n  GrpJobs       = 3\n" +
				"  GrpJobsAccrue            = 2\n  GrpSubmitJobs = 4\n  GrpTRES       = cpu=4,mem=100M\n  GrpWall       = 01:00:00\n" +
				"  MaxJobs       = 5\n  MaxJobsPrioAcc= 3\n  MaxTRES       = cpu=2\n  MaxWall       = 02:00:00\n" +
				"  Parent        = a1\n  Priority      = 7\n  QOS           = normal\n  DefQOS        = normal\n"},
		{"add account c1 Fairshare=parent MaxJobs=-1",
			" Adding Account(s)\n  c1\n Settings\n  Description     = Account Name\n  Organization    = Parent/Account Name\n" +
				" Associations =\n  C = oracle     A = c1                  \n Settings\n  Fairshare     = parent\n  MaxJobs       = NONE\n"},
		{"add account b1 Parent=c1", " Already existing account b1 on cluster oracle\n"},
		{"add account b1,f1 Parent=c1",
			" Adding Account(s)\n  f1\n Settings\n  Description     = Account Name\n  Organization    = Parent/Account Name\n" +
				"Already existing account b1 on cluster oracle\n  C = oracle     A = f1                  \n Settings\n  Parent        = c1\n"},
		{"show assoc account=b1 format=account,parentname -P -n", "b1|a1\n"},
		{"add account z1 Parent=nosuch", " error: No parent account 'nosuch' on cluster 'oracle'\n"},
		{"add account z2 Bogus=2", " Unknown option: Bogus=2\n Use keyword 'where' to modify condition\n"},
		{"add user alice Account=b1 AdminLevel=Operator",
			" Adding User(s)\n  alice\n Settings\n  Admin Level     = Operator\n Associations =\n" +
				"  C = oracle     A = b1                   U = alice    \n"},
		{"add user bob,charlie Account=b1,a1 DefaultAccount=a1 Fairshare=3 MaxJobs=2",
			" Adding User(s)\n  bob\n  charlie\n Settings\n  Default Account = a1\n Associations =\n" +
				"  C = oracle     A = b1                   U = bob      \n  C = oracle     A = b1                   U = charlie  \n" +
				"  C = oracle     A = a1                   U = bob      \n  C = oracle     A = a1                   U = charlie  \n" +
				" Non Default Settings\n  Fairshare     = 3\n  MaxJobs       = 2\n"},
		{"add user bob Account=a2,a3",
			" Associations =\n  C = oracle     A = a2                   U = bob      \n  C = oracle     A = a3                   U = bob      \n"},
		{"add user bob Account=a2,a3", "Request didn't affect anything\nNothing added.\n" +
			"Make sure the accounts requested here have been added to the system/cluster. (sacctmgr add account...)\n"},
		{"add user bob Account=a1 AdminLevel=Operator", "Request didn't affect anything\nNothing added.\n" +
			"Make sure the accounts requested here have been added to the system/cluster. (sacctmgr add account...)\n"},
		{"add user bob Account=sub DefaultAccount=sub", " Associations =\n  C = oracle     A = sub                  U = bob      \n"},
		{"show user bob format=user,admin,defaultaccount -P -n", "bob|None|sub\n"},
		{"add user dave Account=a2 Partition=main",
			" Adding User(s)\n  dave\n Settings\n Associations =\n  C = oracle     A = a2                   U = dave      P = main\n"},
		{"add user kim Account=a1,nosuch", " Adding User(s)\n  kim\n Settings\n Associations =\n" +
			"  C = oracle     A = a1                   U = kim      \nNo account nosuch on cluster oracle, skipping.\n"},
		{"add user zed", " Need name of account or wckey to add.\n"},
		{"add user zed Account=a1 Bogus=2", " Unknown option: Bogus=2\n"},
		{"add qos q2,q3", " Adding QOS(s)\n  q2\n  q3\n Settings\n  Description    = q3\n"},
		{"add qos q2", " Nothing new added.\n"},
		{"modify qos q2 set preempt=q3", " Modified qos...\n  q2\n"},
		{"modify qos q3 set preempt=q2", "sacctmgr: error: QOS Preemption loop detected\n Error with request: QOS Preemption loop detected\n"},
		{"modify qos q2 set preempt=", " Modified qos...\n  q2\n"},
		{"add qos q6 MaxTRESPA=cpu=3 MaxTRESPU=cpu=4 MaxJobsPU=1 MaxJobsPA=3 Preempt=q2,normal PreemptMode=suspend,gang Flags=OverPartQOS",
			" Adding QOS(s)\n  q6\n Settings\n  Description    = q6\n  Flags                    = OverPartQOS\n" +
				"  MaxJobsPerAccount        = 3\n  MaxJobsPerUser = 1\n  MaxTRESPerAccount        = cpu=3\n" +
				"  MaxTRESPerUser           = cpu=4\n  Preempt                  = normal,q2\n  PreemptMode              = GANG,SUSPEND\n"},
		{"add qos q7 Priority=-1 MaxWall=-1 GrpTRES=gres/gpu=2,cpu=4,node=1 MaxTRES=billing=3",
			" Adding QOS(s)\n  q7\n Settings\n  Description    = q7\n  GrpTRES                  = cpu=4,gres/gpu=2,node=1\n" +
				"  MaxTRESPerJob            = billing=3\n  MaxWall                  = NONE\n  Priority                 = NONE\n"},
		{"add qos q8 GrpTRES=mem=1G,billing=3,cpu=2 UsageFactor=0.5 GraceTime=60",
			" Adding QOS(s)\n  q8\n Settings\n  Description    = q8\n  GraceTime                = 60\n" +
				"  GrpTRES                  = billing=3,cpu=2,mem=1G\n  UsageFactor              = 0.5000\n"},
		{"add user erin Account=a1 QOS=q6,normal,q7,q2 DefaultQOS=q7",
			" Adding User(s)\n  erin\n Settings\n Associations =\n  C = oracle     A = a1                   U = erin     \n" +
				" Non Default Settings\n  QOS           = normal,q2,q6,q7\n  DefQOS        = q7\n"},
		{"add qos q10 Flags=DenyOnLimit,NoReserve GraceTime=60 MaxJobsAccruePerUser=8 MaxTRESRunMinsPerUser=cpu=6 " +
			"MinTRESPerJob=cpu=1 PreemptMode=requeue PreemptExemptTime=30 UsageThreshold=0.1 LimitFactor=2.0 MinPrioThres=3",
			" Adding QOS(s)\n  q10\n Settings\n  Description    = q10\n  Flags                    = DenyOnLimit,NoReserve\n" +
				"  GraceTime                = 60\n  MaxJobsAccruePerUser     = 8\n  MinTRESPerJob            = cpu=1\n" +
				"  MaxTRESRUNMinsPerUser    = cpu=6\n  PreemptMode              = REQUEUE\n  PreemptExemptTime        = 00:30:00\n" +
				"  UsageThreshold           = 0.1000\n  LimitFactor              = 2.0000\n  MinPrioThresh            = 3\n"},
		{"show qos q10 format=name,preemptexempttime -P -n", "q10|00:30:00\n"},
		{"add qos q9 Bogus=1", " Unknown option: Bogus=1\n Use keyword 'where' to modify condition\n"},
		{"show banana", "No valid entity in list command\n" +
			"Input line must include \"Account\", \"Association\", \"Cluster\", \"Configuration\",\n" +
			"\"Event\", \"Federation\", \"Problem\", \"QOS\", \"Resource\", \"Reservation\",\n" +
			"\"RunAwayJobs\", \"Stats\", \"Transaction\", \"TRES\", \"User\", or \"WCKey\"\n"},
		{"add banana x", "No valid entity in add command\n" +
			"Input line must include \"Account\", \"Cluster\", \"Coordinator\", \"Federation\", \"QOS\", \"Resource\", or \"User\"\n"},
		{"modify banana x set a=b", "No valid entity in modify command\n" +
			"Input line must include \"Account\", \"Cluster\", \"Federation\", \"Job\", \"QOS\", \"Resource\" or \"User\"\n"},
	}
	for _, st := range steps {
		out, err := s.try(st.line)
		if got := out + printed(err); got != st.want {
			t.Errorf("%s:\n%q\nwant\n%q", st.line, got, st.want)
		}
	}
}

// TestDeletesAsSlurm: deleting an account deletes what is below it
// (sub-accounts, users' associations); the messages are Slurm 24.11's.
func TestDeletesAsSlurm(t *testing.T) {
	s := newSession(t, NewMemStore(), "oracle")
	for _, l := range []string{"add account a1", "add account p1", "add account p2 Parent=p1",
		"add user frank Account=p2", "add user frank Account=a1", "add user gina Account=p1",
		"add account a3", "add account a4", "add qos q7,q8"} {
		s.run(l)
	}
	steps := []struct{ line, want string }{
		{"delete account p1", " Error with request: You can not remove the default account of a user\n" +
			"  C = oracle          A = p2         U = frank    \n" +
			" Please either remove the accounts listed above from list and resubmit,\n" +
			" or change these users' default accounts to remove the account(s).\n Changes Discarded\n"},
		{"delete user frank account=p2", " Error with request: You can not remove the default account of a user\n" +
			"  C = oracle          A = p2         U = frank    \n" +
			" You must change the default account of these users or remove the users completely from the affected clusters to allow these changes.\n" +
			" Changes Discarded\n"},
		{"delete user frank account=a1", " Deleting user associations...\n  C = oracle     A = a1         U = frank    \n"},
		{"delete account p1", " Deleting accounts...\n  p1\n"},
		{"show assoc format=account,user -P -n", "root|\nroot|root\na1|\na3|\na4|\n"},
		{"delete user frank account=p2", " Nothing deleted\n"},
		{"delete qos q7,q8", " Deleting QOS(s)...\n  q7\n  q8\n"},
		{"delete qos nosuch", " Nothing deleted\n"},
		{"add user hank,ivy Account=a3", " Adding User(s)\n  hank\n  ivy\n Settings\n Associations =\n" +
			"  C = oracle     A = a3                   U = hank     \n  C = oracle     A = a3                   U = ivy      \n"},
		{"delete user ivy,hank", " Deleting users...\n  hank\n  ivy\n"},
		{"delete account a3,a4", " Deleting accounts...\n  a3\n  a4\n"},
		{"delete account nosuch", " Nothing deleted\n"},
		{"delete account root", " You are not allowed to remove the root account.\n Use remove cluster instead.\n"},
	}
	for _, st := range steps {
		out, err := s.try(st.line)
		if got := out + printed(err); got != st.want {
			t.Errorf("%s:\n%q\nwant\n%q", st.line, got, st.want)
		}
	}
}

// TestRefusalsAsSlurm: how sacctmgr words the refusal of each change by
// a user without privileges (Slurm 24.11).
func TestRefusalsAsSlurm(t *testing.T) {
	s := physics(t)
	denied := "sacctmgr: error: Your user doesn't have privilege to perform this action\n Error with request: Access/permission denied\n"
	for _, tt := range []struct{ line, want string }{
		{"add account x", " error: Only admins/operators/coordinators can add accounts\n"},
		{"add user carol Account=physics", " error: Problem adding user associations: Access/permission denied\n"},
		{"add qos x", " Adding QOS(s)\n  x\n Settings\n  Description    = x\n Problem adding QOS: Access/permission denied\n"},
		{"modify account physics set fairshare=3", denied},
		{"modify qos high set priority=3", denied},
		{"delete user bob", denied},
		{"delete qos high", denied},
	} {
		_, err := s.as("dave", 1004).try(tt.line)
		if got := printed(err); got != tt.want {
			t.Errorf("%s:\n%q\nwant\n%q", tt.line, got, tt.want)
		}
	}
}

// TestModifySummariesAsSlurm: the blocks modify prints, record fields and
// associations apart, as Slurm 24.11 prints them.
func TestModifySummariesAsSlurm(t *testing.T) {
	s := newSession(t, NewMemStore(), "oracle")
	for _, l := range []string{"add account a1,a2", "add user charlie Account=a1 MaxJobs=2",
		"add user dave Account=a2 Partition=main", "add account b1 Parent=a1",
		"add user alice Account=b1", "add user charlie Account=b1"} {
		s.run(l)
	}
	alice := "  C = oracle     A = b1                   U = alice    \n"
	steps := []struct{ line, want string }{
		{"modify account a1 set fairshare=3", " Modified account associations...\n  C = oracle     A = a1 of root\n"},
		{"modify account a1,a2 set maxjobs=3 GrpTRES=cpu=4", " Modified account associations...\n" +
			"  C = oracle     A = a1 of root\n  C = oracle     A = a2 of root\n  C = oracle     A = a2                   U = dave      P = main\n"},
		{"modify account a1 set description=NewD", " Modified accounts...\n  a1\n"},
		{"modify account where name=a1 set description=x fairshare=4",
			" Modified accounts...\n  a1\n Modified account associations...\n  C = oracle     A = a1 of root\n"},
		{"modify user alice set maxjobs=2", " Modified user associations...\n" + alice},
		{"modify user charlie where account=a1 set maxjobs=2",
			" Modified user associations...\n  C = oracle     A = a1                   U = charlie  \n"},
		{"modify user alice set adminlevel=none", " Modified users...\n  alice\n"},
		{"modify account b1 set parent=a2", " Modified account associations...\n  C = oracle     A = b1 of a1\n" +
			alice + "  C = oracle     A = b1                   U = charlie  \n"},
		{"modify qos nosuch set priority=2", " Nothing modified\n"},
		{"modify user alice where account=zz set maxjobs=1", "sacctmgr: error: Request didn't affect anything\n" +
			" Error with request: Data has not changed since time specified\n"},
		{"modify qos normal set Bogus=1", " Unknown option: Bogus=1\n Use keyword 'where' to modify condition\n"},
		{"modify user alice set Bogus=1", " Unknown option: Bogus=1\n Use keyword 'where' to modify condition\n"},
	}
	for _, st := range steps {
		out, err := s.try(st.line)
		if got := out + printed(err); got != st.want {
			t.Errorf("%s:\n%q\nwant\n%q", st.line, got, st.want)
		}
	}
}
