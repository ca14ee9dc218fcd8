package acct

import (
	"strings"
)

// execLoad reads a flat file written by Dump (or by Slurm's sacctmgr
// dump) and creates its QOS, cluster, accounts and users. The cluster must
// not exist yet unless `clean` asks to replace it.
func execLoad(st *State, cmd *Command, env ExecEnv, r *Result) error {
	if env.ReadFile == nil {
		return errorf("load is not available here")
	}
	data, err := env.ReadFile(cmd.File)
	if err != nil {
		return errorf("Unable to read \"%s\": %v", cmd.File, err)
	}
	lines, err := parseDumpFile(string(data))
	if err != nil {
		return err
	}
	if err := loadQOS(st, lines, r); err != nil {
		return err
	}
	ld := &loader{st: st, cmd: cmd, r: r}
	for _, l := range lines {
		if err := ld.line(l); err != nil {
			return err
		}
	}
	cluster := ld.cluster
	if cluster == "" {
		return errorf("No cluster line in %s", cmd.File)
	}
	r.printf(" Loaded cluster %s from %s\n", cluster, cmd.File)
	r.Changed = true
	return nil
}

// loader walks the lines of a flat file, remembering the cluster and
// the current parent account.
type loader struct {
	st              *State
	cmd             *Command
	r               *Result
	cluster, parent string
}

func (ld *loader) line(l dumpLine) error {
	switch l.title {
	case "qos":
		return nil // loaded first, by loadQOS
	case "cluster":
		if ld.cluster != "" {
			return errorf("line %d: only one cluster per file", l.no)
		}
		ld.cluster = strings.ToLower(l.name)
		if len(ld.cmd.Names) == 1 {
			ld.cluster = ld.cmd.Names[0]
		}
		return loadCluster(ld.st, ld.cluster, l.specs, ld.cmd.Clean, ld.r)
	case "parent":
		ld.parent = strings.ToLower(l.name)
		if ld.cluster == "" || findAssoc(ld.st, ld.cluster, ld.parent, "", "") == nil {
			return errorf("line %d: parent %s is not defined before its children", l.no, l.name)
		}
		return nil
	case "account":
		return loadAccount(ld.st, ld.cluster, ld.parent, l, ld.r)
	case "user":
		return loadUser(ld.st, ld.cluster, ld.parent, l)
	}
	return errorf("line %d: unknown line title '%s'", l.no, l.title)
}

// loadQOS creates every QOS of the file first, then applies the
// settings, so Preempt lists may name QOS defined further down.
func loadQOS(st *State, lines []dumpLine, r *Result) error {
	for _, l := range lines {
		if l.title == "qos" && st.QOS[strings.ToLower(l.name)] == nil {
			q := NewQOS(strings.ToLower(l.name))
			q.Description = q.Name
			st.AddQOS(q)
		}
	}
	for _, l := range lines {
		if l.title == "qos" {
			if err := applyQOSSpecs(st, st.QOS[strings.ToLower(l.name)], l.specs, r); err != nil {
				return errorf("line %d: %v", l.no, err)
			}
		}
	}
	return nil
}

func loadCluster(st *State, cluster string, specs []Spec, clean bool, r *Result) error {
	if st.Clusters[cluster] != nil {
		if !clean {
			return errorf("Cluster %s already exists; use 'load FILE clean' to replace it", cluster)
		}
		if err := deleteClusters(st, &Command{Names: []string{cluster}}, r); err != nil {
			return err
		}
	}
	if err := checkKeys(specs, true); err != nil {
		return err
	}
	return applyAssocSpecs(st, st.AddCluster(cluster), specs)
}

func loadAccount(st *State, cluster, parent string, l dumpLine, r *Result) error {
	if parent == "" {
		return errorf("line %d: account before any Parent line", l.no)
	}
	cmd := &Command{Verb: VerbAdd, Entity: EntAccount, Names: []string{l.name},
		Set: append(append([]Spec{}, l.specs...), Spec{Key: "Parent", Op: '=', Value: parent}, Spec{Key: "Cluster", Op: '=', Value: cluster})}
	if err := addAccounts(st, cmd, ExecEnv{}, r); err != nil {
		return errorf("line %d: %v", l.no, err)
	}
	return nil
}

// loadUser adds the user's association under the current parent; the
// user record takes DefaultAccount and AdminLevel from the line.
func loadUser(st *State, cluster, parent string, l dumpLine) error {
	if parent == "" {
		return errorf("line %d: user before any Parent line", l.no)
	}
	if err := checkKeys(l.specs, true, "DefaultAccount", "AdminLevel", "Partition"); err != nil {
		return err
	}
	u := st.Users[l.name]
	if u == nil {
		u = &User{Name: l.name, DefaultAccount: parent}
		st.Users[l.name] = u
	}
	if v, ok := specValue(l.specs, "DefaultAccount"); ok {
		u.DefaultAccount = strings.ToLower(v)
	}
	if v, ok := specValue(l.specs, "AdminLevel"); ok {
		lv, err := parseAdminLevel(v)
		if err != nil {
			return err
		}
		u.AdminLevel = lv
	}
	part, _ := specValue(l.specs, "Partition")
	if a := findAssoc(st, cluster, parent, l.name, part); a != nil {
		return applyAssocSpecs(st, a, l.specs)
	}
	if _, err := addUserAssoc(st, cluster, parent, l.name, part, l.specs); err != nil {
		return errorf("line %d: %v", l.no, err)
	}
	return nil
}
