package acct

import (
	"fmt"
	"strings"
	"testing"
)

// bigState builds a cluster with accounts x users user associations,
// through the command language.
func bigState(b *testing.B, accounts, users int) *State { return bigStateT(b, accounts, users) }

func bigStateT(b testing.TB, accounts, users int) *State {
	st := NewState()
	env := ExecEnv{Actor: Actor{Name: "root"}, DefaultCluster: "big"}
	var sb strings.Builder
	sb.WriteString("add qos high Priority=10\n")
	for a := 0; a < accounts; a++ {
		fmt.Fprintf(&sb, "add account a%d Fairshare=%d MaxJobs=50 qos=high,normal\n", a, a+1)
		for u := 0; u < users; u++ {
			fmt.Fprintf(&sb, "add user u%d_%d Account=a%d\n", a, u, a)
		}
	}
	if err := ApplyScript(st, sb.String(), env); err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkNewPolicy indexes a 10,000-user tree (100 accounts x 100
// users): the controller rebuilds the snapshot after every change.
func BenchmarkNewPolicy(b *testing.B) {
	st := bigState(b, 100, 100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		NewPolicy(st)
	}
}

// BenchmarkExecModify runs one modify against the 10,000-user tree on a
// copy, as a store transaction does.
func BenchmarkExecModify(b *testing.B) {
	st := bigState(b, 100, 100)
	words, _ := SplitLine("modify user u5_5 set MaxJobs=3 qos+=high")
	cmd, _ := Parse(words)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		work := st.Clone()
		if _, err := Exec(work, cmd, ExecEnv{Actor: Actor{Name: "root"}}); err != nil {
			b.Fatal(err)
		}
	}
}
