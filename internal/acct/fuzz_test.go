package acct

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// FuzzCommand feeds arbitrary command lines to the parser and, when they
// parse, to Run against a populated store: nothing may panic, a failing
// command must leave the store exactly as it was, and a successful one
// must leave a consistent tree.
func FuzzCommand(f *testing.F) {
	for _, seed := range []string{
		"add user alice Account=physics", "modify qos high set Flags+=DenyOnLimit preempt=low",
		"modify account physics set qos-=normal GrpTRES=gpu=4,mem=1G MaxWall=1-00:00:00",
		"delete account physics", "show assoc format=Account%-20,User tree", "add qos x Preempt=x",
		`add account "a b"`, "modify user where name=bob set fairshare=parent DefaultQOS=high",
		"load /nonexistent", "dump c1", "show qos -p -n", "add cluster c2 QOS=high", "remove qos where name=normal",
		"modify account physics set parent=physics", "add user bob DefaultAccount=physics Partition=gpu,cpu",
		"modify qos low set GraceTime=1:00 UsageThreshold=0.5 LimitFactor=2 MinTRES=cpu=1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		s := physics(t)
		s.env.ReadFile = nil
		before := s.state()
		words, err := ScriptArgs(line)
		if err != nil || len(words) == 0 {
			return
		}
		_, _, err = Run(context.Background(), s.store, words, s.env)
		after := s.state()
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("%q: error is not an *Error: %v", line, err)
			}
			if !reflect.DeepEqual(before, after) {
				t.Fatalf("%q failed (%v) but changed the store", line, err)
			}
			return
		}
		if err := after.Check(); err != nil {
			t.Fatalf("%q left an inconsistent tree: %v", line, err)
		}
		NewPolicy(after).Associations()
	})
}

// FuzzLoadFile feeds arbitrary flat files to `load`: no panic, and a
// failed load leaves the store unchanged.
func FuzzLoadFile(f *testing.F) {
	f.Add("QOS - q:Priority=5:Preempt=normal\nCluster - c2:Fairshare=1:QOS='normal,q'\nParent - root\nAccount - a:Description='A b':Fairshare=parent\nParent - a\nUser - u:DefaultAccount=a:AdminLevel=Operator:MaxTRES='gres/gpu:a100=2'\n")
	f.Add("Cluster - c1\n")
	f.Add("Parent - x\nUser - :\n")
	f.Fuzz(func(t *testing.T, text string) {
		s := physics(t)
		s.env.ReadFile = func(string) ([]byte, error) { return []byte(text), nil }
		before := s.state()
		_, _, err := Run(context.Background(), s.store, []string{"load", "f.cfg"}, s.env)
		after := s.state()
		if err != nil && !reflect.DeepEqual(before, after) {
			t.Fatalf("failed load (%v) changed the store", err)
		}
		if err == nil {
			if cerr := after.Check(); cerr != nil {
				t.Fatal(cerr)
			}
		}
	})
}
