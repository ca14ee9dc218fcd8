package dataparser

import "strings"

// AssocRef is an association as slurmdbd's records name one: its
// cluster, account, user, partition and id.
type AssocRef struct {
	Cluster, Account, User, Partition string
	ID                                int64
}

func (a AssocRef) obj() Obj {
	return Obj{{"account", a.Account}, {"cluster", a.Cluster}, {"partition", a.Partition}, {"user", a.User}, {"id", a.ID}}
}

// TRESDef is a trackable resource of sacctmgr show tres (type, name, id).
type TRESDef struct {
	Type, Name string
	ID         int64
}

// ClusterInfo is what a cluster record is made of: sacctmgr show
// cluster's columns, the controller's nodes and their configured TRES.
type ClusterInfo struct {
	Name, ControlHost string
	ControlPort, RPC  int
	Nodes             string
	Root              AssocRef
	TRES              []TRESDef
	NodeTRES          []string
	MultipleSlurmd    bool
	SelectPlugin      string
}

// ClusterRecord is a v0.0.42 CLUSTER_REC as slurmdbd's /clusters prints it
// (oracle, 24.11): the controller's address, the node list, the root
// association and the cluster's TRES totals (the sum of the nodes'
// configured TRES, memory in megabytes, every TRES the accounting
// defines, without the dynamic_offset marker).
func ClusterRecord(ci ClusterInfo) Obj {
	flags := []any{}
	if ci.MultipleSlurmd {
		flags = Strings("MULTIPLE_SLURMD")
	}
	total := map[string]int64{}
	for _, t := range ci.NodeTRES {
		for _, kv := range strings.Split(t, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				total[k] += tresNumber(k, v)
			}
		}
	}
	if total["node"] == 0 {
		// A node's configured TRES leave out the node itself.
		total["node"] = int64(len(ci.NodeTRES))
	}
	tres := []any{}
	for _, t := range ci.TRES {
		key := t.Type
		if t.Name != "" {
			key += "/" + t.Name
		}
		tres = append(tres, Obj{{"type", t.Type}, {"name", t.Name}, {"id", t.ID}, {"count", total[key]}})
	}
	return Obj{
		{"controller", Obj{{"host", ci.ControlHost}, {"port", ci.ControlPort}}},
		{"flags", flags},
		{"name", ci.Name},
		{"nodes", ci.Nodes},
		{"select_plugin", ci.SelectPlugin},
		{"associations", Obj{{"root", ci.Root.obj()}}},
		{"rpc_version", ci.RPC},
		{"tres", tres},
	}
}

// AssocRefs lists associations as the short records accounts and users
// carry with slurmdbd's with_assocs flag.
func AssocRefs(refs []AssocRef) []any {
	out := []any{}
	for _, r := range refs {
		out = append(out, r.obj())
	}
	return out
}

// WithAssocs fills the "associations" of each record of list (accounts
// or users, keyed by "name") with refs(name), and a user's default
// account with defaults[name], as slurmdbd's with_assocs dump does.
func WithAssocs(list []any, refs func(name string) []AssocRef, defaults map[string]string) {
	for _, rec := range list {
		o, ok := rec.(Obj)
		if !ok {
			continue
		}
		var name string
		for _, f := range o {
			if f.Key == "name" {
				name, _ = f.Val.(string)
			}
		}
		for i := range o {
			switch o[i].Key {
			case "associations":
				o[i].Val = AssocRefs(refs(name))
			case "default":
				if defaults != nil {
					o[i].Val = Obj{{"account", defaults[name]}, {"wckey", ""}}
				}
			}
		}
	}
}
