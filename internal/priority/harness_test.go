package priority

import (
	"fmt"
	"testing"
	"time"
)

// node describes a fair-share tree for tests: account{name, shares,
// children...} or user{name, shares}.
type node struct {
	name   string
	user   bool
	shares uint32
	kids   []node
}

func account(name string, shares uint32, kids ...node) node {
	return node{name: name, shares: shares, kids: kids}
}

func user(name string, shares uint32) node { return node{name: name, user: true, shares: shares} }

// buildTree builds a tree under root from the nodes.
func buildTree(t testing.TB, kids ...node) *Tree {
	t.Helper()
	tr := NewTree()
	var add func(parent string, n node)
	add = func(parent string, n node) {
		var err error
		if n.user {
			_, err = tr.AddUser(n.name, parent, n.shares)
		} else {
			_, err = tr.AddAccount(n.name, parent, n.shares)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range n.kids {
			add(n.name, k)
		}
	}
	for _, k := range kids {
		add("root", k)
	}
	return tr
}

// qosDemo is the association tree of fixtures/qos-demo (SCENARIOS S2).
func qosDemo(t testing.TB) *Tree {
	return buildTree(t,
		user("root", 1),
		account("batch", 100, user("charlie", 1)),
		account("pcdefault", 1, user("slurm", 1), user("ubuntu", 1)),
		account("research", 500, user("alice", 1), user("bob", 1)),
	)
}

// assocOf finds an association by "account" or "account/user".
func assocOf(t testing.TB, tr *Tree, account, user string) *Assoc {
	t.Helper()
	i, ok := tr.Lookup(account, user)
	if !ok {
		t.Fatalf("no association %s/%s", account, user)
	}
	return &tr.Assocs[i]
}

// addUsage charges raw usage to an association and all its ancestors, as
// running jobs do.
func addUsage(tr *Tree, i int, amount float64) {
	for ; i >= 0; i = tr.Assocs[i].Parent {
		tr.Assocs[i].UsageRaw += amount
	}
}

func f6(v float64) string { return fmt.Sprintf("%f", v) }

var t0 = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
